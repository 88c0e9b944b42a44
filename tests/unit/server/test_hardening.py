"""Issue 9, server items 2, 3, 5, 6 and 22, in process: hostile input and cross-session
abuse against the ASGI app or ``TasksServer.handle``.

Items 1, 4, 5, 6 and 7 over HTTP against a real ``examples/server_2025.py`` process
are in ``tests/integration/server/test_hardening.py``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_tasks_2025_11_25 import server as server_2025
from mcp_tasks_2025_11_25.asgi import create_app
from mcp_tasks_2025_11_25.stores import InMemoryTaskStore, SQLiteTaskStore
from mcp_tasks_ext import server as server_ext
from mcp_tasks_ext.stores import InMemoryTaskStore as ExtMemoryStore
from tests.support.servers import (
    ACCEPT,
    error_of,
    ext_message,
    initialize,
    message_2025,
    result_of,
)

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}


async def test_lone_surrogate_task_id_on_sqlite_in_process_is_invalid_params(
    tmp_path: Path,
) -> None:
    """Issue 9, item 6: lone surrogate task id on sqlite in process is invalid
    params."""
    server = server_2025.TasksServer("t", store=SQLiteTaskStore(str(tmp_path / "t.db")))
    async with server:
        answer = await server.handle(message_2025("tasks/get", {"taskId": "\ud800x"}))
    assert error_of(answer)["code"] == -32602


# -- item 2: session flood -------------------------------------------------------------


def _asgi_client(app: Any, host: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(host, 1234))
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")


async def test_session_flood_does_not_evict_other_clients() -> None:
    """Issue 9, item 2: session flood does not evict other clients."""
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


async def test_finished_tasks_and_result_bytes_are_bounded_per_principal(
    tmp_path: Path,
) -> None:
    """Issue 9, item 3: finished tasks and result bytes are bounded per principal."""
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
        cached = [
            record for record, _ in store._cache.records.values() if record.is_terminal
        ]
    assert "too large" in big["message"]
    assert refused["code"] == server.limits.limit_error_code
    assert "finished tasks" in refused["message"]
    assert "task" in allowed_for_other
    assert cached == []  # finished results are read from the file, not kept in memory


async def test_stored_result_bytes_are_bounded_per_principal() -> None:
    """Issue 9, item 3: stored result bytes are bounded per principal."""
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
async def test_bad_elicitation_answer_fails_the_tool_clearly(
    answer: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 9, item 22: bad elicitation answer fails the tool clearly."""
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


async def test_good_elicitation_answer_reaches_the_tool() -> None:
    """Issue 9, item 22: good elicitation answer reaches the tool."""
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


async def test_ext_update_with_a_bad_answer_is_refused() -> None:
    """Issue 9, item 22: ext update with a bad answer is refused."""
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
        deadline = time.monotonic() + 10
        while task["status"] != "input_required":
            assert time.monotonic() < deadline, task
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
        deadline = time.monotonic() + 10
        while task["status"] != "completed":
            assert time.monotonic() < deadline, task
            await asyncio.sleep(0)
            task = result_of(
                await server.handle(ext_message("tasks/get", {"taskId": task_id}))
            )
    assert error_of(bad)["code"] == -32602 and key in error_of(bad)["message"]
    assert still["status"] == "input_required"
    assert json.loads(task["result"]["content"][0]["text"]) == good


@pytest.mark.parametrize("ttl", [float("inf"), float("nan"), True, -5, "7"])
async def test_in_process_ttl_is_checked_strictly(ttl: Any) -> None:
    """Issue 9, item 5: in process ttl is checked strictly."""
    server = server_2025.TasksServer("t", store=InMemoryTaskStore())

    @server.tool()
    async def quick(ctx: server_2025.ToolContext, arguments: dict[str, Any]) -> str:
        return "ok"

    async with server:
        answer = await server.handle(
            message_2025("tools/call", {"name": "quick", "task": {"ttl": ttl}})
        )
    assert error_of(answer)["code"] == -32602
