"""The SDK seams of ``sdk.py`` with real SDK objects over streamable HTTP on 127.0.0.1.

- Tasks extension on ``mcp==2.3.0`` (fastmcp peer virtualenv): ``mcp.client.Client``
  with ``client_extension`` (``tests/peers/sdk_seam_client.py``) against three servers:
  ``examples/sdk_server_ext.py`` (an ``MCPServer`` app with ``server_extension``),
  ``examples/server_ext.py`` (the standalone server) and the fastmcp-tasks 4.1.4 peer
  (``tests/peers/fastmcp_server.py``): a task that completes, a plain tool, one that
  needs input, a failing one (tool error; JSON-RPC error where the server has such a
  tool), a cancellation (the server reports ``cancelled``) and a resume from the store;
  and ``examples/sdk_client_ext.py`` killed with SIGKILL mid-wait, then resumed.
- 2025-11-25 on ``mcp==1.30.0``: ``examples/sdk_server_2025.py`` (a ``FastMCP`` app with
  ``fastmcp_tasks``) serves the mcp 1.30 and TypeScript SDK clients (complete, fail,
  input, cancel) and this package's own client resuming a task from a new connection.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.support import peers
from tests.support.procs import ServerHandle, free_port, run_server
from tests.support.servers import EXAMPLES, example_server

GENERATED = Path(__file__).resolve().parents[2] / "generated"


def _peer_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(GENERATED), PYTHONUNBUFFERED="1")
    return env


EXT_SERVERS = ("sdk_server_ext", "server_ext", "fastmcp")
"""Tasks-extension servers the client extension is run against (see the module doc)."""


@pytest.fixture(scope="module", params=EXT_SERVERS)
def ext_app(request: pytest.FixtureRequest) -> Iterator[ServerHandle]:
    """A Tasks-extension server: ``request.param`` is one of :data:`EXT_SERVERS`."""
    peers.require("fastmcp")  # the client side runs in the fastmcp peer virtualenv
    kind: str = request.param
    if kind == "fastmcp":
        with peers.fastmcp_server(timeout=60) as handle:
            yield handle
    elif kind == "server_ext":
        with example_server("server_ext", "--memory") as handle:
            yield handle
    else:
        port = free_port()
        cmd = [
            str(peers.fastmcp_python()),
            str(EXAMPLES / "sdk_server_ext.py"),
            "--port",
            str(port),
            "--memory",
        ]
        with run_server(cmd, port, url_path="/mcp", timeout=60) as handle:
            yield handle


def _kind(request: pytest.FixtureRequest) -> str:
    """``fastmcp`` for the fastmcp-tasks peer, ``ours`` for the example servers."""
    server: str = request.node.callspec.params["ext_app"]
    return "fastmcp" if server == "fastmcp" else "ours"


def test_sdk_client_extension_against_tasks_servers(
    ext_app: ServerHandle, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    kind = _kind(request)
    script = Path(peers.PEER_PROGRAMS) / "sdk_seam_client.py"
    proc = subprocess.run(
        [
            str(peers.fastmcp_python()),
            str(script),
            ext_app.url,
            str(tmp_path / "ids.db"),
            kind,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=_peer_env(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.splitlines()[-1])
    ours = kind == "ours"
    assert report["completed"] == ("computed a after 0.3s" if ours else "a: done")
    assert report["completed_is_error"] is False, report
    assert report["input"] == "deleted f.txt", report
    assert report["elicitations"] == ["Delete f.txt?"], report
    assert "input_required" in report["statuses"], report
    is_error, text = report["failed"]
    failure = "job failed: the input could not be processed" if ours else "on purpose"
    assert is_error and failure in text, report
    assert report["cancelled"] is True, report
    assert report["cancelled_status"] == "cancelled", report
    assert report["pending"] is True, report
    assert report["resumed"] == ("computed r after 1.0s" if ours else "r: done")
    assert report["pending_after"] == [], report
    if ours:
        assert report["greet"] == "Hello, b!", report
        assert report["protocol_error"] == [-32603, "internal failure"], report


def test_sdk_client_killed_mid_wait_resumes_from_the_store(
    ext_app: ServerHandle, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = str(tmp_path / "ids.db")
    client = [str(peers.fastmcp_python()), str(EXAMPLES / "sdk_client_ext.py")]
    waiting = subprocess.Popen(
        [*client, ext_app.url, "slow_compute", '{"seconds": 1.5}', "--store", store],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=_peer_env(),
    )
    try:
        assert waiting.stderr is not None
        line = waiting.stderr.readline()  # the first status line: the task exists
        assert "working" in line, line
    finally:
        waiting.send_signal(signal.SIGKILL)
        waiting.wait(timeout=10)
    assert waiting.returncode == -signal.SIGKILL
    resumed = subprocess.run(
        [*client, ext_app.url, "--resume", "--store", store],
        capture_output=True,
        text=True,
        timeout=30,
        env=_peer_env(),
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    result = json.loads(resumed.stdout)
    expected = "computed  after 1.5s" if _kind(request) == "ours" else "job: done"
    assert result["content"][0]["text"] == expected, result


@pytest.fixture(scope="module")
def app_2025() -> Iterator[ServerHandle]:
    """``examples/sdk_server_2025.py`` (FastMCP + fastmcp_tasks), mcp 1.30 peer venv."""
    peers.require("mcp1")
    port = free_port()
    cmd = [
        str(peers.mcp1_python()),
        str(EXAMPLES / "sdk_server_2025.py"),
        "--port",
        str(port),
        "--memory",
    ]
    with run_server(cmd, port, url_path="/mcp", timeout=60) as handle:
        yield handle


CASES_2025 = [
    (
        "slow_compute",
        {"seconds": 0.3, "label": "a"},
        {},
        "completed",
        "computed a after 0.3s",
    ),
    ("confirm_delete", {"filename": "f.txt"}, {}, "completed", "deleted f.txt"),
    ("failing_job", {}, {}, "failed", "job failed: the input could not be processed"),
    ("slow_compute", {"seconds": 20}, {"cancel_after": 0.5}, "cancelled", ""),
]


@pytest.mark.parametrize("peer", ["mcp1", "ts-sdk"])
def test_fastmcp_seam_serves_the_sdk_clients(app_2025: ServerHandle, peer: str) -> None:
    peers.require(peer)

    def one(case: tuple[str, dict[str, Any], dict[str, Any], str, str]) -> None:
        tool, arguments, options, status, text = case
        report = peers.run_client(
            peer, app_2025.url, tool, arguments, timeout=60, **options
        )
        assert report["status"] == status, report
        assert report["text"] == text, report
        if tool == "confirm_delete":
            assert report["elicitations"] == ["Delete f.txt?"], report
        if status == "completed":
            assert report["is_error"] is False, report
        if tool == "slow_compute" and status == "completed":
            assert "computing a for 0.3s" in report["status_messages"], report

    with ThreadPoolExecutor(max_workers=len(CASES_2025)) as pool:
        list(pool.map(one, CASES_2025))


def test_fastmcp_seam_keeps_plain_tools_and_resumes_tasks(
    app_2025: ServerHandle,
) -> None:
    from mcp_tasks_2025_11_25.client import TasksClient
    from mcp_tasks_2025_11_25.task_ids import MemoryTaskIdStore
    from mcp_tasks_2025_11_25.transport import HttpTransport

    async def run() -> tuple[dict[str, Any], Any, Any]:
        store = MemoryTaskIdStore()
        async with TasksClient(HttpTransport(app_2025.url), store=store) as client:
            listed = {t["name"]: t for t in await client.list_tools()}
            greeting = await client.call_tool("greet", {"name": "c"})
            handle = await client.start_tool("slow_compute", {"seconds": 0.5})
        async with TasksClient(HttpTransport(app_2025.url), store=store) as again:
            assert handle.task_id is not None
            resumed = await again.resume(handle.task_id)
        return listed, greeting, resumed

    listed, greeting, resumed = asyncio.run(run())
    assert listed["slow_compute"]["execution"] == {"taskSupport": "optional"}
    assert listed["confirm_delete"]["execution"] == {"taskSupport": "required"}
    assert "execution" not in listed["greet"] or listed["greet"]["execution"].get(
        "taskSupport"
    ) in (None, "forbidden")
    assert greeting.content[0]["text"] == "Hello, c!"
    assert resumed.content[0]["text"] == "computed  after 0.5s"
