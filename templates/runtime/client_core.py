"""Revision-neutral client runtime: errors, input handling, the client base and the
polling loop.

The polling loop (:class:`TaskHandle`) and the Tasks mechanisms (:class:`Wait`: the
outcome inline or through ``tasks/result``, input through ``tasks/update`` or on the
``tasks/result`` stream, push through ``subscriptions/listen``; ``tasks/list``; the
typed errors) are written once, each chosen by the generated ``protocol`` tables (method
roles, the fields of each status's class, ``_meta`` keys, the schema's error codes), so
a schema that gains a method or a field gets its mechanism on regeneration. So is a
``tools/call``: asking for a task where the schema's call params can (``params.task``,
the tool's ``taskSupport``, the server's capabilities by the profile's paths), else
reading the result's kind (``resultType``: a task, an answer, or input requests answered
and retried), and the per-request ``_meta`` where the schema has its keys. What is the
revision's own lives in its adapter (``client_2025`` or ``client_ext``), a subclass of
:class:`ClientCore`: the handshake (``initialize`` and its session, or
``server/discover``) and the tool result's Python type.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Generic, TypeAlias, TypeVar, cast, get_args

from pydantic import BaseModel

from .protocol import TaskSnapshot, TaskState
from .revision import INPUT_CAPABILITIES as INPUT_CAPABILITIES
from .revision import RevisionTables
from .task_ids import SqliteTaskIdStore, StoredTask, TaskIdStore
from .transport import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    HttpTransport,
    JsonRpcError,
    RequestId,
    Transport,
    TransportError,
    json_object,
)

R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)
"""What a finished call yields: the tool's result in the revision's representation."""
C = TypeVar("C", bound="ClientCore[Any]")

ProgressCallback: TypeAlias = Callable[[float, float | None, str | None], object]
"""Called with ``(progress, total, message)`` for each ``notifications/progress`` of
a call."""

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
    """The task ended in a terminal status that carries no result (a configured extra
    status)."""

    def __init__(self, task_id: str, status: str, status_message: str | None) -> None:
        """Record the task ID, its final status and message."""
        super().__init__(f"task {task_id} ended in status {status!r}")
        self.task_id, self.status, self.status_message = task_id, status, status_message


class TaskExpired(TasksClientError):
    """The task's ``createdAt`` plus its TTL passed before it reached a terminal
    status."""

    def __init__(self, task_id: str) -> None:
        """Record the expired task's ID."""
        super().__init__(f"task {task_id} outlived its ttl")
        self.task_id = task_id


class TaskFailed(JsonRpcError):
    """The task failed; ``code``, ``message`` and ``data`` are the JSON-RPC error of
    the work."""

    def __init__(self, task_id: str, code: int, message: str, data: Any = None) -> None:
        """Keep the error fields and the task ID."""
        super().__init__(code, message, data)
        self.task_id = task_id


class CapabilityNotDeclared(TasksClientError):
    """The server did not declare the capability an operation needs; nothing was
    sent."""


class TaskRequired(TasksClientError):
    """The tool declares ``taskSupport: "required"`` but the call asked for no task;
    nothing was sent."""


class TaskAugmentationRequired(JsonRpcError):
    """``-32601`` or ``-32600`` on a plain ``tools/call``: the server requires a task
    for it."""


class TaskNotFound(JsonRpcError):
    """``-32602`` on a task method: the task ID is unknown, or the task expired and
    was purged."""


class MethodNotFound(JsonRpcError):
    """``-32601``: the server does not implement the method."""


class MissingRequiredClientCapability(JsonRpcError):
    """``-32021``: the request lacked a capability the server needs (see
    ``required_capabilities``)."""

    @property
    def required_capabilities(self) -> dict[str, Any]:
        """``error.data.requiredCapabilities`` (empty when the server sent none)."""
        data = json_object(self.data) or {}
        return json_object(data.get("requiredCapabilities")) or {}


class HeaderMismatch(JsonRpcError):
    """``-32020``: an ``Mcp-*`` routing header was missing or did not match the body."""


class UnsupportedProtocolVersion(JsonRpcError):
    """``-32022``: the server does not speak this protocol version (see
    ``supported``)."""

    @property
    def supported(self) -> list[str]:
        """``error.data.supported``: the versions the server offers."""
        value = (json_object(self.data) or {}).get("supported")
        items = cast("list[object]", value) if isinstance(value, list) else []
        return [str(item) for item in items]

    @property
    def requested(self) -> str | None:
        """``error.data.requested``: the version the server saw."""
        value = (json_object(self.data) or {}).get("requested")
        return value if isinstance(value, str) else None


ERRORS_BY_NAME: Mapping[str, type[JsonRpcError]] = {
    "HEADER_MISMATCH": HeaderMismatch,
    "MISSING_REQUIRED_CLIENT_CAPABILITY": MissingRequiredClientCapability,
    "UNSUPPORTED_PROTOCOL_VERSION": UnsupportedProtocolVersion,
}
"""The typed error of each error-code meaning, by its member name in the schema's
``ErrorCode``: a revision raises the ones whose codes its schema lists."""


@dataclass(frozen=True)
class InputContext:
    """One request from the server for input, handed to a registered input handler.

    Attributes:
        method: ``"elicitation/create"``, ``"sampling/createMessage"`` or
            ``"roots/list"``.
        params: The request's ``params`` exactly as received (wire names).
        task_id: The task the request belongs to, when it is tied to one.
        key: The ``inputRequests`` key the request was listed under, when it came
            that way.
    """

    method: str
    params: dict[str, Any]
    task_id: str | None = None
    key: str | None = None


InputHandler: TypeAlias = Callable[
    [InputContext], Awaitable[Mapping[str, Any] | BaseModel | None]
]
"""Answers one input request; returns the result object (``ElicitResult``, ...), or
``None`` to leave the request unanswered for now."""


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
    return decode_as(kind, raw, tables)


def decode_as(kind: type[M], raw: Mapping[str, Any], tables: RevisionTables) -> M:
    """Decode a task shape as ``kind``; malformed is an :class:`InvalidResponse`.

    A task field that the schema requires but allows to be null is read as null when a
    server leaves it out (``mcp`` 1.30 for Python omits a null ``ttl``).
    """
    data = dict(raw)
    for name, info in kind.model_fields.items():
        wire = info.serialization_alias or name
        nullable = type(None) in get_args(info.annotation)
        if wire in tables.task_fields.values() and nullable and info.is_required():
            data.setdefault(wire, None)
    try:
        return kind.model_validate(data)
    except ValueError as error:
        raise InvalidResponse(f"malformed task: {error}") from None


def wire_value(model: BaseModel, wire: str) -> object:
    """The value of ``model``'s declared field whose wire name is ``wire`` (``None``
    when its class has no such field: an unknown field kept on the model does not
    count)."""
    for name, info in type(model).model_fields.items():
        if (info.serialization_alias or name) == wire:
            return getattr(model, name)
    return None


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
    *also: asyncio.Future[Any],
) -> None:
    """Sleep ``seconds`` (through the injected ``sleep``), returning early when
    ``wake`` is set or one of ``also`` finishes. Nothing is left running afterwards."""
    if wake.is_set() or any(f.done() for f in also):
        return
    sleeper = asyncio.ensure_future(sleep(max(seconds, 0.0)))
    waiter = asyncio.ensure_future(wake.wait())
    waits: set[asyncio.Future[Any]] = {sleeper, waiter, *also}
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        sleeper.cancel()
        waiter.cancel()
        await asyncio.gather(sleeper, waiter, return_exceptions=True)


def _older(task: TaskSnapshot, than: TaskSnapshot, tables: RevisionTables) -> bool:
    """Whether snapshot ``task`` is older than ``than`` (of the same task): ``than`` is
    terminal and ``task`` is not, or ``task`` was last updated earlier."""
    if status_name(than.status) in tables.terminal:
        return status_name(task.status) not in tables.terminal
    updated, latest = _parse_time(task.last_updated_at), _parse_time(
        than.last_updated_at
    )
    return updated is not None and latest is not None and updated < latest


def _dropped(request: asyncio.Future[Any]) -> bool:
    """Whether a finished request failed in the transport (rather than with an
    answer)."""
    return not request.cancelled() and isinstance(request.exception(), TransportError)


class Wait(Generic[R]):
    """One wait on a task, as the revision's tables have it: the hooks
    :class:`TaskHandle` calls.

    ``settle`` sees every snapshot, answers input and records the outcome on the handle
    (``finish``/``fail``) when there is one. Each mechanism is chosen by what the schema
    has, never by the revision's name:

    * the outcome is read from the snapshot when its status class carries ``result`` or
      ``error``; otherwise, when the schema has the ``result`` role, ``tasks/result`` is
      asked beside the polling once the task leaves the active statuses (again after the
      next poll when its stream broke off), and the server's requests for the task
      arrive on that stream (see :meth:`ClientCore.on_input_request`);
    * the ``inputRequests`` of a snapshot are answered through the ``update`` role (a
      schema with the ``result`` role and no ``update`` role sends them as requests on
      the ``tasks/result`` stream instead);
    * with ``subscribe`` and a schema that has the ``notify`` role and a subscription
      ``_meta`` key, a ``subscriptions/listen`` stream is held for the task, and the
      polling waits while the server acknowledged it.
    """

    def __init__(self, handle: TaskHandle[R], client: ClientCore[R]) -> None:
        """Attach to ``handle``."""
        self.handle, self.client, self.tables = handle, client, client.tables
        self.payload: asyncio.Future[Any] | None = None
        """The running ``tasks/result`` request (result role)."""
        self.listen: asyncio.Future[Any] | None = None
        """The running ``subscriptions/listen`` request (push)."""
        self.retry_after = -1

    def running(self) -> list[asyncio.Future[Any]]:
        """The side requests still running; the end of one wakes the loop."""
        return [
            f for f in (self.payload, self.listen) if f is not None and not f.done()
        ]

    def poll_first(self, task: TaskSnapshot) -> bool:
        """Whether the first ``tasks/get`` goes out at once rather than after an
        interval: when the snapshot is not its status's state class (the extension's
        flat ``CreateTaskResult``), it lacks the status's fields (input requests,
        outcome).
        """
        status = status_name(task.status)
        state = self.tables.task_by_status.get(status)
        return status not in self.tables.active and type(task) is not state

    def pushed(self) -> bool:
        """Whether the server pushes this task's states, so polling can wait."""
        live = self.listen is not None and not self.listen.done()
        return self.handle.push_acknowledged and live

    async def start(self) -> None:
        """Begin the wait (open the push stream when there is one)."""
        if self.client.subscribe and self.client.can_listen():
            self.listen = asyncio.ensure_future(self._listen())

    async def settle(self, task: TaskSnapshot, status: str) -> None:
        """Act on a snapshot: answer input, or record the outcome when there is one."""
        handle, tables = self.handle, self.tables
        result, error = wire_value(task, "result"), wire_value(task, "error")
        requests = wire_value(task, "inputRequests")
        if status == tables.cancelled:
            handle.fail(TaskCancelled(task.task_id, task.status_message))
        elif isinstance(result, Mapping):
            handle.finish(self.client.outcome(cast("Mapping[str, Any]", result)))
        elif isinstance(error, BaseModel):
            wire = to_wire(error)
            code = wire.get("code")
            code = code if isinstance(code, int) else INTERNAL_ERROR
            message = str(wire.get("message"))
            handle.fail(TaskFailed(task.task_id, code, message, wire.get("data")))
        elif (
            status in tables.input
            and isinstance(requests, Mapping)
            and (tables.has_role("update") or not tables.has_role("result"))
        ):
            # Without an update role, a result role brings input as server requests on
            # the tasks/result stream; without either, _answer fails the wait.
            await self._answer(task, cast("Mapping[str, Any]", requests))
        elif tables.has_role("result"):
            await self._payload(task, status)
        elif status in tables.terminal:
            handle.fail(TaskEnded(task.task_id, status, task.status_message))

    async def _answer(self, task: TaskSnapshot, requests: Mapping[str, Any]) -> None:
        """Answer the not-yet-answered ``inputRequests`` with one ``update`` request."""
        handle = self.handle
        pending = {k: v for k, v in requests.items() if k not in handle.answered}
        if pending and not self.tables.has_role("update"):
            message = (
                "asks for input, but the schema defines no tasks/update to send it"
            )
            handle.fail(TasksClientError(f"task {task.task_id} {message}"))
            return
        responses = await self.client.answer_requests(pending, task.task_id)
        if responses:
            await self.client.update_task(task.task_id, responses)
            handle.answered.update(responses)

    async def _payload(self, task: TaskSnapshot, status: str) -> None:
        """Ask ``tasks/result`` once the task is not active; read it once it is done."""
        handle, payload = self.handle, self.payload
        if payload is not None and payload.done() and _dropped(payload):
            self.payload, self.retry_after = None, handle.polls
        if (
            self.payload is None
            and status not in self.tables.active
            and handle.polls > self.retry_after
        ):
            request = self.client.get_task_payload(task.task_id)
            self.payload = asyncio.ensure_future(request)
        if self.payload is not None and (
            self.payload.done() or status in self.tables.terminal
        ):
            await self._outcome(task.task_id, self.payload)

    async def _outcome(self, task_id: str, payload: asyncio.Future[Any]) -> None:
        """Turn the ``tasks/result`` outcome into the handle's result or error."""
        handle = self.handle
        try:
            raw = await payload
        except TaskNotFound as error:
            handle.fail(error)
            return
        except JsonRpcError as error:
            handle.fail(TaskFailed(task_id, error.code, error.message, error.data))
            return
        try:
            handle.finish(self.client.outcome(raw))
            return
        except ValueError:
            pass
        # No tool result and no JSON-RPC error: a failed task whose work raised (mcp
        # 1.30).
        failed, task = self.tables.failed, handle.task
        if task is None or status_name(task.status) != failed:
            task = handle.task = await self.client.get_task(task_id)
        if status_name(task.status) != failed:
            raise InvalidResponse(f"tasks/result for {task_id} is not a tool result")
        message = task.status_message or "the task failed"
        handle.fail(TaskFailed(task_id, INTERNAL_ERROR, message, raw))

    async def _listen(self) -> None:
        """Hold a ``subscriptions/listen`` stream for the task until it ends or
        fails."""
        client, handle = self.client, self.handle
        listen_id = f"listen-{client.next_request_id()}"
        client.subscriptions[listen_id] = handle
        try:
            await client.request(
                "subscriptions/listen",
                {"notifications": {"taskIds": [handle.task_id]}},
                request_id=listen_id,
            )
            task = handle.task
            if task is not None and status_name(task.status) in self.tables.terminal:
                client.listens_end = True  # the server ended it after the task ended
        except (JsonRpcError, TasksClientError):
            return
        finally:
            del client.subscriptions[listen_id]
            handle.push_acknowledged = False
            handle.wake()

    async def close(self) -> None:
        """Stop the side requests.

        A subscription whose task ended is left to the server to end when it ends
        such streams (``ClientCore.drain_listen``), since stopping it here would cost
        its HTTP connection.
        """
        task, listen = self.handle.task, self.listen
        if (
            listen is not None
            and not listen.done()
            and task is not None
            and status_name(task.status) in self.tables.terminal
            and self.client.drain_listen(listen)
        ):
            self.listen = None
        for side in (self.payload, self.listen):
            if side is not None:
                if not side.done():
                    side.cancel()
                await asyncio.gather(side, return_exceptions=True)


class TaskHandle(Generic[R]):
    """One call: its task (when the server created one) and, eventually, its result.

    Iterate :meth:`snapshots` to follow the task, or await :meth:`result` to wait for
    the outcome; both drive the same polling loop in the calling coroutine, so
    cancelling that coroutine stops the wait (and sends ``tasks/cancel`` when the client
    was built with ``cancel_on_abort=True``). A handle from ``client.task(task_id)``
    fetches the task on first use.
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
        """Wrap a created task (or an immediate ``result``); use the client's methods
        to get one."""
        self._client = client
        self.task: TaskSnapshot | None = task
        """The latest snapshot of the task (``None`` without a task or before the
        first fetch)."""
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
        """Record the error the wait ends with (used by the revision's
        :class:`Wait`)."""
        self._error = error

    def wake(self) -> None:
        """Wake a running wait so that it looks at the task again."""
        self._wake.set()

    def push(self, task: TaskSnapshot) -> None:
        """Deliver a snapshot that arrived by notification; a running wait picks it
        up at once.

        A snapshot older than the one waiting to be picked up or the latest one seen
        (terminal, or an earlier ``lastUpdatedAt``) is dropped: when notifications
        arrive faster than the wait runs, only the newest is kept, and a stale one
        never hides the terminal state that came before it.
        """
        for newer in (self._pending, self.task):
            if newer is not None and _older(task, newer, self._client.tables):
                return
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
                    await nap(client.sleep, until - now, self._wake, *wait.running())
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
                    # A transient failure: poll again after a growing pause, within the
                    # timeout.
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
        """Send ``tasks/cancel``; return the task the server reports (when the revision
        has one).

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
    """What the Tasks clients of every revision share; the adapters subclass it as
    ``TasksClient``.

    Keyword options:

    * ``store``: where task IDs are kept while their tasks run (default: SQLite file,
      see :class:`SqliteTaskIdStore`).
    * ``client_info``: the client's ``Implementation`` (name and version).
    * ``default_poll_interval``: seconds between ``tasks/get`` calls when the server
      gives no poll interval (the server's value, when present, is always honoured).
    * ``cancel_on_abort``: send ``tasks/cancel`` when a waiting coroutine is cancelled.
    * ``poll_after_cancel``: after :meth:`TaskHandle.cancel`, keep polling until the
      task is terminal instead of ending the wait (and keep the stored ID until then).
    * ``ttl_backstop``: end a wait with :class:`TaskExpired` once ``createdAt`` plus the
      task's TTL passed (default: the revision's ``ttl_backstop_default``).
    * ``transport_retries``: how many failed polls in a row (connection errors) a wait
      retries, after pauses of 1, 2, 4, ... poll intervals, before it fails.
    * ``elicitation_handler``, ``sampling_handler``, ``roots_handler``: answer input
      requests; each one that is set is declared in the client capabilities.
    * ``clock``, ``sleep`` and ``wall_clock``: monotonic time, sleep and Unix time
      sources (tests inject fakes).

    Options that only some schemas use (the others ignore them):

    * ``prefer_tasks`` (a ``tools/call`` that asks for its task, as in 2025-11-25):
      whether tools with ``taskSupport: "optional"`` run as tasks when a call does not
      say.
    * ``retry_with_task`` (the same): retry a plain call as a task when the server
      answers that a task is required, instead of raising
      :class:`TaskAugmentationRequired`.
    * ``declare_tasks`` (a Tasks extension): declare the extension on every request
      (default). Without it the server must not create tasks, and a task result is
      rejected.
    * ``subscribe`` (a schema with the ``notify`` role and a subscription ``_meta``
      key): also ask for the task's notifications through ``subscriptions/listen``;
      acknowledged tasks are then followed by push.
    * ``max_input_rounds`` (a result kind field, as the extension's ``resultType``): how
      many ``input_required`` answers one ``tools/call`` may need.
    """

    tables: ClassVar[RevisionTables]
    """The revision's protocol tables (set by the revision's client class)."""

    ttl_backstop_default: ClassVar[bool] = False
    """Whether a wait ends at ``createdAt`` plus the TTL unless ``ttl_backstop``
    says."""

    errors: ClassVar[Mapping[int, type[JsonRpcError]]] = {
        METHOD_NOT_FOUND: MethodNotFound
    }
    """Error code -> the typed error raised for it (besides those of
    :data:`ERRORS_BY_NAME` whose codes the schema's ``ErrorCode`` lists)."""
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
            for method, handler in zip(INPUT_CAPABILITIES, handlers, strict=True)
            if handler is not None
        }
        self.tools: dict[str, dict[str, Any]] = {}
        """The tools seen in ``tools/list``, by name."""
        self.server_capabilities: dict[str, Any] = {}
        """The server's capabilities (from the handshake, where the revision has
        one)."""
        self._ids = itertools.count(1)
        self._watchers: dict[str, set[TaskHandle[R]]] = {}
        self._progress: dict[str, ProgressCallback] = {}
        self.subscriptions: dict[str | int, TaskHandle[R]] = {}
        """Open ``subscriptions/listen`` streams by request ID (= subscription ID)."""
        self.listens_end: bool | None = None
        """Whether the server ends a subscription's stream once its tasks ended (None:
        not known yet); see :meth:`drain_listen`."""
        self._draining: set[asyncio.Future[Any]] = set()
        codes = getattr(self.tables.models, "ErrorCode", ())
        self.error_types: dict[int, type[JsonRpcError]] = {
            **{
                int(c): ERRORS_BY_NAME[c.name]
                for c in codes
                if c.name in ERRORS_BY_NAME
            },
            **self.errors,
        }
        """Error code -> the typed error raised for it."""
        transport.set_handlers(self._on_notification, self._on_request)
        if self.stateless and isinstance(transport, HttpTransport):
            transport.use_stateless(self.tables.protocol_version)
        self.setup()

    @property
    def stateless(self) -> bool:
        """Whether every request carries the protocol version and the client
        capabilities in its own ``_meta`` (the schema's ``_meta`` keys have them)
        instead of a session.
        """
        keys = self.tables.meta_keys
        return "PROTOCOL_VERSION" in keys and "CLIENT_CAPABILITIES" in keys

    def setup(self) -> None:
        """Revision hook run at the end of ``__init__`` (state of its own, transport
        set-up)."""

    async def __aenter__(self: C) -> C:
        """Open the connection (:meth:`open`) and return the client."""
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the transport."""
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the subscriptions left to end (``drain_listen``), then close the
        transport."""
        for listen in list(self._draining):
            listen.cancel()
        await asyncio.gather(*self._draining, return_exceptions=True)
        await self.transport.aclose()

    def drain_listen(self, listen: asyncio.Future[Any]) -> bool:
        """Leave a finished wait's ``subscriptions/listen`` request running for the
        server to end (a server may end the stream once its tasks are terminal; the
        connection then serves the next requests, where stopping it here closes it).

        Returns False, and the caller stops it, while the server is not known to end
        such streams and another one is being drained, or once one was not ended
        within ``LISTEN_DRAIN_S`` (that one is then stopped).
        """
        if self.listens_end is False or (self.listens_end is None and self._draining):
            return False
        self._draining.add(listen)
        timer = asyncio.get_running_loop().call_later(
            LISTEN_DRAIN_S, self._listen_not_ended, listen
        )

        def drained(_: asyncio.Future[Any]) -> None:
            timer.cancel()
            self._draining.discard(listen)
            if not listen.cancelled():
                listen.exception()  # retrieved: a stream cut by the transport's close

        listen.add_done_callback(drained)
        return True

    def _listen_not_ended(self, listen: asyncio.Future[Any]) -> None:
        """A drained subscription the server did not end in time: stop it and stop
        draining the others."""
        self.listens_end = False
        listen.cancel()

    # -- hooks of the revision --------------------------------------------------------

    async def open(self) -> None:
        """Start the connection (a handshake, when the revision has one)."""

    def client_capabilities(self) -> dict[str, Any]:
        """The client capabilities: one entry per registered input handler, and the
        Tasks extension (where Tasks are one) unless ``declare_tasks`` is off."""
        capabilities: dict[str, Any] = {
            name: {}
            for method, name in INPUT_CAPABILITIES.items()
            if method in self.handlers
        }
        if self.tables.extension_id and self.declare_tasks:
            capabilities["extensions"] = {self.tables.extension_id: {}}
        return capabilities

    def wait_for(self, handle: TaskHandle[R]) -> Wait[R]:
        """The hooks of one wait on ``handle``."""
        return Wait(handle, self)

    def outcome(self, raw: Mapping[str, Any]) -> R:
        """A tool result (wire form) as the call's result (``ValueError`` when it is
        none)."""
        raise NotImplementedError

    def decode(self, raw: Mapping[str, Any]) -> TaskState:
        """Decode a ``tasks/get`` result (or a status notification)."""
        if self.tables.result_kind_field and self.result_kind(raw) != "complete":
            kind = self.tables.result_kind_field
            raise InvalidResponse(f"a task state must have {kind} 'complete'")
        return cast(TaskState, decode_state(raw, self.tables))

    def result_kind(self, result: Mapping[str, Any]) -> str:
        """What a result is: ``complete``, ``task`` or ``input_required``, by the
        schema's result kind field (missing: ``complete``), else by the create
        result's shape."""
        field = self.tables.result_kind_field
        if field:
            value = result.get(field)
            return value if isinstance(value, str) else "complete"
        if "task" in self.tables.create_result.model_fields:
            return "task" if json_object(result.get("task")) is not None else "complete"
        return "task" if self.tables.task_fields["task_id"] in result else "complete"

    def poll_interval_ms(self, task: TaskSnapshot) -> int | None:
        """The task's poll interval in milliseconds (the revision's poll interval
        field)."""
        return _int_field(task, list(self.tables.task_fields)[6])

    def ttl_ms(self, task: TaskSnapshot) -> int | None:
        """The task's lifetime in milliseconds (``None``: unlimited)."""
        return _int_field(task, list(self.tables.task_fields)[5])

    def request_meta(self) -> dict[str, Any]:
        """The per-request ``_meta`` of a :attr:`stateless` client: protocol version,
        client capabilities and client info (empty otherwise)."""
        if not self.stateless:
            return {}
        keys = self.tables.meta_keys
        meta = {
            keys["PROTOCOL_VERSION"]: self.tables.protocol_version,
            keys["CLIENT_CAPABILITIES"]: self.client_capabilities(),
        }
        if "CLIENT_INFO" in keys:
            meta[keys["CLIENT_INFO"]] = self.client_info
        return meta

    def prepare(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The params as sent: with the per-request ``_meta`` of a :attr:`stateless`
        client."""
        if not self.stateless:
            return params
        meta = json_object(params.get("_meta")) or {}
        return {**params, "_meta": {**meta, **self.request_meta()}}

    def check(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        """Check a result's kind before it is returned (raise :class:`InvalidResponse`):
        a task only for ``tools/call`` with Tasks declared, and a cancel or update
        acknowledged as ``complete``."""
        if not self.tables.result_kind_field:
            return result
        kind = self.result_kind(result)
        declared = self.declare_tasks or not self.tables.extension_id
        if kind == "task" and (method != "tools/call" or not declared):
            raise InvalidResponse(f"a task was returned for {method} unasked")
        spec = self.tables.methods.get(method)
        if spec is not None and spec.role in _ACKNOWLEDGED and kind != "complete":
            field = self.tables.result_kind_field
            raise InvalidResponse(f"an acknowledgement must have {field} 'complete'")
        return result

    def declared(self, role: str) -> bool:
        """Whether the server declared ``role`` in its capabilities, where the profile
        gives the role a capability path (any other role needs no declaration)."""
        path = self.tables.server_capabilities.get(role)
        node: dict[str, Any] | None = self.server_capabilities
        for name in path or ():
            node = json_object(node.get(name)) if node is not None else None
        return node is not None

    def _require_declared(self, role: str) -> None:
        """Raise :class:`CapabilityNotDeclared` naming the capability path unless the
        server declared ``role`` (see :meth:`declared`); nothing is sent."""
        if not self.declared(role):
            path = ".".join(self.tables.server_capabilities[role])
            raise CapabilityNotDeclared(f"the server did not declare {path}")

    def supports_task_tools(self) -> bool:
        """Whether a ``tools/call`` may create a task (the ``create`` capability,
        such as 2025-11-25's ``tasks.requests.tools.call``, where the revision has
        one)."""
        return self.declared("create")

    def can_cancel(self) -> bool:
        """Whether ``tasks/cancel`` may be sent (declared, where the revision
        declares it)."""
        return self.declared("cancel")

    def can_list(self) -> bool:
        """Whether ``tasks/list`` may be sent (declared, where the revision declares
        it)."""
        return self.declared("list")

    def can_listen(self) -> bool:
        """Whether a wait may subscribe to the task's notifications (the schema has the
        ``notify`` role and a subscription ``_meta`` key)."""
        return (
            self.tables.has_role("notify")
            and "SUBSCRIPTION_ID" in self.tables.meta_keys
        )

    def cancelled(self, result: dict[str, Any]) -> TaskState | None:
        """Read a ``tasks/cancel`` result: the task, when the schema's result model
        carries the task's fields (else an acknowledgement: ``None``)."""
        carries = self.tables.result_carries_task("cancel")
        return self.decode(result) if carries else None

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        task: bool | None = None,
        ttl: int | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> TaskHandle[R]:
        """Send ``tools/call`` and return a handle, without waiting for a task to
        finish.

        Where the schema lets a call ask for a task (``params.task``), ``task`` forces
        or forbids one (default: as the tool's ``execution.taskSupport`` and
        ``prefer_tasks`` say) and ``ttl`` is the requested lifetime in milliseconds;
        where the server decides, both must be left unset. An ``input_required`` result
        is answered with the registered handlers and the call retried, at most
        ``max_input_rounds`` times. ``on_progress`` receives the call's progress
        notifications until the task is terminal.
        """
        asked = await self._task_request(name, task, ttl)
        token = self.track_progress(on_progress)
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        if token is not None:
            params["_meta"] = {"progressToken": token}
        try:
            for _ in range(self.max_input_rounds):
                result = await self._call(params, asked)
                kind = self.result_kind(result)
                if kind == "task":
                    forget = functools.partial(self.forget_progress, token)
                    return await self.adopt(result, name, on_finish=forget)
                if kind == "complete":
                    self.forget_progress(token)
                    return TaskHandle(self, None, result=self.outcome(result))
                if kind != "input_required":
                    raise InvalidResponse(
                        f"unknown result kind {kind!r} for tools/call"
                    )
                params = await self._retry_params(params, result)
            raise InvalidResponse(
                f"tools/call still needs input after {self.max_input_rounds} rounds"
            )
        except BaseException as error:
            self.forget_progress(token)
            if isinstance(error, ValueError):
                message = "tools/call returned neither a task nor a tool result"
                raise InvalidResponse(message) from None
            raise

    async def _task_request(
        self, name: str, task: bool | None, ttl: int | None
    ) -> dict[str, Any] | None:
        """The ``params.task`` to send with a call of tool ``name`` (``None``: a call
        without one); raise when ``task`` or ``ttl`` cannot be honoured."""
        if not self.tables.task_request_field:
            if task is not None or ttl is not None:
                raise TasksClientError(
                    "the server decides whether a call runs as a task:"
                    " task= and ttl= cannot be sent"
                )
            return None
        # "ttl": the TaskMetadata field the profile checks
        asked = {"ttl": ttl} if ttl is not None else {}
        if not self.supports_task_tools():
            if task:
                self._require_declared("create")
            return None
        support = await self.task_support(name)
        if support == "required":
            if task is False:
                raise TaskRequired(f"tool {name!r} must run as a task")
            return asked
        if support == "optional":
            return asked if (self.prefer_tasks if task is None else task) else None
        if task:
            raise CapabilityNotDeclared(f"tool {name!r} does not support tasks")
        return None

    async def task_support(self, name: str) -> str:
        """The tool's ``execution.taskSupport`` (``"forbidden"`` when absent or
        unknown)."""
        if name not in self.tools:
            await self.list_tools()
        execution = json_object(self.tools.get(name, {}).get("execution")) or {}
        support = execution.get("taskSupport")
        return support if isinstance(support, str) else "forbidden"

    async def _call(
        self, params: dict[str, Any], asked: dict[str, Any] | None
    ) -> dict[str, Any]:
        """Send ``tools/call``, asking for a task when ``asked`` is set. A call
        without one that the server refuses because the tool needs a task is retried
        as a task with ``retry_with_task``, else raised as
        :class:`TaskAugmentationRequired`."""
        field = self.tables.task_request_field
        if asked is None and field:
            try:
                return await self.request("tools/call", self._call_params(params))
            except JsonRpcError as error:
                if error.code not in _TASK_NEEDED:
                    raise
                if not (self.retry_with_task and self.supports_task_tools()):
                    raise TaskAugmentationRequired(
                        error.code, error.message, error.data
                    ) from None
                asked = {}
        if asked is not None:
            params = {**params, field: asked}
        return await self.request("tools/call", self._call_params(params))

    def _call_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """``tools/call`` params through the schema's ``CallToolRequestParams``,
        where it has one (a malformed value fails here, before anything is sent)."""
        model = getattr(self.tables.models, "CallToolRequestParams", None)
        if not isinstance(model, type) or not issubclass(model, BaseModel):
            return params
        return model.model_validate(params).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )

    async def _retry_params(
        self, params: dict[str, Any], result: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The params of the retry after an ``input_required`` result: the answers to
        its ``inputRequests`` and its ``requestState``."""
        retry = {k: v for k, v in params.items() if k not in _RETRY_KEYS}
        requests = json_object(result.get("inputRequests")) or {}
        responses = await self.answer_requests(requests)
        if responses:
            retry["inputResponses"] = responses
        state = result.get("requestState")
        if isinstance(state, str):
            retry["requestState"] = state
        return retry

    def call_context(self) -> dict[str, Any]:
        """What is stored with a new task's ID besides the method and the tool's
        name."""
        return {}

    async def adopt(
        self,
        result: Mapping[str, Any],
        name: str,
        *,
        on_finish: Callable[[], object] | None = None,
    ) -> TaskHandle[R]:
        """Follow the task a ``tools/call`` created (``result`` is that call's task
        result, wire form, as the schema's create result has it: the task under ``task``
        or its fields inline), also one that other code sent, such as the official SDK's
        client.
        """
        tables, data = self.tables, dict(result)
        nested = "task" in tables.create_result.model_fields
        if nested:
            inner = json_object(data.get("task")) or {}
            data["task"] = decode_as(tables.task_model, inner, tables)
        created = decode_as(tables.create_result, data, tables)
        task = cast(TaskSnapshot, getattr(created, "task") if nested else created)
        key = tables.meta_keys.get("MODEL_IMMEDIATE_RESPONSE")
        meta = json_object(wire_value(created, "_meta")) or {}
        immediate = meta.get(key) if key is not None else None
        context = {"method": "tools/call", "name": name, **self.call_context()}
        return await self.created(
            task,
            context,
            model_immediate_response=immediate if isinstance(immediate, str) else None,
            on_finish=on_finish,
        )

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Route status notifications to the waits, ``notifications/progress`` to
        callbacks and ``notifications/subscriptions/acknowledged`` to the subscribed
        wait; drop a notification of a subscription this client does not hold."""
        key = self.tables.meta_keys.get("SUBSCRIPTION_ID")
        meta = json_object(params.get("_meta")) or {}
        subscription = meta.get(key) if key is not None else None
        held = (
            self.subscriptions.get(subscription)
            if isinstance(subscription, (str, int))
            else None
        )
        if method == "notifications/subscriptions/acknowledged":
            listed = json_object(params.get("notifications")) or {}
            ids = listed.get("taskIds")
            if held is not None and isinstance(ids, list):
                held.push_acknowledged = held.task_id in cast("list[object]", ids)
        elif subscription is not None and held is None:
            return
        elif method == self.tables.roles.get("notify"):
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
        """Answer a server-to-client request: ``ping``, or an input request with its
        registered handler, echoing the related-task ``_meta`` when the schema has
        that key (how a ``tasks/result`` stream carries a task's input requests)."""
        if method == "ping":
            return {}
        if method not in self.handlers:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        key = self.tables.meta_keys.get("RELATED_TASK")
        meta = json_object(params.get("_meta")) or {}
        related = json_object(meta.get(key)) if key is not None else None
        task_id = related.get(self.tables.task_fields["task_id"]) if related else None
        answer = await self.answer_input(
            method, params, task_id if isinstance(task_id, str) else None, None
        )
        if answer is None:
            raise JsonRpcError(INTERNAL_ERROR, f"no answer to {method}")
        if key is not None and related is not None:
            result_meta = json_object(answer.get("_meta")) or {}
            answer["_meta"] = {**result_meta, key: related}
        return answer

    # -- shared machinery -------------------------------------------------------------

    def next_request_id(self) -> int:
        """A JSON-RPC ID not used before by this client."""
        return next(self._ids)

    def map_error(self, method: str, error: JsonRpcError) -> JsonRpcError:
        """Return the typed form of an error response to ``method``."""
        spec = self.tables.methods.get(method)
        kind = self.not_found.get(spec.role) if spec is not None else None
        if error.code != INVALID_PARAMS or kind is None:
            kind = self.error_types.get(error.code)
        return kind(error.code, error.message, error.data) if kind else error

    async def request(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        request_id: RequestId | None = None,
    ) -> dict[str, Any]:
        """Send one request with a fresh ID; error responses are raised as typed
        errors."""
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
        """``tasks/cancel``: ask the server to stop the task (cooperative; the final
        status may differ).

        Returns the task the server reports, when the revision's answer carries one. The
        stored ID is dropped unless ``poll_after_cancel`` is set.
        """
        self._require_declared("cancel")
        params = self.tables.cancel_params(task_id=task_id)
        result = await self.request(self.tables.roles["cancel"], to_wire(params))
        state = self.cancelled(result)
        if not self.poll_after_cancel:
            await self.store.delete(task_id)
        return state

    def _task_params(self, task_id: str) -> dict[str, Any]:
        return {self.tables.task_fields["task_id"]: task_id}

    async def get_task_payload(self, task_id: str) -> dict[str, Any]:
        """``tasks/result`` (the ``result`` role): block until the task is terminal and
        return the original request's result.

        The JSON-RPC error the original request ended with is raised as
        :class:`JsonRpcError`.
        """
        if not self.tables.has_role("result"):
            raise TasksClientError("this revision's schema defines no tasks/result")
        return await self.request(
            self.tables.roles["result"], self._task_params(task_id)
        )

    async def update_task(
        self, task_id: str, input_responses: Mapping[str, Mapping[str, Any] | BaseModel]
    ) -> None:
        """``tasks/update`` (the ``update`` role): deliver answers to some or all
        outstanding ``inputRequests``."""
        if not self.tables.has_role("update"):
            raise TasksClientError("this revision's schema defines no tasks/update")
        params = self._task_params(task_id)
        params["inputResponses"] = {
            k: answer_to_wire(v) for k, v in input_responses.items()
        }
        await self.request(self.tables.roles["update"], params)

    async def list_tasks(self) -> list[TaskState]:
        """``tasks/list`` (the ``list`` role): every task, following ``nextCursor``."""
        if not self.tables.has_role("list"):
            raise TasksClientError("this revision's schema defines no tasks/list")
        self._require_declared("list")
        tasks: list[TaskState] = []
        async for entry in self._paged(self.tables.roles["list"], "tasks"):
            raw = json_object(entry) or {}
            task = decode_as(self.tables.task_model, raw, self.tables)
            tasks.append(cast(TaskState, task))
        return tasks

    async def _paged(self, method: str, key: str) -> AsyncIterator[object]:
        """The entries under ``key`` of every page of a paginated ``method``, following
        ``nextCursor``."""
        cursor: str | None = None
        while True:
            page = await self.request(
                method, {"cursor": cursor} if cursor is not None else {}
            )
            listed = page.get(key)
            for entry in cast(
                "list[object]", listed if isinstance(listed, list) else []
            ):
                yield entry
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str):
                return

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
    ) -> R:
        """Call a tool and return its result, whether or not the server made a task.

        See :meth:`start_tool` for the options and :meth:`TaskHandle.result` for the
        errors.
        """
        handle = await self.start_tool(
            name, arguments, task=task, ttl=ttl, on_progress=on_progress
        )
        return await handle.result(timeout=timeout, on_status=on_status)

    def poll_interval_of(self, task: TaskSnapshot) -> float:
        """Seconds to wait before the next ``tasks/get``: the task's interval or the
        default."""
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
        """Return a handle for an existing task (fetched on first use) so it can be
        awaited."""
        return TaskHandle(self, None, task_id=task_id)

    async def resume(
        self,
        task_id: str,
        *,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> R:
        """Continue waiting for a task created earlier (for example by a process that
        crashed)."""
        return await self.task(task_id).result(timeout=timeout, on_status=on_status)

    async def pending_tasks(self) -> list[StoredTask]:
        """The tasks in the store: created, and not yet seen terminal."""
        return await self.store.pending()

    async def answer_input(
        self, method: str, params: dict[str, Any], task_id: str | None, key: str | None
    ) -> dict[str, Any] | None:
        """Run the handler registered for one input request; ``None`` leaves it
        unanswered."""
        handler = self.handlers.get(method)
        if handler is None:
            return None
        answer = await handler(InputContext(method, params, task_id, key))
        return answer_to_wire(answer) if answer is not None else None

    async def answer_requests(
        self, requests: Mapping[str, object], task_id: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """Answer an ``inputRequests`` map (key -> request, a model or its wire form)
        with the registered handlers: the answers by key, unanswered keys left out."""
        responses: dict[str, dict[str, Any]] = {}
        for key, request in requests.items():
            wire = to_wire(request) if isinstance(request, BaseModel) else request
            entry = json_object(wire) or {}
            params = json_object(entry.get("params")) or {}
            method = str(entry.get("method"))
            answer = await self.answer_input(method, params, task_id, key)
            if answer is not None:
                responses[key] = answer
        return responses

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
        """Register a progress callback; return the ``progressToken`` to send
        (``None``: none)."""
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
        """``tools/list``: every tool, following ``nextCursor``; also kept in
        :attr:`tools`."""
        tools: list[dict[str, Any]] = []
        async for entry in self._paged("tools/list", "tools"):
            tool = json_object(entry)
            if tool is not None:
                tools.append(tool)
                self.tools[str(tool.get("name"))] = tool
        return tools

    def deliver(self, params: Mapping[str, Any]) -> None:
        """Hand a status notification's task to the handles waiting for it
        (malformed: dropped)."""
        try:
            task = self.decode(params)
        except InvalidResponse:
            return
        for handle in list(self._watchers.get(task.task_id, ())):
            handle.push(task)


LISTEN_DRAIN_S = 2.0
"""How long a finished wait's subscription is left for the server to end
(``ClientCore.drain_listen``) before the client stops it."""

_PROGRESS_KEYS = ("progress", "total", "message")
_RETRY_KEYS = ("inputResponses", "requestState")
_ACKNOWLEDGED = ("update", "cancel")
_TASK_NEEDED = (INVALID_REQUEST, METHOD_NOT_FOUND)

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
    "TaskAugmentationRequired",
    "TaskRequired",
    "TaskSnapshot",
    "TasksClientError",
    "WaitTimeout",
    "status_name",
]
