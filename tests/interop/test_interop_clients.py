"""Real SDK clients completing tasks against the example servers over streamable HTTP.

- ``mcp==1.30.0`` and the TypeScript SDK 1.32.2 (revision 2025-11-25) against
  ``examples/server_2025.py``;
- ``fastmcp[tasks]==4.1.4`` (the extension) against ``examples/server_ext.py``.

Each client (``tests/peers/*_client.*``) calls one tool as a task and reports the
outcome as JSON. The runs of a peer happen in parallel against one server.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.support.peers import require, run_client
from tests.support.servers import example_server

CASES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "completes": ("slow_compute", {"seconds": 0.5, "label": "x"}, {}),
    "tool_error": ("failing_job", {}, {}),
    "protocol_error": ("protocol_error_job", {}, {}),
    "elicitation": ("confirm_delete", {"filename": "f.txt"}, {}),
    "declined": ("confirm_delete", {"filename": "f.txt"}, {"elicit": "decline"}),
    "cancel": ("slow_compute", {"seconds": 20}, {"cancel_after": 0.5}),
    "progress": ("long_report", {"steps": 3}, {}),
}
PEERS = {"mcp1": "server_2025", "ts-sdk": "server_2025", "fastmcp": "server_ext"}


def _run_all(peer: str) -> dict[str, dict[str, Any]]:
    """Every case through ``peer``'s client, in parallel against one example server."""
    require(peer)
    with example_server(PEERS[peer], "--memory") as server:

        def one(case: str) -> tuple[str, dict[str, Any]]:
            tool, arguments, options = CASES[case]
            return case, run_client(
                peer, server.url, tool, arguments, timeout=90, **options
            )

        with ThreadPoolExecutor(max_workers=4) as pool:
            return dict(pool.map(one, CASES))


@pytest.fixture(scope="module", params=list(PEERS))
def peer_reports(
    request: pytest.FixtureRequest,
) -> Iterator[tuple[str, dict[str, dict[str, Any]]]]:
    """(peer name, reports by case)."""
    yield request.param, _run_all(request.param)


def test_client_completes_a_task(
    peer_reports: tuple[str, dict[str, dict[str, Any]]],
) -> None:
    peer, reports = peer_reports
    report = reports["completes"]
    assert report["status"] == "completed", report
    assert report["text"] == "computed x after 0.5s"
    assert report["error"] is None


def test_client_sees_a_tool_error(
    peer_reports: tuple[str, dict[str, dict[str, Any]]],
) -> None:
    peer, reports = peer_reports
    report = reports["tool_error"]
    # 2025-11-25: isError fails the task; the extension completes it with isError
    assert report["status"] == ("completed" if peer == "fastmcp" else "failed"), report
    assert report["is_error"] is True
    assert "job failed" in report["text"]


def test_client_sees_a_protocol_error(
    peer_reports: tuple[str, dict[str, dict[str, Any]]],
) -> None:
    peer, reports = peer_reports
    report = reports["protocol_error"]
    assert report["status"] == "failed", report
    assert report["error"] is not None and report["error"]["code"] == -32603


def test_client_answers_an_elicitation(
    peer_reports: tuple[str, dict[str, dict[str, Any]]],
) -> None:
    peer, reports = peer_reports
    accepted, declined = reports["elicitation"], reports["declined"]
    assert accepted["status"] == "completed", accepted
    assert accepted["elicitations"] == ["Delete f.txt?"]
    assert accepted["text"] == "deleted f.txt"
    assert declined["status"] == "completed", declined
    assert declined["text"] == "kept f.txt (decline)"


def test_client_cancels_a_task(
    peer_reports: tuple[str, dict[str, dict[str, Any]]],
) -> None:
    peer, reports = peer_reports
    report = reports["cancel"]
    assert report["status"] == "cancelled", report
    assert report["cancel"] is not None and "error" not in report["cancel"]


def test_client_sees_progress_messages(
    peer_reports: tuple[str, dict[str, dict[str, Any]]],
) -> None:
    peer, reports = peer_reports
    report = reports["progress"]
    assert report["status"] == "completed", report
    assert report["text"] == "report ready after 3 steps"
    assert any(m.startswith("step ") for m in report["status_messages"]), report
