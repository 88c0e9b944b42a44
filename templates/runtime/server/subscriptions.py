"""Notifications of task states: the notify role's messages to the session that
created a task, and ``subscriptions/listen`` streams (``Subscription``) following the
tasks a client names."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel

from ..jsonrpc import INVALID_PARAMS, INVALID_REQUEST, JsonRpcError, json_object
from ..stores import TaskRecord
from .info import Emit, RequestInfo
from .sessions import Session
from .tools import ToolContext

if TYPE_CHECKING:
    from .dispatch import Call
    from .host import Host


NOTES_KEPT = 256
"""How many schema notifications one subscription holds while its client reads slower
than they come (the oldest are dropped beyond)."""


@dataclass(slots=True, eq=False)
class Subscription:
    """One ``subscriptions/listen`` stream: the states of its tasks waiting to be sent.

    A task keeps only its latest unsent state, so a client that reads slower than its
    tasks change holds at most one state per task here.
    """

    pending: dict[str, tuple[dict[str, Any], bool]] = field(
        default_factory=dict[str, tuple[dict[str, Any], bool]]
    )
    """Task ID -> its latest unsent state (wire form) and whether it is terminal."""
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False
    """The server is closing: send what is pending, then end the stream."""

    latest: dict[str, float] = field(default_factory=dict[str, float])
    """Task ID -> the ``updated_at`` of the last state it took."""
    notes: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """Schema notifications of its tasks waiting to be sent, oldest first (at most
    ``NOTES_KEPT``: the oldest are dropped beyond)."""

    def note(self, message: dict[str, Any]) -> None:
        """A schema notification of one of its tasks (``ToolContext.notify``)."""
        if len(self.notes) >= NOTES_KEPT:
            del self.notes[0]
        self.notes.append(message)
        self.changed.set()

    def take_notes(self) -> list[dict[str, Any]]:
        """The notifications waiting to be sent, oldest first; none wait after."""
        notes, self.notes = self.notes, []
        return notes

    def offer(self, record: TaskRecord, state: dict[str, Any]) -> None:
        """A task's new state (it replaces an unsent older one).

        A state not newer (by ``updated_at``, which every write raises) than the last
        one taken for its task is dropped: the subscription's read of the current
        state can return after a newer state was published to it, and that stale
        state must not replace (or follow) the newer one.
        """
        if record.updated_at <= self.latest.get(record.task_id, -math.inf):
            return
        self.latest[record.task_id] = record.updated_at
        self.pending[record.task_id] = (state, record.is_terminal)
        self.changed.set()

    def close(self) -> None:
        """End the stream once the pending states are sent."""
        self.closed = True
        self.changed.set()

    async def next_states(
        self,
    ) -> list[tuple[str, tuple[dict[str, Any], bool]]] | None:
        """The pending ``(task ID, (state, terminal))`` pairs, once there are any; None
        once closed and all sent."""
        while not self.pending and not self.notes:
            if self.closed:
                return None
            self.changed.clear()
            await self.changed.wait()
        states = list(self.pending.items())
        self.pending.clear()
        return states


class Notifications:
    """Who hears of a task's new states: the session that created it
    (``task_sessions``) and the ``subscriptions/listen`` streams following it
    (``listeners``); ``listens`` counts each caller's open streams."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.task_sessions: dict[str, Session] = {}
        """The session that created each live task (it gets the notify role's
        messages)."""
        self.listeners: dict[str, set[Subscription]] = {}
        """Subscriptions following each task (they get its new states)."""
        self.listens: dict[str, int] = {}
        """Open ``subscriptions/listen`` streams by caller (``caller``), for
        ``limits.max_listens``; a caller with none has no entry."""

    @staticmethod
    def caller(principal: str | None, request: RequestInfo) -> str:
        """Whom a per-caller bound counts against: the principal, or when there is
        none the client's network address."""
        if principal is not None:
            return f"principal:{principal}"
        return f"address:{request.client or '?'}"

    async def published(self, record: TaskRecord) -> None:
        """Where the schema has a notify role, send a task's new state to the session
        that created it and to every subscription that follows it."""
        notify = self.host.tables.roles.get("notify")
        session = self.task_sessions.get(record.task_id)
        listeners = self.listeners.get(record.task_id)
        if notify is not None and (session is not None or listeners):
            task = self.host.views.wire(record)
            if session is not None:
                session.notify({"jsonrpc": "2.0", "method": notify, "params": task})
            for subscription in listeners or ():
                subscription.offer(record, task)
        if record.is_terminal:
            self.task_sessions.pop(record.task_id, None)

    async def progress(
        self,
        ctx: ToolContext,
        progress: float,
        total: float | None,
        message: str | None,
    ) -> None:
        """``notifications/progress`` on the call's stream or, for a task, on the stream
        of the session that created it (dropped where there is no session)."""
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

    async def schema_note(
        self, ctx: ToolContext, method: str, params: Mapping[str, Any] | BaseModel
    ) -> None:
        """Send a tool's notification of the schema (one the runtime has no role for),
        validated by its generated model, to the task's session (its GET stream) and
        the subscriptions following the task; without a task, on the call's response
        stream. ``ValueError`` for a notification the schema does not have (or that
        the runtime sends itself) or params its model refuses; nothing is sent once
        the task is terminal."""
        tables = self.host.tables
        spec = tables.schema_notification(method)
        if spec is None:
            known = [n for n in tables.methods if tables.schema_notification(n)]
            raise ValueError(
                f"{method} is not a notification of this schema that tool code sends"
                f" (it has: {', '.join(known) or 'none'})"
            )
        wire: dict[str, Any] = (
            params.model_dump(mode="json", by_alias=True, exclude_none=True)
            if isinstance(params, BaseModel)
            else dict(params)
        )
        field = tables.task_fields["task_id"]
        if (
            ctx.task_id is not None
            and spec.params is not None
            and "task_id" in spec.params.model_fields
            and field not in wire
        ):
            wire[field] = ctx.task_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": wire}
        try:
            spec.message.model_validate(
                message
                if "jsonrpc" in spec.message.model_fields
                else {"method": method, "params": wire}
            )
        except ValueError as error:
            raise ValueError(f"invalid {method}: {error}") from None
        if ctx.finished:
            return
        if ctx.task_id is None:
            if ctx.emit is not None:
                await ctx.emit(message)
            return
        if ctx.session is not None:
            ctx.session.notify(message)
        for subscription in self.listeners.get(ctx.task_id, ()):
            subscription.note(message)

    def forget(self, task_id: str) -> None:
        """A task was deleted (its TTL ran out)."""
        self.task_sessions.pop(task_id, None)

    def close(self) -> None:
        """End every subscription gracefully (the server closes)."""
        for listeners in self.listeners.values():
            for subscription in listeners:
                subscription.close()

    async def listen(self, call: Call) -> dict[str, Any]:
        """``subscriptions/listen`` (where the schema has a subscription ``_meta`` key
        and a notify role): acknowledge the caller's task IDs among those requested,
        then stream their states as the notify role's messages.

        IDs the caller cannot see (unknown, expired, another principal's) are left
        out of the acknowledgement alike, so it reveals nothing about other callers'
        tasks. Task IDs need Tasks declared (``Host.tasks_not_declared``); a request may
        name ``limits.max_listen_task_ids`` of them, and a caller may hold
        ``limits.max_listens`` streams at once. The stream ends (with the listen
        result) once every task it follows has sent its terminal state, at once
        when it follows none, or when the server closes; everything it registered is
        released when it ends, also when the client goes away.
        """
        requested = self.listen_task_ids(call)
        emit = call.emit
        if emit is None:
            raise JsonRpcError(
                INVALID_REQUEST, "subscriptions/listen needs a streaming transport"
            )
        caller = self.caller(call.principal, call.request)
        open_now = self.listens.get(caller, 0)
        if open_now >= self.host.limits.max_listens:
            raise JsonRpcError(
                self.host.limits.limit_error_code,
                f"Too many open subscriptions/listen streams: {open_now} (limit"
                f" {self.host.limits.max_listens} per principal); close some first",
            )
        self.listens[caller] = open_now + 1
        try:
            return await self.stream_states(call, emit, requested)
        finally:
            left = self.listens[caller] - 1
            if left:
                self.listens[caller] = left
            else:
                del self.listens[caller]

    def listen_task_ids(self, call: Call) -> list[str] | None:
        """The distinct task IDs a ``subscriptions/listen`` asks for (None: it asks
        for no task notifications), checked."""
        notifications: Any = call.params.get("notifications", {})
        if not isinstance(notifications, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.notifications must be an object")
        requested: Any = cast(dict[str, Any], notifications).get("taskIds")
        if requested is None:
            return None
        if not call.tasks:
            raise self.host.tasks_not_declared("subscriptions/listen with taskIds")
        if not isinstance(requested, list) or not all(
            isinstance(t, str) for t in cast("list[object]", requested)
        ):
            raise JsonRpcError(INVALID_PARAMS, "notifications.taskIds must be strings")
        distinct = list(dict.fromkeys(cast(list[str], requested)))
        if len(distinct) > self.host.limits.max_listen_task_ids:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"notifications.taskIds names {len(distinct)} tasks (limit"
                f" {self.host.limits.max_listen_task_ids} per subscriptions/listen)",
            )
        return distinct

    async def stream_states(
        self, call: Call, emit: Emit, requested: list[str] | None
    ) -> dict[str, Any]:
        """The acknowledgement and the states of a ``subscriptions/listen``; its
        result."""
        accepted: list[TaskRecord] = []
        for task_id in requested or []:
            try:
                accepted.append(
                    await self.host.lifecycle.lookup(task_id, call.principal)
                )
            except JsonRpcError:
                continue  # not the caller's to follow: left out of the ack
        subscription_id = {
            self.host.tables.meta_keys["SUBSCRIPTION_ID"]: call.request_id
        }
        ack: dict[str, Any] = {"_meta": subscription_id, "notifications": {}}
        if requested is not None:
            ack["notifications"]["taskIds"] = [r.task_id for r in accepted]
        notify = self.host.tables.roles["notify"]
        live = {record.task_id for record in accepted}
        async with self.following(accepted) as subscription:
            await emit(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": ack,
                }
            )
            while live and (states := await subscription.next_states()) is not None:
                for note in subscription.take_notes():  # sent before the states after
                    params = dict(note["params"])
                    meta = json_object(params.get("_meta")) or {}
                    params["_meta"] = {**meta, **subscription_id}
                    await emit({**note, "params": params})
                for task_id, (task, terminal) in states:
                    params = {"_meta": subscription_id, **task}
                    await emit({"jsonrpc": "2.0", "method": notify, "params": params})
                    if terminal:
                        live.discard(task_id)
        return self.host.views.complete({"_meta": subscription_id})

    @contextlib.asynccontextmanager
    async def following(
        self, records: list[TaskRecord]
    ) -> AsyncGenerator[Subscription, None]:
        """Follow tasks for a subscription: it gets each task's current state and then
        every state ``published`` gives it, until the server closes. The current
        state is read once the subscription follows the task, so the last state it
        gets is the task's latest. On exit the tasks' listener entries are removed
        (a task with no subscription left has none)."""
        subscription = Subscription()
        for record in records:
            self.listeners.setdefault(record.task_id, set()).add(subscription)
        try:
            for record in records:
                current = await self.host.store.get(record.task_id)
                if current is not None:
                    subscription.offer(current, self.host.views.wire(current))
            yield subscription
        finally:
            for record in records:
                listeners = self.listeners.get(record.task_id)
                if listeners is not None:
                    listeners.discard(subscription)
                    if not listeners:
                        del self.listeners[record.task_id]

    async def catch_up(self) -> None:
        """Give every followed task that runs elsewhere its stored state, in case its
        status signal was lost: a subscription that already has that state drops
        it (``Subscription.offer``), one that missed it gets it now."""
        for task_id in [
            t for t in self.listeners if t not in self.host.lifecycle.workers
        ]:
            record = await self.host.store.get(task_id)
            listeners = self.listeners.get(task_id)
            if record is not None and listeners:
                task = self.host.views.wire(record)
                for subscription in listeners:
                    subscription.offer(record, task)
