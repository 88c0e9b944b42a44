"""Checklist C.1 (client on revision 2025-11-25) against a scripted in-process peer.

Each test's docstring starts with the checklist item it covers ("Digest C.1.NN", item
NN of ``tasks-digest.md`` section C.1). Time is a :class:`FakeClock`, so interval
assertions are exact and never flaky.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_tasks_2025_11_25.client import (
    CannotCancelTask,
    CapabilityNotDeclared,
    InputContext,
    InvalidResponse,
    TaskAugmentationRequired,
    TaskCancelled,
    TaskFailed,
    TaskNotFound,
    TaskRequired,
    TasksClient,
    WaitTimeout,
)
from mcp_tasks_2025_11_25.models import CallToolResult, Task
from mcp_tasks_2025_11_25.task_ids import MemoryTaskIdStore, SqliteTaskIdStore
from mcp_tasks_2025_11_25.transport import JsonRpcError, TransportError
from tests.support.fakes import (
    TASK_ID,
    TEXT_RESULT,
    FakeClock,
    FakePeer,
    StuckClock,
    run,
    task_2025,
)
from tests.support.waiting import until

FULL_CAPS: dict[str, Any] = {
    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
}


def tool(name: str, support: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "inputSchema": {"type": "object"}}
    if support is not None:
        entry["execution"] = {"taskSupport": support}
    return entry


class Server:
    """A scripted 2025-11-25 server: ``gets`` are answered in order (the last one
    repeats)."""

    def __init__(
        self,
        *,
        capabilities: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
        created: dict[str, Any] | None = None,
        gets: list[dict[str, Any]] | None = None,
        payload: dict[str, Any] | None = None,
        payload_error: JsonRpcError | None = None,
    ) -> None:
        self.capabilities = FULL_CAPS if capabilities is None else capabilities
        self.tools = (
            tools
            if tools is not None
            else [
                tool("job", "optional"),
                tool("must", "required"),
                tool("plain", None),
                tool("never", "forbidden"),
            ]
        )
        self.created = created or task_2025("working")
        self.gets = gets or [task_2025("completed")]
        self.payload = payload or {
            **TEXT_RESULT,
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": TASK_ID}},
        }
        self.payload_error = payload_error
        self.peer: FakePeer | None = None
        self.on_get: Any = None
        self.on_result: Any = None
        self.call_meta: dict[str, Any] = {}
        self.plain_error: JsonRpcError | None = None
        self.cancel_error: JsonRpcError | None = None

    async def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            return {
                "protocolVersion": "2025-11-25",
                "capabilities": self.capabilities,
                "serverInfo": {"name": "fake", "version": "0"},
            }
        if method == "tools/list":
            return {"tools": self.tools}
        if method == "tools/call":
            if "task" not in params:
                if self.plain_error is not None:
                    raise self.plain_error
                return TEXT_RESULT
            return {
                "task": self.created,
                **({"_meta": self.call_meta} if self.call_meta else {}),
            }
        if method == "tasks/get":
            if self.on_get is not None:
                await self.on_get()
            return self.gets.pop(0) if len(self.gets) > 1 else self.gets[0]
        if method == "tasks/result":
            if self.on_result is not None:
                await self.on_result()
            if self.payload_error is not None:
                raise self.payload_error
            return self.payload
        if method == "tasks/cancel":
            if self.cancel_error is not None:
                raise self.cancel_error
            return task_2025("cancelled", message="The task was cancelled by request.")
        raise JsonRpcError(-32601, f"Method not found: {method}")


def make(
    server: Server, clock: FakeClock | None = None, **options: Any
) -> tuple[TasksClient, FakePeer, FakeClock]:
    clock = clock or FakeClock()
    peer = FakePeer(server, clock)
    server.peer = peer
    options.setdefault("store", MemoryTaskIdStore())
    client = TasksClient(peer, clock=clock, sleep=clock.sleep, **options)
    return client, peer, clock


def test_capabilities_read_from_initialize() -> None:
    """Digest C.1.1: capabilities read from initialize."""

    async def scenario() -> None:
        client, _, _ = make(Server())
        await client.connect()
        assert (
            client.supports_task_tools(),
            client.can_list(),
            client.can_cancel(),
        ) == (True, True, True)
        partial, _, _ = make(
            Server(capabilities={"tasks": {"requests": {"tools": {}}}})
        )
        await partial.connect()
        assert (
            partial.supports_task_tools(),
            partial.can_list(),
            partial.can_cancel(),
        ) == (False, False, False)
        none, _, _ = make(Server(capabilities={}))
        await none.connect()
        assert not none.supports_task_tools()

    run(scenario())


def test_no_task_param_without_server_capability() -> None:
    """Digest C.1.2: no task param without server capability."""

    async def scenario() -> None:
        client, peer, _ = make(Server(capabilities={"tasks": {"list": {}}}))
        await client.connect()
        result = await client.call_tool("job", {"x": 1})
        assert isinstance(result.model, CallToolResult)
        assert all("task" not in sent.params for sent in peer.of("tools/call"))
        with pytest.raises(CapabilityNotDeclared):
            await client.call_tool("job", task=True)
        assert len(peer.of("tools/call")) == 1

    run(scenario())


def test_no_task_param_for_absent_or_forbidden_task_support() -> None:
    """Digest C.1.3: no task param for absent or forbidden task support."""

    async def scenario() -> None:
        client, peer, _ = make(Server())
        await client.connect()
        await client.call_tool("plain")
        await client.call_tool("never")
        await client.call_tool("unknown-tool")
        assert [("task" in sent.params) for sent in peer.of("tools/call")] == [
            False,
            False,
            False,
        ]
        with pytest.raises(CapabilityNotDeclared):
            await client.call_tool("never", task=True)

    run(scenario())


def test_required_tool_always_task_augmented_and_plain_call_refused_locally() -> None:
    """Digest C.1.4: required tool always task augmented and plain call refused
    locally."""

    async def scenario() -> None:
        client, peer, _ = make(Server(), prefer_tasks=False)
        await client.connect()
        await client.call_tool("must")
        assert peer.of("tools/call")[0].params["task"] == {}
        with pytest.raises(TaskRequired):
            await client.call_tool("must", task=False)
        assert len(peer.of("tools/call")) == 1

    run(scenario())


def test_optional_tool_caller_chooses_with_configurable_default() -> None:
    """Digest C.1.5: optional tool caller chooses with configurable default."""

    async def scenario() -> None:
        eager, peer, _ = make(Server())
        await eager.connect()
        await eager.call_tool("job")
        await eager.call_tool("job", task=False)
        lazy, lazy_peer, _ = make(Server(), prefer_tasks=False)
        await lazy.connect()
        await lazy.call_tool("job")
        await lazy.call_tool("job", task=True)
        assert [("task" in s.params) for s in peer.of("tools/call")] == [True, False]
        assert [("task" in s.params) for s in lazy_peer.of("tools/call")] == [
            False,
            True,
        ]

    run(scenario())


def test_ttl_serialized_as_integer_or_empty_object() -> None:
    """Digest C.1.6: ttl serialized as integer or empty object."""

    async def scenario() -> None:
        client, peer, _ = make(Server())
        await client.connect()
        await client.call_tool("job", ttl=60000)
        await client.call_tool("job")
        first, second = (s.params["task"] for s in peer.of("tools/call"))
        assert first == {"ttl": 60000} and type(first["ttl"]) is int
        assert second == {}

    run(scenario())


def test_create_task_result_parsed_nested_and_immediate_response_exposed() -> None:
    """Digest C.1.7: create task result parsed nested and immediate response exposed."""

    async def scenario() -> None:
        server = Server(
            created=task_2025("working", message="The operation is now in progress.")
        )
        server.call_meta = {
            "io.modelcontextprotocol/model-immediate-response": "Working on it."
        }
        client, _, _ = make(server)
        await client.connect()
        handle = await client.start_tool("job")
        assert handle.task is not None and handle.task_id == TASK_ID
        assert handle.task.status_message == "The operation is now in progress."
        assert handle.model_immediate_response == "Working on it."
        assert isinstance((await handle.result()).model, CallToolResult)

    run(scenario())


def test_tasks_get_params_are_only_the_task_id() -> None:
    """Digest C.1.8: tasks get params are only the task id."""

    async def scenario() -> None:
        client, peer, _ = make(
            Server(
                gets=[
                    task_2025("working"),
                    task_2025("working"),
                    task_2025("completed"),
                ]
            )
        )
        await client.connect()
        await client.call_tool("job")
        assert [s.params for s in peer.of("tasks/get")] == [{"taskId": TASK_ID}] * 3
        assert [s.params for s in peer.of("tasks/result")] == [{"taskId": TASK_ID}]

    run(scenario())


def test_poll_interval_from_latest_task_never_faster() -> None:
    """Digest C.1.9: poll interval from latest task never faster."""

    async def scenario() -> None:
        gets = [
            task_2025("working", poll=1500, updated="a"),
            task_2025("working", poll=None, updated="b"),
            task_2025("working", poll=250, updated="c"),
            task_2025("completed", poll=250, updated="d"),
        ]
        client, peer, clock = make(
            Server(created=task_2025("working", poll=700), gets=gets),
            default_poll_interval=2.0,
        )
        await client.connect()
        await client.call_tool("job")
        times = [s.at for s in peer.of("tasks/get")]
        # created: 700 ms, then 1500 ms, then no interval (default 2 s), then 250 ms.
        assert [
            round(b - a, 6) for a, b in zip([0.0, *times], times, strict=False)
        ] == [
            0.7,
            1.5,
            2.0,
            0.25,
        ]

    run(scenario())


def test_stops_at_terminal_and_calls_tasks_result_once_on_input_required() -> None:
    """Digest C.1.10: stops at terminal and calls tasks result once on input
    required."""

    async def scenario() -> None:
        release = asyncio.Event()
        gets = [
            task_2025("input_required", updated="1"),
            task_2025("input_required", updated="2"),
            task_2025("working", updated="3"),
            task_2025("completed", updated="4"),
        ]
        server = Server(gets=gets)

        async def on_get() -> None:
            if len(server.gets) == 1:
                release.set()

        async def on_result() -> None:
            await release.wait()

        server.on_get = on_get
        server.on_result = on_result
        client, peer, _ = make(server)
        await client.connect()
        await client.call_tool("job")
        assert len(peer.of("tasks/result")) == 1
        assert peer.methods()[-1] in ("tasks/get", "tasks/result")
        assert len(peer.of("tasks/get")) <= 4

    run(scenario())


def test_answers_related_task_elicitation_while_tasks_result_pending() -> None:
    """Digest C.1.11: answers related task elicitation while tasks result pending."""

    async def scenario() -> None:
        server = Server(gets=[task_2025("input_required")])
        replies: list[dict[str, Any]] = []
        seen: list[InputContext] = []

        async def on_result() -> None:
            assert server.peer is not None
            params = {
                "mode": "form",
                "message": "Please enter your name.",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                },
                "_meta": {"io.modelcontextprotocol/related-task": {"taskId": TASK_ID}},
            }
            replies.append(
                await server.peer.to_client_request("elicitation/create", params)
            )

        async def elicit(context: InputContext) -> dict[str, Any]:
            seen.append(context)
            return {"action": "accept", "content": {"name": "Luca"}}

        server.on_result = on_result
        client, _, _ = make(server, elicitation_handler=elicit)
        await client.connect()
        await client.call_tool("job")
        assert (
            seen[0].task_id == TASK_ID
            and seen[0].params["message"] == "Please enter your name."
        )
        assert replies == [
            {
                "action": "accept",
                "content": {"name": "Luca"},
                "_meta": {"io.modelcontextprotocol/related-task": {"taskId": TASK_ID}},
            }
        ]

    run(scenario())


def test_tasks_result_success_decoded_and_error_reraised_with_code_message_data() -> (
    None
):
    """Digest C.1.12: tasks result success decoded and error reraised with code
    message data."""

    async def scenario() -> None:
        client, _, _ = make(Server())
        await client.connect()
        result = await client.call_tool("job")
        assert isinstance(result.model, CallToolResult) and result.is_error is False
        assert (
            result.meta is not None
            and "io.modelcontextprotocol/related-task" in result.meta
        )
        failing, _, _ = make(
            Server(
                gets=[task_2025("failed")],
                payload_error=JsonRpcError(-32603, "backend down", {"retry": False}),
            )
        )
        await failing.connect()
        with pytest.raises(TaskFailed) as caught:
            await failing.call_tool("job")
        assert (
            caught.value.code,
            caught.value.message,
            caught.value.data,
            caught.value.task_id,
        ) == (-32603, "backend down", {"retry": False}, TASK_ID)

    run(scenario())


def test_failed_task_with_is_error_result_is_returned_not_raised() -> None:
    """Digest C.1.13: failed task with is error result is returned not raised."""

    async def scenario() -> None:
        payload = {
            "content": [{"type": "text", "text": "rate limited"}],
            "isError": True,
        }
        client, _, _ = make(
            Server(
                gets=[task_2025("failed", message="Tool execution failed")],
                payload=payload,
            )
        )
        await client.connect()
        result = await client.call_tool("job")
        assert result.is_error is True

    run(scenario())


def test_failed_task_without_a_tool_result_raises_task_failed() -> None:
    """Digest C.1.13: failed task without a tool result raises task failed."""

    async def scenario() -> None:
        related = {
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": TASK_ID}}
        }
        client, _, _ = make(
            Server(
                gets=[task_2025("failed", message="worker crashed")], payload=related
            )
        )
        await client.connect()
        with pytest.raises(TaskFailed) as caught:
            await client.call_tool("job")
        assert (caught.value.code, caught.value.message, caught.value.data) == (
            -32603,
            "worker crashed",
            related,
        )

    run(scenario())


def test_not_found_is_typed_and_stops_the_loop() -> None:
    """Digest C.1.14: not found is typed and stops the loop."""

    async def scenario() -> None:
        server = Server()

        async def on_get() -> None:
            raise JsonRpcError(-32602, "Failed to retrieve task: Task has expired")

        server.on_get = on_get
        store = MemoryTaskIdStore()
        client, peer, _ = make(server, store=store)
        await client.connect()
        with pytest.raises(TaskNotFound) as caught:
            await client.call_tool("job")
        assert caught.value.code == -32602
        assert len(peer.of("tasks/get")) == 1
        assert await store.pending() == []
        result_missing, _, _ = make(
            Server(
                gets=[task_2025("completed")],
                payload_error=JsonRpcError(-32602, "Task not found"),
            )
        )
        await result_missing.connect()
        with pytest.raises(TaskNotFound):
            await result_missing.call_tool("job")

    run(scenario())


def test_status_notifications_update_cache_and_polling_works_without_them() -> None:
    """Digest C.1.15: status notifications update cache and polling works without
    them."""

    async def scenario() -> None:
        client, _, _ = make(Server(gets=[task_2025("working"), task_2025("completed")]))
        await client.connect()
        assert isinstance((await client.call_tool("job")).model, CallToolResult)

        stuck = StuckClock()
        client, peer, _ = make(Server(), clock=stuck)
        await client.connect()
        handle = await client.start_tool("job")
        seen: list[str] = []

        async def follow() -> None:
            async for snapshot in handle.snapshots():
                seen.append(f"{snapshot.status}:{snapshot.status_message}")

        follower = asyncio.ensure_future(follow())
        await until(lambda: stuck.sleeps, interval=0, what="the follower is waiting")
        await peer.to_client_notification(
            "notifications/tasks/status",
            task_2025("working", message="halfway", updated="x"),
        )
        await until(lambda: len(seen) >= 2, interval=0, what="the pushed snapshot")
        await peer.to_client_notification(
            "notifications/tasks/status", task_2025("completed", updated="y")
        )
        await asyncio.wait_for(follower, 5)
        assert seen == ["working:None", "working:halfway", "completed:None"]
        assert peer.of("tasks/get") == []
        assert isinstance((await handle.result()).model, CallToolResult)

    run(scenario())


def test_cancel_sends_tasks_cancel_decodes_task_and_respects_capability() -> None:
    """Digest C.1.16: cancel sends tasks cancel decodes task and respects capability."""

    async def scenario() -> None:
        client, peer, _ = make(Server())
        await client.connect()
        cancelled = await client.cancel_task(TASK_ID)
        assert isinstance(cancelled, Task) and cancelled.status == "cancelled"
        assert peer.of("tasks/cancel")[0].params == {"taskId": TASK_ID}
        assert all(method != "notifications/cancelled" for method, _ in peer.notified)
        server = Server()
        server.cancel_error = JsonRpcError(
            -32602, "Cannot cancel task: already in terminal status 'completed'"
        )
        terminal, _, _ = make(server)
        await terminal.connect()
        with pytest.raises(CannotCancelTask):
            await terminal.cancel_task(TASK_ID)
        bare, bare_peer, _ = make(
            Server(capabilities={"tasks": {"requests": {"tools": {"call": {}}}}})
        )
        await bare.connect()
        with pytest.raises(CapabilityNotDeclared):
            await bare.cancel_task(TASK_ID)
        assert bare_peer.of("tasks/cancel") == []

    run(scenario())


def test_list_tasks_follows_next_cursor_opaquely_and_needs_capability() -> None:
    """Digest C.1.17: list tasks follows next cursor opaquely and needs capability."""

    async def scenario() -> None:
        pages = {
            None: {
                "tasks": [task_2025("working", task_id="a")],
                "nextCursor": "opaque/=1 x",
            },
            "opaque/=1 x": {
                "tasks": [task_2025("completed", task_id="b")],
                "nextCursor": "ZZ",
            },
            "ZZ": {"tasks": []},
        }
        server = Server()

        async def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
            if method == "tasks/list":
                return pages[params.get("cursor")]
            return await server(method, params)

        client = TasksClient(FakePeer(handler), store=MemoryTaskIdStore())
        await client.connect()
        tasks = await client.list_tasks()
        assert [t.task_id for t in tasks] == ["a", "b"]
        assert isinstance(client.transport, FakePeer)
        assert [s.params for s in client.transport.of("tasks/list")] == [
            {},
            {"cursor": "opaque/=1 x"},
            {"cursor": "ZZ"},
        ]
        bare, bare_peer, _ = make(Server(capabilities={"tasks": {"cancel": {}}}))
        await bare.connect()
        with pytest.raises(CapabilityNotDeclared):
            await bare.list_tasks()
        assert bare_peer.of("tasks/list") == []

    run(scenario())


def test_task_model_accepts_null_ttl_and_keeps_timestamps_as_strings() -> None:
    """Digest C.1.18: task model accepts null ttl and keeps timestamps as strings."""
    task = Task.model_validate(task_2025("working", ttl=None))
    assert task.ttl is None
    assert task.created_at == "2025-11-25T10:30:00Z" and isinstance(
        task.last_updated_at, str
    )

    async def scenario() -> None:
        client, _, _ = make(
            Server(
                created=task_2025("working", ttl=None),
                gets=[task_2025("completed", ttl=None)],
            )
        )
        await client.connect()
        assert isinstance((await client.call_tool("job")).model, CallToolResult)

    run(scenario())


def test_progress_handler_stays_active_after_create_until_terminal() -> None:
    """Digest C.1.19: progress handler stays active after create until terminal."""

    async def scenario() -> None:
        server = Server(gets=[task_2025("working"), task_2025("completed")])
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_get() -> None:
            assert server.peer is not None
            token = server.peer.of("tools/call")[0].params["_meta"]["progressToken"]
            await server.peer.to_client_notification(
                "notifications/progress",
                {
                    "progressToken": token,
                    "progress": len(progress) + 1,
                    "total": 2,
                    "message": "step",
                },
            )

        server.on_get = on_get
        client, peer, _ = make(server)
        await client.connect()
        await client.call_tool(
            "job", on_progress=lambda p, t, m: progress.append((p, t, m))
        )
        assert progress == [(1.0, 2.0, "step"), (2.0, 2.0, "step")]
        token = peer.of("tools/call")[0].params["_meta"]["progressToken"]
        await peer.to_client_notification(
            "notifications/progress", {"progressToken": token, "progress": 9}
        )
        assert len(progress) == 2

    run(scenario())


def test_augmentation_required_error_is_typed_or_retried_with_task() -> None:
    """Digest C.1.20: augmentation required error is typed or retried with task."""

    async def scenario() -> None:
        server = Server(tools=[tool("job", "forbidden")])
        server.plain_error = JsonRpcError(
            -32600, "Task augmentation required for tools/call requests"
        )
        client, _, _ = make(server)
        await client.connect()
        with pytest.raises(TaskAugmentationRequired) as caught:
            await client.call_tool("job")
        assert caught.value.code == -32600
        retry_server = Server(tools=[tool("job", "forbidden")])
        retry_server.plain_error = JsonRpcError(-32601, "task required")
        retrying, peer, _ = make(retry_server, retry_with_task=True)
        await retrying.connect()
        assert isinstance((await retrying.call_tool("job")).model, CallToolResult)
        assert [("task" in s.params) for s in peer.of("tools/call")] == [False, True]

    run(scenario())


def test_tasks_get_polling_runs_in_parallel_with_pending_tasks_result() -> None:
    """Digest C.1.21: tasks get polling runs in parallel with pending tasks result."""

    async def scenario() -> None:
        server = Server(gets=[task_2025("input_required")])
        polled = asyncio.Event()

        async def on_get() -> None:
            assert server.peer is not None
            if len(server.peer.of("tasks/get")) >= 3:
                polled.set()

        async def on_result() -> None:
            await polled.wait()

        server.on_get = on_get
        server.on_result = on_result
        client, peer, _ = make(server)
        await client.connect()
        result = await asyncio.wait_for(client.call_tool("job"), 5)
        assert isinstance(result.model, CallToolResult)
        assert len(peer.of("tasks/get")) >= 3 and len(peer.of("tasks/result")) == 1

    run(scenario())


def test_client_without_task_receiver_capability_ignores_params_task() -> None:
    """Digest C.1.22: client without task receiver capability ignores params task."""

    async def scenario() -> None:
        async def elicit(context: InputContext) -> dict[str, Any]:
            return {"action": "decline"}

        client, peer, _ = make(Server(), elicitation_handler=elicit)
        await client.connect()
        capabilities = peer.of("initialize")[0].params["capabilities"]
        assert "tasks" not in capabilities and "elicitation" in capabilities
        reply = await peer.to_client_request(
            "elicitation/create",
            {
                "message": "ok?",
                "requestedSchema": {"type": "object", "properties": {}},
                "task": {"ttl": 1000},
            },
        )
        assert reply == {"action": "decline"}

    run(scenario())


def test_call_without_task_returns_the_immediate_result() -> None:
    async def scenario() -> None:
        client, peer, _ = make(Server())
        await client.connect()
        handle = await client.start_tool("plain")
        assert handle.task_id is None and handle.done
        assert isinstance((await handle.result()).model, CallToolResult)
        assert peer.of("tasks/get") == []

    run(scenario())


def test_cancelling_the_waiter_sends_tasks_cancel_and_leaks_no_tasks() -> None:
    async def scenario() -> None:
        stuck = StuckClock()
        store = MemoryTaskIdStore()
        client, peer, _ = make(Server(), clock=stuck, cancel_on_abort=True, store=store)
        await client.connect()
        before = asyncio.all_tasks()
        waiter = asyncio.ensure_future(client.call_tool("job"))
        await until(lambda: stuck.sleeps, interval=0, what="the wait is sleeping")
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert asyncio.all_tasks() == before
        assert [s.params for s in peer.of("tasks/cancel")] == [{"taskId": TASK_ID}]
        assert await store.pending() == []

    run(scenario())


def test_cancelled_status_raises_task_cancelled() -> None:
    async def scenario() -> None:
        client, peer, _ = make(Server(gets=[task_2025("cancelled", message="stopped")]))
        await client.connect()
        with pytest.raises(TaskCancelled) as caught:
            await client.call_tool("job")
        assert caught.value.status_message == "stopped"
        assert peer.of("tasks/result") == []

    run(scenario())


def test_overall_timeout_keeps_the_task_resumable(tmp_path: Any) -> None:
    async def scenario() -> None:
        store = SqliteTaskIdStore(tmp_path / "ids.sqlite3")
        client, _, _ = make(Server(gets=[task_2025("working")]), store=store)
        await client.connect()
        with pytest.raises(WaitTimeout):
            await client.call_tool("job", timeout=3.0)
        assert [entry.task_id for entry in await store.pending()] == [TASK_ID]
        fresh, peer, _ = make(
            Server(gets=[task_2025("completed")]),
            store=SqliteTaskIdStore(tmp_path / "ids.sqlite3"),
        )
        await fresh.connect()
        pending = await fresh.pending_tasks()
        assert pending[0].context == {"method": "tools/call", "name": "job"}
        resumed = await fresh.resume(pending[0].task_id)
        assert isinstance(resumed.model, CallToolResult)
        assert peer.of("tools/call") == []
        assert await store.pending() == []

    run(scenario())


class SessionPeer(FakePeer):
    """A fake transport with server sessions (like streamable HTTP)."""

    session_id: str | None = None
    joined: tuple[str, str] | None = None

    def join_session(self, session_id: str, protocol_version: str) -> None:
        self.session_id = session_id
        self.joined = (session_id, protocol_version)


def test_resume_after_restart_rejoins_the_session_the_task_belongs_to(
    tmp_path: Any,
) -> None:
    async def scenario() -> None:
        path = tmp_path / "ids.sqlite3"
        server = Server(gets=[task_2025("working")])
        first_peer = SessionPeer(server)
        first_peer.session_id = "session-A"
        first = TasksClient(
            first_peer,
            store=SqliteTaskIdStore(path),
            clock=FakeClock(),
            sleep=FakeClock().sleep,
        )
        await first.connect()
        await first.start_tool("job")
        stored = await SqliteTaskIdStore(path).get(TASK_ID)
        assert stored is not None and stored.context["session"] == "session-A"
        assert stored.context["capabilities"] == FULL_CAPS

        second_peer = SessionPeer(Server(gets=[task_2025("completed")]))
        second = TasksClient(second_peer, store=SqliteTaskIdStore(path))
        entry = await second.rejoin(TASK_ID)
        assert entry is not None and second_peer.joined == ("session-A", "2025-11-25")
        async with second:
            assert second.can_cancel()
            assert isinstance((await second.resume(TASK_ID)).model, CallToolResult)
        assert "initialize" not in second_peer.methods()

    run(scenario())


def test_a_dropped_tasks_result_stream_is_asked_again_after_polling() -> None:
    """Digest C.1.21: A.6/A.7: the client may drop (or lose) the ``tasks/result``
    stream and keep polling."""

    async def scenario() -> None:
        server = Server(
            gets=[
                task_2025("input_required", updated="1"),
                task_2025("completed", updated="2"),
            ]
        )
        attempts: list[int] = []

        async def on_result() -> None:
            attempts.append(len(attempts))
            if len(attempts) == 1:
                raise TransportError(
                    "the event stream ended before the response arrived"
                )

        server.on_result = on_result
        client, peer, _ = make(server)
        await client.connect()
        assert isinstance((await client.call_tool("job")).model, CallToolResult)
        assert len(peer.of("tasks/result")) == 2
        first_result, second_result = (
            peer.sent.index(s) for s in peer.of("tasks/result")
        )
        assert any(
            s.method == "tasks/get" for s in peer.sent[first_result:second_result]
        )

    run(scenario())


def test_tool_result_instead_of_a_task_is_returned_and_garbage_rejected() -> None:
    """Digest C.1.7: mcp 1.30 answers argument errors of a task-augmented call with a
    plain ``CallToolResult``."""

    async def scenario() -> None:
        server = Server()
        error_result = {
            "content": [{"type": "text", "text": "Input validation error"}],
            "isError": True,
        }

        async def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
            if method == "tools/call":
                return error_result if params["name"] == "job" else {"unexpected": True}
            return await server(method, params)

        client = TasksClient(FakePeer(handler), store=MemoryTaskIdStore())
        await client.connect()
        handle = await client.start_tool("job", task=True)
        assert handle.task_id is None and (await handle.result()).is_error is True
        with pytest.raises(InvalidResponse):
            await client.call_tool("must")

    run(scenario())


def test_adopt_follows_a_task_that_other_code_created() -> None:
    """The shared ``adopt`` reads the create result as the schema has it (the task
    nested under ``task``, a left-out ``ttl`` read as null) and follows it to its
    outcome."""

    async def scenario() -> None:
        client, peer, _ = make(Server())
        await client.connect()
        created = task_2025("working")
        del created["ttl"]
        meta = {"io.modelcontextprotocol/model-immediate-response": "working on it"}
        handle = await client.adopt({"task": created, "_meta": meta}, "job")
        assert handle.task_id == TASK_ID and handle.task is not None
        assert handle.task.ttl is None
        assert handle.model_immediate_response == "working on it"
        assert handle.context["name"] == "job"
        result = await handle.result()
        assert result.content[0]["text"] == TEXT_RESULT["content"][0]["text"]
        assert not peer.of("tools/call") and peer.of("tasks/result")

    run(scenario())
