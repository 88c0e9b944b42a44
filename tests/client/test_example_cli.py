"""``examples/client.py`` in a real terminal (pexpect pty) against real servers.

What a person sees: the task ID, a live status line, a question when the server needs
input (asked again until the answer is valid), the JSON result, a non-zero exit when the
tool failed, Ctrl-C cancelling the task on the server (whatever SIGINT disposition the
client inherited), and one-line errors for a bad command line or a missing dependency.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pexpect
import pytest

from tests.support import peers
from tests.support.waiting import until

from . import interop
from .interop import cli_command

PEERS = {"mcp1": "2025-11-25", "fastmcp": "ext-2026-07-28"}


@pytest.fixture(scope="module", params=sorted(PEERS))
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    with peers.serve(request.param) as handle:
        yield handle.url, PEERS[request.param]


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
    log = child.logfile_read
    assert isinstance(log, io.StringIO)
    return log.getvalue()


def assert_no_traceback(child: pexpect.spawn) -> None:
    text = output(child)
    assert "Traceback" not in text and "never retrieved" not in text, text


def server_status(url: str, task_id: str) -> str:
    """The extension task's status as the server reports it (polled until
    ``cancelled``)."""
    from mcp_tasks_ext.client import TasksClient, status_name
    from mcp_tasks_ext.task_ids import MemoryTaskIdStore
    from mcp_tasks_ext.transport import HttpTransport

    async def modern() -> str:
        async with TasksClient(HttpTransport(url), store=MemoryTaskIdStore()) as client:
            status = ""

            async def cancelled() -> bool:
                nonlocal status
                status = status_name((await client.get_task(task_id)).status)
                return status == "cancelled"

            with contextlib.suppress(AssertionError):
                await until(cancelled, timeout=5, interval=0.1)
            return status

    return asyncio.run(modern())


def test_cli_shows_status_line_and_prints_json_result(
    server: tuple[str, str], tmp_path: Path
) -> None:
    url, revision = server
    child = spawn(
        url,
        revision,
        tmp_path / "ids.db",
        "slow_compute",
        '{"seconds": 1.5, "label": "beta"}',
    )
    child.expect(r"task \S+ created")
    child.expect(r"\[working\]")
    child.expect(r"\(\d+\.\ds\)")
    child.expect(r"\[completed\]")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    output = child.before or ""
    assert "beta" in output and '"isError": false' in output


def test_cli_asks_for_elicitation_on_the_terminal(
    server: tuple[str, str], tmp_path: Path
) -> None:
    url, revision = server
    child = spawn(
        url,
        revision,
        tmp_path / "ids.db",
        "confirm_delete",
        '{"filename": "notes.txt"}',
    )
    child.expect("The server asks: Delete notes.txt\\?")
    child.expect(r"Answer\? \[accept/decline/cancel\]")
    child.sendline("accept")
    child.expect("confirm")
    child.sendline("y")
    child.expect("deleted notes.txt")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_cli_declined_elicitation_keeps_the_file(
    server: tuple[str, str], tmp_path: Path
) -> None:
    url, revision = server
    child = spawn(
        url, revision, tmp_path / "ids.db", "confirm_delete", '{"filename": "keep.txt"}'
    )
    child.expect(r"Answer\? \[accept/decline/cancel\]")
    child.sendline("decline")
    child.expect("kept keep.txt")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_cli_exits_non_zero_when_the_tool_fails(
    server: tuple[str, str], tmp_path: Path
) -> None:
    url, revision = server
    child = spawn(url, revision, tmp_path / "ids.db", "failing_job")
    child.expect("failing_job failed on purpose")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1


@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_cli_ctrl_c_cancels_the_task(
    server: tuple[str, str], tmp_path: Path, sigint: str
) -> None:
    """Ctrl-C works even when the client inherited SIGINT ignored (started from a
    background job): it installs Python's handler itself."""
    url, revision = server
    child = spawn(
        url,
        revision,
        tmp_path / "ids.db",
        "long_job",
        '{"seconds": 30}',
        sigint=sigint,
    )
    child.expect(r"task (\S+) created")
    task_id = child.match.group(1)
    child.expect(r"\[working\]")
    child.sendintr()
    if revision == "2025-11-25":
        # mcp 1.30 binds the task to the client's session, which ends with the client:
        # the status line shows the task that tasks/cancel returned.
        child.expect(r"\[cancelled\]", timeout=10)
    child.expect("interrupted: task cancelled", timeout=10)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert_no_traceback(child)
    if revision != "2025-11-25":
        assert server_status(url, task_id) == "cancelled"


@pytest.mark.parametrize("prompt", ["action", "content"])
def test_cli_ctrl_c_at_an_input_prompt_cancels_without_a_traceback(
    server: tuple[str, str], tmp_path: Path, prompt: str
) -> None:
    """Issue 9, item 21: exit 130 and the task cancelled, and nothing else printed (no
    'Task exception was never retrieved' for the answer that can no longer be sent)."""
    url, revision = server
    child = spawn(
        url, revision, tmp_path / "ids.db", "confirm_delete", '{"filename": "c.txt"}'
    )
    child.expect(r"task (\S+) created")
    task_id = child.match.group(1)
    child.expect(r"Answer\? \[accept/decline/cancel\]")
    if prompt == "content":
        child.sendline("accept")
        child.expect(r"confirm.*\(y/n\)")
    child.sendintr()
    child.expect("interrupted: task cancelled", timeout=10)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert_no_traceback(child)
    assert "deleted" not in output(child)
    if revision != "2025-11-25":
        assert server_status(url, task_id) == "cancelled"


def test_cli_asks_again_until_the_action_is_accept_decline_or_cancel(
    server: tuple[str, str], tmp_path: Path
) -> None:
    url, revision = server
    child = spawn(
        url, revision, tmp_path / "ids.db", "confirm_delete", '{"filename": "m.txt"}'
    )
    for wrong in ("maybe", "acept", "yes"):
        child.expect(r"Answer\? \[accept/decline/cancel\]")
        child.sendline(wrong)
        child.expect("please answer accept, decline or cancel")
    child.expect(r"Answer\? \[accept/decline/cancel\]")
    child.sendline("DECLINE")
    child.expect("kept m.txt")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_cli_asks_again_until_the_answer_fits_the_requested_schema(
    server: tuple[str, str], tmp_path: Path
) -> None:
    """``confirm`` is a required boolean: neither "perhaps" nor nothing is sent."""
    url, revision = server
    child = spawn(
        url, revision, tmp_path / "ids.db", "confirm_delete", '{"filename": "s.txt"}'
    )
    child.expect(r"Answer\? \[accept/decline/cancel\]")
    child.sendline("accept")
    for wrong, complaint in (
        ("perhaps", "answer y or n"),
        ("", "an answer is required"),
    ):
        child.expect(r"confirm - Delete the file\? \(y/n\): ")
        child.sendline(wrong)
        child.expect(complaint)
    child.expect(r"confirm - Delete the file\? \(y/n\): ")
    child.sendline("n")
    child.expect("kept s.txt")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


# -- without a server ------------------------------------------------------------------

UNREACHABLE = "http://127.0.0.1:9/mcp"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_client", interop.EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCHEMA_CASES: list[tuple[dict[str, Any], bool, str, Any]] = [
    ({"type": "boolean"}, True, "Yes", True),
    ({"type": "boolean"}, True, "no", False),
    ({"type": "boolean"}, True, "perhaps", ValueError),
    ({"type": "boolean", "default": True}, True, "", True),
    ({"type": "integer", "minimum": 1, "maximum": 5}, True, "3", 3),
    ({"type": "integer", "minimum": 1, "maximum": 5}, True, "7", ValueError),
    ({"type": "integer"}, True, "2.5", ValueError),
    ({"type": "number", "exclusiveMinimum": 0}, True, "0", ValueError),
    ({"type": "number"}, True, "nan", ValueError),
    ({"type": "number"}, True, "0.25", 0.25),
    ({"type": "string", "minLength": 2}, True, "a", ValueError),
    ({"type": "string", "maxLength": 3}, True, "abcd", ValueError),
    ({"type": "string"}, False, "", "MISSING"),
    ({"type": "string"}, True, "", ValueError),
    (
        {"type": "string", "format": "email"},
        True,
        "luca@example.org",
        "luca@example.org",
    ),
    ({"type": "string", "format": "email"}, True, "luca", ValueError),
    ({"type": "string", "format": "uri"}, True, "example.org", ValueError),
    ({"type": "string", "format": "date"}, True, "2026-02-30", ValueError),
    (
        {"type": "string", "format": "date-time"},
        True,
        "2026-01-02T03:04:05Z",
        "2026-01-02T03:04:05Z",
    ),
    ({"type": "string", "enum": ["red", "green"]}, True, "green", "green"),
    ({"type": "string", "enum": ["red", "green"]}, True, "blue", ValueError),
    (
        {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
        True,
        "b",
        ValueError,
    ),
    (
        {
            "type": "array",
            "items": {"type": "string", "enum": ["x", "y"]},
            "maxItems": 1,
        },
        True,
        "x",
        ["x"],
    ),
    (
        {
            "type": "array",
            "items": {"type": "string", "enum": ["x", "y"]},
            "maxItems": 1,
        },
        True,
        "x, y",
        ValueError,
    ),
    (
        {"type": "array", "items": {"anyOf": [{"const": "x"}, {"const": "y"}]}},
        True,
        "z",
        ValueError,
    ),
]


@pytest.mark.parametrize(("schema", "required", "text", "expected"), SCHEMA_CASES)
def test_answers_are_checked_against_the_property_schema(
    schema: dict[str, Any], required: bool, text: str, expected: Any
) -> None:
    example = load_example()
    if expected is ValueError:
        with pytest.raises(ValueError):
            example.parse_answer(text, schema, required)
        return
    value = example.parse_answer(text, schema, required)
    if expected == "MISSING":
        assert value is example.MISSING
    else:
        assert value == expected and type(value) is type(expected)


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
