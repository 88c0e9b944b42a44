"""Revision-neutral client runtime: errors, input handling, the client base and the polling loop.

The polling loop (:class:`TaskHandle`) is written once and driven by the generated
``protocol`` tables (status classes, variants, method roles). What a revision does
differently lives in its adapter (``client_2025`` or ``client_ext``): a subclass of
:class:`ClientCore` that says how a call starts and how the state is decoded, and a
:class:`Wait` with the hooks the loop calls while a handle waits (how input is
delivered and how the outcome is obtained).
"""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Generic, TypeAlias, TypeVar, cast

from pydantic import BaseModel

from .protocol import TaskSnapshot, TaskState
from .revision import RevisionTables
from .task_ids import SqliteTaskIdStore, StoredTask, TaskIdStore
from .transport import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    JsonRpcError,
    RequestId,
    Transport,
    TransportError,
    json_object,
)

R = TypeVar("R")
"""What a finished call yields: the tool's result in the revision's representation."""
C = TypeVar("C", bound="ClientCore[Any]")

INPUT_CAPABILITIES = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
"""Input request method -> the client capability that declares its handler."""

ProgressCallback: TypeAlias = Callable[[float, float | None, str | None], object]
"""Called with ``(progress, total, message)`` for each ``notifications/progress`` of a call."""

StatusCallback: TypeAlias = Callable[["TaskSnapshot"], object]
"""Called with every new task snapshot (for a progress bar or a status line)."""


class TasksClientError(Exception):
    """Base class of the errors the client raises without a server error response."""


class InvalidResponse(TasksClientError):
    """The server answered with something this revision does not allow."""


class WaitTimeout(TasksClientError, TimeoutError):
    """The overall timeout of a wait elapsed before the task reached a terminal status.

    The task keeps running on the server and its ID stays in the task ID store, so the
    wait can be continued later with ``resume(task_id)``.
    """

    def __init__(self, task_id: str) -> None:
        """Record which task was being waited for."""
        super().__init__(f"timed out waiting for task {task_id}")
        self.task_id = task_id


class TaskCancelled(TasksClientError):
    """The task ended in status ``cancelled`` (or was cancelled by this client)."""

    def __init__(self, task_id: str, status_message: str | None = None) -> None:
        """Record the task ID and the server's status message, if any."""
        super().__init__(
            f"task {task_id} was cancelled"
            + (f": {status_message}" if status_message else "")
        )
        self.task_id = task_id
        self.status_message = status_message


class TaskEnded(TasksClientError):
    """The task ended in a terminal status that carries no result (a configured extra status)."""

    def __init__(self, task_id: str, status: str, status_message: str | None) -> None:
        """Record the task ID, its final status and message."""
        super().__init__(f"task {task_id} ended in status {status!r}")
        self.task_id, self.status, self.status_message = task_id, status, status_message


class TaskExpired(TasksClientError):
    """The task's ``createdAt`` plus its TTL passed before it reached a terminal status."""

    def __init__(self, task_id: str) -> None:
        """Record the expired task's ID."""
        super().__init__(f"task {task_id} outlived its ttl")
        self.task_id = task_id


class TaskFailed(JsonRpcError):
    """The task failed; ``code``, ``message`` and ``data`` are the JSON-RPC error of the work."""

    def __init__(self, task_id: str, code: int, message: str, data: Any = None) -> None:
        """Keep the error fields and the task ID."""
        super().__init__(code, message, data)
        self.task_id = task_id


class CapabilityNotDeclared(TasksClientError):
    """The server did not declare the capability an operation needs; nothing was sent."""


class TaskNotFound(JsonRpcError):
    """``-32602`` on a task method: the task ID is unknown, or the task expired and was purged."""


class MethodNotFound(JsonRpcError):
    """``-32601``: the server does not implement the method."""


@dataclass(frozen=True)
class InputContext:
    """One request from the server for input, handed to a registered input handler.

    Attributes:
        method: ``"elicitation/create"``, ``"sampling/createMessage"`` or ``"roots/list"``.
        params: The request's ``params`` exactly as received (wire names).
        task_id: The task the request belongs to, when it is tied to one.
        key: The ``inputRequests`` key the request was listed under, when it came that way.
    """

    method: str
    params: dict[str, Any]
    task_id: str | None = None
    key: str | None = None


InputHandler: TypeAlias = Callable[
    [InputContext], Awaitable[Mapping[str, Any] | BaseModel | None]
]
"""Answers one input request; returns the result object (``ElicitResult``, ...), or ``None``
to leave the request unanswered for now."""


def status_name(status: object) -> str:
    """Return a task status as its wire string (``"working"``, ``"completed"``, ...)."""
    return str(getattr(status, "value", status))


def answer_to_wire(value: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
    """A handler's answer, or a tool result, as a JSON object (a model's wire form)."""
    if isinstance(value, BaseModel):
        return to_wire(value)
    return dict(value)


def to_wire(model: BaseModel) -> dict[str, Any]:
    """A generated model's JSON-ready form (its ``to_wire()``)."""
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def decode_state(raw: Mapping[str, Any], tables: RevisionTables) -> BaseModel:
    """Decode a task state by its status (the revision's ``TASK_BY_STATUS``).

    An unknown status or a malformed task is an :class:`InvalidResponse`; fields the
    runtime does not know stay on the model.
    """
    status = raw.get(tables.task_fields["status"])
    kind = tables.task_by_status.get(status) if isinstance(status, str) else None
    if kind is None:
        raise InvalidResponse(f"unknown task status {status!r}")
    try:
        return kind.model_validate(dict(raw))
    except ValueError as error:
        raise InvalidResponse(f"malformed task: {error}") from None


def _int_field(task: TaskSnapshot, name: str) -> int | None:
    """An integer task field by attribute name (None when absent or not an integer)."""
    value = getattr(task, name, None)
    return value if isinstance(value, int) else None


def _parse_time(value: str) -> float | None:
    """An ISO 8601 timestamp as Unix time, or ``None`` when it does not parse."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.timestamp() if parsed.tzinfo is not None else None


async def nap(
    sleep: Callable[[float], Awaitable[None]],
    seconds: float,
    wake: asyncio.Event,
    also: asyncio.Future[Any] | None = None,
) -> None:
    """Sleep ``seconds`` (through the injected ``sleep``), returning early when ``wake`` is set
    or ``also`` finishes. Nothing is left running afterwards."""
    if wake.is_set() or (also is not None and also.done()):
        return
    sleeper = asyncio.ensure_future(sleep(max(seconds, 0.0)))
    waiter = asyncio.ensure_future(wake.wait())
    waits: set[asyncio.Future[Any]] = {sleeper, waiter}
    if also is not None:
        waits.add(also)
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        sleeper.cancel()
        waiter.cancel()
        await asyncio.gather(sleeper, waiter, return_exceptions=True)


class Wait(Generic[R]):
    """The revision's part of one wait on a task: the hooks :class:`TaskHandle` calls.

    ``settle`` sees every snapshot: it answers input and records the outcome on the
    handle (``finish``/``fail``) when there is one. ``side`` is a request running beside
    the polling (``tasks/result``, ``subscriptions/listen``) whose end wakes the loop.
    """

    side: asyncio.Future[Any] | None = None

    def __init__(self, handle: TaskHandle[R]) -> None:
        """Attach to ``handle``."""
        self.handle = handle

    def poll_first(self, task: TaskSnapshot) -> bool:
        """Whether the first ``tasks/get`` goes out at once rather than after an interval."""
        return False

    def pushed(self) -> bool:
        """Whether the server pushes this task's states, so polling can wait."""
        return False

    async def start(self) -> None:
        """Begin the wait (start a side request)."""

    async def settle(self, task: TaskSnapshot, status: str) -> None:
        """Act on a snapshot: answer input, or record the outcome when there is one."""

    async def close(self) -> None:
        """Stop the side request."""
        if self.side is not None:
            if not self.side.done():
                self.side.cancel()
            await asyncio.gather(self.side, return_exceptions=True)


class TaskHandle(Generic[R]):
    """One call: its task (when the server created one) and, eventually, its result.

    Iterate :meth:`snapshots` to follow the task, or await :meth:`result` to wait for the
    outcome; both drive the same polling loop in the calling coroutine, so cancelling that
    coroutine stops the wait (and sends ``tasks/cancel`` when the client was built with
    ``cancel_on_abort=True``). A handle from ``client.task(task_id)`` fetches the task on
    first use.
    """

    def __init__(
        self,
        client: ClientCore[R],
        task: TaskSnapshot | None,
        *,
        result: R | None = None,
        task_id: str | None = None,
        context: Mapping[str, Any] | None = None,
        model_immediate_response: str | None = None,
        on_finish: Callable[[], object] | None = None,
    ) -> None:
        """Wrap a created task (or an immediate ``result``); use the client's methods to get one."""
        self._client = client
        self.task: TaskSnapshot | None = task
        """The latest snapshot of the task (``None`` without a task or before the first fetch)."""
        self.context = dict(context or {})
        """What the client stored with the task ID (method, tool name, session)."""
        self.model_immediate_response = model_immediate_response
        """Text for the model while the task runs, when the server sent some."""
        self._task_id = task.task_id if task is not None else task_id
        self._result = result
        self._error: BaseException | None = None
        self._on_finish = on_finish
        self._wake = asyncio.Event()
        self._pending: TaskSnapshot | None = None
        self._cancelled_here = False
        self._seen: set[tuple[str, str, str | None]] = set()
        self.answered: set[str] = set()
        self.push_acknowledged = False
        self.polls = 0
        """How many ``tasks/get`` the running wait has sent."""

    @property
    def task_id(self) -> str | None:
        """The task ID, or ``None`` when the server answered the call without a task."""
        return self._task_id

    @property
    def done(self) -> bool:
        """Whether the outcome is known."""
        return self._result is not None or self._error is not None

    @property
    def answered_keys(self) -> frozenset[str]:
        """The ``inputRequests`` keys already answered."""
        return frozenset(self.answered)

    def finish(self, result: R) -> None:
        """Record the call's result (used by the revision's :class:`Wait`)."""
        self._result = result

    def fail(self, error: BaseException) -> None:
        """Record the error the wait ends with (used by the revision's :class:`Wait`)."""
        self._error = error

    def wake(self) -> None:
        """Wake a running wait so that it looks at the task again."""
        self._wake.set()

    def push(self, task: TaskSnapshot) -> None:
        """Deliver a snapshot that arrived by notification; a running wait picks it up at once."""
        self._pending = task
        self._wake.set()

    async def result(
        self, *, timeout: float | None = None, on_status: StatusCallback | None = None
    ) -> R:
        """Wait for the tool's result.

        Raises :class:`TaskFailed` (with the JSON-RPC error of the work),
        :class:`TaskCancelled`, :class:`TaskNotFound`, :class:`TaskExpired`,
        :class:`WaitTimeout`, or :class:`InvalidResponse`.
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
        client, task_id = self._client, self._task_id
        if self.done or task_id is None:
            return
        if self.task is None:
            try:
                self.task = await client.get_task(task_id)
            except TaskNotFound:
                await client.store.delete(task_id)
                raise
        deadline = None if timeout is None else client.clock() + timeout
        wait = client.wait_for(self)
        fresh: TaskSnapshot | None = self.task
        poll_now = wait.poll_first(self.task)
        last_poll = retry_at = client.clock()
        failures = 0
        finished = False
        client.watch(task_id, self)
        try:
            await wait.start()
            while True:
                if fresh is not None:
                    self.task, fresh = fresh, None
                    key = (
                        status_name(self.task.status),
                        self.task.last_updated_at,
                        self.task.status_message,
                    )
                    if key not in self._seen:
                        self._seen.add(key)
                        yield self.task
                if self._cancelled_here:
                    self._error = TaskCancelled(task_id, "cancelled by this client")
                else:
                    await wait.settle(self.task, status_name(self.task.status))
                if not self.done and client.ttl_backstop and client.expired(self.task):
                    self._error = TaskExpired(task_id)
                if self.done:
                    finished = True
                    break
                now = client.clock()
                if deadline is not None and now >= deadline:
                    raise WaitTimeout(task_id)
                interval = client.poll_interval_of(self.task)
                pushed = wait.pushed()
                wake_at = max(last_poll + interval, retry_at)
                if not poll_now and (pushed or now < wake_at):
                    until = now + interval if pushed else wake_at
                    if deadline is not None:
                        until = min(until, deadline)
                    side = wait.side
                    live = side if side is not None and not side.done() else None
                    await nap(client.sleep, until - now, self._wake, live)
                    self._wake.clear()
                    if self._pending is not None:
                        fresh, self._pending = self._pending, None
                        continue
                    if pushed or client.clock() < wake_at:
                        continue
                poll_now = False
                last_poll = client.clock()
                self.polls += 1
                try:
                    fresh = await client.get_task(task_id)
                    failures = 0
                except TaskNotFound as error:
                    finished = True
                    self._error = error
                    break
                except TransportError:
                    # A transient failure: poll again after a growing pause, within the timeout.
                    failures += 1
                    if failures > client.transport_retries:
                        raise
                    retry_at = client.clock() + interval * 2 ** (failures - 1)
        except asyncio.CancelledError:
            if client.cancel_on_abort and client.can_cancel():
                await asyncio.shield(self._cancel_quietly(task_id))
                finished = True
            raise
        finally:
            client.unwatch(task_id, self)
            await wait.close()
            if finished:
                await client.store.delete(task_id)
                if self._on_finish is not None:
                    self._on_finish()

    async def _cancel_quietly(self, task_id: str) -> None:
        """Best-effort ``tasks/cancel`` while a wait is being aborted."""
        try:
            state = await self._client.cancel_task(task_id)
        except Exception:
            return
        if state is not None:
            self.task = state

    async def cancel(self) -> TaskState | None:
        """Send ``tasks/cancel``; return the task the server reports (when the revision has one).

        A running wait then ends with :class:`TaskCancelled`: at once when the server
        reports no state and the client polls no further (``poll_after_cancel=False``),
        otherwise when the server reports a terminal status (which need not be
        ``cancelled``).
        """
        if self._task_id is None:
            raise TasksClientError(
                "the call was answered without a task; there is nothing to cancel"
            )
        state = await self._client.cancel_task(self._task_id)
        if state is not None:
            self.task = state
            self.push(state)
        elif not self._client.poll_after_cancel:
            self._cancelled_here = True
            self._wake.set()
        return state


class ClientCore(Generic[R]):
    """What the Tasks clients of every revision share; the adapters subclass it as ``TasksClient``.

    Keyword options:

    * ``store``: where task IDs are kept while their tasks run (default: SQLite file,
      see :class:`SqliteTaskIdStore`).
    * ``client_info``: the client's ``Implementation`` (name and version).
    * ``default_poll_interval``: seconds between ``tasks/get`` calls when the server gives
      no poll interval (the server's value, when present, is always honoured).
    * ``cancel_on_abort``: send ``tasks/cancel`` when a waiting coroutine is cancelled.
    * ``poll_after_cancel``: after :meth:`TaskHandle.cancel`, keep polling until the task
      is terminal instead of ending the wait (and keep the stored ID until then).
    * ``ttl_backstop``: end a wait with :class:`TaskExpired` once ``createdAt`` plus the
      task's TTL passed (default: the revision's ``ttl_backstop_default``).
    * ``transport_retries``: how many failed polls in a row (connection errors) a wait
      retries, after pauses of 1, 2, 4, ... poll intervals, before it fails.
    * ``elicitation_handler``, ``sampling_handler``, ``roots_handler``: answer input
      requests; each one that is set is declared in the client capabilities.
    * ``clock``, ``sleep`` and ``wall_clock``: monotonic time, sleep and Unix time sources
      (tests inject fakes).

    Options that only one revision uses (a revision ignores the others):

    * ``prefer_tasks`` (2025-11-25): whether tools with ``taskSupport: "optional"`` run as
      tasks when a call does not say.
    * ``retry_with_task`` (2025-11-25): retry a plain call as a task when the server answers
      that a task is required, instead of raising ``TaskAugmentationRequired``.
    * ``declare_tasks`` (extension): declare the extension on every request (default).
      Without it the server must not create tasks, and a task result is rejected.
    * ``subscribe`` (extension): also ask for ``notifications/tasks`` through
      ``subscriptions/listen``; acknowledged tasks are then followed by push.
    * ``max_input_rounds`` (extension): how many ``input_required`` answers one
      ``tools/call`` may need.
    """

    tables: ClassVar[RevisionTables]
    """The revision's protocol tables (set by the revision's client class)."""

    ttl_backstop_default: ClassVar[bool] = False
    """Whether a wait ends at ``createdAt`` plus the TTL unless ``ttl_backstop`` says."""

    errors: ClassVar[Mapping[int, type[JsonRpcError]]] = {
        METHOD_NOT_FOUND: MethodNotFound
    }
    """Error code -> the typed error raised for it."""
    not_found: ClassVar[Mapping[str, type[JsonRpcError]]] = {
        "get": TaskNotFound,
        "result": TaskNotFound,
        "update": TaskNotFound,
        "cancel": TaskNotFound,
    }
    """Method role -> the typed error raised for ``-32602`` (unknown task) on it."""

    def __init__(
        self,
        transport: Transport,
        *,
        store: TaskIdStore | None = None,
        client_info: Mapping[str, Any] | None = None,
        default_poll_interval: float = 1.0,
        cancel_on_abort: bool = False,
        poll_after_cancel: bool = False,
        ttl_backstop: bool | None = None,
        transport_retries: int = 5,
        elicitation_handler: InputHandler | None = None,
        sampling_handler: InputHandler | None = None,
        roots_handler: InputHandler | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        wall_clock: Callable[[], float] = time.time,
        prefer_tasks: bool = True,
        retry_with_task: bool = False,
        declare_tasks: bool = True,
        subscribe: bool = False,
        max_input_rounds: int = 16,
    ) -> None:
        """Configure the client; nothing is sent yet."""
        self.transport = transport
        self.store: TaskIdStore = store if store is not None else SqliteTaskIdStore()
        self.client_info = dict(
            client_info or {"name": self.tables.package_name, "version": "1.0.0"}
        )
        self.default_poll_interval = default_poll_interval
        self.cancel_on_abort = cancel_on_abort
        self.poll_after_cancel = poll_after_cancel
        self.ttl_backstop = (
            self.ttl_backstop_default if ttl_backstop is None else ttl_backstop
        )
        self.prefer_tasks = prefer_tasks
        self.retry_with_task = retry_with_task
        self.declare_tasks = declare_tasks
        self.subscribe = subscribe
        self.max_input_rounds = max_input_rounds
        self.transport_retries = transport_retries
        self.clock, self.sleep, self.wall_clock = clock, sleep, wall_clock
        handlers = (elicitation_handler, sampling_handler, roots_handler)
        self.handlers: dict[str, InputHandler] = {
            method: handler
            for method, handler in zip(INPUT_CAPABILITIES, handlers)
            if handler is not None
        }
        self.tools: dict[str, dict[str, Any]] = {}
        """The tools seen in ``tools/list``, by name."""
        self._ids = itertools.count(1)
        self._watchers: dict[str, set[TaskHandle[R]]] = {}
        self._progress: dict[str, ProgressCallback] = {}
        transport.set_handlers(self._on_notification, self._on_request)
        self.setup()

    def setup(self) -> None:
        """Revision hook run at the end of ``__init__`` (state of its own, transport set-up)."""

    async def __aenter__(self: C) -> C:
        """Open the connection (:meth:`open`) and return the client."""
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the transport."""
        await self.aclose()

    async def aclose(self) -> None:
        """Close the transport."""
        await self.transport.aclose()

    # -- hooks of the revision --------------------------------------------------------

    async def open(self) -> None:
        """Start the connection (a handshake, when the revision has one)."""

    def client_capabilities(self) -> dict[str, Any]:
        """The client capabilities: one entry per registered input handler."""
        return {
            name: {}
            for method, name in INPUT_CAPABILITIES.items()
            if method in self.handlers
        }

    def wait_for(self, handle: TaskHandle[R]) -> Wait[R]:
        """The revision's hooks for one wait on ``handle``."""
        raise NotImplementedError

    def decode(self, raw: Mapping[str, Any]) -> TaskState:
        """Decode a ``tasks/get`` result (or a status notification)."""
        return cast(TaskState, decode_state(raw, self.tables))

    def poll_interval_ms(self, task: TaskSnapshot) -> int | None:
        """The task's poll interval in milliseconds (the revision's poll interval field)."""
        return _int_field(task, list(self.tables.task_fields)[6])

    def ttl_ms(self, task: TaskSnapshot) -> int | None:
        """The task's lifetime in milliseconds (``None``: unlimited)."""
        return _int_field(task, list(self.tables.task_fields)[5])

    def prepare(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The params as sent (the extension adds its per-request ``_meta``)."""
        return params

    def check(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        """Check a result before it is returned (raise :class:`InvalidResponse`)."""
        return result

    def can_cancel(self) -> bool:
        """Whether ``tasks/cancel`` may be sent."""
        return True

    def cancelled(self, result: dict[str, Any]) -> TaskState | None:
        """Read a ``tasks/cancel`` result: the task, when the revision's answer carries one."""
        raise NotImplementedError

    async def start_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> TaskHandle[R]:
        """Send ``tools/call`` and return a handle without waiting for a task to finish."""
        raise NotImplementedError

    async def adopt(self, result: Mapping[str, Any], name: str) -> TaskHandle[R]:
        """Follow a task that a ``tools/call`` sent by other code created (``result`` is
        that call's task result, wire form), for example the official SDK's client."""
        raise NotImplementedError

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Route status notifications to the waits and ``notifications/progress`` to callbacks."""
        if method == self.tables.roles.get("notify"):
            self.deliver(params)
        elif method == "notifications/progress":
            callback = self._progress.get(str(params.get("progressToken")))
            progress, total, message = (params.get(k) for k in _PROGRESS_KEYS)
            if callback is not None and isinstance(progress, (int, float)):
                callback(
                    float(progress),
                    float(total) if isinstance(total, (int, float)) else None,
                    message if isinstance(message, str) else None,
                )

    async def _on_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Answer a server-to-client request (refused unless the revision has them)."""
        raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method}")

    # -- shared machinery -------------------------------------------------------------

    def next_request_id(self) -> int:
        """A JSON-RPC ID not used before by this client."""
        return next(self._ids)

    def map_error(self, method: str, error: JsonRpcError) -> JsonRpcError:
        """Return the typed form of an error response to ``method``."""
        spec = self.tables.methods.get(method)
        kind = self.not_found.get(spec.role) if spec is not None else None
        if error.code != INVALID_PARAMS or kind is None:
            kind = self.errors.get(error.code)
        return kind(error.code, error.message, error.data) if kind else error

    async def request(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        request_id: RequestId | None = None,
    ) -> dict[str, Any]:
        """Send one request with a fresh ID; error responses are raised as typed errors."""
        try:
            result = await self.transport.request(
                request_id if request_id is not None else next(self._ids),
                method,
                self.prepare(method, dict(params)),
            )
        except JsonRpcError as error:
            raise self.map_error(method, error) from None
        return self.check(method, result)

    async def get_task(self, task_id: str) -> TaskState:
        """``tasks/get``: the task's current state (one class per status)."""
        params = self.tables.get_params(task_id=task_id)
        return self.decode(
            await self.request(self.tables.roles["get"], to_wire(params))
        )

    async def cancel_task(self, task_id: str) -> TaskState | None:
        """``tasks/cancel``: ask the server to stop the task (cooperative; the final status may differ).

        Returns the task the server reports, when the revision's answer carries one. The
        stored ID is dropped unless ``poll_after_cancel`` is set.
        """
        if not self.can_cancel():
            raise CapabilityNotDeclared("the server did not declare tasks.cancel")
        params = self.tables.cancel_params(task_id=task_id)
        result = await self.request(self.tables.roles["cancel"], to_wire(params))
        state = self.cancelled(result)
        if not self.poll_after_cancel:
            await self.store.delete(task_id)
        return state

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> R:
        """Call a tool and return its result, whether or not the server made a task.

        See :meth:`TaskHandle.result` for the errors.
        """
        handle = await self.start_tool(name, arguments)
        return await handle.result(timeout=timeout, on_status=on_status)

    def poll_interval_of(self, task: TaskSnapshot) -> float:
        """Seconds to wait before the next ``tasks/get``: the task's interval or the default."""
        interval = self.poll_interval_ms(task)
        if interval is None or interval < 0:
            return self.default_poll_interval
        return interval / 1000.0

    def expired(self, task: TaskSnapshot) -> bool:
        """Whether ``createdAt`` plus the task's TTL lies in the past."""
        ttl = self.ttl_ms(task)
        if ttl is None:
            return False
        created = _parse_time(task.created_at)
        return ttl < 0 or (
            created is not None and self.wall_clock() > created + ttl / 1000.0
        )

    async def created(
        self, task: TaskSnapshot, context: Mapping[str, Any], **options: Any
    ) -> TaskHandle[R]:
        """Store a new task's ID with ``context`` and return its handle."""
        await self.store.save(task.task_id, context)
        return TaskHandle(self, task, context=context, **options)

    def task(self, task_id: str) -> TaskHandle[R]:
        """Return a handle for an existing task (fetched on first use) so it can be awaited."""
        return TaskHandle(self, None, task_id=task_id)

    async def resume(
        self,
        task_id: str,
        *,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> R:
        """Continue waiting for a task created earlier (for example by a process that crashed)."""
        return await self.task(task_id).result(timeout=timeout, on_status=on_status)

    async def pending_tasks(self) -> list[StoredTask]:
        """The tasks in the store: created, and not yet seen terminal."""
        return await self.store.pending()

    async def answer_input(
        self, method: str, params: dict[str, Any], task_id: str | None, key: str | None
    ) -> dict[str, Any] | None:
        """Run the handler registered for one input request; ``None`` leaves it unanswered."""
        handler = self.handlers.get(method)
        if handler is None:
            return None
        answer = await handler(InputContext(method, params, task_id, key))
        return answer_to_wire(answer) if answer is not None else None

    def watch(self, task_id: str, handle: TaskHandle[R]) -> None:
        """Route status notifications for ``task_id`` to ``handle`` (while it waits)."""
        self._watchers.setdefault(task_id, set()).add(handle)

    def unwatch(self, task_id: str, handle: TaskHandle[R]) -> None:
        """Stop routing notifications for ``task_id`` to ``handle``."""
        handles = self._watchers.get(task_id)
        if handles is not None:
            handles.discard(handle)
            if not handles:
                del self._watchers[task_id]

    def track_progress(self, callback: ProgressCallback | None) -> str | None:
        """Register a progress callback; return the ``progressToken`` to send (``None``: none)."""
        if callback is None:
            return None
        token = uuid.uuid4().hex
        self._progress[token] = callback
        return token

    def forget_progress(self, token: str | None) -> None:
        """Drop the progress callback registered under ``token``."""
        if token is not None:
            self._progress.pop(token, None)

    async def list_tools(self) -> list[dict[str, Any]]:
        """``tools/list``: every tool, following ``nextCursor``; also kept in :attr:`tools`."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = await self.request(
                "tools/list", {"cursor": cursor} if cursor is not None else {}
            )
            listed = page.get("tools")
            entries = cast("list[object]", listed if isinstance(listed, list) else [])
            for tool in filter(None, map(json_object, entries)):
                tools.append(tool)
                self.tools[str(tool.get("name"))] = tool
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str):
                return tools

    def deliver(self, params: Mapping[str, Any]) -> None:
        """Hand a status notification's task to the handles waiting for it (malformed: dropped)."""
        try:
            task = self.decode(params)
        except InvalidResponse:
            return
        for handle in list(self._watchers.get(task.task_id, ())):
            handle.push(task)


_PROGRESS_KEYS = ("progress", "total", "message")

__all__: list[str] = [
    "CapabilityNotDeclared",
    "InputContext",
    "InputHandler",
    "InvalidResponse",
    "MethodNotFound",
    "ProgressCallback",
    "StatusCallback",
    "TaskCancelled",
    "TaskEnded",
    "TaskExpired",
    "TaskFailed",
    "TaskHandle",
    "TaskNotFound",
    "TaskSnapshot",
    "TasksClientError",
    "WaitTimeout",
    "status_name",
]
