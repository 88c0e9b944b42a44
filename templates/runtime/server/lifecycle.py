"""The task lifecycle: creating a task, its worker, the status state machine (every
write goes through ``Lifecycle.mutate``), TTL timers, the sweep of expired tasks and
the failure of tasks nobody will finish (after a crash, at shutdown)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeGuard, cast

from typing_extensions import Unpack

from ..jsonrpc import INTERNAL_ERROR, JsonRpcError
from ..protocol import TaskFields
from ..stores import (
    BatchTransitionStore,
    LimitExceeded,
    Quota,
    ReplicaStore,
    StoreUnavailable,
    TaskChanges,
    TaskRecord,
    TransitionStore,
)
from .limits import refusal, task_ttl
from .tools import Tool, ToolContext
from .wire import is_text, new_task_id, not_found

if TYPE_CHECKING:
    from .host import Host

_log = logging.getLogger(__name__)

TTL_RAN_OUT = (
    "The task's TTL ran out before the task finished (it was failed just before it"
    " expired)"
)
"""The error message of a task failed just before its TTL ran out, by the server
running it (``Lifecycle.fail_before_expiry``)."""

SHUT_DOWN = "Server shut down before the task finished"
"""The error message of a task still running when the server closed."""

CLOSE_WORKERS_S = 0.5
"""How long ``TaskServerCore.close`` lets stopped workers end (a tool may clean up,
or return its result)."""

CLOSE_FAILING_S = 1.0
"""How long ``TaskServerCore.close`` spends marking unfinished tasks failed."""

MAX_WRITE_ATTEMPTS = 100
"""How often one status write is retried after losing a race to another writer."""

_PROTOCOL_CHECKS: dict[tuple[type, type], bool] = {}
"""``isinstance`` of a store class against a store protocol, by both classes."""


def implements(store: object, protocol: type) -> bool:
    """``isinstance(store, protocol)``, remembered per class of store: checking a
    runtime protocol looks up each of its members (20 to 50 µs a call on CPython
    3.11), which a write paid several times."""
    key = (type(store), protocol)
    known = _PROTOCOL_CHECKS.get(key)
    if known is None:
        known = _PROTOCOL_CHECKS[key] = isinstance(store, protocol)
    return known


def replicated(store: object) -> TypeGuard[ReplicaStore]:
    """Whether ``store`` is a ``ReplicaStore`` (``implements``)."""
    return implements(store, ReplicaStore)


def transitions(store: object) -> TypeGuard[TransitionStore]:
    """Whether ``store`` is a ``TransitionStore`` (``implements``)."""
    return implements(store, TransitionStore)


async def every(
    wait: Callable[[], float],
    job: Callable[[], Awaitable[object]],
    what: str,
    running: Callable[[], bool],
) -> None:
    """Run ``job`` forever, starting a round every ``wait()`` seconds (lease rounds,
    the TTL sweep).

    The rounds keep their rate: the time a round takes (a slow store, a busy
    machine) is not added to the wait before the next, and a round that is due
    already starts at once (with no burst of rounds to catch up). So a lease renewed
    every ``lease_s / 3`` stays renewed that often while the store answers within
    about a third of the lease.

    A store outage (which the store logs once) or any other failure (logged here)
    never ends the loop: the next round tries again. Cancelling the loop ends it, and
    so does a round that ends once ``running()`` is False (the server closes), also
    when the job swallowed the cancellation (redis-py 8.1 may return a command's reply
    to a task cancelled while it waited for it), which left ``close`` waiting for a
    loop that went on.
    """
    loop = asyncio.get_running_loop()
    due = loop.time()
    while True:
        due += wait()
        now = loop.time()
        if due < now:  # late (a long round or a stalled loop): start it now
            due = now
        await asyncio.sleep(due - now)
        try:
            await job()
        except StoreUnavailable:  # the store logged the outage; retry next round
            pass
        except Exception:  # keep going after a store failure
            _log.exception("%s failed", what)
        if not running():  # closing: the job may have eaten the cancellation
            return


class Lifecycle:
    """The tasks of one server: their local workers and every stored change.

    Every write of a live task goes through ``mutate`` (the state machine, and an
    atomic compare-and-set where the store has one), and every stored change is
    announced (``announce``): to this server's waiters and subscribers, and to the
    other replicas or the sibling servers of other revisions.
    """

    def __init__(self, host: Host) -> None:
        self.host = host
        self.workers: dict[str, asyncio.Task[None]] = {}
        """The local workers of live tasks, by task ID."""
        self.storing: set[str] = set()
        """Tasks whose local worker's tool returned: it only stores the outcome now."""
        self.superseded: set[str] = set()
        """Tasks whose local worker was stopped because another run holds their lease
        (``Replicas.hold_leases``); the executor's worker entry reads and clears it."""
        self.contexts: dict[str, ToolContext] = {}
        """The ``ToolContext`` of each local worker, by task ID."""
        self.expiring: set[asyncio.Task[None]] = set()
        """Running ``fail_before_expiry`` calls (held until done: the loop keeps tasks
        only weakly)."""
        self._write_lock = asyncio.Lock()
        self._sweeper: asyncio.Task[None] | None = None

    def start_sweeper(self) -> None:
        """Purge expired tasks every ``limits.sweep_interval_s`` until ``stop``."""
        self._sweeper = asyncio.create_task(
            every(
                lambda: self.host.limits.sweep_interval_s,
                self.purge_expired,
                "purging expired tasks",
                lambda: self.host.started,
            )
        )

    async def stop(self) -> None:
        """Stop the sweeper and every worker; mark the tasks they leave unfinished
        failed (see ``TaskServerCore.close``)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
            self._sweeper = None
        await asyncio.gather(*self.expiring, return_exceptions=True)
        workers = dict(self.workers)
        for worker in workers.values():
            worker.cancel()
        if workers:
            await asyncio.wait(workers.values(), timeout=CLOSE_WORKERS_S)
            try:
                await asyncio.wait_for(
                    self.fail_unfinished(list(workers), SHUT_DOWN),
                    CLOSE_FAILING_S,
                )
            except asyncio.TimeoutError:
                _log.warning(
                    "shutting down: tasks whose worker stopped were not all marked"
                    " failed within %.1f s; the rest stay unfinished",
                    CLOSE_FAILING_S,
                )
            except StoreUnavailable:  # logged by the store
                pass

    async def announce(self, record: TaskRecord) -> None:
        """Publish a stored change here and on every replica (with a
        ``ReplicaStore``) or sibling (the other revisions of a dual server)."""
        await self.host.published(record)
        await self.host.replicas.share(record)

    async def lookup(self, task_id: str, principal: str | None) -> TaskRecord:
        """The caller's task, or the not-found error (unknown, expired or foreign)."""
        if not is_text(task_id):  # no store could hold it (lone surrogates)
            raise not_found()
        record = await self.host.store.get(task_id)
        if record is None or record.owner != principal:
            self.host.emit_audit("lookup_failed", task_id, principal)
            raise not_found()
        if record.is_expired(time.time()):
            raise not_found()
        return record

    async def new_task(
        self, tool: Tool, principal: str | None, requested_ttl: int | None
    ) -> TaskRecord:
        """Create and durably store a new ``working`` task, enforcing the limits
        (checked by the store with the create: ``stores.Quota``)."""
        limits = self.host.limits
        store = self.host.store
        now = time.time()
        task_id = new_task_id()
        if replicated(self.host.store):
            # leased before it exists, so no replica ever sees it without a lease
            await self.host.store.hold_leases(
                [task_id], self.host.replicas.replica_id, self.host.replicas.lease_ms
            )
        try:
            record = await store.create(
                TaskRecord(
                    task_id=task_id,
                    owner=principal,
                    tool=tool.name,
                    status=self.host.tables.initial,
                    created_at=now,
                    updated_at=now,
                    ttl_ms=task_ttl(self.host.limits, requested_ttl),
                    poll_interval_ms=limits.poll_interval_ms,
                ),
                quota=Quota(
                    max_active_tasks=limits.max_active_tasks,
                    max_finished_tasks=limits.max_finished_tasks,
                    max_stored_bytes=limits.max_stored_bytes,
                    max_tasks=limits.max_tasks,
                ),
            )
        except LimitExceeded as refused:
            raise JsonRpcError(limits.limit_error_code, refusal(refused)) from None
        self.host.emit_audit("created", record.task_id, principal, tool.name)
        return record

    def spawn(self, record: TaskRecord, work: Coroutine[Any, Any, None]) -> None:
        """Run a task's worker in the background; if it still runs when the task's TTL
        is about to run out, the task is failed and the worker stopped
        (``_fail_before_expiry``)."""
        task_id = record.task_id
        worker = asyncio.create_task(work, name=f"task-{task_id}")
        self.workers[task_id] = worker
        timer: asyncio.TimerHandle | None = None
        expires_at = record.expires_at
        if expires_at is not None and record.ttl_ms is not None:
            delay = expires_at - self.ttl_margin_s(record.ttl_ms) - time.time()
            timer = asyncio.get_running_loop().call_later(
                max(0.0, delay), self.ttl_due, task_id, record.owner
            )

        def ended(_: object) -> None:
            self.workers.pop(task_id, None)
            if timer is not None:
                timer.cancel()

        worker.add_done_callback(ended)

    def stop_worker(self, task_id: str) -> None:
        """Ask a task's worker to stop (it sees ``CancelledError``)."""
        worker = self.workers.get(task_id)
        if worker is not None and worker is not asyncio.current_task():
            worker.cancel()

    async def save(
        self, record: TaskRecord, **changes: Unpack[TaskChanges]
    ) -> TaskRecord:
        """Store ``record`` with ``changes`` and a bumped ``updated_at``; publish it."""
        now = max(time.time(), record.updated_at + 0.001)
        updated = replace(record, updated_at=now, **changes)
        await self.host.store.put(updated)
        await self.announce(updated)
        return updated

    async def update(
        self, task_id: str, **changes: Unpack[TaskChanges]
    ) -> TaskRecord | None:
        """Apply ``changes`` to a live task, following the status state machine.

        Returns the new record, or None when the task is gone or already terminal
        (terminal states never change). An illegal transition raises ``ValueError``.
        """
        fields = cast("dict[str, Any]", changes)  # a TaskChanges: the fields by name
        return await self.mutate(task_id, lambda record: fields)

    async def mutate(
        self,
        task_id: str,
        change: Callable[[TaskRecord], dict[str, Any] | None],
    ) -> TaskRecord | None:
        """Apply ``change(record)`` (the changed fields, or None: no change) to a live
        task.

        With a ``TransitionStore`` the write is an atomic compare-and-set on the record
        read (its status and ``updated_at``), so a replica racing this one
        (completing, cancelling, answering, asking) either goes first, and ``change``
        runs again on its result, or fails its own write.
        Returns the new record, or None when nothing was written: the task is gone or
        terminal, or ``change`` returned None. An illegal transition raises
        ``ValueError``.
        """
        async with self._write_lock:
            for _ in range(MAX_WRITE_ATTEMPTS):
                record = await self.host.store.get(task_id)
                if record is None or record.is_terminal:
                    return None
                changes = change(record)
                if changes is None:
                    return None
                status = changes.get("status", record.status)
                if (
                    status != record.status
                    and status
                    not in self.host.tables.transitions.get(record.status, frozenset())
                ):
                    raise ValueError(f"illegal transition {record.status} -> {status}")
                now = max(time.time(), record.updated_at + 0.001)
                updated = replace(record, updated_at=now, **changes)
                store = self.host.store
                if transitions(store):
                    if not await store.transition(
                        task_id,
                        frozenset({record.status}),
                        updated,
                        expected_updated_at=record.updated_at,
                    ):
                        continue  # another writer went first: read it again
                else:
                    await store.put(updated)
                await self.announce(updated)
                return updated
        raise RuntimeError(
            f"task {task_id}: {MAX_WRITE_ATTEMPTS} writes in a row lost a race"
        )

    async def set_fields(self, task_id: str, fields: TaskFields) -> None:
        """Store values of ``protocol.TaskFields`` on a live task, by wire name.

        Fields this revision's schema does not have (in a package of several
        revisions, another revision's fields) are left out, logged at debug level:
        a tool serving every revision sets them all and each task keeps its own.
        """
        extras = self.host.tables.task_extra_fields
        given = cast(dict[str, Any], fields)
        values = {k: v for k, v in given.items() if k in extras}
        if len(values) < len(given):
            _log.debug(
                "task %s: revision %s has no task field %s; left out",
                task_id,
                self.host.tables.revision,
                ", ".join(sorted(set(given) - set(values))),
            )
        if not values:
            return
        await self.mutate(
            task_id,
            lambda record: {
                "extra": {
                    **record.extra,
                    **{extras[k]: v for k, v in values.items()},
                }
            },
        )

    async def finish(
        self,
        task_id: str,
        status: str,
        *,
        result: dict[str, Any] | None = None,
        error: JsonRpcError | None = None,
        status_message: str | None = None,
    ) -> TaskRecord | None:
        """Move a task to a terminal status (no-op when it already is terminal)."""
        changes: dict[str, Any] = {"status": status, "input_requests": {}}
        if result is not None:
            changes["result"] = result
        if error is not None:
            changes["error"] = error.to_wire()
            changes["status_message"] = status_message or (
                f"Tool execution failed: {error.message}"
            )
        elif status_message is not None:
            changes["status_message"] = status_message
        record = await self.update(task_id, **changes)
        if record is not None:
            self.host.emit_audit(status, task_id, record.owner)
        return record

    def ttl_margin_s(self, ttl_ms: int) -> float:
        """How long before its TTL (``ttl_ms``) runs out a task still running here is
        failed: the poll interval (at least a second), so that a client polling as
        suggested sees the failure before the task expires, but at most a third of
        the TTL."""
        poll_s = (self.host.limits.poll_interval_ms or 0) / 1000
        return min(max(1.0, poll_s), ttl_ms / 3000)

    def ttl_due(self, task_id: str, owner: str | None) -> None:
        """Timer of a local worker: its TTL runs out within ``_ttl_margin_s``."""
        if self.host.started and task_id in self.workers:
            expiring = asyncio.create_task(self.fail_before_expiry(task_id, owner))
            self.expiring.add(expiring)
            expiring.add_done_callback(self.expiring.discard)

    async def fail_before_expiry(self, task_id: str, owner: str | None) -> None:
        """Fail a task still running here whose TTL is about to run out, and stop its
        worker, so that no task expires without a terminal status (on every store).

        The failed task stays readable until its TTL runs out, then the sweeper
        deletes it like any other.
        """
        error = JsonRpcError(INTERNAL_ERROR, TTL_RAN_OUT)
        try:
            failed = await self.finish(
                task_id,
                self.host.tables.failed,
                error=error,
                status_message=TTL_RAN_OUT,
            )
        except StoreUnavailable:  # logged by the store
            return
        except Exception:  # a timer has no caller to report to
            _log.exception("failing task %s before its TTL ran out failed", task_id)
            return
        finally:
            self.stop_worker(task_id)
        if failed is not None:
            self.host.emit_audit("ttl_ran_out", task_id, owner)

    async def recover(self) -> None:
        """Mark every unfinished task failed: its worker died with the previous
        process."""
        for record in await self.host.store.unfinished():
            error = JsonRpcError(
                INTERNAL_ERROR,
                "Task worker stopped unexpectedly (the server restarted before the"
                " task finished)",
            )
            await self.save(
                record,
                status=self.host.tables.failed,
                status_message=error.message,
                error=error.to_wire(),
                input_requests={},
            )
            self.host.emit_audit("recovered_as_failed", record.task_id, record.owner)

    async def fail_unfinished(self, task_ids: list[str], message: str) -> None:
        """Mark every unfinished task of ``task_ids`` failed with ``message``: in one
        ``transition_many`` where the store has it, else one by one (``_finish``)."""
        store = self.host.store
        error = JsonRpcError(INTERNAL_ERROR, message)
        if not isinstance(store, BatchTransitionStore):
            for task_id in task_ids:
                await self.finish(
                    task_id,
                    self.host.tables.failed,
                    error=error,
                    status_message=message,
                )
            return
        pending: list[str] = task_ids
        for _ in range(MAX_WRITE_ATTEMPTS):
            changes: list[tuple[frozenset[str], TaskRecord, float | None]] = []
            for task_id in pending:
                record = await store.get(task_id)
                if record is None or record.is_terminal:
                    continue
                failed = replace(
                    record,
                    status=self.host.tables.failed,
                    status_message=message,
                    error=error.to_wire(),
                    input_requests={},
                    updated_at=max(time.time(), record.updated_at + 0.001),
                )
                changes.append((frozenset({record.status}), failed, record.updated_at))
            if not changes:
                return
            written = await store.transition_many(changes)
            pending = []
            for (_, failed, _), stored in zip(changes, written, strict=True):
                if stored:
                    await self.announce(failed)
                    self.host.emit_audit(failed.status, failed.task_id, failed.owner)
                else:  # changed since it was read (a stopped worker's last write)
                    pending.append(failed.task_id)

    async def purge_expired(self) -> list[str]:
        """Delete every task whose TTL has elapsed (stopping its worker); return their
        IDs.

        With a ``ReplicaStore`` the local workers of tasks that another replica's
        sweep already deleted are stopped as well.
        """
        expired = await self.host.store.expired(time.time())
        for task_id in expired:
            worker = self.workers.pop(task_id, None)
            if worker is not None:
                worker.cancel()
            self.host.emit_audit("expired", task_id, None)
        await self.host.store.delete(expired)
        for task_id in expired:  # wake its result-role waiters (they get not-found)
            self.host.inputs.purged(task_id)
            self.host.notifications.forget(task_id)
        if isinstance(self.host.store, ReplicaStore):
            # another replica's sweep may have deleted tasks whose worker runs here
            await self.host.replicas.resync()
        return expired

    def cancelled_elsewhere(self, task_id: str) -> None:
        """Mark the local worker of a task another replica cancelled, and stop it."""
        ctx = self.contexts.get(task_id)
        if ctx is not None:
            ctx.cancelled = True
        self.stop_worker(task_id)
