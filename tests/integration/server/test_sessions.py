"""2025-11-25 sessions over real HTTP: bound to their owner, and room for new ones.

A session belongs to whoever opened it: the principal, or for an anonymous session the
client address. Any other caller naming it (POST, the GET stream, DELETE) gets 404, as
for a session that does not exist, so it can neither read the owner's stream (status
notifications, input requests) nor end the session. The example servers (their
principal is the ``Authorization`` header value) run as real processes; anonymous
sessions are served by uvicorn in this process, with clients bound to two loopback
addresses.

Sessions nobody uses cannot keep new clients out: past ``Limits.session_pressure`` of
``max_sessions``, a new session first closes the least recently used idle ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from mcp_tasks_2025_11_25.asgi import create_app
from mcp_tasks_2025_11_25.server import (
    AuditEvent,
    Limits,
    RequestInfo,
    TasksServer,
    ToolContext,
)
from mcp_tasks_2025_11_25.stores import InMemoryTaskStore
from tests.support.procs import ServerHandle, free_port
from tests.support.servers import example_server, message_2025, result_of
from tests.support.waiting import until

from .test_get_stream_input import (
    ACCEPT,
    WAIT_S,
    Peer,
    check_elicitation,
    next_message,
    start_confirm_delete,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module", params=["server_2025", "server"])
def example(request: pytest.FixtureRequest) -> Iterator[ServerHandle]:
    """``examples/server_2025.py`` and the dual ``examples/server.py``, in memory."""
    with example_server(request.param, "--memory") as handle:
        yield handle


def no_traceback(handle: ServerHandle) -> None:
    tail = handle.log_tail(400)
    assert "Traceback" not in tail, tail


async def intrude(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    task_id: str,
    request: dict[str, Any],
) -> list[tuple[str, int]]:
    """Use a session with ``headers`` every way there is; the HTTP status of each."""
    statuses: list[tuple[str, int]] = []
    async with client.stream("GET", url, headers=headers) as stream:
        statuses.append(("GET", stream.status_code))
    posts: list[tuple[str, dict[str, Any]]] = [
        ("ping", message_2025("ping", request_id=901)),
        ("tasks/get", message_2025("tasks/get", {"taskId": task_id}, request_id=902)),
        ("tasks/list", message_2025("tasks/list", {}, request_id=903)),
        (
            "reply",
            {"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}},
        ),
        (
            "initialize",
            message_2025(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "intruder", "version": "0"},
                },
                request_id=904,
            ),
        ),
    ]
    for name, body in posts:
        response = await client.post(url, json=body, headers=headers)
        statuses.append((name, response.status_code))
    response = await client.delete(url, headers=headers)
    statuses.append(("DELETE", response.status_code))
    return statuses


async def test_another_principal_cannot_use_a_session(example: ServerHandle) -> None:
    """B (another bearer token, or none) names A's session: every use is 404, and A
    still gets its elicitation on its GET stream, answers it and the task completes."""
    async with httpx.AsyncClient(timeout=WAIT_S) as client:
        alice = Peer(client, example.url)
        alice.headers["authorization"] = "Bearer A"
        await alice.initialize()
        session = alice.headers["mcp-session-id"]
        async with alice.get_stream():
            task_id = await start_confirm_delete(alice)
            request = await alice.next_pushed("elicitation/create")
            check_elicitation(request, task_id)
            for intruder in ({"authorization": "Bearer B"}, {}):
                headers = {
                    **ACCEPT,
                    **intruder,
                    "mcp-session-id": session,
                    "mcp-protocol-version": "2025-11-25",
                }
                statuses = await intrude(client, example.url, headers, task_id, request)
                assert statuses == [(name, 404) for name, _ in statuses], intruder
            assert await alice.status(task_id) == "input_required"
            await alice.answer(request, task_id)
            await alice.until_status(task_id, "completed")
            assert await alice.status(task_id) == "completed"
        assert [m["id"] for m in alice.requests_seen()] == [request["id"]]
        ended = await client.delete(example.url, headers=alice.headers)
        assert ended.status_code == 200  # the session was still A's to end
    no_traceback(example)


async def test_another_principal_cannot_take_over_a_session_before_its_stream(
    example: ServerHandle,
) -> None:
    """B's GET with A's session id, before A opens any stream, gets nothing: the
    request the task asks goes to A's own GET stream once A opens it."""
    async with httpx.AsyncClient(timeout=WAIT_S) as client:
        alice = Peer(client, example.url)
        alice.headers["authorization"] = "Bearer A"
        await alice.initialize()
        bob = {**alice.headers, "authorization": "Bearer B"}
        async with client.stream("GET", example.url, headers=bob) as stolen:
            assert stolen.status_code == 404
            task_id = await start_confirm_delete(alice)

            async def waiting_for_input() -> bool:
                return await alice.status(task_id) == "input_required"

            await until(waiting_for_input, timeout=WAIT_S, interval=0.05, what="input")
            async with alice.get_stream():
                request = await alice.next_pushed("elicitation/create")
                check_elicitation(request, task_id)
                await alice.answer(request, task_id)
                await alice.until_status(task_id, "completed")
        await alice.close()
    no_traceback(example)


# -- anonymous sessions belong to the client address that opened them ------------------


@asynccontextmanager
async def serving(server: TasksServer) -> AsyncIterator[str]:
    """``create_app(server)`` served by uvicorn on 127.0.0.1 in this event loop; its
    URL."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(
        create_app(server), host="127.0.0.1", port=port, log_level="warning"
    )
    http = uvicorn.Server(config)
    running = asyncio.create_task(http.serve())
    try:
        await until(
            lambda: http.started or running.done(), timeout=WAIT_S, what="uvicorn up"
        )
        assert http.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        http.should_exit = True
        await asyncio.wait_for(running, WAIT_S)


def from_address(host: str) -> httpx.AsyncClient:
    """An HTTP client whose connections come from ``host`` (a loopback address)."""
    return httpx.AsyncClient(
        transport=httpx.AsyncHTTPTransport(local_address=host), timeout=WAIT_S
    )


def anonymous_server(audit: list[AuditEvent] | None = None) -> TasksServer:
    """A server without ``authenticate``: every caller is anonymous."""
    server = TasksServer(
        "anonymous",
        store=InMemoryTaskStore(),
        limits=Limits(sweep_interval_s=3600),
        audit=audit.append if audit is not None else None,
    )

    @server.tool()
    async def confirm_delete(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        filename = str(arguments.get("filename"))
        answer = await ctx.elicit(
            f"Delete {filename}?",
            {"type": "object", "properties": {"confirm": {"type": "boolean"}}},
        )
        return f"{answer['action']} {filename}"

    return server


async def test_an_anonymous_session_is_bound_to_its_client_address() -> None:
    audit: list[AuditEvent] = []
    server = anonymous_server(audit)
    async with (
        serving(server) as url,
        from_address("127.0.0.1") as near,
        from_address("127.0.0.2") as far,
    ):
        alice = Peer(near, url)
        await alice.initialize()
        async with alice.get_stream():
            task_id = await start_confirm_delete(alice)
            request = await alice.next_pushed("elicitation/create")
            check_elicitation(request, task_id)
            headers = {**alice.headers}
            statuses = await intrude(far, url, headers, task_id, request)
            assert statuses == [(name, 404) for name, _ in statuses]
            await alice.answer(request, task_id)
            await alice.until_status(task_id, "completed")
        assert alice.requests_seen() == [request]
        ended = await near.delete(url, headers=alice.headers)
        assert ended.status_code == 200
    refused = [e for e in audit if e.action == "session_refused"]
    assert len(refused) == len(statuses) and {e.principal for e in refused} == {None}


# -- session pressure: idle sessions make room -----------------------------------------


async def test_sessions_opened_under_invented_tokens_do_not_keep_new_clients_out() -> (
    None
):
    """Idle sessions under made-up bearer tokens fill the cap; the next client still
    gets a session (the least recently used idle ones are closed), while the sessions
    in use are kept: one with its GET stream open, one waiting on ``tasks/result``."""
    server = TasksServer(
        "pressure",
        store=InMemoryTaskStore(),
        authenticate=lambda info: (info.headers or {}).get("authorization"),
        limits=Limits(sweep_interval_s=3600, session_pressure_idle_s=0),
        max_sessions=20,
    )
    release = asyncio.Event()

    @server.tool()
    async def hold(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await release.wait()
        return "released"

    async with serving(server) as url, from_address("127.0.0.1") as client:
        busy = Peer(client, url)
        busy.headers["authorization"] = "Bearer busy"
        await busy.initialize()
        waiting = Peer(client, url)
        waiting.headers["authorization"] = "Bearer waiting"
        await waiting.initialize()
        held = await waiting.request("tools/call", {"name": "hold", "task": {}})
        task_id = held["task"]["taskId"]
        waiting_session = server.sessions[waiting.headers["mcp-session-id"]]
        async with busy.get_stream(), waiting.result_stream(task_id) as results:
            await until(
                lambda: waiting_session.open_requests == 1, what="tasks/result open"
            )
            flood = []
            for n in range(19):
                flood.append(
                    await client.post(
                        url,
                        json=message_2025(
                            "initialize",
                            {
                                "protocolVersion": "2025-11-25",
                                "capabilities": {},
                                "clientInfo": {"name": "flood", "version": "0"},
                            },
                        ),
                        headers={**ACCEPT, "authorization": f"Bearer invented-{n}"},
                    )
                )
            assert [r.status_code for r in flood] == [200] * 19
            newcomer = Peer(client, url)
            newcomer.headers["authorization"] = "Bearer newcomer"
            await newcomer.initialize()  # asserts 200
            assert newcomer.headers["mcp-session-id"] in server.sessions
            assert busy.headers["mcp-session-id"] in server.sessions
            assert waiting_session.id in server.sessions
            assert len(server.sessions) <= 16  # below the pressure mark again
            oldest = flood[0].headers["mcp-session-id"]
            assert oldest not in server.sessions  # least recently used: closed first
            pong = await client.post(
                url, json=message_2025("ping"), headers=busy.headers
            )
            assert result_of(pong.json()) == {}
            release.set()
            final = await next_message(results, "the held task's result")
    assert result_of(final)["content"][0]["text"] == "released"


async def test_without_pressure_eviction_a_full_server_refuses_new_clients() -> None:
    """The same flood with the pressure mark off (``session_pressure=1`` and an hour of
    idleness): the cap holds and the newcomer is refused with 429, as before."""
    server = TasksServer(
        "full",
        store=InMemoryTaskStore(),
        authenticate=lambda info: (info.headers or {}).get("authorization"),
        limits=Limits(
            sweep_interval_s=3600, session_pressure=1, session_pressure_idle_s=3600
        ),
        max_sessions=20,
    )
    for n in range(20):
        server.open_session_for(
            RequestInfo(headers={"authorization": f"Bearer invented-{n}"})
        )
    async with serving(server) as url, from_address("127.0.0.1") as client:
        refused = await client.post(
            url,
            json=message_2025(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "late", "version": "0"},
                },
            ),
            headers={**ACCEPT, "authorization": "Bearer newcomer"},
        )
    assert refused.status_code == 429
