"""The task stores (memory and SQLite) behind both revisions, and crash recovery."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mcp_tasks_ext import stores as ext_stores
from mcp_tasks_ext.server import RequestInfo, TasksServer
from mcp_tasks_ext.stores import (
    InMemoryTaskStore,
    SQLiteTaskStore,
    TaskRecord,
    TaskStore,
)
from mcp_tasks_ext.stores import sqlite as ext_sqlite
from mcp_tasks_ext.stores import sqlite_cache as ext_sqlite_cache
from tests.support.servers import ext_message, result_of

pytestmark = pytest.mark.anyio


def record(
    task_id: str, owner: str | None = "alice", status: str = "working", **kw: Any
) -> TaskRecord:
    """A task record created now."""
    now = time.time()
    fields: dict[str, Any] = dict(
        task_id=task_id,
        owner=owner,
        tool="t",
        status=status,
        created_at=now,
        updated_at=now,
        ttl_ms=60_000,
    )
    fields.update(kw)
    return TaskRecord(**fields)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> TaskStore:
    """Each store implementation."""
    if request.param == "memory":
        return InMemoryTaskStore()
    return SQLiteTaskStore(str(tmp_path / "tasks.sqlite3"))


async def test_store_roundtrip(store: TaskStore) -> None:
    await store.open()
    try:
        first = await store.create(
            record("a", input_requests={"k": {"method": "roots/list"}})
        )
        second = await store.create(record("b"))
        await store.create(record("c", owner="bob"))
        assert first.seq < second.seq
        assert await store.get("a") == first
        assert await store.get("zzz") is None
        await store.put(
            TaskRecord(
                **{**_fields(first), "status": "completed", "result": {"content": []}}
            )
        )
        assert (await store.get("a")).status == "completed"  # type: ignore[union-attr]
        assert [r.task_id for r in await store.list_tasks("alice", 0, 10)] == ["a", "b"]
        assert [r.task_id for r in await store.list_tasks("alice", first.seq, 10)] == [
            "b"
        ]
        assert [r.task_id for r in await store.list_tasks("alice", 0, 1)] == ["a"]
        assert await store.count_active("alice") == 1
        assert [r.task_id for r in await store.unfinished()] == ["b", "c"]
        assert await store.expired(time.time() + 61) == ["a", "b", "c"]
        assert await store.expired(time.time()) == []
        await store.delete(["a", "c"])
        assert await store.get("a") is None
        assert [r.task_id for r in await store.unfinished()] == ["b"]
    finally:
        await store.close()


def _fields(r: TaskRecord) -> dict[str, Any]:
    return {name: getattr(r, name) for name in r.__dataclass_fields__}


async def test_sqlite_store_survives_reopening(tmp_path: Path) -> None:
    path = str(tmp_path / "tasks.sqlite3")
    first = SQLiteTaskStore(path)
    await first.open()
    created = await first.create(
        record("a", ttl_ms=None, input_requests={"k": {"method": "x"}})
    )
    await first.close()
    second = SQLiteTaskStore(path)
    await second.open()
    try:
        assert await second.get("a") == created
    finally:
        await second.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_sqlite_file_without_counts_is_counted_when_opened(
    tmp_path: Path,
) -> None:
    """A file written before the ``counts`` table existed gets it, counted from its
    tasks, and its triggers from then on."""
    path = str(tmp_path / "tasks.sqlite3")
    first = SQLiteTaskStore(path)
    await first.open()
    result = {"content": [{"type": "text", "text": "x" * 300}]}
    for n in range(3):
        await first.create(record(f"live{n}"))
    await first.create(record("done", status="completed", result=result))
    await first.create(record("theirs", owner=None, status="failed", error={"m": 1}))
    await first.close()
    with sqlite3.connect(path) as conn:  # as the previous version left the file
        conn.execute("DROP TABLE counts")
        for trigger in ("insert", "update", "delete"):
            conn.execute(f"DROP TRIGGER tasks_count_{trigger}")
    second = SQLiteTaskStore(path)
    await second.open()
    try:
        kept = ext_stores.kept_bytes(record("done", status="completed", result=result))
        assert await second.count_active("alice") == 3
        assert await second.usage("alice") == (1, kept)
        assert await second.usage(None) == (1, len('[null,{"m":1}]'))
        with pytest.raises(ext_stores.LimitExceeded) as refused:
            await second.create(record("x"), quota=ext_stores.Quota(max_tasks=5))
        assert refused.value.current == 5
        live = await second.get("live0")
        assert live is not None
        await second.put(replace(live, status="cancelled"))  # the triggers are back
        await second.delete(["done"])
        assert await second.count_active("alice") == 2
        assert await second.usage("alice") == (1, len("[null,null]"))
    finally:
        await second.close()


async def test_sqlite_store_runs_off_the_event_loop(tmp_path: Path) -> None:
    import threading

    store = SQLiteTaskStore(str(tmp_path / "tasks.sqlite3"))
    await store.open()
    threads: list[str] = []
    try:
        await store._run(lambda conn: threads.append(threading.current_thread().name))
    finally:
        await store.close()
    assert threads[0].startswith("sqlite-task-store")
    assert threads[0] != threading.current_thread().name


async def test_sqlite_get_reads_in_place_beside_a_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``get`` that misses the cache reads committed state on the caller's thread,
    also while another connection holds the write lock, and never hops to the worker."""
    path = str(tmp_path / "tasks.sqlite3")
    store = SQLiteTaskStore(path, finished_recheck_s=0)
    await store.open()
    try:
        await store.create(record("a"))
        done = record("a", status="completed", result={"content": []})
        await store.put(done)
        await store.create(record("b"))
        store._cache.clear()  # type: ignore[attr-defined]
        for _ in range(2):  # read twice: kept
            assert await store.get("a") is not None
        hops: list[object] = []

        async def no_hop(fn: object) -> None:
            hops.append(fn)
            raise AssertionError("get went to the worker thread")

        monkeypatch.setattr(store, "_run", no_hop)
        writer = sqlite3.connect(path, isolation_level=None)
        try:
            writer.execute("BEGIN IMMEDIATE")
            writer.execute("UPDATE tasks SET status = 'failed' WHERE task_id = 'b'")
            writer.execute("DELETE FROM tasks WHERE task_id = 'a'")
            got = await store.get("a")  # the uncommitted writes are not seen
            assert got is not None and got.status == "completed"
            assert got.result == {"content": []}
            got = await store.get("b")
            assert got is not None and got.status == "working"
            store._cache.clear()  # type: ignore[attr-defined]
            writer.execute("COMMIT")
            assert await store.get("a") is None  # committed: seen at once
            got = await store.get("b")
            assert got is not None and got.status == "failed"
            assert await store.get("missing") is None
        finally:
            writer.close()
        assert hops == []
    finally:
        monkeypatch.undo()
        await store.close()


async def test_sqlite_get_goes_to_the_worker_when_the_file_is_busy(
    tmp_path: Path,
) -> None:
    class Busy:
        def execute(self, *args: object) -> object:
            raise sqlite3.OperationalError("database is locked")

        def close(self) -> None:
            pass

    store = SQLiteTaskStore(str(tmp_path / "tasks.sqlite3"))
    await store.open()
    try:
        await store.create(record("a"))
        await store.put(record("a", status="completed"))
        store._reader = Busy()  # type: ignore[assignment]
        got = await store.get("a")
        assert got is not None and got.status == "completed"
    finally:
        await store.close()


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the task ID of every row ``SQLiteTaskStore`` parses into a record."""
    parsed: list[str] = []
    parse = ext_sqlite._record

    def counting(row: tuple[Any, ...]) -> TaskRecord:
        parsed.append(row[1])
        return parse(row)

    monkeypatch.setattr(ext_sqlite, "_record", counting)
    return parsed


@pytest.mark.parametrize("in_memory", [False, True])
async def test_sqlite_keeps_the_finished_records_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_memory: bool
) -> None:
    """A finished record never changes: once read twice, polling it again does not
    read its row."""
    store = SQLiteTaskStore(":memory:" if in_memory else str(tmp_path / "t.sqlite3"))
    await store.open()
    try:
        await store.create(record("a"))
        done = record("a", status="completed", result={"content": []})
        await store.put(done)
        parsed = _count_parses(monkeypatch)
        for _ in range(4):
            assert await store.get("a") == replace(done, seq=1)
        assert parsed == ["a", "a"]
        await store.delete(["a"])
        assert await store.get("a") is None
    finally:
        await store.close()


@pytest.mark.parametrize("in_memory", [False, True])
async def test_sqlite_kept_finished_record_is_never_served_once_expired(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_memory: bool
) -> None:
    """Once its TTL ran out a kept record is dropped: the file answers (until the
    sweep deletes the task) and the record is not kept again."""
    store = SQLiteTaskStore(":memory:" if in_memory else str(tmp_path / "t.sqlite3"))
    await store.open()
    try:
        created = time.time()
        await store.create(
            record("a", status="completed", created_at=created, ttl_ms=1_000)
        )
        parsed = _count_parses(monkeypatch)
        for _ in range(3):
            assert await store.get("a") is not None
        assert parsed == ["a", "a"]

        class Later:
            @staticmethod
            def time() -> float:
                return created + 1.0

        monkeypatch.setattr(ext_sqlite_cache, "time", Later)
        got = await store.get("a")
        assert got is not None and got.is_expired(Later.time())
        assert await store.get("a") is not None
        assert parsed == ["a"] * 4  # read from the file each time
        assert await store.expired(Later.time()) == ["a"]
        await store.delete(["a"])
        assert await store.get("a") is None
    finally:
        await store.close()


async def test_sqlite_kept_finished_record_follows_other_store_objects(
    tmp_path: Path,
) -> None:
    """Another process deleting a kept finished task, or storing a new task under
    its ID, is seen by the next ``get``."""
    path = str(tmp_path / "t.sqlite3")
    one, two = SQLiteTaskStore(path, finished_recheck_s=0), SQLiteTaskStore(path)
    await one.open()
    await two.open()
    try:
        kept: Any = one._finished.records  # type: ignore[attr-defined]
        for _ in range(2):
            await two.create(record("a", status="completed", result={"n": 1}))
            for _ in range(2):
                assert (await one.get("a")).result == {"n": 1}  # type: ignore[union-attr]
            assert "a" in kept
            await two.delete(["a"])
            assert await one.get("a") is None
        again = await two.create(record("a", status="failed", error={"code": 1}))
        for _ in range(3):
            assert await one.get("a") == again
    finally:
        await one.close()
        await two.close()


async def test_sqlite_kept_finished_record_is_checked_again_after_the_recheck_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default a kept record is checked against the file at most every
    ``finished_recheck_s`` (polling one finished task costs no lookup per read); a
    deletion by another process is seen once that long has passed, one by this store
    at once."""
    path = str(tmp_path / "t.sqlite3")
    one, two = SQLiteTaskStore(path, finished_recheck_s=0.5), SQLiteTaskStore(path)
    await one.open()
    await two.open()
    clock = [time.monotonic()]

    class Clock:
        @staticmethod
        def time() -> float:
            return time.time()

        @staticmethod
        def monotonic() -> float:
            return clock[0]

    monkeypatch.setattr(ext_sqlite_cache, "time", Clock)
    try:
        for task_id in ("a", "b"):
            await two.create(record(task_id, status="completed", result={"n": 1}))
            for _ in range(2):  # read twice: kept
                assert await one.get(task_id) is not None
        lookups: list[str] = []
        reader = one._reader  # type: ignore[attr-defined]
        one._reader = _Tracing(reader, lookups)  # type: ignore[attr-defined]
        await two.delete(["a"])
        assert await one.get("a") is not None  # within the interval: still kept
        assert lookups == []
        clock[0] += 0.5
        assert await one.get("a") is None  # checked again: deleted elsewhere
        assert await one.get("b") is not None  # checked again: still there
        assert len(lookups) == 2
        clock[0] += 0.25
        assert await one.get("b") is not None
        assert len(lookups) == 2  # checked a quarter second ago
        await one.delete(["b"])
        assert await one.get("b") is None  # this store's own delete: at once
        one._reader = reader  # type: ignore[attr-defined]
    finally:
        await one.close()
        await two.close()


class _Tracing:
    """A connection that records the statements it runs."""

    def __init__(self, conn: Any, seen: list[str]) -> None:
        self.conn = conn
        self.seen = seen

    def execute(self, sql: str, *args: Any) -> Any:
        self.seen.append(sql)
        return self.conn.execute(sql, *args)

    def close(self) -> None:
        self.conn.close()


async def test_sqlite_kept_finished_record_is_checked_on_the_worker_when_busy(
    tmp_path: Path,
) -> None:
    class Busy:
        def execute(self, *args: object) -> object:
            raise sqlite3.OperationalError("database is locked")

        def close(self) -> None:
            pass

    store = SQLiteTaskStore(str(tmp_path / "tasks.sqlite3"), finished_recheck_s=0)
    await store.open()
    try:
        done = await store.create(record("a", status="completed"))
        for _ in range(2):  # read twice: kept
            assert await store.get("a") == done
        assert "a" in store._finished.records  # type: ignore[attr-defined]
        reader = store._reader  # type: ignore[attr-defined]
        store._reader = Busy()  # type: ignore[assignment]
        try:
            assert await store.get("a") == done
            await store._run(  # type: ignore[attr-defined]
                lambda conn: conn.execute("DELETE FROM tasks") and conn.commit()
            )
            assert await store.get("a") is None
        finally:
            store._reader = reader
    finally:
        await store.close()


async def test_sqlite_finished_cache_is_bounded_in_records_and_bytes(
    tmp_path: Path,
) -> None:
    store = SQLiteTaskStore(
        str(tmp_path / "t.sqlite3"),
        finished_cache_size=3,
        finished_cache_bytes=64 * 4096,
    )
    await store.open()
    try:
        kept: Any = store._finished.records  # type: ignore[attr-defined]
        read_once: Any = store._finished.read_once  # type: ignore[attr-defined]
        for n in range(5):  # read once: only the IDs are noted, at most 3
            await store.create(record(f"t{n}", status="completed", result={"n": n}))
            assert await store.get(f"t{n}") is not None
        assert not kept and list(read_once) == ["t2", "t3", "t4"]
        for n in range(5):
            assert await store.get(f"t{n}") is not None
        assert not kept and list(read_once) == ["t2", "t3", "t4"]
        for n in range(2, 5):  # read again: kept
            assert await store.get(f"t{n}") is not None
        assert list(kept) == ["t2", "t3", "t4"]
        assert await store.get("t2") is not None  # t2 is now the most recent
        await store.get("t0")
        await store.get("t0")  # t0 kept, t3 evicted
        assert list(kept) == ["t4", "t2", "t0"]
        # a record above 1/64 of the bytes is never kept
        big = {"text": "x" * 4096}
        await store.create(record("big", status="completed", result=big))
        for _ in range(3):
            assert (await store.get("big")).result == big  # type: ignore[union-attr]
        assert "big" not in kept
        # the bytes bound (an estimate from the JSON) evicts the least recently used
        bound = 64 * 4_000
        store._finished.size = 1_000  # type: ignore[attr-defined]
        store._finished.max_bytes = bound  # type: ignore[attr-defined]
        for n in range(120):
            await store.create(
                record(f"m{n}", status="completed", result={"t": "y" * 700})
            )
            for _ in range(2):
                assert await store.get(f"m{n}") is not None
        total = store._finished.total  # type: ignore[attr-defined]
        charges = [charge for _, charge, _ in kept.values()]
        assert total == sum(charges) and bound - max(charges) < total <= bound
        assert 2_000 < max(charges) <= 4_000
        assert 40 < len(kept) < 120 and "m119" in kept and "m0" not in kept
        # unfinished tasks are not kept here
        await store.create(record("live"))
        store._cache.clear()  # type: ignore[attr-defined]
        assert await store.get("live") is not None
        assert "live" not in kept
        await store.close()
        assert not kept and store._finished.total == 0  # type: ignore[attr-defined]
        assert not read_once
    finally:
        await store.close()


async def test_sqlite_unfinished_cache_is_bounded_in_bytes(tmp_path: Path) -> None:
    """Unfinished tasks holding large input requests (or answers) are cached up to
    ``cache_bytes`` (16 MiB by default), not up to ``cache_size`` records whatever
    their size: 300 tasks of 100 KB each leave well under 300 * 100 KB in memory."""
    import gc
    import tracemalloc

    store = SQLiteTaskStore(str(tmp_path / "t.sqlite3"), synchronous="OFF")
    await store.open()
    try:
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for n in range(300):
                question = {"method": "elicitation/create", "params": {}}
                question["params"] = {"message": "x" * 100_000, "n": n}
                await store.create(record(f"big{n}", input_requests={"k": question}))
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert held < 24 * 1024 * 1024, f"{held} bytes held for 30 MB of tasks"
        kept: Any = store._cache.records  # type: ignore[attr-defined]
        total = store._cache.total  # type: ignore[attr-defined]
        assert total == sum(charge for _, charge in kept.values())
        assert 16 * 1024 * 1024 - 110_000 < total <= 16 * 1024 * 1024
        assert "big299" in kept and "big0" not in kept
        # every task still reads whole from the file
        first = await store.get("big0")
        assert (
            first is not None
            and len(first.input_requests["k"]["params"]["message"]) == 100_000
        )
        # a record above 1/64 of the bytes is not kept; a finished one leaves
        store._cache.max_bytes = 256 * 1024  # type: ignore[attr-defined]
        await store.create(
            record(
                "huge",
                input_requests={"k": {"method": "m", "params": {"t": "y" * 8192}}},
            )
        )
        assert "huge" not in kept
        live = await store.create(record("live"))
        assert "live" in kept
        await store.put(
            replace(live, status="completed", updated_at=live.updated_at + 1)
        )
        assert "live" not in kept
        await store.close()
        assert not kept and store._cache.total == 0  # type: ignore[attr-defined]
    finally:
        await store.close()


async def test_sqlite_transition_many_is_one_commit_of_checked_writes(
    tmp_path: Path,
) -> None:
    store = SQLiteTaskStore(str(tmp_path / "t.sqlite3"))
    await store.open()
    try:
        a = await store.create(record("a"))
        b = await store.create(record("b"))
        c = await store.create(record("c", status="completed"))
        later = a.updated_at + 1
        written = await store.transition_many(
            [
                (
                    frozenset({"working"}),
                    replace(a, status="failed", updated_at=later),
                    a.updated_at,
                ),
                (
                    frozenset({"working"}),
                    replace(b, status="failed", updated_at=later),
                    b.updated_at - 1,
                ),
                (
                    frozenset({"working", "completed"}),
                    replace(c, status="failed"),
                    None,
                ),
                (frozenset({"completed"}), replace(a, status="failed"), None),
            ]
        )
        assert written == [True, False, False, False]
        with sqlite3.connect(tmp_path / "t.sqlite3") as other:
            rows = dict(other.execute("SELECT task_id, status FROM tasks").fetchall())
        assert rows == {"a": "failed", "b": "working", "c": "completed"}
    finally:
        await store.close()


async def test_sqlite_store_in_memory_reads_on_the_worker() -> None:
    store = SQLiteTaskStore(":memory:")
    await store.open()
    try:
        assert store._reader is None
        await store.create(record("a"))
        await store.put(record("a", status="completed"))
        got = await store.get("a")
        assert got is not None and got.status == "completed"
    finally:
        await store.close()


async def test_recovery_fails_tasks_whose_worker_died(tmp_path: Path) -> None:
    """After a crash, unfinished tasks are failed with a clear error instead of
    staying working."""
    path = str(tmp_path / "tasks.sqlite3")
    crashed = SQLiteTaskStore(path)
    await crashed.open()
    await crashed.create(record("orphan", owner=None))
    await crashed.create(
        record("done", owner=None, status="completed", result={"content": []})
    )
    await crashed.close()  # what a dead process leaves on disk

    server = TasksServer("t", store=SQLiteTaskStore(path))
    async with server:
        orphan = result_of(
            await server.handle(
                ext_message("tasks/get", {"taskId": "orphan"}), RequestInfo()
            )
        )
        done = result_of(
            await server.handle(
                ext_message("tasks/get", {"taskId": "done"}), RequestInfo()
            )
        )
    assert orphan["status"] == "failed"
    assert orphan["error"]["code"] == -32603
    assert "worker stopped unexpectedly" in orphan["error"]["message"]
    assert orphan["statusMessage"] == orphan["error"]["message"]
    assert done["status"] == "completed"


async def test_default_store_is_sqlite() -> None:
    assert isinstance(TasksServer("t").store, ext_stores.SQLiteTaskStore)


async def test_recovery_can_be_turned_off_for_shared_stores(tmp_path: Path) -> None:
    """With several servers on one store, a starting server must not fail others'
    tasks."""
    path = str(tmp_path / "tasks.sqlite3")
    other = SQLiteTaskStore(path)
    await other.open()
    await other.create(record("running-elsewhere", owner=None))
    await other.close()
    server = TasksServer("t", store=SQLiteTaskStore(path), recover_orphans=False)
    async with server:
        task = result_of(
            await server.handle(
                ext_message("tasks/get", {"taskId": "running-elsewhere"}), RequestInfo()
            )
        )
    assert task["status"] == "working"


async def test_put_never_creates_nor_changes_a_terminal_task(store: TaskStore) -> None:
    """A put on a missing task stores nothing; a terminal task keeps its state."""
    await store.open()
    try:
        await store.put(record("ghost"))
        assert await store.get("ghost") is None
        done = await store.create(record("done", status="completed", result={"x": 1}))
        await store.put(TaskRecord(**{**_fields(done), "status": "working"}))
        assert await store.get("done") == done
        assert await store.count_active("alice") == 0
    finally:
        await store.close()
