"""Push throughput: tasks per second and terminal-to-return delay of subscribed clients
(``subscribe=True``, ``subscriptions/listen``) as the number of clients grows.

Each client is one ``mcp_tasks_ext`` ``TasksClient`` (its own ``HttpTransport``) that
calls ``slow_compute`` (``--seconds``, 0 by default) and awaits the result, one task
after the other, for ``--seconds-per-round`` seconds. The clients of a round run at
once in this process; the server is ``examples/server_ext.py`` (``--store``: memory,
sqlite in a temporary folder, or redis on a private ``redis-server``) in another.
``--clients 1,16`` measures one client and sixteen in ``--rounds`` interleaved rounds
(the order alternates), so that both figures come from the same minutes of a machine
whose load varies; printed per round and as medians: tasks/s, the median and p95 delay
from the task's terminal ``lastUpdatedAt`` to the client returning, the CPU seconds
the server and this process used per task, and the load average.

Run from the repository root::

    .venv/bin/python benchmarks/push_throughput.py [--clients 1,16] [--rounds 4]

``--profile-server FILE`` runs the server under cProfile and writes its statistics to
FILE at the end; ``--profile-client FILE`` does the same for this process, over the
rounds with the most clients.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "generated"), str(ROOT / "examples")]

from mcp_tasks_ext.client import TasksClient  # noqa: E402
from mcp_tasks_ext.task_ids import (  # noqa: E402
    MemoryTaskIdStore,
    SqliteTaskIdStore,
    TaskIdStore,
)
from mcp_tasks_ext.transport import HttpTransport  # noqa: E402
from tests.support import procs  # noqa: E402


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def terminal_time(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def serve_profiled(argv: list[str], out: str) -> None:
    """Run examples/server_ext.py's main under cProfile; dump the stats on SIGTERM."""
    import server_ext

    profile = cProfile.Profile()

    def stop(*_: Any) -> None:
        profile.disable()
        profile.dump_stats(out)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    sys.argv = ["server_ext.py", *argv]
    profile.enable()
    original = signal.signal

    def keep_sigterm(signum: int, handler: Any) -> Any:  # uvicorn installs its own
        if signum == signal.SIGTERM:
            return stop
        return original(signum, handler)

    signal.signal = keep_sigterm  # type: ignore[assignment]
    server_ext.main()


async def one_client(
    client: TasksClient, name: str, stop_at: float, seconds: float, delays: list[float]
) -> int:
    """Run tasks one after the other until ``stop_at``; return how many finished."""
    done = 0
    headers: dict[str, str] = getattr(client.transport, "_headers")
    while time.monotonic() < stop_at:
        if done % 500 == 499:  # the server keeps 1,000 finished tasks per principal
            headers["Authorization"] = f"{name}-{done}"
        handle = await client.start_tool(
            "slow_compute", {"seconds": seconds, "label": name}
        )
        await handle.result()
        returned = time.time()
        assert handle.task is not None
        delays.append(returned - terminal_time(handle.task.last_updated_at))
        done += 1
    return done


def id_store(kind: str, folder: Path) -> TaskIdStore:
    """The client's store of task IDs: the default (SQLite file, here one file in
    ``folder`` shared by every client, as the clients of one user share theirs) or
    memory."""
    return (
        MemoryTaskIdStore()
        if kind == "memory"
        else SqliteTaskIdStore(folder / "ids.db")
    )


async def one_round(
    url: str,
    clients: int,
    duration: float,
    seconds: float,
    server_pid: int,
    tag: str,
    ids: Callable[[], TaskIdStore],
) -> dict[str, float]:
    """``clients`` clients (made, and their connections opened, before the clock
    starts) running tasks for ``duration`` seconds."""
    delays: list[float] = []
    made = [
        TasksClient(
            HttpTransport(url, headers={"Authorization": f"{tag}-{i}"}),
            store=ids(),
            subscribe=True,
        )
        for i in range(clients)
    ]
    await asyncio.gather(*(client.discover() for client in made))
    cpu_server, cpu_here = cpu_seconds(server_pid), time.process_time()
    started = time.monotonic()
    stop_at = started + duration
    counts = await asyncio.gather(
        *(
            one_client(client, f"{tag}-{i}", stop_at, seconds, delays)
            for i, client in enumerate(made)
        )
    )
    elapsed = time.monotonic() - started
    cpu_server = cpu_seconds(server_pid) - cpu_server
    cpu_here = time.process_time() - cpu_here
    await asyncio.gather(*(client.aclose() for client in made))
    tasks = sum(counts)
    ms = sorted(d * 1000 for d in delays)
    return {
        "clients": clients,
        "tasks": tasks,
        "tasks_s": tasks / elapsed,
        "delay_median_ms": statistics.median(ms),
        "delay_p95_ms": ms[max(0, round(0.95 * len(ms)) - 1)],
        "server_cpu_ms_task": cpu_server * 1000 / tasks,
        "client_cpu_ms_task": cpu_here * 1000 / tasks,
        "load1": os.getloadavg()[0],
    }


async def worker(
    url: str, tag: str, seconds: float, ids_kind: str, folder: str
) -> None:
    """One client in its own process (``--processes``): make the client, print
    ``ready``, read ``go DURATION`` from stdin, run tasks for that long and print the
    outcome as JSON."""
    client = TasksClient(
        HttpTransport(url, headers={"Authorization": tag}),
        store=id_store(ids_kind, Path(folder)),
        subscribe=True,
    )
    await client.discover()
    print("ready", flush=True)
    line = await asyncio.to_thread(sys.stdin.readline)
    duration = float(line.split()[1])
    delays: list[float] = []
    cpu = time.process_time()
    done = await one_client(client, tag, time.monotonic() + duration, seconds, delays)
    cpu = time.process_time() - cpu
    await client.aclose()
    print(json.dumps({"tasks": done, "delays": delays, "cpu": cpu}), flush=True)


async def one_round_processes(
    url: str,
    clients: int,
    duration: float,
    seconds: float,
    server_pid: int,
    tag: str,
    ids_kind: str,
    folder: Path,
) -> dict[str, float]:
    """``one_round`` with each client in a process of its own."""
    workers = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--worker",
            url,
            f"{tag}-{i}",
            str(seconds),
            ids_kind,
            str(folder),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        for i in range(clients)
    ]
    for process in workers:
        assert process.stdout is not None
        ready = await asyncio.wait_for(process.stdout.readline(), 120)
        assert ready.strip() == b"ready", ready
    cpu_server = cpu_seconds(server_pid)
    started = time.monotonic()
    for process in workers:
        assert process.stdin is not None
        process.stdin.write(f"go {duration}\n".encode())
        await process.stdin.drain()
    outcomes = []
    for process in workers:
        assert process.stdout is not None
        outcomes.append(json.loads(await process.stdout.readline()))
    elapsed = time.monotonic() - started
    cpu_server = cpu_seconds(server_pid) - cpu_server
    for process in workers:
        await process.wait()
    tasks = sum(o["tasks"] for o in outcomes)
    ms = sorted(d * 1000 for o in outcomes for d in o["delays"])
    return {
        "clients": clients,
        "tasks": tasks,
        "tasks_s": tasks / elapsed,
        "delay_median_ms": statistics.median(ms),
        "delay_p95_ms": ms[max(0, round(0.95 * len(ms)) - 1)],
        "server_cpu_ms_task": cpu_server * 1000 / tasks,
        "client_cpu_ms_task": sum(o["cpu"] for o in outcomes) * 1000 / tasks,
        "load1": os.getloadavg()[0],
    }


def row(r: dict[str, float]) -> str:
    return (
        f"{int(r['clients']):>7} {r['tasks_s']:>8.1f} {r['delay_median_ms']:>9.1f}"
        f" {r['delay_p95_ms']:>8.1f} {r['server_cpu_ms_task']:>10.2f}"
        f" {r['client_cpu_ms_task']:>10.2f} {r['load1']:>6.1f}"
    )


HEADER = (
    f"{'clients':>7} {'tasks/s':>8} {'median ms':>9} {'p95 ms':>8}"
    f" {'srv cpu/t':>10} {'cli cpu/t':>10} {'load1':>6}"
)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="1,16")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds-per-round", type=float, default=8.0)
    parser.add_argument("--seconds", type=float, default=0.0, help="the tool's sleep")
    parser.add_argument(
        "--store", choices=["memory", "sqlite", "redis"], default="memory"
    )
    parser.add_argument(
        "--id-store",
        choices=["sqlite", "memory"],
        default="sqlite",
        help="the clients' TaskIdStore (default: the client's default, SQLite)",
    )
    parser.add_argument(
        "--processes",
        action="store_true",
        help="run each client in a process of its own (default: all in this one)",
    )
    parser.add_argument("--profile-server", metavar="FILE")
    parser.add_argument("--profile-client", metavar="FILE")
    parser.add_argument(
        "--smoke", action="store_true", help="one short round of 1 and 4 clients"
    )
    args = parser.parse_args()
    if args.smoke:
        args.clients, args.rounds, args.seconds_per_round = "1,4", 1, 1.0
    counts = [int(c) for c in args.clients.split(",")]
    with ExitStack() as stack:
        folder = Path(tempfile.mkdtemp(prefix="push-throughput-"))
        stack.callback(shutil.rmtree, folder, True)
        port = procs.free_port()
        store_args = {"memory": ["--memory"], "sqlite": ["--db", str(folder / "t.db")]}
        if args.store == "redis":
            redis = stack.enter_context(procs.start_redis())
            store_args["redis"] = ["--redis", redis.url]
        server_args = [*store_args[args.store], "--port", str(port)]
        if args.profile_server:
            command = [
                sys.executable,
                __file__,
                "--serve-profiled",
                str(Path(args.profile_server).resolve()),
                " ".join(server_args),
            ]
        else:
            command = [sys.executable, str(ROOT / "examples" / "server_ext.py")]
            command += server_args
        server = stack.enter_context(procs.run_server(command, port))
        url = f"http://127.0.0.1:{port}/mcp"
        print(
            f"server store {args.store}, client id store {args.id_store},"
            f" clients in {'a process each' if args.processes else 'this process'},"
            f" tool slow_compute seconds={args.seconds},"
            f" {args.seconds_per_round:g} s per round, {os.cpu_count()} CPUs"
        )
        ids = lambda: id_store(args.id_store, folder)  # noqa: E731
        await one_round(
            url, max(counts), 1.0, args.seconds, server.proc.pid, "warm", ids
        )
        results: dict[int, list[dict[str, float]]] = {c: [] for c in counts}
        profile = cProfile.Profile() if args.profile_client else None
        print(HEADER)
        for round_number in range(args.rounds):
            order = counts if round_number % 2 == 0 else counts[::-1]
            for clients in order:
                profiling = profile is not None and clients == max(counts)
                if profiling:
                    profile.enable()
                if args.processes:
                    r = await one_round_processes(
                        url,
                        clients,
                        args.seconds_per_round,
                        args.seconds,
                        server.proc.pid,
                        f"r{round_number}c{clients}",
                        args.id_store,
                        folder,
                    )
                else:
                    r = await one_round(
                        url,
                        clients,
                        args.seconds_per_round,
                        args.seconds,
                        server.proc.pid,
                        f"r{round_number}c{clients}",
                        ids,
                    )
                if profiling:
                    profile.disable()
                results[clients].append(r)
                print(row(r), flush=True)
        print("medians of the rounds:")
        print(HEADER)
        for clients in counts:
            rs = results[clients]
            print(
                row(
                    {k: statistics.median(r[k] for r in rs) for k in rs[0]}
                    | {"clients": clients}
                )
            )
        base = results[counts[0]]
        for clients in counts[1:]:
            ratios = [
                r["tasks_s"] / b["tasks_s"]
                for r, b in zip(results[clients], base, strict=True)
            ]
            print(
                f"tasks/s ratio {clients} vs {counts[0]} clients, per round:"
                f" {', '.join(f'{x:.2f}' for x in ratios)};"
                f" median {statistics.median(ratios):.2f}"
            )
        if profile is not None:
            profile.dump_stats(args.profile_client)
        if args.profile_server:
            server.proc.send_signal(signal.SIGTERM)
            server.proc.wait(timeout=30)
    if args.profile_server:
        pstats.Stats(args.profile_server).sort_stats("tottime").print_stats(25)
    if args.profile_client:
        pstats.Stats(args.profile_client).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve-profiled"]:  # the server under cProfile
        serve_profiled(sys.argv[3].split(), sys.argv[2])
    elif sys.argv[1:2] == ["--worker"]:  # one client of a --processes round
        url, tag, seconds, ids_kind, folder = sys.argv[2:7]
        asyncio.run(worker(url, tag, float(seconds), ids_kind, folder))
    else:
        asyncio.run(main())
