"""Shutting down with tasks running: the server exits promptly and leaves no task
``working`` with nobody to finish it.

``TasksServer.close`` stops every worker at once; a tool that returns its result even
so completes its task, every other task still running is ``failed`` ("Server shut down
before the task finished"): in one write on the memory and SQLite stores, one by one
(within a bound) on Redis, whose replicas' lease check fails what is left.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import mcp_tasks_ext.redis_store as redis_ext
from mcp_tasks_ext.server import Limits, RequestInfo, TasksServer, ToolContext
from mcp_tasks_ext.stores import InMemoryTaskStore, SQLiteTaskStore, TaskRecord
from tests.support.procs import RedisHandle, free_port, start_redis
from tests.support.servers import example_server, ext_message, result_of

pytestmark = pytest.mark.anyio

SHUT_DOWN = "Server shut down before the task finished"
EXT_HEADERS = {
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "slow_compute",
}


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisHandle]:
    with start_redis() as handle:
        yield handle


async def populate(path: Path, count: int) -> None:
    """``count`` finished tasks of another principal in a SQLite file."""
    store = SQLiteTaskStore(str(path), synchronous="OFF")
    await store.open()
    now = time.time()
    result = {"content": [{"type": "text", "text": "old"}], "isError": False}
    try:
        for n in range(count):
            await store.create(
                TaskRecord(
                    task_id=f"{n:032x}",
                    owner="someone else",
                    tool="slow_compute",
                    status="completed",
                    created_at=now,
                    updated_at=now,
                    ttl_ms=3_600_000,
                    poll_interval_ms=200,
                    result=result,
                )
            )
    finally:
        await store.close()


async def test_sigterm_with_hundreds_of_running_tasks_exits_within_two_seconds(
    tmp_path: Path,
) -> None:
    """SIGTERM to the example server (SQLite, thousands of stored tasks, 600 running
    from six principals): the process exits within 2 s, and every running task is
    ``failed`` in the file with a clear message and error."""
    db = tmp_path / "tasks.sqlite3"
    await populate(db, 2_000)
    running: list[str] = []
    with example_server("server_ext", "--db", str(db), port=free_port()) as server:
        async with httpx.AsyncClient(timeout=30) as client:

            async def start_tasks(principal: int) -> None:
                headers = {**EXT_HEADERS, "authorization": f"user-{principal}"}
                for n in range(100):
                    message = ext_message(
                        "tools/call",
                        {"name": "slow_compute", "arguments": {"seconds": 600}},
                        request_id=n,
                    )
                    response = await client.post(
                        server.url, json=message, headers=headers
                    )
                    running.append(result_of(response.json())["taskId"])

            await asyncio.gather(*(start_tasks(principal) for principal in range(6)))
        started = time.monotonic()
        os.killpg(server.proc.pid, signal.SIGTERM)
        try:
            server.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running 10 s after SIGTERM:\n{server.log_tail()}")
        took = time.monotonic() - started
        log = server.log_tail()
    assert took < 2.0, f"exited {took:.2f} s after SIGTERM:\n{log}"
    assert "Traceback" not in log, log
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT task_id, status, body FROM tasks WHERE owner != 'someone else'"
        ).fetchall()
        kept = conn.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
    assert kept == 2_000 + len(running)
    assert sorted(row[0] for row in rows) == sorted(running)
    assert {row[1] for row in rows} == {"failed"}, (
        took,
        [r[1] for r in rows].count("working"),
        log,
    )
    import json

    for _, _, body in rows:
        task = json.loads(body)
        assert task["status_message"] == SHUT_DOWN
        assert task["error"] == {"code": -32603, "message": SHUT_DOWN}


def store_of(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    if kind == "memory":
        return InMemoryTaskStore()
    if kind == "sqlite":
        return SQLiteTaskStore(str(tmp_path / "tasks.sqlite3"))
    redis: RedisHandle = request.getfixturevalue("redis_server")
    return redis_ext.RedisTaskStore(redis.url, prefix=f"close-{uuid.uuid4().hex[:8]}:")


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_close_finishes_or_fails_every_running_task(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """``close`` stops every worker: a tool that returns a result when stopped
    completes its task, the others are failed with the shut-down message (on Redis
    too: ``close`` does not leave them to the other replicas' lease check), and a
    tool that ignores the stop does not hold the close up."""
    store = store_of(kind, tmp_path, request)
    server = TasksServer(
        "close", store=store, limits=Limits(max_active_tasks=1_000, lease_s=60)
    )
    started: list[str] = []
    stubborn_released = asyncio.Event()

    @server.tool()
    async def endless(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        started.append("endless")
        await asyncio.Event().wait()
        return "never"

    @server.tool()
    async def tidy(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        started.append("tidy")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return "partial result, saved when stopped"
        return "never"

    @server.tool()
    async def stubborn(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        started.append("stubborn")
        while not stubborn_released.is_set():
            try:
                await stubborn_released.wait()
            except asyncio.CancelledError:
                continue  # ignores being stopped
        return "late"

    await server.start()
    ids: dict[str, list[str]] = {"endless": [], "tidy": [], "stubborn": []}
    for name, count in (("endless", 200), ("tidy", 3), ("stubborn", 1)):
        for n in range(count):
            created = result_of(
                await server.handle(
                    ext_message(
                        "tools/call", {"name": name, "arguments": {}}, request_id=n
                    ),
                    RequestInfo(principal=f"p{n % 4}"),
                )
            )
            ids[name].append(created["taskId"])
    deadline = time.monotonic() + 10
    while len(started) < 204:
        assert time.monotonic() < deadline, started
        await asyncio.sleep(0.01)
    begun = time.monotonic()
    closing = asyncio.ensure_future(server.close())
    done, _ = await asyncio.wait({closing}, timeout=10)
    took = time.monotonic() - begun
    stubborn_released.set()  # whatever happened, let the stubborn tool end
    await closing
    assert done, "close() waited for a tool that ignores being stopped"
    assert took < 2.0, f"close took {took:.2f} s"
    await store.open()
    try:
        for name, task_ids in ids.items():
            for task_id in task_ids:
                record = await store.get(task_id)
                assert record is not None, (name, task_id)
                if name == "tidy":
                    assert record.status == "completed"
                    assert record.result is not None
                    assert "saved when stopped" in str(record.result)
                else:
                    assert (record.status, record.status_message) == (
                        "failed",
                        SHUT_DOWN,
                    ), (name, record)
                    assert record.error == {"code": -32603, "message": SHUT_DOWN}
    finally:
        await store.close()
