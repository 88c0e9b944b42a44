"""``InMemoryTaskStore``: the tasks in a dict (tests, throw-away servers)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import replace

from .base import Quota, TaskRecord
from .codec import kept_bytes

__all__ = ["InMemoryTaskStore"]


class InMemoryTaskStore:
    """A ``TaskStore`` in a dict: fast, and gone when the process ends.

    No method awaits anything, so each one (``create`` with its ``Quota`` check
    included) runs as one critical section on the event loop. Use a store from one
    event loop only.
    """

    def __init__(self) -> None:
        self._tasks: dict[str, TaskRecord] = {}
        self._active: dict[str | None, set[str]] = {}
        self._owned: dict[str | None, list[tuple[int, str]]] = {}
        self._kept: dict[str, int] = {}
        self._usage: dict[str | None, list[int]] = {}
        self._seq = 0

    def _track(self, record: TaskRecord) -> None:
        """Keep the per-owner unfinished tasks and usage in step with ``record``."""
        active = self._active.setdefault(record.owner, set())
        if record.is_terminal:
            active.discard(record.task_id)
            if record.task_id not in self._kept:
                size = kept_bytes(record)
                self._kept[record.task_id] = size
                usage = self._usage.setdefault(record.owner, [0, 0])
                usage[0] += 1
                usage[1] += size
        else:
            active.add(record.task_id)

    def _untrack(self, record: TaskRecord) -> None:
        """Forget the usage of a deleted task."""
        size = self._kept.pop(record.task_id, None)
        usage = self._usage.get(record.owner)
        if size is not None and usage is not None:
            usage[0] -= 1
            usage[1] -= size

    async def open(self) -> None:
        """Nothing to prepare."""

    async def close(self) -> None:
        """Nothing to release."""

    async def create(
        self, record: TaskRecord, *, quota: Quota | None = None
    ) -> TaskRecord:
        """Store a new task and return it with ``seq`` assigned; with ``quota``, raise
        ``LimitExceeded`` instead when a limit is reached (checked with the insert)."""
        if quota is not None:
            finished, kept = self._usage.get(record.owner, (0, 0))
            active = len(self._active.get(record.owner, ()))
            quota.check(active, finished, kept, len(self._tasks))
        self._seq += 1
        stored = replace(record, seq=self._seq)
        self._tasks[stored.task_id] = stored
        self._owned.setdefault(stored.owner, []).append((stored.seq, stored.task_id))
        self._track(stored)
        return stored

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task with this ID, or None."""
        return self._tasks.get(task_id)

    async def put(self, record: TaskRecord) -> None:
        """Replace the stored state of an existing, unfinished task.

        A missing task is not created and a terminal one never changes.
        """
        stored = self._tasks.get(record.task_id)
        if stored is not None and not stored.is_terminal:
            self._tasks[record.task_id] = record
            self._track(record)

    async def transition(
        self,
        task_id: str,
        allowed_from: frozenset[str],
        record: TaskRecord,
        *,
        expected_updated_at: float | None = None,
    ) -> bool:
        """Store ``record`` only if the task is now in one of ``allowed_from``.

        With ``expected_updated_at`` the stored record must also still have that
        ``updated_at``. A missing task is not created and a terminal one never
        changes. Returns whether the record was written.
        """
        if record.task_id != task_id:
            raise ValueError(f"record is for task {record.task_id!r}, not {task_id!r}")
        stored = self._tasks.get(task_id)
        if stored is None or stored.is_terminal or stored.status not in allowed_from:
            return False
        if expected_updated_at is not None and stored.updated_at != expected_updated_at:
            return False
        self._tasks[task_id] = record
        self._track(record)
        return True

    async def transition_many(
        self, changes: Sequence[tuple[frozenset[str], TaskRecord, float | None]]
    ) -> list[bool]:
        """``transition`` for each ``(allowed_from, record, expected_updated_at)``."""
        return [
            await self.transition(
                record.task_id, allowed_from, record, expected_updated_at=expected
            )
            for allowed_from, record, expected in changes
        ]

    async def delete(self, task_ids: list[str]) -> None:
        """Forget these tasks."""
        for task_id in task_ids:
            record = self._tasks.pop(task_id, None)
            if record is None:
                continue
            self._active.get(record.owner, set()).discard(task_id)
            self._untrack(record)
            owned = self._owned.get(record.owner, [])
            index = bisect.bisect_left(owned, (record.seq, task_id))
            if index < len(owned) and owned[index][1] == task_id:
                del owned[index]
            if not owned:  # the owner's last task: keep nothing for it
                self._owned.pop(record.owner, None)
                self._active.pop(record.owner, None)
                self._usage.pop(record.owner, None)

    async def list_tasks(
        self, owner: str | None, after_seq: int, limit: int
    ) -> list[TaskRecord]:
        """Up to ``limit`` tasks of ``owner`` with ``seq > after_seq``, in ``seq``
        order."""
        owned = self._owned.get(owner, [])
        start = bisect.bisect_right(owned, (after_seq, "\uffff"))
        return [self._tasks[task_id] for _, task_id in owned[start : start + limit]]

    async def count_active(self, owner: str | None) -> int:
        """How many non-terminal tasks ``owner`` has."""
        return len(self._active.get(owner, ()))

    async def usage(self, owner: str | None) -> tuple[int, int]:
        """How many finished tasks ``owner`` has, and their ``kept_bytes`` in total."""
        finished, kept = self._usage.get(owner, (0, 0))
        return finished, kept

    async def expired(self, now: float) -> list[str]:
        """IDs of the tasks whose TTL has elapsed at ``now``."""
        return [r.task_id for r in self._tasks.values() if r.is_expired(now)]

    async def unfinished(self) -> list[TaskRecord]:
        """Every task that is not terminal."""
        return [r for r in self._tasks.values() if not r.is_terminal]
