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
    Preflight,
    RequestInfo,
    TaskServerCore,
    TaskSupport,
    ToolError,
    ToolOutput,
    http_headers,
)
from .shared import (
    F,
    HostedTools,
    SdkBase,
    extension_tables,
    forward_to_seam,
    module,
    raise_sdk_error,
    sdk_result,
)

__all__ = ["ServerSeam", "TasksServerExtension", "server_extension"]

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


class TasksServerExtension(SdkBase):  # type: ignore[misc]  # mcp's Extension
    """The Tasks extension for ``MCPServer(extensions=[...])`` (``mcp>=2.3``) that
    :func:`server_extension` returns.

    At run time its class also derives from ``mcp.server.extension.Extension`` (made
    when the SDK is first imported); type checkers see that base as ``Any``
    (:data:`~.shared.SdkBase`), so the object is accepted by ``MCPServer`` and the
    package type-checks without ``mcp``. ``task_tool`` and ``mark`` are typed here;
    the other attributes of its :class:`ServerSeam` (``seam``) are forwarded.
    """

    identifier: str
    """The Tasks extension's identifier (set on the class made at run time)."""

    def __init__(self, seam: ServerSeam) -> None:
        self.seam = seam

    @property
    def server(self) -> TaskServerCore:
        """The ``TasksServer`` that answers the marked tools and the Tasks methods."""
        return self.seam.server

    def methods(self) -> list[Any]:
        """``MethodBinding``s of the Tasks methods the revision has."""
        return self.seam.methods()

    async def intercept_tool_call(self, params: Any, ctx: Any, call_next: Any) -> Any:
        """``tools/call`` of a marked tool goes to the ``TasksServer``."""
        return await self.seam.intercept(params, ctx, call_next)

    def task_tool(
        self,
        name: str | None = None,
        *,
        task_support: TaskSupport = "optional",
        immediate_response: str | None = None,
        preflight: Preflight | None = None,
    ) -> Callable[[F], F]:
        """Decorator above ``@mcp.tool()``: the tool may run as a task, or must with
        ``task_support="required"`` (see :meth:`HostedTools.task_tool`); it returns
        the function as it is, with its type."""
        return self.seam.task_tool(
            name,
            task_support=task_support,
            immediate_response=immediate_response,
            preflight=preflight,
        )

    def mark(
        self,
        name: str,
        *,
        task_support: TaskSupport = "optional",
        description: str = "",
        immediate_response: str | None = None,
        preflight: Preflight | None = None,
    ) -> None:
        """Let the SDK tool ``name`` run as a task (see :meth:`HostedTools.mark`)."""
        self.seam.mark(
            name,
            task_support=task_support,
            description=description,
            immediate_response=immediate_response,
            preflight=preflight,
        )

    def marked(self, name: str) -> bool:
        """Whether ``name`` is a task tool."""
        return self.seam.marked(name)

    def __getattr__(self, name: str) -> Any:
        return forward_to_seam(self, name)


def server_extension(server: TaskServerCore) -> TasksServerExtension:
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
def _server_extension_type() -> type[TasksServerExtension]:
    """:class:`TasksServerExtension` with ``mcp``'s ``Extension`` as a second base."""
    base: type[object] = getattr(module("mcp.server.extension"), "Extension")
    namespace = {
        "__module__": __name__,
        "__doc__": TasksServerExtension.__doc__,
        "identifier": extension_tables("server_extension").extension_id,
    }
    made = type("TasksServerExtension", (TasksServerExtension, base), namespace)
    return cast(type[TasksServerExtension], made)
