"""The two record caches of ``SQLiteTaskStore``, bounded in records and in memory.

``UnfinishedCache`` keeps the records the store last wrote (write-through: polling a
running task does not read the file); ``FinishedCache`` keeps the finished records
read twice (their result and error never change), checked against the file again
when another process may have deleted them. See ``SQLiteTaskStore`` for how the
store uses them.
"""

from __future__ import annotations

import sqlite3
import time
from collections import OrderedDict

from .base import TaskRecord

__all__ = ["FinishedCache", "UnfinishedCache", "parsed_bytes"]


def parsed_bytes(body: str) -> int:
    """An estimate, from above, of the memory the record parsed from ``body`` takes:
    its JSON size, 80 bytes per object, array and element beyond the first (a comma),
    and 1 KiB for the record itself. Measured with ``tracemalloc`` on results of small
    dicts, nested lists, numbers and long text, a parsed record took 0.1 to 0.9 times
    this."""
    structures = body.count("{") + body.count("[") + body.count(",")
    return len(body) + 80 * structures + 1024


NOTED_BYTES = 200
"""The memory charged for noting the ID of a finished task read once (its string and
its ordered-dict entry; measured at about 190 bytes for a 32-character ID)."""

_SEQ_SQL = "SELECT seq FROM tasks WHERE task_id = ?"
"""Whether a task is still stored, and as which row (``seq`` is never reused): an
index-only lookup."""


class UnfinishedCache:
    """The unfinished records a store wrote last, at most ``size`` of them and
    ``max_bytes`` charged (``parsed_bytes``), least recently written evicted first.

    It assumes its store is the only writer of the file.
    """

    def __init__(self, size: int, max_bytes: int) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self.records: OrderedDict[str, tuple[TaskRecord, int]] = OrderedDict()
        """Unfinished records, with the bytes charged for each (``parsed_bytes``)."""
        self.total = 0
        """The bytes charged for every record in ``records``."""

    def get(self, task_id: str) -> TaskRecord | None:
        """The kept record of ``task_id``, or None."""
        kept = self.records.get(task_id)
        return None if kept is None else kept[0]

    def remember(self, record: TaskRecord, charge: int) -> None:
        """Cache an unfinished record (``charge``: the ``parsed_bytes`` of its JSON),
        evicting the least recently written beyond ``size`` records and
        ``max_bytes``; a record above 1/64 of ``max_bytes`` is not kept, and a
        finished one leaves (finished ones go to ``FinishedCache.keep``)."""
        task_id = record.task_id
        self.forget(task_id)
        if record.is_terminal or charge > self.max_bytes // 64 or self.size <= 0:
            return
        self.records[task_id] = (record, charge)
        self.total += charge
        while len(self.records) > self.size or self.total > self.max_bytes:
            _, (_, evicted) = self.records.popitem(last=False)
            self.total -= evicted

    def forget(self, task_id: str) -> None:
        """Drop a record from the cache, if kept."""
        kept = self.records.pop(task_id, None)
        if kept is not None:
            self.total -= kept[1]

    def clear(self) -> None:
        """Drop every record."""
        self.records.clear()
        self.total = 0


class FinishedCache:
    """The finished records read twice, at most ``size`` of them and ``max_bytes``
    charged (``parsed_bytes``), least recently read evicted first; each served while
    its TTL has not run out and, checked again ``recheck_s`` after its last check,
    while the file still holds it.

    Noting the IDs of the tasks read once is bounded too: at most ``size`` of them
    and an eighth of ``max_bytes`` (``NOTED_BYTES`` each).
    """

    def __init__(self, size: int, max_bytes: int, recheck_s: float) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self.recheck_s = recheck_s
        self.records: OrderedDict[str, tuple[TaskRecord, int, float]] = OrderedDict()
        """Finished records read from the file, with the bytes charged for each
        (``parsed_bytes``) and when the file last showed it (``time.monotonic``)."""
        self.total = 0
        """The bytes charged for every record in ``records``."""
        self.read_once: OrderedDict[str, bool] = OrderedDict()
        """IDs of the last finished tasks read once (at most ``size`` and an eighth of
        ``max_bytes``, ``NOTED_BYTES`` each): a finished record is kept when it is
        read again."""

    def keep(self, record: TaskRecord, body: str) -> None:
        """Keep a finished record read from the file (``body`` is its JSON column)
        the second time it is read, evicting the least recently used beyond the
        bounds. The first read only notes its ID: reads spread over many tasks, each
        read once, would otherwise replace a kept record at every read (its parsing,
        an eviction, and a record that lives long enough for the cyclic garbage
        collector to walk it), for nothing."""
        task_id = record.task_id
        if self.read_once.pop(task_id, None) is None:
            self.read_once[task_id] = True
            noted = min(self.size, self.max_bytes // 8 // NOTED_BYTES)
            while len(self.read_once) > noted:
                self.read_once.popitem(last=False)
            return
        if record.is_expired(time.time()):
            return
        charge = parsed_bytes(body)
        if charge > self.max_bytes // 64 or self.size <= 0:
            return
        self.forget(task_id)
        self.records[task_id] = (record, charge, time.monotonic())
        self.total += charge
        while len(self.records) > self.size or self.total > self.max_bytes:
            _, (_, evicted, _) = self.records.popitem(last=False)
            self.total -= evicted

    def forget(self, task_id: str) -> None:
        """Drop a finished record from the cache, if kept."""
        kept = self.records.pop(task_id, None)
        if kept is not None:
            self.total -= kept[1]

    def lookup(
        self, task_id: str, reader: sqlite3.Connection | None
    ) -> tuple[bool, TaskRecord | None]:
        """Whether the cache answers for ``task_id``, and its answer: the kept record
        while it is unexpired and still stored, None once the file no longer holds
        the task. Not answered: the row must be read. ``reader`` checks the file
        (None: a database private to the store, where only the store's ``delete``
        removes a row, and it drops the record here)."""
        kept = self.records.get(task_id)
        if kept is None:
            return False, None
        record, charge, checked = kept
        if record.is_expired(time.time()):
            self.forget(task_id)
            return False, None
        now = time.monotonic()
        if reader is not None and now - checked >= self.recheck_s:
            # another process may have deleted it (this store's deletes drop it here)
            try:
                rows = reader.execute(_SEQ_SQL, (task_id,)).fetchall()
            except sqlite3.OperationalError:  # the file is busy: read on the thread
                return False, None
            if not rows or rows[0][0] != record.seq:
                self.forget(task_id)
                return not rows, None
            self.records[task_id] = (record, charge, now)
        # else checked within the interval, or a database private to this store (only
        # ``delete`` removes a row, and it drops the record here)
        self.records.move_to_end(task_id)
        return True, record

    def clear(self) -> None:
        """Drop every record and every noted ID."""
        self.records.clear()
        self.total = 0
        self.read_once.clear()
