"""The documentation built and run: ``mkdocs build --strict`` (any warning fails),
and the checker's documented options against its ``--help`` in a real process.

The checks that only read the pages are in ``tests/unit/test_docs.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from tests.support.docs import (
    DOCS,
    ROOT,
    nav_pages,
    section,
)
from tests.support.procs import missing_dependency


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    """``mkdocs build --strict`` passes: no broken link or anchor, no page left out
    of the nav, no docstring mkdocstrings cannot render, no missing snippet."""
    mkdocs = Path(sys.executable).parent / "mkdocs"
    if not mkdocs.exists():
        missing_dependency(
            f"mkdocs is not installed in {mkdocs.parent} (pip install -e '.[dev]')"
        )
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1"}
    started = time.monotonic()
    proc = subprocess.run(
        [
            str(mkdocs),
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    elapsed = time.monotonic() - started
    output = proc.stdout + proc.stderr
    assert (
        proc.returncode == 0
    ), f"mkdocs build --strict failed after {elapsed:.1f} s:\n{output}"
    warnings = [
        line for line in output.splitlines() if line.startswith(("WARNING", "ERROR"))
    ]
    assert not warnings, "\n".join(warnings)
    for page in nav_pages():
        built = (
            tmp_path
            / "site"
            / (
                page[: -len(".md")] + "/index.html"
                if not page.endswith("index.md")
                else page.replace(".md", ".html")
            )
        )
        assert built.is_file(), f"{page} was not built ({built})"
    reference = (tmp_path / "site" / "reference" / "server" / "index.html").read_text(
        encoding="utf-8"
    )
    for name in (
        "mcp_tasks.server.TasksServer",
        "mcp_tasks.server_core.ToolContext",
        "mcp_tasks.server_core.Limits",
    ):
        assert f'id="{name}"' in reference, f"the API reference lacks {name}"


def _table_options(text: str) -> set[str]:
    """The options named in the first column of a Markdown table (``-o``,
    ``--check``)."""
    return {
        match
        for row in re.findall(r"^\| `([^`]+)`", text, re.M)
        for match in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", row)
    }


def test_checker_options_match_the_command() -> None:
    """The checker page's option table lists the options of ``python -m
    <package>.check``."""
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_tasks.check", "--help"],
        cwd=ROOT / "generated",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    actual = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", proc.stdout)) - {"--help"}
    documented = _table_options(section(DOCS / "checker.md", "## Options"))
    assert documented == actual
