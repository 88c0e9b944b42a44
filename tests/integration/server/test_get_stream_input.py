"""2025-11-25 over HTTP: a task's input requests reach a client on its GET stream.

A client may only poll ``tasks/get`` and listen on the session's standalone GET SSE
stream, never calling ``tasks/result`` (the spec lets the server use any stream). The
server then sends the task's ``elicitation/create`` on the GET stream, once, and the
client's answer POSTed back resumes the task. These tests run
``examples/server_2025.py`` as a real process and talk raw HTTP to it; the orderings
HTTP cannot observe are pinned down in process in
``tests/unit/server/test_get_stream_input.py``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from tests.support.procs import ServerHandle
from tests.support.servers import example_server, message_2025, result_of
from tests.support.waiting import until

pytestmark = pytest.mark.anyio

RELATED = "io.modelcontextprotocol/related-task"
ACCEPT = {"accept": "application/json, text/event-stream"}
WAIT_S = 10.0
"""How long a test waits for one message before it fails."""


@pytest.fixture(scope="module")
def server_2025() -> Iterator[ServerHandle]:
    """``examples/server_2025.py`` with an in-memory store."""
    with example_server("server_2025", "--memory") as handle:
        yield handle


class Peer:
    """A hand-rolled 2025-11-25 client: one session, its GET stream, plain POSTs."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url
        self.headers: dict[str, str] = dict(ACCEPT)
        self.pushed: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        """Every message the GET stream carried, in order."""
        self.log: list[dict[str, Any]] = []
        self._ids = 0

    async def initialize(self) -> None:
        """``initialize`` (declaring elicitation), then
        ``notifications/initialized``."""
        response = await self.client.post(
            self.url,
            json=message_2025(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"elicitation": {}},
                    "clientInfo": {"name": "get-stream-poller", "version": "0"},
                },
            ),
            headers=self.headers,
        )
        assert response.status_code == 200, response.text
        self.headers.update(
            {
                "mcp-session-id": response.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
        )
        ack = await self.client.post(
            self.url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=self.headers,
        )
        assert ack.status_code == 202

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """POST one request and return its result (a plain JSON answer is expected)."""
        self._ids += 1
        response = await self.client.post(
            self.url,
            json=message_2025(method, params, request_id=self._ids),
            headers=self.headers,
        )
        assert response.headers["content-type"].startswith("application/json")
        return result_of(response.json())

    async def status(self, task_id: str) -> str:
        """The task's status from ``tasks/get``."""
        status: str = (await self.request("tasks/get", {"taskId": task_id}))["status"]
        return status

    async def answer(self, request: dict[str, Any], task_id: str) -> None:
        """POST the client's response to a server-to-client request."""
        response = await self.client.post(
            self.url,
            json={
                "jsonrpc": "2.0",
                "id": request["id"],
                "result": {
                    "action": "accept",
                    "content": {"confirm": True},
                    "_meta": {RELATED: {"taskId": task_id}},
                },
            },
            headers=self.headers,
        )
        assert response.status_code == 202, response.text

    async def next_pushed(self, method: str) -> dict[str, Any]:
        """The next message with ``method`` on the GET stream (skipping others)."""
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                left = max(deadline - time.monotonic(), 0)
                message = await asyncio.wait_for(self.pushed.get(), left)
            except asyncio.TimeoutError:
                raise AssertionError(
                    f"no {method} on the GET stream within {WAIT_S}s (it carried"
                    f" {[m.get('method') for m in self.log]})"
                ) from None
            if message.get("method") == method:
                return message

    async def until_status(self, task_id: str, wanted: str) -> None:
        """Read the GET stream until it reports the task in status ``wanted``."""
        deadline = time.monotonic() + WAIT_S
        while True:
            assert time.monotonic() < deadline, f"{task_id} never became {wanted}"
            note = await self.next_pushed("notifications/tasks/status")
            if note["params"]["taskId"] == task_id and (
                note["params"]["status"] == wanted
            ):
                return

    @asynccontextmanager
    async def get_stream(self) -> AsyncIterator[None]:
        """Keep the session's GET SSE stream open, feeding ``pushed`` and ``log``."""
        opened = asyncio.Event()

        async def listen() -> None:
            async with self.client.stream(
                "GET", self.url, headers=self.headers
            ) as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                opened.set()  # the server registers the stream before it answers
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        message = json.loads(line[6:])
                        self.log.append(message)
                        self.pushed.put_nowait(message)

        listener = asyncio.create_task(listen())
        try:
            done, _ = await asyncio.wait(
                {listener, asyncio.ensure_future(opened.wait())},
                timeout=WAIT_S,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if listener in done:
                listener.result()  # raises what went wrong
            assert opened.is_set(), "the GET stream did not open"
            yield
        finally:
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)

    def requests_seen(self) -> list[dict[str, Any]]:
        """The server-to-client requests the GET stream carried so far."""
        return [m for m in self.log if "id" in m and "method" in m]

    @asynccontextmanager
    async def result_stream(
        self, task_id: str
    ) -> AsyncIterator[asyncio.Queue[dict[str, Any]]]:
        """Keep a ``tasks/result`` request open; its messages arrive in the queue."""
        self._ids += 1
        body = message_2025("tasks/result", {"taskId": task_id}, request_id=self._ids)
        received: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        async def fetch() -> None:
            async with self.client.stream(
                "POST", self.url, json=body, headers=self.headers
            ) as response:
                assert response.status_code == 200
                if not response.headers["content-type"].startswith("text/event-stream"):
                    received.put_nowait(json.loads(await response.aread()))
                    return
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        received.put_nowait(json.loads(line[6:]))

        fetcher = asyncio.create_task(fetch())
        try:
            yield received
        finally:
            fetcher.cancel()
            await asyncio.gather(fetcher, return_exceptions=True)

    async def close(self) -> None:
        """End the session (DELETE)."""
        await self.client.delete(self.url, headers=self.headers)


@asynccontextmanager
async def peer(server: ServerHandle) -> AsyncIterator[Peer]:
    """An initialized ``Peer`` on ``server``; its session ends afterwards."""
    async with httpx.AsyncClient(timeout=WAIT_S) as client:
        client_peer = Peer(client, server.url)
        await client_peer.initialize()
        try:
            yield client_peer
        finally:
            await client_peer.close()


async def next_message(
    received: asyncio.Queue[dict[str, Any]], what: str = "a message"
) -> dict[str, Any]:
    """The next message of a ``result_stream``, within ``WAIT_S``."""
    try:
        return await asyncio.wait_for(received.get(), WAIT_S)
    except asyncio.TimeoutError:
        raise AssertionError(f"{what} did not arrive within {WAIT_S}s") from None


async def start_confirm_delete(client_peer: Peer) -> str:
    """``tools/call`` of the input-needing ``confirm_delete`` as a task; its id."""
    created = await client_peer.request(
        "tools/call",
        {"name": "confirm_delete", "arguments": {"filename": "f.txt"}, "task": {}},
    )
    task_id: str = created["task"]["taskId"]
    return task_id


def check_elicitation(request: dict[str, Any], task_id: str) -> None:
    """The pushed request is the task's elicitation, with related-task ``_meta``."""
    assert request["method"] == "elicitation/create"
    assert request["params"]["message"] == "Delete f.txt?"
    assert request["params"]["_meta"] == {RELATED: {"taskId": task_id}}


async def test_get_stream_delivers_a_task_input_request_to_a_polling_client(
    server_2025: ServerHandle,
) -> None:
    """Open GET stream, then the task: its elicitation arrives there once."""
    async with peer(server_2025) as client_peer, client_peer.get_stream():
        task_id = await start_confirm_delete(client_peer)
        request = await client_peer.next_pushed("elicitation/create")
        check_elicitation(request, task_id)
        assert await client_peer.status(task_id) == "input_required"
        await client_peer.answer(request, task_id)
        await client_peer.until_status(task_id, "completed")
        assert await client_peer.status(task_id) == "completed"
        delivered = client_peer.requests_seen()
    assert [m["id"] for m in delivered] == [request["id"]]


async def test_request_pending_before_the_get_stream_opens_is_delivered_on_it(
    server_2025: ServerHandle,
) -> None:
    """The task waits for input first; a GET stream opened afterwards gets the
    request."""
    async with peer(server_2025) as client_peer:
        task_id = await start_confirm_delete(client_peer)

        async def waiting_for_input() -> bool:
            return await client_peer.status(task_id) == "input_required"

        await until(waiting_for_input, timeout=WAIT_S, interval=0.05, what="input")
        async with client_peer.get_stream():
            request = await client_peer.next_pushed("elicitation/create")
            check_elicitation(request, task_id)
            await client_peer.answer(request, task_id)
            await client_peer.until_status(task_id, "completed")
            assert await client_peer.status(task_id) == "completed"
            delivered = client_peer.requests_seen()
    assert [m["id"] for m in delivered] == [request["id"]]


async def test_a_request_whose_client_vanished_reaches_a_new_session_of_its_principal(
    server_2025: ServerHandle,
) -> None:
    """The elicitation went out on a GET stream whose client then disappeared (its
    stream closed unanswered, its session never ended). A new session of the same
    principal gets it again on ``tasks/result`` (and not a second time on its own GET
    stream, opened while ``tasks/result`` holds it); its answer completes the task.
    Another principal's GET stream, open all along, never carries it."""
    async with httpx.AsyncClient(timeout=WAIT_S) as client:
        first = Peer(client, server_2025.url)
        first.headers["authorization"] = "Bearer R"
        await first.initialize()
        other = Peer(client, server_2025.url)
        other.headers["authorization"] = "Bearer someone else"
        await other.initialize()
        async with other.get_stream():
            async with first.get_stream():
                task_id = await start_confirm_delete(first)
                request = await first.next_pushed("elicitation/create")
                check_elicitation(request, task_id)
            second = Peer(client, server_2025.url)
            second.headers["authorization"] = "Bearer R"
            await second.initialize()
            async with second.result_stream(task_id) as results:
                again = await next_message(results, "the request on tasks/result")
                assert again == request
                async with second.get_stream():
                    # the open tasks/result stream holds it: not carried twice
                    await second.answer(request, task_id)
                    final = await next_message(results, "the result")
                    assert second.requests_seen() == []
            assert result_of(final)["content"][0]["text"] == "deleted f.txt"
            assert await second.status(task_id) == "completed"
            await second.close()
            foreign = await client.post(
                server_2025.url,
                json=message_2025("tasks/result", {"taskId": task_id}, request_id=99),
                headers=other.headers,
            )
            assert "error" in foreign.json()
        assert other.requests_seen() == []
        assert first.requests_seen() == [request]


async def test_a_client_resuming_in_its_own_session_gets_the_request_on_tasks_result(
    server_2025: ServerHandle,
) -> None:
    """``examples/client.py --resume``: the killed client's successor joins the same
    session (no ``initialize``, no GET stream) and calls ``tasks/result``, which
    carries the request the dead GET stream had delivered."""
    async with httpx.AsyncClient(timeout=WAIT_S) as client:
        first = Peer(client, server_2025.url)
        await first.initialize()
        async with first.get_stream():
            task_id = await start_confirm_delete(first)
            request = await first.next_pushed("elicitation/create")
        resumed = Peer(client, server_2025.url)
        resumed.headers = dict(first.headers)
        async with resumed.result_stream(task_id) as results:
            again = await next_message(results, "the request on tasks/result")
            assert again == request
            await resumed.answer(request, task_id)
            final = await next_message(results, "the result")
        assert result_of(final)["content"][0]["text"] == "deleted f.txt"
        await resumed.close()
