"""The task stores (memory and SQLite) behind both revisions, and crash recovery."""

from __future__ import annotations

import sqlite3
import time
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

from .conftest import ext_message, result_of

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
    store = SQLiteTaskStore(path)
    await store.open()
    try:
        await store.create(record("a"))
        done = record("a", status="completed", result={"content": []})
        await store.put(done)
        hops: list[object] = []

        async def no_hop(fn: object) -> None:
            hops.append(fn)
            raise AssertionError("get went to the worker thread")

        monkeypatch.setattr(store, "_run", no_hop)
        writer = sqlite3.connect(path, isolation_level=None)
        try:
            writer.execute("BEGIN IMMEDIATE")
            writer.execute("UPDATE tasks SET status = 'failed' WHERE task_id = 'a'")
            got = await store.get("a")  # the uncommitted write is not seen
            assert got is not None and got.status == "completed"
            assert got.result == {"content": []}
            writer.execute("COMMIT")
            got = await store.get("a")  # committed: seen at once
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
    """After a crash, unfinished tasks are failed with a clear error instead of staying working."""
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
    """With several servers on one store, a starting server must not fail others' tasks."""
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
