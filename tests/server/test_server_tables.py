"""The server's mechanisms follow the generated ``protocol`` tables, not the revision.

A golden package's tables are changed the way a schema edit (or the revision profile)
would change them on regeneration, on a subclass of its ``TasksServer``: a 2025-11-25
schema gaining the subscription ``_meta`` key serves ``subscriptions/listen`` with its
own notify method; an extension whose client asks for a task (``task_request_field``)
runs a call as a task only when asked, lists ``execution.taskSupport`` and declares the
``create`` capability.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import pytest

from mcp_tasks_2025_11_25 import protocol_2025
from mcp_tasks_2025_11_25.server import RequestInfo, ToolContext
from mcp_tasks_2025_11_25.server import TasksServer as Server2025
from mcp_tasks_2025_11_25.stores import InMemoryTaskStore
from mcp_tasks_ext import protocol_ext
from mcp_tasks_ext.server import TasksServer as ServerExt
from mcp_tasks_ext.stores import InMemoryTaskStore as ExtMemoryStore

from .conftest import error_of, ext_message, message_2025, result_of

pytestmark = pytest.mark.anyio

SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


class Subscribing2025(Server2025):
    """2025-11-25 regenerated from a schema with a subscription ``_meta`` key."""

    tables = dataclasses.replace(
        protocol_2025.TABLES,
        meta_keys={**protocol_2025.TABLES.meta_keys, "SUBSCRIPTION_ID": SUBSCRIPTION},
    )


class AskingExt(ServerExt):
    """The extension with a client that asks for a task in ``params.task``."""

    tables = dataclasses.replace(
        protocol_ext.TABLES,
        task_request_field="task",
        server_capabilities={"create": ("tasks", "requests", "tools", "call")},
    )


async def test_a_subscription_meta_key_gets_subscriptions_listen() -> None:
    release = asyncio.Event()
    plain = Server2025("t", store=InMemoryTaskStore())
    async with plain:
        session = RequestInfo(session_id=plain.open_session().id)
        listen = message_2025("subscriptions/listen", {"notifications": {}})
        assert error_of(await plain.handle(listen, session))["code"] == -32601

    server = Subscribing2025("t", store=InMemoryTaskStore())

    @server.tool()
    async def gated(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await release.wait()
        return "released"

    sent: list[dict[str, Any]] = []

    async def emit(message: dict[str, Any]) -> None:
        sent.append(message)

    async with server:
        session = RequestInfo(session_id=server.open_session().id)
        call = message_2025("tools/call", {"name": "gated", "task": {}})
        task_id = result_of(await server.handle(call, session))["task"]["taskId"]
        listen = message_2025(
            "subscriptions/listen",
            {"notifications": {"taskIds": [task_id]}},
            request_id="listen-1",
        )
        stream = asyncio.create_task(server.handle(listen, session, emit))
        deadline = time.monotonic() + 5
        while len(sent) < 2:  # acknowledged, and the current state sent
            assert time.monotonic() < deadline, sent
            await asyncio.sleep(0.005)
        release.set()
        while sent[-1]["params"].get("status") != "completed":
            assert time.monotonic() < deadline, sent
            await asyncio.sleep(0.005)
    final = result_of(await stream)
    assert sent[0]["params"]["notifications"] == {"taskIds": [task_id]}
    assert {m["method"] for m in sent[1:]} == {"notifications/tasks/status"}
    assert all(m["params"]["_meta"] == {SUBSCRIPTION: "listen-1"} for m in sent)
    assert final == {"_meta": {SUBSCRIPTION: "listen-1"}}  # no resultType in 2025


async def test_a_client_asking_for_tasks_decides_which_calls_are_tasks() -> None:
    server = AskingExt("t", store=ExtMemoryStore())

    @server.tool()
    async def quick(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        return "done"

    async with server:
        listed = result_of(await server.handle(ext_message("tools/list")))
        plain = await server.handle(ext_message("tools/call", {"name": "quick"}))
        asked = await server.handle(
            ext_message("tools/call", {"name": "quick", "task": {"ttl": 60_000}})
        )
        discovered = result_of(await server.handle(ext_message("server/discover")))
    assert listed["tools"][0]["execution"] == {"taskSupport": "optional"}
    assert result_of(plain)["content"] == [{"type": "text", "text": "done"}]
    assert result_of(asked)["ttlMs"] == 60_000
    assert discovered["capabilities"]["tasks"] == {"requests": {"tools": {"call": {}}}}
