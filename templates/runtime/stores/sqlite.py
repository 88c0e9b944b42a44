"""``SQLiteTaskStore``: the tasks in one SQLite file (the embedded default).

It uses the standard library ``sqlite3`` module in WAL mode, runs every write and
every query over many rows on one dedicated worker thread so the event loop does not
wait on them (a ``get`` by task ID reads in place, see the class), and commits before
a write returns, so a task is durable before the server answers with
``CreateTaskResult``. Its record caches are in ``sqlite_cache``; the record's JSON
column is the stores' one codec (``codec``).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, TypeVar

from ..protocol import TERMINAL_STATUSES
from . import codec
from .base import Quota, TaskRecord
from .codec import kept_bytes
from .sqlite_cache import FinishedCache, UnfinishedCache, parsed_bytes

__all__ = ["SQLiteTaskStore"]

_TERMINAL_SQL = ", ".join(
    "'" + status.replace("'", "''") + "'" for status in sorted(TERMINAL_STATUSES)
)
"""The terminal statuses as a SQL list of string literals."""

_T = TypeVar("_T")

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
"""The ``counts`` row of a task's owner (``codec.owner_key`` in SQL): ``-`` for no
owner, ``=`` followed by the principal otherwise, so that no principal is ``*``."""

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


def _body(record: TaskRecord) -> str:
    """The JSON column holding the fields that are never queried."""
    return codec.encode(record)


def _record(row: tuple[Any, ...]) -> TaskRecord:
    """Rebuild a record from ``SELECT seq, task_id, owner, status, body``."""
    seq, task_id, owner, status, body = row
    return codec.decode(body, status=status, seq=seq, identity=(task_id, owner))


_COLUMNS = "seq, task_id, owner, status, body"

_GET_SQL = f"SELECT {_COLUMNS} FROM tasks WHERE task_id = ?"


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
    record's JSON, ``sqlite_cache.parsed_bytes``; a record above 1/64 of that is not
    kept); that cache assumes this process is the only writer of the file.

    Finished records never change (no write leaves a terminal status; the result and
    error are fixed), so the last ones read twice (the tasks clients poll for their
    results; not those read once, as when reads are spread over many tasks) are kept
    as well, bounded by ``finished_cache_size`` records and
    ``finished_cache_bytes`` of memory (estimated the same way; a record above 1/64
    of that is not kept). The IDs of the finished tasks read once, which that takes
    noting, are bounded too: at most ``finished_cache_size`` of them, and an eighth
    of ``finished_cache_bytes`` (``sqlite_cache.NOTED_BYTES`` each). So the caches
    hold at most about ``cache_bytes + finished_cache_bytes * 9 / 8``, whatever the
    number of tasks in the file. Such a record is
    served only while its TTL has not run out and while the file still holds it. This
    store's own ``delete`` drops it at once; a deletion by another process (the server
    itself deletes only tasks whose TTL ran out, which are never served from here
    anyway) is seen within ``finished_recheck_s``: a kept record is checked against the
    file again (an index-only lookup of its ``seq``, ``FinishedCache.lookup``, instead
    of reading and parsing the row) when it is served that long after its last check.
    ``0`` checks on every read. A finished task's row must therefore never be changed
    in place outside this class (its writes never do). Without a second connection
    (an in-memory database, private to this store) no check is needed.

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
        self._cache = UnfinishedCache(cache_size, cache_bytes)
        """Unfinished records this store wrote last."""
        self._finished = FinishedCache(
            finished_cache_size, finished_cache_bytes, finished_recheck_s
        )
        """Finished records read twice."""
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
        self._finished.clear()

    async def create(
        self, record: TaskRecord, *, quota: Quota | None = None
    ) -> TaskRecord:
        """Insert a new task and commit; return it with ``seq`` assigned.

        With ``quota``, the counts are checked in the same write transaction as the
        insert (``BEGIN IMMEDIATE``: other processes on the file wait for it), which
        raises ``LimitExceeded`` and stores nothing when a limit is reached.
        """
        owner_key = codec.owner_key(record.owner)

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
            return seq, parsed_bytes(body)

        seq, charge = await self._run(insert)
        stored = replace(record, seq=seq)
        self._cache.remember(stored, charge)
        return stored

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task with this ID, or None (served from a cache when possible, else
        read on this thread; see the class)."""
        cached = self._cache.get(task_id)
        if cached is not None:
            return cached
        answered, finished = self._finished.lookup(task_id, self._reader)
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
            self._cache.forget(task_id)
            if deletions == self._deletions:
                self._finished.keep(record, body)
        else:
            self._cache.remember(record, parsed_bytes(body))
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
            return cursor.rowcount, parsed_bytes(body)

        written, charge = await self._run(update)
        if written:
            self._cache.remember(record, charge)
        else:
            self._cache.forget(record.task_id)

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
                self._cache.remember(record, parsed_bytes(statement[1][2]))
            else:
                self._cache.forget(record.task_id)
        return written

    async def delete(self, task_ids: list[str]) -> None:
        """Forget these tasks and commit."""
        if not task_ids:
            return
        self._deletions += 1
        for task_id in task_ids:
            self._finished.forget(task_id)

        def remove(conn: sqlite3.Connection) -> None:
            with conn:
                conn.executemany(
                    "DELETE FROM tasks WHERE task_id = ?", [(t,) for t in task_ids]
                )

        await self._run(remove)
        for task_id in task_ids:
            self._cache.forget(task_id)
            self._finished.forget(task_id)

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
        owner_key = codec.owner_key(owner)

        def count(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT active FROM counts WHERE owner_key = ?", (owner_key,)
            ).fetchone()
            return 0 if row is None else int(row[0])

        return await self._run(count)

    async def usage(self, owner: str | None) -> tuple[int, int]:
        """How many finished tasks ``owner`` has, and their ``kept_bytes`` in total."""
        owner_key = codec.owner_key(owner)

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
