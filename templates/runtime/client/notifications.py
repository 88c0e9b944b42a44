"""What the server sends a client outside of answers: the part that routes
notifications (:class:`NotificationRouter`: task states to the waits, progress to the
callbacks, subscription acknowledgements to the subscribed wait) and the one that lets
finished subscriptions end (:class:`ListenDrain`)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar, cast

from ..jsonrpc import json_object
from ..protocol import SchemaNotification, TaskSnapshot
from ..revision import MethodSpec, RevisionTables
from .errors import InputNotHandled, InvalidResponse

if TYPE_CHECKING:
    from .handle import TaskHandle

__all__ = [
    "LISTEN_DRAIN_S",
    "ListenDrain",
    "NotificationCallback",
    "NotificationRouter",
    "ProgressCallback",
]

R = TypeVar("R")
"""The revision's own form of a tool result (see ``ClientCore``)."""

ProgressCallback: TypeAlias = Callable[[float, float | None, str | None], object]
"""Called with ``(progress, total, message)`` for each ``notifications/progress`` of
a call."""

LISTEN_DRAIN_S = 2.0
"""How long a finished wait's subscription is left for the server to end
(``ClientCore.drain_listen``) before the client stops it."""

NotificationCallback: TypeAlias = Callable[[SchemaNotification], object]
"""Called with each notification of the schema that the runtime has no role for
(``notifications/tasks/progress``, ...), as its generated model."""

_PROGRESS_KEYS = ("progress", "total", "message")

_NOTES_KEPT = 1024
"""How many undelivered notifications one ``TaskHandle.notifications`` iterator
holds (the oldest are dropped beyond)."""


class NotificationRouter(Generic[R]):
    """Routes a client's notifications: status notifications to the handles waiting
    for their task, ``notifications/progress`` to the call's callback, and
    ``notifications/subscriptions/acknowledged`` to the subscribed wait; a
    notification of a subscription the client does not hold is dropped.

    ``decode`` reads a status notification's task (``InvalidResponse``: malformed).
    """

    def __init__(
        self,
        tables: RevisionTables,
        decode: Callable[[Mapping[str, Any]], TaskSnapshot],
    ) -> None:
        """Route the notifications of the revision of ``tables``."""
        self.tables = tables
        self.decode = decode
        self.watchers: dict[str, set[TaskHandle[Any]]] = {}
        """Task ID -> the handles waiting for it."""
        self.progress: dict[str, ProgressCallback] = {}
        """``progressToken`` -> the callback of its call."""
        self.subscriptions: dict[str | int, TaskHandle[Any]] = {}
        """Open ``subscriptions/listen`` streams by request ID (= subscription ID)."""
        self.callback: NotificationCallback | None = None
        """Gets every notification of the schema the runtime has no role for."""
        self.notes: dict[str, set[asyncio.Queue[SchemaNotification]]] = {}
        """Task ID -> the queues of its ``TaskHandle.notifications`` iterators."""

    def follow_notes(
        self, task_id: str, queue: asyncio.Queue[SchemaNotification]
    ) -> None:
        """Put the schema's notifications naming ``task_id`` in ``queue``."""
        self.notes.setdefault(task_id, set()).add(queue)

    def unfollow_notes(
        self, task_id: str, queue: asyncio.Queue[SchemaNotification]
    ) -> None:
        """Stop putting ``task_id``'s notifications in ``queue``."""
        queues = self.notes.get(task_id)
        if queues is not None:
            queues.discard(queue)
            if not queues:
                del self.notes[task_id]

    def fail_waits(self, error: InputNotHandled) -> None:
        """A server-to-client input request was refused for want of a handler: the
        waits on its task end at once with ``error``."""
        for handle in list(self.watchers.get(error.task_id or "", ())):
            if not handle.done:
                handle.fail(error)

    def note_task(self, params: Mapping[str, Any]) -> str | None:
        """The task a notification names: its params' task ID field, else the
        related-task ``_meta``."""
        field = self.tables.task_fields["task_id"]
        named = params.get(field)
        key = self.tables.meta_keys.get("RELATED_TASK")
        if not isinstance(named, str) and key is not None:
            meta = json_object(params.get("_meta")) or {}
            named = (json_object(meta.get(key)) or {}).get(field)
        return named if isinstance(named, str) else None

    def deliver_note(
        self, spec: MethodSpec, method: str, params: dict[str, Any]
    ) -> None:
        """Hand a schema notification, as its generated model, to the callback and to
        the iterators of the task it names (one its model refuses is dropped)."""
        message: dict[str, Any] = {"method": method, "params": params}
        if "jsonrpc" in spec.message.model_fields:
            message["jsonrpc"] = "2.0"
        try:
            note: Any = spec.message.model_validate(message)  # the schema's model
        except ValueError:
            return
        if self.callback is not None:
            self.callback(note)
        task_id = self.note_task(params)
        for queue in list(self.notes.get(task_id, ())) if task_id else ():
            if queue.qsize() >= _NOTES_KEPT:
                queue.get_nowait()
            queue.put_nowait(note)

    def watch(self, task_id: str, handle: TaskHandle[Any]) -> None:
        """Route status notifications for ``task_id`` to ``handle`` (while it waits)."""
        self.watchers.setdefault(task_id, set()).add(handle)

    def unwatch(self, task_id: str, handle: TaskHandle[Any]) -> None:
        """Stop routing notifications for ``task_id`` to ``handle``."""
        handles = self.watchers.get(task_id)
        if handles is not None:
            handles.discard(handle)
            if not handles:
                del self.watchers[task_id]

    def track_progress(self, callback: ProgressCallback | None) -> str | None:
        """Register a progress callback; return the ``progressToken`` to send
        (``None``: none)."""
        if callback is None:
            return None
        token = uuid.uuid4().hex
        self.progress[token] = callback
        return token

    def forget_progress(self, token: str | None) -> None:
        """Drop the progress callback registered under ``token``."""
        if token is not None:
            self.progress.pop(token, None)

    def deliver(self, params: Mapping[str, Any]) -> None:
        """Hand a status notification's task to the handles waiting for it
        (malformed: dropped)."""
        try:
            task = self.decode(params)
        except InvalidResponse:
            return
        for handle in list(self.watchers.get(task.task_id, ())):
            handle.push(task)

    async def on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Route one notification (the transport's notification handler)."""
        key = self.tables.meta_keys.get("SUBSCRIPTION_ID")
        meta = json_object(params.get("_meta")) or {}
        subscription = meta.get(key) if key is not None else None
        held = (
            self.subscriptions.get(subscription)
            if isinstance(subscription, (str, int))
            else None
        )
        notify = (
            self.tables.method("notify") if self.tables.has_role("notify") else None
        )
        if method == "notifications/subscriptions/acknowledged":
            listed = json_object(params.get("notifications")) or {}
            ids = listed.get("taskIds")
            if held is not None and isinstance(ids, list):
                held.push_acknowledged = held.task_id in cast("list[object]", ids)
                held.push_answered = True
        elif subscription is not None and held is None:
            return
        elif method == notify:
            self.deliver(params)
        elif (spec := self.tables.schema_notification(method)) is not None:
            self.deliver_note(spec, method, params)
        elif method == "notifications/progress":
            callback = self.progress.get(str(params.get("progressToken")))
            progress, total, message = (params.get(k) for k in _PROGRESS_KEYS)
            if callback is not None and isinstance(progress, (int, float)):
                callback(
                    float(progress),
                    float(total) if isinstance(total, (int, float)) else None,
                    message if isinstance(message, str) else None,
                )


class ListenDrain:
    """The ``subscriptions/listen`` requests of finished waits, left running for the
    server to end (a server may end such a stream once its tasks are terminal; the
    connection then serves the next requests, where stopping it closes it)."""

    def __init__(self) -> None:
        """Nothing is being drained yet."""
        self.listens_end: bool | None = None
        """Whether the server ends a subscription's stream once its tasks ended (None:
        not known yet)."""
        self.draining: set[asyncio.Future[Any]] = set()

    def drain(self, listen: asyncio.Future[Any]) -> bool:
        """Leave ``listen`` running for the server to end.

        Returns False, and the caller stops it, while the server is not known to end
        such streams and another one is being drained, or once one was not ended
        within ``LISTEN_DRAIN_S`` (that one is then stopped).
        """
        if self.listens_end is False or (self.listens_end is None and self.draining):
            return False
        self.draining.add(listen)
        timer = asyncio.get_running_loop().call_later(
            LISTEN_DRAIN_S, self._not_ended, listen
        )

        def drained(_: asyncio.Future[Any]) -> None:
            timer.cancel()
            self.draining.discard(listen)
            if not listen.cancelled():
                listen.exception()  # retrieved: a stream cut by the transport's close

        listen.add_done_callback(drained)
        return True

    def _not_ended(self, listen: asyncio.Future[Any]) -> None:
        """A drained subscription the server did not end in time: stop it and stop
        draining the others."""
        self.listens_end = False
        listen.cancel()

    async def close(self) -> None:
        """Stop every subscription still being drained."""
        for listen in list(self.draining):
            listen.cancel()
        await asyncio.gather(*self.draining, return_exceptions=True)
