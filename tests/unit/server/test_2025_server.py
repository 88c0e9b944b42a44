"""Checklist D.1 (server on revision 2025-11-25), in process through
``TasksServer.handle``.

Each test's docstring starts with the checklist item it covers ("Digest D.1.NN").
The HTTP session layer is exercised in ``tests/integration/server/test_http_2025.py``.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcp_tasks_2025_11_25.server import (
    AuditEvent,
    JsonRpcError,
    Limits,
    RequestInfo,
    Session,
    TasksServer,
    ToolContext,
    ToolError,
)
from mcp_tasks_2025_11_25.stores import InMemoryTaskStore, SQLiteTaskStore, TaskRecord
from tests.support.servers import error_of, message_2025, result_of

pytestmark = pytest.mark.anyio

RELATED = "io.modelcontextprotocol/related-task"
SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}


class Harness:
    """A started server with controllable tools and one initialized session."""

    def __init__(self, server: TasksServer) -> None:
        self.server = server
        self.release = asyncio.Event()
        self.session: Session | None = None
        self._ids = 0

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        principal: str | None = None,
        emit: Any = None,
    ) -> dict[str, Any] | None:
        """Send one request in the harness session."""
        self._ids += 1
        info = RequestInfo(
            principal=principal, session_id=self.session.id if self.session else None
        )
        return await self.server.handle(
            message_2025(method, params, request_id=self._ids), info, emit
        )

    async def initialize(
        self, capabilities: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Open a session the way the HTTP transport does."""
        self.session = self.server.open_session()
        return result_of(
            await self.call(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": (
                        capabilities
                        if capabilities is not None
                        else {"elicitation": {}}
                    ),
                    "clientInfo": {"name": "test", "version": "0"},
                },
            )
        )

    async def start_task(
        self,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        ttl: int | None = None,
        principal: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Task-augmented ``tools/call``; returns the nested Task."""
        params: dict[str, Any] = {
            "name": tool,
            "arguments": arguments or {},
            "task": {} if ttl is None else {"ttl": ttl},
        }
        if meta is not None:
            params["_meta"] = meta
        created = result_of(await self.call("tools/call", params, principal=principal))
        assert set(created) == {"task"}, created
        task: dict[str, Any] = created["task"]
        return task

    async def get(self, task_id: str, principal: str | None = None) -> dict[str, Any]:
        """``tasks/get`` result."""
        return result_of(
            await self.call("tasks/get", {"taskId": task_id}, principal=principal)
        )

    async def wait_status(self, task_id: str, *statuses: str) -> dict[str, Any]:
        """Poll ``tasks/get`` until the task has one of ``statuses``."""
        deadline = time.monotonic() + 5
        while True:
            task = await self.get(task_id)
            if task["status"] in statuses:
                return task
            assert time.monotonic() < deadline, task
            await asyncio.sleep(0.01)


async def until(condition: Any, timeout: float = 5) -> None:
    """Wait until ``condition()`` is true."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.005)


def register_tools(h: Harness, *, task_tools: bool = True) -> None:
    """Tools whose behaviour the tests control."""
    server = h.server

    @server.tool(task_support="forbidden")
    async def greet(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        return "Hello!"

    if not task_tools:
        return

    @server.tool()
    async def gated(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await ctx.report("waiting")
        await h.release.wait()
        return "released"

    @server.tool()
    async def quick(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        return "quick"

    @server.tool(task_support="required")
    async def only_task(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        return "task only"

    @server.tool()
    async def tool_error(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        raise ToolError("bad input")

    @server.tool()
    async def rpc_error(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        raise JsonRpcError(-32603, "API rate limit exceeded")

    @server.tool()
    async def ask(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        answer = await ctx.elicit("Sure?", SCHEMA)
        return f"answer {answer['action']}"

    @server.tool()
    async def progress(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await ctx.progress(1, 2, "half")
        await h.release.wait()
        await ctx.progress(2, 2, "all")
        return "done"


@asynccontextmanager
async def running(
    *, task_tools: bool = True, initialize: bool = True, **kwargs: Any
) -> AsyncIterator[Harness]:
    """A started server (in-memory store) with the test tools and a session."""
    kwargs.setdefault("limits", Limits(poll_interval_ms=100, sweep_interval_s=3600))
    server = TasksServer("test-2025", "9.9", store=InMemoryTaskStore(), **kwargs)
    h = Harness(server)
    register_tools(h, task_tools=task_tools)
    async with server:
        if initialize:
            await h.initialize()
        yield h
    h.release.set()


async def test_initialize_declares_exactly_the_supported_leaves() -> None:
    """Digest D.1.1: initialize declares exactly the supported leaves."""
    async with running() as h:
        anonymous = h.server.capabilities()
    async with running(authenticate=lambda r: "someone") as h:
        with_auth = await h.initialize()
    async with running(task_tools=False) as h:
        no_task_tools = h.server.capabilities()
    assert anonymous["tasks"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
    assert with_auth["capabilities"]["tasks"] == {
        "cancel": {},
        "list": {},
        "requests": {"tools": {"call": {}}},
    }
    assert with_auth["protocolVersion"] == "2025-11-25"
    assert no_task_tools["tasks"] == {"cancel": {}}


async def test_tools_list_emits_task_support() -> None:
    """Digest D.1.2: tools list emits task support."""
    async with running() as h:
        tools = {t["name"]: t for t in result_of(await h.call("tools/list"))["tools"]}
    assert tools["greet"]["execution"] == {"taskSupport": "forbidden"}
    assert tools["quick"]["execution"] == {"taskSupport": "optional"}
    assert tools["only_task"]["execution"] == {"taskSupport": "required"}


async def test_task_param_ignored_without_the_capability() -> None:
    """Digest D.1.3: task param ignored without the capability."""
    async with running(task_tools=False) as h:
        result = result_of(
            await h.call("tools/call", {"name": "greet", "task": {"ttl": 1000}})
        )
    assert result == {"content": [{"type": "text", "text": "Hello!"}], "isError": False}


@pytest.mark.parametrize("code", [-32601, -32600])
async def test_task_support_is_enforced_with_a_configurable_code(
    code: int,
) -> None:
    """Digest D.1.4: task support is enforced with a configurable code."""
    async with running(task_mismatch_code=code) as h:
        forbidden = error_of(await h.call("tools/call", {"name": "greet", "task": {}}))
        required = error_of(await h.call("tools/call", {"name": "only_task"}))
        sync = result_of(await h.call("tools/call", {"name": "quick"}))
    assert forbidden["code"] == code and required["code"] == code
    assert "Task augmentation required" in required["message"]
    assert sync["content"][0]["text"] == "quick"


async def test_creation_clamps_the_ttl_and_sets_poll_interval_and_timestamps() -> None:
    """Digest D.1.5: creation clamps the ttl and sets poll interval and timestamps."""
    limits = Limits(
        max_ttl_ms=60_000,
        default_ttl_ms=30_000,
        poll_interval_ms=250,
        sweep_interval_s=3600,
    )
    async with running(limits=limits) as h:
        clamped = await h.start_task("gated", ttl=10**9)
        default = await h.start_task("gated")
        asked = await h.start_task("gated", ttl=5_000)
    assert (
        clamped["ttl"] == 60_000 and default["ttl"] == 30_000 and asked["ttl"] == 5_000
    )
    assert clamped["status"] == "working"
    assert clamped["createdAt"] == clamped["lastUpdatedAt"]
    assert clamped["createdAt"].endswith("Z")
    assert clamped["pollInterval"] == 12  # a new task's hint: a twentieth of 250
    assert len(clamped["taskId"]) == 32


async def test_get_returns_the_flat_task_and_not_found_errors() -> None:
    """Digest D.1.6: get returns the flat task and not found errors."""
    async with running() as h:
        task = await h.start_task("gated", principal="alice")
        got = await h.get(task["taskId"], "alice")
        unknown = error_of(await h.call("tasks/get", {"taskId": "nope"}))
        foreign = error_of(
            await h.call("tasks/get", {"taskId": task["taskId"]}, principal="bob")
        )
    assert {"taskId", "status", "createdAt", "lastUpdatedAt", "ttl"} <= set(got)
    assert "_meta" not in got and "task" not in got
    assert (
        unknown
        == foreign
        == {
            "code": -32602,
            "message": "Failed to retrieve task: Task not found",
        }
    )


async def test_status_message_bumps_last_updated_and_terminal_tasks_are_final() -> None:
    """Digest D.1.7: status message bumps last updated and terminal tasks are final."""
    async with running() as h:
        task_id = (await h.start_task("gated"))["taskId"]
        before = await h.wait_status(task_id, "working")
        await h.server.set_status_message(task_id, "later")
        after = await h.get(task_id)
        assert after["lastUpdatedAt"] > before["lastUpdatedAt"]
        h.release.set()
        done = await h.wait_status(task_id, "completed")
        await h.server.set_status_message(task_id, "too late")
        assert await h.get(task_id) == done
        with pytest.raises(ValueError, match="illegal transition"):
            other = (await h.start_task("ask"))["taskId"]
            await h.wait_status(other, "input_required")
            await h.server.lifecycle.update(other, status="submitted")


async def test_tasks_result_blocks_then_returns_the_stored_result() -> None:
    """Digest D.1.8: tasks result blocks then returns the stored result."""
    async with running() as h:
        task_id = (await h.start_task("gated"))["taskId"]
        pending = asyncio.create_task(h.call("tasks/result", {"taskId": task_id}))
        await until(lambda: task_id in h.server.inputs.channels)  # the call is waiting
        assert not pending.done()  # blocked while working
        h.release.set()
        result = result_of(await pending)
        unknown = error_of(await h.call("tasks/result", {"taskId": "nope"}))
    assert result["content"] == [{"type": "text", "text": "released"}]
    assert result["_meta"] == {RELATED: {"taskId": task_id}}
    assert unknown["code"] == -32602


async def test_is_error_fails_the_task_but_the_result_is_a_success() -> None:
    """Digest D.1.9: is error fails the task but the result is a success."""
    async with running() as h:
        tool_error = (await h.start_task("tool_error"))["taskId"]
        rpc_error = (await h.start_task("rpc_error"))["taskId"]
        failed = await h.wait_status(tool_error, "failed")
        payload = result_of(await h.call("tasks/result", {"taskId": tool_error}))
        rpc_failed = await h.wait_status(rpc_error, "failed")
        replayed = error_of(await h.call("tasks/result", {"taskId": rpc_error}))
    assert "bad input" in failed["statusMessage"]
    assert payload["isError"] is True and payload["content"][0]["text"] == "bad input"
    assert (
        rpc_failed["statusMessage"] == "Tool execution failed: API rate limit exceeded"
    )
    assert replayed == {"code": -32603, "message": "API rate limit exceeded"}


async def test_input_required_is_delivered_on_the_tasks_result_stream() -> None:
    """Digest D.1.10: input required is delivered on the tasks result stream."""
    async with running() as h:
        task_id = (await h.start_task("ask"))["taskId"]
        await h.wait_status(task_id, "input_required")
        streamed: list[dict[str, Any]] = []
        arrived = asyncio.Event()

        async def emit(message: dict[str, Any]) -> None:
            streamed.append(message)
            arrived.set()

        pending = asyncio.create_task(
            h.call("tasks/result", {"taskId": task_id}, emit=emit)
        )
        await asyncio.wait_for(arrived.wait(), 5)
        (request,) = streamed
        assert request["method"] == "elicitation/create"
        assert request["params"]["_meta"] == {RELATED: {"taskId": task_id}}
        assert request["params"]["message"] == "Sure?"
        reply = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {
                "action": "accept",
                "content": {"confirm": True},
                "_meta": {RELATED: {"taskId": task_id}},
            },
        }
        assert (
            await h.server.handle(
                reply, RequestInfo(session_id=h.session.id if h.session else None)
            )
            is None
        )
        result = result_of(await pending)
        statuses = [m for m in streamed if m.get("method")]
    assert result["content"][0]["text"] == "answer accept"
    assert len(statuses) == 1  # nothing but the side request travelled on the stream


async def test_elicitation_needs_the_client_capability() -> None:
    """Digest D.1.10: elicitation needs the client capability."""
    async with running(initialize=False) as h:
        await h.initialize(capabilities={})
        task_id = (await h.start_task("ask"))["taskId"]
        failed = await h.wait_status(task_id, "failed")
    assert "elicitation" in failed["statusMessage"]


async def test_sync_tool_sends_its_elicitation_on_the_call_stream() -> None:
    """Digest D.1.10: sync tool sends its elicitation on the call stream."""
    async with running() as h:
        sent: list[dict[str, Any]] = []

        async def emit(message: dict[str, Any]) -> None:
            sent.append(message)
            await h.server.handle(  # through the session the request was sent on
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"action": "decline"},
                },
                RequestInfo(session_id=h.session.id if h.session else None),
            )

        result = result_of(await h.call("tools/call", {"name": "ask"}, emit=emit))
    assert result["content"][0]["text"] == "answer decline"
    assert sent[0]["method"] == "elicitation/create" and RELATED not in sent[0][
        "params"
    ].get("_meta", {})


async def test_cancel_stops_the_worker_and_refuses_terminal_and_unknown_tasks() -> None:
    """Digest D.1.11: cancel stops the worker and refuses terminal and unknown tasks."""
    async with running() as h:
        task_id = (await h.start_task("gated"))["taskId"]
        cancelled = result_of(await h.call("tasks/cancel", {"taskId": task_id}))
        assert cancelled["status"] == "cancelled"  # set before the reply
        assert cancelled["taskId"] == task_id
        await until(
            lambda: task_id not in h.server.lifecycle.workers
        )  # the worker was stopped
        h.release.set()
        assert (await h.get(task_id))["status"] == "cancelled"
        again = error_of(await h.call("tasks/cancel", {"taskId": task_id}))
        done = (await h.start_task("quick"))["taskId"]
        await h.wait_status(done, "completed")
        terminal = error_of(await h.call("tasks/cancel", {"taskId": done}))
        unknown = error_of(await h.call("tasks/cancel", {"taskId": "nope"}))
        no_result = error_of(await h.call("tasks/result", {"taskId": task_id}))
    assert again == {
        "code": -32602,
        "message": "Cannot cancel task: already in terminal status 'cancelled'",
    }
    assert (
        terminal["message"]
        == "Cannot cancel task: already in terminal status 'completed'"
    )
    assert unknown["code"] == -32602
    assert no_result["code"] == -32603  # F-7: a cancelled task has no result


async def test_list_paginates_the_callers_tasks() -> None:
    """Digest D.1.12: list paginates the callers tasks."""
    async with running(
        authenticate=lambda r: r.principal,
        page_size=2,
        limits=Limits(max_active_tasks=100, sweep_interval_s=3600),
    ) as h:
        mine = [
            (await h.start_task("quick", principal="alice"))["taskId"] for _ in range(5)
        ]
        await h.start_task("quick", principal="bob")
        seen: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            assert pages < 10, f"no last page after {pages} pages"
            params = {} if cursor is None else {"cursor": cursor}
            page = result_of(await h.call("tasks/list", params, principal="alice"))
            pages += 1
            seen += [t["taskId"] for t in page["tasks"]]
            if "nextCursor" not in page:
                break
            assert len(page["tasks"]) == 2
            cursor = page["nextCursor"]
        bad = error_of(
            await h.call("tasks/list", {"cursor": "not-a-cursor"}, principal="alice")
        )
    assert seen == mine and pages == 3
    assert bad["code"] == -32602


async def test_forged_list_cursors_are_invalid_params_on_sqlite(
    tmp_path: Path,
) -> None:
    """Digest D.1.12: forged list cursors are invalid params on sqlite."""
    store = SQLiteTaskStore(str(tmp_path / "tasks.sqlite3"))
    server = TasksServer("test-2025", store=store, enable_list=True, page_size=1)
    h = Harness(server)
    register_tools(h)
    forged: list[object] = [
        "not-a-cursor",
        _cursor("after:99"),
        _cursor('["a"]'),
        _cursor('["a",5]'),
        _cursor('["\\ud800","x"]'),  # a lone surrogate no store can hold
        _cursor('["unknown","ids"]'),
        "A" * 5000,
        5,
        None,
    ]
    async with server:
        await h.initialize()
        for _ in range(2):
            await h.start_task("quick")
        page = result_of(await h.call("tasks/list", {}))
        errors = [
            error_of(await h.call("tasks/list", {"cursor": cursor}))
            for cursor in forged
            if cursor is not None
        ]
        nested = error_of(await h.call("tasks/list", {"cursor": _cursor("[" * 400)}))
        second = result_of(await h.call("tasks/list", {"cursor": page["nextCursor"]}))
    assert [e["code"] for e in errors] == [-32602] * len(errors), errors
    assert nested["code"] == -32602
    assert len(page["tasks"]) == len(second["tasks"]) == 1
    assert page["tasks"][0]["taskId"] != second["tasks"][0]["taskId"]


def _cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


async def test_list_is_not_offered_without_principals() -> None:
    """Digest D.1.12: list is not offered without principals."""
    async with running() as h:
        error = error_of(await h.call("tasks/list"))
    assert error["code"] == -32601


async def test_status_notifications_carry_the_full_task() -> None:
    """Digest D.1.13: status notifications carry the full task."""
    async with running() as h:
        assert h.session is not None
        stream = h.session.open_stream()
        task_id = (await h.start_task("quick"))["taskId"]
        await h.wait_status(task_id, "completed")
        notes = []
        while not stream.empty():
            notes.append(stream.get_nowait())
    statuses = [
        n["params"]["status"]
        for n in notes
        if n and n["method"] == "notifications/tasks/status"
    ]
    assert statuses[-1] == "completed"
    for note in notes:
        assert note is not None and "_meta" not in note["params"]
        assert {"taskId", "status", "createdAt", "lastUpdatedAt", "ttl"} <= set(
            note["params"]
        )


async def test_auth_binding_foreign_context_is_not_found() -> None:
    """Digest D.1.14: auth binding foreign context is not found."""
    async with running() as h:
        task_id = (await h.start_task("gated", principal="alice"))["taskId"]
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            error = error_of(await h.call(method, {"taskId": task_id}, principal="bob"))
            assert error["code"] == -32602
        assert (await h.get(task_id, "alice"))["status"] == "working"


async def test_ttl_sweeper_deletes_expired_tasks() -> None:
    """Digest D.1.15: ttl sweeper deletes expired tasks."""
    limits = Limits(default_ttl_ms=40, sweep_interval_s=0.02)
    async with running(limits=limits) as h:
        task_id = (await h.start_task("gated"))["taskId"]
        deadline = time.monotonic() + 5
        while await h.server.store.get(task_id) is not None:  # purged by the sweeper
            assert time.monotonic() < deadline, "the sweeper did not purge the task"
            await asyncio.sleep(0.01)
        for method in ("tasks/get", "tasks/result"):
            assert error_of(await h.call(method, {"taskId": task_id}))["code"] == -32602


async def test_progress_uses_the_original_token_and_stops_at_terminal() -> None:
    """Digest D.1.16: progress uses the original token and stops at terminal."""
    async with running() as h:
        assert h.session is not None
        stream = h.session.open_stream()
        task_id = (await h.start_task("progress", meta={"progressToken": "tok-1"}))[
            "taskId"
        ]
        await until(lambda: not stream.empty())  # the first progress notification
        h.release.set()
        await h.wait_status(task_id, "completed")
        ctx_after = ToolContext(
            h.server,
            tool=h.server.tools[0],
            principal=None,
            session=h.session,
            progress_token="tok-1",
            emit=None,
            task_id=task_id,
        )
        ctx_after.finished = True
        await ctx_after.progress(3, 3)
        notes = []
        while not stream.empty():
            notes.append(stream.get_nowait())
    progress = [
        n["params"] for n in notes if n and n["method"] == "notifications/progress"
    ]
    assert progress == [
        {"progressToken": "tok-1", "progress": 1, "total": 2, "message": "half"},
        {"progressToken": "tok-1", "progress": 2, "total": 2, "message": "all"},
    ]


async def test_related_task_meta_on_requests_is_ignored() -> None:
    """Digest D.1.17: related task meta on requests is ignored."""
    async with running() as h:
        task_id = (await h.start_task("gated"))["taskId"]
        other = (await h.start_task("quick"))["taskId"]
        got = result_of(
            await h.call(
                "tasks/get",
                {
                    "taskId": task_id,
                    "_meta": {RELATED: {"taskId": other}},
                    "task": {"ttl": 1},
                },
            )
        )
    assert (
        got["taskId"] == task_id
    )  # params.taskId wins; the extra TS-SDK "task" key is tolerated


async def test_task_limits_rate_limiter_and_audit_events() -> None:
    """Digest D.1.18: task limits rate limiter and audit events."""
    events: list[AuditEvent] = []
    calls = 0

    def limiter(principal: str | None, method: str) -> bool:
        nonlocal calls
        calls += 1
        return calls <= 2

    limits = Limits(max_active_tasks=1, max_input_bytes=64, sweep_interval_s=3600)
    async with running(limits=limits, rate_limiter=limiter, audit=events.append) as h:
        task_id = (await h.start_task("gated"))["taskId"]
        too_many = error_of(await h.call("tools/call", {"name": "gated", "task": {}}))
        too_big = error_of(
            await h.call(
                "tools/call",
                {"name": "quick", "arguments": {"x": "y" * 100}, "task": {}},
            )
        )
        await h.get(task_id)
        await h.get(task_id)
        limited = error_of(await h.call("tasks/get", {"taskId": task_id}))
    assert too_many["code"] == -32000 and "limit 1 per principal" in too_many["message"]
    assert too_big["code"] == -32602 and "too large" in too_big["message"]
    assert limited["code"] == -32000 and "Rate limit" in limited["message"]
    assert [e.action for e in events if e.task_id == task_id][:1] == ["created"]


async def test_routing_headers_are_not_checked_in_2025() -> None:
    """2025-11-25 has no ``Mcp-Method``/``Mcp-Name`` (no ``HEADER_MISMATCH`` code): the
    core's routing-header check stays off, even with ``require_routing_headers``, and
    error responses keep HTTP 200."""
    server = TasksServer(
        "plain", store=InMemoryTaskStore(), require_routing_headers=True
    )
    async with server:
        headers = {"mcp-method": "tools/list", "mcp-name": "=?base64?!!?="}
        response = await server.handle(
            message_2025("ping"), RequestInfo(headers=headers)
        )
        listed = await server.handle(
            message_2025("tasks/list"), RequestInfo(headers={})
        )
    assert result_of(response) == {}
    assert error_of(listed)["code"] != -32020
    assert {server.http_status(c) for c in (-32700, -32601, -32602, -32000)} == {200}


async def test_ping_and_unknown_method() -> None:
    async with running() as h:
        assert result_of(await h.call("ping")) == {}
        assert error_of(await h.call("resources/list"))["code"] == -32601


async def test_unanswered_requests_are_delivered_again_on_a_new_result_stream() -> None:
    """Digest D.1.10: A client that dropped its ``tasks/result`` stream gets the
    pending request again."""
    async with running() as h:
        task_id = (await h.start_task("ask"))["taskId"]
        await h.wait_status(task_id, "input_required")
        first: list[dict[str, Any]] = []
        second: list[dict[str, Any]] = []

        async def keep(into: list[dict[str, Any]], message: dict[str, Any]) -> None:
            into.append(message)

        dropped = asyncio.create_task(
            h.call("tasks/result", {"taskId": task_id}, emit=lambda m: keep(first, m))
        )
        await until(lambda: bool(first))
        dropped.cancel()  # the client went away before answering
        pending = asyncio.create_task(
            h.call("tasks/result", {"taskId": task_id}, emit=lambda m: keep(second, m))
        )
        await until(lambda: bool(second))
        assert [m["id"] for m in first] == [m["id"] for m in second]
        await h.server.handle(
            {
                "jsonrpc": "2.0",
                "id": second[0]["id"],
                "result": {"action": "accept", "content": {}},
            },
            RequestInfo(session_id=h.session.id if h.session else None),
        )
        result = result_of(await pending)
    assert result["content"][0]["text"] == "answer accept"


async def test_result_waiters_wake_up_when_their_task_expires() -> None:
    """Digest D.1.15: A task whose worker runs elsewhere (here: none) is not failed
    before its TTL by this server; when it expires and is purged, a waiting
    ``tasks/result`` wakes up with not-found."""
    async with running(limits=Limits(default_ttl_ms=50, sweep_interval_s=3600)) as h:
        now = time.time()
        record = await h.server.store.create(
            TaskRecord(
                task_id="elsewhere",
                owner=None,
                tool="gated",
                status="working",
                created_at=now,
                updated_at=now,
                ttl_ms=50,
            )
        )
        task_id = record.task_id
        pending = asyncio.create_task(h.call("tasks/result", {"taskId": task_id}))
        await until(lambda: task_id in h.server.inputs.channels)  # the call is waiting
        await until(lambda: record.is_expired(time.time()))  # its 50 ms TTL ran out
        await h.server.purge_expired()
        error = error_of(await asyncio.wait_for(pending, 2))
    assert error["code"] == -32602


async def test_result_waiters_get_the_failure_of_a_task_whose_ttl_ran_out() -> None:
    """Digest D.1.15: A task whose worker runs here is failed just before its TTL
    runs out: a waiting ``tasks/result`` replays that failure."""
    async with running(limits=Limits(default_ttl_ms=150, sweep_interval_s=3600)) as h:
        task_id = (await h.start_task("gated"))["taskId"]
        pending = asyncio.create_task(h.call("tasks/result", {"taskId": task_id}))
        error = error_of(await asyncio.wait_for(pending, 5))
    assert error["code"] == -32603
    assert "TTL ran out" in error["message"]


async def test_limit_error_code_is_configurable() -> None:
    """Digest D.1.18: limit error code is configurable."""
    async with running(
        limits=Limits(
            max_active_tasks=0, limit_error_code=-32099, sweep_interval_s=3600
        )
    ) as h:
        error = error_of(await h.call("tools/call", {"name": "quick", "task": {}}))
    assert error["code"] == -32099


async def test_tool_may_give_a_model_immediate_response() -> None:
    """Digest D.1.5: tool may give a model immediate response."""
    async with running() as h:

        @h.server.tool(immediate_response="Working on it; check back soon.")
        async def announced(ctx: ToolContext, arguments: dict[str, Any]) -> str:
            return "done"

        created = result_of(
            await h.call("tools/call", {"name": "announced", "task": {}})
        )
        plain = result_of(await h.call("tools/call", {"name": "quick", "task": {}}))
    assert created["_meta"] == {
        "io.modelcontextprotocol/model-immediate-response": (
            "Working on it; check back soon."
        )
    }
    assert "_meta" not in plain
