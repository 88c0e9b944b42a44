"""Issue 10, server acceptance: ``examples/server.py`` serves both revisions on one
port.

The dual example server (``mcp_tasks.server.TasksServer``: a 2025-11-25 server and a
Tasks-extension server on one store, with one set of tools) runs as a real process
and is driven over HTTP:

1. the conformance suite's ten ``tasks-*`` scenarios, the ``mcp==1.30.0`` and
   TypeScript SDK 1.32.2 clients (2025-11-25) and the ``fastmcp[tasks]`` client (the
   extension), all at the same time against one server process; each passes what the
   single-revision tests (``test_interop_conformance``, ``test_interop_clients``)
   expect of it;
2. a 2025-11-25 client that only polls ``tasks/get`` gets the task's input request on
   the GET stream (the scenarios of ``test_get_stream_input``);
3. a task belongs to its principal whichever revision created it or reads it, and both
   revisions list the same tools;
4. hostile input never yields HTTP 500 or a traceback in the server's log.

The single-revision modules' tests are called here as plain functions on the dual
server's results, so the expectations stay in one place.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain, zip_longest
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.peers import (
    CONFORMANCE_TASK_SCENARIOS,
    require,
    run_client,
    run_conformance,
)
from tests.support.procs import ServerHandle

from . import test_get_stream_input as get_stream
from . import test_interop_clients as single_revision_clients
from . import test_interop_conformance as single_revision_conformance
from .conftest import error_of, example_server, ext_message, message_2025, result_of
from .test_hardening import initialize, no_traceback
from .test_http_ext import headers_for

pytestmark = pytest.mark.anyio

CONFORMANCE_CHECKS_PASSED = 44
"""``SUCCESS`` checks of the ten scenarios (``tasks-status-notifications`` only
skips)."""

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


# -- item 1: every peer at once against one dual server --------------------------------


@dataclass
class Run:
    """One peer program run against the server: what it was and when it ran."""

    kind: str
    """``conformance`` or the client peer's name."""
    name: str
    """The scenario, or the case of ``test_interop_clients.CASES``."""
    call: Callable[[], Any]
    started: float = 0.0
    ended: float = 0.0
    outcome: Any = None
    failure: BaseException | None = None

    def __call__(self) -> Run:
        self.started = time.monotonic()
        try:
            self.outcome = self.call()
        except Exception as error:  # reported with the others below
            self.failure = error
        self.ended = time.monotonic()
        return self


def _conformance_run(url: str, work: Path, scenario: str) -> Run:
    def call() -> list[dict[str, Any]]:
        out = work / scenario
        out.mkdir()
        proc = run_conformance(url, scenario, out)
        found = list(out.glob("*/checks.json"))
        assert (
            found
        ), f"{scenario}: no checks.json\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        checks: list[dict[str, Any]] = json.loads(found[0].read_text())
        return checks

    return Run("conformance", scenario, call)


def _client_run(url: str, peer: str, case: str) -> Run:
    tool, arguments, options = single_revision_clients.CASES[case]

    def call() -> dict[str, Any]:
        return run_client(peer, url, tool, arguments, timeout=120, **options)

    return Run(peer, case, call)


def _all_kinds_overlapped(runs: list[Run]) -> bool:
    """Whether at some moment a run of every kind was in progress."""
    kinds = {run.kind for run in runs}
    return any(
        {r.kind for r in runs if r.started <= run.started <= r.ended} == kinds
        for run in runs
    )


def _failures_of(label: str, check: Callable[..., None], *args: Any) -> list[str]:
    """``label`` and the assertion message of ``check(*args)``, if it fails."""
    try:
        check(*args)
    except AssertionError as error:
        return [f"{label}: {check.__name__}: {error}"]
    return []


def test_item1_conformance_and_three_sdk_clients_at_once_on_one_port(
    tmp_path: Path,
) -> None:
    """One ``examples/server.py`` process, SQLite store; 10 scenarios and 21 client
    runs interleaved on 8 threads, so that all four kinds of peer run together."""
    require("conformance")
    for peer in single_revision_clients.PEERS:
        require(peer)
    with example_server("server", "--db", str(tmp_path / "tasks.sqlite3")) as server:
        conformance = [
            _conformance_run(server.url, tmp_path, scenario)
            for scenario in CONFORMANCE_TASK_SCENARIOS
        ]
        clients = [
            [
                _client_run(server.url, peer, case)
                for case in single_revision_clients.CASES
            ]
            for peer in single_revision_clients.PEERS
        ]
        # round robin: the first threads start one run of every kind
        interleaved = [
            run
            for run in chain.from_iterable(zip_longest(conformance, *clients))
            if run is not None
        ]
        with ThreadPoolExecutor(max_workers=8) as pool:
            runs = list(pool.map(lambda run: run(), interleaved))
        log = server.log_tail(400)

    broken = [f"{r.kind} {r.name}: {r.failure!r}" for r in runs if r.failure]
    assert not broken, "\n".join(broken)
    assert _all_kinds_overlapped(runs), [
        (r.kind, r.name, r.started, r.ended) for r in runs
    ]

    failures: list[str] = []
    results = {r.name: r.outcome for r in conformance}
    for scenario in CONFORMANCE_TASK_SCENARIOS:
        failures += _failures_of(
            scenario,
            single_revision_conformance.test_conformance_scenario_passes,
            scenario,
            results,
        )
    passed = sum(
        1 for checks in results.values() for c in checks if c["status"] == "SUCCESS"
    )
    if passed != CONFORMANCE_CHECKS_PASSED:
        failures.append(
            f"{passed} conformance checks passed, not {CONFORMANCE_CHECKS_PASSED}:"
            f" {single_revision_conformance.summary(results)}"
        )

    expectations = [
        getattr(single_revision_clients, name)
        for name in dir(single_revision_clients)
        if name.startswith("test_client_")
    ]
    assert len(expectations) >= 6
    for peer, peer_runs in zip(single_revision_clients.PEERS, clients, strict=True):
        reports = {r.name: r.outcome for r in peer_runs}
        for expectation in expectations:
            failures += _failures_of(peer, expectation, (peer, reports))
    assert not failures, "\n\n".join(failures)
    assert "Traceback" not in log, log


# -- item 2: a polling-only 2025-11-25 client gets input on the GET stream -------------


@pytest.mark.parametrize(
    "scenario",
    [
        get_stream.test_get_stream_delivers_a_task_input_request_to_a_polling_client,
        get_stream.test_request_pending_before_the_get_stream_opens_is_delivered_on_it,
    ],
    ids=["stream_open_first", "request_pending_first"],
)
async def test_item2_polling_2025_client_gets_input_on_the_get_stream(
    dual_server: ServerHandle, scenario: Callable[[ServerHandle], Any]
) -> None:
    """The scenarios of ``test_get_stream_input`` (the task completes once the answer
    to the request the GET stream carried is POSTed back), on the dual server."""
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
    while True:
        page = result_of(
            await _session_post(client, url, session, "tasks/list", params)
        )
        found |= {task["taskId"] for task in page["tasks"]}
        if not page.get("nextCursor"):
            return found
        params = {"cursor": page["nextCursor"]}


def _unknown_task(answer: dict[str, Any]) -> None:
    """The answer is the not-found error of an unknown task."""
    assert error_of(answer)["code"] == -32602, answer


async def test_item3_a_2025_task_is_visible_through_the_extension_to_its_owner_only(
    dual_server: ServerHandle,
) -> None:
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


async def test_item3_an_extension_task_is_visible_through_2025_to_its_owner_only(
    dual_server: ServerHandle,
) -> None:
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


async def test_item3_both_revisions_list_the_same_tools(
    dual_server: ServerHandle,
) -> None:
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
    "ext_meta_string": ({}, _rpc("tools/list", {"_meta": "x"}), -32602),
    "ext_meta_null": ({}, _rpc("tools/list", {"_meta": None}), -32602),
    "ext_meta_wrong_types": (
        {},
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
        {},
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
        {},
        _rpc(
            "tools/call",
            {
                "name": "greet",
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
            },
        ),
        -32602,
    ),
    "ext_params_array": ({}, _rpc("tools/list", [META_OK]), -32602),
    "ext_nan_argument": (
        {},
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


async def test_item4_hostile_posts_never_yield_500_or_a_traceback(
    hostile_server: ServerHandle,
) -> None:
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


async def test_item4_get_and_delete_with_a_bogus_session_are_not_found(
    hostile_server: ServerHandle,
) -> None:
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


async def test_item4_a_failed_initialize_names_no_session(
    hostile_server: ServerHandle,
) -> None:
    """The session a refused ``initialize`` opened is closed again: the answer must not
    hand its id to the client (every later request with it would be 404)."""
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(
            hostile_server.url,
            content=_rpc("initialize", "garbage").encode(),
            headers={**ACCEPT, "content-type": "application/json"},
        )
    await _assert_json_rpc_error(response, -32602)
    assert "mcp-session-id" not in response.headers, dict(response.headers)
    no_traceback(hostile_server)


async def test_item4_an_initialize_notification_opens_no_session(
    hostile_server: ServerHandle,
) -> None:
    """``initialize`` without an id is no request: it must not open (and leak) a
    session, nor be answered with a session id."""
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


# -- 5. what one revision does reaches the other's worker (in process) ----------------


def _dual_in_process() -> tuple[Any, Any]:
    """A dual server on a memory store whose principal is the Authorization header."""
    from mcp_tasks.server import RequestInfo, TasksServer
    from mcp_tasks.stores import InMemoryTaskStore

    def principal(request: RequestInfo) -> str:
        return (request.headers or {}).get("authorization", "anonymous")

    server = TasksServer("dual", store=InMemoryTaskStore(), authenticate=principal)
    return server, RequestInfo


async def test_item5_a_cancel_through_the_other_revision_stops_the_worker() -> None:
    """A task created through 2025-11-25 and cancelled through the extension (same
    principal): the tool sees the cancellation and its worker stops; and the reverse."""
    import asyncio

    server, request_info = _dual_in_process()
    started: dict[str, asyncio.Event] = {}
    stopped: dict[str, asyncio.Event] = {}

    @server.tool()
    async def wait_forever(ctx: Any, arguments: dict[str, Any]) -> str:
        label = str(arguments["label"])
        started[label].set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped[label].set()
        return "never"

    alice = {"authorization": "alice"}
    async with server:
        session = request_info(
            headers=alice, session_id=server.server_2025.open_session("alice").id
        )
        stateless = request_info(headers=alice)
        for label, create, cancel in (
            ("2025 -> ext", (message_2025, session), (ext_message, stateless)),
            ("ext -> 2025", (ext_message, stateless), (message_2025, session)),
        ):
            started[label], stopped[label] = asyncio.Event(), asyncio.Event()
            make, info = create
            params: dict[str, Any] = {
                "name": "wait_forever",
                "arguments": {"label": label},
            }
            if make is message_2025:
                params["task"] = {}
            created = result_of(await server.handle(make("tools/call", params), info))
            task_id = (created.get("task") or created)["taskId"]
            await asyncio.wait_for(started[label].wait(), 5)
            make, info = cancel
            answer = await server.handle(
                make("tasks/cancel", {"taskId": task_id}), info
            )
            assert "error" not in (answer or {}), (label, answer)
            await asyncio.wait_for(stopped[label].wait(), 5)
            view = result_of(
                await server.handle(make("tasks/get", {"taskId": task_id}), info)
            )
            assert view["status"] == "cancelled", (label, view)


async def test_item5_closing_fails_the_running_tasks_of_both_revisions(
    tmp_path: Path,
) -> None:
    """Closing a dual server marks the running tasks of *both* revisions failed in the
    shared store, which closes once, after the last revision's server stopped."""
    import asyncio

    from mcp_tasks.server import RequestInfo, TasksServer
    from mcp_tasks.stores import SQLiteTaskStore

    path = str(tmp_path / "tasks.sqlite3")
    server = TasksServer("dual", store=SQLiteTaskStore(path))
    running = asyncio.Semaphore(0)

    @server.tool()
    async def forever(ctx: Any, arguments: dict[str, Any]) -> str:
        running.release()
        await asyncio.Event().wait()
        return "never"

    await server.start()
    session = RequestInfo(session_id=server.server_2025.open_session().id)
    old = result_of(
        await server.handle(
            message_2025("tools/call", {"name": "forever", "task": {}}), session
        )
    )["task"]["taskId"]
    new = result_of(
        await server.handle(
            ext_message("tools/call", {"name": "forever"}), RequestInfo()
        )
    )["taskId"]
    for _ in range(2):
        await asyncio.wait_for(running.acquire(), 5)
    await server.close()

    store = SQLiteTaskStore(path)
    await store.open()
    try:
        for task_id in (old, new):
            record = await store.get(task_id)
            assert record is not None and record.status == "failed", (task_id, record)
    finally:
        await store.close()
