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
``lastUpdatedAt``) to the client returning: the extension client polling only (with its
requests per task, counted by the same proxy), the extension client subscribed through
``subscriptions/listen`` (``subscribe=True``), and the 2025-11-25 client (which also
wakes on ``notifications/tasks/status`` and collects the result with ``tasks/result``).

Last, a tool that finishes at once (``--instant-tasks`` calls of ``slow_compute`` with
``seconds`` 0.002, one after the other, one client, no push): the time from the call to
the result, tasks per second and requests per task, for fastmcp's client against its
server (the anchor), ours against that server, ours against ``examples/server_ext.py``
polling (the poll interval a young task gets, ``Limits.poll_interval_at``) and answered
inline (``--answer-within-ms 50``: ``Limits.answer_within_ms``).

Run from the repository root (the peers come from ``.ci/peers.sh``)::

    .venv/bin/python benchmarks/client_requests.py [--tasks 20] [--seed 7]

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

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "generated")]

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
            task = await call_tool_task(client, "slow_compute", {"seconds": seconds, "label": "bench"})
            await task.result()
            returned = time.time()
            print(json.dumps({"created": task.create_result.created_at, "seconds": seconds, "returned": returned}), flush=True)

asyncio.run(main())
"""


INSTANT_DRIVER = r"""
import asyncio, json, sys, time
from fastmcp import Client
from fastmcp_tasks import call_tool_task

async def main():
    url, count = sys.argv[1], int(sys.argv[2])
    async with Client(url) as client:
        for _ in range(count):
            started = time.perf_counter()
            task = await call_tool_task(client, "slow_compute", {"seconds": 0.002, "label": "bench"})
            await task.result()
            print(json.dumps({"took": time.perf_counter() - started}), flush=True)

asyncio.run(main())
"""

INSTANT_SECONDS = 0.002
"""How long the instant tool runs."""


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


async def ours(url: str, durations: list[float]) -> list[float]:
    delays = []
    async with TasksClient(HttpTransport(url), store=MemoryTaskIdStore()) as client:
        for seconds in durations:
            handle = await client.start_tool(
                "slow_compute", {"seconds": seconds, "label": "bench"}
            )
            await handle.result()
            returned = time.time()
            assert handle.task is not None
            delays.append(returned - (terminal_time(handle.task.created_at) + seconds))
    return delays


async def ours_on_our_server(
    url: str, durations: list[float], subscribe: bool
) -> list[float]:
    """Our client against our extension server, polling only or also subscribed
    (``subscriptions/listen``): delay from the terminal ``lastUpdatedAt`` to returning.
    """
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
            assert handle.task is not None
            delays.append(returned - terminal_time(handle.task.last_updated_at))
    return delays


async def ours_2025(url: str, durations: list[float]) -> list[float]:
    """The 2025-11-25 client against our 2025-11-25 server: it polls ``tasks/get`` and
    also wakes on ``notifications/tasks/status`` from the session's GET stream."""
    delays = []
    async with Client2025(Transport2025(url), store=Store2025()) as client:
        for seconds in durations:
            handle = await client.start_tool(
                "slow_compute", {"seconds": seconds, "label": "bench"}
            )
            await handle.result()
            returned = time.time()
            assert handle.task is not None
            delays.append(returned - terminal_time(handle.task.last_updated_at))
    return delays


async def ours_instant(url: str, count: int) -> list[float]:
    """Our extension client calling the instant tool ``count`` times in a row: the time
    from each call to its result (a task polled to its end, or an inline answer)."""
    took = []
    async with TasksClient(HttpTransport(url), store=MemoryTaskIdStore()) as client:
        for _ in range(count):
            started = time.perf_counter()
            await client.call_tool(
                "slow_compute", {"seconds": INSTANT_SECONDS, "label": "bench"}
            )
            took.append(time.perf_counter() - started)
    return took


def peer_instant(url: str, count: int) -> list[float]:
    """fastmcp's client calling the instant tool ``count`` times in a row."""
    command = [str(peers.fastmcp_python()), "-c", INSTANT_DRIVER, url, str(count)]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=600, check=True
    )
    return [
        float(json.loads(line)["took"])
        for line in done.stdout.splitlines()
        if line.startswith("{")
    ]


def instant_row(name: str, requests: float, took: list[float]) -> str:
    ms = sorted(t * 1000 for t in took)
    p95 = ms[max(0, round(0.95 * len(ms)) - 1)]
    rate = len(took) / sum(took)
    return (
        f"{name:<36} {requests:>9.2f} {statistics.median(ms):>11.1f} {p95:>9.1f}"
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
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=600, check=True
    )
    return [
        json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")
    ]


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
        "--instant-tasks", type=int, default=30, help="calls of the instant tool"
    )
    args = parser.parse_args()
    count = args.instant_tasks
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    durations = [
        round(random.Random(args.seed + i).uniform(0.2, 1.2), 3)
        for i in range(args.tasks)
    ]
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

        await asyncio.to_thread(peer_instant, url, 2)  # warm the server up
        proxy.requests = 0
        peer_took = await asyncio.to_thread(peer_instant, url, count)
        peer_instant_requests = (proxy.requests - setup) / count
        proxy.requests = 0
        ours_on_peer_took = await ours_instant(url, count)
        ours_on_peer_requests = proxy.requests / count
        peer_delays = [
            float(r["returned"])
            - (terminal_time(str(r["created"])) + float(r["seconds"]))
            for r in reports
        ]

    print(
        f"{len(durations)} tasks of 0.2-1.2 s each, server pollIntervalMs 200,"
        " fastmcp[tasks]==4.1.4"
    )
    print(f"{'client':<28} {'req/task':>9} {'median ms':>11} {'p95 ms':>9}")
    print(summary("mcp_tasks_ext", our_requests, our_delays))
    print(summary("fastmcp_tasks 4.1.4", peer_requests, peer_delays))
    print(f"(fastmcp client session set-up, not counted above: {setup} requests)")

    port = procs.free_port()
    command = [
        sys.executable,
        str(ROOT / "examples" / "server_ext.py"),
        "--memory",
        "--port",
        str(port),
    ]
    with procs.run_server(command, port):
        proxy = CountingProxy(port)
        url = f"http://127.0.0.1:{await proxy.start()}/mcp"
        proxy.requests = 0
        polled = await ours_on_our_server(url, durations, subscribe=False)
        polled_requests = proxy.requests / len(durations)
        pushed = await ours_on_our_server(url, durations, subscribe=True)
        await ours_instant(url, 2)  # warm the server up
        proxy.requests = 0
        instant_polled = await ours_instant(url, count)
        instant_polled_requests = proxy.requests / count
    inline: tuple[float, list[float]] | None = None
    example = (ROOT / "examples" / "server_ext.py").read_text()
    if "--answer-within-ms" in example:  # absent before inline answers existed
        port = procs.free_port()
        with procs.run_server(
            [*command[:-1], str(port), "--answer-within-ms", "50"], port
        ):
            proxy = CountingProxy(port)
            url = f"http://127.0.0.1:{await proxy.start()}/mcp"
            await ours_instant(url, 2)
            proxy.requests = 0
            took = await ours_instant(url, count)
            inline = (proxy.requests / count, took)
    print()
    print(
        "against examples/server_ext.py (pollIntervalMs 200); delay from the terminal"
        " lastUpdatedAt"
    )
    print(f"{'client':<28} {'req/task':>9} {'median ms':>11} {'p95 ms':>9}")
    print(summary("mcp_tasks_ext, polling", polled_requests, polled))
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

    print()
    print(
        f"a tool that finishes at once ({INSTANT_SECONDS * 1000:.0f} ms), {count} calls"
        " in a row, one client, no push; time from the call to the result"
    )
    print(
        f"{'client -> server':<36} {'req/task':>9} {'median ms':>11} {'p95 ms':>9}"
        f" {'tasks/s':>8}"
    )
    print(instant_row("fastmcp_tasks -> fastmcp", peer_instant_requests, peer_took))
    print(
        instant_row(
            "mcp_tasks_ext -> fastmcp", ours_on_peer_requests, ours_on_peer_took
        )
    )
    print(
        instant_row(
            "mcp_tasks_ext -> server_ext, polling",
            instant_polled_requests,
            instant_polled,
        )
    )
    if inline is not None:
        print(instant_row("mcp_tasks_ext -> server_ext, inline", *inline))


if __name__ == "__main__":
    asyncio.run(main())
