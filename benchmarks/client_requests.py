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
the result with ``tasks/result``). The polling client runs against four settings of
the extension server, its requests counted by the same proxy: a fixed hint
(``--first-poll-interval-ms 200 --max-poll-hold-ms 0``), a short first hint that jumps
to the whole interval after the first poll (``--first-poll-interval-ms 10
--poll-interval-growth 20 --max-poll-hold-ms 0``: 20 times the age, so the create
result says 10 ms and the first poll, some 10 ms later, the whole 200), the hint that
grows with the task's age (``--max-poll-hold-ms 0``), and the defaults, which also
hold the ``tasks/get`` of a young task until it changes (``Limits.max_poll_hold_ms``).

Last, a tool that finishes at once (``--instant-tasks`` calls of ``slow_compute`` with
``seconds`` 0.002, one after the other, one client, no push): the time from the call to
the result, tasks per second and requests per task, for fastmcp's client against its
server (the anchor), ours against that server, ours against ``examples/server_ext.py``
polling (each of the four settings above) and answered inline
(``--answer-within-ms 50``: ``Limits.answer_within_ms``).

Run from the repository root (the peers come from ``.ci/peers.sh``)::

    .venv/bin/python benchmarks/client_requests.py [--tasks 20] [--seed 7]
        [--instant-tasks 30]

Every task must end ``completed`` and the peer's client must report every task; anything
else stops the run with exit status 1 and what went wrong (``replies.py``). ``--smoke``
runs 2 tasks of 0.05-0.15 s and 2 instant calls, to check in seconds that every part
works (no figures to keep); without the fastmcp peer it skips the part that needs it.

This is a measurement script, not a test: it prints the figures for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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


INSTANT_DRIVER = r"""
import asyncio, json, sys, time
from fastmcp import Client
from fastmcp_tasks import call_tool_task

async def main():
    url, count, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    async with Client(url) as client:
        for _ in range(count):
            started = time.perf_counter()
            arguments = {"seconds": seconds, "label": "bench"}
            task = await call_tool_task(client, "slow_compute", arguments)
            result = await task.result()  # raises on a failed or cancelled task
            took = time.perf_counter() - started
            report = {"took": took, "error": bool(result.is_error)}
            print(json.dumps(report), flush=True)

asyncio.run(main())
"""

INSTANT_SECONDS = 0.002
"""How long the instant tool runs."""

SETTINGS = {
    "fixed hint": ["--first-poll-interval-ms", "200", "--max-poll-hold-ms", "0"],
    "short first hint, then the interval": [
        "--first-poll-interval-ms",
        "10",
        "--poll-interval-growth",
        "20",
        "--max-poll-hold-ms",
        "0",
    ],
    "growing hint": ["--max-poll-hold-ms", "0"],
    "growing hint, held get": [],
}
"""The extension server's settings the polling client runs against (command-line
options of ``examples/server_ext.py``); the last is the default."""


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


async def ours_instant(url: str, count: int) -> list[float]:
    """Our extension client calling the instant tool ``count`` times in a row: the time
    from each call to its result (a task polled to its end, or an inline answer)."""
    took = []
    async with TasksClient(HttpTransport(url), store=MemoryTaskIdStore()) as client:
        for _ in range(count):
            started = time.perf_counter()
            result = await client.call_tool(
                "slow_compute", {"seconds": INSTANT_SECONDS, "label": "bench"}
            )
            took.append(time.perf_counter() - started)
            if result.is_error or not result.content:
                raise BadReply(f"the instant tool's result is an error: {result!r}")
    return took


def peer_instant(url: str, count: int) -> list[float]:
    """fastmcp's client calling the instant tool ``count`` times in a row."""
    command = [
        str(peers.fastmcp_python()),
        "-c",
        INSTANT_DRIVER,
        url,
        str(count),
        str(INSTANT_SECONDS),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise BadReply(f"fastmcp client failed: {done.stderr.strip()[-600:]}")
    reports = [json.loads(line) for line in done.stdout.splitlines() if line[:1] == "{"]
    if len(reports) != count or any(r["error"] for r in reports):
        raise BadReply(
            f"fastmcp client reported {len(reports)} of {count} instant tasks, or an"
            f" error: {done.stdout.strip()[-600:]} {done.stderr.strip()[-600:]}"
        )
    return [float(r["took"]) for r in reports]


def instant_row(name: str, requests: float, took: list[float]) -> str:
    ms = sorted(t * 1000 for t in took)
    p95 = ms[max(0, round(0.95 * len(ms)) - 1)]
    rate = len(took) / sum(took)
    return (
        f"{name:<56} {requests:>9.2f} {statistics.median(ms):>11.1f} {p95:>9.1f}"
        f" {rate:>8.1f}"
    )


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
    return f"{name:<56} {counted:>9} {statistics.median(ms):>11.1f} {p95:>9.1f}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--instant-tasks",
        type=int,
        default=30,
        help="calls of the tool that finishes at once, per client and server",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="2 tasks of 0.05-0.15 s and 2 instant calls, without the fastmcp peer if"
        " it is missing",
    )
    args = parser.parse_args()
    low, high = (0.05, 0.15) if args.smoke else (0.2, 1.2)
    if args.smoke:
        args.tasks = args.instant_tasks = 2
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    durations = [
        round(random.Random(args.seed + i).uniform(low, high), 3)
        for i in range(args.tasks)
    ]
    instant: list[str] = []
    if args.smoke and not peers.is_installed("fastmcp"):
        print("skipping the fastmcp comparison: peer not installed (.ci/peers.sh)")
    else:
        await against_fastmcp(durations, low, high, args.instant_tasks, instant)
    await against_ours(durations, args.instant_tasks, instant)
    print()
    print(
        f"a tool that finishes at once ({INSTANT_SECONDS * 1000:.0f} ms),"
        f" {args.instant_tasks} calls in a row, one client, no push; time from the"
        " call to the result"
    )
    print(
        f"{'client -> server':<56} {'req/task':>9} {'median ms':>11} {'p95 ms':>9}"
        f" {'tasks/s':>8}"
    )
    print("\n".join(instant))


async def against_fastmcp(
    durations: list[float], low: float, high: float, count: int, instant: list[str]
) -> None:
    """Both clients, the same tasks, one fastmcp server behind the counting proxy;
    then the instant tool, whose rows go to ``instant``."""
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

        await asyncio.to_thread(peer_instant, url, 2)  # warm the server up
        proxy.requests = 0
        peer_took = await asyncio.to_thread(peer_instant, url, count)
        row = instant_row(
            "fastmcp_tasks -> fastmcp", (proxy.requests - setup) / count, peer_took
        )
        instant.append(row)
        proxy.requests = 0
        took = await ours_instant(url, count)
        instant.append(
            instant_row("mcp_tasks_ext -> fastmcp", proxy.requests / count, took)
        )

    print(
        f"{len(durations)} tasks of {low:g}-{high:g} s each, server pollIntervalMs 200,"
        " fastmcp[tasks]==4.1.4"
    )
    print(f"{'client':<56} {'req/task':>9} {'median ms':>11} {'p95 ms':>9}")
    print(summary("mcp_tasks_ext", our_requests, our_delays))
    print(summary("fastmcp_tasks 4.1.4", peer_requests, peer_delays))
    print(f"(fastmcp client session set-up, not counted above: {setup} requests)")


def server_ext(port: int, *options: str) -> list[str]:
    """The command line of ``examples/server_ext.py`` (memory store) on ``port``."""
    example = str(ROOT / "examples" / "server_ext.py")
    return [sys.executable, example, "--memory", "--port", str(port), *options]


async def against_ours(durations: list[float], count: int, instant: list[str]) -> None:
    """Our clients against our servers: polling (each of ``SETTINGS``), pushed, and
    2025-11-25; the instant tool's rows go to ``instant``."""
    rows = []
    for name, options in SETTINGS.items():
        port = procs.free_port()
        with procs.run_server(server_ext(port, *options), port):
            proxy = CountingProxy(port)
            url = f"http://127.0.0.1:{await proxy.start()}/mcp"
            proxy.requests = 0
            polled = await ours_on_our_server(url, durations, subscribe=False)
            requests = proxy.requests / len(durations)
            rows.append(summary(f"mcp_tasks_ext, polling, {name}", requests, polled))
            await ours_instant(url, 2)  # warm the server up
            proxy.requests = 0
            took = await ours_instant(url, count)
            line = instant_row(
                f"mcp_tasks_ext -> server_ext, {name}", proxy.requests / count, took
            )
            instant.append(line)
            if not options:
                pushed = await ours_on_our_server(url, durations, subscribe=True)
                rows.append(summary("mcp_tasks_ext, pushed", None, pushed))
    port = procs.free_port()
    with procs.run_server(server_ext(port, "--answer-within-ms", "50"), port):
        proxy = CountingProxy(port)
        url = f"http://127.0.0.1:{await proxy.start()}/mcp"
        await ours_instant(url, 2)
        proxy.requests = 0
        took = await ours_instant(url, count)
        line = instant_row(
            "mcp_tasks_ext -> server_ext, inline", proxy.requests / count, took
        )
        instant.append(line)

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
    rows.append(summary("mcp_tasks_2025_11_25", None, notified))
    print()
    print(
        "against examples/server_ext.py and server_2025.py (pollIntervalMs 200); delay"
        " from the terminal lastUpdatedAt"
    )
    print(f"{'client':<56} {'req/task':>9} {'median ms':>11} {'p95 ms':>9}")
    print("\n".join(rows))


if __name__ == "__main__":
    run_checked(lambda: asyncio.run(main()))
