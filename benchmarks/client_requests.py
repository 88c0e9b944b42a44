"""Requests per completed task and terminal-to-return delay: our extension client vs
fastmcp_tasks, then our clients against our servers, polling and pushed.

Both clients run the same tasks against one ``fastmcp[tasks]==4.1.4`` server (the
fixture server in ``tests/peers``, advertising ``pollIntervalMs`` 200) through a
counting TCP proxy on 127.0.0.1. For every task:

* requests: HTTP requests the client sent through the proxy, per completed task (the
  fastmcp client's session set-up is measured separately and subtracted);
* delay: wall time between the task turning terminal on the server and the client
  returning the result. fastmcp refreshes ``lastUpdatedAt`` on every read, so the
  terminal moment is taken as ``createdAt`` + the tool's sleep (the same estimate for
  both clients; the worker's own overhead adds the same few milliseconds to both).

Then, against ``examples/server_ext.py`` and ``examples/server_2025.py``
(``pollIntervalMs`` 200, memory store), the delay from the terminal status (its
``lastUpdatedAt``) to the client returning: the extension client polling only, the
extension client subscribed through ``subscriptions/listen`` (``subscribe=True``), and
the 2025-11-25 client (which also wakes on ``notifications/tasks/status`` and collects
the result with ``tasks/result``).

Run from the repository root (the peers come from ``.ci/peers.sh``)::

    .venv/bin/python benchmarks/client_requests.py [--tasks 20] [--seed 7]

Every task must end ``completed`` and the peer's client must report every task; anything
else stops the run with exit status 1 and what went wrong (``replies.py``). ``--smoke``
runs 2 tasks of 0.05-0.15 s, to check in seconds that every part works (no figures to
keep); without the fastmcp peer it skips the part that needs it.

This is a measurement script, not a test: it prints the figures for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "generated"), str(ROOT / "benchmarks")]

from replies import BadReply  # noqa: E402
from replies import run as run_checked  # noqa: E402

from mcp_tasks_2025_11_25.client import TasksClient as Client2025  # noqa: E402
from mcp_tasks_2025_11_25.task_ids import MemoryTaskIdStore as Store2025  # noqa: E402
from mcp_tasks_2025_11_25.transport import HttpTransport as Transport2025  # noqa: E402
from mcp_tasks_ext.client import TasksClient  # noqa: E402
from mcp_tasks_ext.task_ids import MemoryTaskIdStore  # noqa: E402
from mcp_tasks_ext.transport import HttpTransport  # noqa: E402
from tests.support import peers, procs  # noqa: E402

PEER_DRIVER = r"""
import asyncio, json, sys, time
from fastmcp import Client
from fastmcp_tasks import call_tool_task

async def main():
    url, durations = sys.argv[1], json.loads(sys.argv[2])
    async with Client(url) as client:
        for seconds in durations:
            arguments = {"seconds": seconds, "label": "bench"}
            task = await call_tool_task(client, "slow_compute", arguments)
            await task.result()
            returned = time.time()
            created = task.create_result.created_at
            row = {"created": created, "seconds": seconds, "returned": returned}
            print(json.dumps(row), flush=True)

asyncio.run(main())
"""


def _request_lines(data: bytes) -> int:
    return sum(data.count(verb) for verb in (b"POST /mcp", b"GET /mcp", b"DELETE /mcp"))


class CountingProxy:
    """Forwards TCP to the server and counts the HTTP requests the client sends."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.requests = 0
        self.server: asyncio.base_events.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def _accept(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection(
            "127.0.0.1", self.target_port
        )

        async def pipe(
            source: asyncio.StreamReader, sink: asyncio.StreamWriter, count: bool
        ) -> None:
            tail = b""
            try:
                while chunk := await source.read(65536):
                    if count:
                        # Request lines seen for the first time: in tail+chunk but not
                        # in tail alone.
                        window = tail + chunk
                        self.requests += _request_lines(window) - _request_lines(tail)
                        tail = window[-16:]
                    sink.write(chunk)
                    await sink.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                sink.close()

        await asyncio.gather(
            pipe(reader, upstream_writer, True), pipe(upstream_reader, writer, False)
        )


def terminal_time(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def finished(handle: Any, what: str) -> Any:
    """The task of ``handle`` once its result came back: it must be ``completed``."""
    task = handle.task
    status = getattr(task, "status", None)
    if task is None or str(status) != "completed":
        raise BadReply(f"{what}: the task ended {status!r}, not completed: {task!r}")
    return task


async def ours(url: str, durations: list[float]) -> list[float]:
    delays = []
    async with TasksClient(HttpTransport(url), store=MemoryTaskIdStore()) as client:
        for seconds in durations:
            handle = await client.start_tool(
                "slow_compute", {"seconds": seconds, "label": "bench"}
            )
            await handle.result()
            returned = time.time()
            task = finished(handle, "mcp_tasks_ext client on the fastmcp server")
            delays.append(returned - (terminal_time(task.created_at) + seconds))
    return delays


async def ours_on_our_server(
    url: str, durations: list[float], subscribe: bool
) -> list[float]:
    """Our client against our extension server, polling only or also subscribed
    (``subscriptions/listen``): delay from the terminal ``lastUpdatedAt`` to returning.
    """
    what = f"mcp_tasks_ext client (subscribe={subscribe}) on examples/server_ext.py"
    delays = []
    async with TasksClient(
        HttpTransport(url), store=MemoryTaskIdStore(), subscribe=subscribe
    ) as client:
        for seconds in durations:
            handle = await client.start_tool(
                "slow_compute", {"seconds": seconds, "label": "bench"}
            )
            await handle.result()
            returned = time.time()
            task = finished(handle, what)
            delays.append(returned - terminal_time(task.last_updated_at))
    return delays


async def ours_2025(url: str, durations: list[float]) -> list[float]:
    """The 2025-11-25 client against our 2025-11-25 server: it polls ``tasks/get`` and
    also wakes on ``notifications/tasks/status`` from the session's GET stream."""
    what = "mcp_tasks_2025_11_25 client on examples/server_2025.py"
    delays = []
    async with Client2025(Transport2025(url), store=Store2025()) as client:
        for seconds in durations:
            handle = await client.start_tool(
                "slow_compute", {"seconds": seconds, "label": "bench"}
            )
            await handle.result()
            returned = time.time()
            task = finished(handle, what)
            delays.append(returned - terminal_time(task.last_updated_at))
    return delays


def peer(url: str, durations: list[float]) -> list[dict[str, float | str]]:
    command = [
        str(peers.fastmcp_python()),
        "-c",
        PEER_DRIVER,
        url,
        json.dumps(durations),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise BadReply(f"fastmcp client failed: {done.stderr.strip()[-600:]}")
    reports: list[dict[str, float | str]] = [
        json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")
    ]
    if len(reports) != len(durations):
        raise BadReply(
            f"fastmcp client reported {len(reports)} of {len(durations)} tasks:"
            f" {done.stdout.strip()[-600:]} {done.stderr.strip()[-600:]}"
        )
    return reports


def summary(name: str, requests: float | None, delays: list[float]) -> str:
    ms = sorted(delay * 1000 for delay in delays)
    p95 = ms[max(0, round(0.95 * len(ms)) - 1)]
    counted = "-" if requests is None else f"{requests:.2f}"
    return f"{name:<28} {counted:>9} {statistics.median(ms):>11.1f} {p95:>9.1f}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="2 tasks of 0.05-0.15 s, without the fastmcp peer if it is missing",
    )
    args = parser.parse_args()
    low, high = (0.05, 0.15) if args.smoke else (0.2, 1.2)
    if args.smoke:
        args.tasks = 2
    durations = [
        round(random.Random(args.seed + i).uniform(low, high), 3)
        for i in range(args.tasks)
    ]
    if args.smoke and not peers.is_installed("fastmcp"):
        print("skipping the fastmcp comparison: peer not installed (.ci/peers.sh)")
    else:
        await against_fastmcp(durations, low, high)
    await against_ours(durations)


async def against_fastmcp(durations: list[float], low: float, high: float) -> None:
    """Both clients, the same tasks, one fastmcp server behind the counting proxy."""
    peers.require = lambda name: None  # a script: fail loudly later instead of skipping
    with peers.serve("fastmcp") as server:
        proxy = CountingProxy(server.port)
        url = f"http://127.0.0.1:{await proxy.start()}/mcp"

        proxy.requests = 0
        our_delays = await ours(url, durations)
        our_requests = proxy.requests / len(durations)

        proxy.requests = 0
        await asyncio.to_thread(peer, url, [])
        setup = proxy.requests
        proxy.requests = 0
        reports = await asyncio.to_thread(peer, url, durations)
        peer_requests = (proxy.requests - setup) / len(durations)
        peer_delays = [
            float(r["returned"])
            - (terminal_time(str(r["created"])) + float(r["seconds"]))
            for r in reports
        ]

    print(
        f"{len(durations)} tasks of {low:g}-{high:g} s each, server pollIntervalMs 200,"
        " fastmcp[tasks]==4.1.4"
    )
    print(f"{'client':<28} {'req/task':>9} {'median ms':>11} {'p95 ms':>9}")
    print(summary("mcp_tasks_ext", our_requests, our_delays))
    print(summary("fastmcp_tasks 4.1.4", peer_requests, peer_delays))
    print(f"(fastmcp client session set-up, not counted above: {setup} requests)")


async def against_ours(durations: list[float]) -> None:
    """Our clients against our servers: polling, pushed, and 2025-11-25."""
    port = procs.free_port()
    command = [
        sys.executable,
        str(ROOT / "examples" / "server_ext.py"),
        "--memory",
        "--port",
        str(port),
    ]
    with procs.run_server(command, port):
        url = f"http://127.0.0.1:{port}/mcp"
        polled = await ours_on_our_server(url, durations, subscribe=False)
        pushed = await ours_on_our_server(url, durations, subscribe=True)
    print()
    print(
        "against examples/server_ext.py (pollIntervalMs 200); delay from the terminal"
        " lastUpdatedAt"
    )
    print(f"{'client':<28} {'':>9} {'median ms':>11} {'p95 ms':>9}")
    print(summary("mcp_tasks_ext, polling", None, polled))
    print(summary("mcp_tasks_ext, pushed", None, pushed))

    port = procs.free_port()
    command = [
        sys.executable,
        str(ROOT / "examples" / "server_2025.py"),
        "--memory",
        "--port",
        str(port),
    ]
    with procs.run_server(command, port):
        notified = await ours_2025(f"http://127.0.0.1:{port}/mcp", durations)
    print(summary("mcp_tasks_2025_11_25", None, notified))


if __name__ == "__main__":
    run_checked(lambda: asyncio.run(main()))
