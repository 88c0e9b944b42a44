"""Server adapter for MCP revision 2025-11-25 with its experimental Tasks.

What differs from the extension lives here: ``initialize`` and its capabilities,
sessions, ``params.task`` and the nested ``CreateTaskResult``, ``tasks/result``
blocking until the task is terminal while it delivers the task's input requests (with
related-task ``_meta``) on its stream, ``tasks/list`` cursors and
``notifications/tasks/status``. Dispatch, workers, the state machine and the hosting in
the official SDKs (``mount``) are in ``server_core`` and ``sdk``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import time
from dataclasses import dataclass, field
from typing import Any, cast

from .models_2025 import CreateTaskResult, ListTasksResult
from .protocol_2025 import (
    TABLES,
    INPUT_REQUIRED,
    META_MODEL_IMMEDIATE_RESPONSE,
    META_RELATED_TASK,
    PROTOCOL_VERSION,
    ROLES,
    WORKING,
    has_role,
)
from .server_core import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    AuditEvent,
    AuditHook,
    Authenticate,
    Call,
    Emit,
    JsonRpcError,
    Limits,
    RateLimiter,
    RequestInfo,
    Route,
    Session,
    TaskServerCore,
    Tool,
    ToolContext,
    ToolError,
    json_integer,
    missing_capability,
    task_id_param,
)
from .stores import TaskRecord

__all__ = [
    "PROTOCOL_VERSION",
    "Session",
    "AuditEvent",
    "AuditHook",
    "Authenticate",
    "JsonRpcError",
    "Limits",
    "RateLimiter",
    "RequestInfo",
    "Tool",
    "ToolContext",
    "ToolError",
]


@dataclass(slots=True)
class _Channel:
    """Server-to-client requests of one task, waiting for a stream to carry them.

    Each open ``tasks/result`` stream carries them (a new one again, for a client that
    dropped its stream unanswered); while none is open, the GET stream of the task's
    session carries each request not yet sent, once.
    """

    outstanding: dict[str, dict[str, Any]] = field(
        default_factory=dict[str, dict[str, Any]]
    )
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    session: Session | None = None
    """The session of the task's ``tools/call``, whose GET stream may carry requests."""
    readers: int = 0
    """How many ``tasks/result`` streams of the task are open."""
    delivered: set[str] = field(default_factory=set[str])
    """Outstanding requests sent on some stream."""
    pushed: set[str] = field(default_factory=set[str])
    """Outstanding requests sent on a GET stream (no ``tasks/result`` repeats them)."""


def _encode_cursor(seq: int) -> str:
    """An opaque ``tasks/list`` cursor for a position."""
    return base64.urlsafe_b64encode(f"after:{seq}".encode()).decode()


def _decode_cursor(cursor: Any) -> int:
    """The position in a cursor made by ``_encode_cursor``; ``-32602`` otherwise."""
    try:
        prefix, _, number = (
            base64.urlsafe_b64decode(str(cursor).encode()).decode().partition(":")
        )
        if prefix != "after":
            raise ValueError(prefix)
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

    tables = TABLES

    uses_sessions = True
    cancel_message = "The task was cancelled by request."

    def setup(self) -> None:
        self._channels: dict[str, _Channel] = {}
        self._task_sessions: dict[str, Session] = {}

    def capabilities(self) -> dict[str, Any]:
        """The server capabilities declared in the ``initialize`` result."""
        tasks: dict[str, Any] = {"cancel": {}}
        if self.enable_list:
            tasks["list"] = {}
        if any(tool.task_support != "forbidden" for tool in self._tools.values()):
            tasks["requests"] = {"tools": {"call": {}}}
        return {"tools": {"listChanged": False}, "tasks": tasks}

    # -- dispatch -------------------------------------------------------------------

    def _begin(
        self,
        method: str,
        params: dict[str, Any],
        request: RequestInfo,
        emit: Emit | None,
    ) -> Call:
        call = super()._begin(method, params, request, emit)
        call.session = self.sessions.get(request.session_id or "")
        if call.session is not None:
            call.session.last_used = time.monotonic()
        return call

    def _revision_routes(self) -> dict[str, Route]:
        return {"initialize": self._initialize}

    def _role_routes(self) -> dict[str, Route]:
        return {
            **super()._role_routes(),
            "result": self._tasks_result,
            "list": self._tasks_list,
        }

    async def _initialize(self, call: Call) -> dict[str, Any]:
        """Record the client's capabilities; declare ours."""
        capabilities = call.params.get("capabilities")
        if not isinstance(capabilities, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.capabilities must be an object")
        if call.session is not None:
            call.session.client_capabilities = cast(dict[str, Any], capabilities)
        result: dict[str, Any] = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": self.capabilities(),
            "serverInfo": {"name": self.name, "version": self.version},
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def _tool_wire(self, tool: Tool) -> dict[str, Any]:
        """A ``Tool`` entry with its ``execution.taskSupport``."""
        return {
            **super()._tool_wire(tool),
            "execution": {"taskSupport": tool.task_support},
        }

    # -- tools/call -----------------------------------------------------------------

    def _task_request(self, call: Call, tool: Tool) -> tuple[bool, int | None]:
        """``params.task`` asks for a task (ignored without the capability)."""
        task = call.params.get("task")
        if "tools" not in self.capabilities()["tasks"].get("requests", {}):
            task = None
        if task is not None and tool.task_support == "forbidden":
            raise JsonRpcError(
                self.task_mismatch_code,
                f"Tool {tool.name!r} does not support task-augmented calls",
            )
        if task is None and tool.task_support == "required":
            raise JsonRpcError(
                self.task_mismatch_code,
                f"Task augmentation required for tools/call requests to tool {tool.name!r}",
            )
        if task is None:
            return False, None
        if not isinstance(task, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.task must be an object")
        ttl = cast(dict[str, Any], task).get("ttl")
        if ttl is None:
            return True, None
        return True, json_integer(ttl, "params.task.ttl")

    def _created(self, record: TaskRecord, ctx: ToolContext) -> dict[str, Any]:
        if ctx.session is not None:
            self._task_sessions[record.task_id] = ctx.session
        created: dict[str, Any] = {"task": self._task_model(record)}
        if ctx.tool.immediate_response is not None:
            created["meta"] = {
                META_MODEL_IMMEDIATE_RESPONSE: ctx.tool.immediate_response
            }
        return CreateTaskResult.model_validate(created).to_wire()

    def _failed_result(self, result: dict[str, Any]) -> bool:
        return bool(result.get("isError"))

    def _task_ended(self, task_id: str) -> None:
        self._channels.pop(task_id, None)

    # -- input, progress, notifications ---------------------------------------------

    async def request_input(
        self, ctx: ToolContext, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Send a request to the client and wait for its result.

        As a task: the task is ``input_required`` while the request (with related-task
        ``_meta``) waits for the client's ``tasks/result`` stream or, while none is
        open, goes out once on the session's GET stream; the task works again once
        every outstanding request is answered. Raises ``JsonRpcError`` when the client
        did not declare the needed capability or answered with an error.
        """
        declared = ctx.session.client_capabilities if ctx.session else {}
        capability = missing_capability(method, declared)
        if capability is not None:
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
            return await self.request_on_stream(
                ctx.emit,
                method,
                params,
                principal=ctx.principal,
                session_id=ctx.session.id if ctx.session is not None else None,
            )
        related = {
            **params.get("_meta", {}),
            META_RELATED_TASK: {"taskId": ctx.task_id},
        }
        request_id, message, pending = self._new_request(
            method, {**params, "_meta": related}, ctx.principal
        )
        channel = self._channels.setdefault(ctx.task_id, _Channel())
        channel.session = ctx.session
        channel.outstanding[request_id] = message
        try:
            if await self._update(ctx.task_id, status=INPUT_REQUIRED) is None:
                raise asyncio.CancelledError  # the task already ended
            self._push_input(channel)
            result = await pending.reply
        finally:
            self._replies.pop(request_id, None)
            channel.outstanding.pop(request_id, None)
            channel.delivered.discard(request_id)
            channel.pushed.discard(request_id)
        if not channel.outstanding:
            await self._update(ctx.task_id, status=WORKING)
        return result

    def _push_input(self, channel: _Channel) -> None:
        """Send a task's unsent requests on its session's GET stream (none while a
        ``tasks/result`` stream is open to carry them); that session may answer them."""
        session = channel.session
        if session is None or channel.readers:
            return
        for request_id, message in channel.outstanding.items():
            pending = self._replies.get(request_id)
            if pending is None or request_id in channel.delivered:
                continue
            if not session.send(message):
                return  # no GET stream is open; the next one gets it
            pending.sessions.add(session.id)
            channel.delivered.add(request_id)
            channel.pushed.add(request_id)

    def stream_opened(self, session: Session) -> None:
        """Send the session's waiting input requests on its new GET stream."""
        for channel in self._channels.values():
            if channel.session is session:
                self._push_input(channel)

    def stream_closed(self, session: Session, unsent: list[dict[str, Any]]) -> None:
        """Requests a closed GET stream never sent wait for another stream again."""
        returned = {str(m["id"]) for m in unsent if "id" in m and "method" in m}
        if not returned:
            return
        for channel in self._channels.values():
            if channel.session is session and channel.pushed & returned:
                channel.pushed -= returned
                channel.delivered -= returned
                channel.changed.set()  # a waiting tasks/result may carry them now
                self._push_input(channel)

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

    async def _published(self, record: TaskRecord) -> None:
        """Wake ``tasks/result`` waiters; notify the creating session of the change."""
        channel = self._channels.get(record.task_id)
        if channel is not None:
            channel.changed.set()
        session = self._task_sessions.get(record.task_id)
        if session is not None and has_role("notify"):
            method = ROLES["notify"]
            session.notify(
                {"jsonrpc": "2.0", "method": method, "params": self._task(record)}
            )
        if record.is_terminal:
            self._task_sessions.pop(record.task_id, None)

    def _purged(self, task_id: str) -> None:
        """Wake ``tasks/result`` waiters of an expired task (they answer not-found)."""
        channel = self._channels.pop(task_id, None)
        if channel is not None:
            channel.changed.set()
        self._task_sessions.pop(task_id, None)

    async def _on_close(self) -> None:
        """End every session's streams and wake every ``tasks/result`` waiter."""
        for session_id in list(self.sessions):
            self.close_session(session_id)
        for channel in self._channels.values():
            channel.changed.set()

    # -- tasks/* ----------------------------------------------------------------------

    async def _tasks_result(self, call: Call) -> dict[str, Any]:
        """Block until the task is terminal, delivering its input requests; replay the outcome."""
        task_id = task_id_param(call.params)
        await self._lookup(task_id, call.principal)
        sent: set[str] = set()
        channel = self._channels.setdefault(task_id, _Channel())
        if call.emit is not None:
            channel.readers += 1
        try:
            while True:
                channel.changed.clear()  # before reading, so no change is missed
                record = await self._lookup(task_id, call.principal)
                if record.is_terminal:
                    break
                for request_id, message in list(channel.outstanding.items()):
                    if (
                        call.emit is not None
                        and request_id not in sent
                        and request_id not in channel.pushed  # the GET stream sent it
                    ):
                        sent.add(request_id)
                        channel.delivered.add(request_id)
                        pending = self._replies.get(request_id)
                        if pending is not None:  # only this session may answer it
                            pending.sessions.add(call.request.session_id)
                        await call.emit(message)
                if not self._started:
                    raise JsonRpcError(INTERNAL_ERROR, "Server is shutting down")
                await channel.changed.wait()
        finally:
            if call.emit is not None:
                channel.readers -= 1
            if not channel.outstanding and task_id not in self._contexts:
                self._channels.pop(task_id, None)
            else:  # what no tasks/result stream carries now goes to the GET stream
                self._push_input(channel)
        self._emit_audit("result_retrieved", task_id, call.principal)
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

    async def _tasks_list(self, call: Call) -> dict[str, Any]:
        """One page of the caller's tasks; ``nextCursor`` while more remain."""
        if not self.enable_list:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {call.method}")
        cursor = call.params.get("cursor")
        after = 0 if cursor is None else _decode_cursor(cursor)
        size = self.page_size
        page = await self._page(call.principal, after, size)
        listed: dict[str, Any] = {"tasks": [self._task_model(r) for r in page[:size]]}
        if len(page) > size:
            listed["next_cursor"] = _encode_cursor(page[size - 1].seq)
        return ListTasksResult.model_validate(listed).to_wire()

    async def _cancel_result(
        self, cancelled: TaskRecord | None, record: TaskRecord, principal: str | None
    ) -> dict[str, Any]:
        """The cancelled task; ``-32602`` for a task that already was terminal."""
        if cancelled is not None:
            return self._task(cancelled)
        if not record.is_terminal:  # it ended while we tried
            record = await self._lookup(record.task_id, principal)
        raise JsonRpcError(
            INVALID_PARAMS,
            f"Cannot cancel task: already in terminal status {record.status!r}",
        )
