"""The official conformance suite's ``tasks-*`` scenarios against the dual example
server whose tools run on Celery workers (``examples/server.py --redis URL --executor
celery:examples.celery_app``, two ``celery -A examples.celery_app worker`` processes,
one Redis as broker and task store).

Every check must pass except those the suite itself marks ``SKIPPED``, as for the
in-process servers (``test_interop_conformance``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.peers import (
    CONFORMANCE_TASK_SCENARIOS,
    conformance_checks,
    require,
)
from tests.support.procs import (
    CeleryWorker,
    celery_front_end_command,
    free_port,
    run_server,
    start_redis,
)

pytest.importorskip("celery")

ROOT = Path(__file__).resolve().parents[2]
ACCEPTED = {"SUCCESS", "SKIPPED", "INFO"}


@pytest.fixture(scope="module")
def celery_results(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[dict[str, list[dict[str, Any]]], str]]:
    """Checks of every tasks scenario, by name (run in parallel against one
    front-end and two workers), and what the front-end and the workers logged of
    tasks that did not complete (for a failure's message)."""
    require("conformance")
    work = tmp_path_factory.mktemp("conformance-celery")
    with start_redis() as redis:
        env = {"MCPTASKS_REDIS_URL": redis.url}
        workers = [
            CeleryWorker(env, f"c{index}", work, concurrency=2) for index in range(2)
        ]
        try:
            for worker in workers:
                worker.wait_ready()
            port = free_port()
            cmd = celery_front_end_command(port, redis.url)
            with run_server(
                cmd, port, url_path="/mcp", env=env, cwd=ROOT, timeout=30
            ) as server:
                checks = conformance_checks(
                    server.url, CONFORMANCE_TASK_SCENARIOS, work
                )
                logs = [server.log_path] + [worker.log_path for worker in workers]
                yield checks, _task_lines(logs)
        finally:
            for worker in workers:
                worker.kill9()


@pytest.mark.parametrize("scenario", CONFORMANCE_TASK_SCENARIOS)
def test_conformance_scenario_passes_with_celery_workers(
    scenario: str, celery_results: tuple[dict[str, list[dict[str, Any]]], str]
) -> None:
    results, logged = celery_results
    checks = results[scenario]
    failed = [c for c in checks if c["status"] not in ACCEPTED]
    assert checks, f"{scenario} ran no checks"
    assert not failed, json.dumps(failed, indent=2)[:4000] + "\n" + logged


def _task_lines(paths: list[Path]) -> str:
    """The lines of ``paths`` (front-end and worker logs) that tell of a task that
    failed, was lost or was run again, and of tracebacks, for a failure's message."""
    words = ("fail", "lost", "again", "Traceback", "Error", "WARNING", "ERROR")
    lines: list[str] = []
    for path in paths:
        text = path.read_text(errors="replace") if path.exists() else ""
        lines += [
            f"{path.name}: {line}"
            for line in text.splitlines()
            if any(word in line for word in words) and "appendonly" not in line
        ]
    return "\n".join(lines[-80:])
