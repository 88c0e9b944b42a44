"""Running mypy --strict and pyright strict over files as a user's project would: the
golden packages and the examples on the path, an interpreter whose site-packages
supply the rest (the project's venv, or a peer's with an official SDK)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "generated"
EXAMPLES = ROOT / "examples"
BIN = Path(sys.executable).parent
DEADLINE_S = 240


def _tool(name: str) -> str:
    path = BIN / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if found is None:
        raise AssertionError(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def mypy_errors(files: Sequence[Path], python: str, cache: Path) -> list[str]:
    """``mypy --strict`` on ``files`` with ``python``'s site-packages: its error
    lines (every file it checks, imported packages included)."""
    proc = subprocess.run(
        [
            _tool("mypy"),
            "--strict",
            "--python-executable",
            python,
            "--cache-dir",
            str(cache),
            *map(str, files),
        ],
        cwd=ROOT,
        env={**os.environ, "MYPYPATH": f"{GENERATED}{os.pathsep}{EXAMPLES}"},
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert errors or proc.returncode == 0, proc.stdout + proc.stderr
    return errors


def pyright_errors(files: Sequence[Path], python: str, work: Path) -> list[str]:
    """pyright in strict mode on ``files`` with ``python``'s site-packages: one line
    per error (file, line, rule and message)."""
    config = work / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "typeCheckingMode": "strict",
                "extraPaths": [str(GENERATED), str(EXAMPLES)],
                "pythonVersion": f"{sys.version_info[0]}.{sys.version_info[1]}",
            }
        )
    )
    proc = subprocess.run(
        [
            _tool("pyright"),
            "-p",
            str(config),
            "--pythonpath",
            python,
            "--outputjson",
            *map(str, files),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"pyright said:\n{proc.stdout}\n{proc.stderr}") from None
    return [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d.get('rule', '')}"
        f" {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
