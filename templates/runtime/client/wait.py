"""One wait on a task (:class:`Wait`): the hooks the polling loop of a
:class:`~.handle.TaskHandle` calls, each mechanism chosen by the revision's tables; and
the loop's interruptible sleep (:func:`nap`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from pydantic import BaseModel

from ..jsonrpc import INTERNAL_ERROR, JsonRpcError
from ..protocol import TaskSnapshot
from .codec import status_name, to_wire, wire_value
from .errors import (
    InputNotHandled,
    InvalidResponse,
    TaskCancelled,
    TaskEnded,
    TaskFailed,
    TaskNotFound,
    TasksClientError,
)
from .transport import TransportError

if TYPE_CHECKING:
    from .core import ClientCore
    from .handle import TaskHandle

__all__ = ["Wait", "nap"]

R = TypeVar("R")
"""The revision's own form of a tool result (see ``ClientCore``)."""


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


def dropped(request: asyncio.Future[Any]) -> bool:
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

    def __init__(self, handle: TaskHandle[Any], client: ClientCore[R]) -> None:
        """Attach to ``handle``."""
        self.handle, self.client, self.tables = handle, client, client.tables
        self.payload: asyncio.Future[Any] | None = None
        """The running ``tasks/result`` request (result role)."""
        self.listen: asyncio.Future[Any] | None = None
        """The running ``subscriptions/listen`` request (push)."""
        self.retry_after = -1
        self.opening_until = 0.0
        """Until when a subscription not yet answered counts as pushing."""

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
        """Whether the server pushes this task's states, so polling can wait: its
        subscription is acknowledged, or still opening (not yet answered, for at
        most ``default_poll_interval``), since a poll of a young task would only race
        the subscription's first state (it cost a ``tasks/get`` per task to a client
        whose event loop was busy)."""
        handle = self.handle
        if self.listen is None or self.listen.done():
            return False
        if handle.push_acknowledged:
            return True
        return not handle.push_answered and self.client.clock() < self.opening_until

    async def start(self) -> None:
        """Begin the wait (open the push stream when there is one, and the client
        subscribes, takes the schema's notifications in a callback, or the handle's
        are iterated)."""
        wanted = (
            self.client.subscribe
            or self.client.notifications.callback is not None
            or self.handle.wants_notifications
        )
        if wanted and self.client.can_listen():
            self.opening_until = self.client.clock() + self.client.default_poll_interval
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
        try:
            responses = await self.client.inputs.answer_all(pending, task.task_id)
        except InputNotHandled as error:
            handle.fail(error)
            return
        if responses:
            await self.client.update_task(task.task_id, responses)
            handle.answered.update(responses)

    async def _payload(self, task: TaskSnapshot, status: str) -> None:
        """Ask ``tasks/result`` once the task is not active; read it once it is done."""
        handle, payload = self.handle, self.payload
        if payload is not None and payload.done() and dropped(payload):
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
            task = handle.task
            status = status_name(task.status) if task is not None else ""
            if (
                task is not None
                and status in self.tables.terminal
                and status not in (self.tables.completed, self.tables.failed)
            ):  # ended without an outcome (the tool's ctx.finish): no result to give
                handle.fail(TaskEnded(task_id, status, task.status_message))
            else:
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
                client.drains.listens_end = (
                    True  # the server ended it after the task ended
                )
        except (JsonRpcError, TasksClientError):
            return
        finally:
            del client.subscriptions[listen_id]
            handle.push_acknowledged = handle.push_answered = False
            handle.wake()

    async def close(self) -> None:
        """Stop the side requests.

        A subscription whose task ended is left to the server to end when it ends
        such streams (``ListenDrain``), since stopping it here would cost
        its HTTP connection.
        """
        task, listen = self.handle.task, self.listen
        if (
            listen is not None
            and not listen.done()
            and task is not None
            and status_name(task.status) in self.tables.terminal
            and self.client.drains.drain(listen)
        ):
            self.listen = None
        for side in (self.payload, self.listen):
            if side is not None:
                if not side.done():
                    side.cancel()
                await asyncio.gather(side, return_exceptions=True)
