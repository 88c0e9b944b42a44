"""One tool result type over HTTP: the 2025-11-25 client, the extension's client and
the dual client (each revision) against the example servers (``examples/server.py``,
both revisions; ``examples/server_ext.py``) return a ``ToolResult`` whose ``raw`` is
the wire object the server sent, whose ``structured`` content validates into the
caller's ``result_type``, and a bad ``structuredContent`` is a client-side error naming
the field, whether the call ran as a task or not."""

from __future__ import annotations

import copy
import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel

from tests.support.fakes import run
from tests.support.procs import ServerHandle
from tests.support.servers import example_server

BROKEN = {"city": "Oslo", "broken": True}
EXPECTED = {
    "content": [{"type": "text", "text": "Oslo: 21.5 C"}],
    "structuredContent": {"city": "Oslo", "celsius": 21.5},
    "isError": False,
}


class Reading(BaseModel):
    city: str
    celsius: float


@pytest.fixture(scope="module")
def dual_url() -> Iterator[str]:
    with example_server("server", "--memory") as handle:
        yield handle.url


@pytest.fixture(scope="module")
def ext_server() -> Iterator[ServerHandle]:
    with example_server("server_ext", "--memory") as handle:
        yield handle


def _package(name: str) -> tuple[ModuleType, ModuleType, ModuleType]:
    return tuple(  # type: ignore[return-value]
        importlib.import_module(f"{name}.{module}")
        for module in ("client", "task_ids", "transport")
    )


def _recording(transport_module: ModuleType, url: str) -> Any:
    """The package's ``HttpTransport`` to ``url``, keeping the last result of each
    method as it came off the wire (in ``seen``)."""

    class Recording(transport_module.HttpTransport):  # type: ignore[misc,name-defined]
        seen: dict[str, dict[str, Any]]

        async def request(
            self, request_id: Any, method: str, params: dict[str, Any]
        ) -> dict[str, Any]:
            result: dict[str, Any] = await super().request(request_id, method, params)
            self.seen[method] = copy.deepcopy(result)
            return result

    transport = Recording(url)
    transport.seen = {}
    return transport


async def _check(
    client: Any, client_module: ModuleType, seen: dict[str, Any], *, tasks: bool
) -> None:
    """The checks every client passes, ``client`` open; ``seen``: its transport's
    last result of each method; ``tasks``: whether the calls run as tasks."""
    plain = await client.call_tool("weather", {"city": "Oslo"}, timeout=30)
    assert type(plain) is client_module.ToolResult
    wire = seen["tasks/result"] if tasks else seen["tools/call"]
    assert plain.raw == wire
    assert {k: v for k, v in wire.items() if k in EXPECTED} == EXPECTED
    assert plain.structured == EXPECTED["structuredContent"]
    assert plain.content == EXPECTED["content"]
    assert plain.text == "Oslo: 21.5 C" and plain.is_error is False
    typed = await client.call_tool(
        "weather", {"city": "Oslo"}, result_type=Reading, timeout=30
    )
    assert typed.structured == Reading(city="Oslo", celsius=21.5)
    assert {k: v for k, v in typed.raw.items() if k in EXPECTED} == EXPECTED
    with pytest.raises(client_module.InvalidStructuredContent) as caught:
        await client.call_tool("weather", BROKEN, result_type=Reading, timeout=30)
    assert caught.value.fields == ["celsius"]
    assert "'weather'" in str(caught.value) and "celsius" in str(caught.value)
    assert caught.value.raw["structuredContent"] == {"city": "Oslo", "celsius": "mild"}
    handle = await client.start_tool("weather", {"city": "Oslo"}, result_type=Reading)
    assert (await handle.result(timeout=30)).structured == typed.structured
    assert (handle.task_id is not None) == tasks
    if handle.task_id is not None:
        resumed = await client.resume(handle.task_id, result_type=Reading, timeout=30)
        assert type(resumed) is client_module.ToolResult
        assert resumed.structured == typed.structured


def test_the_2025_client_returns_a_tool_result(dual_url: str) -> None:
    client_module, task_ids, transport = _package("mcp_tasks_2025_11_25")
    models = importlib.import_module("mcp_tasks_2025_11_25.models")

    async def scenario() -> None:
        wire = _recording(transport, dual_url)
        async with client_module.TasksClient(
            wire, store=task_ids.MemoryTaskIdStore()
        ) as client:
            await _check(client, client_module, wire.seen, tasks=True)
            result = await client.call_tool("weather", {"city": "Oslo"}, timeout=30)
            assert isinstance(result.model, models.CallToolResult)
            assert result.model.structured_content == EXPECTED["structuredContent"]

    run(scenario())


@pytest.mark.parametrize("server", ["dual", "ext"])
def test_the_extension_client_returns_a_tool_result(
    server: str, dual_url: str, ext_server: ServerHandle
) -> None:
    client_module, task_ids, transport = _package("mcp_tasks_ext")
    url = dual_url if server == "dual" else ext_server.url

    async def scenario() -> None:
        wire = _recording(transport, url)
        async with client_module.TasksClient(
            wire, store=task_ids.MemoryTaskIdStore()
        ) as client:
            await _check(client, client_module, wire.seen, tasks=False)
            result = await client.call_tool("weather", {"city": "Oslo"}, timeout=30)
            assert result.model is None  # the extension's schema defines none

    run(scenario())


@pytest.mark.parametrize("revision", ["2025-11-25", "ext-2026-07-28"])
def test_the_dual_client_returns_the_same_tool_result(
    revision: str, dual_url: str
) -> None:
    client_module, task_ids, transport = _package("mcp_tasks")

    async def scenario() -> None:
        wire = _recording(transport, dual_url)
        async with client_module.TasksClient(
            wire, revision=revision, store=task_ids.MemoryTaskIdStore()
        ) as client:
            await _check(
                client, client_module, wire.seen, tasks=revision == "2025-11-25"
            )

    run(scenario())
