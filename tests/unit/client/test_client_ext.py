"""Checklist C.2 (client on the ``io.modelcontextprotocol/tasks`` extension) against a
scripted peer.

Each test's docstring starts with the checklist item it covers ("Digest C.2.NN", item
NN of ``tasks-digest.md`` section C.2; item 16, the HTTP routing headers, is in
``test_http_transport.py``).
Time is a :class:`FakeClock`, so interval assertions are exact and never flaky.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_tasks_ext.client import (
    EXTENSION_ID,
    HeaderMismatch,
    InputContext,
    InvalidResponse,
    MethodNotFound,
    MissingRequiredClientCapability,
    TaskCancelled,
    TaskExpired,
    TaskFailed,
    TaskNotFound,
    TasksClient,
    TasksClientError,
    UnsupportedProtocolVersion,
    WaitTimeout,
)
from mcp_tasks_ext.models import (
    CompletedTask,
    CreateTaskResult,
    FailedTask,
    InputRequiredTask,
    WorkingTask,
)
from mcp_tasks_ext.task_ids import MemoryTaskIdStore, SqliteTaskIdStore
from mcp_tasks_ext.transport import JsonRpcError
from tests.support.fakes import (
    TASK_ID,
    TEXT_RESULT,
    FakeClock,
    FakePeer,
    StuckClock,
    run,
    task_ext,
)
from tests.support.waiting import until

CREATED: dict[str, Any] = {
    "resultType": "task",
    "taskId": TASK_ID,
    "status": "working",
    "createdAt": "2025-11-25T10:30:00Z",
    "lastUpdatedAt": "2025-11-25T10:30:00Z",
    "ttlMs": None,
    "pollIntervalMs": 500,
}

NAME_REQUEST: dict[str, Any] = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Please enter your name.",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
}

ACK: dict[str, Any] = {"resultType": "complete"}


class Server:
    """A scripted extension server: ``gets`` are answered in order (the last one
    repeats)."""

    def __init__(
        self,
        *,
        call: list[dict[str, Any]] | None = None,
        gets: list[dict[str, Any]] | None = None,
    ) -> None:
        self.calls = call or [CREATED]
        self.gets = gets or [task_ext("completed", result=TEXT_RESULT)]
        self.peer: FakePeer | None = None
        self.on_get: Any = None
        self.on_listen: Any = None
        self.errors: dict[str, JsonRpcError] = {}

    async def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method in self.errors:
            raise self.errors[method]
        if method == "tools/call":
            return self.calls.pop(0) if len(self.calls) > 1 else self.calls[0]
        if method == "tasks/get":
            if self.on_get is not None:
                await self.on_get()
            return self.gets.pop(0) if len(self.gets) > 1 else self.gets[0]
        if method in ("tasks/update", "tasks/cancel"):
            return {
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake"}},
            }
        if method == "subscriptions/listen":
            assert self.on_listen is not None
            return await self.on_listen(params)
        if method == "server/discover":
            return {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"extensions": {EXTENSION_ID: {}}},
                "ttlMs": 3600000,
                "cacheScope": "public",
            }
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


async def accept_name(context: InputContext) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Luca"}}


def test_every_request_carries_protocol_version_and_extension_capability() -> None:
    """Digest C.2.1: every request carries protocol version and extension capability."""

    async def scenario() -> None:
        gets = [
            task_ext("input_required", inputRequests={"name": NAME_REQUEST}),
            task_ext("working", updated="w", poll=None),
            task_ext("completed", updated="c", result=TEXT_RESULT),
        ]
        server = Server(gets=gets)

        async def on_listen(params: dict[str, Any]) -> dict[str, Any]:
            return ACK

        server.on_listen = on_listen
        client, peer, _ = make(server, elicitation_handler=accept_name, subscribe=True)
        await client.call_tool("job")
        await client.cancel_task(TASK_ID)
        assert {
            "tools/call",
            "tasks/get",
            "tasks/update",
            "tasks/cancel",
            "subscriptions/listen",
        } <= set(peer.methods())
        for sent in peer.sent:
            meta = sent.params["_meta"]
            assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
            assert meta["io.modelcontextprotocol/clientCapabilities"]["extensions"] == {
                EXTENSION_ID: {}
            }
            assert (
                meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"] == {}
            )
        assert peer.of("subscriptions/listen")[0].params["notifications"] == {
            "taskIds": [TASK_ID]
        }

    run(scenario())


def test_never_sends_task_param_tasks_result_or_tasks_list() -> None:
    """Digest C.2.2: never sends task param tasks result or tasks list."""

    async def scenario() -> None:
        client, peer, _ = make(
            Server(
                gets=[task_ext("working"), task_ext("completed", result=TEXT_RESULT)]
            )
        )
        await client.call_tool("job", {"a": 1})
        assert "task" not in peer.of("tools/call")[0].params
        assert not {"tasks/result", "tasks/list"} & set(peer.methods())
        # The schema has no list or result role: the shared methods refuse, sending
        # nothing.
        with pytest.raises(TasksClientError, match="tasks/list"):
            await client.list_tasks()
        with pytest.raises(TasksClientError, match="tasks/result"):
            await client.get_task_payload(TASK_ID)
        assert not {"tasks/result", "tasks/list"} & set(peer.methods())

    run(scenario())


def test_tools_call_dispatched_on_result_type() -> None:
    """Digest C.2.3: tools call dispatched on result type."""

    async def scenario() -> None:
        for immediate in (dict(TEXT_RESULT), {**TEXT_RESULT, "resultType": "complete"}):
            client, peer, _ = make(Server(call=[immediate]))
            assert (await client.call_tool("job")).content == TEXT_RESULT["content"]
            assert peer.of("tasks/get") == []
        needs_input = {
            "resultType": "input_required",
            "inputRequests": {"name": NAME_REQUEST},
            "requestState": "opaque-state",
        }
        client, peer, _ = make(
            Server(call=[needs_input, CREATED]), elicitation_handler=accept_name
        )
        assert (await client.call_tool("job", {"x": 1})).raw["isError"] is False
        first, retry = peer.of("tools/call")
        assert retry.id != first.id
        assert retry.params["inputResponses"] == {
            "name": {"action": "accept", "content": {"name": "Luca"}}
        }
        assert retry.params["requestState"] == "opaque-state" and retry.params[
            "arguments"
        ] == {"x": 1}
        odd, _, _ = make(Server(call=[{"resultType": "teleport"}]))
        with pytest.raises(InvalidResponse):
            await odd.call_tool("job")

    run(scenario())


def test_task_result_type_rejected_outside_declared_tools_call() -> None:
    """Digest C.2.4: task result type rejected outside declared tools call."""

    async def scenario() -> None:
        client, _, _ = make(
            Server(gets=[{**task_ext("working"), "resultType": "task"}])
        )
        with pytest.raises(InvalidResponse):
            await client.get_task(TASK_ID)
        undeclared, peer, _ = make(Server(), declare_tasks=False)
        with pytest.raises(InvalidResponse):
            await undeclared.call_tool("job")
        assert (
            "extensions"
            not in peer.sent[0].params["_meta"][
                "io.modelcontextprotocol/clientCapabilities"
            ]
        )

    run(scenario())


def test_create_task_result_decoded_flat_with_null_ttl() -> None:
    """Digest C.2.5: create task result decoded flat with null ttl."""

    async def scenario() -> None:
        client, _, _ = make(Server())
        handle = await client.start_tool("job")
        assert isinstance(handle.task, CreateTaskResult)
        assert (
            handle.task.task_id,
            handle.task.ttl_ms,
            handle.task.poll_interval_ms,
        ) == (TASK_ID, None, 500)

    run(scenario())


def test_poll_interval_from_latest_response() -> None:
    """Digest C.2.6: poll interval from latest response."""

    async def scenario() -> None:
        gets = [
            task_ext("working", poll=1200, updated="a"),
            task_ext("working", poll=None, updated="b"),
            task_ext("working", poll=100, updated="c"),
            task_ext("completed", result=TEXT_RESULT),
        ]
        client, peer, _ = make(Server(gets=gets), default_poll_interval=3.0)
        await client.call_tool("job")
        times = [s.at for s in peer.of("tasks/get")]
        assert [
            round(b - a, 6) for a, b in zip([0.0, *times], times, strict=False)
        ] == [
            0.5,
            1.2,
            3.0,
            0.1,
        ]

    run(scenario())


def test_poll_interval_counts_from_the_answer_of_a_held_get() -> None:
    """Digest C.2.6 ("the sleep is pollIntervalMs from the latest response"): a server
    may hold a ``tasks/get`` of a young task until it changes (ours does, see
    ``Limits.max_poll_hold_ms``); the next poll comes an interval after the answer, not
    after the request (which made a held get cost one more poll at once)."""

    async def scenario() -> None:
        gets = [
            task_ext("working", poll=1000, updated="a"),
            task_ext("completed", result=TEXT_RESULT),
        ]
        server = Server(gets=gets)
        client, peer, clock = make(server)
        held = [0.9]

        async def hold() -> None:  # the first get is answered 0.9 s after it was sent
            if held:
                clock.now += held.pop()

        server.on_get = hold
        await client.call_tool("job")
        times = [s.at for s in peer.of("tasks/get")]
        assert [round(t, 6) for t in times] == [0.5, 2.4]

    run(scenario())


def test_tasks_get_decoded_by_status_and_missing_result_type_is_complete() -> None:
    """Digest C.2.7: tasks get decoded by status and missing result type is complete."""

    async def scenario() -> None:
        raw = task_ext("working")
        del raw["resultType"]
        client, _, _ = make(Server(gets=[raw]))
        assert isinstance(await client.get_task(TASK_ID), WorkingTask)
        for status, extra, kind in [
            (
                "input_required",
                {"inputRequests": {"name": NAME_REQUEST}},
                InputRequiredTask,
            ),
            ("completed", {"result": TEXT_RESULT}, CompletedTask),
            ("failed", {"error": {"code": -32603, "message": "x"}}, FailedTask),
        ]:
            client, _, _ = make(Server(gets=[task_ext(status, **extra)]))
            assert isinstance(await client.get_task(TASK_ID), kind)

    run(scenario())


def test_completed_failed_and_cancelled_outcomes_are_returned_or_raised() -> None:
    """Digest C.2.8: completed failed and cancelled outcomes are returned or raised."""

    async def scenario() -> None:
        tool_error = {
            "content": [{"type": "text", "text": "invalid input"}],
            "isError": True,
        }
        client, _, _ = make(Server(gets=[task_ext("completed", result=tool_error)]))
        assert (await client.call_tool("job")).raw["isError"] is True
        failed = task_ext(
            "failed",
            message="Tool execution failed",
            error={
                "code": -32603,
                "message": "API rate limit exceeded",
                "data": {"retryAfter": 3},
            },
        )
        client, _, _ = make(Server(gets=[failed]))
        with pytest.raises(TaskFailed) as caught:
            await client.call_tool("job")
        assert (caught.value.code, caught.value.message, caught.value.data) == (
            -32603,
            "API rate limit exceeded",
            {"retryAfter": 3},
        )
        client, _, _ = make(
            Server(gets=[task_ext("cancelled", message="stopped by admin")])
        )
        with pytest.raises(TaskCancelled) as cancelled:
            await client.call_tool("job")
        assert cancelled.value.status_message == "stopped by admin"

    run(scenario())


def test_input_requests_answered_once_through_tasks_update() -> None:
    """Digest C.2.9: input requests answered once through tasks update."""

    async def scenario() -> None:
        waiting = task_ext("input_required", inputRequests={"name": NAME_REQUEST})
        gets = [
            waiting,
            {**waiting, "lastUpdatedAt": "later"},
            task_ext("working", updated="w"),
            task_ext("completed", updated="c", result=TEXT_RESULT),
        ]
        asked: list[InputContext] = []

        async def elicit(context: InputContext) -> dict[str, Any]:
            asked.append(context)
            return {"action": "accept", "content": {"name": "Luca"}}

        client, peer, _ = make(Server(gets=gets), elicitation_handler=elicit)
        handle = await client.start_tool("job")
        await handle.result()
        assert [(c.key, c.task_id, c.method) for c in asked] == [
            ("name", TASK_ID, "elicitation/create")
        ]
        assert [s.params["inputResponses"] for s in peer.of("tasks/update")] == [
            {"name": {"action": "accept", "content": {"name": "Luca"}}}
        ]
        assert peer.of("tasks/update")[0].params["taskId"] == TASK_ID
        assert handle.answered_keys == frozenset({"name"})

    run(scenario())


def test_partial_answer_sets_are_allowed() -> None:
    """Digest C.2.10: partial answer sets are allowed."""

    async def scenario() -> None:
        sample = {
            "method": "sampling/createMessage",
            "params": {"messages": [], "maxTokens": 10},
        }
        waiting = task_ext(
            "input_required", inputRequests={"name": NAME_REQUEST, "capital": sample}
        )
        gets = [waiting, task_ext("completed", result=TEXT_RESULT)]

        async def not_yet(context: InputContext) -> None:
            return None  # leaves the sampling request unanswered for now

        client, peer, _ = make(
            Server(gets=gets), elicitation_handler=accept_name, sampling_handler=not_yet
        )
        await client.call_tool("job")
        assert list(peer.of("tasks/update")[0].params["inputResponses"]) == ["name"]

    run(scenario())


def test_empty_complete_acks_accepted_for_update_and_cancel() -> None:
    """Digest C.2.11: empty complete acks accepted for update and cancel."""

    async def scenario() -> None:
        client, peer, _ = make(Server())
        assert (
            await client.update_task(TASK_ID, {"name": {"action": "decline"}}) is None
        )
        assert await client.cancel_task(TASK_ID) is None
        assert peer.methods() == ["tasks/update", "tasks/cancel"]

    run(scenario())


def test_cancel_sends_tasks_cancel_stops_polling_and_drops_state() -> None:
    """Digest C.2.12: cancel sends tasks cancel stops polling and drops state."""

    async def scenario() -> None:
        store = MemoryTaskIdStore()
        stuck = StuckClock()
        client, peer, _ = make(
            Server(gets=[task_ext("working")]), clock=stuck, store=store
        )
        handle = await client.start_tool("job")
        assert [e.task_id for e in await store.pending()] == [TASK_ID]
        waiter = asyncio.ensure_future(handle.result())
        await until(lambda: stuck.sleeps, interval=0, what="the wait is sleeping")
        await handle.cancel()
        with pytest.raises(TaskCancelled):
            await asyncio.wait_for(waiter, 5)
        assert peer.of("tasks/get") == [] and len(peer.of("tasks/cancel")) == 1
        assert all(method != "notifications/cancelled" for method, _ in peer.notified)
        assert await store.pending() == []
        # Configured to keep polling: the final status need not be "cancelled".
        keep, keep_peer, _ = make(
            Server(
                gets=[task_ext("working"), task_ext("completed", result=TEXT_RESULT)]
            ),
            poll_after_cancel=True,
        )
        kept = await keep.start_tool("job")
        await kept.cancel()
        assert (await kept.result()).raw["isError"] is False
        assert len(keep_peer.of("tasks/get")) == 2

    run(scenario())


@pytest.mark.parametrize(
    ("method", "code", "data", "kind"),
    [
        ("tasks/get", -32602, None, TaskNotFound),
        (
            "tasks/get",
            -32021,
            {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}},
            MissingRequiredClientCapability,
        ),
        ("tasks/get", -32601, None, MethodNotFound),
        ("tasks/get", -32020, None, HeaderMismatch),
        (
            "tasks/get",
            -32022,
            {"supported": ["2026-07-28"], "requested": "1999-01-01"},
            UnsupportedProtocolVersion,
        ),
    ],
)
def test_error_codes_mapped_to_typed_errors(
    method: str, code: int, data: Any, kind: type[JsonRpcError]
) -> None:
    """Digest C.2.13: error codes mapped to typed errors."""

    async def scenario() -> None:
        server = Server()
        server.errors[method] = JsonRpcError(code, "boom", data)
        client, _, _ = make(server)
        with pytest.raises(kind) as caught:
            await client.get_task(TASK_ID)
        error = caught.value
        assert (error.code, error.data) == (code, data)
        if isinstance(error, MissingRequiredClientCapability):
            assert error.required_capabilities == {"extensions": {EXTENSION_ID: {}}}
        if isinstance(error, UnsupportedProtocolVersion):
            assert (error.supported, error.requested) == (["2026-07-28"], "1999-01-01")

    run(scenario())


def test_ttl_backstop_ends_wait_with_task_expired() -> None:
    """Digest C.2.14: ttl backstop ends wait with task expired."""

    async def scenario() -> None:
        created = {**CREATED, "ttlMs": 60000}
        store = MemoryTaskIdStore()
        # wall clock: one hour after createdAt (2025-11-25T10:30:00Z = 1764066600).
        client, peer, _ = make(
            Server(call=[created], gets=[task_ext("working", ttl=60000)]),
            store=store,
            wall_clock=lambda: 1764066600.0 + 3600,
        )
        with pytest.raises(TaskExpired):
            await client.call_tool("job")
        assert peer.of("tasks/get") == [] and await store.pending() == []
        lenient, _, _ = make(
            Server(call=[created]),
            ttl_backstop=False,
            wall_clock=lambda: 1764066600.0 + 3600,
        )
        assert (await lenient.call_tool("job")).raw["isError"] is False

    run(scenario())


def test_task_id_saved_on_create_deleted_at_terminal_and_resumable(
    tmp_path: Any,
) -> None:
    """Digest C.2.15: task id saved on create deleted at terminal and resumable."""

    async def scenario() -> None:
        path = tmp_path / "ids.sqlite3"
        server = Server(gets=[task_ext("working")])
        client, _, _ = make(server, store=SqliteTaskIdStore(path))
        with pytest.raises(WaitTimeout):
            await client.call_tool("job", timeout=2.0)
        stored = await SqliteTaskIdStore(path).pending()
        assert [(e.task_id, e.context) for e in stored] == [
            (TASK_ID, {"method": "tools/call", "name": "job"})
        ]
        fresh, peer, _ = make(
            Server(gets=[task_ext("completed", result=TEXT_RESULT)]),
            store=SqliteTaskIdStore(path),
        )
        assert (await fresh.resume(TASK_ID)).raw["content"] == TEXT_RESULT["content"]
        assert peer.methods() == ["tasks/get"]
        assert await SqliteTaskIdStore(path).pending() == []

    run(scenario())


def test_listen_push_for_acknowledged_ids_ends_wait_early() -> None:
    """Digest C.2.17: listen push for acknowledged ids ends wait early."""

    async def scenario() -> None:
        server = Server(gets=[task_ext("working")])

        async def on_listen(params: dict[str, Any]) -> dict[str, Any]:
            assert server.peer is not None
            listen_id = server.peer.of("subscriptions/listen")[0].id
            meta = {"io.modelcontextprotocol/subscriptionId": listen_id}
            await server.peer.to_client_notification(
                "notifications/subscriptions/acknowledged",
                {
                    "_meta": meta,
                    "notifications": {"taskIds": params["notifications"]["taskIds"]},
                },
            )
            await server.peer.to_client_notification(
                "notifications/tasks",
                {
                    "_meta": {"io.modelcontextprotocol/subscriptionId": "someone-else"},
                    **task_ext("failed", error={"code": 1, "message": "wrong stream"}),
                },
            )
            await server.peer.to_client_notification(
                "notifications/tasks",
                {
                    "_meta": meta,
                    **task_ext("completed", updated="z", result=TEXT_RESULT),
                },
            )
            await asyncio.Event().wait()
            return ACK

        server.on_listen = on_listen
        client, peer, _ = make(server, clock=StuckClock(), subscribe=True)
        result = await asyncio.wait_for(client.call_tool("job"), 5)
        assert result.raw["isError"] is False
        assert peer.of("tasks/get") == []

    run(scenario())


def test_unacknowledged_ids_keep_being_polled() -> None:
    """Digest C.2.17: unacknowledged ids keep being polled."""

    async def scenario() -> None:
        server = Server(
            gets=[task_ext("working"), task_ext("completed", result=TEXT_RESULT)]
        )

        async def on_listen(params: dict[str, Any]) -> dict[str, Any]:
            assert server.peer is not None
            meta = {
                "io.modelcontextprotocol/subscriptionId": (
                    server.peer.of("subscriptions/listen")[0].id
                )
            }
            await server.peer.to_client_notification(
                "notifications/subscriptions/acknowledged",
                {"_meta": meta, "notifications": {"taskIds": []}},
            )
            await asyncio.Event().wait()
            return ACK

        server.on_listen = on_listen
        client, peer, _ = make(server, subscribe=True)
        assert (await asyncio.wait_for(client.call_tool("job"), 5)).is_error is False
        assert len(peer.of("tasks/get")) == 2

    run(scenario())


def test_no_poll_races_a_subscription_that_is_still_opening() -> None:
    """The subscription's acknowledgement comes after the young task's first hint
    (a busy client or server): the wait does not poll meanwhile, as the subscription
    brings the state (it used to send a ``tasks/get`` per task then)."""

    async def scenario() -> None:
        server = Server(gets=[task_ext("working")])
        client, peer, clock = make(server, subscribe=True, default_poll_interval=30)

        async def on_listen(params: dict[str, Any]) -> dict[str, Any]:
            assert server.peer is not None
            # acknowledge only once the wait slept past the first hint (0.5 s) and
            # began another sleep
            await until(lambda: len(clock.sleeps) >= 2, interval=0, what="2 sleeps")
            meta = {
                "io.modelcontextprotocol/subscriptionId": (
                    server.peer.of("subscriptions/listen")[0].id
                )
            }
            await server.peer.to_client_notification(
                "notifications/subscriptions/acknowledged",
                {"_meta": meta, "notifications": {"taskIds": [TASK_ID]}},
            )
            done = task_ext("completed", updated="z", result=TEXT_RESULT)
            await server.peer.to_client_notification(
                "notifications/tasks", {"_meta": meta, **done}
            )
            return ACK

        server.on_listen = on_listen
        assert (await asyncio.wait_for(client.call_tool("job"), 5)).is_error is False
        assert peer.of("tasks/get") == []

    run(scenario())


def test_discover_reads_extension_and_leaves_declaration_unchanged() -> None:
    """Digest C.2.18: discover reads extension and leaves declaration unchanged."""

    async def scenario() -> None:
        client, peer, _ = make(Server())
        before = client.request_meta()
        discovered = await client.discover()
        assert TasksClient.server_supports_tasks(discovered)
        assert discovered["ttlMs"] == 3600000
        assert client.request_meta() == before
        assert peer.of("server/discover")[0].params["_meta"] == before

    run(scenario())


def test_2025_package_never_declares_the_extension() -> None:
    """Digest C.2.19: 2025 package never declares the extension."""
    from mcp_tasks_2025_11_25.client import TasksClient as LegacyClient

    async def scenario() -> None:
        async def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
            if method == "initialize":
                return {"protocolVersion": "2025-11-25", "capabilities": {}}
            return TEXT_RESULT

        peer = FakePeer(handler)
        client = LegacyClient(peer, store=MemoryTaskIdStore())
        await client.connect()
        await client.call_tool("job")
        for sent in peer.sent:
            assert "io.modelcontextprotocol/clientCapabilities" not in (
                sent.params.get("_meta") or {}
            )
            assert EXTENSION_ID not in str(sent.params)

    run(scenario())


def test_non_working_seed_status_polls_at_once() -> None:
    async def scenario() -> None:
        created = {**CREATED, "status": "input_required"}
        client, peer, clock = make(
            Server(
                call=[created],
                gets=[
                    task_ext("input_required", inputRequests={"name": NAME_REQUEST}),
                    task_ext("completed", result=TEXT_RESULT),
                ],
            ),
            elicitation_handler=accept_name,
        )
        await client.call_tool("job")
        assert peer.of("tasks/get")[0].at == 0.0

    run(scenario())


def test_cancelling_the_waiter_sends_tasks_cancel_and_leaks_no_tasks() -> None:
    async def scenario() -> None:
        store = MemoryTaskIdStore()
        stuck = StuckClock()
        client, peer, _ = make(
            Server(gets=[task_ext("working")]),
            clock=stuck,
            cancel_on_abort=True,
            store=store,
        )
        before = asyncio.all_tasks()
        waiter = asyncio.ensure_future(client.call_tool("job"))
        await until(lambda: stuck.sleeps, interval=0, what="the wait is sleeping")
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert asyncio.all_tasks() == before
        assert len(peer.of("tasks/cancel")) == 1
        assert await store.pending() == []

    run(scenario())


def test_server_requests_are_answered_without_a_related_task_meta_key() -> None:
    """The shared client answers ``ping`` and input requests it has a handler for; the
    extension's tables have no related-task ``_meta`` key, so nothing is echoed and the
    handler sees no task."""

    async def scenario() -> None:
        seen: list[InputContext] = []

        async def elicit(context: InputContext) -> dict[str, Any]:
            seen.append(context)
            return {"action": "decline"}

        client, peer, _ = make(Server(), elicitation_handler=elicit)
        assert await peer.to_client_request("ping", {}) == {}
        related = {"io.modelcontextprotocol/related-task": {"taskId": TASK_ID}}
        params = {
            "message": "ok?",
            "requestedSchema": {"type": "object", "properties": {}},
            "_meta": related,
        }
        reply = await peer.to_client_request("elicitation/create", params)
        assert reply == {"action": "decline"}
        assert seen[0].task_id is None
        with pytest.raises(JsonRpcError) as refused:
            await peer.to_client_request("sampling/createMessage", {})
        assert refused.value.code == -32601

    run(scenario())


def test_call_progress_is_reported_and_task_options_are_refused() -> None:
    """``tools/call`` is the shared core's in both revisions: the extension client takes
    ``on_progress`` (its token beside the per-request ``_meta``), and
    ``task=``/``ttl=``, which only a schema whose ``tools/call`` asks for a task can
    send, stop before anything is sent."""

    async def scenario() -> None:
        progress: list[tuple[float, float | None, str | None]] = []
        server = Server()

        async def on_get() -> None:
            assert server.peer is not None
            token = server.peer.of("tools/call")[0].params["_meta"]["progressToken"]
            await server.peer.to_client_notification(
                "notifications/progress",
                {"progressToken": token, "progress": 1, "total": 2, "message": "half"},
            )

        server.on_get = on_get
        client, peer, _ = make(server)
        result = await client.call_tool(
            "job", on_progress=lambda p, t, m: progress.append((p, t, m))
        )
        assert result.raw["content"] == TEXT_RESULT["content"]
        assert progress == [(1.0, 2.0, "half")]
        meta = peer.of("tools/call")[0].params["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        for options in ({"task": True}, {"task": False}, {"ttl": 1000}):
            with pytest.raises(TasksClientError, match="server decides"):
                await client.start_tool("job", **options)
        assert len(peer.of("tools/call")) == 1

    run(scenario())
