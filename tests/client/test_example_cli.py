"""``examples/client.py`` in a real terminal (pexpect pty) against real servers.

What a person sees: the task ID, a live status line, a question when the server needs
input, the JSON result, a non-zero exit when the tool failed, and Ctrl-C cancelling the
task on the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests.support import peers

from .interop import cli_command

PEERS = {"mcp1": "2025-11-25", "fastmcp": "ext-2026-07-28"}


@pytest.fixture(scope="module", params=sorted(PEERS))
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    with peers.serve(request.param) as handle:
        yield handle.url, PEERS[request.param]


def spawn(url: str, revision: str, store: Path, *args: str) -> pexpect.spawn:
    command = cli_command(url, *args, revision=revision, store=store)
    return pexpect.spawn(
        command[0], command[1:], encoding="utf-8", timeout=30, dimensions=(24, 200)
    )


def server_status(url: str, task_id: str) -> str:
    """The extension task's status as the server reports it (polled until ``cancelled``)."""
    from mcp_tasks_ext.client import TasksClient, status_name
    from mcp_tasks_ext.task_ids import MemoryTaskIdStore
    from mcp_tasks_ext.transport import HttpTransport

    async def modern() -> str:
        async with TasksClient(HttpTransport(url), store=MemoryTaskIdStore()) as client:
            for _ in range(50):
                status = status_name((await client.get_task(task_id)).status)
                if status == "cancelled":
                    break
                await asyncio.sleep(0.1)
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


def test_cli_ctrl_c_cancels_the_task(server: tuple[str, str], tmp_path: Path) -> None:
    url, revision = server
    child = spawn(url, revision, tmp_path / "ids.db", "long_job", '{"seconds": 30}')
    child.expect(r"task (\S+) created")
    task_id = child.match.group(1)
    child.expect(r"\[working\]")
    child.sendintr()
    if revision == "2025-11-25":
        # mcp 1.30 binds the task to the client's session, which ends with the client:
        # the status line shows the task that tasks/cancel returned.
        child.expect(r"\[cancelled\]")
    child.expect("interrupted: task cancelled")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    if revision != "2025-11-25":
        assert server_status(url, task_id) == "cancelled"
