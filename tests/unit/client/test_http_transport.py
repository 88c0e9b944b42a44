"""The streamable HTTP transport, driven through ``httpx.MockTransport`` to inspect the
wire.

Covers what a real server cannot show us directly: exact request headers (C.2.16),
SSE parsing, server-to-client requests on an SSE stream (C.1.11, F-13), the 2025-11-25
session lifecycle, and HTTP error bodies. The same transport talks to the real peers in
the ``test_interop_*`` modules.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import mcp_tasks_2025_11_25.client.http as legacy_http
import mcp_tasks_2025_11_25.transport as legacy
import mcp_tasks_ext.transport as ext
from mcp_tasks_2025_11_25.client import InputContext
from mcp_tasks_2025_11_25.client import TasksClient as LegacyClient
from mcp_tasks_ext.client import MissingRequiredClientCapability, TasksClient
from mcp_tasks_ext.task_ids import MemoryTaskIdStore
from tests.support.fakes import TASK_ID, TEXT_RESULT, run, task_2025, task_ext
from tests.support.waiting import until

URL = "http://127.0.0.1:9/mcp"


def sse(*messages: dict[str, Any]) -> bytes:
    return b"".join(
        b"event: message\ndata: " + json.dumps(m).encode() + b"\n\n" for m in messages
    )


class Recorder:
    """Answers requests with ``respond(message, request)`` and keeps every request."""

    def __init__(
        self, respond: Callable[[dict[str, Any], httpx.Request], httpx.Response]
    ) -> None:
        self.respond = respond
        self.requests: list[tuple[httpx.Request, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        self.requests.append((request, body))
        return self.respond(body or {}, request)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self))

    def bodies(self, method: str) -> list[tuple[httpx.Request, Any]]:
        return [
            (r, b)
            for r, b in self.requests
            if isinstance(b, dict) and b.get("method") == method
        ]


def reply(message: dict[str, Any], result: dict[str, Any]) -> httpx.Response:
    return httpx.Response(
        200, json={"jsonrpc": "2.0", "id": message["id"], "result": result}
    )


def test_tasks_requests_carry_mcp_method_and_mcp_name_headers() -> None:
    """Digest C.2.16: tasks requests carry mcp method and mcp name headers."""
    created = {
        "resultType": "task",
        "taskId": TASK_ID,
        "status": "working",
        "createdAt": "t",
        "lastUpdatedAt": "t",
        "ttlMs": None,
        "pollIntervalMs": 0,
    }

    def respond(message: dict[str, Any], request: httpx.Request) -> httpx.Response:
        if message["method"] == "tools/call":
            return reply(message, created)
        if message["method"] == "tasks/get":
            return reply(message, task_ext("completed", result=TEXT_RESULT))
        return reply(message, {"resultType": "complete"})

    recorder = Recorder(respond)

    async def scenario() -> None:
        transport = ext.HttpTransport(URL, http_client=recorder.client())
        async with TasksClient(transport, store=MemoryTaskIdStore()) as client:
            await client.call_tool("slow_compute", {"seconds": 1})
            await client.cancel_task(TASK_ID)

    run(scenario())
    seen = [
        (
            r.headers["mcp-method"],
            r.headers.get("mcp-name"),
            r.headers["mcp-protocol-version"],
        )
        for r, _ in recorder.requests
    ]
    assert seen == [
        ("tools/call", "slow_compute", "2026-07-28"),
        ("tasks/get", TASK_ID, "2026-07-28"),
        ("tasks/cancel", TASK_ID, "2026-07-28"),
    ]
    assert all("mcp-session-id" not in r.headers for r, _ in recorder.requests)


def test_unsafe_header_values_use_the_base64_sentinel() -> None:
    """Digest C.2.16: unsafe header values use the base64 sentinel."""
    assert ext.header_value("abc-123_X") == "abc-123_X"
    assert ext.header_value("café") == "=?base64?Y2Fmw6k=?="
    assert ext.header_value(" padded") == "=?base64?IHBhZGRlZA==?="
    assert ext.header_value("line\nbreak").startswith("=?base64?")
    assert ext.header_value("=?base64?looks-encoded?=").startswith("=?base64?PT9i")

    recorder = Recorder(lambda m, r: reply(m, task_ext("working", task_id="tâche")))

    async def scenario() -> None:
        client = TasksClient(
            ext.HttpTransport(URL, http_client=recorder.client()),
            store=MemoryTaskIdStore(),
        )
        await client.get_task("tâche")

    run(scenario())
    request, _ = recorder.requests[0]
    assert request.headers["mcp-name"] == "=?base64?dMOiY2hl?="


def test_json_rpc_error_in_an_http_400_body_is_raised_typed() -> None:
    error = {
        "code": -32021,
        "message": "Missing required client capability",
        "data": {
            "requiredCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            }
        },
    }
    recorder = Recorder(
        lambda m, r: httpx.Response(
            400, json={"jsonrpc": "2.0", "id": m["id"], "error": error}
        )
    )

    async def scenario() -> None:
        client = TasksClient(
            ext.HttpTransport(URL, http_client=recorder.client()),
            store=MemoryTaskIdStore(),
        )
        with pytest.raises(MissingRequiredClientCapability) as caught:
            await client.get_task(TASK_ID)
        assert caught.value.required_capabilities == {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }

    run(scenario())


def test_http_error_without_a_json_rpc_body_is_a_transport_error() -> None:
    recorder = Recorder(lambda m, r: httpx.Response(503, text=""))

    async def scenario() -> None:
        transport = ext.HttpTransport(URL, http_client=recorder.client())
        with pytest.raises(ext.TransportError):
            await transport.request(1, "tasks/get", {"taskId": "x"})

    run(scenario())


def initialize_reply(message: dict[str, Any]) -> httpx.Response:
    result = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}},
        "serverInfo": {"name": "mock", "version": "0"},
    }
    return httpx.Response(
        200,
        json={"jsonrpc": "2.0", "id": message["id"], "result": result},
        headers={"mcp-session-id": "session-1"},
    )


def test_2025_session_lifecycle_headers_and_get_stream() -> None:
    pushed = task_2025("working", message="from the GET stream")
    notes: list[tuple[str, dict[str, Any]]] = []

    def respond(message: dict[str, Any], request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            body = sse(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/tasks/status",
                    "params": pushed,
                }
            )
            return httpx.Response(
                200, content=body, headers={"content-type": "text/event-stream"}
            )
        if request.method == "DELETE":
            return httpx.Response(200)
        if message.get("method") == "initialize":
            return initialize_reply(message)
        if "id" not in message:
            return httpx.Response(202)
        return reply(message, {"tools": []})

    recorder = Recorder(respond)

    async def on_notification(method: str, params: dict[str, Any]) -> None:
        notes.append((method, params))

    async def on_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def scenario() -> None:
        transport = legacy.HttpTransport(URL, http_client=recorder.client())
        transport.set_handlers(on_notification, on_request)
        await transport.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        )
        await transport.notify("notifications/initialized", {})
        await until(lambda: notes, what="the GET stream's notification")
        await transport.request(2, "tools/list", {})
        await transport.aclose()

    run(scenario())
    assert notes[0] == ("notifications/tasks/status", pushed)
    methods = [(r.method, (b or {}).get("method")) for r, b in recorder.requests]
    assert methods[:2] == [
        ("POST", "initialize"),
        ("POST", "notifications/initialized"),
    ]
    assert ("GET", None) in methods and methods[-1] == ("DELETE", None)
    initialize, _ = recorder.requests[0]
    assert "mcp-session-id" not in initialize.headers
    assert (
        "text/event-stream" in initialize.headers["accept"]
        and "application/json" in initialize.headers["accept"]
    )
    for request, _ in recorder.requests[1:]:
        assert request.headers["mcp-session-id"] == "session-1"
        assert request.headers["mcp-protocol-version"] == "2025-11-25"


def test_elicitation_on_the_tasks_result_sse_stream_is_answered_by_post() -> None:
    """Digest C.1.11: elicitation on the tasks result sse stream is answered by post."""
    elicit_request = {
        "jsonrpc": "2.0",
        "id": 100,
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Please enter your name.",
            "requestedSchema": {"type": "object", "properties": {}},
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": TASK_ID}},
        },
    }
    answered = asyncio.Event()
    posted: list[dict[str, Any]] = []

    def respond(message: dict[str, Any], request: httpx.Request) -> httpx.Response:
        if message.get("method") == "initialize":
            return initialize_reply(message)
        if request.method != "POST" or ("id" not in message and "method" in message):
            return httpx.Response(202 if request.method == "POST" else 405)
        if "result" in message:
            posted.append(message)
            return httpx.Response(202)
        if message["method"] == "tools/list":
            return reply(
                message,
                {
                    "tools": [
                        {
                            "name": "job",
                            "inputSchema": {"type": "object"},
                            "execution": {"taskSupport": "optional"},
                        }
                    ]
                },
            )
        if message["method"] == "tools/call":
            return reply(message, {"task": task_2025("input_required", poll=50)})
        if message["method"] == "tasks/get":
            return reply(message, task_2025("input_required", poll=50))
        if message["method"] == "tasks/result":
            result = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "result": {
                    **TEXT_RESULT,
                    "_meta": {
                        "io.modelcontextprotocol/related-task": {"taskId": TASK_ID}
                    },
                },
            }
            return httpx.Response(
                200,
                content=sse(elicit_request, result),
                headers={"content-type": "text/event-stream"},
            )
        raise AssertionError(message)

    recorder = Recorder(respond)

    async def elicit(context: InputContext) -> dict[str, Any]:
        answered.set()
        return {"action": "accept", "content": {"name": "Luca"}}

    async def scenario() -> None:
        transport = legacy.HttpTransport(URL, http_client=recorder.client())
        async with LegacyClient(
            transport, store=MemoryTaskIdStore(), elicitation_handler=elicit
        ) as client:
            result = await client.call_tool("job")
            assert result.is_error is False
            await asyncio.wait_for(answered.wait(), 5)
            await until(lambda: posted, what="the answer's POST")

    run(scenario())
    assert posted == [
        {
            "jsonrpc": "2.0",
            "id": 100,
            "result": {
                "action": "accept",
                "content": {"name": "Luca"},
                "_meta": {"io.modelcontextprotocol/related-task": {"taskId": TASK_ID}},
            },
        }
    ]


ELICIT_AGAIN = {
    "jsonrpc": "2.0",
    "id": "srv-7",
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Delete f.txt?",
        "requestedSchema": {"type": "object", "properties": {}},
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": TASK_ID}},
    },
}
"""One server-to-client request, which the scripted servers below send repeatedly."""


def test_a_request_delivered_on_several_streams_is_answered_once() -> None:
    """A server may send a pending request again on each new stream: here the GET
    stream (and every reconnection of it) and twice on ``tasks/result``. The client
    runs its elicitation handler once and POSTs one reply, whether the copies arrive
    while the handler runs or after its reply was delivered."""
    gets: list[httpx.Request] = []
    posted: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []

    def respond(message: dict[str, Any], request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            gets.append(request)
            return httpx.Response(
                200,
                content=sse(ELICIT_AGAIN),
                headers={"content-type": "text/event-stream"},
            )
        if request.method == "DELETE":
            return httpx.Response(200)
        if message.get("method") == "initialize":
            return initialize_reply(message)
        if "id" not in message:
            return httpx.Response(202)
        if "result" in message:
            posted.append(message)
            return httpx.Response(202)
        if message["method"] == "tools/list":
            tool = {
                "name": "job",
                "inputSchema": {"type": "object"},
                "execution": {"taskSupport": "optional"},
            }
            return reply(message, {"tools": [tool]})
        if message["method"] == "tools/call":
            return reply(message, {"task": task_2025("input_required", poll=50)})
        if message["method"] == "tasks/get":
            return reply(message, task_2025("input_required", poll=50))
        if message["method"] == "tasks/result":
            result = {"jsonrpc": "2.0", "id": message["id"], "result": TEXT_RESULT}
            return httpx.Response(
                200,
                content=sse(ELICIT_AGAIN, ELICIT_AGAIN, result),
                headers={"content-type": "text/event-stream"},
            )
        raise AssertionError(message)

    recorder = Recorder(respond)

    async def scenario() -> None:
        release = asyncio.Event()

        async def elicit(context: InputContext) -> dict[str, Any]:
            calls.append(dict(context.params))
            await release.wait()  # copies arrive while the user is being asked
            return {"action": "accept", "content": {"confirm": True}}

        transport = legacy.HttpTransport(URL, http_client=recorder.client())
        async with LegacyClient(
            transport, store=MemoryTaskIdStore(), elicitation_handler=elicit
        ) as client:
            result = await client.call_tool("job")
            assert result.is_error is False
            release.set()
            await until(lambda: posted, what="the answer's POST")
            seen = len(gets)
            # the GET stream reconnects (every second) and carries the request again
            await until(lambda: len(gets) >= seen + 2, what="two more GET streams")

    run(scenario())
    assert len(calls) == 1
    assert posted == [
        {
            "jsonrpc": "2.0",
            "id": "srv-7",
            "result": {
                "action": "accept",
                "content": {"confirm": True},
                "_meta": {"io.modelcontextprotocol/related-task": {"taskId": TASK_ID}},
            },
        }
    ]


def test_a_reply_that_did_not_get_through_is_sent_again_not_answered_again() -> None:
    """The first POST of the reply fails (HTTP 503); when the server sends the request
    again, the same reply is POSTed again and the handler does not run a second time."""
    posted: list[tuple[int, dict[str, Any]]] = []
    calls: list[str] = []

    def respond(message: dict[str, Any], request: httpx.Request) -> httpx.Response:
        if "result" in message and "method" not in message:
            status = 503 if not posted else 202
            posted.append((status, message))
            return httpx.Response(status)
        if message.get("method") == "tasks/result":
            return httpx.Response(
                200,
                content=sse(ELICIT_AGAIN),
                headers={"content-type": "text/event-stream"},
            )
        raise AssertionError(message)

    recorder = Recorder(respond)

    async def on_notification(method: str, params: dict[str, Any]) -> None:
        pass

    async def on_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        calls.append(method)
        return {"action": "decline"}

    async def scenario() -> None:
        transport = legacy.HttpTransport(URL, http_client=recorder.client())
        transport.set_handlers(on_notification, on_request)
        for attempt in (1, 2, 3):  # each stream ends before any result: an error
            with pytest.raises(legacy.TransportError):
                await transport.request(attempt, "tasks/result", {"taskId": TASK_ID})
            # until the reply's POST (if any) is over, as it was answered
            await until(lambda: not transport._dispatcher.background, what="replied")
        await transport.aclose()

    run(scenario())
    assert calls == ["elicitation/create"]
    reply_body = {"jsonrpc": "2.0", "id": "srv-7", "result": {"action": "decline"}}
    assert posted == [(503, reply_body), (202, reply_body)]


def test_sse_response_delivers_notifications_before_the_result() -> None:
    notes: list[tuple[str, dict[str, Any]]] = []

    def respond(message: dict[str, Any], request: httpx.Request) -> httpx.Response:
        progress = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "t", "progress": 1},
        }
        body = b": comment\n\n" + sse(
            progress, {"jsonrpc": "2.0", "id": message["id"], "result": {"ok": True}}
        )
        return httpx.Response(
            200,
            content=body,
            headers={"content-type": "text/event-stream; charset=utf-8"},
        )

    recorder = Recorder(respond)

    async def on_notification(method: str, params: dict[str, Any]) -> None:
        notes.append((method, params))

    async def on_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def scenario() -> dict[str, Any]:
        transport = ext.HttpTransport(URL, http_client=recorder.client())
        transport.set_handlers(on_notification, on_request)
        return await transport.request("r1", "tools/call", {"name": "x"})

    assert run(scenario()) == {"ok": True}
    assert notes == [("notifications/progress", {"progressToken": "t", "progress": 1})]


def test_a_get_stream_the_server_never_answers_delays_initialized_only_so_long(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``notifications/initialized`` waits for the server to answer the session's GET
    (so nothing sent for the next requests is dropped), but only ``GET_STREAM_WAIT_S``:
    a server that never answers it still gets the next request."""
    monkeypatch.setattr(legacy_http, "GET_STREAM_WAIT_S", 0.05)
    held = asyncio.Event()

    async def respond(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            held.set()
            await asyncio.Event().wait()  # never answered; cancelled at close
        message = json.loads(request.content) if request.content else {}
        if message.get("method") == "initialize":
            return initialize_reply(message)
        if "id" not in message:
            return httpx.Response(202)
        return reply(message, {"tools": []})

    async def scenario() -> None:
        http = httpx.AsyncClient(transport=httpx.MockTransport(respond))
        transport = legacy.HttpTransport(URL, http_client=http)
        transport.set_handlers(_ignore_notification, _no_request)
        await transport.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        )
        await transport.notify("notifications/initialized", {})
        assert held.is_set()
        assert await transport.request(2, "tools/list", {}) == {"tools": []}
        await transport.aclose()
        await http.aclose()

    run(scenario())


async def _ignore_notification(method: str, params: dict[str, Any]) -> None:
    return None


async def _no_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {}
