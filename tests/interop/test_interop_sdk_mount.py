"""The generated servers mounted into the official Python SDKs (``TasksServer.mount``).

- ``examples/server_ext_mcp2.py`` runs in the fastmcp peer virtualenv (which has
  ``mcp==2.3.0``); the conformance scenarios and the fastmcp client must pass against
  it just as against the small ASGI app;
- ``examples/server_2025_mcp1.py`` runs in the ``mcp==1.30.0`` peer virtualenv; the
  mcp 1.30 and TypeScript SDK clients complete, fail, elicit and cancel through it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.support import peers
from tests.support.procs import ServerHandle, free_port, run_server
from tests.support.servers import EXAMPLES

ACCEPTED = {"SUCCESS", "SKIPPED", "INFO"}


@pytest.fixture(scope="module")
def mounted() -> Iterator[ServerHandle]:
    """``examples/server_ext_mcp2.py`` on the SDK, in the fastmcp peer venv."""
    peers.require("fastmcp")
    port = free_port()
    cmd = [
        str(peers.fastmcp_python()),
        str(EXAMPLES / "server_ext_mcp2.py"),
        "--port",
        str(port),
        "--memory",
    ]
    with run_server(cmd, port, url_path="/mcp", timeout=60) as handle:
        yield handle


def test_sdk_mounted_server_passes_the_conformance_scenarios(
    mounted: ServerHandle, tmp_path: Any
) -> None:
    peers.require("conformance")

    def run(scenario: str) -> tuple[str, list[dict[str, Any]]]:
        out = tmp_path / scenario
        out.mkdir()
        peers.run_conformance(mounted.url, scenario, out)
        (found,) = out.glob("*/checks.json")
        checks: list[dict[str, Any]] = json.loads(found.read_text())
        return scenario, checks

    with ThreadPoolExecutor(max_workers=5) as pool:
        results = dict(pool.map(run, peers.CONFORMANCE_TASK_SCENARIOS))
    failed = {
        name: [c for c in checks if c["status"] not in ACCEPTED]
        for name, checks in results.items()
    }
    assert not any(failed.values()), json.dumps(failed, indent=2)[:4000]
    assert all(checks for checks in results.values())


@pytest.mark.parametrize(
    ("tool", "arguments", "options", "status"),
    [
        ("confirm_delete", {"filename": "f.txt"}, {}, "completed"),
        ("slow_compute", {"seconds": 20}, {"cancel_after": 0.5}, "cancelled"),
    ],
)
def test_sdk_mounted_server_serves_the_fastmcp_client(
    mounted: ServerHandle,
    tool: str,
    arguments: dict[str, Any],
    options: dict[str, Any],
    status: str,
) -> None:
    report = peers.run_client(
        "fastmcp", mounted.url, tool, arguments, timeout=90, **options
    )
    assert report["status"] == status, report


@pytest.fixture(scope="module")
def mounted_2025() -> Iterator[ServerHandle]:
    """``examples/server_2025_mcp1.py`` on the SDK, in the mcp 1.30 peer venv."""
    peers.require("mcp1")
    port = free_port()
    cmd = [
        str(peers.mcp1_python()),
        str(EXAMPLES / "server_2025_mcp1.py"),
        "--port",
        str(port),
        "--memory",
    ]
    with run_server(cmd, port, url_path="/mcp/", timeout=60) as handle:
        yield handle


CASES_2025 = [
    ("confirm_delete", {"filename": "f.txt"}, {}, "completed", "deleted f.txt"),
    ("failing_job", {}, {}, "failed", "job failed: the input could not be processed"),
    ("slow_compute", {"seconds": 20}, {"cancel_after": 0.5}, "cancelled", ""),
]


@pytest.mark.parametrize("peer", ["mcp1", "ts-sdk"])
def test_sdk_mounted_2025_server_serves_the_sdk_clients(
    mounted_2025: ServerHandle, peer: str
) -> None:
    peers.require(peer)

    def one(case: tuple[str, dict[str, Any], dict[str, Any], str, str]) -> None:
        tool, arguments, options, status, text = case
        report = peers.run_client(
            peer, mounted_2025.url, tool, arguments, timeout=90, **options
        )
        assert report["status"] == status, report
        assert report["text"] == text, report
        if tool == "confirm_delete":
            assert report["elicitations"] == ["Delete f.txt?"], report

    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(one, CASES_2025))


def test_sdk_mounted_2025_server_declares_task_capabilities(
    mounted_2025: ServerHandle,
) -> None:
    import httpx

    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    response = httpx.post(
        mounted_2025.url,
        json=initialize,
        headers={"accept": "application/json, text/event-stream"},
        timeout=10,
    )
    data = [
        line[6:] for line in response.text.splitlines() if line.startswith("data: ")
    ]
    result = json.loads(data[-1])["result"]
    assert result["capabilities"]["tasks"] == {
        "cancel": {},
        "list": {},
        "requests": {"tools": {"call": {}}},
    }
