"""Replicas on Redis when Redis misbehaves: outages, a cut link, restarts, persistence.

- An outage of Redis gives every request a clear JSON-RPC error (no HTTP 500, no
  traceback in the log), logs one warning with the cause, and service resumes by
  itself when Redis is back; with ``appendonly yes`` the tasks survive the restart.
- A ``tasks/update`` answer published while the worker replica's link to Redis is
  cut (pub/sub delivers at most once) is picked up from the stored task when the
  link comes back: a TCP proxy in the test stands between that replica and Redis.
- A task whose worker waits past its TTL ends ``failed`` before it expires instead
  of vanishing without a terminal status.
- The example server warns at start when Redis would lose acknowledged tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from mcp_tasks_ext.redis_store import RedisTaskStore
from mcp_tasks_ext.server import Limits, RequestInfo, TasksServer, ToolContext
from tests.integration.test_replicas import (
    EXAMPLE,
    call,
    create,
    headers_for,
    message,
    wait_status,
)
from tests.support.procs import (
    HOST,
    RedisHandle,
    ServerHandle,
    free_port,
    run_server,
    start_redis,
)

pytestmark = pytest.mark.anyio

LEASE_S = 3.0
PERSISTENCE_WARNING = "would lose acknowledged tasks"


@contextlib.contextmanager
def replica(redis_url: str) -> Iterator[ServerHandle]:
    """One ``examples/server_ext.py`` process on ``redis_url`` with a short lease."""
    port = free_port()
    cmd = [
        sys.executable,
        str(EXAMPLE),
        "--host",
        HOST,
        "--port",
        str(port),
        "--redis",
        redis_url,
        "--lease-seconds",
        str(LEASE_S),
    ]
    with run_server(cmd, port, url_path="/mcp", timeout=30) as handle:
        yield handle


@contextlib.asynccontextmanager
async def replica_beside(redis_url: str) -> AsyncIterator[ServerHandle]:
    """:func:`replica`, started in a thread so that this event loop (the proxy's)
    runs."""
    manager = replica(redis_url)
    handle = await asyncio.to_thread(manager.__enter__)
    try:
        yield handle
    finally:
        await asyncio.to_thread(manager.__exit__, None, None, None)


async def post(server: ServerHandle, method: str, **params: Any) -> httpx.Response:
    """POST one request to ``server``; the raw HTTP response."""
    request = message(method, params)
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.post(server.url, json=request, headers=headers_for(request))


# -- a TCP proxy that can cut one replica's link to Redis ---------------------------


class Proxy:
    """Forwards 127.0.0.1:``port`` to a Redis port until :meth:`cut`."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.severed = False
        self.accepted = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self._pumps: set[asyncio.Task[None]] = set()
        self.reconnected = asyncio.Event()

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, HOST, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for pump in list(self._pumps):
            pump.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)

    def cut(self) -> None:
        """Reset every open connection and refuse new ones until :meth:`restore`."""
        self.severed = True
        self.reconnected.clear()
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    def restore(self) -> None:
        self.severed = False

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if self.severed:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(HOST, self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self.accepted += 1
        self.reconnected.set()
        self._writers |= {writer, up_writer}
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            pump = asyncio.ensure_future(self._pump(source, sink))
            self._pumps.add(pump)
            pump.add_done_callback(self._pumps.discard)

    async def _pump(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter
    ) -> None:
        try:
            while chunk := await source.read(65536):
                sink.write(chunk)
                await sink.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(sink)
            sink.transport.abort()


@contextlib.asynccontextmanager
async def proxy_to(redis: RedisHandle) -> AsyncIterator[Proxy]:
    proxy = Proxy(redis.port)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.close()


# -- item 9: a lost answer signal ----------------------------------------------------


async def test_an_answer_missed_while_the_link_was_cut_reaches_the_worker() -> None:
    with start_redis() as redis:
        async with (
            proxy_to(redis) as proxy,
            replica_beside(proxy.url) as a,
            replica_beside(redis.url) as b,
        ):
            asked = await create(a, "ask_name")
            waiting = await wait_status(b, asked, {"input_required"})
            (key,) = waiting["inputRequests"]
            # A's link to Redis (its signal subscription included) goes down; the
            # answer through B is stored and published while A cannot hear it
            proxy.cut()
            answer = {"action": "accept", "content": {"name": "Ada"}}
            await call(b, "tasks/update", taskId=asked, inputResponses={key: answer})
            proxy.restore()
            await asyncio.wait_for(proxy.reconnected.wait(), 10)
            done = await wait_status(b, asked, {"completed"}, timeout=LEASE_S + 3)
            assert done["result"]["content"][0]["text"] == "hello Ada"


# -- item 9: the TTL runs out while the worker waits ---------------------------------


async def test_a_waiting_task_fails_before_its_ttl_instead_of_vanishing() -> None:
    with start_redis() as redis:
        server = TasksServer(
            "ttl",
            store=RedisTaskStore(redis.url, prefix=f"ttl-{uuid.uuid4().hex[:8]}:"),
            limits=Limits(lease_s=LEASE_S, default_ttl_ms=2500, sweep_interval_s=0.2),
        )
        cancelled = asyncio.Event()

        @server.tool()
        async def ask(ctx: ToolContext, arguments: dict[str, Any]) -> str:
            """Ask a question nobody answers."""
            try:
                answer = await ctx.elicit(
                    "Anyone?",
                    {"type": "object", "properties": {"x": {"type": "string"}}},
                )
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return str(answer)

        async with server:
            created = await server.handle(
                message("tools/call", {"name": "ask", "arguments": {}}), RequestInfo()
            )
            assert created is not None and "result" in created, created
            task_id = created["result"]["taskId"]
            seen: list[str] = []
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                got = await server.handle(
                    message("tasks/get", {"taskId": task_id}), RequestInfo()
                )
                assert got is not None
                if "error" in got:  # expired and purged
                    break
                status = got["result"]["status"]
                if not seen or seen[-1] != status:
                    seen.append(status)
                if status == "failed":
                    assert "TTL" in got["result"]["error"]["message"], got
                    break
                await asyncio.sleep(0.05)
            assert seen[-1:] == ["failed"], f"task went {seen} and then vanished"
            await asyncio.wait_for(cancelled.wait(), 5)


# -- item 8: an outage -------------------------------------------------------------


async def test_an_outage_gives_clear_errors_one_warning_and_service_resumes() -> None:
    with start_redis(appendonly=True) as redis:
        with replica(redis.url) as a:
            kept = await create(a, "slow_compute", seconds=0, label="kept")
            await wait_status(a, kept, {"completed"})
            redis.kill9()
            for method, params in [
                ("tasks/get", {"taskId": kept}),
                ("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}}),
                ("tasks/get", {"taskId": kept}),
            ]:
                response = await post(a, method, **params)
                assert response.status_code < 500, response.text
                error = response.json()["error"]
                assert error["code"] == -32603, error
                assert "unavailable" in error["message"], error
            redis.start()
            # service resumes by itself, and the task written before survived (AOF)
            deadline = time.monotonic() + 10
            while "result" not in (
                body := (await post(a, "tasks/get", taskId=kept)).json()
            ):
                assert time.monotonic() < deadline, body
                await asyncio.sleep(0.1)
            assert body["result"]["status"] == "completed"
            assert body["result"]["result"]["content"][0]["text"].startswith(
                "computed kept"
            )
            log = a.log_tail(400)
        assert "Traceback" not in log, log
        warnings = [line for line in log.splitlines() if "unreachable" in line]
        assert len(warnings) == 1, log
        assert "Connect" in warnings[0] or "connect" in warnings[0], warnings


# -- item 10: persistence ----------------------------------------------------------


async def test_example_warns_when_redis_would_lose_acknowledged_tasks() -> None:
    with start_redis() as volatile, start_redis(appendonly=True) as durable:
        with replica(volatile.url) as a:
            assert (
                await get_ok(a)
            ) and PERSISTENCE_WARNING in a.log_tail(), a.log_tail()
        with replica(durable.url) as b:
            assert (
                await get_ok(b)
            ) and PERSISTENCE_WARNING not in b.log_tail(), b.log_tail()


async def get_ok(server: ServerHandle) -> bool:
    """Whether ``server`` answers a request (so its start-up checks have run)."""
    return (await post(server, "tools/list")).status_code == 200


async def persistence_problems(url: str) -> list[str]:
    """What ``RedisTaskStore.persistence_problems`` finds on the server at ``url``."""
    store = RedisTaskStore(url, check_persistence=False)
    await store.open()
    try:
        return await store.persistence_problems()
    finally:
        await store.close()


async def test_the_persistence_check_reads_the_server_config() -> None:
    from redis.asyncio import from_url

    with start_redis() as volatile, start_redis(appendonly=True) as durable:
        (problem,) = await persistence_problems(volatile.url)
        assert "restart loses every task" in problem, problem
        assert await persistence_problems(durable.url) == []
        # a server that refuses CONFIG (a managed Redis, an ACL): say it cannot tell
        raw: Any = from_url(durable.url)
        try:
            await raw.execute_command("ACL", "SETUSER", "default", "-config")
        finally:
            await raw.aclose()
        (problem,) = await persistence_problems(durable.url)
        assert "could not check" in problem, problem
