"""Helpers shared by the interop and terminal tests: run the example client as a
process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "client.py"


def cli_command(url: str, *args: str, revision: str, store: Path) -> list[str]:
    """The command line of ``examples/client.py``."""
    return [
        sys.executable,
        str(EXAMPLE),
        url,
        *args,
        "--revision",
        revision,
        "--store",
        str(store),
    ]


def run_cli(
    url: str, *args: str, revision: str, store: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the example client to completion (stdin closed) and capture its output."""
    return subprocess.run(
        cli_command(url, *args, revision=revision, store=store),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def start_cli_and_wait_for(
    url: str,
    *args: str,
    revision: str,
    store: Path,
    marker: str,
    log: Path,
    timeout: float = 30,
) -> subprocess.Popen[Any]:
    """Start the example client and return once ``marker`` appeared in its stderr."""
    handle = log.open("w")
    proc = subprocess.Popen(
        cli_command(url, *args, revision=revision, store=store),
        stdout=subprocess.DEVNULL,
        stderr=handle,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    handle.close()
    deadline = time.monotonic() + timeout
    while marker not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"client never printed {marker!r}:\n{log.read_text()}")
        time.sleep(0.05)
    return proc
