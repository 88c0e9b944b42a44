"""``examples/client.py`` in a real terminal (pexpect pty) against the real peers'
servers (``mcp==1.30.0`` and ``fastmcp``).

What a person sees: the task ID, a live status line, a question when the server needs
input (asked again until the answer is valid), the JSON result, a non-zero exit when the
tool failed, Ctrl-C cancelling the task on the server (whatever SIGINT disposition the
client inherited). The one-line errors for a bad command line or a missing dependency
are in ``tests/integration/client/test_example_cli.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests.support import peers
from tests.support.example_cli import assert_no_traceback, output, spawn
from tests.support.waiting import until

PEERS = {"mcp1": "2025-11-25", "fastmcp": "ext-2026-07-28"}
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=sorted(PEERS))
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    with peers.serve(request.param) as handle:
        yield handle.url, PEERS[request.param]


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
