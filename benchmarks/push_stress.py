"""Stress push delivery until a subscribed wait hangs: many concurrent calls with
``subscribe=True`` of a short tool against the example extension server on Redis.

Every run starts ``--tasks`` concurrent calls of ``slow_compute`` (``--seconds``, 0 by
default) through one ``mcp_tasks_ext`` client with ``subscribe=True`` (a new client per
run), and gives them ``--run-timeout`` seconds. The server is the ``build_server`` of
``examples/server_ext.py`` with ``--redis`` (a private ``redis-server`` on a free
port), run in a child process of this script that only adds a probe: it records what
each ``subscriptions/listen`` stream sent, the states published and the store reads of
each task, and on ``SIGUSR1`` writes its listen state (the open streams, what they sent,
those histories, the subscriptions' queues) to a file.

At the first run that does not finish in time the script stops and prints, for every
wait still pending, what the client knows (last snapshot, whether the push was
acknowledged, every notification it received, the stored state through a fresh
``tasks/get``) and the server's listen state, then exits 1. It exits 0 after ``--runs``
runs (or ``--minutes``) without a hang.

Run from the repository root::

    .venv/bin/python benchmarks/push_stress.py [--runs 200] [--tasks 64] [--minutes 10]

A measurement script, not a test: the regression tests of what it found are in
``tests/client/test_push_races.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "generated"), str(ROOT / "examples")]

from mcp_tasks_ext.client import TasksClient  # noqa: E402
from mcp_tasks_ext.task_ids import MemoryTaskIdStore  # noqa: E402
from mcp_tasks_ext.transport import HttpTransport  # noqa: E402
from tests.support import procs  # noqa: E402

# -- the server side (child process) ------------------------------------------------


def serve(redis_url: str, port: int, dump_path: str) -> None:
    """Run the example server on ``redis_url`` with the listen probe."""
    import server_ext  # examples/server_ext.py

    from mcp_tasks_ext.asgi import serve as serve_http

    server = server_ext.build_server(None, redis_url=redis_url)
    listen = server.dispatcher.routes["subscriptions/listen"]
    streams: dict[Any, dict[str, Any]] = {}

    async def probed(call: Any) -> dict[str, Any]:
        record: dict[str, Any] = {
            "ids": call.params.get("notifications", {}).get("taskIds"),
            "sent": [],
            "opened": time.time(),
        }
        streams[call.request_id] = record
        emit = call.emit

        async def emit_probed(message: dict[str, Any]) -> None:
            params = message.get("params", {})
            record["sent"].append(
                [
                    message.get("method"),
                    params.get("status"),
                    params.get("lastUpdatedAt"),
                ]
            )
            await emit(message)

        try:
            return await listen(replace(call, emit=emit_probed))
        finally:
            streams.pop(call.request_id, None)

    server.dispatcher.routes["subscriptions/listen"] = probed

    # what happened to each task: its states published here (with how many
    # subscriptions followed it then) and its reads from the store (by whom)
    history: dict[str, list[list[Any]]] = defaultdict(list)
    published = server.published

    async def published_probed(record: Any) -> None:
        followers = len(server.notifications.listeners.get(record.task_id, ()))
        history[record.task_id].append(
            ["published", record.status, record.updated_at, followers, time.time()]
        )
        await published(record)

    server.published = published_probed  # type: ignore[method-assign]
    store = server.store
    get = store.get

    async def get_probed(task_id: str) -> Any:
        began = time.time()
        current = asyncio.current_task()
        record = await get(task_id)
        history[task_id].append(
            [
                "read",
                record.status if record else None,
                record.updated_at if record else None,
                current.get_name() if current else None,
                began,
                time.time(),
            ]
        )
        return record

    store.get = get_probed  # type: ignore[method-assign]

    def dump() -> None:
        listeners = {  # each subscription's unsent states and whether it is closing
            task_id: [
                {
                    "pending": {
                        i: [state.get("status"), terminal]
                        for i, (state, terminal) in s.pending.items()
                    },
                    "closed": s.closed,
                }
                for s in subscriptions
            ]
            for task_id, subscriptions in server.notifications.listeners.items()
        }
        followed = {i for v in streams.values() for i in (v["ids"] or [])}
        state = {
            "history": {i: history.get(i) for i in followed},
            "open_streams": {str(k): v for k, v in streams.items()},
            "listeners": listeners,
        }
        partial = Path(dump_path + ".partial")
        partial.write_text(json.dumps(state, indent=1, default=str))
        partial.replace(dump_path)  # whole, for the reader polling for it

    original_start = server.start

    async def start() -> None:
        await original_start()
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, dump)

    server.start = start  # type: ignore[method-assign]
    serve_http(server, "127.0.0.1", port)


# -- the client side ----------------------------------------------------------------


class ProbedClient(TasksClient):
    """The generated client, recording every task notification it receives."""

    def setup(self) -> None:
        super().setup()
        self.received: dict[str, list[tuple[str, str, str]]] = defaultdict(list)

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tasks":
            self.received[str(params.get("taskId"))].append(
                (method, str(params.get("status")), str(params.get("lastUpdatedAt")))
            )
        elif method == "notifications/subscriptions/acknowledged":
            for task_id in params.get("notifications", {}).get("taskIds", []):
                self.received[str(task_id)].append((method, "", ""))
        await super()._on_notification(method, params)


async def one_run(
    url: str,
    run: int,
    tasks: int,
    seconds: float,
    timeout: float,
    server_state: Callable[[], Awaitable[str]],
) -> dict[str, Any] | None:
    """One run; None when every call returned in time, else what the pending waits
    know and the server's listen state (taken while the waits are still pending)."""
    # a principal per run: the server keeps at most 1,000 finished tasks per principal
    transport = HttpTransport(url, headers={"Authorization": f"stress-{run}"})
    client = ProbedClient(transport, store=MemoryTaskIdStore(), subscribe=True)
    handles: dict[int, Any] = {}

    async def call(i: int) -> None:
        handle = await client.start_tool(
            "slow_compute", {"seconds": seconds, "label": f"{run}-{i}"}
        )
        handles[i] = handle
        await handle.result()

    async with client:
        calls = [asyncio.ensure_future(call(i)) for i in range(tasks)]
        done, pending = await asyncio.wait(calls, timeout=timeout)
        for future in done:
            if future.exception() is not None:
                print(f"run {run}: a call failed: {future.exception()!r}")
                break
        if not pending:
            return None
        report: dict[str, Any] = {"pending": []}
        checking = HttpTransport(url, headers={"Authorization": f"stress-{run}"})
        async with TasksClient(checking, store=MemoryTaskIdStore()) as checker:
            for i, handle in sorted(handles.items()):
                if handle.done or calls[i] not in pending:
                    continue
                stored = await checker.get_task(handle.task_id)
                report["pending"].append(
                    {
                        "call": i,
                        "task_id": handle.task_id,
                        "client_snapshot": (
                            str(handle.task.status) if handle.task else None
                        ),
                        "push_acknowledged": handle.push_acknowledged,
                        "pending_push": (
                            str(handle._pending.status) if handle._pending else None
                        ),
                        "polls": handle.polls,
                        "received": client.received.get(handle.task_id, []),
                        "stored": [str(stored.status), stored.last_updated_at],
                        "subscriptions_held": [
                            k for k, h in client.subscriptions.items() if h is handle
                        ],
                    }
                )
        report["not_started"] = tasks - len(handles)
        report["server"] = json.loads(await server_state())
        for future in pending:
            future.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        return report


async def stress(args: argparse.Namespace) -> int:
    with procs.start_redis() as redis:
        port = procs.free_port()
        dump_path = Path(tempfile.mkdtemp(prefix="push-stress-")) / "listen-state.json"
        command = [
            sys.executable,
            __file__,
            "--serve",
            redis.url,
            "--port",
            str(port),
            "--dump",
            str(dump_path),
        ]
        with procs.run_server(command, port) as server:
            url = f"http://127.0.0.1:{port}/mcp"
            stop_at = time.monotonic() + args.minutes * 60

            async def server_state() -> str:
                dump_path.unlink(missing_ok=True)
                os.kill(server.proc.pid, signal.SIGUSR1)
                deadline = time.monotonic() + 10
                while not dump_path.exists() and time.monotonic() < deadline:
                    await asyncio.sleep(0.1)
                return dump_path.read_text() if dump_path.exists() else "null"

            for run in range(1, args.runs + 1):
                if time.monotonic() > stop_at:
                    break
                started = time.monotonic()
                report = await one_run(
                    url, run, args.tasks, args.seconds, args.run_timeout, server_state
                )
                took = time.monotonic() - started
                if report is None:
                    if run % 10 == 0 or run == 1:
                        load = os.getloadavg()[0]
                        print(
                            f"run {run}: {args.tasks} calls in {took:.2f} s,"
                            f" load {load:.1f}",
                            flush=True,
                        )
                    continue
                print(
                    f"run {run}: HANG ({len(report['pending'])} waits pending"
                    f" after {took:.1f} s)"
                )
                print(json.dumps(report, indent=1))
                print("server log:", server.log_tail(30), sep="\n")
                return 1
            print(f"no hang in {run} runs")
            return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=0.0, help="the tool's sleep")
    parser.add_argument("--run-timeout", type=float, default=20.0)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--serve", metavar="REDIS_URL", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    parser.add_argument(
        "--smoke", action="store_true", help="two runs of 8 tasks (the suite runs it)"
    )
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.tasks, args.minutes = 2, 8, 1.0
    if args.serve:
        serve(args.serve, args.port, args.dump)
        return
    sys.exit(asyncio.run(stress(args)))


if __name__ == "__main__":
    main()
