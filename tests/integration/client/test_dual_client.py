"""The dual client (``mcp_tasks.client.TasksClient``, no revision given) against the
dual example server (``examples/server.py``) alone: progress in either revision, an
unreachable endpoint not remembered as 2025-11-25, and progress sent at once reaching a
client whose GET stream is slow.

``tests/interop/test_dual_client.py`` runs the client against every peer.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from mcp_tasks.client import (
    TasksClient,
    ToolResult,
    detected_revisions,
    forget_detected,
)
from mcp_tasks.task_ids import MemoryTaskIdStore
from mcp_tasks.transport import TransportError
from tests.support.example_cli import ROOT
from tests.support.fakes import run
from tests.support.procs import ServerHandle, free_port, run_server

EXTENSION = "ext-2026-07-28"


@contextmanager
def dual_server(port: int | None = None) -> Iterator[ServerHandle]:
    """``examples/server.py`` (both revisions on one port) with an in-memory store."""
    port = port if port is not None else free_port()
    cmd = [
        sys.executable,
        str(ROOT / "examples" / "server.py"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--memory",
    ]
    with run_server(cmd, port, url_path="/mcp", timeout=30) as handle:
        yield handle


def text_of(result: ToolResult) -> str:
    assert isinstance(result, ToolResult)
    return " ".join(str(block.get("text", "")) for block in result.content)


@pytest.mark.parametrize("revision", ["2025-11-25", EXTENSION])
def test_dual_call_reports_progress_in_either_revision(revision: str) -> None:
    """``on_progress`` reaches the revision's client in both revisions. The example
    server's ``long_report`` task reports each step as progress on the call's token in
    2025-11-25; the extension sends no progress for a task (its spec does not support
    ``notifications/progress`` for tasks), so there the callback is never called."""

    async def scenario(url: str) -> None:
        steps: list[tuple[float, float | None, str | None]] = []
        async with TasksClient(
            url, revision=revision, store=MemoryTaskIdStore()
        ) as client:
            result = await client.call_tool(
                "long_report",
                {"steps": 2},
                on_progress=lambda p, t, m: steps.append((p, t, m)),
                timeout=30,
            )
        assert "report ready after 2 steps" in text_of(result)
        expected = [(1.0, 2.0, "step 1/2"), (2.0, 2.0, "step 2/2")]
        assert steps == (expected if revision == "2025-11-25" else [])

    with dual_server() as handle:
        run(scenario(handle.url))


def test_dual_unreachable_endpoint_is_not_remembered_as_2025() -> None:
    """A connection that fails says nothing about the revision: the error is raised,
    nothing is remembered, and the server started later on that URL is detected."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"

    async def unreachable() -> None:
        client = TasksClient(url, store=MemoryTaskIdStore())
        try:
            with pytest.raises(TransportError):
                await client.open()
        finally:
            await client.aclose()

    async def reachable() -> str:
        async with TasksClient(url, store=MemoryTaskIdStore()) as client:
            result = await client.call_tool("greet", {"name": "Ada"}, timeout=30)
            assert text_of(result) == "Hello, Ada!"
            assert client.revision is not None
            return client.revision

    run(unreachable())
    assert url not in detected_revisions()
    with dual_server(port=port):
        assert run(reachable()) == EXTENSION
    assert detected_revisions()[url] == EXTENSION
    forget_detected(url)


def test_a_task_progress_sent_at_once_reaches_a_client_whose_get_stream_is_slow() -> (
    None
):
    """A 2025-11-25 server sends a task's progress on the session's GET stream and drops
    what finds no stream open. The client's ``initialize`` therefore waits for the
    server to answer the GET before the first call: the example server's
    ``long_report`` reports step 1 the moment its task starts, and it arrives even
    when the GET is held back (fault injection: each GET leaves 0.5 s late)."""
    from mcp_tasks_2025_11_25.client import TasksClient as Client2025
    from mcp_tasks_2025_11_25.task_ids import MemoryTaskIdStore as Store2025
    from mcp_tasks_2025_11_25.transport import HttpTransport as Http2025

    async def late_get(request: httpx.Request) -> None:
        if request.method == "GET":
            await asyncio.sleep(0.5)

    async def scenario(url: str) -> None:
        steps: list[tuple[float, float | None, str | None]] = []
        http = httpx.AsyncClient(
            timeout=httpx.Timeout(30.0, read=None),
            event_hooks={"request": [late_get]},
        )
        async with (
            http,
            Client2025(Http2025(url, http_client=http), store=Store2025()) as client,
        ):
            await client.call_tool(
                "long_report",
                {"steps": 2},
                on_progress=lambda p, t, m: steps.append((p, t, m)),
                timeout=30,
            )
        assert steps == [(1.0, 2.0, "step 1/2"), (2.0, 2.0, "step 2/2")]

    with dual_server() as handle:
        run(scenario(handle.url))
