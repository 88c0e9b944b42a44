"""Smoke tests of the peer fixtures: each SDK's real client against its own real server.

These prove that the fixture servers and clients in ``tests/peers/`` work, so that
interop tests can pair them with the generated client and server instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import peers
from tests.support.procs import (
    ServerHandle,
    free_port,
    port_open,
    run_server,
    start_redis,
)

SDKS = ["mcp1", "ts-sdk", "fastmcp"]


@pytest.fixture(scope="module", params=SDKS)
def peer(request: pytest.FixtureRequest) -> Iterator[tuple[str, ServerHandle]]:
    """One running fixture server per SDK, shared by that SDK's tests."""
    with peers.serve(request.param) as handle:
        yield request.param, handle


def test_completes_with_status_messages(peer: tuple[str, ServerHandle]) -> None:
    name, server = peer
    report = peers.run_client(
        name, server.url, "slow_compute", {"seconds": 1.0, "label": "sum"}
    )
    assert report["status"] == "completed", report
    assert report["text"] == "sum: done", report
    assert report["is_error"] is False
    assert any(m.startswith("sum: ") for m in report["status_messages"]), report


def test_failing_job(peer: tuple[str, ServerHandle]) -> None:
    name, server = peer
    report = peers.run_client(name, server.url, "failing_job", {})
    if peers.KINDS[name].revision == "2025-11-25":
        # 2025-11-25: a failed tool call ends the task "failed".
        assert report["status"] == "failed", report
        assert "failing_job failed on purpose" in " ".join(
            report["status_messages"]
        ), report
    else:
        # Extension: a tool execution error is a completed task with an isError result.
        assert report["status"] == "completed", report
        assert report["is_error"] is True, report
        assert "failing_job failed on purpose" in report["text"], report


@pytest.mark.parametrize(
    ("action", "verb"), [("accept", "deleted"), ("decline", "kept")]
)
def test_elicitation(peer: tuple[str, ServerHandle], action: str, verb: str) -> None:
    name, server = peer
    report = peers.run_client(
        name, server.url, "confirm_delete", {"filename": "notes.txt"}, elicit=action
    )
    assert report["elicitations"] == ["Delete notes.txt?"], report
    assert report["status"] == "completed", report
    assert report["text"] == f"{verb} notes.txt", report


def test_elicitation_answer_false(peer: tuple[str, ServerHandle]) -> None:
    name, server = peer
    report = peers.run_client(
        name,
        server.url,
        "confirm_delete",
        {"filename": "a.txt"},
        answer={"confirm": False},
    )
    assert report["text"] == "kept a.txt", report


def test_cancel(peer: tuple[str, ServerHandle]) -> None:
    name, server = peer
    report = peers.run_client(
        name, server.url, "long_job", {"seconds": 30}, cancel_after=0.5
    )
    assert report["status"] == "cancelled", report
    assert report["cancel"] is not None and "error" not in report["cancel"], report


# --- the process helpers themselves ---------------------------------------------------


def test_run_server_reports_early_exit() -> None:
    import sys

    port = free_port()
    cmd = [
        sys.executable,
        "-c",
        "import sys; sys.stderr.write('no luck here\\n'); sys.exit(3)",
    ]
    with pytest.raises(RuntimeError, match="no luck here"):
        with run_server(cmd, port, timeout=10):
            pass


def test_run_server_kill9_and_cleanup() -> None:
    import sys

    port = free_port()
    cmd = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    with run_server(cmd, port, ready_path="/", url_path="/x") as handle:
        assert handle.url == f"http://127.0.0.1:{port}/x"
        handle.kill9()
        assert handle.proc.poll() is not None
    assert not port_open(port)


def test_start_redis_in_memory() -> None:
    redis = pytest.importorskip("redis")
    with start_redis() as server:
        client = redis.Redis(host=server.host, port=server.port)
        client.set("k", "v")
        assert client.get("k") == b"v"
        assert client.config_get("appendonly") == {"appendonly": "no"}


def test_start_redis_appendonly_survives_kill9() -> None:
    redis = pytest.importorskip("redis")
    with start_redis(appendonly=True) as server:
        redis.Redis(host=server.host, port=server.port).set("k", "kept")
        server.restart(hard=True)
        assert redis.Redis(host=server.host, port=server.port).get("k") == b"kept"


def test_conformance_cli_runs(tmp_path: Path) -> None:
    """The conformance suite starts and judges the fastmcp fixture's capability
    negotiation."""
    with peers.serve("fastmcp") as server:
        proc = peers.run_conformance(
            server.url, "tasks-capability-negotiation", tmp_path
        )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "0 failed" in proc.stdout
    assert list(tmp_path.glob("*/checks.json"))
