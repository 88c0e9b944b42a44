"""2025-11-25 over HTTP: a task's input requests reach a client on its GET stream.

A client may only poll ``tasks/get`` and listen on the session's standalone GET SSE
stream, never calling ``tasks/result`` (the spec lets the server use any stream). The
server then sends the task's ``elicitation/create`` on the GET stream, once, and the
client's answer POSTed back resumes the task. The HTTP tests run
``examples/server_2025.py`` as a real process and talk raw HTTP to it; the in-process
tests pin down the orderings HTTP cannot observe (which stream is open when), calling
the hooks the HTTP app calls around a GET stream.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from mcp_tasks_2025_11_25.server import (
    Limits,
    RequestInfo,
    Session,
    TasksServer,
    ToolContext,
)
from mcp_tasks_2025_11_25.stores import InMemoryTaskStore
from tests.support.procs import ServerHandle
from tests.support.waiting import until

from .conftest import example_server, message_2025, result_of

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
        while True:
            try:
                message = await asyncio.wait_for(self.pushed.get(), WAIT_S)
            except asyncio.TimeoutError:
                raise AssertionError(
                    f"no {method} on the GET stream within {WAIT_S}s (it carried"
                    f" {[m.get('method') for m in self.log]})"
                ) from None
            if message.get("method") == method:
                return message

    async def until_status(self, task_id: str, wanted: str) -> None:
        """Read the GET stream until it reports the task in status ``wanted``."""
        while True:
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


class InProcess:
    """A started server whose ``ask`` tool elicits once ``release`` is set."""

    def __init__(self) -> None:
        self.server = TasksServer(
            "get-stream",
            store=InMemoryTaskStore(),
            limits=Limits(sweep_interval_s=3600),
        )
        self.release = asyncio.Event()
        self.session: Session = self.server.open_session()
        self.info = RequestInfo(session_id=self.session.id)
        self._ids = 0

        @self.server.tool()
        async def ask(ctx: ToolContext, arguments: dict[str, Any]) -> str:
            await self.release.wait()
            answer = await ctx.elicit("Go on?", {"type": "object", "properties": {}})
            return f"answer {answer['action']}"

    async def call(
        self, method: str, params: dict[str, Any], emit: Any = None
    ) -> dict[str, Any]:
        """One request in the session; its result."""
        self._ids += 1
        message = message_2025(method, params, request_id=self._ids)
        return result_of(await self.server.handle(message, self.info, emit))

    async def start_ask(self) -> str:
        """``initialize``, then ``ask`` as a task; the task id."""
        await self.call(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "in-process", "version": "0"},
            },
        )
        created = await self.call("tools/call", {"name": "ask", "task": {}})
        task_id: str = created["task"]["taskId"]
        return task_id

    def open_get_stream(self) -> asyncio.Queue[dict[str, Any] | None]:
        """What the HTTP app does when a GET stream opens."""
        stream = self.session.open_stream()
        self.server.stream_opened(self.session)
        return stream

    async def answer(self, request: dict[str, Any]) -> None:
        """The client's response to ``request``, through the session."""
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept"}}
        assert await self.server.handle(reply, self.info) is None

    def readers(self, task_id: str) -> int:
        """How many ``tasks/result`` streams of the task the server sees open."""
        channel = self.server._channels.get(task_id)
        return 0 if channel is None else channel.readers

    def pushed(self, task_id: str) -> int:
        """How many of the task's requests the server queued on a GET stream."""
        channel = self.server._channels.get(task_id)
        return 0 if channel is None else len(channel.pushed)


@asynccontextmanager
async def in_process() -> AsyncIterator[InProcess]:
    """A started ``InProcess`` server, closed afterwards."""
    harness = InProcess()
    async with harness.server:
        yield harness
    harness.release.set()


async def next_request(stream: asyncio.Queue[dict[str, Any] | None]) -> dict[str, Any]:
    """The next server-to-client request queued on a GET stream."""
    while True:
        message = await asyncio.wait_for(stream.get(), WAIT_S)
        assert message is not None, "the stream ended"
        if "id" in message:
            return message


def requests_in(stream: asyncio.Queue[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """The requests still queued on a GET stream (drains it)."""
    queued = [stream.get_nowait() for _ in range(stream.qsize())]
    return [m for m in queued if m is not None and "id" in m]


async def test_tasks_result_does_not_repeat_a_request_the_get_stream_delivered() -> (
    None
):
    async with in_process() as h:
        stream = h.open_get_stream()
        task_id = await h.start_ask()
        h.release.set()
        request = await next_request(stream)
        assert request["params"]["_meta"] == {RELATED: {"taskId": task_id}}
        on_result: list[dict[str, Any]] = []

        async def keep(message: dict[str, Any]) -> None:
            on_result.append(message)

        fetching = asyncio.create_task(
            h.call("tasks/result", {"taskId": task_id}, keep)
        )
        await until(lambda: h.readers(task_id) == 1, what="tasks/result waiting")
        await h.answer(request)
        result = await asyncio.wait_for(fetching, WAIT_S)
    assert on_result == []
    assert result["content"][0]["text"] == "answer accept"
    assert requests_in(stream) == []


async def test_an_open_tasks_result_stream_carries_the_request_instead() -> None:
    async with in_process() as h:
        stream = h.open_get_stream()
        task_id = await h.start_ask()
        on_result: list[dict[str, Any]] = []
        delivered = asyncio.Event()

        async def keep(message: dict[str, Any]) -> None:
            on_result.append(message)
            delivered.set()

        fetching = asyncio.create_task(
            h.call("tasks/result", {"taskId": task_id}, keep)
        )
        await until(lambda: h.readers(task_id) == 1, what="tasks/result waiting")
        h.release.set()  # the tool asks only now, while tasks/result is open
        await asyncio.wait_for(delivered.wait(), WAIT_S)
        await h.answer(on_result[0])
        result = await asyncio.wait_for(fetching, WAIT_S)
    assert [m["method"] for m in on_result] == ["elicitation/create"]
    assert result["content"][0]["text"] == "answer accept"
    assert requests_in(stream) == []


async def test_a_request_a_closed_get_stream_never_sent_goes_out_on_the_next() -> None:
    async with in_process() as h:
        first = h.open_get_stream()
        task_id = await h.start_ask()
        h.release.set()
        await until(lambda: h.pushed(task_id) == 1, what="the request queued")
        # the client went away before the stream wrote it (what the HTTP app does)
        h.server.stream_closed(h.session, h.session.close_stream(first))
        second = h.open_get_stream()
        request = await next_request(second)
        assert request["params"]["_meta"] == {RELATED: {"taskId": task_id}}
        await h.answer(request)
        while True:  # until the stream reports the task completed
            note = await asyncio.wait_for(second.get(), WAIT_S)
            assert note is not None and "id" not in note, note
            if note["params"].get("status") == "completed":
                break
        status = (await h.call("tasks/get", {"taskId": task_id}))["status"]
    assert status == "completed"
