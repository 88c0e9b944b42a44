"""What one task creation costs the store, by how many finished tasks its caller has.

For the SQLite and the Redis store, the caller (one principal) is given ``--finished``
finished tasks (default 10, 1,000 and 5,000), written straight into the store; then
``--creates`` tasks are created through ``TasksServer.handle`` (``tools/call`` of the
extension revision, in process, no transport), one at a time, each running a tool that
waits until the end. Printed per create:

- the median and p90 wall time of ``handle`` (the server's limit checks and the create);
- Redis: the commands Redis executed (``INFO commandstats``: every command, those
  a Lua script runs included, less the ``INFO`` calls themselves) and the round trips
  (requests the client wrote to its socket);
- SQLite: the statements run (``set_trace_callback``: trigger bodies included) and the
  virtual-machine instructions executed, in thousands (``set_progress_handler``), on the
  store's writing connection.

Run from the repository root (``redis-server`` on PATH)::

    .venv/bin/python benchmarks/create_cost.py [--finished 10 1000 5000] [--creates 200]

Every create must answer with a task (``replies.py``): an error reply stops the run with
exit status 1 and the reply. ``--smoke`` (10 and 100 finished tasks, 10 creates) checks
in seconds that the script works, with no figures to keep.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from replies import BadReply, result  # noqa: E402
from replies import run as run_checked  # noqa: E402

from mcp_tasks_ext.redis_store import RedisTaskStore  # noqa: E402
from mcp_tasks_ext.server import (  # noqa: E402
    Limits,
    RequestInfo,
    TasksServer,
    ToolContext,
)
from mcp_tasks_ext.stores import SQLiteTaskStore, TaskRecord, TaskStore  # noqa: E402

EXT_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}
PRINCIPAL = "bench"


def finished_record(n: int) -> TaskRecord:
    """A completed task of the principal with a small result."""
    now = time.time()
    return TaskRecord(
        task_id=f"done-{n}-{uuid.uuid4().hex}",
        owner=PRINCIPAL,
        tool="hold",
        status="completed",
        created_at=now,
        updated_at=now,
        ttl_ms=3_600_000,
        result={"content": [{"type": "text", "text": f"result {n}"}]},
    )


class Probe:
    """Counts what the store does: a ``measure()`` returns the counts since
    ``start()``."""

    async def start(self) -> None: ...

    async def measure(self) -> dict[str, float]:
        return {}


class RedisProbe(Probe):
    """Commands executed by Redis (commandstats) and requests written by the client."""

    writes = 0
    """Requests written to a socket by any ``CountingConnection`` (a pipeline: one)."""

    def __init__(self, store: RedisTaskStore, admin: Any) -> None:
        self.admin = admin
        self._before = 0

    async def _commands(self) -> int:
        stats = await self.admin.info("commandstats")
        return sum(
            int(value["calls"])
            for name, value in stats.items()
            if name != "cmdstat_info"
        )

    async def start(self) -> None:
        self._before = await self._commands()
        RedisProbe.writes = 0

    async def measure(self) -> dict[str, float]:
        return {
            "commands": float(await self._commands() - self._before),
            "round_trips": float(RedisProbe.writes),
        }


def counting_client(url: str) -> Any:
    """A ``redis.asyncio.Redis`` whose connections count the requests they write."""
    from redis.asyncio import ConnectionPool, Redis
    from redis.asyncio.connection import Connection

    class CountingConnection(Connection):
        async def send_packed_command(
            self, command: Any, check_health: bool = True
        ) -> None:
            RedisProbe.writes += 1
            await super().send_packed_command(command, check_health)

    pool = ConnectionPool.from_url(url, connection_class=CountingConnection)
    return Redis(connection_pool=pool)


class SQLiteProbe(Probe):
    """Statements and VM instructions on the store's writing connection."""

    def __init__(self, store: SQLiteTaskStore) -> None:
        self.store = store
        self.statements = 0
        self.steps = 0

    async def start(self) -> None:
        def install(conn: Any) -> None:
            def traced(_: str) -> None:
                self.statements += 1

            def progressed() -> int:
                self.steps += 1
                return 0

            conn.set_trace_callback(traced)
            conn.set_progress_handler(progressed, 1000)

        await self.store._run(install)  # noqa: SLF001 - instrumentation only
        self.statements = 0
        self.steps = 0

    async def measure(self) -> dict[str, float]:
        return {"statements": float(self.statements), "vm_kinstr": float(self.steps)}


async def run_one(
    store: TaskStore, probe_for: Any, finished: int, creates: int
) -> dict[str, float]:
    """Fill the store, then time ``creates`` creates through the server."""
    server = TasksServer(
        "bench",
        store=store,
        limits=Limits(
            max_active_tasks=creates + 1,
            max_finished_tasks=finished + creates + 1,
            sweep_interval_s=3600,
            lease_s=3600,
        ),
        recover_orphans=False,
    )
    gate = asyncio.Event()

    @server.tool()
    async def hold(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await gate.wait()
        return "done"

    info = RequestInfo(principal=PRINCIPAL)
    async with server:
        for n in range(finished):
            await store.create(finished_record(n))
        probe: Probe = probe_for(store)
        await probe.start()
        times = []
        for n in range(creates):
            message = {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {"name": "hold", "arguments": {}, "_meta": EXT_META},
            }
            began = time.perf_counter()
            response = await server.handle(message, info)
            times.append(time.perf_counter() - began)
            result(response or {}, f"tools/call {n} ({finished} finished)", "taskId")
        counts = await probe.measure()
        gate.set()
    times.sort()
    row = {
        "median_ms": statistics.median(times) * 1000,
        "p90_ms": times[int(len(times) * 0.9)] * 1000,
    }
    row.update({name: value / creates for name, value in counts.items()})
    return row


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def main(options: argparse.Namespace) -> None:
    from redis.asyncio import from_url

    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not on PATH")
    port = free_port()
    redis = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    admin: Any = from_url(url)
    try:
        for _ in range(200):
            try:
                await admin.ping()
                break
            except Exception:  # not listening yet
                await asyncio.sleep(0.05)
        else:
            raise BadReply(f"redis-server on port {port} did not answer PING in 10 s")
        with tempfile.TemporaryDirectory() as scratch:
            for finished in options.finished:
                path = str(Path(scratch) / f"{finished}.sqlite3")
                sqlite_row = await run_one(
                    SQLiteTaskStore(path, synchronous=options.synchronous),
                    SQLiteProbe,
                    finished,
                    options.creates,
                )
                client = counting_client(url)
                redis_row = await run_one(
                    RedisTaskStore(
                        url,
                        prefix=f"bench-{uuid.uuid4().hex}:",
                        check_persistence=False,
                        client=client,
                    ),
                    lambda store: RedisProbe(store, admin),
                    finished,
                    options.creates,
                )
                await client.aclose()
                for name, row in (("sqlite", sqlite_row), ("redis", redis_row)):
                    figures = "  ".join(
                        f"{key} {value:.2f}" for key, value in row.items()
                    )
                    print(f"{name:6} finished {finished:>6}: {figures}", flush=True)
    finally:
        await admin.aclose()
        redis.terminate()
        redis.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--finished", type=int, nargs="+", default=[10, 1000, 5000])
    parser.add_argument("--creates", type=int, default=200)
    parser.add_argument(
        "--synchronous",
        default="FULL",
        help="SQLite synchronous setting (FULL, NORMAL, OFF)",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="10 and 100 finished tasks, 10 creates"
    )
    options = parser.parse_args()
    if options.smoke:
        options.finished, options.creates = [10, 100], 10
    run_checked(lambda: asyncio.run(main(options)))
