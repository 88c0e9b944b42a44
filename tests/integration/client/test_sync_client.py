"""The synchronous client (``TasksClient.sync``, ``SyncTasksClient``) against the dual
example server (``examples/server.py``) over HTTP: a plain call in every package, an
elicitation answered by a plain (and an async) handler while the loop keeps serving,
cancel from another thread, use from a thread while another event loop runs, a
callback that calls the client, no thread left after close, the ``ToolResult`` typed by
``result_type=`` in every package, and ``examples/sync_client.py``.
"""

from __future__ import annotations

import asyncio
import importlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from mcp_tasks.client import (
    InputContext,
    SyncTasksClient,
    TaskCancelled,
    TasksClient,
    TaskSnapshot,
)
from mcp_tasks.task_ids import MemoryTaskIdStore
from tests.support.procs import ServerHandle
from tests.support.servers import EXAMPLES, example_server

REVISIONS = ["2025-11-25", "ext-2026-07-28"]
DEADLINE = 30.0


@pytest.fixture(scope="module")
def server() -> Iterator[ServerHandle]:
    """``examples/server.py`` (both revisions on one port), tasks in memory."""
    with example_server("server", "--memory") as handle:
        yield handle


class Reading(BaseModel):
    """The example ``weather`` tool's structured content."""

    city: str
    celsius: float


def text_of(result: Any) -> str:
    """The text of a tool's result: a ``ToolResult``, as from the async client."""
    assert type(result).__name__ == "ToolResult", type(result)
    text: str = result.text
    return text


def threads_of(client: Any) -> list[str]:
    """The live threads of a sync client: its loop's and its workers'."""
    name = client.runner.name
    return [t.name for t in threading.enumerate() if t.name.startswith(name)]


@pytest.mark.parametrize(
    ("package", "revision"),
    [
        ("mcp_tasks", None),
        ("mcp_tasks", "2025-11-25"),
        ("mcp_tasks", "ext-2026-07-28"),
        ("mcp_tasks_2025_11_25", None),
        ("mcp_tasks_ext", None),
    ],
)
def test_plain_call_in_every_package(
    server: ServerHandle, package: str, revision: str | None
) -> None:
    """``TasksClient.sync(url)`` of each package calls a tool as the async client
    does; ``SyncTasksClient`` is importable from the package's ``client``."""
    client_module = importlib.import_module(f"{package}.client")
    options: dict[str, Any] = {"store": MemoryTaskIdStore()}
    if revision is not None:
        options["revision"] = revision
    with client_module.TasksClient.sync(server.url, **options) as client:
        assert isinstance(client, client_module.SyncTasksClient)
        result = client.call_tool("greet", {"name": "sync"})
        assert text_of(result) == "Hello, sync!"
        assert "greet" in {tool["name"] for tool in client.list_tools()}
        assert client.pending_tasks() == []
    assert not client.runner.thread.is_alive()
    assert threads_of(client) == []


@pytest.mark.parametrize(
    ("package", "revision"),
    [
        ("mcp_tasks", "2025-11-25"),
        ("mcp_tasks", "ext-2026-07-28"),
        ("mcp_tasks_2025_11_25", None),
        ("mcp_tasks_ext", None),
    ],
)
def test_result_type_gives_the_same_tool_result_as_the_async_client(
    server: ServerHandle, package: str, revision: str | None
) -> None:
    """``call_tool``, ``start_tool``, ``task`` and ``resume`` of the sync client take
    ``result_type`` and return the package's ``ToolResult`` with the validated
    ``structured`` content, as the async client does; a bad ``structuredContent`` is
    ``InvalidStructuredContent`` naming the field."""
    client_module = importlib.import_module(f"{package}.client")
    options: dict[str, Any] = {"store": MemoryTaskIdStore()}
    if revision is not None:
        options["revision"] = revision
    expected = Reading(city="Oslo", celsius=21.5)
    with client_module.TasksClient.sync(server.url, **options) as client:
        plain = client.call_tool("weather", {"city": "Oslo"}, timeout=DEADLINE)
        assert type(plain) is client_module.ToolResult
        assert plain.structured == {"city": "Oslo", "celsius": 21.5}
        assert plain.text == "Oslo: 21.5 C" and plain.is_error is False
        typed = client.call_tool(
            "weather", {"city": "Oslo"}, result_type=Reading, timeout=DEADLINE
        )
        assert type(typed) is client_module.ToolResult
        assert typed.structured == expected
        with pytest.raises(client_module.InvalidStructuredContent) as caught:
            client.call_tool(
                "weather",
                {"city": "Oslo", "broken": True},
                result_type=Reading,
                timeout=DEADLINE,
            )
        assert caught.value.fields == ["celsius"]
        handle = client.start_tool("weather", {"city": "Oslo"}, result_type=Reading)
        assert handle.result(timeout=DEADLINE).structured == expected
        if handle.task_id is not None:  # the 2025-11-25 server makes a task of it
            again = client.task(handle.task_id, result_type=Reading)
            assert again.result(timeout=DEADLINE).structured == expected
            resumed = client.resume(
                handle.task_id, result_type=Reading, timeout=DEADLINE
            )
            assert type(resumed) is client_module.ToolResult
            assert resumed.structured == expected


@pytest.mark.parametrize("kind", ["plain", "async"])
@pytest.mark.parametrize("revision", REVISIONS)
def test_elicitation_answered_by_a_sync_client_handler(
    server: ServerHandle, revision: str, kind: str
) -> None:
    """A plain handler runs in a worker thread and may block (as on ``input()``):
    while it waits, the same client serves another call; an async handler runs in
    the client's loop."""
    entered, release = threading.Event(), threading.Event()
    seen: list[tuple[str, str]] = []

    def plain(context: InputContext) -> dict[str, Any]:
        seen.append((threading.current_thread().name, context.params["message"]))
        entered.set()
        assert release.wait(DEADLINE)
        return {"action": "accept", "content": {"confirm": True}}

    async def native(context: InputContext) -> dict[str, Any]:
        seen.append((threading.current_thread().name, context.params["message"]))
        return {"action": "accept", "content": {"confirm": True}}

    client = SyncTasksClient(
        server.url,
        revision=revision,
        store=MemoryTaskIdStore(),
        elicitation_handler=plain if kind == "plain" else native,
    )
    with client:
        outcome: list[Any] = []
        caller = threading.Thread(
            target=lambda: outcome.append(
                client.call_tool(
                    "confirm_delete", {"filename": "a.txt"}, timeout=DEADLINE
                )
            )
        )
        caller.start()
        if kind == "plain":
            assert entered.wait(DEADLINE)
            # the handler blocks its worker thread, not the client's loop
            assert client.call_tool("greet", {"name": "meanwhile"}) is not None
            release.set()
        caller.join(DEADLINE)
        assert not caller.is_alive()
        assert [text_of(r) for r in outcome] == ["deleted a.txt"]
    thread, message = seen[0]
    assert message == "Delete a.txt?"
    suffix = "-handler" if kind == "plain" else ""
    assert thread.startswith(client.runner.name + suffix)
    assert (thread == client.runner.name) == (kind == "async")


@pytest.mark.parametrize("revision", REVISIONS)
def test_cancel_from_another_thread_ends_the_wait(
    server: ServerHandle, revision: str
) -> None:
    """``handle.cancel()`` from one thread ends ``handle.result()`` blocked in
    another with ``TaskCancelled``, raised as the async client raises it."""
    with TasksClient.sync(
        server.url, revision=revision, store=MemoryTaskIdStore()
    ) as client:
        handle = client.start_tool("slow_compute", {"seconds": 120})
        assert handle.task_id is not None
        errors: list[BaseException] = []

        def wait() -> None:
            try:
                handle.result(timeout=DEADLINE)
            except BaseException as error:
                errors.append(error)

        waiter = threading.Thread(target=wait)
        waiter.start()
        handle.cancel()
        waiter.join(DEADLINE)
        assert not waiter.is_alive()
        assert [type(e) for e in errors] == [TaskCancelled]
        assert client.pending_tasks() == []


def test_use_from_a_thread_while_another_loop_runs(server: ServerHandle) -> None:
    """A sync client called in a thread that runs an event loop (a notebook cell)
    works, and so does one called from a worker thread while that loop keeps
    running: the loop sees the call's first status before the call returns."""
    with TasksClient.sync(server.url, store=MemoryTaskIdStore()) as client:

        async def notebook() -> tuple[str, str]:
            direct = text_of(client.call_tool("greet", {"name": "cell"}))
            loop = asyncio.get_running_loop()
            first_status = asyncio.Event()

            def on_status(snapshot: TaskSnapshot) -> None:
                loop.call_soon_threadsafe(first_status.set)

            call = asyncio.ensure_future(
                asyncio.to_thread(
                    client.call_tool,
                    "slow_compute",
                    {"seconds": 1},
                    on_status=on_status,
                    timeout=DEADLINE,
                )
            )
            await asyncio.wait_for(first_status.wait(), DEADLINE)
            return direct, text_of(await asyncio.wait_for(call, DEADLINE))

        direct, threaded = asyncio.run(notebook())
    assert direct == "Hello, cell!"
    assert threaded == "computed  after 1.0s"


def test_a_callback_calling_the_client_gets_an_error_not_a_deadlock(
    server: ServerHandle,
) -> None:
    """A status callback runs in the client's loop thread: calling the sync client
    there raises ``RuntimeError`` at once, and the call goes on."""
    with TasksClient.sync(server.url, store=MemoryTaskIdStore()) as client:
        errors: list[str] = []

        def on_status(snapshot: TaskSnapshot) -> None:
            try:
                client.pending_tasks()
            except RuntimeError as error:
                errors.append(str(error))

        result = client.call_tool(
            "slow_compute", {"seconds": 0.2}, on_status=on_status, timeout=DEADLINE
        )
    assert text_of(result) == "computed  after 0.2s"
    assert errors and all("own event loop thread" in e for e in errors)


def test_the_example_runs(server: ServerHandle) -> None:
    """``examples/sync_client.py`` against the example server, answering its
    question on standard input."""
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "sync_client.py"), server.url],
        input="y\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "Hello, sync!" in lines
    assert "computed sum after 1.0s" in lines
    assert "Oslo: 21.5 degrees" in lines
    assert any(line.endswith("deleted notes.txt") for line in lines), lines
    assert lines[-1] == "cancelled"
    assert "Traceback" not in proc.stderr
