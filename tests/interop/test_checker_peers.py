"""The generated checker (``<package>.check``) against the real peers: their verdicts
are those docs/checker.md explains, and on fastmcp the checker agrees with the official
conformance suite.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support import peers

PEER_TOOLS: dict[str, Any] = {
    "completes": ("slow_compute", {"seconds": 0.5, "label": "check"}),
    "fails": "failing_job",
    "input": ("confirm_delete", {"filename": "x.txt"}),
    "long": ("long_job", {"seconds": 5}),
}
"""The peers' fixture tools (``tests/peers``) by kind."""


PEER_FAILURES: dict[str, set[str]] = {
    "fastmcp": {"errors.foreign_task", "routing.headers_missing"},
    "mcp1": {
        "errors.foreign_task",
        "outcome.failed",
        "shape.CreateTaskResult",
        "shape.tasks/cancel",
        "shape.tasks/get",
        "shape.tasks/list",
        "shape.notifications/tasks/status",
        "status.working",
        "status.input_required",
        "status.completed",
        "status.failed",
        "status.cancelled",
    },
    "ts-sdk": set(),
}
"""The checks each peer fails, as docs/checker.md explains them."""


ALWAYS: dict[str, set[str]] = {
    "fastmcp": {"errors.foreign_task", "routing.headers_missing"},
    "mcp1": {
        "errors.foreign_task",
        "outcome.failed",
        "shape.tasks/cancel",
        "shape.tasks/get",
        "shape.CreateTaskResult",
    },
    "ts-sdk": set(),
}
"""Of those, the ones that do not depend on timing (a status a poll may miss)."""


@pytest.mark.parametrize("peer", ["fastmcp", "mcp1", "ts-sdk"])
def test_peer_verdicts(peer: str) -> None:
    from mcp_tasks.check import run_checks

    with peers.serve(peer) as server:
        report = asyncio.run(
            run_checks(
                server.url, tools=PEER_TOOLS, other_auth="Bearer other", timeout=60
            )
        )
    print(json.dumps(report.to_json()["summary"]), [r.id for r in report.failed])
    assert report.revision == peers.KINDS[peer].revision
    failed = {r.id for r in report.failed}
    assert ALWAYS[peer] <= failed <= PEER_FAILURES[peer], report.to_text()


CONFORMANCE_MAP: dict[str, tuple[str, ...]] = {
    "capability.declared": ("tasks-extension-advertised",),
    "capability.gating": (
        "sep-2663-tasks-methods-non-declaring",
        "sep-2663-server-rejects-undeclared-client",
    ),
    "create.task": ("sep-2663-result-type-task-on-create",),
    "create.durable": ("sep-2663-durable-create-strong-consistency",),
    "shape.CreateTaskResult": ("tasks-wire-field-renames",),
    "status.working": ("sep-2663-tasks-get-status-working",),
    "status.completed": ("sep-2663-tasks-get-status-completed",),
    "status.failed": ("sep-2663-tasks-get-status-failed",),
    "status.input_required": ("sep-2663-tasks-get-status-input-required",),
    "outcome.failed": ("sep-2663-tool-error-uses-completed-status",),
    "input.requested": ("sep-2663-tasks-get-status-input-required",),
    "input.answered": ("tasks-mrtr-tasks-update-resumes",),
    "cancel.accepted": ("sep-2663-cancel-ack-empty-result",),
    "shape.tasks/cancel": ("sep-2663-cancel-ack-empty-result",),
    "routing.headers": (
        "tasks-headers-reject-mismatched-method",
        "sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get",
    ),
    "errors.unknown_task": ("sep-2663-tasks-get-invalid-task-id-32602",),
}
"""Checker check -> the conformance suite's checks of the same rule (the table of
docs/checker.md)."""


SUITE_OK = {"SUCCESS", "SKIPPED", "INFO"}


def test_fastmcp_verdicts_agree_with_the_conformance_suite(tmp_path: Path) -> None:
    """Where a check maps to checks of the conformance suite and the checker gives a
    verdict (not a skip), it passes exactly when those suite checks pass."""
    from mcp_tasks_ext.check import run_checks

    peers.require("conformance")
    with peers.serve("fastmcp") as server:
        report = asyncio.run(
            run_checks(
                server.url, tools=PEER_TOOLS, other_auth="Bearer other", timeout=60
            )
        )
        suite: dict[str, str] = {}
        for scenario in peers.CONFORMANCE_TASK_SCENARIOS:
            out = tmp_path / scenario
            out.mkdir()
            peers.run_conformance(server.url, scenario, out)
            found = list(out.glob("*/checks.json"))
            assert found, scenario
            for item in json.loads(found[0].read_text()):
                suite[item["id"]] = item["status"]
    verdicts = report.by_id()
    compared = 0
    for check_id, suite_ids in CONFORMANCE_MAP.items():
        if verdicts[check_id].status == "skip":
            continue
        suite_passes = all(suite[i] in SUITE_OK for i in suite_ids)
        assert (verdicts[check_id].status == "pass") == suite_passes, (check_id, suite)
        compared += 1
    assert compared >= 10
