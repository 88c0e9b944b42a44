"""The FastMCP seam (2025-11-25, ``mcp`` 1.x): :func:`fastmcp_tasks` serves durable
tasks for the tools of a ``FastMCP`` app (``mcp.server.fastmcp``); its tools stay where
they are.

The app is typed by the protocol :class:`FastMCPApp` (what the seam uses of it), and
the seam keeps the app's own type (``seam.app`` is the user's ``FastMCP``), so the
package type-checks without ``mcp`` and the app's ``@app.tool()`` stays typed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, Protocol, cast

from typing_extensions import TypeVar

from ..server_core import TaskServerCore, ToolError, ToolOutput
from .lowlevel import LowlevelServer1
from .shared import HostedTools, module, wire

__all__ = ["FastMCPApp", "FastMCPSeam", "fastmcp_tasks"]


class FastMCPApp(Protocol):
    """What :func:`fastmcp_tasks` uses of an ``mcp`` 1.x ``FastMCP`` app (a structural
    type: ``mcp.server.fastmcp.FastMCP`` satisfies it; ``mcp`` need not be installed
    to type-check)."""

    @property
    def _mcp_server(self) -> LowlevelServer1:
        """The app's low-level server."""
        ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> object:
        """Run one of the app's tools: content blocks, a ``(content, structured)``
        pair or a structured mapping."""
        ...


AppT_co = TypeVar("AppT_co", bound=FastMCPApp, covariant=True, default=FastMCPApp)
"""The type of the app a :class:`FastMCPSeam` serves (the user's ``FastMCP``)."""

AppT = TypeVar("AppT", bound=FastMCPApp)
"""The type of the app given to :func:`fastmcp_tasks`."""


class FastMCPSeam(HostedTools, Generic[AppT_co]):
    """Durable tasks for the tools of an ``mcp`` 1.x ``FastMCP`` app (see
    :func:`fastmcp_tasks`); ``app`` is that app, with its own type."""

    def __init__(self, server: TaskServerCore, app: AppT_co) -> None:
        super().__init__(server)
        self._app = app
        self._types: Any = module("mcp.types")
        self._install(app._mcp_server)  # pyright: ignore[reportPrivateUsage]

    @property
    def app(self) -> AppT_co:
        """The ``FastMCP`` app whose tools this seam serves as tasks."""
        return self._app

    def _install(self, lowlevel: LowlevelServer1) -> None:
        types = self._types
        handlers: dict[Any, Any] = lowlevel.request_handlers
        sdk_list = handlers[types.ListToolsRequest]
        sdk_call = handlers[types.CallToolRequest]
        before = dict(handlers)
        self.server.mount(lowlevel)
        for request_type, handler in list(handlers.items()):
            if before.get(request_type) is not handler:
                handlers[request_type] = self._started(handler)
        task_call = handlers[types.CallToolRequest]

        async def call_tool(request: Any) -> Any:
            if self.marked(str(request.params.name)):
                return await task_call(request)
            return await sdk_call(request)

        async def list_tools(request: Any) -> Any:
            listed = await sdk_list(request)
            for tool in listed.root.tools:
                ours = next((t for t in self.server.tools if t.name == tool.name), None)
                if ours is not None:
                    tool.execution = types.ToolExecution(taskSupport=ours.task_support)
            return listed

        handlers[types.CallToolRequest] = call_tool
        handlers[types.ListToolsRequest] = list_tools

    def _started(self, handler: Any) -> Callable[[Any], Awaitable[Any]]:
        async def started(request: Any) -> Any:
            await self.ensure_started()
            return await handler(request)

        return started

    async def call_sdk_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        error_type: Any = getattr(module("mcp.server.fastmcp.exceptions"), "ToolError")
        try:
            output = await self._app.call_tool(name, arguments)
        except error_type as error:  # FastMCP wraps the tool's own ToolError
            cause = error.__cause__
            raise ToolError(
                str(cause if isinstance(cause, error_type) else error)
            ) from error
        if isinstance(output, tuple):
            content, structured = cast(tuple[Any, Any], output)
            result = {"content": [wire(block) for block in content]}
            if structured is not None:
                result["structuredContent"] = structured
            return result
        if isinstance(output, Mapping):
            return {"content": [], "structuredContent": dict(cast(Any, output))}
        return {"content": [wire(block) for block in cast(list[Any], output)]}


def fastmcp_tasks(app: AppT, server: TaskServerCore) -> FastMCPSeam[AppT]:
    """Serve 2025-11-25 tasks for the tools of ``app``, an ``mcp`` 1.x ``FastMCP``.

    ``server.mount`` takes the app's low-level server (``capabilities.tasks``, the
    ``tasks/*`` handlers); ``tools/list`` stays the app's, with
    ``execution.taskSupport`` added to the marked tools, and ``tools/call`` of tools not
    marked stays the app's. Mark tools with ``@seam.task_tool(...)`` above
    ``@app.tool()``. The server starts on the first request; close it with ``await
    server.close()`` when the app stops. The seam's ``app`` is ``app``, typed as given.
    """
    if server.tables.is_extension:
        raise RuntimeError(
            "fastmcp_tasks serves MCP 2025-11-25 on mcp 1.x; this package is the Tasks"
            " extension (use server_extension)"
        )
    return FastMCPSeam(server, app)
