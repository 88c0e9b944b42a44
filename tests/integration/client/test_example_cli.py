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


def test_cli_without_a_tool_is_a_usage_error_before_connecting() -> None:
    """No TOOL and no --resume: exit 2 and one line, before any connection (the URL
    is unreachable, so a connection attempt would say so and exit 3)."""
    proc = run_example(UNREACHABLE)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().endswith("error: a TOOL is required (or --resume)")
    assert "Traceback" not in proc.stderr and "transport" not in proc.stderr


@pytest.mark.parametrize("alias", ["ext", "extension", "2026-07-28", "2025"])
def test_cli_revision_takes_the_generator_aliases(alias: str) -> None:
    """``--revision`` takes the generator's aliases: the command line is valid, so
    the client goes on to connect (and fails to, exit 3)."""
    proc = run_example(UNREACHABLE, "slow_compute", "--revision", alias)
    assert proc.returncode == 3, proc.stderr
    assert "HTTP transport failed" in proc.stderr


def test_cli_unknown_revision_lists_the_choices() -> None:
    proc = run_example(UNREACHABLE, "slow_compute", "--revision", "2024")
    assert proc.returncode == 2
    assert "unknown revision '2024' (choose from 2025, 2025-11-25" in proc.stderr


@pytest.fixture(scope="module", params=["server_2025.py", "server_ext.py"])
def example_server(request: pytest.FixtureRequest) -> object:
    port = free_port()
    command = [
        sys.executable,
        str(ROOT / "examples" / request.param),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--memory",
    ]
    with run_server(command, port, url_path="/mcp") as handle:
        yield handle


@pytest.mark.parametrize("stdin", ["devnull", "empty pipe", "empty file"])
def test_cli_end_of_input_at_a_prompt_declines_without_a_traceback(
    example_server: object, tmp_path: Path, stdin: str
) -> None:
    """Standard input that is not a terminal and has no answer (``/dev/null``, a pipe
    closed at once, an empty file): the question is declined, the task ends as the
    tool decides for a decline, and the client exits 0 with no traceback."""
    url = example_server.url  # type: ignore[attr-defined]
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    source: object = {
        "devnull": subprocess.DEVNULL,
        "empty pipe": subprocess.PIPE,
        "empty file": empty.open("rb"),
    }[stdin]
    proc = subprocess.run(
        [
            sys.executable,
            str(interop.EXAMPLE),
            url,
            "confirm_delete",
            '{"filename": "keep.txt"}',
            "--store",
            str(tmp_path / "ids.db"),
        ],
        capture_output=True,
        input=b"" if stdin == "empty pipe" else None,
        stdin=None if stdin == "empty pipe" else source,  # type: ignore[arg-type]
        timeout=60,
    )
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "end of input: the question is declined" in err
    assert "kept keep.txt" in proc.stdout.decode()
    assert "Traceback" not in err


def test_cli_reads_answers_line_by_line_from_a_file(
    example_server: object, tmp_path: Path
) -> None:
    """Answers in a file, one a line: the first says accept, the next answers the
    requested property, and the tool goes on with them."""
    url = example_server.url  # type: ignore[attr-defined]
    answers = tmp_path / "answers.txt"
    answers.write_text("accept\ny\n")
    with answers.open("rb") as source:
        proc = subprocess.run(
            [
                sys.executable,
                str(interop.EXAMPLE),
                url,
                "confirm_delete",
                '{"filename": "gone.txt"}',
                "--store",
                str(tmp_path / "ids.db"),
            ],
            capture_output=True,
            stdin=source,
            timeout=60,
        )
    assert proc.returncode == 0, proc.stderr.decode()
    assert "deleted gone.txt" in proc.stdout.decode()
    assert b"Traceback" not in proc.stderr
