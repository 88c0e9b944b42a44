"""The client's polling loop follows the generated ``protocol`` tables, not status
names.

The tables of a golden package are widened in place (the way a schema edit plus a
status classification in the target configuration would widen them on regeneration):
an extra active status keeps the wait polling, an unknown status is an invalid response,
a schema without ``tasks/update`` never gets one sent, and task fields the runtime does
not know stay on the snapshots.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import pytest

from mcp_tasks_2025_11_25.client import InvalidResponse as LegacyInvalidResponse
from mcp_tasks_2025_11_25.client import TasksClient as LegacyClient
from mcp_tasks_ext import protocol_ext as protocol
from mcp_tasks_ext.client import (
    InvalidResponse,
    TaskEnded,
    TasksClient,
    TasksClientError,
)
from mcp_tasks_ext.models import Task, WorkingTask
from mcp_tasks_ext.task_ids import MemoryTaskIdStore
from tests.support.fakes import TASK_ID, TEXT_RESULT, FakePeer, run, task_2025, task_ext

from .test_client_ext import NAME_REQUEST, Server, accept_name, make


class PausedTask(WorkingTask):
    """What the generator makes of a ``PausedTask`` variant copied from
    ``WorkingTask``."""

    status: Literal["paused"] = "paused"  # type: ignore[assignment]


def test_configured_active_status_keeps_polling_and_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(protocol.TASK_BY_STATUS, "paused", PausedTask)
    monkeypatch.setattr(
        protocol, "ACTIVE_STATUSES", protocol.ACTIVE_STATUSES | {"paused"}
    )

    async def scenario() -> None:
        gets = [
            task_ext("paused", updated="p1"),
            task_ext("paused", updated="p2", message="on hold"),
            task_ext("working", updated="w"),
            task_ext("completed", updated="c", result=TEXT_RESULT),
        ]
        client, peer, _ = make(Server(gets=gets))
        seen: list[str] = []
        result = await client.call_tool(
            "job", on_status=lambda task: seen.append(str(task.status))
        )
        assert result.raw["content"] == TEXT_RESULT["content"]
        assert seen == ["working", "paused", "paused", "working", "completed"]
        assert len(peer.of("tasks/get")) == 4

    run(scenario())


def test_unknown_status_is_an_invalid_response() -> None:
    async def scenario() -> None:
        client, _, _ = make(Server(gets=[task_ext("paused")]))
        with pytest.raises(InvalidResponse, match="paused"):
            await client.call_tool("job")

    run(scenario())


def test_unknown_status_is_an_invalid_response_in_2025() -> None:
    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return task_2025("paused")

    async def scenario() -> None:
        client = LegacyClient(FakePeer(answer))
        with pytest.raises(LegacyInvalidResponse, match="paused"):
            await client.get_task(TASK_ID)

    run(scenario())


def test_without_tasks_update_input_fails_the_wait_and_nothing_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(protocol.ROLES, "update")  # the roles of protocol.TABLES too

    async def scenario() -> None:
        waiting = task_ext("input_required", inputRequests={"name": NAME_REQUEST})
        client, peer, _ = make(Server(gets=[waiting]), elicitation_handler=accept_name)
        with pytest.raises(TasksClientError, match="tasks/update"):
            await client.call_tool("job")
        with pytest.raises(TasksClientError, match="tasks/update"):
            await client.update_task(TASK_ID, {"name": {"action": "cancel"}})
        assert not peer.of("tasks/update")

    run(scenario())


def test_task_fields_the_runtime_does_not_know_stay_on_the_snapshots() -> None:
    async def scenario() -> None:
        gets = [
            task_ext("working", updated="w", progress=0.5),
            task_ext("completed", updated="c", progress=1.0, result=TEXT_RESULT),
        ]
        client, _, _ = make(Server(gets=gets))
        seen: list[Any] = []
        await client.call_tool(
            "job", on_status=lambda task: seen.append(task.to_wire().get("progress"))
        )
        assert seen == [None, 0.5, 1.0]

    run(scenario())


class ArchivedTask(WorkingTask):
    """A configured terminal status whose variant carries no outcome."""

    status: Literal["archived"] = "archived"  # type: ignore[assignment]


class ListingServer(Server):
    """The scripted extension server, also answering ``tasks/list`` (two pages) and
    ``tasks/result``."""

    async def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tasks/list":
            if params.get("cursor") is None:
                page = [task_ext("working", task_id="a")]
                return {"resultType": "complete", "tasks": page, "nextCursor": "2"}
            return {"resultType": "complete", "tasks": [task_ext("completed")]}
        if method == "tasks/result":
            return dict(TEXT_RESULT)
        return await super().__call__(method, params)


def _widened(monkeypatch: pytest.MonkeyPatch, **changes: Any) -> None:
    """Regenerated tables of an extension schema edited as ``changes`` say."""
    tables = dataclasses.replace(protocol.TABLES, **changes)
    monkeypatch.setattr(TasksClient, "tables", tables)


def test_a_list_role_in_the_schema_gets_list_tasks_following_next_cursor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _widened(monkeypatch, roles={**protocol.ROLES, "list": "tasks/list"})

    async def scenario() -> None:
        client, peer, _ = make(ListingServer())
        tasks = await client.list_tasks()
        assert [(t.task_id, t.status) for t in tasks] == [
            ("a", "working"),
            (TASK_ID, "completed"),
        ]
        # Listed entries are the schema's Task: a completed one needs no inline result.
        assert all(type(t) is Task for t in tasks)
        assert [s.params.get("cursor") for s in peer.sent] == [None, "2"]

    run(scenario())


def test_a_result_role_fetches_the_outcome_a_terminal_status_does_not_carry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _widened(
        monkeypatch,
        roles={**protocol.ROLES, "result": "tasks/result"},
        terminal=protocol.TERMINAL_STATUSES | {"archived"},
        task_by_status={**protocol.TASK_BY_STATUS, "archived": ArchivedTask},
    )

    async def scenario() -> None:
        client, peer, _ = make(ListingServer(gets=[task_ext("archived")]))
        result = await client.call_tool("job")
        assert result.raw["content"] == TEXT_RESULT["content"]
        assert peer.of("tasks/result")[0].params["taskId"] == TASK_ID

    run(scenario())


def test_without_a_result_role_a_terminal_status_without_outcome_ends_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _widened(
        monkeypatch,
        terminal=protocol.TERMINAL_STATUSES | {"archived"},
        task_by_status={**protocol.TASK_BY_STATUS, "archived": ArchivedTask},
    )

    async def scenario() -> None:
        client, peer, _ = make(ListingServer(gets=[task_ext("archived")]))
        with pytest.raises(TaskEnded, match="archived"):
            await client.call_tool("job")
        assert not peer.of("tasks/result")

    run(scenario())


def test_with_a_result_role_and_no_update_role_input_waits_for_tasks_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Input then travels as server requests on the ``tasks/result`` stream: the wait
    does not fail for the missing ``tasks/update``."""
    roles = {k: v for k, v in protocol.ROLES.items() if k != "update"}
    _widened(monkeypatch, roles={**roles, "result": "tasks/result"})

    async def scenario() -> None:
        waiting = task_ext("input_required", inputRequests={"name": NAME_REQUEST})
        server = ListingServer(gets=[waiting])
        client, peer, _ = make(server, elicitation_handler=accept_name)
        result = await client.call_tool("job")
        assert result.raw["content"] == TEXT_RESULT["content"]
        assert peer.of("tasks/result") and not peer.of("tasks/update")

    run(scenario())


class AskingClient(TasksClient):
    """The extension regenerated from a schema whose ``tools/call`` asks for its task in
    ``params.task`` (the profile's ``task_request``), with no capability path for it."""

    tables = dataclasses.replace(protocol.TABLES, task_request_field="task")


def test_a_task_request_field_makes_the_stateless_client_ask_for_tasks() -> None:
    """Which field asks for a task is table data: the stateless client then asks as the
    tool's ``taskSupport`` allows, beside its per-request ``_meta``, and refuses what
    the tool forbids before sending anything."""

    async def scenario() -> None:
        server = Server()

        async def tools(method: str, params: dict[str, Any]) -> dict[str, Any]:
            if method == "tools/list":
                listed = [
                    {"name": "job", "execution": {"taskSupport": "optional"}},
                    {"name": "quick", "execution": {"taskSupport": "forbidden"}},
                ]
                return {"resultType": "complete", "tools": listed}
            return await server(method, params)

        peer = FakePeer(tools)
        client = AskingClient(peer, store=MemoryTaskIdStore(), sleep=_no_sleep)
        server.peer = peer
        assert (await client.call_tool("job", ttl=5000)).raw["isError"] is False
        sent = peer.of("tools/call")[0].params
        assert sent["task"] == {"ttl": 5000}
        assert sent["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        with pytest.raises(TasksClientError, match="does not support tasks"):
            await client.start_tool("quick", task=True)
        assert len(peer.of("tools/call")) == 1
        plain = TasksClient(FakePeer(tools), store=MemoryTaskIdStore())
        with pytest.raises(TasksClientError, match="server decides"):
            await plain.start_tool("job", task=True)

    run(scenario())


async def _no_sleep(seconds: float) -> None:
    return None
