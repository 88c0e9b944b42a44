"""How soon a client learns that a task finished: the poll interval grows with the
task's age, the ``tasks/get`` of a young task is held until the task changes, and
(extension) a call whose tool finishes at once can be answered inline.

Spec: S25 "The receiver MAY suggest pollInterval (ms). Requestors SHOULD honour it";
X26 ``pollIntervalMs`` "MAY change over the task's life"; XD "A server may return
CreateTaskResult instead of the normal result ... The decision is entirely the
server's, made per request", while in 2025-11-25 a receiver that accepts a
task-augmented request MUST answer with ``CreateTaskResult``. Nothing bounds how long
a receiver takes to answer ``tasks/get`` (2025-11-25's ``tasks/result`` itself blocks
until the task is terminal), and clients count the interval "from the latest response".
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import mcp_tasks_2025_11_25.server as server_2025
from mcp_tasks_ext.server import (
    JsonRpcError,
    Limits,
    RequestInfo,
    TasksServer,
    Tool,
    ToolContext,
)
from mcp_tasks_ext.stores import InMemoryTaskStore, TaskRecord
from tests.support.procs import free_port, run_server
from tests.support.servers import error_of, ext_message, result_of
from tests.support.waiting import until
from tests.unit.server.test_2025_server import running as running_2025

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]

SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}


def test_the_hint_is_twice_the_task_age_between_a_twentieth_and_the_interval() -> None:
    limits = Limits(poll_interval_ms=1_000)
    hints = [limits.poll_interval_at(age, 1_000) for age in (0, 10, 25, 100, 499)]
    assert hints == [50, 50, 50, 200, 998]
    assert limits.poll_interval_at(500, 1_000) == 1_000
    assert limits.poll_interval_at(86_400_000, 1_000) == 1_000
    assert limits.poll_interval_at(-5_000, 1_000) == 50  # a clock behind: the first
    assert limits.poll_interval_at(10, None) is None  # no hint stays no hint
    # the longest is the one stored with the task (another replica's setting)
    assert limits.poll_interval_at(1, 200) == 10
    doubles = Limits(first_poll_interval_ms=100, poll_interval_growth=1)
    assert [doubles.poll_interval_at(age, 1_000) for age in (0, 400, 3_000)] == [
        100,
        400,
        1_000,
    ]
    fixed = Limits(poll_interval_ms=200, first_poll_interval_ms=200)
    assert {fixed.poll_interval_at(age, 200) for age in (0, 10, 500)} == {200}


@pytest.mark.parametrize(
    "settings",
    [
        {"poll_interval_growth": 0},
        {"poll_interval_growth": float("inf")},
        {"first_poll_interval_ms": 2_000},
        {"first_poll_interval_ms": -1},
        {"poll_interval_ms": None, "first_poll_interval_ms": 10},
        {"answer_within_ms": -1},
        {"max_poll_hold_ms": -1},
    ],
)
def test_limits_refuse_a_curve_that_makes_no_sense(settings: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Limits(**settings)


async def aged(server: Any, principal: str | None, age_s: float) -> str:
    """A live task of ``principal`` created ``age_s`` seconds ago, put in the store."""
    now = time.time()
    record = await server.store.create(
        TaskRecord(
            task_id=f"aged{age_s}".replace(".", "-"),
            owner=principal,
            tool="gated",
            status="working",
            created_at=now - age_s,
            updated_at=now - age_s,
            ttl_ms=3_600_000,
            poll_interval_ms=server.limits.poll_interval_ms,
        )
    )
    return record.task_id


async def test_extension_hints_grow_with_the_task_age() -> None:
    limits = Limits(poll_interval_ms=1_000, max_poll_hold_ms=0)  # the curve alone
    server = TasksServer("hints", store=InMemoryTaskStore(), limits=limits)
    release = asyncio.Event()

    @server.tool()
    async def gated(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await release.wait()
        return "released"

    async with server:
        created = result_of(
            await server.handle(
                ext_message("tools/call", {"name": "gated", "arguments": {}})
            )
        )
        assert created["pollIntervalMs"] == 50
        hints = {}
        for age in (0.15, 0.3, 5.0):
            before = time.time()  # the task's age is counted from about here
            task_id = await aged(server, None, age)
            got = result_of(
                await server.handle(ext_message("tasks/get", {"taskId": task_id}))
            )
            elapsed_ms = (time.time() - before) * 1000
            hints[age] = got["pollIntervalMs"]
            if age < 1:  # twice its age, from its creation to after the call
                low, high = age * 2_000, (age * 1000 + elapsed_ms) * 2 + 1
                assert low <= got["pollIntervalMs"] <= high
        assert hints[5.0] == 1_000
        release.set()
        deadline = time.monotonic() + 10
        while True:  # a finished task carries the longest hint
            done = result_of(
                await server.handle(
                    ext_message("tasks/get", {"taskId": created["taskId"]})
                )
            )
            if done["status"] == "completed":
                break
            assert time.monotonic() < deadline, done
            await asyncio.sleep(0.01)
        assert done["pollIntervalMs"] == 1_000


async def test_2025_create_result_has_the_first_hint_and_hints_grow_with_age() -> None:
    limits = server_2025.Limits(
        poll_interval_ms=4_000, sweep_interval_s=3600, max_poll_hold_ms=0
    )
    async with running_2025(limits=limits) as h:
        created = await h.start_task("gated")
        assert created["pollInterval"] == 200
        young = await aged(h.server, None, 0.1)  # a stall under 1.9 s keeps it young
        assert 200 <= (await h.get(young))["pollInterval"] < 4_000
        old = await aged(h.server, None, 30.0)
        assert (await h.get(old))["pollInterval"] == 4_000


@asynccontextmanager
async def gated_server(
    **limits: Any,
) -> AsyncIterator[tuple[TasksServer, asyncio.Event]]:
    """An extension server with a tool that runs until the test sets its gate."""
    server = TasksServer(
        "held",
        store=InMemoryTaskStore(),
        limits=Limits(sweep_interval_s=3600, **limits),
    )
    gate = asyncio.Event()

    @server.tool()
    async def gated(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await gate.wait()
        return "released"

    async with server:
        yield server, gate
    gate.set()


def get(server: TasksServer, task_id: str, principal: str = "alice") -> Any:
    """A ``tasks/get`` of ``task_id`` as ``principal``, answered in an asyncio task."""
    message = ext_message("tasks/get", {"taskId": task_id})
    return asyncio.ensure_future(
        server.handle(message, RequestInfo(principal=principal))
    )


async def test_the_get_of_a_young_task_is_answered_when_the_task_changes() -> None:
    """A minute-long interval: the first ``tasks/get`` waits for the tool and answers
    its result at once, instead of ``working`` (the client would then wait for the
    next hint)."""
    async with gated_server(poll_interval_ms=60_000) as (server, gate):
        created = result_of(await call(server, "gated"))
        waiting = get(server, created["taskId"])
        await until(lambda: bool(server.roles.holds), timeout=10, what="the get held")
        assert not waiting.done()
        gate.set()
        got = result_of(await asyncio.wait_for(waiting, 10))
        assert got["status"] == "completed"
        assert got["result"]["content"] == [{"type": "text", "text": "released"}]
        assert got["pollIntervalMs"] == 60_000
        assert server.roles.holds == {} and server.roles.held == {}


async def test_a_held_get_answers_once_the_task_is_an_interval_old() -> None:
    """A task still running when it is ``poll_interval_ms`` old: the held get answers
    ``working`` then, with the whole interval as its hint; a later get is not held."""
    async with gated_server(poll_interval_ms=300) as (server, gate):
        created = result_of(await call(server, "gated"))
        got = result_of(await asyncio.wait_for(get(server, created["taskId"]), 10))
        assert got["status"] == "working"
        assert got["pollIntervalMs"] == 300
        record = await server.store.get(created["taskId"])
        assert record is not None and time.time() - record.created_at >= 0.3
        started = time.monotonic()
        again = result_of(await asyncio.wait_for(get(server, created["taskId"]), 10))
        assert again["status"] == "working"
        assert time.monotonic() - started < 0.3
        assert server.roles.holds == {} and server.roles.held == {}


async def test_held_gets_are_bounded_per_caller_and_by_max_poll_hold_ms() -> None:
    """One caller may have ``max_listens`` gets held; the next is answered at once, as
    are another caller's beyond theirs. ``max_poll_hold_ms=0`` holds none."""
    async with gated_server(poll_interval_ms=60_000, max_listens=1) as (server, gate):
        first = result_of(await call(server, "gated"))["taskId"]
        second = result_of(await call(server, "gated"))["taskId"]
        waiting = get(server, first)
        await until(lambda: bool(server.roles.holds), timeout=10, what="the get held")
        # alice's second get: answered at once, working
        got = result_of(await asyncio.wait_for(get(server, second), 10))
        assert got["status"] == "working"
        assert not waiting.done()
        gate.set()
        assert result_of(await asyncio.wait_for(waiting, 10))["status"] == "completed"
    async with gated_server(poll_interval_ms=60_000, max_poll_hold_ms=0) as (
        server,
        gate,
    ):
        created = result_of(await call(server, "gated"))
        got = result_of(await asyncio.wait_for(get(server, created["taskId"]), 10))
        assert got["status"] == "working" and got["pollIntervalMs"] == 3_000


async def test_closing_the_server_answers_its_held_gets() -> None:
    async with gated_server(poll_interval_ms=60_000) as (server, gate):
        created = result_of(await call(server, "gated"))
        waiting = get(server, created["taskId"])
        await until(lambda: bool(server.roles.holds), timeout=10, what="the get held")
        closing = asyncio.ensure_future(server.close())
        got = await asyncio.wait_for(waiting, 10)
        await asyncio.wait_for(closing, 10)
        assert "result" in got or "error" in got


@asynccontextmanager
async def inline_server(
    audit: list[Any] | None = None, **limits: Any
) -> AsyncIterator[TasksServer]:
    """An extension server whose tools finish at once, fail, ask, or wait."""
    store = InMemoryTaskStore()
    server = TasksServer(
        "inline",
        store=store,
        limits=Limits(poll_interval_ms=200, sweep_interval_s=3600, **limits),
        audit=audit.append if audit is not None else None,
    )
    gate = asyncio.Event()

    @server.tool()
    async def quick(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await ctx.report("on it")
        return "quick"

    @server.tool()
    async def rpc_error(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        raise JsonRpcError(-32001, "upstream refused", {"retry": 5})

    @server.tool()
    async def ask(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        answer = await ctx.elicit("Sure?", SCHEMA)
        return f"answer {answer['action']}"

    @server.tool()
    async def gated(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await gate.wait()
        return "released"

    async def never_inline(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        return "as a task"

    server.add_tool(Tool(name="never_inline", handler=never_inline, answer_within_ms=0))
    async with server:
        yield server
    gate.set()


async def call(server: TasksServer, tool: str, principal: str = "alice") -> Any:
    return await server.handle(
        ext_message("tools/call", {"name": tool, "arguments": {}}),
        RequestInfo(principal=principal),
    )


async def test_a_tool_that_finishes_within_the_window_is_answered_inline() -> None:
    audit: list[Any] = []
    async with inline_server(audit, answer_within_ms=10_000) as server:
        answer = result_of(await asyncio.wait_for(call(server, "quick"), 10))
        assert answer["resultType"] == "complete"
        assert answer["content"] == [{"type": "text", "text": "quick"}]
        assert "taskId" not in answer
        # the task that ran it is gone: nothing counts against the caller's limits
        store: Any = server.store
        assert store._tasks == {}
        assert await server.store.usage("alice") == (0, 0)
        assert [event.action for event in audit][-1] == "answered_inline"
        # a JSON-RPC error of the tool is the call's error
        error = error_of(await asyncio.wait_for(call(server, "rpc_error"), 10))
        assert error == {
            "code": -32001,
            "message": "upstream refused",
            "data": {"retry": 5},
        }
        assert store._tasks == {}
        # a tool that opts out still answers with a task
        created = result_of(await call(server, "never_inline"))
        assert created["resultType"] == "task"


async def test_a_tool_that_asks_for_input_gets_its_task_at_once() -> None:
    async with inline_server(answer_within_ms=60_000) as server:
        created = result_of(await asyncio.wait_for(call(server, "ask"), 10))
        assert created["resultType"] == "task" and created["status"] == "working"
        got = result_of(
            await server.handle(
                ext_message("tasks/get", {"taskId": created["taskId"]}),
                RequestInfo(principal="alice"),
            )
        )
        assert got["status"] in ("working", "input_required")


async def test_a_tool_still_running_after_the_window_answers_with_its_task() -> None:
    async with inline_server(answer_within_ms=50) as server:
        started = time.monotonic()
        created = result_of(await call(server, "gated"))
        assert time.monotonic() - started >= 0.05
        assert created["resultType"] == "task" and created["status"] == "working"
        assert created["taskId"] in server.lifecycle.workers


async def test_inline_answers_are_opt_in_per_server_or_per_tool() -> None:
    async with inline_server() as server:  # default: always a task
        assert result_of(await call(server, "quick"))["resultType"] == "task"
        server.add_tool(
            replace(server.registry.by_name["quick"], answer_within_ms=10_000)
        )
        answer = result_of(await asyncio.wait_for(call(server, "quick"), 10))
        assert answer["resultType"] == "complete"


async def test_2025_never_answers_a_task_request_inline() -> None:
    """In 2025-11-25 the client asked for the task (``params.task``): it gets one."""
    limits = server_2025.Limits(answer_within_ms=10_000, sweep_interval_s=3600)
    async with running_2025(limits=limits) as h:
        started = time.monotonic()
        created = await h.start_task("quick")
        assert created["status"] == "working" and time.monotonic() - started < 5


@pytest.fixture(scope="module")
def ext_example() -> Iterator[str]:
    port = free_port()
    command = [
        sys.executable,
        str(ROOT / "examples" / "server_ext.py"),
        "--port",
        str(port),
        "--memory",
    ]
    with run_server(command, port, url_path="/mcp") as handle:
        yield handle.url


def test_a_polling_client_gets_an_instant_tool_well_before_the_interval(
    ext_example: str,
) -> None:
    """The example server suggests 200 ms; a tool that finishes at once is seen done
    at the first poll, which the client sends after the new task's hint (10 ms),
    not after the whole interval."""
    from mcp_tasks_ext.client import TasksClient
    from mcp_tasks_ext.task_ids import MemoryTaskIdStore
    from mcp_tasks_ext.transport import HttpTransport

    async def scenario() -> tuple[float, int, int | None]:
        async with TasksClient(
            HttpTransport(ext_example), store=MemoryTaskIdStore()
        ) as client:
            await client.call_tool("slow_compute", {"seconds": 0}, timeout=30)  # warm
            started = time.monotonic()
            handle = await client.start_tool("slow_compute", {"seconds": 0})
            assert handle.task is not None
            first_hint = handle.task.poll_interval_ms
            await handle.result(timeout=30)
            return time.monotonic() - started, handle.polls, first_hint

    took, polls, first_hint = asyncio.run(scenario())
    assert first_hint == 10
    assert polls == 1
    assert took < 0.2, f"{took * 1000:.0f} ms: the client waited a whole interval"
