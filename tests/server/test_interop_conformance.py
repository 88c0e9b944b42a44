"""The official conformance suite's ten ``tasks-*`` scenarios against our servers.

Two servers: ``examples/server_ext.py`` (standalone, this interpreter) and
``examples/sdk_server_ext.py`` (an ``MCPServer`` app of ``mcp==2.3.0`` with
``sdk.server_extension``, in the fastmcp peer virtualenv).
``@modelcontextprotocol/conformance@0.2.0-alpha.12`` runs with Node 22 from the peers
folder. The scenarios run in parallel against one server (SQLite store); every check
must pass except those the suite itself marks ``SKIPPED``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support import peers
from tests.support.peers import CONFORMANCE_TASK_SCENARIOS, require, run_conformance
from tests.support.procs import ServerHandle, free_port, run_server

from .conftest import EXAMPLES, example_server

ACCEPTED = {"SUCCESS", "SKIPPED", "INFO"}


SERVERS = ("standalone", "sdk")
"""``standalone``: ``examples/server_ext.py``; ``sdk``:
``examples/sdk_server_ext.py``."""


@contextmanager
def _server(kind: str, db: Path) -> Iterator[ServerHandle]:
    if kind == "standalone":
        with example_server("server_ext", "--db", str(db)) as handle:
            yield handle
        return
    peers.require("fastmcp")
    port = free_port()
    cmd = [
        str(peers.fastmcp_python()),
        str(EXAMPLES / "sdk_server_ext.py"),
        "--port",
        str(port),
        "--db",
        str(db),
    ]
    with run_server(cmd, port, url_path="/mcp", timeout=60) as handle:
        yield handle


@pytest.fixture(scope="module", params=SERVERS)
def conformance_results(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """Checks of every scenario, by scenario name (all scenarios run once per server,
    in parallel)."""
    require("conformance")
    kind: str = request.param
    work = tmp_path_factory.mktemp(f"conformance-{kind}")
    with _server(kind, work / "tasks.sqlite3") as server:

        def run(scenario: str) -> tuple[str, list[dict[str, Any]]]:
            out = work / scenario
            out.mkdir()
            proc = run_conformance(server.url, scenario, out)
            found = list(out.glob("*/checks.json"))
            assert found, (
                f"{scenario}: no"
                f" checks.json\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            )
            checks: list[dict[str, Any]] = json.loads(found[0].read_text())
            return scenario, checks

        with ThreadPoolExecutor(max_workers=5) as pool:
            results = dict(pool.map(run, CONFORMANCE_TASK_SCENARIOS))
        yield results


@pytest.mark.parametrize("scenario", CONFORMANCE_TASK_SCENARIOS)
def test_conformance_scenario_passes(
    scenario: str, conformance_results: dict[str, list[dict[str, Any]]]
) -> None:
    checks = conformance_results[scenario]
    failed = [c for c in checks if c["status"] not in ACCEPTED]
    assert checks, f"{scenario} ran no checks"
    assert not failed, json.dumps(failed, indent=2)[:4000]
    if scenario == "tasks-status-notifications":
        # the suite itself skips this one (its harness predates subscriptions/listen)
        assert {c["status"] for c in checks} == {"SKIPPED"}
    else:
        assert any(c["status"] == "SUCCESS" for c in checks)


def summary(results: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, int]]:
    """Counts of check statuses per scenario (used in the report)."""
    return {
        name: {
            status: sum(1 for c in checks if c["status"] == status)
            for status in {c["status"] for c in checks}
        }
        for name, checks in results.items()
    }


def test_conformance_summary_is_written(
    conformance_results: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """Keep a machine-readable summary next to the test output (``-s`` prints it)."""
    counts = summary(conformance_results)
    print(json.dumps(counts, sort_keys=True))
    assert set(counts) == set(CONFORMANCE_TASK_SCENARIOS)
