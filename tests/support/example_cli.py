"""Helpers shared by the interop and terminal tests: run the example client as a
process, or in a pty (pexpect)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect

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


def inherit_sigint(disposition: str) -> Callable[[], None]:
    """A ``preexec_fn`` giving the client SIGINT as the default or ignored (a background
    job of a non-interactive shell), whatever the test process itself has."""
    handler = signal.SIG_IGN if disposition == "ignored" else signal.SIG_DFL

    def preexec() -> None:
        signal.signal(signal.SIGINT, handler)

    return preexec


def spawn(
    url: str, revision: str, store: Path, *args: str, sigint: str = "default"
) -> pexpect.spawn:
    """``examples/client.py`` in a pty (pexpect), its output kept for the checks."""
    command = cli_command(url, *args, revision=revision, store=store)
    child = pexpect.spawn(
        command[0],
        command[1:],
        encoding="utf-8",
        timeout=30,
        dimensions=(24, 200),
        preexec_fn=inherit_sigint(sigint),
    )
    child.logfile_read = io.StringIO()  # everything the client wrote, for the checks
    return child


def output(child: pexpect.spawn) -> str:
    """Everything the client wrote to its terminal so far."""
    log = child.logfile_read
    assert isinstance(log, io.StringIO)
    return log.getvalue()


def assert_no_traceback(child: pexpect.spawn) -> None:
    """Fail the test if the client printed a traceback or an unretrieved error."""
    text = output(child)
    assert "Traceback" not in text and "never retrieved" not in text, text
