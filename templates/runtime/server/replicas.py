"""Replicas: several servers sharing one ``ReplicaStore`` (Redis) renew worker leases,
fail the tasks whose replica died, and tell each other about changes by signals; the
servers of a dual server on one store tell each other directly."""

from __future__ import annotations

import asyncio
import logging
import secrets
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, cast

from ..jsonrpc import INTERNAL_ERROR, JsonRpcError
from ..stores import ReplicaStore, Signal, StoreUnavailable, TaskRecord
from .lifecycle import every, replicated

if TYPE_CHECKING:
    from .host import Host

_log = logging.getLogger(__name__)

LOST_WORKER = (
    "The replica running the task stopped before the task finished (its worker"
    " lease expired)"
)
"""The error message of a task failed because its worker lease ran out."""


class Replicas:
    """This server among its replicas: its ``replica_id``, the lease rounds, and the
    signals it sends and acts on."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.replica_id = secrets.token_hex(8)
        """Names this process in worker leases and signals to other replicas."""
        self._lease_keepers: list[asyncio.Task[None]] = []

    @property
    def lease_ms(self) -> int:
        """``limits.lease_s`` in milliseconds."""
        return max(1, round(self.host.limits.lease_s * 1000))

    async def start(self, store: ReplicaStore) -> None:
        """Subscribe to the other replicas' signals, fail the tasks whose lease ran
        out, and start the lease rounds (every ``limits.lease_s / 3`` seconds).

        Renewing the leases is a loop of its own, apart from the catch-up with lost
        signals (``resync``, which reads every local task and so takes longer as
        they grow or the store slows down): a slow catch-up never delays a renewal.
        """
        await store.subscribe(self.on_signal)
        await self.fail_lost_tasks()
        self._lease_keepers = [
            asyncio.create_task(
                every(
                    lambda: self.host.limits.lease_s / 3,
                    lambda: self.hold_leases(store),
                    "renewing worker leases",
                    lambda: self.host.started,
                )
            ),
            asyncio.create_task(
                every(
                    lambda: self.host.limits.lease_s / 3,
                    self.resync,
                    "catching up with lost signals",
                    lambda: self.host.started,
                )
            ),
            asyncio.create_task(
                every(
                    lambda: self.host.limits.lease_s / 3,
                    self.fail_lost_tasks,
                    "checking worker leases",
                    lambda: self.host.started,
                )
            ),
        ]

    async def stop(self) -> None:
        """Stop the lease rounds."""
        keepers, self._lease_keepers = self._lease_keepers, []
        for job in keepers:
            job.cancel()
        await asyncio.gather(*keepers, return_exceptions=True)

    async def share(self, record: TaskRecord) -> None:
        """Tell every replica (with a ``ReplicaStore``) or sibling (the other revisions
        of a dual server) about a stored change."""
        if replicated(self.host.store):
            await self.signal("status", record.task_id, record=asdict(record))
        else:
            for sibling in self.host.siblings:
                await sibling.published(record)

    async def renew_leases(self, store: ReplicaStore) -> None:
        """One lease round: renew the leases of this replica's running tasks, then
        catch up with signals that were lost (pub/sub delivers at most once; see
        ``resync``). The rounds ``start`` runs do each in a loop of its own."""
        await self.hold_leases(store)
        await self.resync()

    async def hold_leases(self, store: ReplicaStore) -> list[str]:
        """Renew the leases of this replica's running tasks (a task waiting for
        input included: its worker runs here until the answer comes); return the
        tasks whose runs stopped here because another run holds them.

        A worker stalled past its lease may find its task run elsewhere (an
        executor queues a lost worker's idempotent task again): its run stops at
        once, storing nothing (``Lifecycle.superseded``), unless it is already
        storing its outcome.
        """
        lifecycle = self.host.lifecycle
        taken = await store.hold_leases(
            list(lifecycle.workers), self.replica_id, self.lease_ms
        )
        stopped: list[str] = []
        for task_id in taken:
            if task_id in lifecycle.storing or task_id not in lifecycle.workers:
                continue
            _log.warning(
                "task %s: another run holds its lease now; the run here stops",
                task_id,
            )
            lifecycle.superseded.add(task_id)
            lifecycle.stop_worker(task_id)
            stopped.append(task_id)
        return stopped

    async def fail_lost_tasks(self) -> list[str]:
        """Fail every unfinished task whose worker lease ran out; return their IDs.

        Only a ``ReplicaStore`` has leases; with any other store this does nothing.
        Each failure is an atomic transition, so a worker finishing the task at the
        same moment on another replica either wins or loses as a whole.
        """
        store = self.host.store
        if not isinstance(store, ReplicaStore):
            return []
        candidates = [
            record
            for record in await store.unfinished()
            if record.task_id not in self.host.lifecycle.workers
        ]
        live = await store.leased([record.task_id for record in candidates])
        failed: list[str] = []
        for record, leased in zip(candidates, live, strict=True):
            if leased:
                continue
            # the executor may queue it (again) instead: see server.executor
            message = await self.host.executor.orphaned(self.host, record)
            if message is None:
                continue
            error = JsonRpcError(INTERNAL_ERROR, message)
            if (
                await self.host.lifecycle.finish(
                    record.task_id,
                    self.host.tables.failed,
                    error=error,
                    status_message=message,
                )
                is not None
            ):
                failed.append(record.task_id)
                self.host.emit_audit("lease_expired", record.task_id, record.owner)
        return failed

    async def signal(
        self,
        kind: str,
        task_id: str,
        *,
        record: dict[str, Any] | None = None,
        answers: dict[str, Any] | None = None,
        progress: dict[str, Any] | None = None,
    ) -> None:
        """Tell the other replicas (if the store has any), or else the siblings, about
        ``task_id`` (with the task's ``record``, or the ``answers`` given to it, or
        the ``progress`` an executor's worker reports: ``executor.relay_progress``).

        Best effort: a failure is logged, since the change itself is already stored.
        """
        data: dict[str, Any] = {}
        if record is not None:
            data["record"] = record
        if answers is not None:
            data["answers"] = answers
        if progress is not None:
            data["progress"] = progress
        store = self.host.store
        if not isinstance(store, ReplicaStore):
            # the same store in the same process (a dual server): tell them directly
            for sibling in self.host.siblings:
                await sibling.replicas.on_signal(
                    {"from": self.replica_id, "kind": kind, "taskId": task_id, **data}
                )
            return
        try:
            await store.publish(
                {"from": self.replica_id, "kind": kind, "taskId": task_id, **data}
            )
        except StoreUnavailable:  # logged by the store; resync recovers the signal
            _log.debug("publishing a %s signal for task %s failed", kind, task_id)
        except Exception:  # the store holds the truth; a lost signal is recoverable
            _log.exception("publishing a %s signal for task %s failed", kind, task_id)

    async def on_signal(self, signal: Signal) -> None:
        """Act on a signal from another replica: status change or cancellation."""
        kind = signal.get("kind")
        if kind == "resync":
            await self.resync()
            return
        task_id = signal.get("taskId")
        if signal.get("from") == self.replica_id or not isinstance(task_id, str):
            return
        if kind == "status":
            record: Any = signal.get("record")
            if isinstance(record, dict):
                await self.host.published(TaskRecord(**cast(dict[str, Any], record)))
        elif kind == "cancel":
            self.host.lifecycle.cancelled_elsewhere(task_id)
        elif kind == "progress":  # of a task run by an executor's worker
            from .executor import relay_progress  # it imports this module

            await relay_progress(self.host, task_id, signal)
        else:
            self.host.inputs.on_signal(kind, task_id, signal)

    async def resync(self) -> None:
        """Catch up with the store for every local worker, as signals may be lost.

        Run after the signal channel reconnects and at every lease round. A worker
        whose task ended elsewhere is stopped (not one whose tool returned: the
        terminal state read may be the one it is storing, which it has yet to
        announce, and it ends by itself); one waiting for input gets the answers
        stored in its task (``InputRequests.stored_answers``), in case the answer
        signal never arrived; the subscriptions following tasks that run elsewhere
        get their stored state (``Notifications.catch_up``).
        """
        for task_id in list(self.host.lifecycle.workers):
            record = await self.host.store.get(task_id)
            if record is None or record.is_terminal:
                if task_id not in self.host.lifecycle.storing:
                    self.host.lifecycle.cancelled_elsewhere(task_id)
                continue
            if record.answers:
                self.host.inputs.stored_answers(record)
        await self.host.notifications.catch_up()
