"""``examples/client.py`` as a real process, without a peer: one-line errors for a bad
command line or a missing dependency, the help, and a client killed at an input prompt
against ``examples/server_2025.py`` asked the same question again after ``--resume``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.support import example_cli as interop
from tests.support.example_cli import assert_no_traceback, spawn
from tests.support.procs import free_port, run_server

ROOT = Path(__file__).resolve().parents[3]


UNREACHABLE = "http://127.0.0.1:9/mcp"


def run_example(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(interop.EXAMPLE), *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize("arguments", ['{"seconds": ', "seconds=5", "[1, 2]", '"text"'])
def test_cli_bad_json_arguments_are_a_one_line_usage_error(
    arguments: str, tmp_path: Path
) -> None:
    """Exit 2 (a usage error) before connecting; exit 1 would say the tool failed."""
    done = run_example(
        UNREACHABLE, "slow_compute", arguments, "--store", str(tmp_path / "ids.db")
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "JSON-ARGS" in lines[0], done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_cli_help_shows_the_defaults_and_the_exit_codes() -> None:
    done = run_example("--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "(default: found out from the server)" in text
    assert "(default: {})" in text
    assert "(default: wait until the task ends)" in text
    assert "default: $MCP_TASKS_STORE, else" in text
    assert "Exit status:" in text
    for code, meaning in (
        ("0", "success"),
        ("1", "the tool failed"),
        ("2", "cancelled"),
        ("3", "other errors"),
        ("130", "Ctrl-C"),
    ):
        assert f" {code} " in text and meaning in text


def test_cli_without_httpx_says_what_to_install(tmp_path: Path) -> None:
    """An ``httpx`` that cannot be imported (as when it is not installed)."""
    fake = tmp_path / "site" / "httpx"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'httpx'\", name='httpx')\n"
    )
    path = os.pathsep.join([str(fake.parent), os.environ.get("PYTHONPATH", "")])
    done = run_example(
        UNREACHABLE,
        "slow_compute",
        "--store",
        str(tmp_path / "ids.db"),
        env={"PYTHONPATH": path},
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == [
        "error: HttpTransport needs the httpx package: pip install httpx"
    ], done.stderr


def test_cli_killed_at_an_input_prompt_is_asked_again_after_resume(
    tmp_path: Path,
) -> None:
    """Against ``examples/server_2025.py``: the client is killed (SIGKILL) while it asks
    the server's question; ``--resume`` joins the session again, and the server sends
    the still unanswered question again (on ``tasks/result``), so the resumed client
    asks it, sends the answer and the task completes."""
    port = free_port()
    command = [
        sys.executable,
        str(ROOT / "examples" / "server_2025.py"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--memory",
    ]
    store = tmp_path / "ids.db"
    with run_server(command, port, url_path="/mcp") as handle:
        child = spawn(
            handle.url, "2025-11-25", store, "confirm_delete", '{"filename": "r.txt"}'
        )
        child.expect(r"Answer\? \[accept/decline/cancel\]")
        child.expect(r"task (\S+) created")  # printed as the question waits
        task_id = child.match.group(1)
        child.kill(signal.SIGKILL)
        child.close(force=True)
        resumed = spawn(handle.url, "2025-11-25", store, "--resume", task_id)
        resumed.expect("The server asks: Delete r.txt\\?", timeout=20)
        resumed.expect(r"Answer\? \[accept/decline/cancel\]")
        resumed.sendline("accept")
        resumed.expect("confirm")
        resumed.sendline("y")
        resumed.expect("deleted r.txt")
        resumed.expect(pexpect.EOF)
        resumed.close()
        assert resumed.exitstatus == 0
        assert_no_traceback(resumed)
        assert "Traceback" not in handle.log_tail(400)
