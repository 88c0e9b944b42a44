"""The extension client against ``fastmcp[tasks]==4.1.4`` over streamable HTTP on
127.0.0.1.

The fixture server in ``tests/peers/fastmcp_server.py`` adds ``TasksExtension()``; its
tools become tasks when the request declares ``io.modelcontextprotocol/tasks``. Skipped
when the peer is not installed (``.ci/peers.sh``), failed instead under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_tasks_ext.client import (
    InputContext,
    TaskCancelled,
    TasksClient,
    TaskSnapshot,
    ToolResult,
    status_name,
)
from mcp_tasks_ext.task_ids import MemoryTaskIdStore, SqliteTaskIdStore
from mcp_tasks_ext.transport import HttpTransport
from tests.support import peers
from tests.support.example_cli import run_cli, start_cli_and_wait_for
from tests.support.fakes import run
from tests.support.waiting import until

REVISION = "ext-2026-07-28"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with peers.serve("fastmcp") as server:
        yield server.url


def text_of(result: ToolResult) -> str:
    return " ".join(str(block.get("text")) for block in result.content)


def test_interop_completes_with_status_messages(url: str) -> None:
    async def scenario() -> None:
        store = MemoryTaskIdStore()
        seen: list[TaskSnapshot] = []
        async with TasksClient(HttpTransport(url), store=store) as client:
            assert TasksClient.server_supports_tasks(await client.discover())
            handle = await client.start_tool(
                "slow_compute", {"seconds": 0.8, "label": "alpha"}
            )
            assert handle.task_id is not None
            result = await handle.result(on_status=seen.append, timeout=30)
        assert text_of(result) == "alpha: done" and result.is_error is False
        assert [status_name(s.status) for s in seen][-1] == "completed"
        assert any(s.status_message == "alpha: halfway" for s in seen)
        assert await store.pending() == []

    run(scenario())


def test_interop_tool_error_completes_with_is_error(url: str) -> None:
    async def scenario() -> None:
        async with TasksClient(HttpTransport(url), store=MemoryTaskIdStore()) as client:
            result = await client.call_tool("failing_job", {}, timeout=30)
        assert result.is_error is True and "failing_job failed on purpose" in text_of(
            result
        )

    run(scenario())


def test_interop_input_request_answered_through_tasks_update(url: str) -> None:
    asked: list[InputContext] = []

    async def confirm(context: InputContext) -> dict[str, Any]:
        asked.append(context)
        return {"action": "accept", "content": {"confirm": True}}

    async def scenario() -> None:
        async with TasksClient(
            HttpTransport(url), store=MemoryTaskIdStore(), elicitation_handler=confirm
        ) as client:
            result = await client.call_tool(
                "confirm_delete", {"filename": "report.txt"}, timeout=30
            )
        assert text_of(result) == "deleted report.txt"
        assert len(asked) == 1 and asked[0].params["message"] == "Delete report.txt?"
        assert asked[0].key is not None and asked[0].task_id is not None

    run(scenario())


def test_interop_cancelled_by_handle_and_by_aborting_the_wait(url: str) -> None:
    async def scenario() -> None:
        async with TasksClient(HttpTransport(url), store=MemoryTaskIdStore()) as client:
            handle = await client.start_tool("long_job", {"seconds": 30})
            waiting = asyncio.Event()
            waiter = asyncio.ensure_future(
                handle.result(on_status=lambda _: waiting.set())
            )
            await asyncio.wait_for(waiting.wait(), 10)  # the wait loop is running
            await handle.cancel()
            with pytest.raises(TaskCancelled):
                await asyncio.wait_for(waiter, 10)

        store = MemoryTaskIdStore()
        async with TasksClient(
            HttpTransport(url), store=store, cancel_on_abort=True
        ) as client:
            handle = await client.start_tool("long_job", {"seconds": 30})
            assert handle.task_id is not None
            task_id = handle.task_id
            waiting = asyncio.Event()
            waiter = asyncio.ensure_future(
                handle.result(on_status=lambda _: waiting.set())
            )
            await asyncio.wait_for(waiting.wait(), 10)  # the wait loop is running
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            assert await store.pending() == []

            async def cancelled() -> bool:
                task = await client.get_task(task_id)
                return status_name(task.status) == "cancelled"

            await until(cancelled, interval=0.1, what="the task is cancelled")

    run(scenario())


def test_interop_killed_client_is_resumed_from_the_sqlite_store(
    url: str, tmp_path: Path
) -> None:
    store = tmp_path / "tasks.sqlite3"
    proc = start_cli_and_wait_for(
        url,
        "slow_compute",
        '{"seconds": 2, "label": "phoenix"}',
        revision=REVISION,
        store=store,
        marker="[working]",
        log=tmp_path / "first.log",
    )
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    pending = run(SqliteTaskIdStore(store).pending())
    assert len(pending) == 1 and pending[0].context == {
        "method": "tools/call",
        "name": "slow_compute",
    }
    resumed = run_cli(url, "--resume", revision=REVISION, store=store)
    assert resumed.returncode == 0, resumed.stderr
    assert "phoenix: done" in resumed.stdout and pending[0].task_id in resumed.stderr
    assert run(SqliteTaskIdStore(store).pending()) == []


def test_interop_push_requested_but_unsupported_falls_back_to_polling(url: str) -> None:
    """C.2.17: fastmcp 4.1.4 answers ``subscriptions/listen`` with -32601; the wait
    polls on."""

    async def scenario() -> None:
        async with TasksClient(
            HttpTransport(url), store=MemoryTaskIdStore(), subscribe=True
        ) as client:
            result = await asyncio.wait_for(
                client.call_tool("slow_compute", {"seconds": 0.4, "label": "sub"}), 20
            )
        assert text_of(result) == "sub: done"

    run(scenario())
