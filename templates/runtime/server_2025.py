"""Server skeleton for MCP revision 2025-11-25 with its experimental Tasks.

A server author registers tools and writes only their work::

    server = TasksServer("example", store=SQLiteTaskStore("tasks.db"))

    @server.tool(task_support="optional")
    async def slow(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await ctx.report("halfway")
        answer = await ctx.elicit("Go on?", {"type": "object", "properties": {}})
        return f"done ({answer['action']})"

``TasksServer.handle`` answers one parsed JSON-RPC message (transport-agnostic);
``asgi.create_app(server)`` serves it over streamable HTTP with sessions.

What the plumbing guarantees:

- ``initialize`` declares ``capabilities.tasks`` with exactly the supported leaves;
  ``tools/list`` shows each tool's ``execution.taskSupport`` and ``tools/call`` enforces it;
- a task-augmented ``tools/call`` answers ``CreateTaskResult`` once the task is stored;
- ``tasks/get`` / ``tasks/list`` (cursor pagination) / ``tasks/cancel`` follow the spec's
  error codes; ``tasks/result`` blocks until the task is terminal, delivers the task's
  input requests (``elicitation/create`` with related-task ``_meta``) on its stream, and
  then replays the exact outcome;
- the status state machine keeps terminal states final and bumps ``lastUpdatedAt``;
  status changes are sent as ``notifications/tasks/status``;
- every task is bound to the principal from the ``authenticate`` hook; other
  principals get "not found".
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import importlib
import itertools
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

from .server_core import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    AuditEvent,
    AuditHook,
    Authenticate,
    Emit,
    JsonRpcError,
    Limits,
    RateLimiter,
    RequestInfo,
    Session,
    TaskServerCore,
    Tool,
    ToolContext,
    ToolError,
    request_params,
    rfc3339,
    task_id_param,
    text_result,
    tool_result,
)
from .stores import TaskRecord, TaskStore

__all__ = [
    "PROTOCOL_VERSION",
    "AuditEvent",
    "JsonRpcError",
    "Limits",
    "RequestInfo",
    "Session",
    "Tool",
    "ToolContext",
    "ToolError",
]

PROTOCOL_VERSION = "2025-11-25"
"""The protocol revision this server speaks."""

META_RELATED_TASK = "io.modelcontextprotocol/related-task"
META_IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response"

_CAPABILITY_FOR_INPUT = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}

_INPUT_RESULT_TYPES = {
    "elicitation/create": "ElicitResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
}
"""``mcp.types`` result class of each server-to-client request (SDK mounting)."""

_MOUNTED_REQUESTS = {
    "ListToolsRequest": "ListToolsResult",
    "CallToolRequest": "CallToolResult",
    "GetTaskRequest": "GetTaskResult",
    "GetTaskPayloadRequest": "GetTaskPayloadResult",
    "ListTasksRequest": "ListTasksResult",
    "CancelTaskRequest": "CancelTaskResult",
}
"""``mcp.types`` request class -> result class answered through ``handle`` (SDK mounting)."""

_log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Channel:
    """Server-to-client requests of one task, waiting for a ``tasks/result`` stream."""

    outstanding: dict[int, dict[str, Any]] = field(
        default_factory=dict[int, dict[str, Any]]
    )
    changed: asyncio.Event = field(default_factory=asyncio.Event)


def _encode_cursor(seq: int) -> str:
    """An opaque ``tasks/list`` cursor for a position."""
    return base64.urlsafe_b64encode(f"after:{seq}".encode()).decode()


def _decode_cursor(cursor: Any) -> int:
    """The position in a cursor made by ``_encode_cursor``; ``-32602`` otherwise."""
    try:
        text = base64.urlsafe_b64decode(str(cursor).encode()).decode()
        prefix, _, number = text.partition(":")
        if prefix != "after":
            raise ValueError(text)
        return int(number)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise JsonRpcError(INVALID_PARAMS, "Invalid cursor") from None


class TasksServer(TaskServerCore):
    """A 2025-11-25 Tasks server: tools, task store, sessions, dispatcher, workers.

    ``store`` defaults to ``SQLiteTaskStore("mcp-tasks.sqlite3")``. ``authenticate``
    maps each request to the principal that owns the tasks it creates; ``tasks/list``
    is offered only when requestors can be told apart (``enable_list``, by default
    whether ``authenticate`` is set). ``task_mismatch_code`` is the error for a
    ``params.task`` that the tool's ``taskSupport`` does not allow (``-32601`` by
    default; ``-32600`` is also allowed by the spec). At start, ``recover_orphans``
    fails every task a crashed process left unfinished in the store. Replicas sharing
    a ``ReplicaStore`` (Redis) ignore it: they fail only the tasks whose worker lease
    ran out (see ``Limits.lease_s``) and pass cancellations and status changes to
    each other, so ``tasks/result`` on one replica follows a worker on another.
    """

    uses_sessions = True

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        store: TaskStore | None = None,
        limits: Limits | None = None,
        authenticate: Authenticate | None = None,
        rate_limiter: RateLimiter | None = None,
        audit: AuditHook | None = None,
        instructions: str | None = None,
        recover_orphans: bool = True,
        enable_list: bool | None = None,
        page_size: int = 50,
        task_mismatch_code: int = METHOD_NOT_FOUND,
        max_sessions: int = 10_000,
    ) -> None:
        super().__init__(
            name,
            version,
            store=store,
            limits=limits,
            authenticate=authenticate,
            rate_limiter=rate_limiter,
            audit=audit,
            instructions=instructions,
            recover_orphans=recover_orphans,
        )
        self.enable_list = (
            authenticate is not None if enable_list is None else enable_list
        )
        self.page_size = page_size
        self.task_mismatch_code = task_mismatch_code
        self.max_sessions = max_sessions
        self._contexts: dict[str, ToolContext] = {}
        self._channels: dict[str, _Channel] = {}
        self._task_sessions: dict[str, Session] = {}
        self._replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._request_ids = itertools.count(1)

    async def _on_close(self) -> None:
        """End every session's streams and wake every ``tasks/result`` waiter."""
        for session_id in list(self.sessions):
            self.close_session(session_id)
        for channel in self._channels.values():
            channel.changed.set()

    async def send_progress(
        self,
        ctx: ToolContext,
        progress: float,
        total: float | None,
        message: str | None,
    ) -> None:
        """``notifications/progress`` on the call's stream, or the session's for a task."""
        params: dict[str, Any] = {
            "progressToken": ctx.progress_token,
            "progress": progress,
        }
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        notification = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": params,
        }
        if ctx.task_id is None:
            if ctx.emit is not None:
                await ctx.emit(notification)
        elif ctx.session is not None:
            ctx.session.notify(notification)

    async def request_input(
        self, ctx: ToolContext, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Send a request to the client and wait for its result.

        As a task: the task moves to ``input_required``, the request (with related-task
        ``_meta``) waits for the client's ``tasks/result`` stream, and the task returns
        to ``working`` once every outstanding request is answered. Raises
        ``JsonRpcError`` when the client did not declare the needed capability or
        answered with an error.
        """
        capability = _CAPABILITY_FOR_INPUT.get(method)
        declared = ctx.session.client_capabilities if ctx.session else {}
        if capability is not None and capability not in declared:
            raise JsonRpcError(
                INVALID_REQUEST,
                f"The client did not declare the {capability!r} capability that"
                f" {method} needs",
            )
        if ctx.task_id is None:
            if ctx.emit is None:
                raise JsonRpcError(
                    INTERNAL_ERROR, f"No response stream to send {method} on"
                )
            return await self.request_on_stream(ctx.emit, method, params)
        params = {
            **params,
            "_meta": {
                **params.get("_meta", {}),
                META_RELATED_TASK: {"taskId": ctx.task_id},
            },
        }
        return await self.wait_for_input(ctx.task_id, method, params)

    # -- hosting in the official SDK ----------------------------------------------

    def mount(self, sdk_server: Any) -> None:
        """Serve the tools and the Tasks methods from an ``mcp`` 1.x low-level ``Server``.

        Registers request handlers (``tools/list``, ``tools/call``, ``tasks/get``,
        ``tasks/result``, ``tasks/list``, ``tasks/cancel``) that answer through
        ``handle``, and adds ``capabilities.tasks`` to what the SDK declares. Input
        requests of a task travel on the pending ``tasks/result`` response stream, as
        the SDK's ``related_request_id`` routes them. The SDK runs its lifespan once
        per session, so start and close this server in the application's lifespan
        (for example next to ``StreamableHTTPSessionManager.run()``). Needs
        ``mcp>=1.23,<2``, imported here.
        """
        types: Any = importlib.import_module("mcp.types")
        mcp_error: Any = getattr(
            importlib.import_module("mcp.shared.exceptions"), "McpError"
        )
        metadata_type: Any = getattr(
            importlib.import_module("mcp.shared.message"), "ServerMessageMetadata"
        )
        sessions: weakref.WeakKeyDictionary[Any, Session] = weakref.WeakKeyDictionary()

        def our_session(sdk_session: Any) -> Session:
            session = sessions.get(sdk_session)
            if session is None or session.id not in self.sessions:
                session = self.open_session()
                params = sdk_session.client_params
                if params is not None:
                    session.client_capabilities = params.capabilities.model_dump(
                        by_alias=True, mode="json", exclude_none=True
                    )
                sessions[sdk_session] = session
            return session

        def emitter(ctx: Any) -> Emit:
            related = metadata_type(related_request_id=ctx.request_id)

            async def relay(message: dict[str, Any]) -> None:
                try:
                    request = types.ServerRequest.model_validate(
                        {"method": message["method"], "params": message["params"]}
                    )
                    result_type = getattr(types, _INPUT_RESULT_TYPES[message["method"]])
                    result = await ctx.session.send_request(
                        request, result_type, metadata=related
                    )
                    reply: dict[str, Any] = {
                        "id": message["id"],
                        "result": result.model_dump(
                            by_alias=True, mode="json", exclude_none=True
                        ),
                    }
                except mcp_error as error:
                    reply = {
                        "id": message["id"],
                        "error": {
                            "code": error.error.code,
                            "message": error.error.message,
                        },
                    }
                self._take_reply(reply)

            async def emit(message: dict[str, Any]) -> None:
                if "id" in message:  # a request: its reply arrives later
                    asyncio.get_running_loop().create_task(relay(message))
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
                message = request.model_dump(
                    by_alias=True, mode="json", exclude_none=True
                )
                message.update(jsonrpc="2.0", id=ctx.request_id)
                http = getattr(ctx, "request", None)
                headers = None
                if http is not None:
                    headers = {str(k).lower(): str(v) for k, v in http.headers.items()}
                info = RequestInfo(
                    headers=headers, session_id=our_session(ctx.session).id
                )
                response = await self.handle(message, info, emitter(ctx))
                if response is None or "error" in response:
                    error = (response or {}).get("error") or {
                        "code": INTERNAL_ERROR,
                        "message": "No response",
                    }
                    raise mcp_error(types.ErrorData.model_validate(error))
                result = response["result"]
                name = "CreateTaskResult" if "task" in result else result_name
                return types.ServerResult(getattr(types, name).model_validate(result))

            return answer

        for request_name, result_name in _MOUNTED_REQUESTS.items():
            sdk_server.request_handlers[getattr(types, request_name)] = handler_for(
                result_name
            )
        sdk_capabilities = sdk_server.get_capabilities

        def get_capabilities(*args: Any, **kwargs: Any) -> Any:
            capabilities = sdk_capabilities(*args, **kwargs)
            capabilities.tasks = types.ServerTasksCapability.model_validate(
                self.capabilities()["tasks"]
            )
            return capabilities

        sdk_server.get_capabilities = get_capabilities

    # -- capabilities ---------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """The server capabilities declared in the ``initialize`` result."""
        tasks: dict[str, Any] = {"cancel": {}}
        if self.enable_list:
            tasks["list"] = {}
        if any(tool.task_support != "forbidden" for tool in self._tools.values()):
            tasks["requests"] = {"tools": {"call": {}}}
        return {"tools": {"listChanged": False}, "tasks": tasks}

    # -- dispatcher -------------------------------------------------------------

    async def handle(
        self,
        message: dict[str, Any],
        request: RequestInfo | None = None,
        emit: Emit | None = None,
    ) -> dict[str, Any] | None:
        """Answer one JSON-RPC message.

        Returns the response object, or None for notifications and for the client's
        responses to our requests. ``emit`` sends messages on the request's own
        response stream (input requests of a synchronous tool, progress, and the
        input requests that ``tasks/result`` delivers).
        """
        request = request or RequestInfo()
        if "method" not in message:
            self._take_reply(message)
            return None
        if "id" not in message:
            return None  # notifications/initialized, notifications/cancelled, ...
        request_id = message.get("id")
        try:
            result = await self._dispatch(message, request, emit)
        except JsonRpcError as error:
            return {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}
        except Exception:  # a bug must yield an error response, not a dead stream
            _log.exception("internal error while handling %s", message.get("method"))
            internal = JsonRpcError(INTERNAL_ERROR, "Internal error")
            return {"jsonrpc": "2.0", "id": request_id, "error": internal.to_wire()}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    async def _dispatch(
        self, message: dict[str, Any], request: RequestInfo, emit: Emit | None
    ) -> dict[str, Any]:
        """Route one request; raises ``JsonRpcError`` for every failure."""
        method = message.get("method")
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            raise JsonRpcError(INVALID_REQUEST, "Not a JSON-RPC 2.0 request")
        params = request_params(message)
        session = self.sessions.get(request.session_id or "")
        principal = self._principal(request)
        if method.startswith("tasks/"):
            self._check_rate(principal, method)
        if method == "initialize":
            return self._initialize(params, session)
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": [self._tool_wire(tool) for tool in self._tools.values()]}
        if method == "tools/call":
            return await self._call_tool(message, params, principal, session, emit)
        if method == "tasks/get":
            record = await self._lookup(task_id_param(params), principal)
            self._emit_audit("retrieved", record.task_id, principal)
            return self._task(record)
        if method == "tasks/result":
            return await self._tasks_result(params, principal, emit)
        if method == "tasks/list" and self.enable_list:
            return await self._tasks_list(params, principal)
        if method == "tasks/cancel":
            return await self._tasks_cancel(params, principal)
        return await self._call_custom(method, params, principal, request)

    def _initialize(
        self, params: dict[str, Any], session: Session | None
    ) -> dict[str, Any]:
        """Record the client's capabilities; declare ours."""
        capabilities = params.get("capabilities")
        if not isinstance(capabilities, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.capabilities must be an object")
        if session is not None:
            session.client_capabilities = cast(dict[str, Any], capabilities)
        result: dict[str, Any] = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": self.capabilities(),
            "serverInfo": {"name": self.name, "version": self.version},
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    @staticmethod
    def _tool_wire(tool: Tool) -> dict[str, Any]:
        """A ``Tool`` entry for ``tools/list`` with its ``execution.taskSupport``."""
        wire: dict[str, Any] = {
            "name": tool.name,
            "inputSchema": tool.input_schema,
            "execution": {"taskSupport": tool.task_support},
        }
        if tool.title is not None:
            wire["title"] = tool.title
        if tool.description:
            wire["description"] = tool.description
        return wire

    # -- wire shapes ----------------------------------------------------------

    @staticmethod
    def _task(record: TaskRecord) -> dict[str, Any]:
        """The flat ``Task`` object of a record (``ttl`` always present)."""
        task: dict[str, Any] = {
            "taskId": record.task_id,
            "status": record.status,
            "createdAt": rfc3339(record.created_at),
            "lastUpdatedAt": rfc3339(record.updated_at),
            "ttl": record.ttl_ms,
        }
        if record.status_message is not None:
            task["statusMessage"] = record.status_message
        if record.poll_interval_ms is not None:
            task["pollInterval"] = record.poll_interval_ms
        task.update(record.extra)
        return task

    # -- tools/call ---------------------------------------------------------------

    async def _call_tool(
        self,
        message: dict[str, Any],
        params: dict[str, Any],
        principal: str | None,
        session: Session | None,
        emit: Emit | None,
    ) -> dict[str, Any]:
        """Run a tool synchronously, or create a task when ``params.task`` asks for one."""
        tool, arguments = self._tool(params)
        meta = params.get("_meta")
        token = (
            cast(dict[str, Any], meta).get("progressToken")
            if isinstance(meta, dict)
            else None
        )
        ctx = ToolContext(
            self,
            tool=tool,
            principal=principal,
            session=session,
            progress_token=token if isinstance(token, (str, int)) else None,
            emit=emit,
        )
        task = params.get("task")
        if "tools" not in self.capabilities()["tasks"].get("requests", {}):
            task = None  # without the capability, params.task is ignored
        if task is not None and tool.task_support == "forbidden":
            raise JsonRpcError(
                self.task_mismatch_code,
                f"Tool {tool.name!r} does not support task-augmented calls",
            )
        if task is None and tool.task_support == "required":
            raise JsonRpcError(
                self.task_mismatch_code,
                "Task augmentation required for tools/call requests"
                f" to tool {tool.name!r}",
            )
        if task is None:
            try:
                return tool_result(await tool.handler(ctx, arguments))
            except ToolError as error:
                return text_result(str(error), is_error=True)
        if not isinstance(task, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.task must be an object")
        ttl = cast(dict[str, Any], task).get("ttl")
        if ttl is not None and (not isinstance(ttl, (int, float)) or ttl < 0):
            raise JsonRpcError(INVALID_PARAMS, "params.task.ttl must be a number >= 0")
        record = await self._new_task(
            tool, principal, None if ttl is None else int(ttl)
        )
        ctx.task_id = record.task_id
        self._contexts[record.task_id] = ctx
        if session is not None:
            self._task_sessions[record.task_id] = session
        self._spawn(record.task_id, self._work(record.task_id, ctx, arguments))
        created: dict[str, Any] = {"task": self._task(record)}
        if tool.immediate_response is not None:
            created["_meta"] = {META_IMMEDIATE_RESPONSE: tool.immediate_response}
        return created

    async def _work(
        self, task_id: str, ctx: ToolContext, arguments: dict[str, Any]
    ) -> None:
        """Run a tool as a task and store its outcome.

        ``isError: true`` fails the task but keeps the result for ``tasks/result``; a
        ``JsonRpcError`` (or an unexpected exception) fails it with that error.
        """
        try:
            try:
                result = tool_result(await ctx.tool.handler(ctx, arguments))
            except ToolError as error:
                result = text_result(str(error), is_error=True)
            except JsonRpcError as error:
                await self._finish(task_id, "failed", error=error)
                return
            except Exception as exc:  # the tool's bug must not kill the server
                _log.exception("tool %s failed", ctx.tool.name)
                internal = JsonRpcError(
                    INTERNAL_ERROR,
                    f"Internal error in tool {ctx.tool.name!r}: {type(exc).__name__}",
                )
                await self._finish(task_id, "failed", error=internal)
                return
            if result.get("isError"):
                blocks: list[Any] = result.get("content", [])
                texts = [
                    str(cast(dict[str, Any], block)["text"])
                    for block in blocks
                    if isinstance(block, dict) and "text" in block
                ]
                await self._finish(
                    task_id,
                    "failed",
                    result=result,
                    status_message="Tool reported an error: "
                    + (" ".join(texts) or "no details"),
                )
            else:
                await self._finish(task_id, "completed", result=result)
        finally:
            ctx.finished = True
            self._contexts.pop(task_id, None)
            self._channels.pop(task_id, None)

    def _purged(self, task_id: str) -> None:
        """Wake ``tasks/result`` waiters of an expired task (they answer not-found)."""
        channel = self._channels.pop(task_id, None)
        if channel is not None:
            channel.changed.set()
        self._task_sessions.pop(task_id, None)

    def _cancelled_elsewhere(self, task_id: str) -> None:
        """Mark the local worker of a task another replica cancelled, and stop it."""
        ctx = self._contexts.get(task_id)
        if ctx is not None:
            ctx.cancelled = True
        self._stop_worker(task_id)

    async def _published(self, record: TaskRecord) -> None:
        """Wake ``tasks/result`` waiters; notify the creating session of the change."""
        channel = self._channels.get(record.task_id)
        if channel is not None:
            channel.changed.set()
        session = self._task_sessions.get(record.task_id)
        if session is not None:
            session.notify(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/tasks/status",
                    "params": self._task(record),
                }
            )
        if record.is_terminal:
            self._task_sessions.pop(record.task_id, None)

    # -- server-to-client requests ------------------------------------------------

    def _take_reply(self, message: dict[str, Any]) -> None:
        """Deliver the client's response to the request that awaits it."""
        request_id = message.get("id")
        future = self._replies.get(request_id) if isinstance(request_id, int) else None
        if future is None or future.done():
            return
        raw_error = message.get("error")
        if isinstance(raw_error, dict):
            error = cast(dict[str, Any], raw_error)
            future.set_exception(
                JsonRpcError(
                    int(error.get("code", INTERNAL_ERROR)),
                    str(error.get("message", "")),
                    error.get("data"),
                )
            )
        else:
            result = message.get("result")
            future.set_result(
                cast(dict[str, Any], result) if isinstance(result, dict) else {}
            )

    def _new_request(
        self, method: str, params: dict[str, Any]
    ) -> tuple[int, dict[str, Any], asyncio.Future[dict[str, Any]]]:
        """A new server-to-client request and the future of its reply."""
        request_id = next(self._request_ids)
        reply: asyncio.Future[dict[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )
        self._replies[request_id] = reply
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": method,
            "params": params,
        }
        return request_id, message, reply

    async def request_on_stream(
        self, emit: Emit, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Send a request on a response stream and wait for the reply (``ToolContext`` API)."""
        request_id, message, reply = self._new_request(method, params)
        try:
            await emit(message)
            return await reply
        finally:
            self._replies.pop(request_id, None)

    async def wait_for_input(
        self, task_id: str, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Queue a task's request for ``tasks/result`` and wait for the reply.

        The task is ``input_required`` while any request is outstanding. Used by
        ``ToolContext.request_input``.
        """
        request_id, message, reply = self._new_request(method, params)
        channel = self._channels.setdefault(task_id, _Channel())
        channel.outstanding[request_id] = message
        try:
            if await self._update(task_id, status="input_required") is None:
                raise asyncio.CancelledError  # the task already ended
            result = await reply
        finally:
            self._replies.pop(request_id, None)
            channel.outstanding.pop(request_id, None)
        if not channel.outstanding:
            await self._update(task_id, status="working")
        return result

    # -- tasks/* --------------------------------------------------------------------

    async def _tasks_result(
        self, params: dict[str, Any], principal: str | None, emit: Emit | None
    ) -> dict[str, Any]:
        """Block until the task is terminal, delivering its input requests; replay the outcome."""
        task_id = task_id_param(params)
        await self._lookup(task_id, principal)
        sent: set[int] = set()
        channel = self._channels.setdefault(task_id, _Channel())
        try:
            while True:
                # clear before reading, so that no change between the two is missed
                channel.changed.clear()
                record = await self._lookup(task_id, principal)
                if record.is_terminal:
                    break
                if emit is not None:
                    for request_id, message in list(channel.outstanding.items()):
                        if request_id not in sent:
                            sent.add(request_id)
                            await emit(message)
                if not self._started:
                    raise JsonRpcError(INTERNAL_ERROR, "Server is shutting down")
                await channel.changed.wait()
        finally:
            if not channel.outstanding and task_id not in self._contexts:
                self._channels.pop(task_id, None)
        self._emit_audit("result_retrieved", task_id, principal)
        if record.error is not None:
            stored = record.error
            raise JsonRpcError(
                int(stored.get("code", INTERNAL_ERROR)),
                str(stored.get("message", "")),
                stored.get("data"),
            )
        if record.result is None:
            raise JsonRpcError(INTERNAL_ERROR, "Task was cancelled; it has no result")
        result = dict(record.result)
        result["_meta"] = {
            **result.get("_meta", {}),
            META_RELATED_TASK: {"taskId": task_id},
        }
        return result

    async def _tasks_list(
        self, params: dict[str, Any], principal: str | None
    ) -> dict[str, Any]:
        """One page of the caller's tasks; ``nextCursor`` while more remain."""
        cursor = params.get("cursor")
        after = 0 if cursor is None else _decode_cursor(cursor)
        now = time.time()
        page: list[TaskRecord] = []
        while len(page) <= self.page_size:
            batch = await self.store.list_tasks(principal, after, self.page_size + 1)
            for record in batch:
                after = record.seq
                if not record.is_expired(now):
                    page.append(record)
            if len(batch) <= self.page_size:
                break
        more = len(page) > self.page_size
        page = page[: self.page_size]
        result: dict[str, Any] = {"tasks": [self._task(r) for r in page]}
        if more:
            result["nextCursor"] = _encode_cursor(page[-1].seq)
        return result

    async def _tasks_cancel(
        self, params: dict[str, Any], principal: str | None
    ) -> dict[str, Any]:
        """Cancel a live task before replying; ``-32602`` for a terminal one."""
        record = await self._lookup(task_id_param(params), principal)
        if not record.is_terminal:
            ctx = self._contexts.get(record.task_id)
            if ctx is not None:
                ctx.cancelled = True
            cancelled = await self._finish(
                record.task_id,
                "cancelled",
                status_message="The task was cancelled by request.",
            )
            self._stop_worker(record.task_id)
            if cancelled is not None:
                if ctx is None:
                    # the worker may run on another replica
                    await self._signal("cancel", record.task_id)
                return self._task(cancelled)
            record = await self._lookup(record.task_id, principal)
        raise JsonRpcError(
            INVALID_PARAMS,
            f"Cannot cancel task: already in terminal status {record.status!r}",
        )
