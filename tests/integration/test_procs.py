"""The process helpers of ``tests/support/procs.py`` themselves: a server that exits
early is reported, kill -9 and clean-up, and Redis started in memory or append-only.
"""

from __future__ import annotations

import pytest

from tests.support.procs import (
    free_port,
    port_open,
    run_server,
    start_redis,
)


def test_run_server_reports_early_exit() -> None:
    import sys

    port = free_port()
    cmd = [
        sys.executable,
        "-c",
        "import sys; sys.stderr.write('no luck here\\n'); sys.exit(3)",
    ]
    with (
        pytest.raises(RuntimeError, match="no luck here"),
        run_server(cmd, port, timeout=10),
    ):
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
