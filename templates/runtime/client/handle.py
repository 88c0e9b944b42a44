"""One call and, when the server made one, its task: :class:`TaskHandle`, whose polling
loop follows the task to its outcome."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, cast

from typing_extensions import TypeVar, Unpack

from ..protocol import CancelTaskParams, SchemaNotification, TaskSnapshot, TaskState
from .codec import older, status_name
from .errors import (
    InputNotHandled,
    TaskCancelled,
    TaskExpired,
    TaskNotFound,
    TasksClientError,
    WaitTimeout,
)
from .tool_result import ToolResult
from .transport import TransportError
from .wait import nap

if TYPE_CHECKING:
    from .core import ClientCore

__all__ = ["StatusCallback", "TaskHandle"]

S = TypeVar("S", default=dict[str, Any] | None)
"""The type of the result's ``structured`` content: the call's ``result_type``, else
the JSON object as received (see :class:`ToolResult`)."""

StatusCallback: TypeAlias = Callable[["TaskSnapshot"], object]
"""Called with every new task snapshot (for a progress bar or a status line)."""


class TaskHandle(Generic[S]):
    """One call: its task (when the server created one) and, eventually, its result (a
    :class:`ToolResult` whose ``structured`` content is an ``S``).

    Iterate :meth:`snapshots` to follow the task, or await :meth:`result` to wait for
    the outcome; both drive the same polling loop in the calling coroutine, so
    cancelling that coroutine stops the wait (and sends ``tasks/cancel`` when the client
    was built with ``cancel_on_abort=True``). A handle from ``client.task(task_id)``
    fetches the task on first use.
    """

    def __init__(
        self,
        client: ClientCore[Any],
        task: TaskSnapshot | None,
        *,
        result: ToolResult[Any] | None = None,
        result_type: type[Any] | None = None,
        tool: str | None = None,
        task_id: str | None = None,
        context: Mapping[str, Any] | None = None,
        model_immediate_response: str | None = None,
        on_finish: Callable[[], object] | None = None,
    ) -> None:
        """Wrap a created task (or an immediate ``result``); use the client's methods
        to get one. ``result_type``: what the result's ``structuredContent`` is
        validated into (see :meth:`ToolResult.from_wire`); ``tool``: the tool's name
        (default: the ``name`` in ``context``)."""
        self._client = client
        self.task: TaskSnapshot | None = task
        """The latest snapshot of the task (``None`` without a task or before the
        first fetch)."""
        self.context = dict(context or {})
        """What the client stored with the task ID (method, tool name, session)."""
        name = tool if tool is not None else self.context.get("name")
        self.tool: str | None = name if isinstance(name, str) else None
        """The tool's name, where known (errors name it)."""
        self.model_immediate_response = model_immediate_response
        """Text for the model while the task runs, when the server sent some."""
        self._task_id = task.task_id if task is not None else task_id
        self._result = result
        self.result_type = result_type
        """What :meth:`result` validates the ``structuredContent`` into (``None``: it
        is kept as received)."""
        self._typed: ToolResult[S] | None = None
        self._error: BaseException | None = None
        self._on_finish = on_finish
        self._wake = asyncio.Event()
        self._pending: TaskSnapshot | None = None
        self._cancelled_here = False
        self._seen: set[tuple[str, str, str | None]] = set()
        self.answered: set[str] = set()
        self.push_acknowledged = False
        self.push_answered = False
        """Whether the server answered the running subscription (acknowledged the
        task or left it out)."""
        self.polls = 0
        """How many ``tasks/get`` the running wait has sent."""
        self.wants_notifications = False
        """Whether :meth:`notifications` is iterated (a wait then asks the server for
        the task's notifications where they come by subscription)."""
        self._ended = asyncio.Event()

    @property
    def client(self) -> ClientCore[Any]:
        """The client the handle sends through."""
        return self._client

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

    def finish(self, result: ToolResult[Any]) -> None:
        """Record the call's result (used by the revision's :class:`Wait`)."""
        self._result = result
        self._ended.set()

    def fail(self, error: BaseException) -> None:
        """Record the error the wait ends with (used by the revision's
        :class:`Wait`); a running wait ends at once."""
        self._error = error
        self._ended.set()
        self._wake.set()

    def notifications(self) -> AsyncIterator[SchemaNotification]:
        """The notifications of the schema that name this task
        (``notifications/tasks/progress``, ...: those the runtime has no role for), as
        their generated models, in the order they arrive, until the wait on the task
        ends (its outcome is known, or :meth:`result` gave up).

        Iterate while :meth:`result` (or :meth:`snapshots`) runs, for instance in
        another asyncio task: the wait receives them. They are collected from this
        call on; where the revision sends them on a subscription
        (``subscriptions/listen``), the wait opens one for the task.
        """
        queue: asyncio.Queue[SchemaNotification] = asyncio.Queue()
        self.wants_notifications = True
        if self._task_id is not None:
            self._client.notifications.follow_notes(self._task_id, queue)
        return self._notes(queue)

    async def _notes(
        self, queue: asyncio.Queue[SchemaNotification]
    ) -> AsyncIterator[SchemaNotification]:
        """Yield from ``queue`` until the wait ended and ``queue`` is empty."""
        try:
            while self._task_id is not None:
                if queue.empty():
                    if self._ended.is_set():
                        return
                    getter = asyncio.ensure_future(queue.get())
                    ender = asyncio.ensure_future(self._ended.wait())
                    try:
                        await asyncio.wait(
                            {getter, ender}, return_when=asyncio.FIRST_COMPLETED
                        )
                    finally:
                        ender.cancel()
                        if not getter.done():
                            getter.cancel()
                    if not getter.cancelled() and getter.done():
                        yield getter.result()
                    continue
                yield queue.get_nowait()
        finally:
            if self._task_id is not None:
                self._client.notifications.unfollow_notes(self._task_id, queue)

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
            if newer is not None and older(task, newer, self._client.tables):
                return
        self._pending = task
        self._wake.set()

    async def result(
        self, *, timeout: float | None = None, on_status: StatusCallback | None = None
    ) -> ToolResult[S]:
        """Wait for the tool's result.

        Raises :class:`TaskFailed` (with the JSON-RPC error of the work),
        :class:`TaskCancelled`, :class:`TaskNotFound`, :class:`TaskExpired`,
        :class:`WaitTimeout`, or :class:`InvalidResponse` (such as
        :class:`InvalidStructuredContent` when the ``structuredContent`` does not
        validate as the ``result_type``).
        """
        if not self.done:
            async for snapshot in self.snapshots(timeout=timeout):
                if on_status is not None:
                    on_status(snapshot)
        if self._error is not None:
            raise self._error
        assert self._result is not None
        if self._typed is None:
            typed = self._result.validated(self.result_type, tool=self.tool)
            self._typed = cast("ToolResult[S]", typed)
        return self._typed

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
        self._ended.clear()
        deadline = None if timeout is None else client.clock() + timeout
        wait = client.wait_for(self)
        fresh: TaskSnapshot | None = self.task
        poll_now = wait.poll_first(self.task)
        last_poll = retry_at = client.clock()
        failures = 0
        finished = False
        client.notifications.watch(task_id, self)
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
                if self.done:  # failed from outside: an input it has no handler for
                    break
                if self._cancelled_here:
                    self._error = TaskCancelled(task_id, "cancelled by this client")
                else:
                    await wait.settle(self.task, status_name(self.task.status))
                if not self.done and client.ttl_backstop and client.expired(self.task):
                    self._error = TaskExpired(task_id)
                if self.done:
                    # the task still runs when the client cannot answer its input
                    finished = not isinstance(self._error, InputNotHandled)
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
                    # the next poll counts from the answer, which a server may hold
                    # until a young task changes (as the spec's requests may take
                    # their time)
                    last_poll = client.clock()
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
            client.notifications.unwatch(task_id, self)
            self._ended.set()
            await wait.close()
            if finished:
                await client.store.delete(task_id)
                if self._on_finish is not None:
                    self._on_finish()

    async def _cancel_quietly(self, task_id: str) -> None:
        """Best-effort ``tasks/cancel`` while a wait is being aborted (with the
        configured values of its params)."""
        try:
            state = await self._client.cancel_task(task_id)
        except Exception:
            return
        if state is not None:
            self.task = state

    async def cancel(self, **params: Unpack[CancelTaskParams]) -> TaskState | None:
        """Send ``tasks/cancel``; return the task the server reports (when the revision
        has one). ``params``: the request's params that the schema adds (the
        configured values by default).

        A running wait then ends with :class:`TaskCancelled`: at once when the server
        reports no state and the client polls no further (``poll_after_cancel=False``),
        otherwise when the server reports a terminal status (which need not be
        ``cancelled``).
        """
        if self._task_id is None:
            raise TasksClientError(
                "the call was answered without a task; there is nothing to cancel"
            )
        state = await self._client.cancel_task(self._task_id, **params)
        if state is not None:
            self.task = state
            self.push(state)
        elif not self._client.poll_after_cancel:
            self._cancelled_here = True
            self._wake.set()
        return state
