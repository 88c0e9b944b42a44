"""Server acceptance: ``examples/server.py`` serves both revisions on one port.

The dual example server (``mcp_tasks.server.TasksServer``: a 2025-11-25 server and a
Tasks-extension server on one store, with one set of tools) runs as a real process
and is driven over HTTP (item 1, every real peer at once, is in
``tests/interop/test_dual_server_peers.py``; item 5, in process, in
``tests/unit/server/test_dual_server.py``):

2. a 2025-11-25 client that only polls ``tasks/get`` gets the task's input request on
   the GET stream (the scenarios of ``test_get_stream_input``);
3. a task belongs to its principal whichever revision created it or reads it, and both
   revisions list the same tools;
4. hostile input never yields HTTP 500 or a traceback in the server's log.

The single-revision module's tests are called here as plain functions on the dual
server, so the expectations stay in one place.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.support.procs import ServerHandle
from tests.support.servers import (
    error_of,
    example_server,
    ext_message,
    headers_for,
    initialize,
    message_2025,
    no_traceback,
    result_of,
)

from . import test_get_stream_input as get_stream

pytestmark = pytest.mark.anyio


EXAMPLE_TOOLS = [
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
    "long_report",
    "ask_name",
    "weather",
    "brew",
    "order",
    "must_task",
]
"""The tools ``examples/server.py`` registers, in registration order."""

ALICE = "Bearer A"
BOB = "Bearer B"


@pytest.fixture(scope="module")
def dual_server() -> Iterator[ServerHandle]:
    """``examples/server.py`` (both revisions) with an in-memory store."""
    with example_server("server", "--memory") as handle:
        yield handle


# -- item 2: a polling-only 2025-11-25 client gets input on the GET stream -------------


@pytest.mark.parametrize(
    "scenario",
    [
        get_stream.test_get_stream_delivers_a_task_input_request_to_a_polling_client,
        get_stream.test_request_pending_before_the_get_stream_opens_is_delivered_on_it,
    ],
    ids=["stream_open_first", "request_pending_first"],
)
async def test_polling_2025_client_gets_input_on_the_get_stream(
    dual_server: ServerHandle, scenario: Callable[[ServerHandle], Any]
) -> None:
    """Issue 10, item 2: The scenarios of ``test_get_stream_input`` (the task
    completes once the answer to the request the GET stream carried is POSTed back),
    on the dual server."""
    await scenario(dual_server)
    no_traceback(dual_server)


# -- item 3: one store, one owner per task, one set of tools ---------------------------


async def _ext_post(
    client: httpx.AsyncClient,
    url: str,
    method: str,
    params: dict[str, Any],
    authorization: str | None,
) -> dict[str, Any]:
    """One extension request (no session), as ``authorization``; the JSON-RPC answer."""
    message = ext_message(method, params)
    auth = {} if authorization is None else {"authorization": authorization}
    response = await client.post(
        url, json=message, headers=headers_for(message, **auth)
    )
    assert response.status_code < 500, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def _session_post(
    client: httpx.AsyncClient,
    url: str,
    session: dict[str, str],
    method: str,
    params: dict[str, Any],
) -> dict[str, Any]:
    """One 2025-11-25 request in ``session`` (headers of ``initialize``); its answer."""
    response = await client.post(
        url, json=message_2025(method, params), headers=session
    )
    assert response.status_code < 500, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def _listed_task_ids(
    client: httpx.AsyncClient, url: str, session: dict[str, str]
) -> set[str]:
    """Every task ``tasks/list`` shows in a 2025-11-25 session (all pages)."""
    found: set[str] = set()
    params: dict[str, Any] = {}
    for _ in range(100):  # a cursor that never ends the list fails, not hangs
        page = result_of(
            await _session_post(client, url, session, "tasks/list", params)
        )
        found |= {task["taskId"] for task in page["tasks"]}
        if not page.get("nextCursor"):
            return found
        params = {"cursor": page["nextCursor"]}
    raise AssertionError(f"tasks/list had no last page after 100 pages: {found}")


def _unknown_task(answer: dict[str, Any]) -> None:
    """The answer is the not-found error of an unknown task."""
    assert error_of(answer)["code"] == -32602, answer


async def test_a_2025_task_is_visible_through_the_extension_to_its_owner_only(
    dual_server: ServerHandle,
) -> None:
    """Issue 10, item 3: a 2025 task is visible through the extension to its owner
    only."""
    url = dual_server.url
    async with httpx.AsyncClient(timeout=20) as client:
        alice = await initialize(client, url, ALICE)
        created = await _session_post(
            client,
            url,
            alice,
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 0.2}, "task": {}},
        )
        task_id = result_of(created)["task"]["taskId"]
        owner = await _ext_post(client, url, "tasks/get", {"taskId": task_id}, ALICE)
        other = await _ext_post(client, url, "tasks/get", {"taskId": task_id}, BOB)
        nobody = await _ext_post(client, url, "tasks/get", {"taskId": task_id}, None)
        cancel = await _ext_post(client, url, "tasks/cancel", {"taskId": task_id}, BOB)
    assert result_of(owner)["taskId"] == task_id
    assert result_of(owner)["status"] in {"working", "completed"}
    _unknown_task(other)
    _unknown_task(nobody)
    _unknown_task(cancel)
    no_traceback(dual_server)


async def test_an_extension_task_is_visible_through_2025_to_its_owner_only(
    dual_server: ServerHandle,
) -> None:
    """Issue 10, item 3: an extension task is visible through 2025 to its owner only."""
    url = dual_server.url
    async with httpx.AsyncClient(timeout=20) as client:
        created = await _ext_post(
            client,
            url,
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 0.2}},
            ALICE,
        )
        task_id = result_of(created)["taskId"]
        assert result_of(created)["resultType"] == "task"
        alice = await initialize(client, url, ALICE)
        bob = await initialize(client, url, BOB)
        owner = await _session_post(
            client, url, alice, "tasks/get", {"taskId": task_id}
        )
        other = await _session_post(client, url, bob, "tasks/get", {"taskId": task_id})
        result = await _session_post(
            client, url, bob, "tasks/result", {"taskId": task_id}
        )
        listed_by_owner = await _listed_task_ids(client, url, alice)
        listed_by_other = await _listed_task_ids(client, url, bob)
    assert result_of(owner)["taskId"] == task_id
    _unknown_task(other)
    _unknown_task(result)
    assert task_id in listed_by_owner
    assert task_id not in listed_by_other
    no_traceback(dual_server)


async def test_both_revisions_list_the_same_tools(
    dual_server: ServerHandle,
) -> None:
    """Issue 10, item 3: both revisions list the same tools."""
    url = dual_server.url
    async with httpx.AsyncClient(timeout=20) as client:
        session = await initialize(client, url)
        legacy = result_of(await _session_post(client, url, session, "tools/list", {}))
        extension = result_of(await _ext_post(client, url, "tools/list", {}, None))
    assert "nextCursor" not in legacy and "nextCursor" not in extension
    assert [t["name"] for t in legacy["tools"]] == EXAMPLE_TOOLS
    assert [t["name"] for t in extension["tools"]] == EXAMPLE_TOOLS
    for old, new in zip(legacy["tools"], extension["tools"], strict=True):
        assert old["inputSchema"] == new["inputSchema"]
        assert old["description"] == new["description"]


# -- item 4: hostile input against the dual endpoint -----------------------------------

ACCEPT = {"accept": "application/json, text/event-stream"}
META_OK = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}


def _routed(method: str, version: str = "2026-07-28") -> dict[str, str]:
    """The routing headers of an extension request (SEP-2243), so that the request
    reaches the check of its ``_meta``."""
    return {"mcp-method": method, "mcp-protocol-version": version}


def _rpc(method: str, params: Any = None, **fields: Any) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method, **fields}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


HOSTILE: dict[str, tuple[dict[str, str], str, int]] = {
    # name: (extra headers, body, expected JSON-RPC error code)
    "not_json": ({}, "this is not JSON", -32700),
    "truncated_json": ({}, '{"jsonrpc": "2.0", "id": 1, "method": ', -32700),
    "empty_body": ({}, "", -32700),
    "invalid_utf8": ({}, "\udcff", -32700),
    "json_array": ({}, "[1, 2, 3]", -32600),
    "json_batch": ({}, "[" + _rpc("tools/list") + "]", -32600),
    "json_string": ({}, '"initialize"', -32600),
    "bogus_session_request": (
        {"mcp-session-id": "bogus"},
        _rpc("tools/list"),
        -32600,
    ),
    "bogus_session_ext_request": (
        {"mcp-session-id": "bogus"},
        _rpc("tools/list", {"_meta": META_OK}),
        -32600,
    ),
    "bogus_session_initialize": (
        {"mcp-session-id": "bogus"},
        _rpc(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "0"},
            },
        ),
        -32600,
    ),
    "initialize_params_string": ({}, _rpc("initialize", "garbage"), -32602),
    "initialize_params_array": ({}, _rpc("initialize", [1, {"a": None}]), -32602),
    "initialize_without_params": ({}, _rpc("initialize"), -32602),
    "initialize_garbage_fields": (
        {},
        _rpc(
            "initialize",
            {"protocolVersion": 5, "capabilities": [], "clientInfo": None},
        ),
        -32602,
    ),
    "initialize_bad_id": ({}, _rpc("initialize", {}, id={"no": 1}), -32600),
    "ext_meta_string": (
        _routed("tools/list"),
        _rpc("tools/list", {"_meta": "x"}),
        -32602,
    ),
    "ext_meta_null": (
        _routed("tools/list"),
        _rpc("tools/list", {"_meta": None}),
        -32602,
    ),
    "ext_meta_wrong_types": (
        _routed("tasks/get"),
        _rpc(
            "tasks/get",
            {
                "taskId": "t",
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": ["2026-07-28"],
                    "io.modelcontextprotocol/clientCapabilities": "all",
                },
            },
        ),
        -32602,
    ),
    "ext_meta_unknown_version": (
        _routed("tools/list", "1999-01-01"),
        _rpc(
            "tools/list",
            {
                "_meta": {
                    **META_OK,
                    "io.modelcontextprotocol/protocolVersion": "1999-01-01",
                }
            },
        ),
        -32022,
    ),
    "ext_meta_only_version": (
        {**_routed("tools/call"), "mcp-name": "greet"},
        _rpc(
            "tools/call",
            {
                "name": "greet",
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
            },
        ),
        -32602,
    ),
    "ext_params_array": (_routed("tools/list"), _rpc("tools/list", [META_OK]), -32602),
    "ext_without_routing_headers": ({}, _rpc("tools/list", {"_meta": META_OK}), -32020),
    "ext_version_header_mismatch": (
        _routed("tools/list", "2025-11-25"),
        _rpc("tools/list", {"_meta": META_OK}),
        -32020,
    ),
    "ext_nan_argument": (
        {**_routed("tools/call"), "mcp-name": "greet"},
        _rpc("tools/call", {"name": "greet", "_meta": META_OK}).replace(
            '"greet"', '"greet", "arguments": {"name": NaN}'
        ),
        -32602,
    ),
}


async def _assert_json_rpc_error(response: httpx.Response, code: int) -> None:
    assert response.status_code < 500, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert error_of(response.json())["code"] == code, response.text


@pytest.fixture()
def hostile_server() -> Iterator[ServerHandle]:
    """A dual server of its own, so that its log holds only what these requests
    caused."""
    with example_server("server", "--memory") as handle:
        yield handle


async def test_hostile_posts_never_yield_500_or_a_traceback(
    hostile_server: ServerHandle,
) -> None:
    """Issue 10, item 4: hostile posts never yield 500 or a traceback."""
    url = hostile_server.url
    outcomes: dict[str, tuple[int, Any]] = {}
    async with httpx.AsyncClient(timeout=10) as client:
        for name, (headers, body, _) in HOSTILE.items():
            payload = body.encode("utf-8", "surrogateescape")
            response = await client.post(
                url,
                content=payload,
                headers={**ACCEPT, "content-type": "application/json", **headers},
            )
            assert response.status_code < 500, (name, response.text)
            outcomes[name] = (response.status_code, response.json())
        # the server still serves both revisions afterwards
        session = await initialize(client, url)
        listed = await client.post(
            url, json=message_2025("tools/list"), headers=session
        )
        extension = await _ext_post(client, url, "tools/list", {}, None)
    wrong = {
        name: outcome
        for name, outcome in outcomes.items()
        if error_of(outcome[1])["code"] != HOSTILE[name][2]
    }
    assert not wrong, wrong
    assert [t["name"] for t in result_of(listed.json())["tools"]] == EXAMPLE_TOOLS
    assert [t["name"] for t in result_of(extension)["tools"]] == EXAMPLE_TOOLS
    no_traceback(hostile_server)


async def test_get_and_delete_with_a_bogus_session_are_not_found(
    hostile_server: ServerHandle,
) -> None:
    """Issue 10, item 4: get and delete with a bogus session are not found."""
    url = hostile_server.url
    bogus = {**ACCEPT, "mcp-session-id": "bogus"}
    async with httpx.AsyncClient(timeout=10) as client:
        got = await client.get(url, headers=bogus)
        deleted = await client.delete(url, headers=bogus)
        put = await client.put(url, content=b"{}", headers=ACCEPT)
    assert got.status_code == 404, got.text
    assert deleted.status_code == 404, deleted.text
    assert put.status_code == 405, put.text
    no_traceback(hostile_server)


async def test_a_failed_initialize_names_no_session(
    hostile_server: ServerHandle,
) -> None:
    """Issue 10, item 4: The session a refused ``initialize`` opened is closed again:
    the answer must not hand its id to the client (every later request with it would
    be 404)."""
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(
            hostile_server.url,
            content=_rpc("initialize", "garbage").encode(),
            headers={**ACCEPT, "content-type": "application/json"},
        )
    await _assert_json_rpc_error(response, -32602)
    assert "mcp-session-id" not in response.headers, dict(response.headers)
    no_traceback(hostile_server)


async def test_an_initialize_notification_opens_no_session(
    hostile_server: ServerHandle,
) -> None:
    """Issue 10, item 4: ``initialize`` without an id is no request: it must not open
    (and leak) a session, nor be answered with a session id."""
    body = json.dumps({"jsonrpc": "2.0", "method": "initialize", "params": {}})
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(
            hostile_server.url,
            content=body.encode(),
            headers={**ACCEPT, "content-type": "application/json"},
        )
    assert response.status_code == 400, response.text
    assert "mcp-session-id" not in response.headers, dict(response.headers)
    await _assert_json_rpc_error(response, -32600)
    no_traceback(hostile_server)
