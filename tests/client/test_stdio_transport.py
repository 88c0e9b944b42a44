"""The stdio transport against a small JSON-RPC server subprocess (newline-delimited
JSON)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_tasks_ext.client import TaskNotFound, TasksClient
from mcp_tasks_ext.task_ids import MemoryTaskIdStore
from mcp_tasks_ext.transport import StdioTransport

from .fakes import run

SERVER = r"""
import json, sys
polls = 0
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, params = message["method"], message["params"]
    task = {"taskId": "t1", "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "x", "ttlMs": None, "pollIntervalMs": 0}
    if method == "tools/call":
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}
        print(json.dumps(note), flush=True)
        result = {**task, "resultType": "task", "status": "working"}
    elif method == "tasks/get" and params["taskId"] == "t1":
        polls += 1
        done = {"content": [{"type": "text", "text": "stdio ok"}], "isError": False}
        result = {**task, "resultType": "complete", "status": "completed" if polls > 1 else "working", "lastUpdatedAt": str(polls), **({"result": done} if polls > 1 else {})}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": "Task not found"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def test_stdio_transport_runs_a_task_to_completion(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    notes: list[tuple[str, dict[str, Any]]] = []

    async def scenario() -> None:
        transport = StdioTransport(sys.executable, [str(script)])
        async with TasksClient(transport, store=MemoryTaskIdStore()) as client:
            original = (
                client._on_notification
            )  # noqa: SLF001 - observe the routing in this test only

            async def spy(method: str, params: dict[str, Any]) -> None:
                notes.append((method, params))
                await original(method, params)

            transport.set_handlers(spy, client._on_request)  # noqa: SLF001
            result = await client.call_tool("job", {})
            assert result["content"][0]["text"] == "stdio ok"
            with pytest.raises(TaskNotFound):
                await client.get_task("missing")

    run(scenario())
    assert notes == [("notifications/message", {"level": "info", "data": "hi"})]
