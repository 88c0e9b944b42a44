"""Every benchmark under ``benchmarks/`` runs to the end in its smallest mode.

A benchmark is run by hand, rarely, and used to break unnoticed: ``replicas.py``
stopped on a ``KeyError`` when the failover's ``tools/call`` was refused, and later on
replies it did not read. Here each runs as a real process from the repository root with
``--smoke`` (a few seconds of load at most, real servers, real ``redis-server``) and
must exit 0 having printed its table; no figure is checked. Peers that are not
installed are skipped by the benchmarks themselves (``server_throughput.py``,
``client_requests.py``).

Below, ``benchmarks/replies.py`` itself: a reply that is an error or lacks what is read
from it ends a benchmark with status 1 and the reply, never a ``KeyError``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import shared_dir
from tests.support.procs import missing_dependency

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from replies import BadReply, message, result, run  # noqa: E402

DEADLINE_S = 600
"""Time one smoke run may take on a loaded two-core machine before the test fails."""

SMOKE = {
    "validate": (["validate.py", "--smoke"], "against datamodel-codegen"),
    "generate": (["generate.py", "--smoke"], "ratio --check (no cache) / generate"),
    "replicas": (["replicas.py", "--smoke"], "failover after kill -9"),
    "replicas-sqlite-cache": (
        ["replicas.py", "--smoke", "--sqlite-cache"],
        "p99 ratio",
    ),
    "server_throughput": (["server_throughput.py", "--smoke"], "dual server"),
    "client_requests": (["client_requests.py", "--smoke"], "server_ext, inline"),
    "create_cost": (["create_cost.py", "--smoke"], "redis  finished"),
    "push_throughput": (["push_throughput.py", "--smoke"], "tasks/s ratio 4 vs 1"),
    "push_stress": (["push_stress.py", "--smoke"], "no hang in 2 runs"),
    "celery_workers": (["celery_workers.py", "--smoke"], "celery, 2 worker processes"),
}
NEEDS_REDIS = {
    "replicas",
    "replicas-sqlite-cache",
    "create_cost",
    "push_stress",
    "celery_workers",
}


def test_every_benchmark_has_a_smoke_run() -> None:
    """A new benchmark is added to ``SMOKE`` (and given a ``--smoke`` mode)."""
    scripts = {p.name for p in (ROOT / "benchmarks").glob("*.py")}
    helpers = {
        "replies.py",
        "floor_server.py",
    }  # floor_server: run by server_throughput
    assert scripts - helpers == {args[0] for args, _ in SMOKE.values()}


@pytest.mark.official_schemas  # generate.py and validate.py read ../shared
@pytest.mark.parametrize("name", sorted(SMOKE))
def test_benchmark_smoke_run(name: str) -> None:
    args, printed = SMOKE[name]
    if name in NEEDS_REDIS and shutil.which("redis-server") is None:
        missing_dependency("redis-server is not on PATH")
    env = {**os.environ, "MCPTASKS_SHARED": str(shared_dir())}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / args[0]), *args[1:]],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )
    output = f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    assert done.returncode == 0, output
    assert printed in done.stdout, output
    assert "Traceback" not in done.stderr, output


def test_an_error_reply_is_reported_not_a_key_error() -> None:
    error = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"limit"}}'
    with pytest.raises(BadReply, match=r"tools/call on x: error reply: .*limit"):
        result(error, "tools/call on x", "taskId")
    with pytest.raises(BadReply, match=r"no result.taskId in the reply"):
        result(b'{"jsonrpc":"2.0","id":1,"result":{}}', "tools/call", "taskId")
    with pytest.raises(BadReply, match=r"expected status='completed'"):
        result(
            {"id": 1, "result": {"status": "working"}},
            "get",
            expect={"status": "completed"},
        )
    with pytest.raises(BadReply, match="not a JSON-RPC response"):
        result(b"<html>502</html>", "get")


def test_a_reply_is_read_from_json_or_an_sse_stream() -> None:
    stream = (
        'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n'
        'event: message\ndata: {"jsonrpc":"2.0","id":7,"result":{"taskId":"t"}}\n\n'
    )
    assert result(stream, "tools/call", "taskId") == "t"
    assert message(b' {"jsonrpc":"2.0","id":7,"result":{}}', "x")["id"] == 7


def test_run_ends_the_process_with_status_1_and_the_reply() -> None:
    def main() -> None:
        result(b'{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}', "ping")

    with pytest.raises(SystemExit) as stopped:
        run(main)
    assert isinstance(stopped.value.code, str)  # sys.exit(message): status 1
    assert "ping: error reply" in stopped.value.code
