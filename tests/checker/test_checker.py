"""The generated checker (``<package>.check``) against the example servers, mutants of
them (one rule broken at a time) and the real peers.

The example servers pass every check (a check may skip only where the server has
nothing to show: the extension's notifications need ``subscriptions/listen``, which the
checker does not open). Each mutant of ``mutant_server.py`` fails exactly the check it
names. The peers' verdicts are those docs/checker.md explains.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tests.server.conftest import example_server
from tests.support import peers
from tests.support.procs import free_port, run_server

from .mutant_server import MUTANTS

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "generated"

TOOLS: dict[str, dict[str, Any]] = {
    "ext": {
        "completes": "slow_compute",
        "fails": "protocol_error_job",
        "input": "confirm_delete",
        "long": "long_report",
    },
    "2025": {
        "completes": "slow_compute",
        "fails": "failing_job",
        "input": "confirm_delete",
        "long": "long_report",
    },
}
"""The example servers' tools by kind."""

SKIPPABLE: dict[str, set[str]] = {"ext": set(), "2025": set()}
"""Checks an example server may skip: none (extension notifications come through the
``subscriptions/listen`` stream the checker opens for one task)."""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        cwd=GENERATED,
        timeout=180,
    )


def _tool_args(revision: str) -> list[str]:
    return [
        a
        for kind, name in TOOLS[revision].items()
        for a in ("--tool", f"{kind}={name}")
    ]


# -- the example servers ---------------------------------------------------------------

EXAMPLES = [
    ("server_ext", "mcp_tasks_ext", None, "ext-2026-07-28"),
    ("server_2025", "mcp_tasks_2025_11_25", None, "2025-11-25"),
    ("server", "mcp_tasks", None, "ext-2026-07-28"),  # detected
    ("server", "mcp_tasks", "2025-11-25", "2025-11-25"),
]


@pytest.mark.parametrize(("example", "package", "pinned", "revision"), EXAMPLES)
def test_example_server_passes_every_check(
    example: str, package: str, pinned: str | None, revision: str, tmp_path: Path
) -> None:
    kind = "2025" if revision == "2025-11-25" else "ext"
    junit = tmp_path / "report.xml"
    args = [
        f"{package}.check",
        "",
        *_tool_args(kind),
        "--other-auth",
        "other",
        "--json",
    ]
    args += ["--junit", str(junit)] + (["--revision", pinned] if pinned else [])
    with example_server(example, "--memory") as server:
        args[1] = server.url
        proc = _cli(*args)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["revision"] == revision
    verdicts = {c["id"]: c["status"] for c in report["checks"]}
    assert all(set(c) >= {"id", "status", "detail"} for c in report["checks"])
    assert {i for i, s in verdicts.items() if s != "pass"} <= SKIPPABLE[kind], verdicts
    assert len(verdicts) >= 28
    _assert_junit(junit.read_text(), len(verdicts))


JUNIT_XSD = Path(__file__).with_name("junit.xsd")


def _assert_junit(text: str, count: int) -> None:
    """Valid against the common JUnit schema (``junit.xsd``: testsuites > testsuite >
    testcase, with failure/skipped children), and the counts agree with the cases."""
    import xmlschema

    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(text)
    root = ElementTree.fromstring(text)
    assert root.tag == "testsuites"
    suites = list(root)
    assert suites and all(s.tag == "testsuite" for s in suites)
    for suite in suites:
        assert set(suite.attrib) >= {
            "name",
            "tests",
            "failures",
            "errors",
            "skipped",
            "time",
        }
        cases = list(suite)
        assert int(suite.attrib["tests"]) == len(cases) == count
        failures = skipped = 0
        for case in cases:
            assert case.tag == "testcase"
            assert set(case.attrib) >= {"name", "classname", "time"}
            float(case.attrib["time"])
            for child in case:
                assert child.tag in {"failure", "skipped"}
                assert "message" in child.attrib
                failures += child.tag == "failure"
                skipped += child.tag == "skipped"
        assert int(suite.attrib["failures"]) == failures
        assert int(suite.attrib["skipped"]) == skipped


def test_bad_usage_exits_2() -> None:
    proc = _cli("mcp_tasks_ext.check", "http://127.0.0.1:9/mcp", "--tool", "nonsense=x")
    assert proc.returncode == 2
    assert "KIND=NAME" in proc.stderr
    proc = _cli("mcp_tasks.check", "http://127.0.0.1:9/mcp", "--revision", "1999")
    assert proc.returncode == 2


def test_unreachable_server_fails_with_exit_1() -> None:
    proc = _cli("mcp_tasks_ext.check", f"http://127.0.0.1:{free_port()}/mcp", "--json")
    assert proc.returncode == 1
    checks = json.loads(proc.stdout)["checks"]
    assert checks[0]["id"] == "session.open" and checks[0]["status"] == "fail"


def test_unnamed_tool_kinds_are_skipped_with_the_reason() -> None:
    from mcp_tasks_ext.check import run_checks

    with example_server("server_ext", "--memory") as server:
        report = asyncio.run(
            run_checks(server.url, tools={"completes": "slow_compute"})
        )
    report.assert_ok()
    verdicts = report.by_id()
    assert verdicts["cancel.accepted"].status == "skip"
    assert "'long' tool" in verdicts["cancel.accepted"].detail
    assert verdicts["outcome.completed"].status == "pass"


# -- mutants ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mutant_verdicts() -> Iterator[dict[tuple[str, str], list[str]]]:
    """Failed check ids per (revision, mutant), all mutants run against one server
    per revision."""
    from mcp_tasks_2025_11_25.check import run_checks as run_2025
    from mcp_tasks_ext.check import run_checks as run_ext

    runners = {"ext": run_ext, "2025": run_2025}
    env = {"PYTHONPATH": str(GENERATED)}
    with _mutants("ext", env) as ext, _mutants("2025", env) as old:
        servers = {"ext": ext, "2025": old}

        async def all_runs() -> dict[tuple[str, str], list[str]]:
            limit = asyncio.Semaphore(4)

            async def one(
                revision: str, name: str
            ) -> tuple[tuple[str, str], list[str]]:
                url = f"{servers[revision].base_url}/m/{name}/mcp"
                async with limit:
                    report = await runners[revision](
                        url, tools=TOOLS[revision], other_auth="other", timeout=60
                    )
                return (revision, name), [r.id for r in report.failed]

            pairs = [(r, n) for r in MUTANTS for n in MUTANTS[r]]
            return dict(await asyncio.gather(*(one(r, n) for r, n in pairs)))

        yield asyncio.run(all_runs())


def _mutants(revision: str, env: dict[str, str]) -> Any:
    port = free_port()
    cmd = [
        sys.executable,
        str(Path(__file__).parent / "mutant_server.py"),
        revision,
        str(port),
    ]
    return run_server(cmd, port, env=env, timeout=30)


MUTANT_CASES = [(r, n, MUTANTS[r][n][2]) for r in MUTANTS for n in MUTANTS[r]]


def test_at_least_15_mutants() -> None:
    assert len(MUTANT_CASES) >= 15


@pytest.mark.parametrize(("revision", "mutant", "check_id"), MUTANT_CASES)
def test_mutant_fails_exactly_its_check(
    revision: str,
    mutant: str,
    check_id: str,
    mutant_verdicts: dict[tuple[str, str], list[str]],
) -> None:
    assert mutant_verdicts[(revision, mutant)] == [check_id]


# -- peers -----------------------------------------------------------------------------

PEER_TOOLS: dict[str, Any] = {
    "completes": ("slow_compute", {"seconds": 0.5, "label": "check"}),
    "fails": "failing_job",
    "input": ("confirm_delete", {"filename": "x.txt"}),
    "long": ("long_job", {"seconds": 5}),
}
"""The peers' fixture tools (``tests/peers``) by kind."""

PEER_FAILURES: dict[str, set[str]] = {
    "fastmcp": {"errors.foreign_task"},
    "mcp1": {
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
    "fastmcp": {"errors.foreign_task"},
    "mcp1": {
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
    "create.task": (
        "sep-2663-result-type-task-on-create",
        "sep-2663-durable-create-strong-consistency",
    ),
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


def test_the_junit_schema_rejects_what_ci_servers_would() -> None:
    """``junit.xsd`` is a real check: a case without a name, or a suite without its
    test count, is invalid."""
    import xmlschema

    schema = xmlschema.XMLSchema(str(JUNIT_XSD))
    good = (
        '<testsuites><testsuite name="s" tests="1"><testcase'
        ' name="c"/></testsuite></testsuites>'
    )
    assert schema.is_valid(good)
    assert not schema.is_valid(
        '<testsuites><testsuite name="s" tests="1"><testcase/></testsuite></testsuites>'
    )
    assert not schema.is_valid(
        '<testsuites><testsuite name="s"><testcase name="c"/></testsuite></testsuites>'
    )
