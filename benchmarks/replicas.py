"""Benchmark: two replicas on Redis against one replica on SQLite, with many stored tasks.

Run from the repository root (needs ``redis-server`` on PATH)::

    .venv/bin/python benchmarks/replicas.py --tasks 1000000

It stores ``--tasks`` finished tasks directly through each store (Redis: the
``RedisTaskStore`` Lua script, many creates in flight; SQLite: one bulk insert of the
rows the store writes), then measures ``tasks/get`` over HTTP on random stored tasks
with ``--concurrency`` keep-alive connections for ``--seconds`` seconds: spread over
two ``examples/server_ext.py --redis`` replicas, and against one
``examples/server_ext.py --db`` replica. It also reports Redis memory per task
(``used_memory`` growth divided by the count) and the time from ``kill -9`` of the
replica running a task until another replica reports the task ``failed``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "generated"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from mcp_tasks_ext.redis_store import RedisTaskStore  # noqa: E402
from mcp_tasks_ext.stores import SQLiteTaskStore, TaskRecord  # noqa: E402
from mcp_tasks_ext.stores import _body as sqlite_body  # noqa: E402
from server_throughput import EXT_META, RawConnection  # noqa: E402

from tests.support.procs import (  # noqa: E402
    RedisHandle,
    ServerHandle,
    free_port,
    run_server,
    start_redis,
)

EXAMPLE = ROOT / "examples" / "server_ext.py"
RESULT = {"content": [{"type": "text", "text": "done"}], "isError": False}
HEADERS = {"accept": "application/json, text/event-stream", "mcp-method": "tasks/get"}


def record(task_id: str, now: float) -> TaskRecord:
    """A completed task as the example server would have stored it."""
    return TaskRecord(
        task_id=task_id,
        owner=None,
        tool="slow_compute",
        status="completed",
        created_at=now,
        updated_at=now + 0.5,
        ttl_ms=86_400_000,
        poll_interval_ms=200,
        status_message="computed",
        result={**RESULT, "resultType": "complete"},
    )


async def seed_redis(url: str, ids: list[str]) -> float:
    """Store every task in Redis; return the ``used_memory`` growth per task in bytes."""
    store = RedisTaskStore(url)
    await store.open()
    client: Any = store._redis()  # noqa: SLF001 - only to read INFO
    before = (await client.info("memory"))["used_memory"]
    now = time.time()
    for start in range(0, len(ids), 50):
        batch = ids[start : start + 50]
        await asyncio.gather(*(store.create(record(t, now)) for t in batch))
    after = (await client.info("memory"))["used_memory"]
    await store.close()
    return (after - before) / len(ids)


async def seed_sqlite(path: str, ids: list[str]) -> None:
    """Create the schema through the store, then bulk-insert the store's own rows."""
    store = SQLiteTaskStore(path)
    await store.open()
    await store.close()
    now = time.time()
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO tasks (task_id, owner, status, expires_at, body)"
            " VALUES (?, NULL, 'completed', ?, ?)",
            ((t, now + 86_400, sqlite_body(record(t, now))) for t in ids),
        )


@contextmanager
def example(*args: str) -> Iterator[ServerHandle]:
    """One ``examples/server_ext.py`` process with ``args``."""
    port = free_port()
    cmd = [sys.executable, str(EXAMPLE), "--port", str(port), *args]
    with run_server(cmd, port, url_path="/mcp", timeout=60) as handle:
        yield handle


async def load(
    servers: list[ServerHandle], ids: list[str], seconds: float, concurrency: int
) -> dict[str, float]:
    """``tasks/get`` on random IDs, connections spread over ``servers``."""
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def worker(index: int) -> None:
        server = servers[index % len(servers)]
        connection = RawConnection("127.0.0.1", server.port, "/mcp")
        request_id = 0
        try:
            while time.perf_counter() < deadline:
                request_id += 1
                task_id = random.choice(ids)
                body = {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "tasks/get",
                    "params": {"taskId": task_id, "_meta": EXT_META},
                }
                started = time.perf_counter()
                reply = await connection.post(body, {**HEADERS, "mcp-name": task_id})
                latencies.append(time.perf_counter() - started)
                if b'"completed"' not in reply:
                    raise RuntimeError(f"unexpected reply: {reply[:200]!r}")
        finally:
            connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "requests_per_s": len(latencies) / elapsed,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
    }


async def failover(redis: RedisHandle, lease_s: float) -> float:
    """Seconds from ``kill -9`` of the replica running a task until it is ``failed``."""
    args = ("--redis", redis.url, "--lease-seconds", str(lease_s))
    with example(*args) as survivor, example(*args) as doomed:
        async with httpx.AsyncClient(timeout=10) as client:

            async def post(server: ServerHandle, method: str, **params: Any) -> Any:
                params["_meta"] = EXT_META
                message = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": method,
                    "params": params,
                }
                headers = {"accept": HEADERS["accept"], "mcp-method": method}
                response = await client.post(server.url, json=message, headers=headers)
                return response.json()["result"]

            created = await post(
                doomed, "tools/call", name="slow_compute", arguments={"seconds": 600}
            )
            doomed.kill9()
            killed = time.perf_counter()
            while True:
                task = await post(survivor, "tasks/get", taskId=created["taskId"])
                if task["status"] == "failed":
                    return time.perf_counter() - killed
                await asyncio.sleep(0.02)


async def run(options: argparse.Namespace) -> dict[str, Any]:
    """Every measurement, as a dict."""
    ids = [uuid.uuid4().hex for _ in range(options.tasks)]
    report: dict[str, Any] = {"tasks": options.tasks}
    with start_redis() as redis, tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        report["redis_bytes_per_task"] = await seed_redis(redis.url, ids)
        report["redis_seed_s"] = time.perf_counter() - started
        with ExitStack() as stack:
            replicas = [
                stack.enter_context(example("--redis", redis.url)) for _ in range(2)
            ]
            report["redis_2_replicas"] = await load(
                replicas, ids, options.seconds, options.concurrency
            )
        db = str(Path(tmp) / "tasks.sqlite3")
        started = time.perf_counter()
        await seed_sqlite(db, ids)
        report["sqlite_seed_s"] = time.perf_counter() - started
        with example("--db", db) as single:
            report["sqlite_1_replica"] = await load(
                [single], ids, options.seconds, options.concurrency
            )
        report["lease_s"] = options.lease
        report["failover_s"] = await failover(redis, options.lease)
    return report


def main() -> None:
    """Parse the command line, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--lease", type=float, default=3.0)
    parser.add_argument("--json", action="store_true", help="print JSON only")
    options = parser.parse_args()
    report = asyncio.run(run(options))
    if options.json:
        print(json.dumps(report, indent=2))
        return
    print(f"stored tasks: {report['tasks']:,}")
    print(f"Redis memory per task: {report['redis_bytes_per_task']:,.0f} bytes")
    for name in ("redis_2_replicas", "sqlite_1_replica"):
        figures = report[name]
        print(
            f"{name}: tasks/get {figures['requests_per_s']:,.0f} req/s,"
            f" p50 {figures['p50_ms']:.2f} ms, p99 {figures['p99_ms']:.2f} ms"
        )
    print(
        f"failover after kill -9: {report['failover_s']:.2f} s"
        f" (lease {report['lease_s']} s)"
    )


if __name__ == "__main__":
    main()
