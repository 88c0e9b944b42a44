"""Task stores: where the server keeps every task it created.

``TaskStore`` is the protocol the server talks to. Two implementations ship here:

- ``InMemoryTaskStore`` keeps tasks in a dict (tests, throw-away servers);
- ``SQLiteTaskStore`` keeps them in a SQLite database (the embedded default). It uses
  the standard library ``sqlite3`` module in WAL mode, runs every write and every
  query over many rows on one dedicated worker thread so the event loop does not
  wait on them (a ``get`` by task ID reads in place, see the class), and commits
  before a write returns, so a task is durable before the server answers with
  ``CreateTaskResult``.

Two optional protocols extend ``TaskStore``. A store with ``transition`` (all three
stores shipped with this package) lets the server write a status change as one
atomic check-and-set. A ``ReplicaStore`` (``redis_store.RedisTaskStore``) is shared
by several server processes: it keeps worker leases and carries signals between them.

Limits. Every store keeps counters of what each owner has (unfinished tasks,
finished tasks and the bytes they keep) and of every task it holds, updated with
each create, finish and deletion. ``create`` with a ``Quota`` checks them in the
same atomic step as the insert and raises ``LimitExceeded`` instead of storing, so
concurrent creates (on one server or on several sharing the store) never get past
a limit, and a create costs the same however many tasks its owner has.

A ``TaskRecord`` is revision-neutral: the server renders it to the wire shape of its
protocol revision.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = [
    "TERMINAL_STATUSES",
    "BatchTransitionStore",
    "InMemoryTaskStore",
    "LimitExceeded",
    "Quota",
    "ReplicaStore",
    "SQLiteTaskStore",
    "Signal",
    "SignalHandler",
    "StoreUnavailable",
    "TaskRecord",
    "TaskStore",
    "TransitionStore",
    "UsageStore",
    "kept_bytes",
]

from .protocol import TERMINAL_STATUSES

_TERMINAL_SQL = ", ".join(
    "'" + status.replace("'", "''") + "'" for status in sorted(TERMINAL_STATUSES)
)
"""The terminal statuses as a SQL list of string literals."""

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRecord:
    """One stored task, independent of the protocol revision.

    Times are seconds since the epoch (UTC). ``result`` holds the original request's
    result object and ``error`` a JSON-RPC error object; ``input_requests`` maps each
    outstanding input-request key to its request; ``extra`` holds the values of task
    fields the schema has and the runtime does not know, by wire name. ``seq`` is
    assigned by the store on creation and orders tasks for listing.
    """

    task_id: str
    owner: str | None
    tool: str
    status: str
    created_at: float
    updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] = field(
        default_factory=dict[str, dict[str, Any]]
    )
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    """Task fields the runtime does not know (new optional schema fields), by wire
    name."""
    answers: dict[str, dict[str, Any]] = field(
        default_factory=dict[str, dict[str, Any]]
    )
    """Answers given to input requests, by key, kept until the task asks again or
    ends: a worker on another replica that missed the answer signal (pub/sub delivers
    at most once) finds them here."""
    seq: int = 0

    @property
    def is_terminal(self) -> bool:
        """Whether the task reached a terminal status
        (``protocol.TERMINAL_STATUSES``)."""
        return self.status in TERMINAL_STATUSES

    @property
    def expires_at(self) -> float | None:
        """When the TTL runs out (seconds since the epoch), or None when unlimited."""
        if self.ttl_ms is None:
            return None
        return self.created_at + self.ttl_ms / 1000.0

    def is_expired(self, now: float) -> bool:
        """Whether the TTL has elapsed at ``now``."""
        expires_at = self.expires_at
        return expires_at is not None and now >= expires_at


def kept_bytes(record: TaskRecord) -> int:
    """What a finished task keeps until its TTL: the JSON size of its result and error
    (0 while it is unfinished)."""
    if not record.is_terminal:
        return 0
    return len(
        json.dumps([record.result, record.error], separators=(",", ":")).encode()
    )


class StoreUnavailable(Exception):
    """The store cannot reach its backend (a Redis outage, say); retry later.

    The store logs the cause once per outage, so whoever catches this need not.
    """


@dataclass(frozen=True, slots=True, kw_only=True)
class Quota:
    """The limits ``TaskStore.create`` checks in the same atomic step as the insert.

    Each is named after the ``server_core.Limits`` field the server fills it from;
    None leaves it unchecked. A create is refused when the count is already at the
    maximum, so it never ends above it:

    - ``max_active_tasks``: the unfinished tasks of the new task's owner;
    - ``max_finished_tasks``: the owner's finished tasks plus its unfinished ones
      (each of which will finish), so the finished tasks never exceed it;
    - ``max_stored_bytes``: what the owner's finished tasks keep (``kept_bytes``);
      the results of tasks still running come on top, each bounded by the server's
      ``Limits.max_result_bytes``;
    - ``max_tasks``: every task the store holds, of every owner.
    """

    max_active_tasks: int | None = None
    max_finished_tasks: int | None = None
    max_stored_bytes: int | None = None
    max_tasks: int | None = None

    def check(self, active: int, finished: int, kept: int, total: int) -> None:
        """Raise ``LimitExceeded`` when an owner with ``active`` unfinished and
        ``finished`` finished tasks keeping ``kept`` bytes, in a store holding
        ``total`` tasks, may not have one more (the limits in the order above)."""
        for limit, maximum, current in (
            ("max_active_tasks", self.max_active_tasks, active),
            ("max_finished_tasks", self.max_finished_tasks, finished + active),
            ("max_stored_bytes", self.max_stored_bytes, kept),
            ("max_tasks", self.max_tasks, total),
        ):
            if maximum is not None and current >= maximum:
                raise LimitExceeded(limit, current, maximum)


class LimitExceeded(Exception):
    """``create`` refused a task: a ``Quota`` limit is reached (nothing was stored).

    ``limit`` names the ``Quota`` field (``"max_active_tasks"``, ...), ``current`` is
    the count it was checked against and ``maximum`` the limit.
    """

    def __init__(self, limit: str, current: int, maximum: int) -> None:
        super().__init__(f"{limit}: {current} (limit {maximum})")
        self.limit = limit
        self.current = current
        self.maximum = maximum


class TaskStore(Protocol):
    """Persistence for tasks. Every method is a coroutine; a write is durable on
    return."""

    async def open(self) -> None:
        """Prepare the store for use (create tables, open connections)."""
        ...

    async def close(self) -> None:
        """Release every resource the store holds."""
        ...

    async def create(
        self, record: TaskRecord, *, quota: Quota | None = None
    ) -> TaskRecord:
        """Store a new task and return it with ``seq`` assigned.

        With ``quota``, raise ``LimitExceeded`` (storing nothing) when the task's
        owner or the store is at one of its limits; the check and the insert are one
        atomic step.
        """
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task with this ID, or None."""
        ...

    async def put(self, record: TaskRecord) -> None:
        """Replace the stored state of an existing task; a terminal one never
        changes."""
        ...

    async def delete(self, task_ids: list[str]) -> None:
        """Forget these tasks."""
        ...

    async def list_tasks(
        self, owner: str | None, after_seq: int, limit: int
    ) -> list[TaskRecord]:
        """Up to ``limit`` tasks of ``owner`` with ``seq > after_seq``, in ``seq``
        order."""
        ...

    async def count_active(self, owner: str | None) -> int:
        """How many non-terminal tasks ``owner`` has."""
        ...

    async def expired(self, now: float) -> list[str]:
        """IDs of the tasks whose TTL has elapsed at ``now``."""
        ...

    async def unfinished(self) -> list[TaskRecord]:
        """Every task that is not terminal (used for crash recovery)."""
        ...


@runtime_checkable
class TransitionStore(Protocol):
    """A store that can change a task's status as one atomic check-and-set."""

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
        ``updated_at`` (a compare-and-set on the whole record). A terminal task
        never changes. Returns whether the record was written.
        """
        ...


@runtime_checkable
class BatchTransitionStore(Protocol):
    """A store that writes many status changes at once (the server fails its running
    tasks this way when it shuts down)."""

    async def transition_many(
        self, changes: Sequence[tuple[frozenset[str], TaskRecord, float | None]]
    ) -> list[bool]:
        """``transition(record.task_id, allowed_from, record,
        expected_updated_at=...)`` for each ``(allowed_from, record,
        expected_updated_at)``, written together (one commit); returns whether each
        record was written."""
        ...


Signal = dict[str, Any]
"""A JSON object sent from one server process to every other (see ``ReplicaStore``)."""

SignalHandler = Callable[[Signal], Awaitable[None]]
"""Receives every ``Signal`` published through a ``ReplicaStore``."""


@runtime_checkable
class UsageStore(Protocol):
    """A store that counts what each owner's finished tasks keep (``Limits``)."""

    async def usage(self, owner: str | None) -> tuple[int, int]:
        """How many finished tasks ``owner`` has, and their ``kept_bytes`` in total
        (from the store's counters: the cost does not grow with the tasks)."""
        ...


@runtime_checkable
class ReplicaStore(Protocol):
    """A store shared by several server processes (replicas).

    Worker leases: the replica running a task renews a lease on it; a task whose
    lease ran out lost its worker. Signals: a message published by one replica
    reaches the handlers every replica subscribed (cancellation, input answers,
    status changes for notification streams).
    """

    async def hold_leases(
        self, task_ids: Sequence[str], holder: str, lease_ms: int
    ) -> None:
        """Take or renew the leases on ``task_ids`` for ``lease_ms`` milliseconds."""
        ...

    async def leased(self, task_ids: Sequence[str]) -> list[bool]:
        """For each task, whether a lease on it is still live."""
        ...

    async def publish(self, signal: Signal) -> None:
        """Send ``signal`` to every subscribed replica (this one included)."""
        ...

    async def subscribe(self, handler: SignalHandler) -> None:
        """Call ``handler`` for every signal from now on; returns once listening."""
        ...


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


_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL UNIQUE,
    owner TEXT,
    status TEXT NOT NULL,
    expires_at REAL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_owner ON tasks (owner, seq);
CREATE INDEX IF NOT EXISTS tasks_active ON tasks (owner, status);
CREATE INDEX IF NOT EXISTS tasks_expiry ON tasks (expires_at);
"""

_USAGE_SCHEMA = """
CREATE INDEX IF NOT EXISTS tasks_usage ON tasks (owner, status, kept);
"""
"""Run after the ``kept`` column exists (added to files made before it)."""

_COUNTED = "coalesce('=' || {row}.owner, '-')"
"""The ``counts`` row of a task's owner (``_owner_key`` in SQL): ``-`` for no owner,
``=`` followed by the principal otherwise, so that no principal is ``*``."""

_IS_LIVE = f"({{row}}.status NOT IN ({_TERMINAL_SQL}))"
"""1 when the task of ``{row}`` is unfinished, else 0."""

_IS_DONE = f"({{row}}.status IN ({_TERMINAL_SQL}))"
"""1 when the task of ``{row}`` is finished, else 0."""

_COUNTS_TABLE = """
CREATE TABLE counts (
    owner_key TEXT PRIMARY KEY,
    active INTEGER NOT NULL DEFAULT 0,
    finished INTEGER NOT NULL DEFAULT 0,
    kept INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID
"""
"""What each owner has (``_COUNTED``), and (``owner_key`` ``*``) the whole store:
unfinished tasks, finished tasks and the ``kept`` bytes of the finished ones. The
triggers of ``_COUNT_TRIGGERS`` keep it in step with ``tasks`` in every transaction
that writes it, whichever process or code path writes."""

_COUNT_TRIGGERS = (
    f"""
CREATE TRIGGER IF NOT EXISTS tasks_count_insert AFTER INSERT ON tasks BEGIN
    INSERT OR IGNORE INTO counts (owner_key) VALUES ({_COUNTED.format(row="NEW")});
    UPDATE counts SET active = active + {_IS_LIVE.format(row="NEW")},
        finished = finished + {_IS_DONE.format(row="NEW")}, kept = kept + NEW.kept
        WHERE owner_key IN ('*', {_COUNTED.format(row="NEW")});
END
""",
    f"""
CREATE TRIGGER IF NOT EXISTS tasks_count_update AFTER UPDATE OF status, kept ON tasks
WHEN OLD.status IS NOT NEW.status OR OLD.kept IS NOT NEW.kept BEGIN
    UPDATE counts SET
        active = active - {_IS_LIVE.format(row="OLD")} + {_IS_LIVE.format(row="NEW")},
        finished = finished - {_IS_DONE.format(row="OLD")}
            + {_IS_DONE.format(row="NEW")},
        kept = kept - OLD.kept + NEW.kept
        WHERE owner_key IN ('*', {_COUNTED.format(row="NEW")});
END
""",
    f"""
CREATE TRIGGER IF NOT EXISTS tasks_count_delete AFTER DELETE ON tasks BEGIN
    UPDATE counts SET active = active - {_IS_LIVE.format(row="OLD")},
        finished = finished - {_IS_DONE.format(row="OLD")}, kept = kept - OLD.kept
        WHERE owner_key IN ('*', {_COUNTED.format(row="OLD")});
    DELETE FROM counts WHERE owner_key = {_COUNTED.format(row="OLD")}
        AND active = 0 AND finished = 0;
END
""",
)
"""Keep ``counts`` in step with every insert, status change and deletion of a task
(a task's owner never changes). An owner's row goes once it has no task left."""

_RECOUNT = (
    (
        "INSERT INTO counts (owner_key, active, finished, kept)"
        f" SELECT {_COUNTED.format(row='tasks')}, SUM({_IS_LIVE.format(row='tasks')}),"
        f" SUM({_IS_DONE.format(row='tasks')}), SUM(kept) FROM tasks GROUP BY owner"
    ),
    (
        "INSERT INTO counts (owner_key, active, finished, kept)"
        f" SELECT '*', COALESCE(SUM({_IS_LIVE.format(row='tasks')}), 0),"
        f" COALESCE(SUM({_IS_DONE.format(row='tasks')}), 0), COALESCE(SUM(kept), 0)"
        " FROM tasks"
    ),
)
"""Fill a new ``counts`` table from the tasks already stored (a file made before it)."""


def _owner_key(owner: str | None) -> str:
    """The ``counts`` row of ``owner`` (see ``_COUNTED``)."""
    return "-" if owner is None else "=" + owner


def _install_counts(conn: sqlite3.Connection) -> None:
    """Create ``counts`` and its triggers if missing, counting the stored tasks, in
    one write transaction (another process may be opening the same file)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'counts'"
        ).fetchone()
        if exists is None:
            conn.execute(_COUNTS_TABLE)
            for statement in _RECOUNT:
                conn.execute(statement)
        for trigger in _COUNT_TRIGGERS:
            conn.execute(trigger)
        conn.commit()
    except BaseException:
        conn.rollback()
        raise


_BODY_FIELDS = (
    "tool",
    "created_at",
    "updated_at",
    "ttl_ms",
    "poll_interval_ms",
    "status_message",
    "result",
    "error",
    "input_requests",
    "extra",
    "answers",
)


def _body(record: TaskRecord) -> str:
    """The JSON column holding the fields that are never queried."""
    return json.dumps(
        {name: getattr(record, name) for name in _BODY_FIELDS}, separators=(",", ":")
    )


def _record(row: tuple[Any, ...]) -> TaskRecord:
    """Rebuild a record from ``SELECT seq, task_id, owner, status, body``."""
    seq, task_id, owner, status, body = row
    data: dict[str, Any] = json.loads(body)
    return TaskRecord(
        seq=seq,
        task_id=task_id,
        owner=owner,
        status=status,
        tool=data["tool"],
        created_at=data["created_at"],
        updated_at=data["updated_at"],
        ttl_ms=data["ttl_ms"],
        poll_interval_ms=data["poll_interval_ms"],
        status_message=data["status_message"],
        result=data["result"],
        error=data["error"],
        input_requests=data["input_requests"],
        extra=data.get("extra") or {},
        answers=data.get("answers") or {},
    )


_COLUMNS = "seq, task_id, owner, status, body"

_GET_SQL = f"SELECT {_COLUMNS} FROM tasks WHERE task_id = ?"

_SEQ_SQL = "SELECT seq FROM tasks WHERE task_id = ?"
"""Whether a task is still stored, and as which row (``seq`` is never reused): an
index-only lookup."""


def _parsed_bytes(body: str) -> int:
    """An estimate, from above, of the memory the record parsed from ``body`` takes:
    its JSON size, 80 bytes per object, array and element beyond the first (a comma),
    and 1 KiB for the record itself. Measured with ``tracemalloc`` on results of small
    dicts, nested lists, numbers and long text, a parsed record took 0.1 to 0.9 times
    this."""
    structures = body.count("{") + body.count("[") + body.count(",")
    return len(body) + 80 * structures + 1024


_NOTED_BYTES = 200
"""The memory charged for noting the ID of a finished task read once (its string and
its ordered-dict entry; measured at about 190 bytes for a 32-character ID)."""


def _in_memory(path: str) -> bool:
    """Whether ``path`` names a database private to one connection (in memory, or
    a temporary file for the empty name)."""
    return path in (":memory:", "")


class SQLiteTaskStore:
    """A durable ``TaskStore`` in one SQLite file (the embedded default).

    Every write, and every query that may read many rows, runs on a single worker
    thread that owns the writing connection. Writes commit before they return (WAL
    journal, ``synchronous=FULL`` by default), so a task survives ``kill -9`` as soon
    as ``create`` returns. Recently written unfinished records are kept in a
    write-through cache so that polling does not hit the disk, bounded by
    ``cache_size`` records and ``cache_bytes`` of memory (estimated from each
    record's JSON, ``_parsed_bytes``; a record above 1/64 of that is not kept); that
    cache assumes this process is the only writer of the file.

    Finished records never change (no write leaves a terminal status; the result and
    error are fixed), so the last ones read twice (the tasks clients poll for their
    results; not those read once, as when reads are spread over many tasks) are kept
    as well, bounded by ``finished_cache_size`` records and
    ``finished_cache_bytes`` of memory (estimated the same way; a record above 1/64
    of that is not kept). The IDs of the finished tasks read once, which that takes
    noting, are bounded too: at most ``finished_cache_size`` of them, and an eighth
    of ``finished_cache_bytes`` (``_NOTED_BYTES`` each). So the caches hold at most
    about ``cache_bytes + finished_cache_bytes * 9 / 8``, whatever the number of
    tasks in the file. Such a record is
    served only while its TTL has not run out and while the file still holds it. This
    store's own ``delete`` drops it at once; a deletion by another process (the server
    itself deletes only tasks whose TTL ran out, which are never served from here
    anyway) is seen within ``finished_recheck_s``: a kept record is checked against the
    file again (an index-only lookup of its ``seq``, ``_SEQ_SQL``, instead of reading
    and parsing the row) when it is served that long after its last check. ``0``
    checks on every read. A finished task's row must therefore never be changed in
    place outside this class (its writes never do). Without a second connection (an
    in-memory database, private to this store) no check is needed.

    ``get`` of a task in neither cache reads on the caller's thread through a second,
    read-only connection: one lookup on the ``task_id`` index, a few pages that the
    operating system normally holds in memory, which costs less than the hand-off to
    the worker thread and back (and does not wait
    for the worker's turn at the GIL behind a busy event loop, which set the p99 of
    ``tasks/get`` on finished tasks). WAL lets it read committed state while the
    worker writes; when the file is busy (``SQLITE_BUSY``, as during WAL recovery) the
    read goes to the worker thread. An in-memory database (``":memory:"``) has no
    second connection, so there every read goes to the worker.

    Counts. A ``counts`` table holds, per owner and for the whole file, the
    unfinished tasks, the finished ones and the bytes those keep; triggers on
    ``tasks`` update it in the transaction of every insert, status change and
    deletion, so it stays right whoever writes the file. ``count_active``, ``usage``
    and a ``create``'s ``Quota`` check read one row each. A file made before the
    table existed gets it, counted from its tasks, when first opened.
    """

    def __init__(
        self,
        path: str,
        *,
        synchronous: str = "FULL",
        cache_size: int = 10_000,
        cache_bytes: int = 16 * 1024 * 1024,
        finished_cache_size: int = 10_000,
        finished_cache_bytes: int = 16 * 1024 * 1024,
        finished_recheck_s: float = 0.5,
    ) -> None:
        self._path = path
        self._synchronous = synchronous
        self._cache_size = cache_size
        self._cache_bytes = cache_bytes
        self._cache: OrderedDict[str, tuple[TaskRecord, int]] = OrderedDict()
        """Unfinished records, with the bytes charged for each (``_parsed_bytes``)."""
        self._cache_total = 0
        """The bytes charged for every record in ``_cache``."""
        self._finished_size = finished_cache_size
        self._finished_bytes = finished_cache_bytes
        self._finished_recheck_s = finished_recheck_s
        self._finished: OrderedDict[str, tuple[TaskRecord, int, float]] = OrderedDict()
        """Finished records read from the file, with the bytes charged for each
        (``_parsed_bytes``) and when the file last showed it (``time.monotonic``)."""
        self._finished_total = 0
        """The bytes charged for every record in ``_finished``."""
        self._read_once: OrderedDict[str, bool] = OrderedDict()
        """IDs of the last finished tasks read once (at most ``finished_cache_size``
        and an eighth of ``finished_cache_bytes``, ``_NOTED_BYTES`` each): a finished
        record is kept when it is read again."""
        self._deletions = 0
        """How many ``delete`` calls began (a read that waited on the worker while one
        ran does not keep what it read)."""
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        """Read-only connection for ``get`` on the caller's thread (None: in memory)."""

    async def _run(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``fn(connection)`` on the store's thread."""
        executor = self._executor
        if executor is None:
            raise RuntimeError("SQLiteTaskStore is not open")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(executor, self._call, fn)

    def _call(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """Thread side of ``_run``."""
        conn = self._conn
        if conn is None:
            conn = sqlite3.connect(self._path, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            conn.executescript(_SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(tasks)")}
            if "kept" not in columns:
                conn.execute(
                    "ALTER TABLE tasks ADD COLUMN kept INTEGER NOT NULL DEFAULT 0"
                )
            conn.executescript(_USAGE_SCHEMA)
            _install_counts(conn)
            self._conn = conn
        return fn(conn)

    def _remember(self, record: TaskRecord, charge: int) -> None:
        """Cache an unfinished record (``charge``: the ``_parsed_bytes`` of its JSON),
        evicting the least recently written beyond ``cache_size`` records and
        ``cache_bytes``; a record above 1/64 of ``cache_bytes`` is not kept, and a
        finished one leaves (finished ones go to ``_keep_finished``)."""
        task_id = record.task_id
        self._forget_unfinished(task_id)
        if (
            record.is_terminal
            or charge > self._cache_bytes // 64
            or self._cache_size <= 0
        ):
            return
        self._cache[task_id] = (record, charge)
        self._cache_total += charge
        while (
            len(self._cache) > self._cache_size or self._cache_total > self._cache_bytes
        ):
            _, (_, evicted) = self._cache.popitem(last=False)
            self._cache_total -= evicted

    def _forget_unfinished(self, task_id: str) -> None:
        """Drop an unfinished record from the cache, if kept."""
        kept = self._cache.pop(task_id, None)
        if kept is not None:
            self._cache_total -= kept[1]

    def _keep_finished(self, record: TaskRecord, body: str) -> None:
        """Keep a finished record read from the file (``body`` is its JSON column)
        the second time it is read, evicting the least recently used beyond the
        bounds. The first read only notes its ID: reads spread over many tasks, each
        read once, would otherwise replace a kept record at every read (its parsing,
        an eviction, and a record that lives long enough for the cyclic garbage
        collector to walk it), for nothing."""
        task_id = record.task_id
        if self._read_once.pop(task_id, None) is None:
            self._read_once[task_id] = True
            noted = min(self._finished_size, self._finished_bytes // 8 // _NOTED_BYTES)
            while len(self._read_once) > noted:
                self._read_once.popitem(last=False)
            return
        if record.is_expired(time.time()):
            return
        charge = _parsed_bytes(body)
        if charge > self._finished_bytes // 64 or self._finished_size <= 0:
            return
        self._forget_finished(task_id)
        self._finished[task_id] = (record, charge, time.monotonic())
        self._finished_total += charge
        while (
            len(self._finished) > self._finished_size
            or self._finished_total > self._finished_bytes
        ):
            _, (_, evicted, _) = self._finished.popitem(last=False)
            self._finished_total -= evicted

    def _forget_finished(self, task_id: str) -> None:
        """Drop a finished record from the cache, if kept."""
        kept = self._finished.pop(task_id, None)
        if kept is not None:
            self._finished_total -= kept[1]

    def _cached_finished(self, task_id: str) -> tuple[bool, TaskRecord | None]:
        """Whether the finished cache answers for ``task_id``, and its answer: the kept
        record while it is unexpired and still stored, None once the file no longer
        holds the task. Not answered: the row must be read."""
        kept = self._finished.get(task_id)
        if kept is None:
            return False, None
        record, charge, checked = kept
        if record.is_expired(time.time()):
            self._forget_finished(task_id)
            return False, None
        reader = self._reader
        now = time.monotonic()
        if reader is not None and now - checked >= self._finished_recheck_s:
            # another process may have deleted it (this store's deletes drop it here)
            try:
                rows = reader.execute(_SEQ_SQL, (task_id,)).fetchall()
            except sqlite3.OperationalError:  # the file is busy: read on the thread
                return False, None
            if not rows or rows[0][0] != record.seq:
                self._forget_finished(task_id)
                return not rows, None
            self._finished[task_id] = (record, charge, now)
        # else checked within the interval, or a database private to this store (only
        # ``delete`` removes a row, and it drops the record here)
        self._finished.move_to_end(task_id)
        return True, record

    async def open(self) -> None:
        """Start the worker thread and create the schema."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="sqlite-task-store"
            )
        await self._run(lambda conn: None)
        if self._reader is None and not _in_memory(self._path):
            # timeout=0: a busy file raises at once and the read goes to the thread
            reader = sqlite3.connect(self._path, timeout=0, check_same_thread=False)
            reader.execute("PRAGMA query_only=ON")
            self._reader = reader

    async def close(self) -> None:
        """Close the connection and stop the worker thread."""
        if self._executor is None:
            return

        def shut(conn: sqlite3.Connection) -> None:
            conn.close()

        if self._reader is not None:
            self._reader.close()
            self._reader = None
        await self._run(shut)
        self._conn = None
        self._executor.shutdown(wait=True)
        self._executor = None
        self._cache.clear()
        self._cache_total = 0
        self._finished.clear()
        self._finished_total = 0
        self._read_once.clear()

    async def create(
        self, record: TaskRecord, *, quota: Quota | None = None
    ) -> TaskRecord:
        """Insert a new task and commit; return it with ``seq`` assigned.

        With ``quota``, the counts are checked in the same write transaction as the
        insert (``BEGIN IMMEDIATE``: other processes on the file wait for it), which
        raises ``LimitExceeded`` and stores nothing when a limit is reached.
        """
        owner_key = _owner_key(record.owner)

        def insert(conn: sqlite3.Connection) -> tuple[int, int]:
            body = _body(record)
            conn.execute("BEGIN IMMEDIATE")
            try:
                if quota is not None:
                    counts = {
                        row[0]: row[1:]
                        for row in conn.execute(
                            "SELECT owner_key, active, finished, kept FROM counts"
                            " WHERE owner_key IN ('*', ?)",
                            (owner_key,),
                        )
                    }
                    active, finished, kept = counts.get(owner_key, (0, 0, 0))
                    everything = counts.get("*", (0, 0, 0))
                    quota.check(active, finished, kept, everything[0] + everything[1])
                cursor = conn.execute(
                    "INSERT INTO tasks (task_id, owner, status, expires_at, body, kept)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        record.task_id,
                        record.owner,
                        record.status,
                        record.expires_at,
                        body,
                        kept_bytes(record),
                    ),
                )
                conn.commit()
            except BaseException:
                conn.rollback()
                raise
            seq = cursor.lastrowid
            if seq is None:
                raise RuntimeError("SQLite did not report the new row id")
            return seq, _parsed_bytes(body)

        seq, charge = await self._run(insert)
        stored = replace(record, seq=seq)
        self._remember(stored, charge)
        return stored

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task with this ID, or None (served from a cache when possible, else
        read on this thread; see the class)."""
        cached = self._cache.get(task_id)
        if cached is not None:
            return cached[0]
        answered, finished = self._cached_finished(task_id)
        if answered:
            return finished

        def select(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            # fetchall: the statement runs to its end, so no read stays open
            return conn.execute(_GET_SQL, (task_id,)).fetchall()

        reader = self._reader
        rows: list[tuple[Any, ...]] | None = None
        if reader is not None:
            try:
                rows = select(reader)
            except sqlite3.OperationalError:  # the file is busy: wait on the thread
                rows = None
        deletions = self._deletions
        if rows is None:
            rows = await self._run(select)
        if not rows:
            return None
        record = _record(rows[0])
        body: str = rows[0][4]
        if record.is_terminal:
            self._forget_unfinished(task_id)
            if deletions == self._deletions:
                self._keep_finished(record, body)
        else:
            self._remember(record, _parsed_bytes(body))
        return record

    async def put(self, record: TaskRecord) -> None:
        """Replace the stored state of an existing, unfinished task and commit.

        A missing task is not created and a terminal one never changes.
        """

        def update(conn: sqlite3.Connection) -> tuple[int, int]:
            body = _body(record)
            with conn:
                cursor = conn.execute(
                    "UPDATE tasks SET status = ?, expires_at = ?, body = ?, kept = ?"
                    " WHERE task_id = ?"
                    f" AND status NOT IN ({_TERMINAL_SQL})",
                    (
                        record.status,
                        record.expires_at,
                        body,
                        kept_bytes(record),
                        record.task_id,
                    ),
                )
            return cursor.rowcount, _parsed_bytes(body)

        written, charge = await self._run(update)
        if written:
            self._remember(record, charge)
        else:
            self._forget_unfinished(record.task_id)

    async def transition(
        self,
        task_id: str,
        allowed_from: frozenset[str],
        record: TaskRecord,
        *,
        expected_updated_at: float | None = None,
    ) -> bool:
        """Store ``record`` only if the task is now in one of ``allowed_from``; commit.

        With ``expected_updated_at`` the stored record must also still have that
        ``updated_at``. The checks and the write are one ``UPDATE`` statement. A
        missing task is not created and a terminal one never changes. Returns
        whether the record was written.
        """
        if record.task_id != task_id:
            raise ValueError(f"record is for task {record.task_id!r}, not {task_id!r}")
        return (
            await self.transition_many([(allowed_from, record, expected_updated_at)])
        )[0]

    async def transition_many(
        self, changes: Sequence[tuple[frozenset[str], TaskRecord, float | None]]
    ) -> list[bool]:
        """``transition`` for each ``(allowed_from, record, expected_updated_at)``, all
        in one transaction (one commit); returns whether each record was written."""
        statements: list[tuple[str, list[Any]] | None] = []
        for allowed_from, record, expected_updated_at in changes:
            statuses = sorted(allowed_from - TERMINAL_STATUSES)
            if not statuses:
                statements.append(None)
                continue
            marks = ", ".join("?" for _ in statuses)
            sql = (
                "UPDATE tasks SET status = ?, expires_at = ?, body = ?, kept = ?"
                f" WHERE task_id = ? AND status IN ({marks})"
            )
            values: list[Any] = [
                record.status,
                record.expires_at,
                _body(record),
                kept_bytes(record),
                record.task_id,
                *statuses,
            ]
            if expected_updated_at is not None:
                # both sides parsed from the same JSON text, so equal values compare
                # equal
                sql += " AND json_extract(body, '$.updated_at') = json_extract(?, '$')"
                values.append(json.dumps(expected_updated_at))
            statements.append((sql, values))
        if not any(statements):
            return [False] * len(statements)

        def update(conn: sqlite3.Connection) -> list[bool]:
            written: list[bool] = []
            with conn:
                for statement in statements:
                    written.append(
                        statement is not None and conn.execute(*statement).rowcount > 0
                    )
            return written

        written = await self._run(update)
        for (_, record, _), statement, stored in zip(
            changes, statements, written, strict=True
        ):
            if statement is None:
                continue
            if stored:
                self._remember(record, _parsed_bytes(statement[1][2]))
            else:
                self._forget_unfinished(record.task_id)
        return written

    async def delete(self, task_ids: list[str]) -> None:
        """Forget these tasks and commit."""
        if not task_ids:
            return
        self._deletions += 1
        for task_id in task_ids:
            self._forget_finished(task_id)

        def remove(conn: sqlite3.Connection) -> None:
            with conn:
                conn.executemany(
                    "DELETE FROM tasks WHERE task_id = ?", [(t,) for t in task_ids]
                )

        await self._run(remove)
        for task_id in task_ids:
            self._forget_unfinished(task_id)
            self._forget_finished(task_id)

    async def list_tasks(
        self, owner: str | None, after_seq: int, limit: int
    ) -> list[TaskRecord]:
        """Up to ``limit`` tasks of ``owner`` with ``seq > after_seq``, in ``seq``
        order."""

        def select(conn: sqlite3.Connection) -> list[TaskRecord]:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM tasks WHERE owner IS ? AND seq > ?"
                " ORDER BY seq LIMIT ?",
                (owner, after_seq, limit),
            ).fetchall()
            return [_record(row) for row in rows]

        return await self._run(select)

    async def count_active(self, owner: str | None) -> int:
        """How many non-terminal tasks ``owner`` has."""
        owner_key = _owner_key(owner)

        def count(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT active FROM counts WHERE owner_key = ?", (owner_key,)
            ).fetchone()
            return 0 if row is None else int(row[0])

        return await self._run(count)

    async def usage(self, owner: str | None) -> tuple[int, int]:
        """How many finished tasks ``owner`` has, and their ``kept_bytes`` in total."""
        owner_key = _owner_key(owner)

        def total(conn: sqlite3.Connection) -> tuple[int, int]:
            row = conn.execute(
                "SELECT finished, kept FROM counts WHERE owner_key = ?", (owner_key,)
            ).fetchone()
            return (0, 0) if row is None else (int(row[0]), int(row[1]))

        return await self._run(total)

    async def expired(self, now: float) -> list[str]:
        """IDs of the tasks whose TTL has elapsed at ``now``."""

        def select(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT task_id FROM tasks WHERE expires_at IS NOT NULL"
                " AND expires_at <= ?",
                (now,),
            ).fetchall()
            return [str(row[0]) for row in rows]

        return await self._run(select)

    async def unfinished(self) -> list[TaskRecord]:
        """Every task that is not terminal."""

        def select(conn: sqlite3.Connection) -> list[TaskRecord]:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM tasks"
                f" WHERE status NOT IN ({_TERMINAL_SQL}) ORDER BY seq"
            ).fetchall()
            return [_record(row) for row in rows]

        return await self._run(select)
