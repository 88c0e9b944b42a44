"""The 2025-11-25 client against real servers over streamable HTTP on 127.0.0.1.

Peers: PyPI ``mcp==1.30.0`` (``server.experimental.enable_tasks()``) and the TypeScript
SDK ``@modelcontextprotocol/sdk@1.32.2`` (``registerToolTask`` + ``InMemoryTaskStore``),
both running the fixture servers in ``tests/peers``. Skipped when a peer is not
installed (``.ci/peers.sh``), failed instead under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_tasks_2025_11_25.client import (
    InputContext,
    TaskCancelled,
    TaskFailed,
    TasksClient,
    status_name,
)
from mcp_tasks_2025_11_25.models import Task
from mcp_tasks_2025_11_25.task_ids import MemoryTaskIdStore, SqliteTaskIdStore
from mcp_tasks_2025_11_25.transport import HttpTransport
from tests.support import peers
from tests.support.example_cli import run_cli, start_cli_and_wait_for
from tests.support.fakes import StuckClock, run

REVISION = "2025-11-25"


@pytest.fixture(scope="module", params=["mcp1", "ts-sdk"])
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    with peers.serve(request.param) as server:
        yield server.url


def text_of(result: Any) -> str:
    return " ".join(
        block.root.text if hasattr(block, "root") else block.text
        for block in result.content
    )


def test_interop_completes_with_status_updates(url: str) -> None:
    async def scenario() -> None:
        store = MemoryTaskIdStore()
        seen: list[Task] = []
        async with TasksClient(HttpTransport(url), store=store) as client:
            assert client.supports_task_tools() and client.can_cancel()
            result = await client.call_tool(
                "slow_compute",
                {"seconds": 0.6, "label": "alpha"},
                on_status=seen.append,
                timeout=30,
            )
        assert "alpha" in json.dumps(result.raw) and result.is_error is not True
        assert (
            status_name(seen[0].status) == "working"
            and status_name(seen[-1].status) == "completed"
        )
        assert await store.pending() == []

    run(scenario())


def test_interop_failed_task_returns_the_error_result(url: str) -> None:
    async def scenario() -> None:
        seen: list[Task] = []
        async with TasksClient(HttpTransport(url), store=MemoryTaskIdStore()) as client:
            handle = await client.start_tool("failing_job", {})
            try:
                # The TypeScript SDK stores an isError tool result for the failed task
                # ...
                result = await handle.result(on_status=seen.append, timeout=30)
                assert result.is_error is True
            except TaskFailed as error:
                # ... mcp 1.30 stores no result at all: the client raises with the
                # statusMessage.
                assert (
                    "failing_job failed on purpose" in error.message
                    and error.task_id == handle.task_id
                )
        assert handle.task is not None and status_name(handle.task.status) == "failed"

    run(scenario())


def test_interop_elicitation_answered_during_tasks_result(url: str) -> None:
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
        assert "deleted report.txt" in json.dumps(result.raw)
        assert len(asked) == 1 and "report.txt" in asked[0].params["message"]
        assert asked[0].task_id is not None

    run(scenario())


def test_interop_cancelled_by_handle_and_by_aborting_the_wait(url: str) -> None:
    async def scenario() -> None:
        async with TasksClient(
            HttpTransport(url), store=MemoryTaskIdStore(), default_poll_interval=0.1
        ) as client:
            handle = await client.start_tool("long_job", {"seconds": 30})
            assert handle.task_id is not None
            cancelled = await handle.cancel()
            assert status_name(cancelled.status) == "cancelled"
            with pytest.raises(TaskCancelled):
                await handle.result(timeout=10)

        store = MemoryTaskIdStore()
        async with TasksClient(
            HttpTransport(url), store=store, cancel_on_abort=True
        ) as client:
            handle = await client.start_tool("long_job", {"seconds": 30})
            assert handle.task_id is not None
            waiting = asyncio.Event()
            waiter = asyncio.ensure_future(
                handle.result(on_status=lambda _: waiting.set())
            )
            await asyncio.wait_for(waiting.wait(), 10)  # the wait loop is running
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            assert (
                status_name((await client.get_task(handle.task_id)).status)
                == "cancelled"
            )
            assert await store.pending() == []

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
    assert len(pending) == 1 and pending[0].context["name"] == "slow_compute"
    resumed = run_cli(url, "--resume", revision=REVISION, store=store)
    assert resumed.returncode == 0, resumed.stderr
    assert "phoenix" in resumed.stdout and pending[0].task_id in resumed.stderr
    assert run(SqliteTaskIdStore(store).pending()) == []


class CountingHttp(HttpTransport):
    """The real HTTP transport, remembering which methods were sent and setting
    ``get_stream_open`` once the server accepted the session's GET event stream."""

    def __init__(self, url: str) -> None:
        self.get_stream_open = asyncio.Event()

        async def on_response(response: httpx.Response) -> None:
            if response.request.method == "GET" and response.status_code == 200:
                self.get_stream_open.set()

        self.http = httpx.AsyncClient(
            timeout=httpx.Timeout(30.0, read=None),
            event_hooks={"response": [on_response]},
        )
        super().__init__(url, http_client=self.http)
        self.methods: list[str] = []

    async def request(
        self, request_id: Any, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        self.methods.append(method)
        return await super().request(request_id, method, params)


def test_interop_status_notifications_end_the_wait_without_polling(url: str) -> None:
    """C.1.15 on a real server: with a sleep that never ends, only the server's
    ``notifications/tasks/status`` (on the session's GET stream) can move the wait on.
    """

    async def scenario() -> None:
        stuck = StuckClock()
        transport = CountingHttp(url)
        async with TasksClient(
            transport, store=MemoryTaskIdStore(), clock=stuck, sleep=stuck.sleep
        ) as client:
            await asyncio.wait_for(transport.get_stream_open.wait(), 10)
            result = await asyncio.wait_for(
                client.call_tool("slow_compute", {"seconds": 1.5, "label": "pushed"}),
                20,
            )
        await transport.http.aclose()
        assert "pushed" in json.dumps(result.raw)
        assert "tasks/get" not in transport.methods

    run(scenario())
