"""Checklist D.2 (server on the Tasks extension), in process through
``TasksServer.handle``.

Each test's docstring starts with the checklist item it covers ("Digest D.2.NN").
HTTP-only items (status codes, routing headers) are in
``tests/integration/server/test_http_ext.py``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcp_tasks_ext.server import (
    AuditEvent,
    JsonRpcError,
    Limits,
    RequestInfo,
    TasksServer,
    ToolContext,
    ToolError,
)
from mcp_tasks_ext.stores import InMemoryTaskStore, SQLiteTaskStore, TaskStore
from tests.support.servers import EXT, error_of, ext_message, headers_for, result_of

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}


class Harness:
    """A server with controllable tools, plus shortcuts for the task methods."""

    def __init__(self, server: TasksServer) -> None:
        self.server = server
        self.release = asyncio.Event()
        self.keys_seen: list[str] = []
        self._ids = 0

    async def call(
        self, message: dict[str, Any], principal: str | None = None
    ) -> dict[str, Any] | None:
        """Send one message as ``principal``."""
        return await self.server.handle(message, RequestInfo(principal=principal))

    def msg(
        self, method: str, params: dict[str, Any] | None = None, **kw: Any
    ) -> dict[str, Any]:
        """A request with a fresh id."""
        self._ids += 1
        return ext_message(method, params, request_id=self._ids, **kw)

    async def start_task(
        self,
        tool: str,
        arguments: dict[str, Any] | None = None,
        principal: str | None = None,
    ) -> dict[str, Any]:
        """Call ``tool`` with the extension declared; return the CreateTaskResult."""
        created = result_of(
            await self.call(
                self.msg("tools/call", {"name": tool, "arguments": arguments or {}}),
                principal,
            )
        )
        assert created["resultType"] == "task", created
        return created

    async def get(self, task_id: str, principal: str | None = None) -> dict[str, Any]:
        """``tasks/get`` result."""
        return result_of(
            await self.call(self.msg("tasks/get", {"taskId": task_id}), principal)
        )

    async def wait_status(
        self, task_id: str, *statuses: str, principal: str | None = None
    ) -> dict[str, Any]:
        """Poll ``tasks/get`` until the task has one of ``statuses``."""
        deadline = time.monotonic() + 5
        while True:
            task = await self.get(task_id, principal)
            if task["status"] in statuses:
                return task
            assert time.monotonic() < deadline, task
            await asyncio.sleep(0.01)


def register_tools(harness: Harness) -> None:
    """Tools whose behaviour the tests control."""
    server = harness.server

    @server.tool(task_support="forbidden")
    async def greet(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        return f"Hello, {arguments.get('name', 'world')}!"

    @server.tool()
    async def gated(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await ctx.report("waiting for the gate")
        await harness.release.wait()
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
        raise JsonRpcError(-32603, "API rate limit exceeded", {"retry": 5})

    @server.tool()
    async def crashes(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        raise RuntimeError("secret detail")

    @server.tool()
    async def ask(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        answer = await ctx.elicit("Sure?", SCHEMA)
        return f"answer {answer['action']}"

    @server.tool()
    async def ask_three_times(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        for _ in range(3):
            await ctx.elicit("Again?", SCHEMA)
        return "asked thrice"

    @server.tool()
    async def ask_two(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        first, second = await asyncio.gather(
            ctx.elicit("One?", SCHEMA), ctx.elicit("Two?", SCHEMA)
        )
        return f"{first['content']} {second['content']}"

    async def preflight(
        ctx: ToolContext, arguments: dict[str, Any]
    ) -> dict[str, dict[str, Any]] | None:
        if "user_name" in ctx.input_responses:
            return None
        return {
            "user_name": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Name?",
                    "requestedSchema": SCHEMA,
                },
            }
        }

    @server.tool(task_support="required", preflight=preflight)
    async def mrtr(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        return f"Hello {ctx.input_responses['user_name']['content']['name']}"


@asynccontextmanager
async def running(
    store: TaskStore | None = None, **kwargs: Any
) -> AsyncIterator[Harness]:
    """A started server (in-memory store unless given) with the test tools."""
    kwargs.setdefault("limits", Limits(poll_interval_ms=100, sweep_interval_s=3600))
    server = TasksServer(
        "test-ext",
        "9.9",
        store=store if store is not None else InMemoryTaskStore(),
        **kwargs,
    )
    harness = Harness(server)
    register_tools(harness)
    async with server:
        yield harness
    harness.release.set()


async def test_discover_advertises_extension_and_no_legacy_tasks() -> None:
    """Digest D.2.1: discover advertises extension and no legacy tasks."""
    async with running() as h:
        result = result_of(await h.call(h.msg("server/discover", declare=False)))
    assert result["capabilities"]["extensions"] == {EXT: {}}
    assert "tasks" not in result["capabilities"]
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["resultType"] == "complete"


async def test_capability_gate_reads_only_the_current_request() -> None:
    """Digest D.2.2: capability gate reads only the current request."""
    async with running() as h:
        created = await h.start_task("quick")
        # an earlier declaration does not count for this request
        error = error_of(
            await h.call(
                h.msg("tasks/get", {"taskId": created["taskId"]}, declare=False)
            )
        )
        assert error["code"] == -32021
        assert error["data"] == {"requiredCapabilities": {"extensions": {EXT: {}}}}
        sync = result_of(
            await h.call(h.msg("tools/call", {"name": "quick"}, declare=False))
        )
    assert sync["resultType"] == "complete" and "taskId" not in sync
    assert sync["content"] == [{"type": "text", "text": "quick"}]


@pytest.mark.parametrize(
    "missing",
    [
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/clientCapabilities",
        "_meta",
    ],
)
async def test_missing_core_meta_is_invalid_params(missing: str) -> None:
    """Digest D.2.2: missing core meta is invalid params."""
    async with running() as h:
        message = h.msg("tools/call", {"name": "greet"})
        if missing == "_meta":
            del message["params"]["_meta"]
        else:
            del message["params"]["_meta"][missing]
        error = error_of(await h.call(message))
    assert error["code"] == -32602


async def test_unsupported_protocol_version_is_32022_naming_the_supported_ones() -> (
    None
):
    """Digest D.2.2: unsupported protocol version is 32022 naming the supported ones."""
    async with running() as h:
        message = h.msg("tools/list")
        message["params"]["_meta"][
            "io.modelcontextprotocol/protocolVersion"
        ] = "2024-01-01"
        error = error_of(await h.call(message))
    assert error["code"] == -32022
    assert error["data"] == {"supported": ["2026-07-28"], "requested": "2024-01-01"}


async def test_not_declared_runs_sync_and_task_only_tool_gets_32021() -> None:
    """Digest D.2.3: not declared runs sync and task only tool gets 32021."""
    async with running() as h:
        h.release.set()
        sync = result_of(
            await h.call(h.msg("tools/call", {"name": "gated"}, declare=False))
        )
        error = error_of(
            await h.call(h.msg("tools/call", {"name": "only_task"}, declare=False))
        )
    assert sync == {
        "content": [{"type": "text", "text": "released"}],
        "isError": False,
        "resultType": "complete",
        "_meta": {
            "io.modelcontextprotocol/serverInfo": {"name": "test-ext", "version": "9.9"}
        },
    }
    assert error["code"] == -32021
    assert error["data"]["requiredCapabilities"]["extensions"] == {EXT: {}}


async def test_forbidden_tool_is_sync_even_when_declared() -> None:
    """Digest D.2.3: forbidden tool is sync even when declared."""
    async with running() as h:
        result = result_of(
            await h.call(
                h.msg("tools/call", {"name": "greet", "arguments": {"name": "Ada"}})
            )
        )
    assert result["resultType"] == "complete"
    assert result["content"][0]["text"] == "Hello, Ada!"


async def test_sync_tool_asking_for_input_needs_the_extension() -> None:
    """Digest D.2.3: sync tool asking for input needs the extension."""
    async with running() as h:
        error = error_of(
            await h.call(h.msg("tools/call", {"name": "ask"}, declare=False))
        )
    assert error["code"] == -32021


async def test_legacy_task_param_is_ignored() -> None:
    """Digest D.2.4: legacy task param is ignored."""
    async with running() as h:
        sync = result_of(
            await h.call(h.msg("tools/call", {"name": "greet", "task": {"ttl": 5}}))
        )
        created = result_of(
            await h.call(h.msg("tools/call", {"name": "quick", "task": {"ttl": 5}}))
        )
    assert sync["resultType"] == "complete"
    assert created["resultType"] == "task"
    assert created["ttlMs"] != 5  # the server alone picks the TTL


async def test_create_is_durable_before_response(tmp_path: Path) -> None:
    """Digest D.2.5: The row is committed in SQLite when CreateTaskResult is
    returned."""
    db = tmp_path / "tasks.sqlite3"
    async with running(SQLiteTaskStore(str(db))) as h:
        created = await h.start_task("gated")
        with sqlite3.connect(db) as other:  # a separate connection sees the commit
            rows = other.execute(
                "SELECT status FROM tasks WHERE task_id = ?", (created["taskId"],)
            ).fetchall()
        assert rows == [("working",)]
        assert (await h.get(created["taskId"]))["taskId"] == created["taskId"]


class SlowWrites(InMemoryTaskStore):
    """A memory store whose creates take 60 ms, as a busy disk's might."""

    async def create(self, record: Any, **options: Any) -> Any:
        await asyncio.sleep(0.06)  # the write's own time, not a wait for an event
        return await super().create(record, **options)


async def test_the_create_result_has_a_new_task_s_hint_however_slow_the_store() -> None:
    """``first_poll_interval_ms`` is the hint of a new task: the create result has it
    even when the store took long enough to write the task that its age would give
    more (it gave 100 here, the longest, and 11 with the memory store on a loaded
    machine)."""
    async with running(store=SlowWrites()) as h:
        created = await h.start_task("gated")
        assert created["pollIntervalMs"] == 5
        got = await h.get(created["taskId"])
        assert got["pollIntervalMs"] >= 5  # from here on it grows with the age


async def test_create_task_result_is_flat_with_required_fields() -> None:
    """Digest D.2.5: create task result is flat with required fields."""
    async with running() as h:
        created = await h.start_task("gated")
    assert created["resultType"] == "task"
    assert set(created) >= {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"}
    assert "task" not in created and "result" not in created
    assert len(created["taskId"]) == 32 and int(created["taskId"], 16) >= 0  # 128 bits
    assert created["status"] == "working"
    # a new task's hint is Limits.first_poll_interval_ms: a twentieth of the interval
    assert isinstance(created["ttlMs"], int) and created["pollIntervalMs"] == 5
    assert created["createdAt"].endswith("Z")


async def test_result_type_task_only_on_create() -> None:
    """Digest D.2.6: result type task only on create."""
    async with running() as h:
        created = await h.start_task("gated")
        task_id = created["taskId"]
        got = await h.get(task_id)
        update = result_of(
            await h.call(
                h.msg("tasks/update", {"taskId": task_id, "inputResponses": {}})
            )
        )
        cancel = result_of(await h.call(h.msg("tasks/cancel", {"taskId": task_id})))
    for result in (got, update, cancel):
        assert result["resultType"] == "complete"
    assert set(update) == {"resultType", "_meta"} and set(cancel) == {
        "resultType",
        "_meta",
    }


async def test_get_returns_the_detailed_variant_for_each_status() -> None:
    """Digest D.2.7: get returns the detailed variant for each status."""
    async with running() as h:
        working = await h.get((await h.start_task("gated"))["taskId"])
        assert working["status"] == "working"
        assert not {"result", "error", "inputRequests"} & set(working)

        asking = (await h.start_task("ask"))["taskId"]
        first = await h.wait_status(asking, "input_required")
        again = await h.get(asking)
        assert first["inputRequests"] == again["inputRequests"]  # same key every poll
        (request,) = first["inputRequests"].values()
        assert request["method"] == "elicitation/create"
        assert request["params"]["message"] == "Sure?"

        done = await h.wait_status((await h.start_task("quick"))["taskId"], "completed")
        assert done["result"]["content"] == [{"type": "text", "text": "quick"}]

        failed = await h.wait_status(
            (await h.start_task("rpc_error"))["taskId"], "failed"
        )
        assert failed["error"] == {
            "code": -32603,
            "message": "API rate limit exceeded",
            "data": {"retry": 5},
        }
        assert "API rate limit exceeded" in failed["statusMessage"]
        assert "result" not in failed

        unknown = error_of(await h.call(h.msg("tasks/get", {"taskId": "nope"})))
        assert unknown["code"] == -32602


async def test_input_request_keys_are_unique_for_the_task_life() -> None:
    """Digest D.2.8: input request keys are unique for the task life."""
    async with running() as h:
        task_id = (await h.start_task("ask_three_times"))["taskId"]
        keys: list[str] = []
        for _ in range(3):
            task = await h.wait_status(task_id, "input_required")
            (key,) = task["inputRequests"]
            while (
                key in keys
            ):  # the previous key may still show until the worker moves on
                task = await h.wait_status(task_id, "input_required")
                (key,) = task["inputRequests"]
            keys.append(key)
            await h.call(
                h.msg(
                    "tasks/update",
                    {
                        "taskId": task_id,
                        "inputResponses": {key: {"action": "accept", "content": {}}},
                    },
                )
            )
        await h.wait_status(task_id, "completed")
    assert len(set(keys)) == 3


async def test_update_ignores_unknown_and_answered_keys_and_accepts_partial_sets() -> (
    None
):
    """Digest D.2.9: update ignores unknown and answered keys and accepts partial
    sets."""
    async with running() as h:
        task_id = (await h.start_task("ask_two"))["taskId"]
        deadline = time.monotonic() + 5
        task = await h.get(task_id)
        while len(task.get("inputRequests", {})) < 2:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
            task = await h.get(task_id)
        first, second = task["inputRequests"]
        ack = result_of(
            await h.call(
                h.msg(
                    "tasks/update",
                    {
                        "taskId": task_id,
                        "inputResponses": {
                            first: {"action": "accept", "content": {"n": 1}},
                            "never-issued": {"action": "accept"},
                        },
                    },
                )
            )
        )
        assert ack["resultType"] == "complete"
        partial = await h.get(task_id)
        assert partial["status"] == "input_required"
        assert list(partial["inputRequests"]) == [second]
        # answering the first key again is harmless and ignored
        await h.call(
            h.msg(
                "tasks/update",
                {"taskId": task_id, "inputResponses": {first: {"action": "decline"}}},
            )
        )
        await h.call(
            h.msg(
                "tasks/update",
                {
                    "taskId": task_id,
                    "inputResponses": {
                        second: {"action": "accept", "content": {"n": 2}}
                    },
                },
            )
        )
        done = await h.wait_status(task_id, "completed")
    assert done["result"]["content"][0]["text"] == "{'n': 1} {'n': 2}"


async def test_update_refuses_unknown_tasks_undeclared_callers_and_no_answers() -> None:
    """Digest D.2.9: update refuses unknown tasks undeclared callers and no
    answers."""
    async with running() as h:
        task_id = (await h.start_task("gated"))["taskId"]
        unknown = error_of(
            await h.call(
                h.msg("tasks/update", {"taskId": "nope", "inputResponses": {}})
            )
        )
        undeclared = error_of(
            await h.call(
                h.msg(
                    "tasks/update",
                    {"taskId": task_id, "inputResponses": {}},
                    declare=False,
                )
            )
        )
        malformed = error_of(await h.call(h.msg("tasks/update", {"taskId": task_id})))
        # F-17: an update while no key is outstanding is acknowledged and changes
        # nothing
        ack = result_of(
            await h.call(
                h.msg("tasks/update", {"taskId": task_id, "inputResponses": {"x": {}}})
            )
        )
        assert (await h.get(task_id))["status"] == "working"
    assert unknown["code"] == -32602
    assert undeclared["code"] == -32021
    assert malformed["code"] == -32602
    assert ack["resultType"] == "complete"


async def test_cancel_acknowledges_and_stops_the_worker() -> None:
    """Digest D.2.10: cancel acknowledges and stops the worker."""
    async with running() as h:
        task_id = (await h.start_task("gated"))["taskId"]
        ack = result_of(await h.call(h.msg("tasks/cancel", {"taskId": task_id})))
        assert set(ack) == {"resultType", "_meta"}
        cancelled = await h.get(task_id)
        assert cancelled["status"] == "cancelled"
        deadline = time.monotonic() + 5
        while task_id in h.server.lifecycle.workers:  # the worker is being stopped
            assert time.monotonic() < deadline
            await asyncio.sleep(0.005)
        h.release.set()  # nothing runs any more that it could release
        assert (await h.get(task_id))["status"] == "cancelled"
        unknown = error_of(await h.call(h.msg("tasks/cancel", {"taskId": "nope"})))
        undeclared = error_of(
            await h.call(h.msg("tasks/cancel", {"taskId": task_id}, declare=False))
        )
    assert unknown["code"] == -32602 and undeclared["code"] == -32021


async def test_cancel_after_the_work_won_the_race_keeps_completed() -> None:
    """Digest D.2.10: cancel after the work won the race keeps completed."""
    async with running() as h:
        task_id = (await h.start_task("quick"))["taskId"]
        await h.wait_status(task_id, "completed")
        ack = result_of(await h.call(h.msg("tasks/cancel", {"taskId": task_id})))
        assert ack["resultType"] == "complete"  # F-24: terminal tasks are acked too
        assert (await h.get(task_id))["status"] == "completed"


async def test_tool_errors_complete_while_rpc_errors_and_crashes_fail_the_task() -> (
    None
):
    """Digest D.2.11: tool errors complete while rpc errors and crashes fail the
    task."""
    async with running() as h:
        tool_error = await h.wait_status(
            (await h.start_task("tool_error"))["taskId"], "completed", "failed"
        )
        rpc_error = await h.wait_status(
            (await h.start_task("rpc_error"))["taskId"], "completed", "failed"
        )
        crash = await h.wait_status(
            (await h.start_task("crashes"))["taskId"], "completed", "failed"
        )
    assert tool_error["status"] == "completed"
    assert tool_error["result"]["isError"] is True
    assert rpc_error["status"] == "failed" and rpc_error["error"]["code"] == -32603
    assert crash["status"] == "failed" and crash["error"]["code"] == -32603
    assert "secret detail" not in crash["error"]["message"]  # no exception text leaks


async def test_state_machine_terminal_final_and_last_updated_bumped() -> None:
    """Digest D.2.12: state machine terminal final and last updated bumped."""
    async with running() as h:
        task_id = (await h.start_task("gated"))["taskId"]
        before = await h.wait_status(task_id, "working")
        await h.server.set_status_message(task_id, "new message")
        after = await h.get(task_id)
        assert after["lastUpdatedAt"] > before["lastUpdatedAt"]
        assert after["statusMessage"] == "new message"
        h.release.set()
        done = await h.wait_status(task_id, "completed")
        await h.server.set_status_message(task_id, "too late")
        assert await h.get(task_id) == done  # terminal: nothing changes
        with pytest.raises(ValueError, match="illegal transition"):
            other = (await h.start_task("ask"))["taskId"]
            await h.wait_status(other, "input_required")
            await h.server.lifecycle.update(other, status="bogus")


async def test_ttl_expiry_then_not_found() -> None:
    """Digest D.2.13: ttl expiry then not found."""
    limits = Limits(default_ttl_ms=50, max_ttl_ms=50, sweep_interval_s=3600)
    async with running(limits=limits) as h:
        created = await h.start_task("quick")
        assert created["ttlMs"] == 50
        await h.get(created["taskId"])  # accessible within its TTL
        record = await h.server.store.get(created["taskId"])
        assert record is not None
        deadline = time.monotonic() + 5
        while not record.is_expired(time.time()):  # wait out the 50 ms TTL
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        # expired tasks are unknown even before the sweeper runs
        assert (
            error_of(await h.call(h.msg("tasks/get", {"taskId": created["taskId"]})))[
                "code"
            ]
            == -32602
        )
        purged = await h.server.purge_expired()
    assert purged == [created["taskId"]]


async def test_poll_interval_configurable_and_rate_limiter_hook() -> None:
    """Digest D.2.14: poll interval configurable and rate limiter hook."""
    calls: list[tuple[str | None, str]] = []

    def limiter(principal: str | None, method: str) -> bool:
        calls.append((principal, method))
        return len(calls) < 3

    async with running(limits=Limits(poll_interval_ms=None), rate_limiter=limiter) as h:
        created = await h.start_task("gated")
        assert "pollIntervalMs" not in created
        await h.get(created["taskId"])
        await h.get(created["taskId"])
        refused = error_of(
            await h.call(h.msg("tasks/get", {"taskId": created["taskId"]}))
        )
    assert refused["code"] == -32000 and "Rate limit" in refused["message"]
    assert calls[0] == (None, "tasks/get")


async def test_every_task_method_checks_the_principal() -> None:
    """Digest D.2.15: every task method checks the principal."""
    async with running() as h:
        task_id = (await h.start_task("ask", principal="alice"))["taskId"]
        await h.wait_status(task_id, "input_required", principal="alice")
        for method, params in [
            ("tasks/get", {"taskId": task_id}),
            ("tasks/update", {"taskId": task_id, "inputResponses": {}}),
            ("tasks/cancel", {"taskId": task_id}),
        ]:
            error = error_of(await h.call(h.msg(method, params), principal="mallory"))
            assert error["code"] == -32602 and "not found" in error["message"]
        assert (await h.get(task_id, "alice"))["status"] == "input_required"


async def test_authenticate_hook_runs_on_each_request() -> None:
    """Digest D.2.15: authenticate hook runs on each request."""
    seen: list[str | None] = []

    def authenticate(request: RequestInfo) -> str:
        token = (request.headers or {}).get("authorization", "")
        seen.append(token)
        return token

    def over_http(message: dict[str, Any], token: str) -> RequestInfo:
        """The request as an HTTP client sends it (with its routing headers)."""
        return RequestInfo(headers=headers_for(message, authorization=token))

    async with running(authenticate=authenticate) as h:
        call = h.msg("tools/call", {"name": "gated"})
        created = result_of(await h.server.handle(call, over_http(call, "A")))
        get = h.msg("tasks/get", {"taskId": created["taskId"]})
        mine = await h.server.handle(get, over_http(get, "A"))
        theirs = await h.server.handle(get, over_http(get, "B"))
    assert result_of(mine)["taskId"] == created["taskId"]
    assert error_of(theirs)["code"] == -32602
    assert seen == ["A", "A", "B"]


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
async def test_removed_methods_are_method_not_found(method: str) -> None:
    """Digest D.2.16: removed methods are method not found."""
    async with running() as h:
        error = error_of(await h.call(h.msg(method, {"taskId": "x"})))
    assert error["code"] == -32601


async def test_listen_acknowledges_then_streams_detailed_tasks() -> None:
    """Digest D.2.17: listen acknowledges then streams detailed tasks."""
    async with running() as h:
        task_id = (await h.start_task("gated"))["taskId"]
        sent: list[dict[str, Any]] = []

        async def emit(message: dict[str, Any]) -> None:
            sent.append(message)

        listen = h.msg(
            "subscriptions/listen", {"notifications": {"taskIds": [task_id, "unknown"]}}
        )
        listen["id"] = "listen-1"
        stream = asyncio.create_task(h.server.handle(listen, RequestInfo(), emit))
        deadline = time.monotonic() + 5
        while len(sent) < 2:  # acknowledged, and the current state sent
            assert time.monotonic() < deadline, sent
            await asyncio.sleep(0.005)
        h.release.set()
        deadline = time.monotonic() + 5
        while not any(m["params"].get("status") == "completed" for m in sent[1:]):
            assert time.monotonic() < deadline, sent
            await asyncio.sleep(0.01)
    final = await stream  # closing the server ends the stream gracefully
    ack = sent[0]
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}
    assert ack["params"]["_meta"] == {
        "io.modelcontextprotocol/subscriptionId": "listen-1"
    }
    for note in sent[1:]:
        assert note["method"] == "notifications/tasks"
        assert note["params"]["_meta"] == {
            "io.modelcontextprotocol/subscriptionId": "listen-1"
        }
        assert note["params"]["taskId"] == task_id
    completed = [n for n in sent if n["params"].get("status") == "completed"][0]
    assert completed["params"]["result"]["content"][0]["text"] == "released"
    assert {m["method"] for m in sent} == {
        "notifications/subscriptions/acknowledged",
        "notifications/tasks",
    }
    assert final is not None and final["id"] == "listen-1"
    assert final["result"]["resultType"] == "complete"
    assert (
        final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"
    )


async def test_listen_ends_on_the_latest_state_when_a_task_moves_meanwhile() -> None:
    """Digest D.2.17: A task that changes while the subscription is being
    acknowledged: its current state is read once the subscription follows it, so the
    stream's last message for it is its latest state (the stale state looked up
    before used to come last)."""
    async with running() as h:
        task_id = (await h.start_task("gated"))["taskId"]
        sent: list[dict[str, Any]] = []

        async def emit(message: dict[str, Any]) -> None:
            sent.append(message)
            if message["method"] == "notifications/subscriptions/acknowledged":
                cancel = h.msg("tasks/cancel", {"taskId": task_id})
                result_of(await h.server.handle(cancel, RequestInfo(), None))

        listen = h.msg(
            "subscriptions/listen", {"notifications": {"taskIds": [task_id]}}
        )
        stream = asyncio.create_task(h.server.handle(listen, RequestInfo(), emit))
        deadline = time.monotonic() + 5
        while not any(m["params"].get("status") == "cancelled" for m in sent):
            assert time.monotonic() < deadline, sent
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.05)
    await stream
    statuses = [m["params"]["status"] for m in sent[1:]]
    assert statuses[-1] == "cancelled", statuses


async def test_listen_with_task_ids_needs_the_extension() -> None:
    """Digest D.2.17: listen with task ids needs the extension."""
    async with running() as h:
        error = error_of(
            await h.call(
                h.msg(
                    "subscriptions/listen",
                    {"notifications": {"taskIds": ["x"]}},
                    declare=False,
                )
            )
        )
    assert error["code"] == -32021


async def test_mrtr_input_comes_before_the_task() -> None:
    """Digest D.2.19: mrtr input comes before the task."""
    async with running() as h:
        round1 = result_of(await h.call(h.msg("tools/call", {"name": "mrtr"})))
        assert round1["resultType"] == "input_required" and "taskId" not in round1
        assert list(round1["inputRequests"]) == ["user_name"]
        round2 = result_of(
            await h.call(
                h.msg(
                    "tools/call",
                    {
                        "name": "mrtr",
                        "inputResponses": {
                            "user_name": {
                                "action": "accept",
                                "content": {"name": "Alice"},
                            }
                        },
                    },
                )
            )
        )
        assert round2["resultType"] == "task" and "requestState" not in round2
        done = await h.wait_status(round2["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "Hello Alice"


async def test_input_kinds_need_the_declared_capability() -> None:
    """Digest D.2.20: input kinds need the declared capability."""
    async with running() as h:
        created = result_of(
            await h.call(
                h.msg(
                    "tools/call",
                    {"name": "ask"},
                    capabilities={"extensions": {EXT: {}}},
                )
            )
        )
        failed = await h.wait_status(created["taskId"], "failed", "input_required")
        mrtr = error_of(
            await h.call(
                h.msg(
                    "tools/call",
                    {"name": "mrtr"},
                    capabilities={"extensions": {EXT: {}}},
                )
            )
        )
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == -32021
    assert failed["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}
    assert mrtr["code"] == -32021
    assert mrtr["data"] == {"requiredCapabilities": {"elicitation": {}}}
    assert "elicitation/create needs 'elicitation'" in mrtr["message"], mrtr


async def test_results_carry_server_info() -> None:
    """Digest D.2.21: results carry server info."""
    async with running() as h:
        created = await h.start_task("quick")
        got = await h.get(created["taskId"])
    for result in (created, got):
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {
            "name": "test-ext",
            "version": "9.9",
        }


async def test_progress_of_a_call_goes_on_its_own_stream() -> None:
    """Progress is the core's: a call's ``notifications/progress`` carry its token on
    the call's response stream (a task has no session to carry them here)."""
    async with running() as h:

        @h.server.tool(task_support="forbidden")
        async def counting(ctx: ToolContext, arguments: dict[str, Any]) -> str:
            await ctx.progress(1, 2, "half")
            return "counted"

        message = h.msg("tools/call", {"name": "counting", "arguments": {}})
        message["params"]["_meta"]["progressToken"] = "p-1"
        sent: list[dict[str, Any]] = []

        async def emit(notification: dict[str, Any]) -> None:
            sent.append(notification)

        result = result_of(await h.server.handle(message, RequestInfo(), emit))
    assert result["content"][0]["text"] == "counted"
    assert sent == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {
                "progressToken": "p-1",
                "progress": 1,
                "total": 2,
                "message": "half",
            },
        }
    ]


async def test_security_task_ids_are_unique_random_128_bit() -> None:
    async with running(limits=Limits(max_active_tasks=1000)) as h:
        ids = {(await h.start_task("quick"))["taskId"] for _ in range(200)}
    assert len(ids) == 200
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


async def test_limits_concurrent_tasks_per_principal() -> None:
    async with running(limits=Limits(max_active_tasks=2)) as h:
        await h.start_task("gated", principal="alice")
        await h.start_task("gated", principal="alice")
        refused = error_of(
            await h.call(h.msg("tools/call", {"name": "gated"}), "alice")
        )
        other = await h.start_task("gated", principal="bob")  # limits are per principal
    assert refused["code"] == -32000
    assert "Too many unfinished tasks: 2 (limit 2 per principal)" in refused["message"]
    assert other["resultType"] == "task"


async def test_limits_input_size() -> None:
    async with running(limits=Limits(max_input_bytes=100)) as h:
        error = error_of(
            await h.call(
                h.msg("tools/call", {"name": "quick", "arguments": {"x": "y" * 200}})
            )
        )
    assert error["code"] == -32602
    assert (
        "params.arguments is too large" in error["message"]
        and "limit 100" in error["message"]
    )


async def test_audit_hook_sees_lifecycle_events() -> None:
    events: list[AuditEvent] = []
    async with running(audit=events.append) as h:
        task_id = (await h.start_task("quick", principal="alice"))["taskId"]
        await h.wait_status(task_id, "completed", principal="alice")
        await h.call(h.msg("tasks/get", {"taskId": task_id}), "mallory")
    actions = [(e.action, e.principal) for e in events if e.task_id == task_id]
    assert ("created", "alice") in actions
    assert ("completed", "alice") in actions
    assert ("retrieved", "alice") in actions
    assert ("lookup_failed", "mallory") in actions


async def test_notifications_and_responses_get_no_reply() -> None:
    async with running() as h:
        assert (
            await h.call(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": 1},
                }
            )
            is None
        )
        assert await h.call({"jsonrpc": "2.0", "id": 5, "result": {}}) is None
        bad = error_of(await h.call({"jsonrpc": "1.0", "id": 2, "method": "ping"}))
    assert bad["code"] == -32600
