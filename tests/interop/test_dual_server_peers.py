"""The dual example server (``examples/server.py``, both revisions on one port) against
every real peer at once: the conformance suite's ten ``tasks-*`` scenarios and its two
core scenarios of the HTTP edge, the ``mcp==1.30.0`` and TypeScript SDK 1.32.2 clients
(2025-11-25) and the ``fastmcp[tasks]`` client (the extension), all at the same time
against one server process; each passes what the single-revision tests
(``test_interop_conformance``, ``test_interop_clients``) expect of it.

The single-revision modules' checks are called here as plain functions on the dual
server's results, so the expectations stay in one place.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain, zip_longest
from pathlib import Path
from typing import Any

import pytest

from tests.interop import test_interop_clients as single_revision_clients
from tests.interop import test_interop_conformance as single_revision_conformance
from tests.support.peers import (
    CONFORMANCE_TASK_SCENARIOS,
    require,
    run_client,
    run_conformance,
)
from tests.support.servers import (
    example_server,
)

pytestmark = pytest.mark.anyio


CONFORMANCE_CHECKS_PASSED = 44
"""``SUCCESS`` checks of the ten scenarios (``tasks-status-notifications`` only
skips)."""


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


# twelve conformance runs and three SDK clients at once, each may take up to 120 s
@pytest.mark.timeout(300)
def test_conformance_and_three_sdk_clients_at_once_on_one_port(
    tmp_path: Path,
) -> None:
    """Issue 10, item 1: One ``examples/server.py`` process, SQLite store; 12
    scenarios and 21 client runs interleaved on 8 threads, so that all four kinds of
    peer run together."""
    require("conformance")
    for peer in single_revision_clients.PEERS:
        require(peer)
    with example_server("server", "--db", str(tmp_path / "tasks.sqlite3")) as server:
        conformance = [
            _conformance_run(server.url, tmp_path, scenario)
            for scenario in single_revision_conformance.SCENARIOS
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
    for scenario in single_revision_conformance.SCENARIOS:
        failures += _failures_of(
            scenario,
            single_revision_conformance.test_conformance_scenario_passes,
            scenario,
            results,
        )
    passed = sum(
        1
        for scenario in CONFORMANCE_TASK_SCENARIOS
        for c in results[scenario]
        if c["status"] == "SUCCESS"
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
