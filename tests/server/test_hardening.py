"""Issue 9, server items 1-7 and 22: hostile input and cross-session abuse.

Items 1, 4, 5, 6 and 7 run ``examples/server_2025.py`` as a real process (its
principal is the ``Authorization`` header value) and talk raw HTTP to it; the others
drive the ASGI app or ``TasksServer.handle`` in process. Hostile input must never
yield HTTP 500 or a traceback in the log.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_tasks_2025_11_25 import server as server_2025
from mcp_tasks_2025_11_25.asgi import create_app
from mcp_tasks_2025_11_25.stores import InMemoryTaskStore, SQLiteTaskStore
from mcp_tasks_ext import server as server_ext
from mcp_tasks_ext.stores import InMemoryTaskStore as ExtMemoryStore
from tests.support.procs import ServerHandle

from .conftest import error_of, example_server, ext_message, message_2025, result_of

pytestmark = pytest.mark.anyio

ACCEPT = {"accept": "application/json, text/event-stream"}
SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}


def strict_json(text: str) -> Any:
    """Parse ``text`` as JSON proper (no NaN or Infinity)."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def server_2025_http() -> Iterator[ServerHandle]:
    with example_server("server_2025", "--memory") as handle:
        yield handle


@pytest.fixture()
def server_2025_sqlite(tmp_path: Path) -> Iterator[ServerHandle]:
    with example_server("server_2025", "--db", str(tmp_path / "t.db")) as handle:
        yield handle


def no_traceback(handle: ServerHandle) -> None:
    tail = handle.log_tail(400)
    assert "Traceback" not in tail, tail


async def initialize(
    client: httpx.AsyncClient, url: str, authorization: str | None = None
) -> dict[str, str]:
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
    assert response.status_code == 200, response.text
    return {
        **ACCEPT,
        **auth,
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }


async def sse_messages(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            yield strict_json(line[6:])


async def forge_replies(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], ids: list[Any]
) -> None:
    """Post accepting answers with every id in ``ids`` in another principal's
    session."""
    for request_id in ids:
        forged = await client.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {"action": "accept", "content": {"confirm": True}},
            },
            headers=headers,
        )
        assert forged.status_code < 500


# -- item 1: side-request replies are bound to their session and principal -------------


async def test_item1_other_principal_cannot_answer_a_task_elicitation(
    server_2025_http: ServerHandle,
) -> None:
    url = server_2025_http.url
    async with httpx.AsyncClient(timeout=20) as client:
        alice = await initialize(client, url, "Bearer A")
        bob = await initialize(client, url, "Bearer B")
        created = await client.post(
            url,
            json=message_2025(
                "tools/call",
                {
                    "name": "confirm_delete",
                    "arguments": {"filename": "A-secret.txt"},
                    "task": {"ttl": 60000},
                },
            ),
            headers=alice,
        )
        task_id = result_of(created.json())["task"]["taskId"]
        async with client.stream(
            "POST",
            url,
            json=message_2025("tasks/result", {"taskId": task_id}, request_id=2),
            headers=alice,
        ) as stream:
            messages = sse_messages(stream)
            request = await anext(messages)
            assert request["method"] == "elicitation/create"
            # B tries sequential ids and even the real one
            await forge_replies(client, url, bob, [*range(1, 200), request["id"]])
            # a reply from A's principal through another session is not A's answer
            # either
            alice_again = await initialize(client, url, "Bearer A")
            await forge_replies(client, url, alice_again, [request["id"]])
            answered = await client.post(
                url,
                json={
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"action": "decline"},
                },
                headers=alice,
            )
            assert answered.status_code == 202
            final = [m async for m in messages][-1]
    text = result_of(final)["content"][0]["text"]
    assert text == "kept A-secret.txt (decline)"
    no_traceback(server_2025_http)


async def test_item1_other_principal_cannot_answer_a_synchronous_side_request(
    server_2025_http: ServerHandle,
) -> None:
    url = server_2025_http.url
    async with httpx.AsyncClient(timeout=20) as client:
        alice = await initialize(client, url, "Bearer A")
        bob = await initialize(client, url, "Bearer B")
        async with client.stream(
            "POST",
            url,
            json=message_2025(
                "tools/call",
                {"name": "confirm_delete", "arguments": {"filename": "A-secret.txt"}},
            ),
            headers=alice,
        ) as stream:
            messages = sse_messages(stream)
            request = await anext(messages)
            assert request["method"] == "elicitation/create"
            assert isinstance(request["id"], str) and len(request["id"]) >= 22
            await forge_replies(client, url, bob, [*range(1, 200), request["id"]])
            answered = await client.post(
                url,
                json={
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"action": "decline"},
                },
                headers=alice,
            )
            assert answered.status_code == 202
            final = [m async for m in messages][-1]
    assert result_of(final)["content"][0]["text"] == "kept A-secret.txt (decline)"
    no_traceback(server_2025_http)


# -- items 4, 5 and 7: bad JSON, numbers and ids over HTTP -----------------------------


async def post_raw(
    client: httpx.AsyncClient, url: str, body: str, headers: dict[str, str]
) -> tuple[int, Any]:
    response = await client.post(
        url,
        content=body.encode(),
        headers={**headers, "content-type": "application/json"},
    )
    return response.status_code, strict_json(response.text) if response.text else None


async def test_item4_deeply_nested_json_is_a_parse_error(
    server_2025_http: ServerHandle,
) -> None:
    url = server_2025_http.url
    async with httpx.AsyncClient(timeout=20) as client:
        headers = await initialize(client, url)
        bodies = [
            "[" * 100_000 + "]" * 100_000,
            '{"jsonrpc":"2.0","method":"ping","id":' + "[" * 2000 + "]" * 2000 + "}",
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet",'
            '"arguments":{"a":' + '{"b":' * 2000 + "1" + "}" * 2000 + "}}}",
        ]
        for body in bodies:
            status, answer = await post_raw(client, url, body, headers)
            assert status == 400, body[:80]
            assert answer["error"]["code"] == -32700 and answer["id"] is None
        # moderately nested input still works
        nested = (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"x":'
            + "[" * 100
            + "]" * 100
            + "}}}"
        )
        status, answer = await post_raw(client, url, nested, headers)
        assert status == 200 and "result" in answer
    no_traceback(server_2025_http)


@pytest.mark.parametrize(
    "ttl", ["1e400", "-1e400", "Infinity", "NaN", "true", "-1", '"5"']
)
async def test_item5_bad_task_ttl_is_invalid_params(
    server_2025_http: ServerHandle, ttl: str
) -> None:
    url = server_2025_http.url
    async with httpx.AsyncClient(timeout=20) as client:
        headers = await initialize(client, url)
        body = (
            '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":'
            '"slow_compute","arguments":{},"task":{"ttl":' + ttl + "}}}"
        )
        status, answer = await post_raw(client, url, body, headers)
    assert status < 500
    assert answer["id"] == 5 and answer["error"]["code"] == -32602, answer
    no_traceback(server_2025_http)


@pytest.mark.parametrize(
    "request_id", ["1e400", "NaN", "Infinity", "{}", "[]", "true", "1.5", "null"]
)
async def test_item7_invalid_ids_are_invalid_requests(
    server_2025_http: ServerHandle, request_id: str
) -> None:
    url = server_2025_http.url
    async with httpx.AsyncClient(timeout=20) as client:
        headers = await initialize(client, url)
        body = '{"jsonrpc":"2.0","id":' + request_id + ',"method":"ping"}'
        status, answer = await post_raw(client, url, body, headers)
    assert status == 400
    assert answer["id"] is None and answer["error"]["code"] == -32600, answer
    no_traceback(server_2025_http)


async def test_item7_message_with_only_an_id_is_an_invalid_request(
    server_2025_http: ServerHandle,
) -> None:
    url = server_2025_http.url
    async with httpx.AsyncClient(timeout=20) as client:
        headers = await initialize(client, url)
        status, answer = await post_raw(
            client, url, '{"jsonrpc":"2.0","id":7}', headers
        )
        good = await post_raw(
            client, url, '{"jsonrpc":"2.0","id":"s-1","method":"ping"}', headers
        )
        numbered = await post_raw(
            client, url, '{"jsonrpc":"2.0","id":-3,"method":"ping"}', headers
        )
        nan_args = await post_raw(
            client,
            url,
            '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"greet",'
            '"arguments":{"name":NaN}}}',
            headers,
        )
    assert status == 400 and answer["error"]["code"] == -32600 and answer["id"] is None
    assert good[1] == {"jsonrpc": "2.0", "id": "s-1", "result": {}}
    assert numbered[1]["id"] == -3 and "result" in numbered[1]
    assert nan_args[1]["id"] == 8 and nan_args[1]["error"]["code"] == -32602
    no_traceback(server_2025_http)


# -- item 6: lone surrogates -----------------------------------------------------------


async def test_item6_lone_surrogate_task_id_on_sqlite_is_invalid_params(
    server_2025_sqlite: ServerHandle,
) -> None:
    url = server_2025_sqlite.url
    async with httpx.AsyncClient(timeout=20) as client:
        headers = await initialize(client, url)
        answers = [
            await post_raw(
                client,
                url,
                '{"jsonrpc":"2.0","id":1,"method":"'
                + method
                + '","params":{"taskId":"\\ud800"}}',
                headers,
            )
            for method in ("tasks/get", "tasks/result", "tasks/cancel")
        ]
    for status, answer in answers:
        assert status < 500 and answer["error"]["code"] == -32602, answer
    no_traceback(server_2025_sqlite)


async def test_item6_lone_surrogate_task_id_in_process_sqlite(tmp_path: Path) -> None:
    server = server_2025.TasksServer("t", store=SQLiteTaskStore(str(tmp_path / "t.db")))
    async with server:
        answer = await server.handle(message_2025("tasks/get", {"taskId": "\ud800x"}))
    assert error_of(answer)["code"] == -32602


# -- item 2: session flood -------------------------------------------------------------


def _asgi_client(app: Any, host: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(host, 1234))
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")


async def test_item2_session_flood_does_not_evict_other_clients() -> None:
    server = server_2025.TasksServer(
        "t",
        store=InMemoryTaskStore(),
        authenticate=lambda info: (info.headers or {}).get("authorization"),
        max_sessions=20,
        max_sessions_per_client=5,
    )
    app = create_app(server)
    async with (
        server,
        _asgi_client(app, "10.0.0.1") as alice_client,
        _asgi_client(app, "10.6.6.6") as flood_client,
    ):
        alice = await initialize(alice_client, "/mcp", "Bearer A")
        refused = []
        for _ in range(50):
            response = await flood_client.post(
                "/mcp",
                json=message_2025(
                    "initialize",
                    {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "flood", "version": "0"},
                    },
                ),
                headers=ACCEPT,
            )
            assert response.status_code < 500
            if "mcp-session-id" not in response.headers:
                refused.append(response)
        still = await alice_client.post(
            "/mcp", json=message_2025("ping"), headers=alice
        )
    assert still.status_code == 200 and "result" in still.json()
    assert len(refused) == 45
    error = refused[0].json()["error"]
    assert error["code"] == server.limits.limit_error_code
    assert "sessions" in error["message"]


# -- item 3: what finished tasks may keep ----------------------------------------------


async def test_item3_finished_tasks_and_result_bytes_are_bounded_per_principal(
    tmp_path: Path,
) -> None:
    store = SQLiteTaskStore(str(tmp_path / "t.db"))
    server = server_2025.TasksServer(
        "t",
        store=store,
        limits=server_2025.Limits(max_finished_tasks=3, max_result_bytes=10_000),
    )
    done = asyncio.Event()

    @server.tool()
    async def echo(ctx: server_2025.ToolContext, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))

    async with server:
        session = server.open_session()
        info = server_2025.RequestInfo(principal="p", session_id=session.id)
        other = server_2025.RequestInfo(principal="q", session_id=session.id)

        async def call(
            text: str, who: server_2025.RequestInfo
        ) -> dict[str, Any] | None:
            return await server.handle(
                message_2025(
                    "tools/call",
                    {"name": "echo", "arguments": {"text": text}, "task": {}},
                ),
                who,
            )

        async def result(task_id: str) -> dict[str, Any] | None:
            return await server.handle(
                message_2025("tasks/result", {"taskId": task_id}), info
            )

        big = error_of(
            await result(result_of(await call("x" * 20_000, info))["task"]["taskId"])
        )
        for _ in range(2):
            result_of(
                await result(result_of(await call("small", info))["task"]["taskId"])
            )
        refused = error_of(await call("one too many", info))
        allowed_for_other = result_of(await call("q's", other))
        done.set()
        cached = [record for record, _ in store._cache.values() if record.is_terminal]
    assert "too large" in big["message"]
    assert refused["code"] == server.limits.limit_error_code
    assert "finished tasks" in refused["message"]
    assert "task" in allowed_for_other
    assert cached == []  # finished results are read from the file, not kept in memory


async def test_item3_stored_result_bytes_are_bounded_per_principal() -> None:
    server = server_2025.TasksServer(
        "t",
        store=InMemoryTaskStore(),
        limits=server_2025.Limits(max_stored_bytes=50_000, max_result_bytes=40_000),
    )

    @server.tool()
    async def echo(ctx: server_2025.ToolContext, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))

    async with server:
        info = server_2025.RequestInfo(principal="p")
        outcomes = []
        for _ in range(3):
            created = await server.handle(
                message_2025(
                    "tools/call",
                    {"name": "echo", "arguments": {"text": "x" * 30_000}, "task": {}},
                ),
                info,
            )
            if "error" in (created or {}):
                outcomes.append(error_of(created))
                continue
            task_id = result_of(created)["task"]["taskId"]
            outcomes.append(
                result_of(
                    await server.handle(
                        message_2025("tasks/result", {"taskId": task_id}), info
                    )
                )
            )
    assert "content" in outcomes[0] and "content" in outcomes[1]
    assert outcomes[2]["code"] == server.limits.limit_error_code
    assert "bytes" in outcomes[2]["message"]


# -- item 22: answers are validated before the tool sees them --------------------------


@pytest.mark.parametrize(
    "answer",
    [
        {"action": "maybe"},
        {"action": "accept", "content": {"confirm": "yes"}},
        {"action": "accept", "content": "nope"},
        {"nothing": True},
    ],
)
async def test_item22_bad_elicitation_answer_fails_the_tool_clearly(
    answer: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server = server_2025.TasksServer("t", store=InMemoryTaskStore())
    seen: list[Any] = []

    @server.tool()
    async def ask(ctx: server_2025.ToolContext, arguments: dict[str, Any]) -> str:
        try:
            seen.append(await ctx.elicit("Sure?", SCHEMA))
        except server_2025.JsonRpcError as error:
            seen.append(error)
            raise
        return "asked"

    async with server:
        session = server.open_session()
        session.client_capabilities = {"elicitation": {}}
        info = server_2025.RequestInfo(session_id=session.id)
        asked: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        async def emit(message: dict[str, Any]) -> None:
            await asked.put(message)

        call = asyncio.ensure_future(
            server.handle(message_2025("tools/call", {"name": "ask"}), info, emit)
        )
        request = await asked.get()
        await server.handle(
            {"jsonrpc": "2.0", "id": request["id"], "result": answer}, info
        )
        response = await call
    assert isinstance(seen[0], server_2025.JsonRpcError)
    assert seen[0].code == -32602 and "elicitation/create" in seen[0].message
    assert error_of(response)["code"] == -32602
    assert "Traceback" not in caplog.text


async def test_item22_good_elicitation_answer_reaches_the_tool() -> None:
    server = server_2025.TasksServer("t", store=InMemoryTaskStore())

    @server.tool()
    async def ask(ctx: server_2025.ToolContext, arguments: dict[str, Any]) -> str:
        return json.dumps(await ctx.elicit("Sure?", SCHEMA))

    async with server:
        session = server.open_session()
        session.client_capabilities = {"elicitation": {}}
        info = server_2025.RequestInfo(session_id=session.id)
        asked: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        async def emit(message: dict[str, Any]) -> None:
            await asked.put(message)

        call = asyncio.ensure_future(
            server.handle(message_2025("tools/call", {"name": "ask"}), info, emit)
        )
        request = await asked.get()
        good = {"action": "accept", "content": {"confirm": True}}
        await server.handle(
            {"jsonrpc": "2.0", "id": request["id"], "result": good}, info
        )
        response = await call
    assert json.loads(result_of(response)["content"][0]["text"]) == good


async def test_item22_ext_update_with_a_bad_answer_is_refused() -> None:
    server = server_ext.TasksServer("t", store=ExtMemoryStore())
    asked = asyncio.Event()

    @server.tool(task_support="required")
    async def ask(ctx: server_ext.ToolContext, arguments: dict[str, Any]) -> str:
        asked.set()
        return json.dumps(await ctx.elicit("Sure?", SCHEMA))

    async with server:
        created = result_of(
            await server.handle(ext_message("tools/call", {"name": "ask"}))
        )
        task_id = created["taskId"]
        await asked.wait()
        task = result_of(
            await server.handle(ext_message("tasks/get", {"taskId": task_id}))
        )
        while task["status"] != "input_required":
            await asyncio.sleep(0)
            task = result_of(
                await server.handle(ext_message("tasks/get", {"taskId": task_id}))
            )
        (key,) = task["inputRequests"]
        bad = await server.handle(
            ext_message(
                "tasks/update",
                {"taskId": task_id, "inputResponses": {key: {"action": "maybe"}}},
            )
        )
        still = result_of(
            await server.handle(ext_message("tasks/get", {"taskId": task_id}))
        )
        good = {"action": "accept", "content": {"confirm": False}}
        result_of(
            await server.handle(
                ext_message(
                    "tasks/update", {"taskId": task_id, "inputResponses": {key: good}}
                )
            )
        )
        while task["status"] != "completed":
            await asyncio.sleep(0)
            task = result_of(
                await server.handle(ext_message("tasks/get", {"taskId": task_id}))
            )
    assert error_of(bad)["code"] == -32602 and key in error_of(bad)["message"]
    assert still["status"] == "input_required"
    assert json.loads(task["result"]["content"][0]["text"]) == good


@pytest.mark.parametrize("ttl", [float("inf"), float("nan"), True, -5, "7"])
async def test_item5_in_process_ttl_is_checked_strictly(ttl: Any) -> None:
    server = server_2025.TasksServer("t", store=InMemoryTaskStore())

    @server.tool()
    async def quick(ctx: server_2025.ToolContext, arguments: dict[str, Any]) -> str:
        return "ok"

    async with server:
        answer = await server.handle(
            message_2025("tools/call", {"name": "quick", "task": {"ttl": ttl}})
        )
    assert error_of(answer)["code"] == -32602
