"""``tasks/list`` cursors: a position among the caller's own tasks, valid on every
replica.

A cursor used to be the base64 of the store's server-wide sequence number, so the gap
between two of a caller's cursors told how many tasks everybody else had created. Now
it names the caller's own tasks at the page boundary (the last listed and the next
one), and any server on the same store resumes it.

- On the memory, SQLite and Redis stores: what a caller's cursors hold besides the
  caller's own task IDs is the same whether another principal created no task or
  many in between; another principal's cursor is ``-32602`` for the caller.
- Two servers on one Redis: paging alternately through both lists every task of the
  caller once, in creation order, while tasks are created and the tasks at a cursor's
  position are deleted (expired) between pages; a cursor whose tasks are both gone, or
  a tampered one, is ``-32602``.

Spec: S25 §Listing Tasks (cursors are opaque; only the requestor's tasks; an invalid
cursor is ``-32602``), A.15 (no information about other authorization contexts).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_tasks_2025_11_25.redis_store import RedisTaskStore
from mcp_tasks_2025_11_25.server import Limits, RequestInfo, TasksServer, ToolContext
from mcp_tasks_2025_11_25.stores import InMemoryTaskStore, SQLiteTaskStore, TaskStore
from tests.support.procs import RedisHandle, start_redis

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisHandle]:
    with start_redis() as handle:
        yield handle


class Client:
    """One principal's session on one server (in process, through ``handle``)."""

    ids = 0

    def __init__(self, server: TasksServer, principal: str) -> None:
        self.server, self.principal = server, principal
        self.session = server.open_session(f"principal:{principal}").id

    async def respond(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        Client.ids += 1
        message = {"jsonrpc": "2.0", "id": Client.ids, "method": method}
        message["params"] = params
        info = RequestInfo(principal=self.principal, session_id=self.session)
        response = await self.server.handle(message, info)
        assert response is not None
        return response

    async def create(self) -> str:
        created = await self.respond(
            "tools/call", {"name": "quick", "arguments": {}, "task": {}}
        )
        task_id: str = created["result"]["task"]["taskId"]
        return task_id

    async def page(self, cursor: str | None = None) -> dict[str, Any]:
        """One ``tasks/list`` result (an error fails the test)."""
        response = await self.respond(
            "tasks/list", {} if cursor is None else {"cursor": cursor}
        )
        assert "result" in response, response
        result: dict[str, Any] = response["result"]
        return result


def new_server(store: TaskStore, page_size: int) -> TasksServer:
    server = TasksServer(
        "lists",
        store=store,
        authenticate=lambda request: request.principal,
        page_size=page_size,
        limits=Limits(max_active_tasks=1000, sweep_interval_s=3600),
    )

    @server.tool()
    async def quick(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Return at once."""
        return "done"

    return server


def decoded(cursor: str) -> str:
    """A cursor's text (they are URL-safe base64, with or without padding)."""
    return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()


async def cursors_of(
    store: TaskStore, others: int
) -> tuple[list[str], list[str], list[str], dict[str, Any]]:
    """Alice creates five tasks while Bob creates ``others``; Alice pages through hers.

    Returns Alice's cursors with her task IDs cut out, the IDs she listed, those she
    created, and the response to her ``tasks/list`` with a cursor of Bob's."""
    async with new_server(store, page_size=2) as server:
        alice, bob = Client(server, "alice"), Client(server, "bob")
        mine: list[str] = []
        for _ in range(5):
            mine.append(await alice.create())
            for _ in range(others // 5):
                await bob.create()
        listed: list[str] = []
        residues: list[str] = []
        page = await alice.page()
        while True:
            listed += [t["taskId"] for t in page["tasks"]]
            if "nextCursor" not in page:
                break
            residue = decoded(page["nextCursor"])
            for task_id in mine:
                residue = residue.replace(task_id, "<mine>")
            residues.append(residue)
            page = await alice.page(page["nextCursor"])
        for _ in range(3):
            await bob.create()
        bobs = await bob.page()
        assert "nextCursor" in bobs
        foreign = await alice.respond("tasks/list", {"cursor": bobs["nextCursor"]})
        return residues, listed, mine, foreign


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
async def test_cursors_tell_nothing_about_other_principals_tasks(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    def store(name: str) -> TaskStore:
        if kind == "memory":
            return InMemoryTaskStore()
        if kind == "sqlite":
            return SQLiteTaskStore(str(tmp_path / f"{name}.sqlite3"))
        redis: RedisHandle = request.getfixturevalue("redis_server")
        return RedisTaskStore(redis.url, prefix=f"{name}-{uuid.uuid4().hex[:8]}:")

    quiet, listed_quiet, mine_quiet, _ = await cursors_of(store("quiet"), others=0)
    busy, listed_busy, mine_busy, foreign = await cursors_of(store("busy"), others=50)
    assert listed_quiet == mine_quiet and listed_busy == mine_busy
    assert len(quiet) == 2  # five tasks, two a page
    assert quiet == busy, (quiet, busy)
    assert foreign["error"]["code"] == -32602, foreign


async def test_paging_across_two_servers_on_redis_is_complete_and_stable(
    redis_server: RedisHandle,
) -> None:
    prefix = f"pages-{uuid.uuid4().hex[:8]}:"
    a = new_server(RedisTaskStore(redis_server.url, prefix=prefix), page_size=3)
    b = new_server(RedisTaskStore(redis_server.url, prefix=prefix), page_size=3)
    async with a, b:
        alice = {"a": Client(a, "alice"), "b": Client(b, "alice")}
        bob = Client(b, "bob")
        mine = []
        for n in range(10):
            mine.append(await alice["ab"[n % 2]].create())
            await bob.create()

        listed: list[str] = []
        page = await alice["a"].page()
        listed += [t["taskId"] for t in page["tasks"]]
        # the last task of that page expires and is purged; B resumes at the next one
        await a.store.delete([listed[-1]])  # (listed already)
        page = await alice["b"].page(page["nextCursor"])
        listed += [t["taskId"] for t in page["tasks"]]
        # the first task of the next page is purged: A resumes after this page
        following = mine[mine.index(listed[-1]) + 1]
        await b.store.delete([following])  # never listed
        # new tasks meanwhile, on either server and for either principal
        mine.append(await alice["b"].create())
        await bob.create()
        cursor = page["nextCursor"]
        servers = iter("ab" * 10)
        while True:
            page = await alice[next(servers)].page(cursor)
            listed += [t["taskId"] for t in page["tasks"]]
            if "nextCursor" not in page:
                break
            cursor = page["nextCursor"]

        # a tampered cursor, and one whose two tasks are both gone
        first = await alice["a"].page()
        valid = first["nextCursor"]
        tampered = valid[:-3] + ("AAA" if not valid.endswith("AAA") else "BBB")
        forged = await alice["a"].respond("tasks/list", {"cursor": tampered})
        last = first["tasks"][-1]["taskId"]
        await a.store.delete([last, mine[mine.index(last) + 1]])
        gone = await alice["b"].respond("tasks/list", {"cursor": valid})

    assert listed == [t for t in mine if t != following], (listed, mine, following)
    assert len(set(listed)) == len(listed)
    assert gone["error"]["code"] == -32602, gone
    assert forged["error"]["code"] == -32602, forged
