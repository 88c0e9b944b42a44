"""A create costs the store the same however many finished tasks its caller has.

The limits are checked against counters the store keeps (``stores.Quota``), not by
reading the caller's tasks. Counted, not timed: the same three ``tools/call`` creates
through ``TasksServer.handle`` are measured for a principal with 10 and with 5,000
finished tasks, and must cost exactly the same:

- on Redis, the commands Redis executes (``INFO commandstats`` deltas, which include
  the commands a Lua script runs) and the requests the client writes (a connection
  class counting ``send_packed_command``: one per command, one per pipeline);
- on SQLite, the statements run on the store's writing connection
  (``set_trace_callback``, trigger bodies included) and the virtual-machine
  instructions they execute (``set_progress_handler`` called at every instruction),
  which grow with the rows a statement visits.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_tasks_ext.redis_store import RedisTaskStore
from mcp_tasks_ext.server import Limits, RequestInfo, TasksServer, ToolContext
from mcp_tasks_ext.stores import SQLiteTaskStore, TaskRecord, TaskStore
from tests.support.procs import RedisHandle, start_redis

pytestmark = pytest.mark.anyio

EXT_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}
CREATES = 3


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisHandle]:
    """A private redis-server: nothing else runs commands on it."""
    with start_redis() as handle:
        yield handle


def finished(n: int) -> TaskRecord:
    """A completed task of ``alice``."""
    now = time.time()
    return TaskRecord(
        task_id=f"done-{n:05d}",
        owner="alice",
        tool="hold",
        status="completed",
        created_at=now,
        updated_at=now,
        ttl_ms=3_600_000,
        result={"content": [{"type": "text", "text": f"result {n:05d}"}]},
    )


class Meter:
    """What the store did between ``start`` and ``read``."""

    async def start(self) -> None:
        raise NotImplementedError

    async def read(self) -> dict[str, int]:
        raise NotImplementedError


async def cost_of_creates(
    store: TaskStore, meter: Meter, finished_tasks: int
) -> dict[str, int]:
    """Give ``alice`` ``finished_tasks`` finished tasks, then measure ``CREATES``
    task creations of hers through the server."""
    server = TasksServer(
        "cost",
        store=store,
        limits=Limits(sweep_interval_s=3600, lease_s=3600, max_finished_tasks=10_000),
        recover_orphans=False,
    )
    gate = asyncio.Event()

    @server.tool()
    async def hold(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await gate.wait()
        return "done"

    async with server:
        for n in range(finished_tasks):
            await store.create(finished(n))
        await meter.start()
        for n in range(CREATES):
            response = await server.handle(
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {"name": "hold", "arguments": {}, "_meta": EXT_META},
                },
                RequestInfo(principal="alice"),
            )
            assert response is not None and "result" in response, response
        counted = await meter.read()
        gate.set()
    return counted


class RedisMeter(Meter):
    """Commands Redis executed and requests the store's client wrote."""

    writes = 0

    def __init__(self, admin: Any) -> None:
        self.admin = admin
        self.before = 0

    async def commands(self) -> int:
        stats = await self.admin.info("commandstats")
        return sum(
            int(v["calls"]) for name, v in stats.items() if name != "cmdstat_info"
        )

    async def start(self) -> None:
        self.before = await self.commands()
        RedisMeter.writes = 0

    async def read(self) -> dict[str, int]:
        return {
            "commands": await self.commands() - self.before,
            "requests": RedisMeter.writes,
        }


def counting_client(url: str) -> Any:
    """A redis-py client whose connections count what they send (``RedisMeter``)."""
    from redis.asyncio import ConnectionPool, Redis
    from redis.asyncio.connection import Connection

    class CountingConnection(Connection):
        async def send_packed_command(
            self, command: Any, check_health: bool = True
        ) -> None:
            RedisMeter.writes += 1
            await super().send_packed_command(command, check_health)

    return Redis(
        connection_pool=ConnectionPool.from_url(
            url, connection_class=CountingConnection
        )
    )


async def test_a_create_costs_redis_the_same_at_10_and_5000_finished_tasks(
    redis_server: RedisHandle,
) -> None:
    from redis.asyncio import from_url

    admin: Any = from_url(redis_server.url)
    costs = []
    try:
        for finished_tasks in (10, 5000):
            client = counting_client(redis_server.url)
            store = RedisTaskStore(
                redis_server.url,
                prefix=f"cost-{uuid.uuid4().hex[:8]}:",
                client=client,
                check_persistence=False,
            )
            try:
                costs.append(
                    await cost_of_creates(store, RedisMeter(admin), finished_tasks)
                )
            finally:
                await client.aclose()
    finally:
        await admin.aclose()
    assert costs[0] == costs[1], costs
    assert costs[0]["requests"] <= 3 * CREATES, costs  # a lease and the create script


class SQLiteMeter(Meter):
    """Statements and VM instructions on the store's writing connection."""

    def __init__(self, store: SQLiteTaskStore) -> None:
        self.store = store
        self.statements = 0
        self.instructions = 0

    async def start(self) -> None:
        def install(conn: Any) -> None:
            def traced(statement: str) -> None:
                self.statements += 1

            def stepped() -> int:
                self.instructions += 1
                return 0

            conn.set_trace_callback(traced)
            conn.set_progress_handler(stepped, 1)

        await self.store._run(install)  # type: ignore[attr-defined]
        self.statements = self.instructions = 0

    async def read(self) -> dict[str, int]:
        def uninstall(conn: Any) -> None:
            conn.set_trace_callback(None)
            conn.set_progress_handler(None, 1)

        await self.store._run(uninstall)  # type: ignore[attr-defined]
        return {"statements": self.statements, "instructions": self.instructions}


async def test_a_create_costs_sqlite_the_same_at_10_and_5000_finished_tasks(
    tmp_path: Path,
) -> None:
    costs = []
    for finished_tasks in (10, 5000):
        path = str(tmp_path / f"{finished_tasks}.sqlite3")
        store = SQLiteTaskStore(path, synchronous="OFF")
        costs.append(await cost_of_creates(store, SQLiteMeter(store), finished_tasks))
    assert costs[0] == costs[1], costs
