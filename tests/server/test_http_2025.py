"""The 2025-11-25 server over streamable HTTP: sessions, SSE streams, side requests.

Runs ``examples/server_2025.py`` as a real process and talks raw HTTP to it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.support.procs import ServerHandle

from .conftest import error_of, example_server, message_2025, result_of

pytestmark = pytest.mark.anyio

RELATED = "io.modelcontextprotocol/related-task"
ACCEPT = {"accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def server_2025() -> Iterator[ServerHandle]:
    """``examples/server_2025.py`` with an in-memory store."""
    with example_server("server_2025", "--memory") as handle:
        yield handle


async def initialize(
    client: httpx.AsyncClient, url: str, authorization: str | None = None
) -> dict[str, str]:
    """Open a session (as the principal ``authorization`` names, if given); return the
    headers later requests need."""
    auth = {} if authorization is None else {"authorization": authorization}
    response = await client.post(
        url,
        json=message_2025(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        ),
        headers={**ACCEPT, **auth},
    )
    assert response.status_code == 200
    session = response.headers["mcp-session-id"]
    headers = {
        **ACCEPT,
        **auth,
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
    }
    ack = await client.post(
        url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=headers,
    )
    assert ack.status_code == 202
    return headers


async def sse_messages(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON-RPC messages of an SSE response."""
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            yield json.loads(line[6:])


async def test_d1_01_initialize_over_http_opens_a_session(
    server_2025: ServerHandle,
) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(
            server_2025.url,
            json=message_2025(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            ),
            headers=ACCEPT,
        )
        session = response.headers["mcp-session-id"]
        missing = await client.post(
            server_2025.url, json=message_2025("tools/list"), headers=ACCEPT
        )
        unknown = await client.post(
            server_2025.url,
            json=message_2025("tools/list"),
            headers={**ACCEPT, "mcp-session-id": "nope"},
        )
        listed = await client.post(
            server_2025.url,
            json=message_2025("tools/list"),
            headers={**ACCEPT, "mcp-session-id": session},
        )
        deleted = await client.delete(
            server_2025.url, headers={"mcp-session-id": session}
        )
        after = await client.post(
            server_2025.url,
            json=message_2025("tools/list"),
            headers={**ACCEPT, "mcp-session-id": session},
        )
    caps = result_of(response.json())["capabilities"]
    assert caps["tasks"] == {
        "cancel": {},
        "list": {},
        "requests": {"tools": {"call": {}}},
    }
    assert len(session) == 32
    assert missing.status_code == 400 and unknown.status_code == 404
    assert listed.status_code == 200 and "tools" in result_of(listed.json())
    assert deleted.status_code == 200 and after.status_code == 404


async def test_d1_10_tasks_result_stream_delivers_the_elicitation(
    server_2025: ServerHandle,
) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        headers = await initialize(client, server_2025.url)
        created = result_of(
            (
                await client.post(
                    server_2025.url,
                    json=message_2025(
                        "tools/call",
                        {
                            "name": "confirm_delete",
                            "arguments": {"filename": "f.txt"},
                            "task": {"ttl": 60000},
                        },
                        request_id=2,
                    ),
                    headers=headers,
                )
            ).json()
        )
        task_id = created["task"]["taskId"]
        request = message_2025("tasks/result", {"taskId": task_id}, request_id=3)
        seen: list[dict[str, Any]] = []
        async with client.stream(
            "POST", server_2025.url, json=request, headers=headers
        ) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            async for message in sse_messages(response):
                seen.append(message)
                if message.get("method") == "elicitation/create":
                    answer = {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {
                            "action": "accept",
                            "content": {"confirm": True},
                            "_meta": {RELATED: {"taskId": task_id}},
                        },
                    }
                    posted = await client.post(
                        server_2025.url, json=answer, headers=headers
                    )
                    assert posted.status_code == 202
                if message.get("id") == 3:
                    break
    elicitation, final = seen[0], seen[-1]
    assert elicitation["params"]["_meta"] == {RELATED: {"taskId": task_id}}
    assert elicitation["params"]["message"] == "Delete f.txt?"
    assert result_of(final)["content"][0]["text"] == "deleted f.txt"
    assert result_of(final)["_meta"] == {RELATED: {"taskId": task_id}}


async def test_d1_13_status_notifications_on_the_get_stream(
    server_2025: ServerHandle,
) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        headers = await initialize(client, server_2025.url)
        notes: list[dict[str, Any]] = []
        opened = asyncio.Event()

        async def listen() -> None:
            async with client.stream(
                "GET", server_2025.url, headers=headers
            ) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                opened.set()  # the server registered the stream before answering
                async for message in sse_messages(response):
                    notes.append(message)
                    if message.get("params", {}).get("status") == "completed":
                        return

        listener = asyncio.create_task(listen())
        await asyncio.wait_for(opened.wait(), 10)
        await client.post(
            server_2025.url,
            json=message_2025(
                "tools/call",
                {
                    "name": "long_report",
                    "arguments": {"steps": 2},
                    "task": {},
                    "_meta": {"progressToken": 7},
                },
                request_id=2,
            ),
            headers=headers,
        )
        await asyncio.wait_for(listener, 10)
    statuses = [
        n["params"]["status"]
        for n in notes
        if n["method"] == "notifications/tasks/status"
    ]
    progress = [n["params"] for n in notes if n["method"] == "notifications/progress"]
    assert statuses[-1] == "completed"
    assert all(RELATED not in n["params"].get("_meta", {}) for n in notes)
    assert [p["progress"] for p in progress] == [1, 2] and {
        p["progressToken"] for p in progress
    } == {7}


async def test_d1_12_list_over_http_is_scoped_to_the_authorization_header(
    server_2025: ServerHandle,
) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        alice = await initialize(client, server_2025.url, "Bearer alice")
        bob = await initialize(client, server_2025.url, "Bearer bob")
        created = result_of(
            (
                await client.post(
                    server_2025.url,
                    json=message_2025(
                        "tools/call",
                        {
                            "name": "slow_compute",
                            "arguments": {"seconds": 0},
                            "task": {},
                        },
                    ),
                    headers=alice,
                )
            ).json()
        )
        task_id = created["task"]["taskId"]
        mine = result_of(
            (
                await client.post(
                    server_2025.url, json=message_2025("tasks/list", {}), headers=alice
                )
            ).json()
        )
        theirs = result_of(
            (
                await client.post(
                    server_2025.url, json=message_2025("tasks/list", {}), headers=bob
                )
            ).json()
        )
        foreign = (
            await client.post(
                server_2025.url,
                json=message_2025("tasks/get", {"taskId": task_id}),
                headers=bob,
            )
        ).json()
    assert task_id in [t["taskId"] for t in mine["tasks"]]
    assert task_id not in [t["taskId"] for t in theirs["tasks"]]
    assert error_of(foreign)["code"] == -32602
