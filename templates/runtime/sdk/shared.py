"""What the SDK seams share: the tool context, importing the SDKs, JSON objects, the
marking of SDK tools as task tools of a ``TasksServer`` (``HostedTools``), and
``SdkBase``, the base type checkers see for the classes that derive from an SDK class
made on first use."""

from __future__ import annotations

import asyncio
import contextvars
import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

from ..protocol import REVISIONS
from ..revision import RevisionTables
from ..server_core import (
    Preflight,
    TaskServerCore,
    TaskSupport,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
)

__all__ = [
    "F",
    "HostedTools",
    "SdkBase",
    "extension_tables",
    "forward_to_seam",
    "module",
    "raise_sdk_error",
    "sdk_result",
    "task_context",
    "wire",
]

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:
    SdkBase = Any
else:
    SdkBase = object
"""The base of a class whose objects are at run time instances of an SDK class too
(``TasksServerExtension`` is an ``mcp.server.extension.Extension``): ``Any`` for type
checkers, so that such an object is accepted where the SDK wants its own class
(``MCPServer(extensions=[...])``) while the package type-checks without the SDK
installed; ``object`` at run time, where the SDK class is added as a second base when
the SDK is imported (on first use)."""

_TOOL_CONTEXT: contextvars.ContextVar[ToolContext | None] = contextvars.ContextVar(
    "mcp_tasks_tool_context", default=None
)
"""The ``ToolContext`` of the tool call a seam runs in this coroutine."""


def task_context() -> ToolContext | None:
    """The ``ToolContext`` of the tool call running in this coroutine, when a seam runs
    it.

    ``await ctx.report("...")`` sets the task's ``statusMessage``, ``await
    ctx.elicit(...)`` asks the user (the task is ``input_required`` meanwhile),
    ``ctx.cancelled`` tells that the client cancelled the task. Outside a seam's call it
    returns None.
    """
    return _TOOL_CONTEXT.get()


def module(name: str) -> Any:
    """Import an SDK module, with a one-line hint when the SDK is missing."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise ImportError(
            f"{name} is not importable ({error}); install the official MCP SDK"
            " (pip install mcp) in this interpreter"
        ) from error


def extension_tables(what: str) -> RevisionTables:
    """The tables of the package's Tasks extension revision (``RuntimeError``: none)."""
    for tables in REVISIONS.values():
        if tables.is_extension:
            return tables
    raise RuntimeError(
        f"{what} serves the Tasks extension; this package is MCP"
        f" {', '.join(REVISIONS)} (use fastmcp_tasks or TasksServer.mount)"
    )


def wire(value: object) -> dict[str, Any]:
    """A pydantic model or mapping as a JSON object (aliases, no None values)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return cast(dict[str, Any], dump(by_alias=True, mode="json", exclude_none=True))
    if isinstance(value, Mapping):
        return dict(cast(Mapping[str, Any], value))
    raise TypeError(f"not a JSON object: {type(value).__name__}")


def sdk_result(value: object) -> ToolOutput:
    """An SDK ``tools/call`` result as this package's ``CallToolResult`` object."""
    result = wire(value)
    kind = result.pop("resultType", "complete")
    if kind != "complete":
        raise ToolError(f"the tool answered with resultType {kind!r} inside a task")
    result.pop("_meta", None)
    return result


def forward_to_seam(self: Any, name: str) -> Any:
    """``__getattr__`` of the SDK extension classes: what they lack, their seam has
    (looked up each time: the seam's attributes may change, and the extension must
    not be kept alive by a cache)."""
    if name == "seam":
        raise AttributeError(name)
    return getattr(self.seam, name)


class HostedTools:
    """Marks SDK tools as task tools of a ``TasksServer`` and starts it on first use."""

    def __init__(self, server: TaskServerCore) -> None:
        self.server = server
        self._starting: asyncio.Lock | None = None

    async def ensure_started(self) -> None:
        """Start the ``TasksServer`` (store, recovery, sweeper) on the first request."""
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            await self.server.start()

    def marked(self, name: str) -> bool:
        """Whether ``name`` is a task tool."""
        return any(tool.name == name for tool in self.server.tools)

    def mark(
        self,
        name: str,
        *,
        task_support: TaskSupport = "optional",
        description: str = "",
        immediate_response: str | None = None,
        preflight: Preflight | None = None,
    ) -> None:
        """Let the SDK tool ``name`` run as a task (``"optional"``) or only as one
        (``"required"``). ``preflight`` asks MRTR questions before the task exists
        (see ``Tool``); the tool reads the answers in ``ctx.input_responses``."""
        self.server.add_tool(
            Tool(
                name=name,
                handler=self._run,
                description=description,
                task_support=task_support,
                preflight=preflight,
                immediate_response=immediate_response,
            )
        )

    def task_tool(
        self,
        name: str | None = None,
        *,
        task_support: TaskSupport = "optional",
        immediate_response: str | None = None,
        preflight: Preflight | None = None,
    ) -> Callable[[F], F]:
        """Decorator above ``@mcp.tool()``: the tool (named ``name`` or after the
        function) may run as a task, or must with ``task_support="required"``."""

        def register(function: F) -> F:
            self.mark(
                name or getattr(function, "__name__"),
                task_support=task_support,
                description=(getattr(function, "__doc__", None) or "").strip(),
                immediate_response=immediate_response,
                preflight=preflight,
            )
            return function

        return register

    async def _run(self, ctx: ToolContext, arguments: dict[str, Any]) -> ToolOutput:
        token = _TOOL_CONTEXT.set(ctx)
        try:
            return await self.call_sdk_tool(ctx.tool.name, arguments)
        finally:
            _TOOL_CONTEXT.reset(token)

    async def call_sdk_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        """Run the SDK's tool and return its ``CallToolResult`` object."""
        raise NotImplementedError


def raise_sdk_error(error: Mapping[str, Any], error_type: Any) -> NoReturn:
    raise error_type(error["code"], error["message"], error.get("data"))
