"""The typed ``brew`` tool of ``examples/example_tools.py`` over real HTTP, on the
example servers of each revision and on the server of both: ``tools/list`` shows the
input and output schemas made from its signature; a valid call returns
``structuredContent`` with its JSON as text, inline and as a task; a bad call is
``-32602`` naming the field, inline and asked as a task (no task is created).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.procs import ServerHandle
from tests.support.servers import (
    ACCEPT,
    EXAMPLES,
    error_of,
    example_server,
    ext_message,
    headers_for,
    initialize,
    message_2025,
    no_traceback,
    result_of,
)

pytestmark = pytest.mark.anyio

sys.path.insert(0, str(EXAMPLES))
from example_tools import Receipt  # noqa: E402

ORDER = {"size": "M", "sugars": 2, "milk": {"kind": "oat"}}
RECEIPT = {
    "size": "M",
    "sugars": 2,
    "milk": {"kind": "oat", "foamed": False},
    "price_cents": 350,
}
BAD = {"size": "M", "sugars": "two"}


@pytest.fixture(scope="module", params=["server_2025", "server_ext", "server"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, ServerHandle]]:
    """An example server (``server`` serves both revisions) with a memory store."""
    with example_server(request.param, "--memory") as handle:
        yield request.param, handle


async def rpc(
    client: httpx.AsyncClient,
    url: str,
    message: dict[str, Any],
    headers: dict[str, str],
) -> dict[str, Any]:
    """POST one request; its JSON-RPC answer (from a JSON body or an SSE stream)."""
    async with client.stream("POST", url, json=message, headers=headers) as response:
        assert response.status_code < 500
        if not response.headers["content-type"].startswith("text/event-stream"):
            answer: dict[str, Any] = json.loads(await response.aread())
            return answer
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                sent: dict[str, Any] = json.loads(line[6:])
                if sent.get("id") == message["id"]:
                    return sent
    raise AssertionError(f"no answer to {message['method']}")


class Caller:
    """Requests of one revision to one server: 2025-11-25 in a session, or the
    extension (stateless, its capabilities in each request's ``_meta``)."""

    def __init__(self, client: httpx.AsyncClient, url: str, revision: str) -> None:
        self.client = client
        self.url = url
        self.revision = revision
        self.headers: dict[str, str] = {}
        self.ids = 0

    async def open(self) -> None:
        """Open the 2025-11-25 session."""
        if self.revision == "2025":
            self.headers = await initialize(self.client, self.url)

    async def send(
        self, method: str, params: dict[str, Any], *, task: bool = False
    ) -> dict[str, Any]:
        """One request; ``task``: asked as a task (2025: ``params.task``; the
        extension: the extension declared)."""
        self.ids += 1
        if self.revision == "2025":
            if task:
                params = {**params, "task": {}}
            message = message_2025(method, params, request_id=self.ids)
            headers = self.headers
        else:
            message = ext_message(method, params, request_id=self.ids, declare=task)
            headers = headers_for(message)
        return await rpc(self.client, self.url, message, headers)

    async def task_count(self) -> int | None:
        """How many tasks ``tasks/list`` shows the caller (2025-11-25; None for the
        extension, which has no list)."""
        if self.revision != "2025":
            return None
        listed = result_of(await self.send("tasks/list", {}))
        assert "nextCursor" not in listed
        return len(listed["tasks"])

    async def task_result(self, created: dict[str, Any]) -> dict[str, Any]:
        """The result of the task a task-augmented call created."""
        if self.revision == "2025":
            task_id = created["task"]["taskId"]
            return result_of(await self.send("tasks/result", {"taskId": task_id}))
        assert created["resultType"] == "task", created
        deadline = time.monotonic() + 10
        while True:
            task = result_of(
                await self.send("tasks/get", {"taskId": created["taskId"]}, task=True)
            )
            if task["status"] not in ("working", "input_required"):
                assert task["status"] == "completed", task
                result: dict[str, Any] = task["result"]
                return result
            assert time.monotonic() < deadline, task
            await asyncio.sleep(0.05)


def revisions(name: str) -> list[str]:
    """The revisions the example server ``name`` serves."""
    return {"server_2025": ["2025"], "server_ext": ["ext"]}.get(name, ["2025", "ext"])


def assert_receipt(result: dict[str, Any]) -> None:
    """``result`` is brew's receipt as ``structuredContent`` and as JSON text."""
    assert result["structuredContent"] == RECEIPT
    assert result["isError"] is False
    [block] = result["content"]
    assert block["type"] == "text" and json.loads(block["text"]) == RECEIPT


async def test_typed_tool_over_http(served: tuple[str, ServerHandle]) -> None:
    """``brew`` lists its schemas, answers a valid call with ``structuredContent``
    (inline and as a task) and a bad one with ``-32602`` naming the field (inline and
    asked as a task, creating no task) in every revision the server serves."""
    name, handle = served
    async with httpx.AsyncClient(timeout=10, headers=ACCEPT) as client:
        for revision in revisions(name):
            caller = Caller(client, handle.url, revision)
            await caller.open()
            tools = result_of(await caller.send("tools/list", {}))["tools"]
            brew = next(t for t in tools if t["name"] == "brew")
            schema = brew["inputSchema"]
            assert schema["type"] == "object" and schema["required"] == ["size"]
            assert schema["properties"]["size"]["enum"] == ["S", "M", "L"]
            assert schema["properties"]["size"]["description"] == "The cup size."
            assert schema["properties"]["sugars"] == {
                "type": "integer",
                "minimum": 0,
                "maximum": 5,
                "default": 0,
                "title": "Sugars",
                "description": "Spoons of sugar.",
            }
            assert brew["outputSchema"] == Receipt.model_json_schema()
            assert brew["description"] == (
                "Brew a coffee and return its receipt (a typed tool)."
            )
            greet = next(t for t in tools if t["name"] == "greet")
            assert "outputSchema" not in greet
            call = {"name": "brew", "arguments": ORDER}
            assert_receipt(result_of(await caller.send("tools/call", call)))
            created = result_of(await caller.send("tools/call", call, task=True))
            assert_receipt(await caller.task_result(created))
            before = await caller.task_count()
            for task in (False, True):
                bad = {"name": "brew", "arguments": BAD}
                error = error_of(await caller.send("tools/call", bad, task=task))
                assert error["code"] == -32602, (revision, task, error)
                assert "sugars: Input should be a valid integer" in error["message"]
            assert await caller.task_count() == before
    no_traceback(handle)
