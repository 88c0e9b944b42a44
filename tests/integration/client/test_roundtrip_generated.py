"""Generated client against the generated servers (``examples/server_*.py``) over HTTP.

Both ends come from this project, so these tests run without any external peer. They
reach paths the SDK peers cannot show: a task that ends ``failed`` with a JSON-RPC error
on the extension, and an input-required (MRTR) round before the task is created.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes import run
from tests.support.procs import free_port, run_server

ROOT = Path(__file__).resolve().parents[3]


def serve(script: str) -> Iterator[str]:
    port = free_port()
    command = [
        sys.executable,
        str(ROOT / "examples" / script),
        "--port",
        str(port),
        "--memory",
    ]
    with run_server(command, port, url_path="/mcp") as handle:
        yield handle.url


@pytest.fixture(scope="module")
def ext_url() -> Iterator[str]:
    yield from serve("server_ext.py")


@pytest.fixture(scope="module")
def legacy_url() -> Iterator[str]:
    yield from serve("server_2025.py")


async def answer(context: Any) -> dict[str, Any]:
    properties = context.params["requestedSchema"].get("properties", {})
    content = {
        name: True if spec.get("type") == "boolean" else "Luca"
        for name, spec in properties.items()
    }
    return {"action": "accept", "content": content}


def test_roundtrip_extension_outcomes(ext_url: str) -> None:
    from mcp_tasks_ext.client import TaskFailed, TasksClient, status_name
    from mcp_tasks_ext.task_ids import MemoryTaskIdStore
    from mcp_tasks_ext.transport import HttpTransport

    async def scenario() -> None:
        messages: list[str | None] = []
        async with TasksClient(
            HttpTransport(ext_url),
            store=MemoryTaskIdStore(),
            elicitation_handler=answer,
        ) as client:
            assert TasksClient.server_supports_tasks(await client.discover())
            report = await client.call_tool(
                "long_report",
                {"steps": 2},
                on_status=lambda t: messages.append(t.status_message),
                timeout=30,
            )
            assert "report ready after 2 steps" in json.dumps(report.raw)
            assert "step 2/2" in messages
            with pytest.raises(TaskFailed) as failed:
                await client.call_tool("protocol_error_job", {}, timeout=30)
            assert (failed.value.code, failed.value.message) == (
                -32603,
                "internal failure",
            )
            deleted = await client.call_tool(
                "confirm_delete", {"filename": "notes.txt"}, timeout=30
            )
            assert "deleted notes.txt" in json.dumps(deleted.raw)
            both = await client.call_tool("multi_input", {}, timeout=30)
            assert json.dumps(both.raw).count("Luca") == 2
            greeted = await client.call_tool("test_tool_with_task", {}, timeout=30)
            assert "Hello Luca!" in json.dumps(greeted.raw)
            handle = await client.start_tool(
                "slow_compute", {"seconds": 30, "label": "slow"}
            )
            assert handle.task_id is not None
            await handle.cancel()
            assert status_name((await client.get_task(handle.task_id)).status) in (
                "cancelled",
                "working",
            )

    run(scenario())


def test_roundtrip_2025_outcomes(legacy_url: str) -> None:
    from mcp_tasks_2025_11_25.client import TaskFailed, TasksClient, status_name
    from mcp_tasks_2025_11_25.task_ids import MemoryTaskIdStore
    from mcp_tasks_2025_11_25.transport import HttpTransport

    async def scenario() -> None:
        async with TasksClient(
            HttpTransport(legacy_url),
            store=MemoryTaskIdStore(),
            elicitation_handler=answer,
        ) as client:
            assert client.supports_task_tools()
            done = await client.call_tool(
                "slow_compute", {"seconds": 0.3, "label": "x"}, timeout=30
            )
            assert "computed x" in json.dumps(done.raw)
            try:
                failed = await client.call_tool("failing_job", {}, timeout=30)
                assert failed.is_error is True
            except TaskFailed as error:
                assert error.code < 0
            deleted = await client.call_tool(
                "confirm_delete", {"filename": "notes.txt"}, timeout=30
            )
            assert "deleted notes.txt" in json.dumps(deleted.raw)
            handle = await client.start_tool(
                "slow_compute", {"seconds": 30, "label": "slow"}
            )
            cancelled = await handle.cancel()
            assert status_name(cancelled.status) == "cancelled"

    run(scenario())
