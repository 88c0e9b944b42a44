"""Benchmark: two replicas on Redis against one replica on SQLite, with many stored
tasks.

Run from the repository root (needs ``redis-server`` on PATH)::

    .venv/bin/python benchmarks/replicas.py --tasks 1000000

It stores ``--tasks`` finished tasks directly through each store (Redis: the
``RedisTaskStore`` Lua script, many creates in flight; SQLite: one bulk insert of the
rows the store writes), then measures ``tasks/get`` over HTTP on random stored tasks
with ``--concurrency`` keep-alive connections for ``--seconds`` seconds: spread over
two replicas on Redis, and against one replica on SQLite. It also reports Redis memory
per task (``used_memory`` growth divided by the count) and the time from ``kill -9`` of
the replica running a task until another replica reports the task ``failed``.

Every replica is ``examples/server_ext.py`` with the limits the run needs given on its
command line (``--max-finished-tasks``, ``--max-stored-bytes``, ``--max-tasks``,
``--max-active-tasks``): the stored tasks all belong to one principal, so the example's
defaults (1,000 finished tasks and 64 MiB per principal, 100,000 tasks in all) would
refuse the failover's ``tools/call`` once ``--tasks`` reaches them. Every reply is
checked (``replies.py``): an error, or a reply without the expected status, stops the
run with exit status 1 and the reply.

``--sqlite-cache`` measures only SQLite (no Redis): ``tasks/get`` latency over HTTP on
stored tasks within the store's 10,000-record cache against stored tasks beyond it,
side by side. Within: ``--hot`` unfinished tasks (running ``slow_compute``, served from
the store's cache) and ``--small`` finished tasks (a database smaller than the cache;
finished tasks are always read from the file). Beyond: 200,000 and ``--tasks``
finished tasks, random access. Every server runs at once and each is loaded in turn
for ``--seconds``, in ``--rounds`` interleaved rounds whose order rotates; printed are
the medians over the rounds of p50, p99 and the server's CPU time per request, and
the median of the rounds' ratios p99(beyond) / p99(in cache)::

    .venv/bin/python benchmarks/replicas.py --sqlite-cache --tasks 1000000

``--smoke`` runs either mode in a few seconds, to check that it works (no figures to
keep): 1,000 stored tasks (the example's default limit, which the explicit limits must
lift), 0.3 s load runs, a 1 s lease; with ``--sqlite-cache``, files of 100, 1,000 and
2,000 tasks, 5 hot tasks and 2 rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import random
import sqlite3
import statistics
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

from replies import BadReply, result  # noqa: E402
from replies import run as run_checked  # noqa: E402
from server_throughput import EXT_META, RawConnection  # noqa: E402
from server_throughput import cpu_seconds as cpu_s  # noqa: E402

from mcp_tasks_ext.redis_store import RedisTaskStore  # noqa: E402
from mcp_tasks_ext.stores import SQLiteTaskStore, TaskRecord  # noqa: E402
from mcp_tasks_ext.stores.sqlite import _body as sqlite_body  # noqa: E402
from tests.support.procs import (  # noqa: E402
    RedisHandle,
    ServerHandle,
    free_port,
    run_server,
    start_redis,
)

EXAMPLE = ROOT / "examples" / "server_ext.py"
FAILOVER_DEADLINE_LEASES = 10
"""How many leases the failover may take before the run fails (a replica marks a dead
replica's task failed within about 4/3 of the lease)."""
RESULT = {"content": [{"type": "text", "text": "done"}], "isError": False}
OWNER = "anonymous"
"""The principal ``examples/server_ext.py`` gives a request without Authorization."""
HOT = "hot"
"""The principal of the ``--sqlite-cache`` unfinished tasks."""
HEADERS = {
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tasks/get",
}


def record(task_id: str, now: float) -> TaskRecord:
    """A completed task as the example server would have stored it."""
    return TaskRecord(
        task_id=task_id,
        owner=OWNER,
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
    """Store every task in Redis; return the ``used_memory`` growth per task in
    bytes."""
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
            " VALUES (?, ?, 'completed', ?, ?)",
            ((t, OWNER, now + 86_400, sqlite_body(record(t, now))) for t in ids),
        )


@dataclasses.dataclass(frozen=True)
class Needs:
    """The per-principal and server-wide limits a replica needs for this run."""

    finished: (
        int  # finished tasks of one principal: the stored ones, those the run adds
    )
    active: int  # unfinished tasks of one principal at once

    def args(self) -> list[str]:
        """The example server's options for them (``examples/limit_options.py``)."""
        return [
            "--max-finished-tasks",
            str(self.finished),
            "--max-active-tasks",
            str(self.active),
            # a stored task is about half a KiB: 4 KiB each leaves room
            "--max-stored-bytes",
            str(max(64 * 1_048_576, self.finished * 4096)),
            "--max-tasks",
            str(self.finished + self.active),
        ]


def needs(options: argparse.Namespace, stored: int) -> Needs:
    """The limits for ``stored`` tasks of one principal plus what the run adds."""
    return Needs(finished=stored + 1_000, active=max(100, options.hot + 10))


@contextmanager
def example(limits: Needs, *args: str) -> Iterator[ServerHandle]:
    """One ``examples/server_ext.py`` process with ``limits`` and ``args``."""
    port = free_port()
    cmd = [sys.executable, str(EXAMPLE), "--port", str(port), *limits.args(), *args]
    with run_server(cmd, port, url_path="/mcp", timeout=60) as handle:
        yield handle


async def load(
    servers: list[ServerHandle],
    ids: list[str],
    seconds: float,
    concurrency: int,
    status: str = "completed",
    principal: str | None = None,
) -> dict[str, float]:
    """``tasks/get`` on random IDs, connections spread over ``servers``; each reply
    must be a result with ``status`` (else ``BadReply``); ``principal`` goes in the
    Authorization header. Also the servers' CPU time per request."""
    headers = dict(HEADERS)
    if principal is not None:
        headers["authorization"] = principal
    cpu_before = [cpu_s(server.proc.pid) for server in servers]
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
                reply = await connection.post(body, {**headers, "mcp-name": task_id})
                latencies.append(time.perf_counter() - started)
                what = f"tasks/get of stored task {task_id} on port {server.port}"
                result(reply, what, expect={"status": status})
        finally:
            connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    elapsed = time.perf_counter() - started
    cpu = sum(cpu_s(s.proc.pid) for s in servers) - sum(cpu_before)
    latencies.sort()
    return {
        "requests_per_s": len(latencies) / elapsed,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "cpu_ms_per_request": cpu * 1000 / len(latencies),
    }


async def failover(redis: RedisHandle, lease_s: float, limits: Needs) -> float:
    """Seconds from ``kill -9`` of the replica running a task until it is ``failed``."""
    args = ("--redis", redis.url, "--lease-s", str(lease_s))
    with example(limits, *args) as survivor, example(limits, *args) as doomed:
        async with httpx.AsyncClient(timeout=10) as client:

            async def post(server: ServerHandle, method: str, **params: Any) -> Any:
                params["_meta"] = EXT_META
                message = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": method,
                    "params": params,
                }
                # the routing headers: the method, and the tool's name or the task id
                name = str(params.get("name", params.get("taskId", "")))
                headers = {**HEADERS, "mcp-method": method, "mcp-name": name}
                response = await client.post(server.url, json=message, headers=headers)
                return result(response.content, f"{method} on port {server.port}")

            created = await post(
                doomed, "tools/call", name="slow_compute", arguments={"seconds": 600}
            )
            task_id = created.get("taskId") if isinstance(created, dict) else None
            if not isinstance(task_id, str):
                raise BadReply(f"tools/call (failover): no taskId in {created!r}")
            doomed.kill9()
            killed = time.perf_counter()
            deadline = killed + FAILOVER_DEADLINE_LEASES * lease_s + 10
            while time.perf_counter() < deadline:
                task = await post(survivor, "tasks/get", taskId=task_id)
                if task.get("status") == "failed":
                    return time.perf_counter() - killed
                await asyncio.sleep(0.02)
            raise BadReply(
                f"failover: task {task_id} of the killed replica still {task!r}"
                f" after {deadline - killed:.0f} s"
            )


async def run(options: argparse.Namespace) -> dict[str, Any]:
    """Every measurement, as a dict."""
    ids = [uuid.uuid4().hex for _ in range(options.tasks)]
    report: dict[str, Any] = {"tasks": options.tasks}
    with start_redis() as redis, tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        report["redis_bytes_per_task"] = await seed_redis(redis.url, ids)
        report["redis_seed_s"] = time.perf_counter() - started
        limits = needs(options, options.tasks)
        report["limits"] = dataclasses.asdict(limits)
        with ExitStack() as stack:
            replicas = [
                stack.enter_context(example(limits, "--redis", redis.url))
                for _ in range(2)
            ]
            report["redis_2_replicas"] = await load(
                replicas, ids, options.seconds, options.concurrency
            )
        db = str(Path(tmp) / "tasks.sqlite3")
        started = time.perf_counter()
        await seed_sqlite(db, ids)
        report["sqlite_seed_s"] = time.perf_counter() - started
        with example(limits, "--db", db) as single:
            report["sqlite_1_replica"] = await load(
                [single], ids, options.seconds, options.concurrency
            )
        report["lease_s"] = options.lease
        report["failover_s"] = await failover(redis, options.lease, limits)
    return report


async def start_hot(server: ServerHandle, count: int) -> list[str]:
    """Start ``count`` long ``slow_compute`` tasks on ``server`` for principal
    ``HOT`` (the seeded ones are at their limit of finished tasks); return their IDs."""
    connection = RawConnection("127.0.0.1", server.port, "/mcp")
    headers = {
        **HEADERS,
        "mcp-method": "tools/call",
        "mcp-name": "slow_compute",
        "authorization": HOT,
    }
    ids = []
    try:
        for index in range(count):
            body = {
                "jsonrpc": "2.0",
                "id": index,
                "method": "tools/call",
                "params": {
                    "name": "slow_compute",
                    "arguments": {"seconds": 3600, "label": "hot"},
                    "_meta": EXT_META,
                },
            }
            reply = await connection.post(body, headers)
            task_id = result(reply, f"tools/call (hot task {index})", "taskId")
            if not isinstance(task_id, str):
                raise BadReply(f"tools/call (hot task {index}): taskId {task_id!r}")
            ids.append(task_id)
    finally:
        connection.close()
    return ids


async def run_cache(options: argparse.Namespace) -> dict[str, Any]:
    """SQLite ``tasks/get`` within the store's cache against beyond it, interleaved."""
    sizes = {"small": options.small, "mid": options.mid, "beyond": options.tasks}
    report: dict[str, Any] = {"tasks": sizes, "hot_tasks": options.hot}
    targets: dict[str, tuple[ServerHandle, list[str], str, str | None]] = {}
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        for name, count in sizes.items():
            ids = [uuid.uuid4().hex for _ in range(count)]
            db = str(Path(tmp) / f"{name}.sqlite3")
            started = time.perf_counter()
            await seed_sqlite(db, ids)
            report[f"seed_{name}_s"] = time.perf_counter() - started
            limits = needs(options, count)
            server = stack.enter_context(example(limits, "--db", db))
            targets[name] = (server, ids, "completed", None)
            if name == "small":
                hot = await start_hot(server, options.hot)
                targets["hot"] = (server, hot, "working", HOT)
        names = ["hot", "small", "mid", "beyond"]
        samples: dict[str, list[dict[str, float]]] = {name: [] for name in names}
        for index in range(options.rounds):
            shift = index % len(names)
            for name in names[shift:] + names[:shift]:
                server, ids, status, principal = targets[name]
                figures = await load(
                    [server],
                    ids,
                    options.seconds,
                    options.concurrency,
                    status,
                    principal,
                )
                samples[name].append(figures)
    report["rounds"] = samples
    for name in names:
        report[name] = {
            key: statistics.median(figures[key] for figures in samples[name])
            for key in samples[name][0]
        }
    for far in ("mid", "beyond"):
        for near in ("hot", "small"):
            report[f"ratio_p99_{far}_{near}"] = statistics.median(
                f["p99_ms"] / n["p99_ms"]
                for f, n in zip(samples[far], samples[near], strict=True)
            )
    return report


def print_cache(report: dict[str, Any], options: argparse.Namespace) -> None:
    """The ``--sqlite-cache`` figures as a table and the ratios."""
    sizes = report["tasks"]
    rows = {
        "hot": f"in cache: {report['hot_tasks']:,} unfinished tasks",
        "small": f"in cache: {sizes['small']:,} finished tasks",
        "mid": f"beyond: {sizes['mid']:,} finished tasks",
        "beyond": f"beyond: {sizes['beyond']:,} finished tasks",
    }
    print(
        f"SQLiteTaskStore tasks/get over HTTP, {options.concurrency} keep-alive"
        f" connections, medians of {options.rounds} interleaved rounds of"
        f" {options.seconds:g} s"
    )
    print(f"{'':42} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'CPU ms/req':>10}")
    for name, label in rows.items():
        f = report[name]
        print(
            f"{label:42} {f['requests_per_s']:7,.0f} {f['p50_ms']:7.2f}"
            f" {f['p99_ms']:7.2f} {f['cpu_ms_per_request']:10.3f}"
        )
    for far in ("mid", "beyond"):
        for near in ("hot", "small"):
            print(
                f"p99 ratio {rows[far].split(': ')[1]} / {rows[near].split(': ')[1]}:"
                f" {report[f'ratio_p99_{far}_{near}']:.2f}"
            )


def main() -> None:
    """Parse the command line, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--lease", type=float, default=3.0)
    parser.add_argument("--json", action="store_true", help="print JSON only")
    parser.add_argument(
        "--sqlite-cache",
        action="store_true",
        help="SQLite only: tasks/get within the store's cache against beyond it",
    )
    parser.add_argument("--small", type=int, default=5_000)
    parser.add_argument(
        "--mid",
        type=int,
        default=200_000,
        help="--sqlite-cache: the smaller file beyond the cache",
    )
    parser.add_argument("--hot", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a few seconds, to check the benchmark works (see the module docstring)",
    )
    options = parser.parse_args()
    if options.smoke:
        options.tasks, options.seconds, options.concurrency = 1_000, 0.3, 2
        options.lease, options.rounds = 1.0, 2
        if options.sqlite_cache:
            options.small, options.mid, options.tasks, options.hot = (
                100,
                1_000,
                2_000,
                5,
            )
    if options.sqlite_cache:
        report = asyncio.run(run_cache(options))
        if options.json:
            print(json.dumps(report, indent=2))
        else:
            print_cache(report, options)
        return
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
    run_checked(main)
