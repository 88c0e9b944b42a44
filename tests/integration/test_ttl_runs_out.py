"""A task whose worker still runs when its TTL runs out: the same rule on every store.

The task never goes from ``working`` straight to "not found": shortly before its TTL
runs out the server running it fails it ("The task's TTL ran out ..."), stops the
worker, and the failed task stays readable until the TTL has elapsed; then it is
unknown (``-32602``) and the sweeper deletes it. Checked on the memory, SQLite and
Redis stores, for both revisions (2025-11-25 asks for the TTL with ``task.ttl``; the
extension's server picks it, here through ``Limits.default_ttl_ms``).

Spec: S25 "Once ttl has elapsed, the receiver MAY delete the task ... whatever its
status"; XD "After that it MAY mark the task failed ... and later delete it". Failing
it before it expires keeps the terminal status visible to a client that polls.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcp_tasks_2025_11_25.redis_store as redis_2025
import mcp_tasks_2025_11_25.server as server_2025
import mcp_tasks_2025_11_25.stores as stores_2025
import mcp_tasks_ext.redis_store as redis_ext
import mcp_tasks_ext.server as server_ext
import mcp_tasks_ext.stores as stores_ext
from tests.support.procs import RedisHandle, start_redis

pytestmark = pytest.mark.anyio

TTL_MS = 1_500
"""Short, so the test is quick; the margin is then a third of it (0.5 s)."""

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisHandle]:
    with start_redis() as handle:
        yield handle


def new_store(kind: str, revision: str, tmp_path: Path, request: Any) -> Any:
    """A store of ``kind`` from the package of ``revision``."""
    stores: Any = stores_2025 if revision == "2025" else stores_ext
    if kind == "memory":
        return stores.InMemoryTaskStore()
    if kind == "sqlite":
        return stores.SQLiteTaskStore(str(tmp_path / "tasks.sqlite3"))
    redis: RedisHandle = request.getfixturevalue("redis_server")
    module: Any = redis_2025 if revision == "2025" else redis_ext
    return module.RedisTaskStore(redis.url, prefix=f"ttl-{uuid.uuid4().hex[:8]}:")


def rpc(method: str, params: dict[str, Any], revision: str) -> dict[str, Any]:
    """A request of ``revision`` (the extension's carries its ``_meta``)."""
    if revision == "ext":
        params = {**params, "_meta": META}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


@pytest.mark.parametrize("revision", ["2025", "ext"])
@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_a_running_task_is_failed_before_its_ttl_and_then_expires(
    kind: str, revision: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    module: Any = server_2025 if revision == "2025" else server_ext
    audit: list[Any] = []
    server = module.TasksServer(
        "ttl",
        store=new_store(kind, revision, tmp_path, request),
        limits=module.Limits(
            default_ttl_ms=TTL_MS,
            max_ttl_ms=TTL_MS,
            poll_interval_ms=100,
            sweep_interval_s=3600,  # the test purges itself, after the TTL
        ),
        audit=audit.append,
    )
    started, stopped = asyncio.Event(), asyncio.Event()

    @server.tool()
    async def endless(ctx: Any, arguments: dict[str, Any]) -> str:
        """Run until stopped."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            stopped.set()
            raise
        return "never"

    async with server:
        info = module.RequestInfo()
        if revision == "2025":
            info = module.RequestInfo(session_id=server.open_session().id)
        call: dict[str, Any] = {"name": "endless", "arguments": {}}
        if revision == "2025":
            call["task"] = {"ttl": TTL_MS}
        created = await server.handle(rpc("tools/call", call, revision), info)
        assert created is not None and "result" in created, created
        task = created["result"].get("task", created["result"])
        task_id = task["taskId"]
        await asyncio.wait_for(started.wait(), 5)
        record = await server.store.get(task_id)
        assert record is not None and record.expires_at is not None
        expires_at = record.expires_at

        # poll as a client would (far faster than the 100 ms hint), until not found
        seen: list[tuple[str, float]] = []
        failed: dict[str, Any] | None = None
        deadline = time.monotonic() + 10
        while True:
            assert time.monotonic() < deadline, f"still there: {seen}"
            got = await server.handle(
                rpc("tasks/get", {"taskId": task_id}, revision), info
            )
            assert got is not None
            now = time.time()
            if "error" in got:
                assert got["error"]["code"] == -32602, got
                break
            status = got["result"]["status"]
            if not seen or seen[-1][0] != status:
                seen.append((status, now))
            if status == "failed":
                failed = got["result"]
            await asyncio.sleep(0.01)
        gone_at = now

        assert [status for status, _ in seen] == ["working", "failed"], seen
        assert failed is not None
        assert "TTL ran out" in failed["statusMessage"], failed
        if revision == "ext":
            assert failed["error"]["code"] == -32603
            assert "TTL ran out" in failed["error"]["message"]
        failed_at = seen[1][1]
        # failed shortly before the TTL (a third of it here), readable until it ran out
        assert expires_at - failed_at < TTL_MS / 1000 / 3 + 0.3, (failed_at, expires_at)
        assert gone_at >= expires_at
        await asyncio.wait_for(stopped.wait(), 5)  # the worker was stopped
        assert task_id not in server.lifecycle.workers
        assert [e.task_id for e in audit if e.action == "ttl_ran_out"] == [task_id]
        assert await server.purge_expired() == [task_id]
        assert await server.store.get(task_id) is None
