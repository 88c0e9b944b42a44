"""2025-11-25, in process: which stream carries a task's input request.

A client may only poll ``tasks/get`` and listen on the session's standalone GET SSE
stream, never calling ``tasks/result``. These tests pin down the orderings HTTP cannot
observe (which stream is open when), calling the hooks the HTTP app calls around a GET
stream; ``tests/integration/server/test_get_stream_input.py`` runs the same over HTTP
against ``examples/server_2025.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcp_tasks_2025_11_25.server import (
    Limits,
    RequestInfo,
    Session,
    TasksServer,
    ToolContext,
)
from mcp_tasks_2025_11_25.stores import InMemoryTaskStore
from tests.support.servers import message_2025, result_of
from tests.support.waiting import until

pytestmark = pytest.mark.anyio


RELATED = "io.modelcontextprotocol/related-task"


WAIT_S = 10.0
"""How long a test waits for one message before it fails."""


class InProcess:
    """A started server whose ``ask`` tool elicits once ``release`` is set, and one
    session of ``principal`` (None: anonymous) that the calls go through."""

    def __init__(self, principal: str | None = None) -> None:
        self.server = TasksServer(
            "get-stream",
            store=InMemoryTaskStore(),
            limits=Limits(sweep_interval_s=3600),
        )
        self.release = asyncio.Event()
        self.principal = principal
        self.session: Session = self.open_session()
        self.info = RequestInfo(principal=principal, session_id=self.session.id)
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

    def open_session(self) -> Session:
        """Another session of the harness's principal (anonymous: its own)."""
        if self.principal is None:
            return self.server.open_session()
        return self.server.open_session(f"principal:{self.principal}", self.principal)

    def open_get_stream(
        self, session: Session | None = None
    ) -> asyncio.Queue[dict[str, Any] | None]:
        """What the HTTP app does when a GET stream of ``session`` (default: the
        harness's) opens."""
        session = session or self.session
        stream = session.open_stream()
        self.server.stream_opened(session, stream)
        return stream

    async def answer(self, request: dict[str, Any]) -> None:
        """The client's response to ``request``, through the session."""
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept"}}
        assert await self.server.handle(reply, self.info) is None

    def readers(self, task_id: str) -> int:
        """How many ``tasks/result`` streams of the task the server sees open."""
        channel = self.server.inputs.channels.get(task_id)
        return 0 if channel is None else channel.readers

    def pushed(self, task_id: str) -> int:
        """How many of the task's requests the server queued on some stream."""
        channel = self.server.inputs.channels.get(task_id)
        return 0 if channel is None else sum(1 for n in channel.carriers.values() if n)


@asynccontextmanager
async def in_process(principal: str | None = None) -> AsyncIterator[InProcess]:
    """A started ``InProcess`` server, closed afterwards."""
    harness = InProcess(principal)
    async with harness.server:
        yield harness
    harness.release.set()


async def next_request(stream: asyncio.Queue[dict[str, Any] | None]) -> dict[str, Any]:
    """The next server-to-client request queued on a GET stream."""
    deadline = time.monotonic() + WAIT_S
    while True:
        assert time.monotonic() < deadline, f"no request within {WAIT_S}s"
        message = await asyncio.wait_for(stream.get(), WAIT_S)
        assert message is not None, "the stream ended"
        if "id" in message:
            return message


def requests_in(stream: asyncio.Queue[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """The requests still queued on a GET stream (drains it)."""
    queued = [stream.get_nowait() for _ in range(stream.qsize())]
    return [m for m in queued if m is not None and "id" in m]


async def test_tasks_result_carries_again_what_a_closed_get_stream_carried() -> None:
    """The GET stream carried the request and then closed unanswered (its client may
    be gone): ``tasks/result`` carries it again (the spec's clients expect messages
    on any stream and call ``tasks/result`` preemptively); one answer settles it."""
    async with in_process() as h:
        stream = h.open_get_stream()
        task_id = await h.start_ask()
        h.release.set()
        request = await next_request(stream)
        assert request["params"]["_meta"] == {RELATED: {"taskId": task_id}}
        # the client went away after the stream wrote it (what the HTTP app does)
        h.server.stream_closed(h.session, h.session.close_stream(stream))
        on_result: list[dict[str, Any]] = []
        delivered = asyncio.Event()

        async def keep(message: dict[str, Any]) -> None:
            on_result.append(message)
            delivered.set()

        fetching = asyncio.create_task(
            h.call("tasks/result", {"taskId": task_id}, keep)
        )
        await asyncio.wait_for(delivered.wait(), WAIT_S)
        await h.answer(request)
        result = await asyncio.wait_for(fetching, WAIT_S)
    assert on_result == [request]
    assert result["content"][0]["text"] == "answer accept"


async def test_tasks_result_leaves_a_request_an_open_get_stream_carried() -> None:
    """The GET stream carried the request and is still open, so its client has it: a
    ``tasks/result`` of the same session, called before the client answered, does not
    carry it a second time (an SDK client without duplicate detection would ask its
    user twice). Once that GET stream closes unanswered, the open ``tasks/result``
    carries it."""
    async with in_process() as h:
        stream = h.open_get_stream()
        task_id = await h.start_ask()
        h.release.set()
        request = await next_request(stream)
        on_result: list[dict[str, Any]] = []
        delivered = asyncio.Event()

        async def keep(message: dict[str, Any]) -> None:
            on_result.append(message)
            delivered.set()

        fetching = asyncio.create_task(
            h.call("tasks/result", {"taskId": task_id}, keep)
        )
        await until(lambda: h.readers(task_id) == 1, what="tasks/result waiting")
        assert on_result == []
        h.server.stream_closed(h.session, h.session.close_stream(stream))
        await asyncio.wait_for(delivered.wait(), WAIT_S)
        assert on_result == [request]
        await h.answer(request)
        result = await asyncio.wait_for(fetching, WAIT_S)
    assert result["content"][0]["text"] == "answer accept"


async def test_a_client_answering_late_on_its_open_get_stream_is_asked_once() -> None:
    """What a real SDK client does under load: its GET stream carries the request,
    it calls ``tasks/result`` before its answer is in, then answers; the request
    reaches it once in all."""
    async with in_process() as h:
        stream = h.open_get_stream()
        task_id = await h.start_ask()
        h.release.set()
        request = await next_request(stream)
        on_result: list[dict[str, Any]] = []

        async def keep(message: dict[str, Any]) -> None:
            on_result.append(message)

        fetching = asyncio.create_task(
            h.call("tasks/result", {"taskId": task_id}, keep)
        )
        await until(lambda: h.readers(task_id) == 1, what="tasks/result waiting")
        await h.answer(request)
        result = await asyncio.wait_for(fetching, WAIT_S)
    assert result["content"][0]["text"] == "answer accept"
    assert [m for m in on_result if "id" in m] == []
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
        deadline = time.monotonic() + WAIT_S
        while True:  # until the stream reports the task completed
            assert time.monotonic() < deadline, "the task never completed"
            note = await asyncio.wait_for(second.get(), WAIT_S)
            assert note is not None and "id" not in note, note
            if note["params"].get("status") == "completed":
                break
        status = (await h.call("tasks/get", {"taskId": task_id}))["status"]
    assert status == "completed"


async def test_an_anonymous_task_s_request_reaches_no_other_anonymous_session() -> None:
    """Another anonymous client (its own session) may fetch an anonymous task by its
    ID, but neither its ``tasks/result`` nor its GET streams carry the task's input
    request: only the session that created the task gets it."""
    async with in_process() as h:
        own = h.open_get_stream()
        task_id = await h.start_ask()
        stranger = h.server.open_session()
        early = stranger.open_stream()
        h.server.stream_opened(stranger, early)
        on_result: list[dict[str, Any]] = []

        async def keep(message: dict[str, Any]) -> None:
            on_result.append(message)

        fetching = asyncio.create_task(
            h.server.handle(
                message_2025("tasks/result", {"taskId": task_id}, request_id=50),
                RequestInfo(session_id=stranger.id),
                keep,
            )
        )
        await until(
            lambda: task_id in h.server.inputs.channels, interval=0, what="waiting"
        )
        h.release.set()  # the tool asks only now, while the stranger's call waits
        request = await next_request(own)
        late = stranger.open_stream()
        h.server.stream_opened(stranger, late)
        await h.answer(request)
        result = result_of(await asyncio.wait_for(fetching, WAIT_S))
    assert result["content"][0]["text"] == "answer accept"
    assert on_result == []
    assert requests_in(early) == [] and requests_in(late) == []


async def test_a_streamless_session_s_requests_go_to_another_of_its_principal() -> None:
    """The task's own session has no GET stream open (its client is gone): a request
    the task asks now goes out on the open GET stream of another session of the same
    principal, whose answer completes the task; another principal's stream stays empty.
    """
    async with in_process(principal="R") as h:
        second = h.open_session()
        stranger = h.server.open_session("principal:S", "S")
        in_second = RequestInfo(principal="R", session_id=second.id)
        task_id = await h.start_ask()
        theirs = h.open_get_stream(stranger)
        ours = h.open_get_stream(second)
        h.release.set()
        request = await next_request(ours)
        assert request["params"]["_meta"] == {RELATED: {"taskId": task_id}}
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept"}}
        assert await h.server.handle(reply, in_second) is None

        async def completed() -> bool:
            got = await h.call("tasks/get", {"taskId": task_id})
            return got["status"] == "completed"

        await until(completed, timeout=WAIT_S, what="the task completed")
    assert requests_in(theirs) == []


async def test_another_session_of_the_principal_waits_while_the_task_holds_it() -> None:
    """Two clients of one principal (the example servers make every caller without
    credentials the principal "anonymous"): the task's request went out on its own
    session's open GET stream, so the other client's GET stream, opened afterwards,
    does not carry it too (its user would be asked a stranger's question). Once the
    task's stream closes unanswered, a new stream of the other session carries it."""
    async with in_process(principal="R") as h:
        second = h.open_session()
        task_id = await h.start_ask()
        own = h.open_get_stream()
        h.release.set()
        request = await next_request(own)
        other = h.open_get_stream(second)
        assert requests_in(other) == []
        h.server.stream_closed(h.session, h.session.close_stream(own))
        again = h.open_get_stream(second)
        assert requests_in(again) == [request]
        assert task_id == request["params"]["_meta"][RELATED]["taskId"]
