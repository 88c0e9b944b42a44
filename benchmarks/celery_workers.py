"""Benchmark: tools run on Celery workers against the in-process executor and against
fastmcp-tasks on Docket, side by side in one run.

Run from the repository root (needs ``redis-server`` on PATH and ``celery[redis]``)::

    .venv/bin/python benchmarks/celery_workers.py

Every server gets the same Redis (a fresh one per server): ``examples/server.py
--redis URL`` with its tools in process; the same with ``--executor
celery:examples.celery_app`` and one ``celery -A examples.celery_app worker`` with
``-c 1``, then ``-c 2`` (prefork: that many worker processes); and the
``fastmcp[tasks]==4.1.4`` peer server (``tests/peers/fastmcp_server.py``) with
``FASTMCP_DOCKET_URL`` on the same kind of Redis (its Docket worker runs in the server
process), when the peer is installed (``.ci/peers.sh``).

For each it measures, over streamable HTTP with the extension revision:

- latency: ``--tasks`` tasks of ``slow_compute`` with ``seconds=0``, one after the
  other, each polled with ``tasks/get`` every ``--poll-ms`` until completed: p50 and
  p99 of the time from sending ``tools/call`` to seeing ``completed``, and the path
  split in two where the server tells when the tool started (the task's
  ``lastUpdatedAt`` when its first status message shows): from ``tools/call`` to the
  tool starting, and from the stored result (the completed task's
  ``lastUpdatedAt``) to the client's return;
- throughput: ``--concurrency`` clients each creating and polling such tasks for
  ``--seconds`` seconds: completed tasks per second.

``--smoke`` checks that it runs (a handful of tasks, a second of load); no figures to
keep.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from replies import result  # noqa: E402
from replies import run as run_checked  # noqa: E402

from tests.support import peers  # noqa: E402
from tests.support.procs import free_port, run_server, start_redis  # noqa: E402

EXT = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}},
}


@dataclass
class Figures:
    """What one server measured."""

    name: str
    p50_ms: float
    p99_ms: float
    to_worker_ms: float | None
    to_client_ms: float | None
    tasks_per_s: float


def request(method: str, params: dict[str, Any], request_id: int) -> dict[str, Any]:
    """An extension request."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**params, "_meta": META},
    }


def headers(message: dict[str, Any]) -> dict[str, str]:
    """The headers a conforming client sends."""
    params = message["params"]
    name = params.get("taskId") or params.get("name")
    return {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": message["method"],
        **({"mcp-name": name} if name else {}),
    }


def seconds_of(stamp: str) -> float:
    """An ISO 8601 timestamp as seconds since the epoch."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


async def post(
    client: httpx.AsyncClient, url: str, method: str, **params: Any
) -> dict[str, Any]:
    """One request; its checked result."""
    message = request(method, params, 1)
    response = await client.post(url, json=message, headers=headers(message))
    found: dict[str, Any] = result(response.content, f"{method} to {url}")
    return found


async def one_task(
    client: httpx.AsyncClient, url: str, poll_s: float
) -> tuple[float, float | None, float | None]:
    """Run one zero-second task: its latency, and the split (to the tool's start,
    from the stored result), in seconds."""
    sent = time.time()
    created = await post(
        client,
        url,
        "tools/call",
        name="slow_compute",
        arguments={"seconds": 0, "label": "bench"},
    )
    task_id = created.get("taskId") or created.get("task", {}).get("taskId")
    if task_id is None:
        raise RuntimeError(f"{url}: no task created: {created}")
    started: float | None = None
    deadline = sent + 60  # a worker starting up runs the first tasks late
    while True:
        task = await post(client, url, "tasks/get", taskId=task_id)
        seen = time.time()
        if (
            started is None
            and task["status"] == "working"
            and task.get("statusMessage")
            and "lastUpdatedAt" in task
        ):
            started = seconds_of(task["lastUpdatedAt"])
        if task["status"] == "completed":
            stored = (
                seconds_of(task["lastUpdatedAt"]) if "lastUpdatedAt" in task else None
            )
            to_worker = None if started is None else started - sent
            to_client = None if stored is None else seen - stored
            return seen - sent, to_worker, to_client
        if task["status"] not in ("working", "submitted"):
            raise RuntimeError(f"{url}: task ended {task['status']}: {task}")
        if seen > deadline:
            raise RuntimeError(f"{url}: task {task_id} not done within 60 s: {task}")
        await asyncio.sleep(poll_s)


async def measure(name: str, url: str, options: argparse.Namespace) -> Figures:
    """Latency (one task at a time), then throughput (``--concurrency`` clients)."""
    poll_s = options.poll_ms / 1000
    async with httpx.AsyncClient(timeout=30) as client:
        for _ in range(3):  # warm up: worker processes start their event loop
            await one_task(client, url, poll_s)
        runs = [await one_task(client, url, poll_s) for _ in range(options.tasks)]
    latencies = sorted(run[0] for run in runs)
    to_worker = [run[1] for run in runs if run[1] is not None]
    to_client = [run[2] for run in runs if run[2] is not None]
    done = 0
    deadline = time.monotonic() + options.seconds

    async def load() -> None:
        nonlocal done
        async with httpx.AsyncClient(timeout=30) as client:
            while time.monotonic() < deadline:
                await one_task(client, url, poll_s)
                done += 1

    began = time.monotonic()
    await asyncio.gather(*(load() for _ in range(options.concurrency)))
    elapsed = time.monotonic() - began
    return Figures(
        name=name,
        p50_ms=1000 * statistics.median(latencies),
        p99_ms=1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        to_worker_ms=1000 * statistics.median(to_worker) if to_worker else None,
        to_client_ms=1000 * statistics.median(to_client) if to_client else None,
        tasks_per_s=done / elapsed,
    )


@contextmanager
def celery_worker(redis_url: str, processes: int, log_dir: Path) -> Iterator[None]:
    """One ``celery -A examples.celery_app worker -c processes`` (logging warnings
    only: a log line per task would be part of what is measured)."""
    log_path = log_dir / f"worker-{processes}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "examples.celery_app",
                "worker",
                "-c",
                str(processes),
                "--loglevel",
                "WARNING",
                "--without-mingle",
                "--without-gossip",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env={**os.environ, "MCPTASKS_REDIS_URL": redis_url},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:  # the warm-up tasks wait until it consumes
        yield
    finally:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=10)


def example(redis_url: str, *extra: str) -> tuple[list[str], int]:
    """The dual example server's command on a free port, and the port."""
    port = free_port()
    cmd = [
        sys.executable,
        str(ROOT / "examples" / "server.py"),
        "--port",
        str(port),
        "--redis",
        redis_url,
        "--poll-interval-ms",
        "50",
        # one principal keeps every task of the run (the default limits stop it at
        # 1,000 finished tasks, which the throughput runs pass)
        "--max-finished-tasks",
        "1000000",
        "--max-tasks",
        "none",
        "--max-stored-bytes",
        str(4 << 30),
        *extra,
    ]
    return cmd, port


async def bench(options: argparse.Namespace) -> list[Figures]:
    """Every server in turn, each on a fresh Redis."""
    figures: list[Figures] = []
    log_dir = Path(tempfile.mkdtemp(prefix="mcptasks-bench-celery-"))
    setups: list[tuple[str, int | None]] = [("in process", None)]
    setups += [
        (f"celery, {n} worker process{'es' if n > 1 else ''}", n) for n in (1, 2)
    ]
    try:
        for name, processes in setups:
            with ExitStack() as stack:
                redis = stack.enter_context(start_redis())
                env = {"MCPTASKS_REDIS_URL": redis.url}
                extra: tuple[str, ...] = ()
                if processes is not None:
                    stack.enter_context(celery_worker(redis.url, processes, log_dir))
                    extra = ("--executor", "celery:examples.celery_app")
                cmd, port = example(redis.url, *extra)
                server = stack.enter_context(
                    run_server(cmd, port, url_path="/mcp", env=env, cwd=ROOT)
                )
                figures.append(await measure(name, server.url, options))
        if peers.fastmcp_python().exists():
            with ExitStack() as stack:
                redis = stack.enter_context(start_redis())
                port = free_port()
                cmd = [
                    str(peers.fastmcp_python()),
                    str(peers.PEER_PROGRAMS / "fastmcp_server.py"),
                    str(port),
                ]
                env = {"FASTMCP_DOCKET_URL": redis.url}
                server = stack.enter_context(
                    run_server(cmd, port, url_path="/mcp", env=env, timeout=60)
                )
                figures.append(
                    await measure("fastmcp-tasks, Docket on Redis", server.url, options)
                )
        else:
            print("fastmcp[tasks] peer not installed (.ci/peers.sh): left out")
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    return figures


def table(figures: list[Figures]) -> str:
    """The figures as a text table."""

    def ms(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1f}"

    lines = [
        f"{'server':<34} {'p50 ms':>8} {'p99 ms':>8} {'to tool':>8} {'to client':>9}"
        f" {'tasks/s':>8}"
    ]
    for f in figures:
        lines.append(
            f"{f.name:<34} {f.p50_ms:>8.1f} {f.p99_ms:>8.1f} {ms(f.to_worker_ms):>8}"
            f" {ms(f.to_client_ms):>9} {f.tasks_per_s:>8.1f}"
        )
    return "\n".join(lines)


def main() -> None:
    """Parse the options, run, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--poll-ms", type=float, default=5.0)
    parser.add_argument("--smoke", action="store_true")
    options = parser.parse_args()
    if options.smoke:
        options.tasks, options.concurrency, options.seconds = 5, 2, 1.0
    figures = asyncio.run(bench(options))
    print(table(figures))


if __name__ == "__main__":
    run_checked(main)
