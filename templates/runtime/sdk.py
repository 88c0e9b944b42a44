"""Seams into the official Python SDKs: keep the SDK's ``Client`` or server, add durable
tasks.

* :func:`client_extension` (the Tasks extension, ``mcp`` 2.x): a ``ClientExtension`` for
  ``mcp.client.Client(url, extensions=[...])``. A plain ``await client.call_tool(...)``
  that the server answers with a task then runs this package's polling loop: input
  requests go to the host's elicitation, sampling and roots callbacks (or to handlers
  given here) and are delivered with ``tasks/update``; the task ID is stored until the
  task ends; cancelling the call sends ``tasks/cancel``; the ordinary ``CallToolResult``
  is returned. Handles of running tasks are in ``extension.handles`` (and passed to
  ``on_task``); ``extension.resume(client, task_id)`` continues a stored task.
* :func:`server_extension` (the Tasks extension, ``mcp`` 2.x): an ``Extension`` for
  ``MCPServer(extensions=[...])``. The app keeps its ``@mcp.tool()`` functions and marks
  those that may or must run as tasks with ``@extension.task_tool(...)``; ``tools/call``
  of a marked tool is answered by the generated ``TasksServer`` (a task when the request
  declares the extension), which also serves the ``tasks/*`` methods and keeps the tasks
  in its store.
* :func:`fastmcp_tasks` (2025-11-25, ``mcp`` 1.x): the same for a ``FastMCP`` app
  (``mcp.server.fastmcp``); its tools stay where they are.

Inside a tool running as a task, :func:`task_context` returns the ``ToolContext``
(``report``, ``elicit``, ``request_input``, ``cancelled``); it is None otherwise.

The SDKs are imported when one of these functions is called, never at import time: the
package itself depends on pydantic only.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import importlib
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, Literal, NoReturn, TypeVar, cast

from .client_core import (
    ClientCore,
    InputContext,
    InputHandler,
    StatusCallback,
    TaskFailed,
    TaskHandle,
    answer_to_wire,
)
from .protocol import REVISIONS
from .revision import RevisionTables
from .server_core import (
    Emit,
    JsonRpcError,
    Preflight,
    RequestInfo,
    Session,
    TaskServerCore,
    TaskSupport,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
    http_headers,
)
from .task_ids import SqliteTaskIdStore, TaskIdStore
from .transport import JsonRpcError as WireError
from .transport import NotificationHandler, RequestHandler, RequestId

__all__ = [
    "ClientSeam",
    "FastMCPSeam",
    "SdkTransport",
    "ServerSeam",
    "client_extension",
    "fastmcp_tasks",
    "mount",
    "server_extension",
    "task_context",
]

F = TypeVar("F", bound=Callable[..., Any])

_TOOL_CONTEXT: contextvars.ContextVar[ToolContext | None] = contextvars.ContextVar(
    "mcp_tasks_tool_context", default=None
)
_SDK_CALL: contextvars.ContextVar[Callable[[], Awaitable[Any]] | None] = (
    contextvars.ContextVar("mcp_tasks_sdk_call", default=None)
)
"""Runs the SDK's own ``tools/call`` handler for the call being answered (``mcp``
2.x)."""

_MOUNTED_ROLES = ("get", "result", "list", "update", "cancel")
"""Tasks method roles a hosted ``TasksServer`` answers (those the revision has)."""


def task_context() -> ToolContext | None:
    """The ``ToolContext`` of the tool call running in this coroutine, when a seam runs
    it.

    ``await ctx.report("...")`` sets the task's ``statusMessage``, ``await
    ctx.elicit(...)`` asks the user (the task is ``input_required`` meanwhile),
    ``ctx.cancelled`` tells that the client cancelled the task. Outside a seam's call it
    returns None.
    """
    return _TOOL_CONTEXT.get()


def _module(name: str) -> Any:
    """Import an SDK module, with a one-line hint when the SDK is missing."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise ImportError(
            f"{name} is not importable ({error}); install the official MCP SDK"
            " (pip install mcp) in this interpreter"
        ) from error


def _extension_tables(what: str) -> RevisionTables:
    """The tables of the package's Tasks extension revision (``RuntimeError``: none)."""
    for tables in REVISIONS.values():
        if tables.extension_id:
            return tables
    raise RuntimeError(
        f"{what} serves the Tasks extension; this package is MCP"
        f" {', '.join(REVISIONS)} (use fastmcp_tasks or TasksServer.mount)"
    )


def _extension_client() -> type[ClientCore[Any]]:
    """The client class of the package's Tasks extension revision."""
    _extension_tables("client_extension")
    adapter = importlib.import_module(".client_ext", __package__)
    return cast(type[ClientCore[Any]], adapter.TasksClient)


def _wire(value: object) -> dict[str, Any]:
    """A pydantic model or mapping as a JSON object (aliases, no None values)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return cast(dict[str, Any], dump(by_alias=True, mode="json", exclude_none=True))
    if isinstance(value, Mapping):
        return dict(cast(Mapping[str, Any], value))
    raise TypeError(f"not a JSON object: {type(value).__name__}")


def _sdk_result(value: object) -> ToolOutput:
    """An SDK ``tools/call`` result as this package's ``CallToolResult`` object."""
    result = _wire(value)
    kind = result.pop("resultType", "complete")
    if kind != "complete":
        raise ToolError(f"the tool answered with resultType {kind!r} inside a task")
    result.pop("_meta", None)
    return result


# -- client: the Tasks extension on mcp 2.x ------------------------------------------


class SdkTransport:
    """This package's ``Transport`` over an ``mcp`` 2.x ``ClientSession``.

    Requests go through ``ClientSession.send_request`` (the session adds its ``_meta``
    and the ``Mcp-Name`` header from ``taskId``); the modern protocol has no back
    channel, so no notifications or server requests arrive here.
    """

    def __init__(self, session: Any) -> None:
        self.session = session
        self._error_type: Any = getattr(_module("mcp.shared.exceptions"), "MCPError")

    def set_handlers(
        self, on_notification: NotificationHandler, on_request: RequestHandler
    ) -> None:
        """Nothing to route: results are all that arrive."""

    async def request(
        self, request_id: RequestId, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Send one request through the session; SDK errors become ``JsonRpcError``."""
        request = _raw_request_type()(method=method, params=params)
        try:
            result = await self.session.send_request(request, _object_adapter())
        except self._error_type as error:
            raise WireError(error.code, error.message, error.data) from None
        return cast(dict[str, Any], result)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """The modern protocol sends no client notifications: dropped."""

    async def aclose(self) -> None:
        """The session belongs to the SDK's ``Client``: left open."""


@functools.cache
def _raw_request_type() -> Any:
    """A ``mcp_types.Request`` subclass for any method, naming the task in
    ``Mcp-Name``."""
    base: Any = getattr(_module("mcp_types"), "Request")
    task_id = _extension_tables("client_extension").task_fields["task_id"]
    namespace = {"name_param": task_id, "__module__": __name__}
    return type("TasksRequest", (base[dict[str, Any], str],), namespace)


@functools.cache
def _object_adapter() -> Any:
    pydantic: Any = importlib.import_module("pydantic")
    return pydantic.TypeAdapter(dict[str, Any])


@functools.cache
def _claim_model() -> Any:
    """The claimed ``tools/call`` result: ``resultType: "task"`` with the task's
    fields."""
    result: Any = getattr(_module("mcp_types"), "Result")
    pydantic: Any = importlib.import_module("pydantic")
    namespace = {
        "__module__": __name__,
        "__annotations__": {"result_type": Literal["task"]},
        "model_config": pydantic.ConfigDict(extra="allow"),
    }
    return type("CreateTaskClaim", (result,), namespace)


def _session_handler(session: Any) -> InputHandler:
    """An input handler that asks the SDK session's own callbacks (the host's)."""
    types: Any = _module("mcp_types")
    context_type: Any = getattr(_module("mcp.client.session"), "ClientRequestContext")
    adapter: Any = getattr(importlib.import_module("pydantic"), "TypeAdapter")(
        types.InputRequest
    )

    async def ask(request: InputContext) -> dict[str, Any] | None:
        sdk_request = adapter.validate_python(
            {"method": request.method, "params": request.params}
        )
        key = request.key or f"task-{request.task_id}"
        answer = await session.dispatch_input_request(
            context_type(session=session, request_id=key), sdk_request
        )
        if isinstance(answer, types.ErrorData):
            raise WireError(answer.code, answer.message, answer.data)
        return _wire(answer)

    return ask


class ClientSeam:
    """What :func:`client_extension` adds to an SDK ``Client``; its instance is
    ``extension.seam``.

    ``handles`` maps the task IDs of calls being waited for to their ``TaskHandle``
    (``snapshots()`` for a progress display, ``cancel()``); ``on_task`` is called with
    each new handle. The other options are :class:`ClientCore`'s
    (``default_poll_interval``, ``poll_after_cancel``, ``transport_retries``, ...).
    """

    def __init__(
        self,
        *,
        store: TaskIdStore | None = None,
        elicitation_handler: InputHandler | None = None,
        sampling_handler: InputHandler | None = None,
        roots_handler: InputHandler | None = None,
        on_task: Callable[[TaskHandle[Any]], object] | None = None,
        on_status: StatusCallback | None = None,
        cancel_on_abort: bool = True,
        **client_options: Any,
    ) -> None:
        self.store: TaskIdStore = store if store is not None else SqliteTaskIdStore()
        self.elicitation_handler = elicitation_handler
        self.sampling_handler = sampling_handler
        self.roots_handler = roots_handler
        self.on_task = on_task
        self.on_status = on_status
        self.client_options = dict(client_options, cancel_on_abort=cancel_on_abort)
        self.handles: dict[str, TaskHandle[Any]] = {}

    def tasks_client(self, session: Any) -> ClientCore[Any]:
        """A ``TasksClient`` speaking through ``session`` (an ``mcp`` 2.x
        ``ClientSession``)."""
        fallback = _session_handler(session)
        return _extension_client()(
            SdkTransport(session),
            store=self.store,
            elicitation_handler=self.elicitation_handler or fallback,
            sampling_handler=self.sampling_handler or fallback,
            roots_handler=self.roots_handler or fallback,
            **self.client_options,
        )

    def claims(self) -> list[Any]:
        """The ``ResultClaim`` for ``resultType: "task"`` on ``tools/call``."""
        claim: Any = getattr(_module("mcp.client.extension"), "ResultClaim")
        return [claim(result_type="task", model=_claim_model(), resolve=self.resolve)]

    async def resolve(self, claimed: Any, ctx: Any) -> Any:
        """Wait for the task of a ``tools/call`` and return its ``CallToolResult``."""
        client = self.tasks_client(ctx.session)
        handle = await client.adopt(_wire(claimed), str(ctx.tool_name))
        return await self._finish(handle, ctx.read_timeout_seconds)

    async def resume(
        self, client: Any, task_id: str, *, timeout: float | None = None
    ) -> Any:
        """Continue waiting for a stored task (for example after the process was
        killed) through ``client`` (an ``mcp.client.Client`` or its ``ClientSession``).
        """
        session = getattr(client, "session", client)
        handle = self.tasks_client(session).task(task_id)
        return await self._finish(handle, timeout)

    async def pending(self) -> list[str]:
        """The IDs of stored tasks not yet seen ending."""
        return [task.task_id for task in await self.store.pending()]

    async def cancel(self, task_id: str) -> None:
        """Cancel a task being waited for (``tasks/cancel``); its call raises
        ``TaskCancelled``."""
        await self.handles[task_id].cancel()

    async def _finish(self, handle: TaskHandle[Any], timeout: float | None) -> Any:
        types: Any = _module("mcp_types")
        error_type: Any = getattr(_module("mcp.shared.exceptions"), "MCPError")
        task_id = handle.task_id
        if task_id is not None:
            self.handles[task_id] = handle
            if self.on_task is not None:
                self.on_task(handle)
        try:
            result = await handle.result(timeout=timeout, on_status=self.on_status)
        except TaskFailed as failure:
            raise error_type(failure.code, failure.message, failure.data) from failure
        finally:
            if task_id is not None:
                self.handles.pop(task_id, None)
        return types.CallToolResult.model_validate(
            answer_to_wire(result), by_name=False
        )


def client_extension(
    *,
    store: TaskIdStore | None = None,
    elicitation_handler: InputHandler | None = None,
    sampling_handler: InputHandler | None = None,
    roots_handler: InputHandler | None = None,
    on_task: Callable[[TaskHandle[Any]], object] | None = None,
    on_status: StatusCallback | None = None,
    cancel_on_abort: bool = True,
    **client_options: Any,
) -> Any:
    """A ``ClientExtension`` for ``mcp.client.Client(url, extensions=[...])``
    (``mcp>=2.3``).

    Input handlers left out use the ``Client``'s own callbacks
    (``elicitation_callback``, ``sampling_callback``, ``list_roots_callback``).
    ``store`` keeps task IDs (SQLite file by default); ``on_task`` gets each new
    ``TaskHandle``; ``on_status`` each snapshot. The extension object forwards
    :class:`ClientSeam`'s methods (``resume``, ``pending``, ``cancel``, ``handles``).
    """
    _extension_tables("client_extension")
    seam = ClientSeam(
        store=store,
        elicitation_handler=elicitation_handler,
        sampling_handler=sampling_handler,
        roots_handler=roots_handler,
        on_task=on_task,
        on_status=on_status,
        cancel_on_abort=cancel_on_abort,
        **client_options,
    )
    return _client_extension_type()(seam)


@functools.cache
def _forward_to_seam(self: Any, name: str) -> Any:
    """``__getattr__`` of the SDK extension classes: what they lack, their seam has."""
    if name == "seam":
        raise AttributeError(name)
    return getattr(self.seam, name)


def _client_extension_type() -> Any:
    base: Any = getattr(_module("mcp.client.extension"), "ClientExtension")

    def init(self: Any, seam: ClientSeam) -> None:
        self.seam = seam

    def claims(self: Any) -> list[Any]:
        return cast(ClientSeam, self.seam).claims()

    namespace = {
        "__module__": __name__,
        "__doc__": (
            "The Tasks extension for ``mcp.client.Client`` (see ``client_extension``)."
        ),
        "identifier": _extension_tables("client_extension").extension_id,
        "__init__": init,
        "claims": claims,
        "__getattr__": _forward_to_seam,
    }
    return type("TasksClientExtension", (base,), namespace)


# -- servers: shared by the mcp 2.x and mcp 1.x seams --------------------------------


class _HostedTools:
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


def _raise_sdk_error(error: Mapping[str, Any], error_type: Any) -> NoReturn:
    raise error_type(error["code"], error["message"], error.get("data"))


class ServerSeam(_HostedTools):
    """What :func:`server_extension` adds to an ``MCPServer``; its instance is
    ``extension.seam``."""

    def __init__(self, server: TaskServerCore) -> None:
        super().__init__(server)
        self._error_type: Any = getattr(_module("mcp.shared.exceptions"), "MCPError")

    def methods(self) -> list[Any]:
        """``MethodBinding``s of the Tasks methods the revision has."""
        extension: Any = _module("mcp.server.extension")
        types: Any = _module("mcp_types")
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
            _raise_sdk_error(response["error"], self._error_type)
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
            return _sdk_result(await call())
        except self._error_type as error:  # the tool raised a protocol error
            raise JsonRpcError(error.code, error.message, error.data) from None


def server_extension(server: TaskServerCore) -> Any:
    """An ``Extension`` for ``MCPServer(extensions=[...])`` (``mcp>=2.3``) backed by
    ``server``.

    Mark tools with ``@extension.task_tool(task_support=...)`` above ``@mcp.tool()`` (or
    ``extension.mark(name, ...)``). The server starts on the first request; close it
    with ``await server.close()`` (or ``async with server``) when the app stops.
    """
    if not server.tables.extension_id:
        raise RuntimeError(
            "server_extension serves the Tasks extension; this server is MCP"
            f" {server.tables.protocol_version} (use fastmcp_tasks or"
            " TasksServer.mount)"
        )
    return _server_extension_type()(ServerSeam(server))


@functools.cache
def _server_extension_type() -> Any:
    base: Any = getattr(_module("mcp.server.extension"), "Extension")

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
        "identifier": _extension_tables("server_extension").extension_id,
        "__init__": init,
        "methods": methods,
        "intercept_tool_call": intercept_tool_call,
        "__getattr__": _forward_to_seam,
    }
    return type("TasksServerExtension", (base,), namespace)


# -- server: 2025-11-25 on mcp 1.x FastMCP ---------------------------------------------


class FastMCPSeam(_HostedTools):
    """Durable tasks for the tools of an ``mcp`` 1.x ``FastMCP`` app (see
    :func:`fastmcp_tasks`)."""

    def __init__(self, server: TaskServerCore, app: Any) -> None:
        super().__init__(server)
        self.app = app
        self._types: Any = _module("mcp.types")
        self._install(app._mcp_server)

    def _install(self, lowlevel: Any) -> None:
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
        error_type: Any = getattr(_module("mcp.server.fastmcp.exceptions"), "ToolError")
        try:
            output = await self.app.call_tool(name, arguments)
        except error_type as error:  # FastMCP wraps the tool's own ToolError
            cause = error.__cause__
            raise ToolError(str(cause if isinstance(cause, error_type) else error))
        if isinstance(output, tuple):
            content, structured = cast(tuple[Any, Any], output)
            result = {"content": [_wire(block) for block in content]}
            if structured is not None:
                result["structuredContent"] = structured
            return result
        if isinstance(output, Mapping):
            return {"content": [], "structuredContent": dict(cast(Any, output))}
        return {"content": [_wire(block) for block in cast(list[Any], output)]}


def fastmcp_tasks(app: Any, server: TaskServerCore) -> FastMCPSeam:
    """Serve 2025-11-25 tasks for the tools of ``app``, an ``mcp`` 1.x ``FastMCP``.

    ``server.mount`` takes the app's low-level server (``capabilities.tasks``, the
    ``tasks/*`` handlers); ``tools/list`` stays the app's, with
    ``execution.taskSupport`` added to the marked tools, and ``tools/call`` of tools not
    marked stays the app's. Mark tools with ``@seam.task_tool(...)`` above
    ``@app.tool()``. The server starts on the first request; close it with ``await
    server.close()`` when the app stops.
    """
    if server.tables.extension_id:
        raise RuntimeError(
            "fastmcp_tasks serves MCP 2025-11-25 on mcp 1.x; this package is the Tasks"
            " extension (use server_extension)"
        )
    return FastMCPSeam(server, app)


# -- server: a TasksServer inside an SDK's low-level server ---------------------------

_SDK1_REQUESTS = (
    ("tools/list", "ListToolsRequest", "ListToolsResult"),
    ("tools/call", "CallToolRequest", "CallToolResult"),
    ("tasks/get", "GetTaskRequest", "GetTaskResult"),
    ("tasks/result", "GetTaskPayloadRequest", "GetTaskPayloadResult"),
    ("tasks/list", "ListTasksRequest", "ListTasksResult"),
    ("tasks/cancel", "CancelTaskRequest", "CancelTaskResult"),
)
"""``mcp`` 1.x: method, ``mcp.types`` request class and result class of each request a
mounted server may answer (those the revision has, and the tool methods)."""

_SDK1_INPUT_RESULTS = {
    "elicitation/create": "ElicitResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
}
"""``mcp`` 1.x: the ``mcp.types`` result class of each server-to-client request."""


def mount(server: TaskServerCore, sdk_server: Any) -> None:
    """Serve ``server``'s tools and Tasks methods from an official SDK's low-level
    ``Server``.

    The SDK is told by the object: ``mcp`` 2.x (``Server.middleware``) hosts the Tasks
    extension, ``mcp`` 1.x (``Server.request_handlers``) hosts 2025-11-25, whose core
    protocol it speaks. See ``TasksServer.mount``.
    """
    extension = bool(server.tables.extension_id)
    if hasattr(sdk_server, "middleware") and extension:
        _mount_sdk2(server, sdk_server)
    elif hasattr(sdk_server, "request_handlers") and not extension:
        _mount_sdk1(server, sdk_server)
    else:
        raise RuntimeError(
            f"cannot mount an MCP {server.tables.protocol_version} server into"
            f" {type(sdk_server).__name__}: the Tasks extension needs an mcp 2.x"
            " Server, 2025-11-25 an mcp 1.x Server"
        )


def _mount_sdk2(server: TaskServerCore, sdk_server: Any) -> None:
    """``mcp`` 2.x: a middleware answers ``tools/*`` and ``tasks/*`` through ``handle``.

    The SDK's ``server/discover`` advertises the extension; its lifespan starts and
    closes ``server``. Every other method stays with the SDK.
    """
    mcp_error: Any = getattr(_module("mcp.shared.exceptions"), "MCPError")
    sdk_server.extensions[server.tables.extension_id] = {}

    async def middleware(ctx: Any, call_next: Any) -> Any:
        method = str(ctx.method)
        ours = method in ("tools/list", "tools/call") or method.startswith("tasks/")
        if ctx.request_id is None or not ours:
            return await call_next(ctx)
        message = {
            "jsonrpc": "2.0",
            "id": ctx.request_id,
            "method": method,
            "params": dict(ctx.params or {}),
        }
        response = await server.handle(message, RequestInfo(headers=http_headers(ctx)))
        if response is None:
            return None
        if "error" in response:
            _raise_sdk_error(response["error"], mcp_error)
        return response["result"]

    sdk_server.middleware.insert(0, middleware)
    sdk_lifespan = sdk_server.lifespan

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncGenerator[Any, None]:
        async with server, sdk_lifespan(app) as state:
            yield state

    sdk_server.lifespan = lifespan


def _mount_sdk1(server: TaskServerCore, sdk_server: Any) -> None:
    """``mcp`` 1.x: request handlers answer through ``handle``; capabilities gain
    ``tasks``.

    A task's input requests travel on the pending ``tasks/result`` response stream, as
    the SDK's ``related_request_id`` routes them; each SDK session is one session here.
    """
    types: Any = _module("mcp.types")
    mcp_error: Any = getattr(_module("mcp.shared.exceptions"), "McpError")
    metadata_type: Any = getattr(_module("mcp.shared.message"), "ServerMessageMetadata")
    sessions: weakref.WeakKeyDictionary[Any, Session] = weakref.WeakKeyDictionary()
    relays: set[asyncio.Task[None]] = set()
    """Requests on their way to the client (held here: the loop keeps tasks weakly)."""

    def our_session(sdk_session: Any) -> Session:
        session = sessions.get(sdk_session)
        if session is None or session.id not in server.sessions:
            session = server.open_session()
            params = sdk_session.client_params
            if params is not None:
                session.client_capabilities = _wire(params.capabilities)
            sessions[sdk_session] = session
        return session

    def emitter(ctx: Any) -> Emit:
        related = metadata_type(related_request_id=ctx.request_id)

        async def relay(message: dict[str, Any]) -> None:
            try:
                request = types.ServerRequest.model_validate(
                    {"method": message["method"], "params": message["params"]}
                )
                result_type = getattr(types, _SDK1_INPUT_RESULTS[message["method"]])
                result = await ctx.session.send_request(
                    request, result_type, metadata=related
                )
                reply: dict[str, Any] = {"id": message["id"], "result": _wire(result)}
            except mcp_error as error:
                failure = {"code": error.error.code, "message": error.error.message}
                reply = {"id": message["id"], "error": failure}
            server.settle_reply(reply)

        async def emit(message: dict[str, Any]) -> None:
            if "id" in message:  # a request: its reply arrives later
                task = asyncio.get_running_loop().create_task(relay(message))
                relays.add(task)
                task.add_done_callback(relays.discard)
            else:
                notification = types.ServerNotification.model_validate(
                    {"method": message["method"], "params": message["params"]}
                )
                await ctx.session.send_notification(
                    notification, related_request_id=ctx.request_id
                )

        return emit

    def handler_for(result_name: str) -> Callable[[Any], Awaitable[Any]]:
        async def answer(request: Any) -> Any:
            ctx = sdk_server.request_context
            message = _wire(request)
            message.update(jsonrpc="2.0", id=ctx.request_id)
            info = RequestInfo(
                headers=http_headers(ctx), session_id=our_session(ctx.session).id
            )
            response = await server.handle(message, info, emitter(ctx))
            if response is None or "error" in response:
                error = (response or {}).get("error") or {
                    "code": -32603,
                    "message": "No response",
                }
                raise mcp_error(types.ErrorData.model_validate(error))
            result = response["result"]
            name = "CreateTaskResult" if "task" in result else result_name
            return types.ServerResult(getattr(types, name).model_validate(result))

        return answer

    for method, request_name, result_name in _SDK1_REQUESTS:
        if method.startswith("tools/") or method in server.tables.methods:
            handler = handler_for(result_name)
            sdk_server.request_handlers[getattr(types, request_name)] = handler
    sdk_capabilities = sdk_server.get_capabilities

    def get_capabilities(*args: Any, **kwargs: Any) -> Any:
        capabilities = sdk_capabilities(*args, **kwargs)
        declared = server.capabilities().get("tasks", {})
        capabilities.tasks = types.ServerTasksCapability.model_validate(declared)
        return capabilities

    sdk_server.get_capabilities = get_capabilities
