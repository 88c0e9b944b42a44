"""README.md keeps showing the set-up commands that CI really runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _blocks_after(heading: str) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```\n(.*?)\n```", section, re.S)


def test_ci_runs_the_readme_test_command() -> None:
    """``.ci/run`` ends with exactly the test command shown in the README."""
    test_command = _blocks_after("## Set up on a fresh machine")[1].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == test_command


def test_main_job_command_uses_the_default_schema() -> None:
    """The first command installs the project and runs generation with no schema argument."""
    main_job = _blocks_after("## Set up on a fresh machine")[0].strip()
    assert main_job.startswith("python3 -m venv .venv") and main_job.endswith("mcptasks-gen generate -o out/")


def test_migration_summary_matches_the_golden_report() -> None:
    """The README's migration section quotes the counts of the golden 2025 -> extension report."""
    golden = (ROOT / "tests" / "golden" / "diff-2025-11-25-to-ext.md").read_text(encoding="utf-8")
    counts = re.search(r"\*\*(\d+) changes: (\d+) breaking for clients, (\d+) breaking for servers, (\d+) compatible for both\.\*\*", golden)
    assert counts is not None
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Migrating from 2025-11-25 to the extension", 1)[1]
    n, client, server, compatible = counts.groups()
    assert f"{n} changes, {client} breaking\nfor clients, {server} breaking for servers, {compatible} compatible for both" in section
    for method in ("tasks/result", "tasks/list", "tasks/update", "notifications/tasks/status"):
        assert f"`{method}`" in section and method in golden
