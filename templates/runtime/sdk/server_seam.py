"""The server seam (the Tasks extension, ``mcp`` 2.x): :func:`server_extension` gives an
``Extension`` for ``MCPServer(extensions=[...])``.

The app keeps its ``@mcp.tool()`` functions and marks those that may or must run as
tasks with ``@extension.task_tool(...)``; ``tools/call`` of a marked tool is answered by
the generated ``TasksServer`` (a task when the request declares the extension), which
also serves the ``tasks/*`` methods and keeps the tasks in its store.
"""

from __future__ import annotations

import contextvars
import functools
import importlib
from collections.abc import Awaitable, Callable
from typing import Any, cast

from ..jsonrpc import JsonRpcError
from ..server_core import (
    RequestInfo,
    TaskServerCore,
    ToolError,
    ToolOutput,
    http_headers,
)
from .shared import (
    HostedTools,
    extension_tables,
    forward_to_seam,
    module,
    raise_sdk_error,
    sdk_result,
)

__all__ = ["ServerSeam", "server_extension"]

_SDK_CALL: contextvars.ContextVar[Callable[[], Awaitable[Any]] | None] = (
    contextvars.ContextVar("mcp_tasks_sdk_call", default=None)
)
"""Runs the SDK's own ``tools/call`` handler for the call being answered (``mcp``
2.x)."""

_MOUNTED_ROLES = ("get", "result", "list", "update", "cancel")
"""Tasks method roles a hosted ``TasksServer`` answers (those the revision has)."""


class ServerSeam(HostedTools):
    """What :func:`server_extension` adds to an ``MCPServer``; its instance is
    ``extension.seam``."""

    def __init__(self, server: TaskServerCore) -> None:
        super().__init__(server)
        self._error_type: Any = getattr(module("mcp.shared.exceptions"), "MCPError")

    def methods(self) -> list[Any]:
        """``MethodBinding``s of the Tasks methods the revision has."""
        extension: Any = module("mcp.server.extension")
        types: Any = module("mcp_types")
        pydantic: Any = importlib.import_module("pydantic")
        params_type = type(
            "TasksRequestParams",
            (types.RequestParams,),
            {
                "__module__": __name__,
                "model_config": pydantic.ConfigDict(extra="allow"),
            },
        )
        return [
            extension.MethodBinding(
                method=self.server.tables.roles[role],
                params_type=params_type,
                handler=self._method_handler(self.server.tables.roles[role]),
            )
            for role in _MOUNTED_ROLES
            if self.server.tables.has_role(role)
        ]

    def _method_handler(self, method: str) -> Callable[[Any, Any], Awaitable[Any]]:
        async def handler(ctx: Any, params: Any) -> Any:
            return await self.answer(ctx, method)

        return handler

    async def answer(self, ctx: Any, method: str) -> dict[str, Any]:
        """Answer the SDK request ``ctx`` through ``TasksServer.handle``."""
        await self.ensure_started()
        message = {
            "jsonrpc": "2.0",
            "id": ctx.request_id,
            "method": method,
            "params": dict(ctx.params or {}),
        }
        response = await self.server.handle(
            message, RequestInfo(headers=http_headers(ctx))
        )
        if response is None:
            raise self._error_type(-32603, "No response")
        if "error" in response:
            raise_sdk_error(response["error"], self._error_type)
        return cast(dict[str, Any], response["result"])

    async def intercept(self, params: Any, ctx: Any, call_next: Any) -> Any:
        """``tools/call`` of a marked tool goes to the ``TasksServer``; others pass
        by."""
        if not self.marked(str(params.name)):
            return await call_next(ctx)
        token = _SDK_CALL.set(lambda: call_next(ctx))
        try:  # the worker task copies the context, so it can call the SDK tool
            return await self.answer(ctx, "tools/call")
        finally:
            _SDK_CALL.reset(token)

    async def call_sdk_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        call = _SDK_CALL.get()
        if call is None:
            raise ToolError(f"tool {name!r} was not called through the MCPServer")
        try:
            return sdk_result(await call())
        except self._error_type as error:  # the tool raised a protocol error
            raise JsonRpcError(error.code, error.message, error.data) from None


def server_extension(server: TaskServerCore) -> Any:
    """An ``Extension`` for ``MCPServer(extensions=[...])`` (``mcp>=2.3``) backed by
    ``server``.

    Mark tools with ``@extension.task_tool(task_support=...)`` above ``@mcp.tool()`` (or
    ``extension.mark(name, ...)``). The server starts on the first request; close it
    with ``await server.close()`` (or ``async with server``) when the app stops.
    """
    if not server.tables.is_extension:
        raise RuntimeError(
            "server_extension serves the Tasks extension; this server is MCP"
            f" {server.tables.protocol_version} (use fastmcp_tasks or"
            " TasksServer.mount)"
        )
    return _server_extension_type()(ServerSeam(server))


@functools.cache
def _server_extension_type() -> Any:
    base: Any = getattr(module("mcp.server.extension"), "Extension")

    def init(self: Any, seam: ServerSeam) -> None:
        self.seam = seam

    def methods(self: Any) -> list[Any]:
        return cast(ServerSeam, self.seam).methods()

    async def intercept_tool_call(
        self: Any, params: Any, ctx: Any, call_next: Any
    ) -> Any:
        return await cast(ServerSeam, self.seam).intercept(params, ctx, call_next)

    namespace = {
        "__module__": __name__,
        "__doc__": "The Tasks extension for ``MCPServer`` (see ``server_extension``).",
        "identifier": extension_tables("server_extension").extension_id,
        "__init__": init,
        "methods": methods,
        "intercept_tool_call": intercept_tool_call,
        "__getattr__": forward_to_seam,
    }
    return type("TasksServerExtension", (base,), namespace)
