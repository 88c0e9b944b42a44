"""Async client for the MCP Tasks extension ``io.modelcontextprotocol/tasks`` (core 2026-07-28).

Every request declares the extension in its per-request ``_meta``. A ``tools/call`` may be
answered at once, with an input request (answered and retried), or with a task; in the
last case the client polls ``tasks/get`` at the server's ``pollIntervalMs``, answers the
task's ``inputRequests`` through ``tasks/update`` (each key once) and returns the inlined
result, so the caller always gets the tool's result::

    async with TasksClient(HttpTransport("http://127.0.0.1:8000/mcp")) as client:
        result = await client.call_tool("slow_compute", {"seconds": 3})
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from datetime import datetime
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
from .models import (
    CancelledTask,
    CompletedTask,
    CreateTaskResult,
    ErrorCode,
    FailedTask,
    InputRequiredTask,
    McpModel,
    WorkingTask,
)
from .protocol import (
    ACTIVE_STATUSES,
    PACKAGE_NAME,
    TASK_BY_STATUS,
    TERMINAL_STATUSES,
    TaskSnapshot,
    TaskState,
)
from .task_ids import SqliteTaskIdStore, StoredTask, TaskIdStore
from .transport import HttpTransport, JsonRpcError, RequestId, Transport, json_object

__all__ = [
    "DetailedTaskState",
    "EXTENSION_ID",
    "HeaderMismatch",
    "InputContext",
    "InputHandler",
    "InvalidResponse",
    "MethodNotFound",
    "MissingRequiredClientCapability",
    "PROTOCOL_VERSION",
    "StatusCallback",
    "TERMINAL_STATUSES",
    "TaskCancelled",
    "TaskExpired",
    "TaskFailed",
    "TaskHandle",
    "TaskNotFound",
    "TaskSnapshot",
    "TasksClientError",
    "UnsupportedProtocolVersion",
    "WaitTimeout",
    "decode_detailed_task",
    "status_name",
]

PROTOCOL_VERSION = "2026-07-28"
"""The core protocol version declared on every request."""

EXTENSION_ID = "io.modelcontextprotocol/tasks"
"""The extension's identifier in ``clientCapabilities.extensions``."""

_META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
_META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

DetailedTaskState: TypeAlias = TaskState
"""A ``tasks/get`` result or ``notifications/tasks`` payload: one class per status."""


class TaskExpired(TasksClientError):
    """The task's ``createdAt + ttlMs`` passed before it reached a terminal status."""

    def __init__(self, task_id: str) -> None:
        """Record the expired task's ID."""
        super().__init__(f"task {task_id} outlived its ttlMs")
        self.task_id = task_id


class MissingRequiredClientCapability(JsonRpcError):
    """``-32021``: the request lacked a capability the server needs (see ``required_capabilities``)."""

    @property
    def required_capabilities(self) -> dict[str, Any]:
        """``error.data.requiredCapabilities`` (empty when the server sent none)."""
        return (
            json_object((json_object(self.data) or {}).get("requiredCapabilities"))
            or {}
        )


class HeaderMismatch(JsonRpcError):
    """``-32020``: an ``Mcp-*`` routing header was missing or did not match the body."""


class UnsupportedProtocolVersion(JsonRpcError):
    """``-32022``: the server does not speak this protocol version (see ``supported``)."""

    @property
    def supported(self) -> list[str]:
        """``error.data.supported``: the versions the server offers."""
        value = (json_object(self.data) or {}).get("supported")
        return (
            [str(item) for item in cast("list[object]", value)]
            if isinstance(value, list)
            else []
        )

    @property
    def requested(self) -> str | None:
        """``error.data.requested``: the version the server saw."""
        value = (json_object(self.data) or {}).get("requested")
        return value if isinstance(value, str) else None


_ERRORS: dict[int, type[JsonRpcError]] = {
    ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY: MissingRequiredClientCapability,
    ErrorCode.METHOD_NOT_FOUND: MethodNotFound,
    ErrorCode.HEADER_MISMATCH: HeaderMismatch,
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: UnsupportedProtocolVersion,
}


def _map_error(method: str, error: JsonRpcError) -> JsonRpcError:
    """Return the typed form of an error response to ``method``."""
    if error.code == ErrorCode.INVALID_PARAMS and method.startswith("tasks/"):
        return TaskNotFound(error.code, error.message, error.data)
    kind = _ERRORS.get(error.code)
    return kind(error.code, error.message, error.data) if kind is not None else error


def _result_type(result: Mapping[str, Any]) -> str:
    """The result's ``resultType``; a missing one means ``"complete"``."""
    value = result.get("resultType")
    return value if isinstance(value, str) else "complete"


def _parse_time(value: str) -> float | None:
    """An ISO 8601 timestamp as Unix time, or ``None`` when it does not parse."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.timestamp() if parsed.tzinfo is not None else None


def decode_detailed_task(raw: Mapping[str, Any]) -> DetailedTaskState:
    """Decode a ``tasks/get`` result or ``notifications/tasks`` params by its ``status``."""
    kind = TASK_BY_STATUS.get(str(raw.get("status")))
    if kind is None:
        raise InvalidResponse(f"unknown task status {raw.get('status')!r}")
    return kind.model_validate(dict(raw))


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
        task: TaskSnapshot | None,
        *,
        result: dict[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> None:
        """Wrap a created task (or an immediate ``result``); use the client's methods to get one."""
        self._client = client
        self.task: TaskSnapshot | None = task
        """The latest snapshot of the task (``None`` without a task)."""
        self.context = dict(context or {})
        self._result = result
        self._error: BaseException | None = None
        self._wake = asyncio.Event()
        self._pending_notification: TaskSnapshot | None = None
        self._cancelled_here = False
        self._answered: set[str] = set()
        self._seen: set[tuple[str, str, str | None]] = set()
        self.push_acknowledged = False

    @property
    def task_id(self) -> str | None:
        """The task ID, or ``None`` when the server answered the call without a task."""
        return self.task.task_id if self.task is not None else None

    @property
    def done(self) -> bool:
        """Whether the outcome is known."""
        return self._result is not None or self._error is not None

    @property
    def answered_keys(self) -> frozenset[str]:
        """The ``inputRequests`` keys already answered through ``tasks/update``."""
        return frozenset(self._answered)

    def push(self, task: TaskSnapshot) -> None:
        """Deliver a snapshot that arrived by notification; a running wait picks it up at once."""
        self._pending_notification = task
        self._wake.set()

    async def result(
        self, *, timeout: float | None = None, on_status: StatusCallback | None = None
    ) -> dict[str, Any]:
        """Wait for the tool's result (the ``CallToolResult`` object, ``isError`` included).

        Raises :class:`TaskFailed` (with the JSON-RPC error of the work),
        :class:`TaskCancelled`, :class:`TaskNotFound`, :class:`TaskExpired` or
        :class:`WaitTimeout`.
        """
        if not self.done:
            async for snapshot in self.snapshots(timeout=timeout):
                if on_status is not None:
                    on_status(snapshot)
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    async def snapshots(
        self, *, timeout: float | None = None
    ) -> AsyncIterator[TaskSnapshot]:
        """Yield every new snapshot of the task until it is terminal, then stop.

        The outcome is then available from :meth:`result` without further requests.
        """
        if self.done or self.task is None:
            return
        client = self._client
        task_id = self.task.task_id
        deadline = None if timeout is None else client.clock() + timeout
        fresh: TaskSnapshot | None = self.task
        poll_now = status_name(
            self.task.status
        ) not in ACTIVE_STATUSES or not isinstance(self.task, CreateTaskResult)
        last_poll = client.clock()
        finished = False
        listener: asyncio.Task[None] | None = None
        client.watch(task_id, self)
        try:
            if client.subscribe:
                listener = asyncio.ensure_future(self._listen(task_id))
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
                if self._cancelled_here:
                    finished = True
                    self._error = TaskCancelled(task_id, "cancelled by this client")
                    break
                if self._settle(task_id, self.task):
                    finished = True
                    break
                if isinstance(self.task, InputRequiredTask):
                    await self._answer_inputs(task_id, self.task)
                if client.ttl_backstop and self._expired(self.task):
                    finished = True
                    self._error = TaskExpired(task_id)
                    break
                now = client.clock()
                if deadline is not None and now >= deadline:
                    raise WaitTimeout(task_id)
                pushed = (
                    self.push_acknowledged
                    and listener is not None
                    and not listener.done()
                )
                wake_at = last_poll + client.poll_interval_of(self.task)
                if not poll_now and (pushed or now < wake_at):
                    until = (
                        wake_at
                        if not pushed
                        else now + client.poll_interval_of(self.task)
                    )
                    if deadline is not None:
                        until = min(until, deadline)
                    live = (
                        listener
                        if listener is not None and not listener.done()
                        else None
                    )
                    await nap(client.sleep, until - now, self._wake, live)
                    self._wake.clear()
                    if self._pending_notification is not None:
                        fresh, self._pending_notification = (
                            self._pending_notification,
                            None,
                        )
                        continue
                    if pushed or client.clock() < wake_at:
                        continue
                poll_now = False
                last_poll = client.clock()
                try:
                    fresh = await client.get_task(task_id)
                except TaskNotFound as error:
                    finished = True
                    self._error = error
                    break
        except asyncio.CancelledError:
            if client.cancel_on_abort:
                await asyncio.shield(self._cancel_quietly(task_id))
                finished = True
            raise
        finally:
            client.unwatch(task_id, self)
            if listener is not None and not listener.done():
                listener.cancel()
            if listener is not None:
                await asyncio.gather(listener, return_exceptions=True)
            if finished:
                await client.store.delete(task_id)

    async def _cancel_quietly(self, task_id: str) -> None:
        """Best-effort ``tasks/cancel`` while a wait is being aborted."""
        try:
            await self._client.cancel_task(task_id)
        except Exception:
            return

    async def _listen(self, task_id: str) -> None:
        """Hold a ``subscriptions/listen`` stream for ``task_id`` until it ends or fails."""
        client = self._client
        listen_id = f"listen-{client.next_request_id()}"
        client.subscriptions[listen_id] = self
        try:
            await client.request(
                "subscriptions/listen",
                {"notifications": {"taskIds": [task_id]}},
                request_id=listen_id,
            )
        except (JsonRpcError, TasksClientError):
            return
        finally:
            del client.subscriptions[listen_id]
            self.push_acknowledged = False
            self._wake.set()

    def _settle(self, task_id: str, task: TaskSnapshot) -> bool:
        """Record the outcome of a terminal snapshot; return whether there was one."""
        if isinstance(task, CompletedTask):
            self._result = dict(task.result)
        elif isinstance(task, FailedTask):
            self._error = TaskFailed(
                task_id, task.error.code, task.error.message, task.error.data
            )
        elif isinstance(task, CancelledTask):
            self._error = TaskCancelled(task_id, task.status_message)
        else:
            return False
        return True

    def _expired(self, task: TaskSnapshot) -> bool:
        """Whether ``createdAt + ttlMs`` lies in the past."""
        if task.ttl_ms is None:
            return False
        if task.ttl_ms < 0:
            return True
        created = _parse_time(task.created_at)
        return (
            created is not None
            and self._client.wall_clock() > created + task.ttl_ms / 1000.0
        )

    async def _answer_inputs(self, task_id: str, task: InputRequiredTask) -> None:
        """Answer the snapshot's not-yet-answered ``inputRequests`` with one ``tasks/update``."""
        requests = json_object(task.to_wire().get("inputRequests")) or {}
        responses: dict[str, dict[str, Any]] = {}
        for key, entry in requests.items():
            request = json_object(entry)
            if key in self._answered or request is None:
                continue
            answer = await self._client.answer_input(request, task_id, key)
            if answer is not None:
                responses[key] = answer
        if responses:
            await self._client.update_task(task_id, responses)
            self._answered.update(responses)

    async def cancel(self) -> None:
        """Send ``tasks/cancel``; a running wait then ends with :class:`TaskCancelled`.

        With ``poll_after_cancel=True`` on the client, the wait instead continues until
        the server reports a terminal status (which need not be ``cancelled``).
        """
        if self.task is None:
            raise TasksClientError(
                "the call was answered without a task; there is nothing to cancel"
            )
        await self._client.cancel_task(self.task.task_id)
        if not self._client.poll_after_cancel:
            self._cancelled_here = True
            self._wake.set()


class TasksClient:
    """Client for the ``io.modelcontextprotocol/tasks`` extension over any :class:`Transport`.

    The protocol is stateless, so ``async with`` only closes the transport at the end.
    Keyword options:

    * ``store``: where task IDs are kept while their tasks run (default: SQLite file,
      see :class:`SqliteTaskIdStore`).
    * ``default_poll_interval``: seconds between ``tasks/get`` calls when the server gives
      no ``pollIntervalMs`` (the server's value, when present, is always honoured).
    * ``declare_tasks``: declare the extension on every request (default). Without it the
      server must not create tasks, and a task result is rejected as invalid.
    * ``cancel_on_abort``: send ``tasks/cancel`` when a waiting coroutine is cancelled.
    * ``poll_after_cancel``: after :meth:`TaskHandle.cancel`, keep polling until the task
      is terminal instead of ending the wait (and keep the stored ID until then).
    * ``subscribe``: also ask for ``notifications/tasks`` through ``subscriptions/listen``;
      acknowledged tasks are then followed by push, the others keep being polled.
    * ``ttl_backstop``: end a wait with :class:`TaskExpired` once ``createdAt + ttlMs`` passed.
    * ``elicitation_handler``, ``sampling_handler``, ``roots_handler``: answer input
      requests (task ``inputRequests`` and ``input_required`` results); each one that is
      set is declared in the per-request client capabilities.
    * ``clock``, ``sleep`` and ``wall_clock``: monotonic time, sleep and Unix time sources
      (tests inject fakes).
    """

    def __init__(
        self,
        transport: Transport,
        *,
        store: TaskIdStore | None = None,
        client_info: Mapping[str, Any] | None = None,
        default_poll_interval: float = 1.0,
        declare_tasks: bool = True,
        cancel_on_abort: bool = False,
        poll_after_cancel: bool = False,
        subscribe: bool = False,
        ttl_backstop: bool = True,
        max_input_rounds: int = 16,
        elicitation_handler: InputHandler | None = None,
        sampling_handler: InputHandler | None = None,
        roots_handler: InputHandler | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        """Configure the client; nothing is sent until the first call."""
        self.transport = transport
        self.store: TaskIdStore = store if store is not None else SqliteTaskIdStore()
        self.client_info = dict(
            client_info or {"name": PACKAGE_NAME, "version": "1.0.0"}
        )
        self.default_poll_interval = default_poll_interval
        self.declare_tasks = declare_tasks
        self.cancel_on_abort = cancel_on_abort
        self.poll_after_cancel = poll_after_cancel
        self.subscribe = subscribe
        self.ttl_backstop = ttl_backstop
        self.max_input_rounds = max_input_rounds
        self.clock = clock
        self.sleep = sleep
        self.wall_clock = wall_clock
        self.handlers: dict[str, InputHandler] = {}
        if elicitation_handler is not None:
            self.handlers["elicitation/create"] = elicitation_handler
        if sampling_handler is not None:
            self.handlers["sampling/createMessage"] = sampling_handler
        if roots_handler is not None:
            self.handlers["roots/list"] = roots_handler
        self._ids = itertools.count(1)
        self._watchers: dict[str, set[TaskHandle]] = {}
        self.subscriptions: dict[RequestId, TaskHandle] = {}
        """Open ``subscriptions/listen`` streams by request ID (= subscription ID)."""
        transport.set_handlers(self._on_notification, self._on_request)
        if isinstance(transport, HttpTransport):
            transport.use_stateless(PROTOCOL_VERSION)

    async def __aenter__(self) -> TasksClient:
        """Return the client (the protocol has no handshake)."""
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the transport."""
        await self.aclose()

    async def aclose(self) -> None:
        """Close the transport."""
        await self.transport.aclose()

    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities declared on every request."""
        capabilities: dict[str, Any] = {}
        if "elicitation/create" in self.handlers:
            capabilities["elicitation"] = {}
        if "sampling/createMessage" in self.handlers:
            capabilities["sampling"] = {}
        if "roots/list" in self.handlers:
            capabilities["roots"] = {}
        if self.declare_tasks:
            capabilities["extensions"] = {EXTENSION_ID: {}}
        return capabilities

    def request_meta(self) -> dict[str, Any]:
        """The per-request ``_meta``: protocol version, client capabilities and client info."""
        return {
            _META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            _META_CLIENT_CAPABILITIES: self.client_capabilities(),
            _META_CLIENT_INFO: self.client_info,
        }

    def poll_interval_of(self, task: TaskSnapshot) -> float:
        """Seconds to wait before the next ``tasks/get``: the task's ``pollIntervalMs`` or the default."""
        interval = task.poll_interval_ms
        if interval is None or interval < 0:
            return self.default_poll_interval
        return interval / 1000.0

    async def request(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        request_id: RequestId | None = None,
    ) -> dict[str, Any]:
        """Send one request (with a fresh ID and the per-request ``_meta``); errors are raised typed.

        A ``resultType: "task"`` is accepted only on ``tools/call`` with the extension declared.
        """
        meta = {**dict(params.get("_meta") or {}), **self.request_meta()}
        try:
            result = await self.transport.request(
                request_id if request_id is not None else next(self._ids),
                method,
                {**params, "_meta": meta},
            )
        except JsonRpcError as error:
            raise _map_error(method, error) from None
        if _result_type(result) == "task" and (
            method != "tools/call" or not self.declare_tasks
        ):
            raise InvalidResponse(
                f"a task was returned for {method} without being allowed"
            )
        return result

    async def discover(self) -> dict[str, Any]:
        """``server/discover``: the server's versions and capabilities (its ``ttlMs`` is a cache hint)."""
        return await self.request("server/discover", {})

    @staticmethod
    def server_supports_tasks(discovered: Mapping[str, Any]) -> bool:
        """Whether a ``server/discover`` result advertises the extension."""
        extensions = json_object(
            (json_object(discovered.get("capabilities")) or {}).get("extensions")
        )
        return extensions is not None and EXTENSION_ID in extensions

    async def start_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> TaskHandle:
        """Send ``tools/call`` (answering input-required rounds) and return a handle without waiting for a task."""
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        for _ in range(self.max_input_rounds):
            result = await self.request("tools/call", params)
            kind = _result_type(result)
            if kind == "complete":
                return TaskHandle(self, None, result=result)
            if kind == "task":
                created = CreateTaskResult.model_validate(result)
                context = {"method": "tools/call", "name": name}
                await self.store.save(created.task_id, context)
                return TaskHandle(self, created, context=context)
            if kind != "input_required":
                raise InvalidResponse(f"unknown resultType {kind!r} for tools/call")
            params = await self._retry_params(params, result)
        raise InvalidResponse(
            f"tools/call still needs input after {self.max_input_rounds} rounds"
        )

    async def _retry_params(
        self, params: dict[str, Any], result: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The params of the retry after an ``input_required`` result: answers and request state."""
        requests = json_object(result.get("inputRequests")) or {}
        responses: dict[str, Any] = {}
        for key, entry in requests.items():
            request = json_object(entry)
            answer = (
                await self.answer_input(request, None, key)
                if request is not None
                else None
            )
            if answer is not None:
                responses[key] = answer
        retry = {
            name: value
            for name, value in params.items()
            if name not in ("inputResponses", "requestState")
        }
        if responses:
            retry["inputResponses"] = responses
        state = result.get("requestState")
        if isinstance(state, str):
            retry["requestState"] = state
        return retry

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> dict[str, Any]:
        """Call a tool and return its ``CallToolResult`` object, whether or not the server made a task.

        See :meth:`TaskHandle.result` for the errors.
        """
        handle = await self.start_tool(name, arguments)
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
    ) -> dict[str, Any]:
        """Continue waiting for a task created earlier (for example by a process that crashed)."""
        return await self.task(task_id).result(timeout=timeout, on_status=on_status)

    async def pending_tasks(self) -> list[StoredTask]:
        """The tasks in the store: created, and not yet seen terminal."""
        return await self.store.pending()

    async def get_task(self, task_id: str) -> DetailedTaskState:
        """``tasks/get``: the task's current state, one class per status."""
        result = await self.request("tasks/get", {"taskId": task_id})
        if _result_type(result) != "complete":
            raise InvalidResponse("tasks/get must answer with resultType 'complete'")
        return decode_detailed_task(result)

    async def update_task(
        self, task_id: str, input_responses: Mapping[str, Mapping[str, Any] | McpModel]
    ) -> None:
        """``tasks/update``: deliver answers to some or all outstanding ``inputRequests``."""
        responses = {
            key: answer_to_wire(value) for key, value in input_responses.items()
        }
        self._check_ack(
            await self.request(
                "tasks/update", {"taskId": task_id, "inputResponses": responses}
            )
        )

    async def cancel_task(self, task_id: str) -> None:
        """``tasks/cancel``: ask the server to stop the task (cooperative; the final status may differ).

        The stored ID is dropped unless ``poll_after_cancel`` is set.
        """
        self._check_ack(await self.request("tasks/cancel", {"taskId": task_id}))
        if not self.poll_after_cancel:
            await self.store.delete(task_id)

    @staticmethod
    def _check_ack(result: Mapping[str, Any]) -> None:
        if _result_type(result) != "complete":
            raise InvalidResponse("an acknowledgement must have resultType 'complete'")

    async def answer_input(
        self, request: dict[str, Any], task_id: str | None, key: str
    ) -> dict[str, Any] | None:
        """Run the handler registered for one input request; ``None`` leaves it unanswered."""
        method = str(request.get("method"))
        handler = self.handlers.get(method)
        if handler is None:
            return None
        params = json_object(request.get("params")) or {}
        answer = await handler(InputContext(method, params, task_id, key))
        return answer_to_wire(answer) if answer is not None else None

    def next_request_id(self) -> int:
        """A JSON-RPC ID not used before by this client."""
        return next(self._ids)

    def watch(self, task_id: str, handle: TaskHandle) -> None:
        """Route ``notifications/tasks`` for ``task_id`` to ``handle`` (while it waits)."""
        self._watchers.setdefault(task_id, set()).add(handle)

    def unwatch(self, task_id: str, handle: TaskHandle) -> None:
        """Stop routing notifications for ``task_id`` to ``handle``."""
        handles = self._watchers.get(task_id)
        if handles is not None:
            handles.discard(handle)
            if not handles:
                del self._watchers[task_id]

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Route ``notifications/subscriptions/acknowledged`` and ``notifications/tasks``."""
        subscription = (json_object(params.get("_meta")) or {}).get(
            _META_SUBSCRIPTION_ID
        )
        if method == "notifications/subscriptions/acknowledged":
            handle = (
                self.subscriptions.get(subscription)
                if isinstance(subscription, (str, int))
                else None
            )
            acknowledged = (json_object(params.get("notifications")) or {}).get(
                "taskIds"
            )
            if handle is not None and isinstance(acknowledged, list):
                handle.push_acknowledged = handle.task_id in cast(
                    "list[object]", acknowledged
                )
        elif method == "notifications/tasks":
            if subscription is not None and subscription not in self.subscriptions:
                return
            try:
                task = decode_detailed_task(params)
            except (ValueError, InvalidResponse):
                return
            for handle in list(self._watchers.get(task.task_id, ())):
                handle.push(task)

    async def _on_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The protocol has no server-to-client requests; refuse them."""
        raise JsonRpcError(-32601, f"Method not found: {method}")


class _ResumedHandle(TaskHandle):
    """A handle for a task created elsewhere: its first use fetches the task with ``tasks/get``."""

    def __init__(self, client: TasksClient, task_id: str) -> None:
        super().__init__(client, None)
        self._task_id = task_id

    @property
    def task_id(self) -> str | None:
        """The task ID this handle was created for."""
        return self._task_id

    async def snapshots(
        self, *, timeout: float | None = None
    ) -> AsyncIterator[TaskSnapshot]:
        """Fetch the task when needed, then behave like :meth:`TaskHandle.snapshots`."""
        if self.task is None and not self.done:
            try:
                self.task = await self._client.get_task(self._task_id)
            except TaskNotFound:
                await self._client.store.delete(self._task_id)
                raise
        async for snapshot in super().snapshots(timeout=timeout):
            yield snapshot
