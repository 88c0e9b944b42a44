"""The Tasks roles that read or end a task: ``get``, ``cancel`` and ``list``
(``TaskRoles``); ``update`` and ``result`` are in ``inputs``."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from ..jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, JsonRpcError
from ..stores import TaskRecord
from .wire import (
    decode_cursor,
    encode_cursor,
    task_id_param,
    through,
    unmanaged_params,
)

if TYPE_CHECKING:
    from .dispatch import Call
    from .host import Host


class TaskRoles:
    """Serves the get, cancel and list roles for one server; ``holds`` are the
    ``tasks/get`` calls of young tasks waiting for them to change."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.holds: dict[str, set[asyncio.Future[None]]] = {}
        """``tasks/get`` calls held until their young task changes, by task
        (``Limits.max_poll_hold_ms``); woken by ``changed`` and ``close``."""
        self.held: dict[str, int] = {}
        """Held ``tasks/get`` calls by caller (``Notifications.caller``), at most
        ``limits.max_listens``; a caller with none has no entry."""

    def noted(self, call: Call, role: str, task_id: str) -> None:
        """Check the params of a Tasks request on ``task_id`` that the runtime does not
        manage (``unmanaged_params``) and hand them to the task's tool, when it runs
        here (``ToolContext.task_params``)."""
        params = unmanaged_params(self.host.tables, role, call.params)
        ctx = self.host.lifecycle.contexts.get(task_id)
        if ctx is not None:
            ctx.task_params[call.method] = params

    async def tasks_get(self, call: Call) -> dict[str, Any]:
        """The task's current state (the variant of its status); for a young
        ``working`` task, once it changes (``Limits.max_poll_hold_ms``)."""
        task_id = task_id_param(call.params)
        record = await self.host.lifecycle.lookup(task_id, call.principal)
        self.noted(call, "get", record.task_id)
        hold_s = self.hold_s(record)
        if hold_s:
            record = await self.hold(record, call, hold_s)
        self.host.emit_audit("retrieved", record.task_id, call.principal)
        return self.host.views.complete(self.host.views.wire(record))

    async def hold(
        self, record: TaskRecord, call: Call, timeout_s: float
    ) -> TaskRecord:
        """``record`` once it changed, or as it is after ``timeout_s`` seconds or when
        the server closes; at once when its caller has ``limits.max_listens`` gets
        held already."""
        caller = self.host.notifications.caller(call.principal, call.request)
        if self.held.get(caller, 0) >= self.host.limits.max_listens:
            return record
        task_id = record.task_id
        waiter = asyncio.get_running_loop().create_future()
        holds = self.holds.setdefault(task_id, set())
        holds.add(waiter)
        self.held[caller] = self.held.get(caller, 0) + 1
        try:
            # the task may have changed between the read and now: read it again
            current = await self.host.lifecycle.lookup(task_id, call.principal)
            if current.updated_at == record.updated_at and self.host.started:
                await asyncio.wait((waiter,), timeout=timeout_s)
                current = await self.host.lifecycle.lookup(task_id, call.principal)
            return current
        finally:
            holds.discard(waiter)
            if not holds and self.holds.get(task_id) is holds:
                del self.holds[task_id]
            left = self.held[caller] - 1
            if left:
                self.held[caller] = left
            else:
                del self.held[caller]

    def hold_s(self, record: TaskRecord) -> float:
        """How long a ``tasks/get`` of ``record`` may wait for it to change: until it
        is as old as its longest polling hint, at most ``Limits.max_poll_hold_ms``;
        0 unless it is ``working``."""
        longest = record.poll_interval_ms
        if longest is None or record.status != self.host.tables.working:
            return 0.0
        limit_ms = min(longest, self.host.limits.max_poll_hold_ms)
        return max(0.0, record.created_at + limit_ms / 1000 - time.time())

    def changed(self, task_id: str) -> None:
        """A task changed (here, or told by a replica or a sibling): answer the
        ``tasks/get`` calls held for it."""
        for waiter in self.holds.pop(task_id, ()):
            if not waiter.done():
                waiter.set_result(None)

    def close(self) -> None:
        """Answer every held ``tasks/get`` (the server closes)."""
        for holds in self.holds.values():
            for waiter in holds:
                if not waiter.done():
                    waiter.set_result(None)

    async def tasks_cancel(self, call: Call) -> dict[str, Any]:
        """Cancel a live task (stopping its worker, here or on another replica)."""
        task_id = task_id_param(call.params)
        record = await self.host.lifecycle.lookup(task_id, call.principal)
        self.noted(call, "cancel", record.task_id)
        cancelled = None
        if not record.is_terminal:
            ctx = self.host.lifecycle.contexts.get(record.task_id)
            if ctx is not None:
                ctx.cancelled = True
            cancelled = await self.host.lifecycle.finish(
                record.task_id,
                self.host.tables.cancelled,
                status_message=self.host.cancel_message,
            )
            self.host.lifecycle.stop_worker(record.task_id)
            if cancelled is not None and ctx is None:
                # the worker may run on another replica, or an executor's worker
                await self.host.replicas.signal("cancel", record.task_id)
                await self.host.executor.cancel(record.task_id)
        return await self.cancel_result(cancelled, record, call.principal)

    async def tasks_list(self, call: Call) -> dict[str, Any]:
        """One page of the caller's tasks, built through the schema's result model of
        the list role; an opaque ``nextCursor`` while more remain
        (``encode_cursor``). Only with ``enable_list`` (else ``-32601``): principals
        must be told apart for a list to be private."""
        if not self.host.enable_list:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {call.method}")
        unmanaged_params(self.host.tables, "list", call.params)
        cursor = call.params.get("cursor")
        after = 0
        if cursor is not None:
            after = await self.resume_at(decode_cursor(cursor), call.principal)
        size = self.host.page_size
        page = await self.page(call.principal, after, size)
        listed: dict[str, Any] = {
            "tasks": [self.host.views.wire(r) for r in page[:size]]
        }
        if len(page) > size:
            listed["nextCursor"] = encode_cursor(
                page[size - 1].task_id, page[size].task_id
            )
        listed = self.host.views.complete(listed)
        model = self.host.tables.methods[call.method].result
        if model is None:
            return listed
        return through(model, listed)

    async def cancel_result(
        self, cancelled: TaskRecord | None, record: TaskRecord, principal: str | None
    ) -> dict[str, Any]:
        """The cancel role's result (``cancelled`` is None when it was too late).

        Where the schema's result carries the task, it is the cancelled task, and a
        task that already was terminal is ``-32602`` (there is no cancelled task to
        report); otherwise the result is empty and cancelling is idempotent.
        """
        if not self.host.tables.result_carries_task("cancel"):
            return self.host.views.complete({})
        if cancelled is not None:
            return self.host.views.complete(self.host.views.wire(cancelled))
        if not record.is_terminal:  # it ended while we tried
            record = await self.host.lifecycle.lookup(record.task_id, principal)
        raise JsonRpcError(
            INVALID_PARAMS,
            f"Cannot cancel task: already in terminal status {record.status!r}",
        )

    async def resume_at(self, anchors: tuple[str, str], principal: str | None) -> int:
        """The store position (``list_tasks``'s ``after_seq``) where a cursor's page
        starts: just before its first task, or, when that one was deleted since (its
        TTL ran out), just after the last task of the page before.

        ``-32602`` when neither is a task of the caller: a forged cursor, another
        caller's, or one whose two tasks were both deleted (list again from the start).
        """
        last_id, next_id = anchors
        for task_id, offset in ((next_id, -1), (last_id, 0)):
            record = await self.host.store.get(task_id)
            if record is not None and record.owner == principal:
                return record.seq + offset
        raise JsonRpcError(
            INVALID_PARAMS,
            "Invalid cursor (or the tasks at its position expired): list again"
            " without one",
        )

    async def page(
        self, principal: str | None, after: int, size: int
    ) -> list[TaskRecord]:
        """Up to ``size + 1`` unexpired tasks of ``principal`` after position
        ``after``."""
        now = time.time()
        page: list[TaskRecord] = []
        while len(page) <= size:
            batch = await self.host.store.list_tasks(principal, after, size + 1)
            for record in batch:
                after = record.seq
                if not record.is_expired(now):
                    page.append(record)
            if len(batch) <= size:
                break
        return page
