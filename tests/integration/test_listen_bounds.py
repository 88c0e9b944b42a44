"""``subscriptions/listen`` over real HTTP: its transport, what it acknowledges, its
bounds.

The extension server runs in this process under uvicorn on 127.0.0.1 (so the test can
look at its subscription tables) with each store: memory, SQLite, Redis.

- The listen result is an SSE stream: a request whose ``Accept`` header does not take
  ``text/event-stream`` gets HTTP 406 (as the MCP SDKs answer it), not a stream.
- The acknowledgement lists only the caller's own tasks, each once; an unknown ID and
  another principal's task are left out alike (nothing tells them apart), and a listen
  that follows nothing ends right after its acknowledgement.
- ``Limits.max_listen_task_ids`` bounds the IDs of one listen and
  ``Limits.max_listens`` the open listens of one principal.
- Whatever a listen registers is released when it ends, when the client closes the
  stream or when its tasks are done: after many listens, the server's subscription
  tables are empty.

Spec: X26 §Task Status Notifications (acknowledged ``taskIds`` = the IDs the server
agreed to report), SUB26, HTTP26 (POST ``Accept`` lists ``text/event-stream``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from mcp_tasks_ext.asgi import create_app
from mcp_tasks_ext.redis_store import RedisTaskStore
from mcp_tasks_ext.server import Limits, RequestInfo, TasksServer, ToolContext
from mcp_tasks_ext.stores import InMemoryTaskStore, SQLiteTaskStore, TaskStore
from tests.support.procs import HOST, RedisHandle, free_port, start_redis
from tests.support.waiting import until

pytestmark = pytest.mark.anyio

EXT = "io.modelcontextprotocol/tasks"
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
MAX_IDS = 5
MAX_LISTENS = 4


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisHandle]:
    with start_redis() as handle:
        yield handle


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> TaskStore:
    """A fresh store of each kind."""
    if request.param == "memory":
        return InMemoryTaskStore()
    if request.param == "sqlite":
        return SQLiteTaskStore(str(tmp_path / "tasks.sqlite3"))
    redis: RedisHandle = request.getfixturevalue("redis_server")
    return RedisTaskStore(redis.url, prefix=f"listen-{uuid.uuid4().hex[:8]}:")


class Running:
    """The server under test, its URL, and the gate its ``gated`` tool waits on."""

    def __init__(self, server: TasksServer, url: str, gate: asyncio.Event) -> None:
        self.server, self.url, self.gate = server, url, gate
        self.ids = 0

    def message(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request declaring the extension, with a fresh id."""
        self.ids += 1
        body = {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}},
            },
        }
        return {
            "jsonrpc": "2.0",
            "id": f"r-{self.ids}",
            "method": method,
            "params": body,
        }

    async def start_task(self, principal: str) -> str:
        """A ``gated`` task of ``principal``, created in process."""
        created = await self.server.handle(
            self.message("tools/call", {"name": "gated", "arguments": {}}),
            RequestInfo(principal=principal),
        )
        assert created is not None and "result" in created, created
        task_id: str = created["result"]["taskId"]
        return task_id

    def listen(self, task_ids: list[str]) -> dict[str, Any]:
        return self.message(
            "subscriptions/listen", {"notifications": {"taskIds": task_ids}}
        )


def headers(
    principal: str, accept: str | None = "application/json, text/event-stream"
) -> dict[str, str]:
    sent = {
        "authorization": principal,
        "mcp-method": "subscriptions/listen",
        "mcp-protocol-version": "2026-07-28",
    }
    if accept is not None:
        sent["accept"] = accept
    return sent


@contextlib.asynccontextmanager
async def running(store: TaskStore) -> AsyncIterator[Running]:
    """The extension server on ``store``, served by uvicorn in this event loop."""
    server = TasksServer(
        "listen",
        store=store,
        authenticate=lambda request: (request.headers or {}).get("authorization")
        or request.principal,
        limits=Limits(
            max_listens=MAX_LISTENS, max_listen_task_ids=MAX_IDS, sweep_interval_s=3600
        ),
    )
    gate = asyncio.Event()

    @server.tool()
    async def gated(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Return once the test opens the gate."""
        await gate.wait()
        return "done"

    port = free_port()
    config = uvicorn.Config(
        create_app(server),
        host=HOST,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    http = uvicorn.Server(config)
    serving = asyncio.create_task(http.serve())
    await until(lambda: http.started or serving.done(), what="uvicorn started")
    assert not serving.done(), serving
    try:
        yield Running(server, f"http://{HOST}:{port}/mcp", gate)
    finally:
        gate.set()
        http.should_exit = True
        await asyncio.wait_for(serving, 15)


class Stream:
    """One open listen stream: its HTTP response and the events read so far."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.events: list[dict[str, Any]] = []
        self._lines = response.aiter_lines()

    async def next_event(self) -> dict[str, Any] | None:
        """The next SSE event (None at the end of the stream), within 10 s."""

        async def read() -> dict[str, Any] | None:
            async for line in self._lines:
                if line.startswith("data: "):
                    event: dict[str, Any] = json.loads(line[6:])
                    self.events.append(event)
                    return event
            return None

        return await asyncio.wait_for(read(), 10)


@contextlib.asynccontextmanager
async def open_listen(
    client: httpx.AsyncClient,
    url: str,
    message: dict[str, Any],
    principal: str,
    accept: str = "application/json, text/event-stream",
) -> AsyncIterator[Stream]:
    """POST a listen and hold its stream open for the block (closed on exit)."""
    async with client.stream(
        "POST", url, json=message, headers=headers(principal, accept)
    ) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = Stream(response)  # held here: a dropped line iterator closes it
        yield stream


async def test_listen_without_an_event_stream_accept_header_is_406(
    store: TaskStore,
) -> None:
    async with running(store) as h:
        mine = await h.start_task("alice")
        async with httpx.AsyncClient(timeout=10) as client:
            del client.headers["accept"]  # httpx sends "*/*" unless told otherwise
            refused = {}
            for accept in ("application/json", None, "text/event-stream;q=0"):
                message = h.listen([mine])
                response = await client.post(
                    h.url, json=message, headers=headers("alice", accept)
                )
                refused[accept] = (response.status_code, response.json(), message["id"])
            for accept in ("text/event-stream", "*/*", "application/json, text/*"):
                listen = h.listen([mine])
                async with open_listen(client, h.url, listen, "alice", accept) as s:
                    assert (await s.next_event() or {}).get(
                        "method"
                    ) == "notifications/subscriptions/acknowledged", accept
    for accept, (status, body, request_id) in refused.items():
        assert status == 406, (accept, status, body)
        assert body["id"] == request_id
        assert body["error"]["code"] == -32600
        assert "text/event-stream" in body["error"]["message"]


async def test_listen_acknowledges_only_the_callers_own_tasks_once(
    store: TaskStore,
) -> None:
    async with running(store) as h:
        mine = await h.start_task("alice")
        theirs = await h.start_task("bob")
        unknown = uuid.uuid4().hex
        async with httpx.AsyncClient(timeout=10) as client:
            message = h.listen([theirs, mine, unknown, mine])
            async with open_listen(client, h.url, message, "alice") as stream:
                ack = await stream.next_event()
                first = await stream.next_event()
                h.gate.set()
                while await stream.next_event() is not None:
                    pass  # the stream ends once the task is done
                followed = stream.events[1:-1]
            # only foreign and unknown IDs: acknowledged as nothing, ended at once
            message = h.listen([theirs, unknown])
            async with open_listen(client, h.url, message, "alice") as stream:
                nothing = await stream.next_event()
                end = await stream.next_event()
                assert await stream.next_event() is None
    assert ack is not None and first is not None
    assert ack["params"]["notifications"] == {"taskIds": [mine]}
    assert first["params"]["taskId"] == mine
    assert {e["params"]["taskId"] for e in followed} == {mine}
    assert followed[-1]["params"]["status"] == "completed"
    assert nothing is not None and nothing["params"]["notifications"] == {"taskIds": []}
    assert end is not None and end["id"] == message["id"]
    assert end["result"]["_meta"][SUBSCRIPTION] == message["id"]


async def test_listen_ids_and_open_listens_are_bounded_per_principal(
    store: TaskStore,
) -> None:
    async with running(store) as h:
        mine = [await h.start_task("alice") for _ in range(MAX_IDS)]
        theirs = await h.start_task("bob")
        async with httpx.AsyncClient(timeout=10) as client:
            too_many = await client.post(
                h.url,
                json=h.listen([*mine, uuid.uuid4().hex]),
                headers=headers("alice"),
            )
            async with contextlib.AsyncExitStack() as streams:
                for _ in range(MAX_LISTENS):
                    stream = await streams.enter_async_context(
                        open_listen(client, h.url, h.listen(mine), "alice")
                    )
                    await stream.next_event()
                refused = await client.post(
                    h.url, json=h.listen(mine), headers=headers("alice")
                )
                # another principal is not affected
                async with open_listen(client, h.url, h.listen([theirs]), "bob") as s:
                    assert (await s.next_event() or {})["params"]["notifications"] == {
                        "taskIds": [theirs]
                    }
            # the streams closed: alice may listen again
            await until(
                lambda: not h.server.notifications.listens, what="listens released"
            )
            async with open_listen(client, h.url, h.listen(mine), "alice") as stream:
                await stream.next_event()
    assert too_many.json()["error"]["code"] == -32602, too_many.json()
    assert f"limit {MAX_IDS}" in too_many.json()["error"]["message"]
    error = refused.json()["error"]
    assert error["code"] == Limits().limit_error_code, error
    assert f"limit {MAX_LISTENS}" in error["message"]


async def test_subscription_tables_are_empty_after_listens_end(
    store: TaskStore,
) -> None:
    rounds, per_round = 5, MAX_LISTENS
    async with running(store) as h:
        principals = [f"user-{n}" for n in range(per_round)]
        tasks = {p: [await h.start_task(p) for _ in range(MAX_IDS)] for p in principals}
        async with httpx.AsyncClient(timeout=10) as client:
            for _ in range(rounds):
                async with contextlib.AsyncExitStack() as streams:
                    for principal in principals:
                        for _ in range(MAX_LISTENS):
                            ids = [*tasks[principal][1:], uuid.uuid4().hex]
                            stream = await streams.enter_async_context(
                                open_listen(client, h.url, h.listen(ids), principal)
                            )
                            await stream.next_event()  # acknowledged: registered
                    followed = {t for ids in tasks.values() for t in ids[1:]}
                    assert set(h.server.notifications.listeners) == followed
                    assert all(
                        len(subs) == MAX_LISTENS
                        for subs in h.server.notifications.listeners.values()
                    )
                    assert h.server.notifications.listens == {
                        f"principal:{p}": MAX_LISTENS for p in principals
                    }
                # the client closed every stream: the server lets go of all of it
                await until(
                    lambda: not h.server.notifications.listeners
                    and not h.server.notifications.listens,
                    what="subscription tables empty",
                )
            # listens that end on the server's side (their tasks are done) as well
            async with contextlib.AsyncExitStack() as streams:
                opened = [
                    await streams.enter_async_context(
                        open_listen(client, h.url, h.listen(tasks[p]), p)
                    )
                    for p in principals
                ]
                for stream in opened:
                    await stream.next_event()
                assert (
                    h.server.notifications.listeners and h.server.notifications.listens
                )
                h.gate.set()
                for stream in opened:
                    while await stream.next_event() is not None:
                        pass
                assert (
                    not h.server.notifications.listeners
                    and not h.server.notifications.listens
                )
