"""The command line as a real process: ``mcptasks-gen`` run from an unrelated folder,
the console entry point's exit, and ``mcptasks-gen diff`` colouring its text only on a
real terminal (pexpect).

Everything else of the command line runs in process through click's runner, in
``tests/unit/test_cli.py`` and ``tests/unit/test_apidiff.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = Path("schema/2025-11-25/schema.json")
EXT = Path("schema/ext-2026-07-28/schema.json")


def test_real_subprocess_from_unrelated_folder(tmp_path: Path) -> None:
    """The installed console script runs outside the project and leaves no temporary
    folders."""
    exe = Path(sys.executable).with_name("mcptasks-gen")
    proc = subprocess.run(
        [str(exe), "generate", "-o", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["mcp_tasks"]
    bad = subprocess.run(
        [str(exe), "generate", "missing.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and bad.stderr == "missing.json: error: no such file\n"


def test_console_entry_point_exits_without_interpreter_teardown(tmp_path: Path) -> None:
    """``run`` (the console script and ``python -m mcptasks_gen``) flushes the
    command's output and ends the process with its status, skipping the interpreter's
    teardown: an atexit handler (which runs at the very start of an ordinary
    teardown) never runs."""
    probe = (
        "import atexit, sys; atexit.register(lambda: print('teardown',"
        " file=sys.stderr)); from mcptasks_gen.cli import run; run()"
    )
    ok = subprocess.run(
        [sys.executable, "-c", probe, "generate", "-o", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0 and ok.stdout.startswith(
        "out/mcp_tasks: wrote "
    ), ok.stderr
    assert "teardown" not in ok.stderr
    assert (tmp_path / "out" / "mcp_tasks" / "__init__.py").is_file()
    stale = subprocess.run(
        [
            sys.executable,
            "-c",
            probe,
            "generate",
            "-o",
            "out",
            "--package",
            "other",
            "--check",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        stale.returncode == 1
        and "stale" in stale.stdout
        and "teardown" not in stale.stderr
    )
    bad = subprocess.run(
        [sys.executable, "-c", probe, "generate", "missing.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and bad.stderr == "missing.json: error: no such file\n"
    module = subprocess.run(
        [sys.executable, "-m", "mcptasks_gen", "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert module.returncode == 0 and "mcptasks-gen" in module.stdout


def test_colour_only_on_a_terminal() -> None:
    """Through a real pseudo-terminal the text is coloured; piped (above) it is not."""
    pexpect = pytest.importorskip("pexpect")
    exe = shutil.which("mcptasks-gen", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("mcptasks-gen is not installed in this environment")
    child = pexpect.spawn(
        exe,
        ["diff", str(CORE), str(EXT)],
        cwd=str(ROOT),
        env={
            **{k: v for k, v in os.environ.items() if k != "NO_COLOR"},
            "TERM": "xterm",
        },
        encoding="utf-8",
        timeout=60,
    )
    text = child.read()
    child.close()
    assert child.exitstatus == 1
    assert "\x1b[31m" in text and "breaking" in text
