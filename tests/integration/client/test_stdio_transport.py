"""The stdio transport against a small JSON-RPC server subprocess (newline-delimited
JSON): ``tests/support/stdio_server.py``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_tasks_ext.client import TaskNotFound, TasksClient
from mcp_tasks_ext.task_ids import MemoryTaskIdStore
from mcp_tasks_ext.transport import StdioTransport
from tests.support.fakes import run

SERVER = Path(__file__).resolve().parents[2] / "support" / "stdio_server.py"


def test_stdio_transport_runs_a_task_to_completion() -> None:
    notes: list[tuple[str, dict[str, Any]]] = []

    async def scenario() -> None:
        transport = StdioTransport(sys.executable, [str(SERVER)])
        async with TasksClient(transport, store=MemoryTaskIdStore()) as client:
            original = client.notifications.on_notification  # observe the routing

            async def spy(method: str, params: dict[str, Any]) -> None:
                notes.append((method, params))
                await original(method, params)

            transport.set_handlers(spy, client.inputs.on_request)
            result = await client.call_tool("job", {})
            assert result.raw["content"][0]["text"] == "stdio ok"
            with pytest.raises(TaskNotFound):
                await client.get_task("missing")

    run(scenario())
    assert notes == [("notifications/message", {"level": "info", "data": "hi"})]
