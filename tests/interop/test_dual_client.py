"""Issue 10, the client side: one ``mcp_tasks.client.TasksClient``, no revision given.

The same scenarios run against four real servers over streamable HTTP on 127.0.0.1:

========= ============================================== ==============
server    what                                           revision found
========= ============================================== ==============
mcp1      ``mcp==1.30.0`` (``tests/peers/mcp1_server.py``) 2025-11-25
ts-sdk    TypeScript SDK 1.32.2 (``npm_server.mjs``)       2025-11-25
fastmcp   ``fastmcp[tasks]==4.1.4`` (``fastmcp_server.py``) ext-2026-07-28
dual      ``examples/server.py`` (both revisions, one port) ext-2026-07-28
========= ============================================== ==============

Each scenario is written once: a task that completes, one that fails, one that needs
input, cancellation, and a terminal client (``examples/client.py`` without
``--revision``) killed with SIGKILL mid-wait and resumed by a new process. What differs
between the servers is data in :data:`SERVERS` only (tool names, how a failure shows).

Detection cost is counted on the wire (an ``httpx`` event hook on every POST): the first
client to an endpoint sends the revision's own handshake plus one ``server/discover``;
later clients to the same endpoint, and later calls, send none.

Peers that are not installed are skipped (``.ci/peers.sh``), failed instead under
``CI=true``; the dual example server needs nothing but this repository.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_tasks.client import (
    InputContext,
    TaskCancelled,
    TaskFailed,
    TasksClient,
    ToolResult,
    detected_revisions,
    forget_detected,
    status_name,
)
from mcp_tasks.task_ids import MemoryTaskIdStore, SqliteTaskIdStore
from mcp_tasks.transport import HttpTransport
from tests.support import peers
from tests.support.example_cli import EXAMPLE, ROOT
from tests.support.fakes import run
from tests.support.procs import ServerHandle, free_port, run_server
from tests.support.waiting import until, until_sync

EXTENSION = "ext-2026-07-28"


@dataclass(frozen=True)
class Server:
    """What the scenarios need to know about one server: data, never code paths."""

    name: str
    revision: str
    """The revision detection must find."""
    long_tool: str
    """A tool taking ``seconds`` that runs until then or until cancelled."""
    failure: str
    """How ``failing_job`` shows: ``TaskFailed`` raised, or an ``isError`` result."""
    failure_text: str
    """Text the failure carries."""
    url: str = ""


SERVERS = {
    "mcp1": Server(
        "mcp1", "2025-11-25", "long_job", "TaskFailed", "failing_job failed on purpose"
    ),
    "ts-sdk": Server(
        "ts-sdk", "2025-11-25", "long_job", "isError", "failing_job failed on purpose"
    ),
    "fastmcp": Server(
        "fastmcp", EXTENSION, "long_job", "isError", "failing_job failed on purpose"
    ),
    "dual": Server(
        "dual",
        EXTENSION,
        "slow_compute",
        "isError",
        "job failed: the input could not be processed",
    ),
}


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


@pytest.fixture(scope="module", params=sorted(SERVERS))
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    kind = SERVERS[request.param]
    with dual_server() if kind.name == "dual" else peers.serve(kind.name) as handle:
        yield dataclasses.replace(kind, url=handle.url)


def text_of(result: ToolResult | dict[str, Any]) -> str:
    """The text of a ``ToolResult`` (or of the wire object the terminal client
    prints)."""
    blocks = result.content if isinstance(result, ToolResult) else result["content"]
    return " ".join(str(block.get("text", "")) for block in blocks)


class PostLog:
    """The JSON-RPC method of every POST sent through its HTTP clients, in order
    (``(response)`` for a POST answering a server request)."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    def http(self) -> httpx.AsyncClient:
        async def on_request(request: httpx.Request) -> None:
            if request.method == "POST":
                body = json.loads(request.content or b"null")
                method = body.get("method") if isinstance(body, dict) else None
                self.methods.append(method if isinstance(method, str) else "(response)")

        return httpx.AsyncClient(
            timeout=httpx.Timeout(30.0, read=None),
            event_hooks={"request": [on_request]},
        )

    def before_first_call(self) -> list[str]:
        """What was POSTed before the first ``tools/call``."""
        assert "tools/call" in self.methods, self.methods
        return self.methods[: self.methods.index("tools/call")]


# -- the scenarios, the same for every server ----------------------------------------


def test_dual_task_completes(server: Server) -> None:
    async def scenario() -> None:
        store = MemoryTaskIdStore()
        statuses: list[str] = []
        async with TasksClient(server.url, store=store) as client:
            result = await client.call_tool(
                "slow_compute",
                {"seconds": 0.5, "label": "alpha"},
                on_status=lambda task: statuses.append(status_name(task.status)),
                timeout=30,
            )
        assert "alpha" in text_of(result) and result.is_error is False
        assert statuses[-1] == "completed"
        assert await store.pending() == []

    run(scenario())


def test_dual_task_fails(server: Server) -> None:
    async def scenario() -> None:
        async with TasksClient(server.url, store=MemoryTaskIdStore()) as client:
            handle = await client.start_tool("failing_job", {})
            assert handle.task_id is not None
            try:
                result = await handle.result(timeout=30)
                outcome = "isError" if result.is_error else "success"
                text = text_of(result)
            except TaskFailed as error:
                outcome, text = "TaskFailed", error.message
                assert error.task_id == handle.task_id
        assert (outcome, server.failure_text in text) == (server.failure, True), text

    run(scenario())


def test_dual_task_needs_input(server: Server) -> None:
    asked: list[InputContext] = []

    async def answer(context: InputContext) -> dict[str, Any]:
        asked.append(context)
        if "keep.txt" in context.params["message"]:
            return {"action": "decline"}
        return {"action": "accept", "content": {"confirm": True}}

    async def scenario() -> None:
        async with TasksClient(
            server.url, store=MemoryTaskIdStore(), elicitation_handler=answer
        ) as client:
            deleted = await client.call_tool(
                "confirm_delete", {"filename": "report.txt"}, timeout=30
            )
            kept = await client.call_tool(
                "confirm_delete", {"filename": "keep.txt"}, timeout=30
            )
        assert "deleted report.txt" in text_of(deleted)
        assert "kept keep.txt" in text_of(kept)
        assert [context.params["message"] for context in asked] == [
            "Delete report.txt?",
            "Delete keep.txt?",
        ]
        assert all(context.task_id is not None for context in asked)

    run(scenario())


def test_dual_task_cancelled_by_handle_and_by_id(server: Server) -> None:
    async def scenario() -> None:
        store = MemoryTaskIdStore()
        async with TasksClient(
            server.url, store=store, default_poll_interval=0.1
        ) as client:
            by_handle = await client.start_tool(server.long_tool, {"seconds": 30})
            by_id = await client.start_tool(server.long_tool, {"seconds": 30})
            task_ids = [by_handle.task_id, by_id.task_id]
            assert None not in task_ids
            for task_id in task_ids:
                assert task_id is not None
                assert status_name((await client.get_task(task_id)).status) in (
                    "working",
                    "submitted",
                )
            await by_handle.cancel()
            assert by_id.task_id is not None
            await client.cancel_task(by_id.task_id)
            for task_id in task_ids:
                assert task_id is not None

                async def cancelled(task_id: str = task_id) -> bool:
                    task = await client.get_task(task_id)
                    return status_name(task.status) == "cancelled"

                await until(cancelled, interval=0.1, what=f"{task_id} is cancelled")
            with pytest.raises(TaskCancelled):
                await by_handle.result(timeout=10)
            with pytest.raises(TaskCancelled):
                await client.resume(by_id.task_id, timeout=10)
        assert await store.pending() == []

    run(scenario())


def cli(url: str, *args: str, store: Path) -> list[str]:
    """``examples/client.py`` without ``--revision``: it finds the revision out."""
    return [sys.executable, str(EXAMPLE), url, *args, "--store", str(store)]


def test_dual_cli_killed_with_sigkill_is_resumed_by_a_new_process(
    server: Server, tmp_path: Path
) -> None:
    store = tmp_path / "tasks.sqlite3"
    log = tmp_path / "first.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with log.open("w") as stderr:
        first = subprocess.Popen(
            cli(
                server.url,
                "slow_compute",
                '{"seconds": 2, "label": "phoenix"}',
                store=store,
            ),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    try:
        # "task ID created" is printed once the ID is in the store.
        until_sync(
            lambda: " created" in log.read_text() or first.poll() is not None,
            timeout=30,
            what="the client stored its task",
        )
        assert first.poll() is None, log.read_text()
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    assert first.returncode == -signal.SIGKILL
    pending = run(SqliteTaskIdStore(store).pending())
    assert len(pending) == 1 and pending[0].context["name"] == "slow_compute"
    assert f"task {pending[0].task_id} created" in log.read_text()

    resumed = subprocess.run(
        cli(server.url, "--resume", store=store),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"task {pending[0].task_id} resumed" in resumed.stderr
    assert "phoenix" in text_of(json.loads(resumed.stdout))
    assert run(SqliteTaskIdStore(store).pending()) == []


# -- what detection costs ------------------------------------------------------------


def test_dual_detection_costs_one_discover_per_endpoint_and_none_after(
    server: Server,
) -> None:
    """The first client sends the revision's handshake plus one ``server/discover``
    (compared with a client pinned to that revision); later calls and a second client
    to the same URL send no ``server/discover``."""

    async def session(log: PostLog, calls: int, **options: Any) -> str | None:
        async with (
            log.http() as http,
            TasksClient(
                HttpTransport(server.url, http_client=http),
                store=MemoryTaskIdStore(),
                **options,
            ) as client,
        ):
            for call in range(calls):
                result = await client.call_tool(
                    "slow_compute", {"seconds": 0.1, "label": f"c{call}"}, timeout=30
                )
                assert f"c{call}" in text_of(result)
            return client.revision

    async def scenario() -> None:
        forget_detected(server.url)
        first, second, pinned = PostLog(), PostLog(), PostLog()
        assert await session(first, calls=2) == server.revision
        assert detected_revisions()[server.url] == server.revision
        assert await session(second, calls=1) == server.revision
        assert await session(pinned, calls=1, revision=server.revision)
        handshake = pinned.before_first_call()
        assert "server/discover" not in pinned.methods
        assert first.before_first_call() == ["server/discover", *handshake]
        assert first.methods.count("server/discover") == 1, first.methods
        assert second.before_first_call() == handshake
        assert "server/discover" not in second.methods, second.methods

    run(scenario())


def test_dual_concurrent_first_clients_detect_once(server: Server) -> None:
    """Clients opened at the same time to a new endpoint share one
    ``server/discover``."""

    async def scenario() -> None:
        forget_detected(server.url)
        log = PostLog()

        async def one(label: str) -> tuple[str | None, str]:
            async with (
                log.http() as http,
                TasksClient(
                    HttpTransport(server.url, http_client=http),
                    store=MemoryTaskIdStore(),
                ) as client,
            ):
                result = await client.call_tool(
                    "slow_compute", {"seconds": 0.1, "label": label}, timeout=30
                )
                return client.revision, text_of(result)

        outcomes = await asyncio.gather(*(one(f"n{i}") for i in range(3)))
        assert [revision for revision, _ in outcomes] == [server.revision] * 3
        assert all(f"n{i}" in text for i, (_, text) in enumerate(outcomes))
        assert log.methods.count("server/discover") == 1, log.methods

    run(scenario())
