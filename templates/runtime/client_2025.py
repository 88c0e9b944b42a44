"""Async client for MCP Tasks, revision 2025-11-25 (experimental core Tasks).

The client asks for a task on ``tools/call`` only when the server declared
``capabilities.tasks.requests.tools.call`` and the tool's ``execution.taskSupport``
allows it; it then polls ``tasks/get`` at the server's ``pollInterval``, calls
``tasks/result`` once to collect the outcome (and, while it is pending, answers the
elicitation or sampling requests the server sends for the task), and returns the tool's
``CallToolResult`` as if the call had been answered at once::

    async with TasksClient(HttpTransport("http://127.0.0.1:8000/mcp")) as client:
        result = await client.call_tool("slow_compute", {"seconds": 3})
"""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeAlias, cast

from .client_core import (
    InputContext,
    InputHandler,
    InvalidResponse,
    MethodNotFound,
    StatusCallback,
    TaskCancelled,
    TaskFailed,
    TaskNotFound,
    TasksClientError,
    WaitTimeout,
    answer_to_wire,
    nap,
    status_name,
)
from .models import CallToolResult, CreateTaskResult, ErrorCode, ListTasksResult, Task
from .protocol import PACKAGE_NAME, TERMINAL_STATUSES
from .task_ids import SqliteTaskIdStore, StoredTask, TaskIdStore
from .transport import (
    JsonRpcError,
    RequestId,
    SessionTransport,
    Transport,
    TransportError,
    json_object,
)

__all__ = [
    "CapabilityNotDeclared",
    "CannotCancelTask",
    "InputContext",
    "InputHandler",
    "InvalidResponse",
    "MethodNotFound",
    "ProgressCallback",
    "StatusCallback",
    "TERMINAL_STATUSES",
    "TaskAugmentationRequired",
    "TaskCancelled",
    "TaskFailed",
    "TaskHandle",
    "TaskNotFound",
    "TaskRequired",
    "TaskSnapshot",
    "TasksClientError",
    "WaitTimeout",
    "decode_task",
    "status_name",
]

PROTOCOL_VERSION = "2025-11-25"
"""The protocol revision this client speaks."""

RELATED_TASK = "io.modelcontextprotocol/related-task"
"""The ``_meta`` key that ties a message to a task."""

MODEL_IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response"
"""The optional ``_meta`` key of ``CreateTaskResult`` with text for the model while the task runs."""

TaskSnapshot: TypeAlias = Task
"""What the client knows about a task at one moment."""

ProgressCallback: TypeAlias = Callable[[float, float | None, str | None], object]
"""Called with ``(progress, total, message)`` for each ``notifications/progress`` of a call."""


class CannotCancelTask(TaskNotFound):
    """``-32602`` on ``tasks/cancel``: the task is unknown or already in a terminal status."""


class TaskAugmentationRequired(JsonRpcError):
    """``-32601`` or ``-32600`` on a plain ``tools/call``: the server requires a task for it."""


class CapabilityNotDeclared(TasksClientError):
    """The server did not declare the capability an operation needs; nothing was sent."""


class TaskRequired(TasksClientError):
    """The tool declares ``taskSupport: "required"`` but the call asked for no task; nothing was sent."""


def decode_task(raw: dict[str, Any]) -> Task:
    """Decode a ``Task`` object; a missing ``ttl`` is read as ``null`` (unlimited).

    The schema requires ``ttl``, but some servers (``mcp`` 1.30 for Python) leave out a
    null one.
    """
    return Task.model_validate({"ttl": None, **raw})


def _dropped(request: asyncio.Task[dict[str, Any]]) -> bool:
    """Whether a finished request failed in the transport (rather than with an answer)."""
    return not request.cancelled() and isinstance(request.exception(), TransportError)


def _map_error(method: str, error: JsonRpcError) -> JsonRpcError:
    """Return the typed form of an error response to ``method``."""
    if error.code == ErrorCode.INVALID_PARAMS and method == "tasks/cancel":
        return CannotCancelTask(error.code, error.message, error.data)
    if error.code == ErrorCode.INVALID_PARAMS and method in (
        "tasks/get",
        "tasks/result",
    ):
        return TaskNotFound(error.code, error.message, error.data)
    if error.code == ErrorCode.METHOD_NOT_FOUND:
        return MethodNotFound(error.code, error.message, error.data)
    return error


class TaskHandle:
    """One ``tools/call``: its task (when the server created one) and, eventually, its result.

    Iterate :meth:`snapshots` to follow the task, or await :meth:`result` to wait for the
    outcome; both drive the same polling loop in the calling coroutine, so cancelling that
    coroutine stops the wait (and sends ``tasks/cancel`` when the client was built with
    ``cancel_on_abort=True``).
    """

    def __init__(
        self,
        client: TasksClient,
        task: Task | None,
        *,
        result: CallToolResult | None = None,
        progress_token: str | None = None,
        model_immediate_response: str | None = None,
    ) -> None:
        """Wrap a created task (or an immediate ``result``); use the client's methods to get one."""
        self._client = client
        self.task: Task | None = task
        """The latest snapshot of the task (``None`` without a task)."""
        self.model_immediate_response = model_immediate_response
        self._result = result
        self._error: BaseException | None = None
        self._progress_token = progress_token
        self._wake = asyncio.Event()
        self._pending_notification: Task | None = None
        self._seen: set[tuple[str, str, str | None]] = set()

    @property
    def task_id(self) -> str | None:
        """The task ID, or ``None`` when the server answered the call without a task."""
        return self.task.task_id if self.task is not None else None

    @property
    def done(self) -> bool:
        """Whether the outcome is known."""
        return self._result is not None or self._error is not None

    def push(self, task: Task) -> None:
        """Deliver a snapshot that arrived by notification; a running wait picks it up at once."""
        self._pending_notification = task
        self._wake.set()

    async def result(
        self, *, timeout: float | None = None, on_status: StatusCallback | None = None
    ) -> CallToolResult:
        """Wait for the tool's result.

        Raises :class:`TaskCancelled`, :class:`TaskNotFound`, :class:`WaitTimeout`, or the
        JSON-RPC error the call ended with (as :class:`TaskFailed`). A failed tool whose
        result has ``isError: true`` is returned, not raised.
        """
        if not self.done:
            async for snapshot in self.snapshots(timeout=timeout):
                if on_status is not None:
                    on_status(snapshot)
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    async def snapshots(self, *, timeout: float | None = None) -> AsyncIterator[Task]:
        """Yield every new snapshot of the task until it is terminal, then stop.

        The outcome is then available from :meth:`result` without further requests.
        """
        if self.done or self.task is None:
            return
        task_id = self.task.task_id
        client = self._client
        deadline = None if timeout is None else client.clock() + timeout
        payload: asyncio.Task[dict[str, Any]] | None = None
        polls = 0
        ask_after_poll = -1
        last_poll = client.clock()
        fresh: Task | None = self.task
        finished = False
        client.watch(task_id, self)
        try:
            while True:
                if fresh is not None:
                    self.task = fresh
                    fresh = None
                    key = (
                        status_name(self.task.status),
                        self.task.last_updated_at,
                        self.task.status_message,
                    )
                    if key not in self._seen:
                        self._seen.add(key)
                        yield self.task
                status = status_name(self.task.status)
                if status == "cancelled":
                    finished = True
                    self._error = TaskCancelled(task_id, self.task.status_message)
                    break
                if payload is not None and payload.done() and _dropped(payload):
                    # The tasks/result stream broke off: keep polling, then ask again.
                    payload = None
                    ask_after_poll = polls
                if (
                    payload is None
                    and status in ("input_required", "completed", "failed")
                    and polls > ask_after_poll
                ):
                    payload = asyncio.ensure_future(client.get_task_payload(task_id))
                if payload is not None and (
                    payload.done() or status in TERMINAL_STATUSES
                ):
                    finished = True
                    await self._settle(task_id, payload)
                    break
                wake_at = last_poll + client.poll_interval_of(self.task)
                now = client.clock()
                if deadline is not None and now >= deadline:
                    raise WaitTimeout(task_id)
                if now < wake_at:
                    until = wake_at if deadline is None else min(wake_at, deadline)
                    await nap(client.sleep, until - now, self._wake, payload)
                    self._wake.clear()
                    if self._pending_notification is not None:
                        fresh, self._pending_notification = (
                            self._pending_notification,
                            None,
                        )
                        continue
                    if client.clock() < wake_at:
                        continue
                last_poll = client.clock()
                polls += 1
                try:
                    fresh = await client.get_task(task_id)
                except TaskNotFound as error:
                    finished = True
                    self._error = error
                    break
        except asyncio.CancelledError:
            if client.cancel_on_abort and client.can_cancel():
                await asyncio.shield(self._cancel_quietly(task_id))
                finished = True
            raise
        finally:
            client.unwatch(task_id, self)
            if payload is not None and not payload.done():
                payload.cancel()
                await asyncio.gather(payload, return_exceptions=True)
            if finished:
                await client.store.delete(task_id)
                client.forget_progress(self._progress_token)

    async def _cancel_quietly(self, task_id: str) -> None:
        """Best-effort ``tasks/cancel`` while a wait is being aborted; keeps the task it returns."""
        try:
            self.task = await self._client.cancel_task(task_id)
        except Exception:
            return

    async def _settle(
        self, task_id: str, payload: asyncio.Task[dict[str, Any]]
    ) -> None:
        """Turn the ``tasks/result`` outcome into the handle's result or error."""
        try:
            raw = await payload
        except TaskNotFound as error:
            self._error = error
            return
        except JsonRpcError as error:
            self._error = TaskFailed(task_id, error.code, error.message, error.data)
            return
        if "content" in raw:
            self._result = CallToolResult.model_validate(raw)
            return
        # No tool result and no JSON-RPC error: a failed task whose work raised (mcp 1.30).
        task = (
            self.task
            if self.task is not None and status_name(self.task.status) == "failed"
            else None
        )
        if task is None:
            task = await self._client.get_task(task_id)
            self.task = task
        if status_name(task.status) != "failed":
            raise InvalidResponse(f"tasks/result for {task_id} is not a CallToolResult")
        self._error = TaskFailed(
            task_id, -32603, task.status_message or "the task failed", raw
        )

    async def cancel(self) -> Task:
        """Send ``tasks/cancel`` for this task and return the task the server reports."""
        if self.task is None:
            raise TasksClientError(
                "the call was answered without a task; there is nothing to cancel"
            )
        cancelled = await self._client.cancel_task(self.task.task_id)
        self.task = cancelled
        return cancelled


class TasksClient:
    """Client for the MCP Tasks of revision 2025-11-25 over any :class:`Transport`.

    Use it as an async context manager (``initialize`` runs on entry). Keyword options:

    * ``store``: where task IDs are kept while their tasks run (default: SQLite file,
      see :class:`SqliteTaskIdStore`).
    * ``default_poll_interval``: seconds between ``tasks/get`` calls when the server gives
      no ``pollInterval`` (the server's value, when present, is always honoured).
    * ``prefer_tasks``: whether tools with ``taskSupport: "optional"`` run as tasks when a
      call does not say.
    * ``retry_with_task``: retry a plain call as a task when the server answers that a task
      is required (``-32601`` / ``-32600``) instead of raising
      :class:`TaskAugmentationRequired`.
    * ``cancel_on_abort``: send ``tasks/cancel`` when a waiting coroutine is cancelled.
    * ``elicitation_handler``, ``sampling_handler``, ``roots_handler``: answer the
      server's requests (also those tied to a task); each one that is set is declared in
      the client capabilities.
    * ``clock`` and ``sleep``: monotonic time source and sleep function (tests inject fakes).
    """

    def __init__(
        self,
        transport: Transport,
        *,
        store: TaskIdStore | None = None,
        client_info: Mapping[str, Any] | None = None,
        default_poll_interval: float = 1.0,
        prefer_tasks: bool = True,
        retry_with_task: bool = False,
        cancel_on_abort: bool = False,
        elicitation_handler: InputHandler | None = None,
        sampling_handler: InputHandler | None = None,
        roots_handler: InputHandler | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """Configure the client; nothing is sent until :meth:`connect` (or ``async with``)."""
        self.transport = transport
        self.store: TaskIdStore = store if store is not None else SqliteTaskIdStore()
        self.client_info = dict(
            client_info or {"name": PACKAGE_NAME, "version": "1.0.0"}
        )
        self.default_poll_interval = default_poll_interval
        self.prefer_tasks = prefer_tasks
        self.retry_with_task = retry_with_task
        self.cancel_on_abort = cancel_on_abort
        self.clock = clock
        self.sleep = sleep
        self.handlers: dict[str, InputHandler] = {}
        if elicitation_handler is not None:
            self.handlers["elicitation/create"] = elicitation_handler
        if sampling_handler is not None:
            self.handlers["sampling/createMessage"] = sampling_handler
        if roots_handler is not None:
            self.handlers["roots/list"] = roots_handler
        self.server_capabilities: dict[str, Any] = {}
        self.initialize_result: dict[str, Any] = {}
        self.connected = False
        self._ids = itertools.count(1)
        self._tool_task_support: dict[str, str] = {}
        self._watchers: dict[str, set[TaskHandle]] = {}
        self._progress: dict[str, ProgressCallback] = {}
        transport.set_handlers(self._on_notification, self._on_request)

    async def __aenter__(self) -> TasksClient:
        """Connect (``initialize``, unless :meth:`rejoin` joined a session) and return the client."""
        if not self.connected:
            await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the transport."""
        await self.aclose()

    async def aclose(self) -> None:
        """Close the transport."""
        await self.transport.aclose()

    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities sent in ``initialize`` (one entry per registered handler)."""
        capabilities: dict[str, Any] = {}
        if "elicitation/create" in self.handlers:
            capabilities["elicitation"] = {"form": {}}
        if "sampling/createMessage" in self.handlers:
            capabilities["sampling"] = {}
        if "roots/list" in self.handlers:
            capabilities["roots"] = {}
        return capabilities

    async def connect(self) -> dict[str, Any]:
        """Run the ``initialize`` handshake and return the server's ``InitializeResult``."""
        self.initialize_result = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": self.client_capabilities(),
                "clientInfo": self.client_info,
            },
        )
        self.server_capabilities = (
            json_object(self.initialize_result.get("capabilities")) or {}
        )
        await self.transport.notify("notifications/initialized", {})
        self.connected = True
        return self.initialize_result

    async def rejoin(self, task_id: str) -> StoredTask | None:
        """Prepare to resume ``task_id`` after a restart, instead of :meth:`connect`.

        When the stored entry names the session the task was created in and the
        transport has sessions, that session is joined (a server may only serve the task
        there) and the stored server capabilities are used; otherwise a new session is
        initialized. Returns the stored entry, if any.
        """
        entry = await self.store.get(task_id)
        context = entry.context if entry is not None else {}
        session = context.get("session")
        capabilities = json_object(context.get("capabilities"))
        if (
            isinstance(self.transport, SessionTransport)
            and isinstance(session, str)
            and capabilities is not None
        ):
            self.transport.join_session(session, PROTOCOL_VERSION)
            self.server_capabilities = capabilities
            self.connected = True
        else:
            await self.connect()
        return entry

    def _tasks_capability(self, *path: str) -> bool:
        node = json_object(self.server_capabilities.get("tasks"))
        for name in path:
            if node is None:
                return False
            node = json_object(node.get(name))
        return node is not None

    def supports_task_tools(self) -> bool:
        """Whether the server declared ``tasks.requests.tools.call``."""
        return self._tasks_capability("requests", "tools", "call")

    def can_list(self) -> bool:
        """Whether the server declared ``tasks.list``."""
        return self._tasks_capability("list")

    def can_cancel(self) -> bool:
        """Whether the server declared ``tasks.cancel``."""
        return self._tasks_capability("cancel")

    def poll_interval_of(self, task: Task) -> float:
        """Seconds to wait before the next ``tasks/get``: the task's ``pollInterval`` or the default."""
        interval = task.poll_interval
        if interval is None or interval < 0:
            return self.default_poll_interval
        return interval / 1000.0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request with a fresh ID; error responses are raised as typed errors."""
        request_id: RequestId = next(self._ids)
        try:
            return await self.transport.request(request_id, method, params)
        except JsonRpcError as error:
            raise _map_error(method, error) from None

    async def list_tools(self) -> list[dict[str, Any]]:
        """Return every tool (following ``nextCursor``) and remember each one's ``taskSupport``."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = await self.request(
                "tools/list", {"cursor": cursor} if cursor is not None else {}
            )
            listed = page.get("tools")
            for entry in (
                cast("list[object]", listed) if isinstance(listed, list) else []
            ):
                tool = json_object(entry)
                if tool is not None:
                    tools.append(tool)
                    support = (json_object(tool.get("execution")) or {}).get(
                        "taskSupport"
                    )
                    self._tool_task_support[str(tool.get("name"))] = (
                        support if isinstance(support, str) else "forbidden"
                    )
            next_cursor = page.get("nextCursor")
            if not isinstance(next_cursor, str):
                return tools
            cursor = next_cursor

    async def task_support(self, name: str) -> str:
        """The tool's ``execution.taskSupport`` (``"forbidden"`` when absent or unknown)."""
        if name not in self._tool_task_support:
            await self.list_tools()
        return self._tool_task_support.get(name, "forbidden")

    async def _use_task(self, name: str, task: bool | None) -> bool:
        """Decide whether a call of tool ``name`` is task-augmented; raise when ``task`` cannot be honoured."""
        if not self.supports_task_tools():
            if task:
                raise CapabilityNotDeclared(
                    "the server did not declare tasks.requests.tools.call"
                )
            return False
        support = await self.task_support(name)
        if support == "required":
            if task is False:
                raise TaskRequired(f"tool {name!r} must run as a task")
            return True
        if support == "optional":
            return self.prefer_tasks if task is None else task
        if task:
            raise CapabilityNotDeclared(f"tool {name!r} does not support tasks")
        return False

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        task: bool | None = None,
        ttl: int | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> TaskHandle:
        """Send ``tools/call`` and return a handle, without waiting for a task to finish.

        ``task`` forces or forbids a task (default: as the tool and ``prefer_tasks`` say);
        ``ttl`` is the requested task lifetime in milliseconds; ``on_progress`` receives
        the call's progress notifications until the task is terminal.
        """
        augmented = await self._use_task(name, task)
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        token: str | None = None
        if on_progress is not None:
            token = uuid.uuid4().hex
            self._progress[token] = on_progress
            params["_meta"] = {"progressToken": token}
        try:
            if not augmented:
                try:
                    raw = await self.request("tools/call", params)
                except JsonRpcError as error:
                    if error.code not in (-32600, -32601):
                        raise
                    if not (self.retry_with_task and self.supports_task_tools()):
                        raise TaskAugmentationRequired(
                            error.code, error.message, error.data
                        ) from None
                    augmented = True
                else:
                    self.forget_progress(token)
                    return TaskHandle(
                        self, None, result=CallToolResult.model_validate(raw)
                    )
            params["task"] = {"ttl": int(ttl)} if ttl is not None else {}
            raw = await self.request("tools/call", params)
            task_object = json_object(raw.get("task"))
            if task_object is None:
                if "content" not in raw:
                    raise InvalidResponse(
                        "a task-augmented tools/call returned neither a task nor a tool result"
                    )
                # The server answered without creating a task (for example an argument error).
                self.forget_progress(token)
                return TaskHandle(self, None, result=CallToolResult.model_validate(raw))
            created = CreateTaskResult.model_validate(
                {**raw, "task": decode_task(task_object)}
            )
        except BaseException:
            self.forget_progress(token)
            raise
        context: dict[str, Any] = {"method": "tools/call", "name": name}
        if (
            isinstance(self.transport, SessionTransport)
            and self.transport.session_id is not None
        ):
            context["session"] = self.transport.session_id
            context["capabilities"] = self.server_capabilities
        await self.store.save(created.task.task_id, context)
        immediate = (created.meta or {}).get(MODEL_IMMEDIATE_RESPONSE)
        return TaskHandle(
            self,
            created.task,
            progress_token=token,
            model_immediate_response=immediate if isinstance(immediate, str) else None,
        )

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        task: bool | None = None,
        ttl: int | None = None,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call a tool and return its ``CallToolResult``, whether or not the server made a task.

        See :meth:`start_tool` for the options and :meth:`TaskHandle.result` for the errors.
        """
        handle = await self.start_tool(
            name, arguments, task=task, ttl=ttl, on_progress=on_progress
        )
        return await handle.result(timeout=timeout, on_status=on_status)

    def task(self, task_id: str) -> TaskHandle:
        """Return a handle for an existing task (fetched on first use) so it can be awaited."""
        return _ResumedHandle(self, task_id)

    async def resume(
        self,
        task_id: str,
        *,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> CallToolResult:
        """Continue waiting for a task created earlier (for example by a process that crashed)."""
        return await self.task(task_id).result(timeout=timeout, on_status=on_status)

    async def pending_tasks(self) -> list[StoredTask]:
        """The tasks in the store: created, and not yet seen terminal."""
        return await self.store.pending()

    async def get_task(self, task_id: str) -> Task:
        """``tasks/get``: the task's current state."""
        return decode_task(await self.request("tasks/get", {"taskId": task_id}))

    async def get_task_payload(self, task_id: str) -> dict[str, Any]:
        """``tasks/result``: block until the task is terminal and return the original request's result.

        The JSON-RPC error the original request ended with is raised as :class:`JsonRpcError`.
        """
        return await self.request("tasks/result", {"taskId": task_id})

    async def list_tasks(self) -> list[Task]:
        """``tasks/list``: every task, following ``nextCursor`` (requires ``tasks.list``)."""
        if not self.can_list():
            raise CapabilityNotDeclared("the server did not declare tasks.list")
        tasks: list[Task] = []
        cursor: str | None = None
        while True:
            raw = await self.request(
                "tasks/list", {"cursor": cursor} if cursor is not None else {}
            )
            listed = raw.get("tasks")
            entries = cast("list[object]", listed) if isinstance(listed, list) else []
            page = ListTasksResult.model_validate(
                {
                    **raw,
                    "tasks": [
                        decode_task(json_object(entry) or {}) for entry in entries
                    ],
                }
            )
            tasks.extend(page.tasks)
            if page.next_cursor is None:
                return tasks
            cursor = page.next_cursor

    async def cancel_task(self, task_id: str) -> Task:
        """``tasks/cancel`` (requires ``tasks.cancel``); the stored ID is dropped.

        Raises :class:`CannotCancelTask` when the task is unknown or already terminal.
        """
        if not self.can_cancel():
            raise CapabilityNotDeclared("the server did not declare tasks.cancel")
        cancelled = decode_task(await self.request("tasks/cancel", {"taskId": task_id}))
        await self.store.delete(task_id)
        return cancelled

    def watch(self, task_id: str, handle: TaskHandle) -> None:
        """Route status notifications for ``task_id`` to ``handle`` (while it waits)."""
        self._watchers.setdefault(task_id, set()).add(handle)

    def unwatch(self, task_id: str, handle: TaskHandle) -> None:
        """Stop routing notifications for ``task_id`` to ``handle``."""
        handles = self._watchers.get(task_id)
        if handles is not None:
            handles.discard(handle)
            if not handles:
                del self._watchers[task_id]

    def forget_progress(self, token: str | None) -> None:
        """Drop the progress callback registered under ``token``."""
        if token is not None:
            self._progress.pop(token, None)

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Route ``notifications/tasks/status`` and ``notifications/progress``."""
        if method == "notifications/tasks/status":
            try:
                task = decode_task(params)
            except ValueError:
                return
            for handle in list(self._watchers.get(task.task_id, ())):
                handle.push(task)
        elif method == "notifications/progress":
            callback = self._progress.get(str(params.get("progressToken")))
            progress = params.get("progress")
            if callback is not None and isinstance(progress, (int, float)):
                total = params.get("total")
                message = params.get("message")
                callback(
                    float(progress),
                    float(total) if isinstance(total, (int, float)) else None,
                    message if isinstance(message, str) else None,
                )

    async def _on_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Answer a server request with the registered handler, echoing the related-task ``_meta``."""
        if method == "ping":
            return {}
        handler = self.handlers.get(method)
        if handler is None:
            raise JsonRpcError(-32601, f"Method not found: {method}")
        related = json_object(
            (json_object(params.get("_meta")) or {}).get(RELATED_TASK)
        )
        task_id = related.get("taskId") if related is not None else None
        answer = await handler(
            InputContext(method, params, task_id if isinstance(task_id, str) else None)
        )
        if answer is None:
            raise JsonRpcError(-32603, f"no answer to {method}")
        result = answer_to_wire(answer)
        if related is not None:
            result["_meta"] = {
                **(json_object(result.get("_meta")) or {}),
                RELATED_TASK: related,
            }
        return result


class _ResumedHandle(TaskHandle):
    """A handle for a task created elsewhere: its first use fetches the task with ``tasks/get``."""

    def __init__(self, client: TasksClient, task_id: str) -> None:
        super().__init__(client, None)
        self._task_id = task_id

    @property
    def task_id(self) -> str | None:
        """The task ID this handle was created for."""
        return self._task_id

    async def snapshots(self, *, timeout: float | None = None) -> AsyncIterator[Task]:
        """Fetch the task when needed, then behave like :meth:`TaskHandle.snapshots`."""
        if self.task is None and not self.done:
            try:
                self.task = await self._client.get_task(self._task_id)
            except TaskNotFound:
                await self._client.store.delete(self._task_id)
                raise
        async for snapshot in super().snapshots(timeout=timeout):
            yield snapshot
