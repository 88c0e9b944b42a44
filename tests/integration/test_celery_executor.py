"""``CeleryExecutor`` with real Celery workers and a real Redis broker (never eager
mode).

The dual example server (``examples/server.py --redis URL --executor
celery:examples.celery_app``) is the front-end; ``celery -A examples.celery_app
worker`` processes (prefork, one child each) run the tools, started from the
repository root as the docs say. The workers log ``task ID: received by process PID``
as a Celery task starts and ``task ID: OUTCOME`` (``ran``, or why not) as it ends,
which is what these tests read of them; everything else they learn over HTTP or from
the task store.

Covered: a task cancelled while every worker is down never runs; tool calls of both
revisions (the generated client over HTTP) complete on a worker, as do tasks that
ask for input (answered through the front-end), in both revisions, an idempotent
tool's without holding a worker while it waits; cancel stops a
running task within a second; kill -9 of a worker child or of a whole worker mid-task
runs an idempotent tool again once and fails any other tool saying the worker was
lost, within the lease time; a task three times longer than the broker's visibility
timeout runs once; every worker killed while an idempotent tool waits for input, the
answer (through another front-end, or on the 2025-11-25 session) kept and the question
asked once; a front-end shut down leaves its tasks running; a Redis restart
mid-task loses nothing and runs nothing twice; a typed tool runs on a worker; a
2025-11-25 task's progress reaches its client.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_tasks.client import TasksClient
from mcp_tasks.server.executor import WORKER_LOST
from mcp_tasks.task_ids import MemoryTaskIdStore
from tests.support.procs import (
    CeleryWorker,
    RedisHandle,
    ServerHandle,
    celery_front_end_command,
    free_port,
    run_server,
    start_redis,
)
from tests.support.servers import ext_message, headers_for, result_of
from tests.support.waiting import until, until_sync

pytestmark = pytest.mark.anyio

pytest.importorskip("celery")

ROOT = Path(__file__).resolve().parents[2]
LEASE_S = 4.0
"""The lease of front-end and workers: a lost worker's task is run again or failed
about ``LEASE_S * 4 / 3`` seconds after its worker died. Renewed every third of it,
so a live worker keeps it through a stall of over 2.5 s (a loaded 2-core CI machine
running other test files at once: 2 s let a waiting task's lease lapse there)."""
VISIBILITY_TIMEOUT_S = 2.0
"""The broker's visibility timeout (short, to show that it causes no second run)."""
EXTENSION = "ext-2026-07-28"
TERMINAL = {"completed", "failed", "cancelled"}


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisHandle]:
    """The broker and task store of this module's front-end and workers (with an
    append-only file, so that a restart keeps everything)."""
    with start_redis(appendonly=True) as handle:
        yield handle


def environment(redis: RedisHandle) -> dict[str, str]:
    """What the front-end and the workers read (``examples/celery_app.py``)."""
    return {
        "MCPTASKS_REDIS_URL": redis.url,
        "MCPTASKS_LEASE_S": str(LEASE_S),
        "MCPTASKS_VISIBILITY_TIMEOUT_S": str(VISIBILITY_TIMEOUT_S),
    }


@contextmanager
def front_end(redis: RedisHandle) -> Iterator[ServerHandle]:
    """``examples/server.py`` running its tools on Celery workers."""
    port = free_port()
    cmd = celery_front_end_command(port, redis.url, "--lease-s", str(LEASE_S))
    with run_server(
        cmd,
        port,
        url_path="/mcp",
        env=environment(redis),
        cwd=ROOT,
        timeout=30,
    ) as handle:
        yield handle


@pytest.fixture(scope="module")
def front(redis_server: RedisHandle) -> Iterator[ServerHandle]:
    """The front-end of most tests."""
    with front_end(redis_server) as handle:
        yield handle


class Pool:
    """The module's workers, started when a test first needs them."""

    def __init__(self, redis: RedisHandle) -> None:
        self.redis = redis
        self.log_dir = Path(tempfile.mkdtemp(prefix="mcptasks-celery-"))
        self.workers: list[CeleryWorker] = []
        self.count = 0

    def ensure(self, live: int = 2) -> None:
        """Have ``live`` running workers (starting them at once, then waiting)."""
        self.workers = [w for w in self.workers if w.proc.poll() is None]
        started = []
        while len(self.workers) < live:
            self.count += 1
            worker = CeleryWorker(
                environment(self.redis), f"w{self.count}", self.log_dir
            )
            self.workers.append(worker)
            started.append(worker)
        for worker in started:
            worker.wait_ready()

    def logs(self) -> str:
        """Every worker's log, the dead ones' too."""
        return "\n".join(
            path.read_text(errors="replace")
            for path in sorted(self.log_dir.glob("*.log"))
        )

    def outcomes(self, task_id: str) -> list[str]:
        """What each Celery task that got ``task_id`` ended with (by worker)."""
        return re.findall(
            rf"task {task_id}: (ran|ended|duplicate|gone|lost|waiting|input)\b",
            self.logs(),
        )

    def receivers(self, task_id: str) -> list[int]:
        """The worker processes that got ``task_id`` (by worker)."""
        found = re.findall(rf"task {task_id}: received by process (\d+)", self.logs())
        return [int(pid) for pid in found]

    def worker_of(self, pid: int) -> CeleryWorker:
        """The worker whose log names process ``pid``."""
        for worker in self.workers:
            if f"received by process {pid}" in worker.log():
                return worker
        raise AssertionError(f"no worker ran process {pid}")

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        shutil.rmtree(self.log_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def pool(redis_server: RedisHandle) -> Iterator[Pool]:
    """The workers (none until a test calls ``ensure``)."""
    workers = Pool(redis_server)
    try:
        yield workers
    finally:
        workers.close()


def wire(result: Any) -> dict[str, Any]:
    """A tool result as its wire dict, whatever the client's result type."""
    for name in ("raw", "to_wire"):
        found = getattr(result, name, None)
        if found is not None:
            return dict(found() if callable(found) else found)
    return dict(result)


async def call(front: ServerHandle, method: str, **params: Any) -> dict[str, Any]:
    """One extension request to the front-end; its result."""
    message = ext_message(method, params)
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(
            front.url, json=message, headers=headers_for(message)
        )
    assert response.status_code < 500, response.text
    return result_of(response.json())


async def create(front: ServerHandle, tool: str, **arguments: Any) -> str:
    """Call ``tool`` as a task; its ID."""
    created = await call(front, "tools/call", name=tool, arguments=arguments)
    assert created["resultType"] == "task", created
    task_id: str = created["taskId"]
    return task_id


async def wait_status(
    front: ServerHandle, task_id: str, statuses: set[str], timeout: float
) -> dict[str, Any]:
    """Poll ``tasks/get`` until the task is in one of ``statuses``."""
    found: dict[str, Any] = {}

    async def reached() -> bool:
        found.update(await call(front, "tasks/get", taskId=task_id))
        return found["status"] in statuses

    await until(reached, timeout=timeout, interval=0.05, what=f"status {statuses}")
    return found


async def received(pool: Pool, task_id: str) -> int:
    """The process that got ``task_id``, once one did."""
    await until(
        lambda: bool(pool.receivers(task_id)),
        timeout=30,
        what=f"a worker got task {task_id}",
    )
    (pid,) = pool.receivers(task_id)
    return pid


async def ran_once(pool: Pool, task_id: str) -> None:
    """Wait for the worker's log of the run that stored the outcome (written just
    after it), then check it is the task's only run."""
    await until(
        lambda: "ran" in pool.outcomes(task_id),
        timeout=10,
        what=f"the worker logged the run of {task_id}",
    )
    assert pool.outcomes(task_id) == ["ran"], pool.outcomes(task_id)


async def running(front: ServerHandle, pool: Pool, task_id: str) -> int:
    """The process running ``task_id``, once its tool reported it started (the
    example tools set a status message first)."""
    pid = await received(pool, task_id)

    async def started() -> bool:
        task = await call(front, "tasks/get", taskId=task_id)
        return bool(task.get("statusMessage"))

    await until(started, timeout=10, interval=0.05, what="the tool started")
    return pid


async def test_a_task_cancelled_while_every_worker_is_down_never_runs(
    front: ServerHandle, pool: Pool
) -> None:
    assert not pool.workers
    task_id = await create(front, "slow_compute", seconds=5, label="never")
    cancelled = await call(front, "tasks/cancel", taskId=task_id)
    assert cancelled["resultType"] == "complete"
    pool.ensure()  # its message is delivered now
    await until(
        lambda: pool.outcomes(task_id) == ["ended"],
        timeout=30,
        what="the queued task was turned away",
    )
    task = await call(front, "tasks/get", taskId=task_id)
    assert task["status"] == "cancelled"
    assert "statusMessage" in task and "computing" not in task["statusMessage"]


@pytest.mark.parametrize("revision", ["2025-11-25", EXTENSION])
async def test_tool_calls_complete_on_a_worker(
    front: ServerHandle, pool: Pool, revision: str
) -> None:
    pool.ensure()
    before = pool.logs().count(": ran")
    async with TasksClient(
        front.url, revision=revision, store=MemoryTaskIdStore()
    ) as client:
        done: Any = await client.call_tool(
            "slow_compute", {"seconds": 0.2, "label": revision}, timeout=30
        )
        failed: Any = await client.call_tool("failing_job", {}, timeout=30)
    texts = [str(block.get("text")) for block in wire(done)["content"]]
    assert texts == [f"computed {revision} after 0.2s"]
    assert wire(failed)["isError"] is True
    assert "job failed" in wire(failed)["content"][0]["text"]
    await until(  # the worker logs a run just after it stored the outcome
        lambda: pool.logs().count(": ran") >= before + 2,
        timeout=10,
        what="the worker logged both runs",
    )
    assert pool.logs().count(": ran") == before + 2  # both ran on a worker


async def test_cancel_stops_a_running_task_within_a_second(
    front: ServerHandle, pool: Pool
) -> None:
    pool.ensure()
    task_id = await create(front, "slow_compute", seconds=30, label="cancel")
    await running(front, pool, task_id)
    began = time.monotonic()
    await call(front, "tasks/cancel", taskId=task_id)
    await until(
        lambda: pool.outcomes(task_id) == ["ran"],
        timeout=5,
        interval=0.02,
        what="the worker stopped the tool",
    )
    assert time.monotonic() - began < 1.0
    task = await call(front, "tasks/get", taskId=task_id)
    assert task["status"] == "cancelled"
    assert pool.receivers(task_id) == pool.receivers(task_id)[:1]  # no re-run


async def test_a_killed_worker_child_s_idempotent_task_runs_again_once(
    front: ServerHandle, pool: Pool
) -> None:
    pool.ensure()
    task_id = await create(front, "slow_compute", seconds=3, label="again")
    pid = await running(front, pool, task_id)
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    done = await wait_status(front, task_id, {"completed", "failed"}, timeout=30)
    assert done["status"] == "completed", done
    assert time.monotonic() - killed < LEASE_S * 4 / 3 + 3 + 3  # lease + task + slack
    await ran_once(pool, task_id)  # completed once
    receivers = pool.receivers(task_id)  # the killed child and a new one
    assert len(receivers) == 2 and pid in receivers and len(set(receivers)) == 2


async def test_a_killed_worker_child_s_other_task_fails_saying_so(
    front: ServerHandle, pool: Pool
) -> None:
    pool.ensure()
    task_id = await create(front, "long_report", steps=40)
    pid = await running(front, pool, task_id)
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    failed = await wait_status(front, task_id, {"completed", "failed"}, timeout=20)
    assert time.monotonic() - killed < LEASE_S * 4 / 3 + 3
    assert failed["status"] == "failed"
    assert failed["statusMessage"] == WORKER_LOST
    assert pool.outcomes(task_id) == []  # never run again


async def test_a_whole_worker_killed_mid_task_has_its_task_run_by_another(
    front: ServerHandle, pool: Pool
) -> None:
    pool.ensure()
    task_id = await create(front, "slow_compute", seconds=3, label="whole")
    pid = await running(front, pool, task_id)
    lost = pool.worker_of(pid)
    lost.kill9()
    done = await wait_status(front, task_id, {"completed", "failed"}, timeout=30)
    assert done["status"] == "completed", done
    await ran_once(pool, task_id)
    (survivor,) = [w for w in pool.workers if w is not lost]
    assert f"task {task_id}: ran" in survivor.log()
    pool.ensure()  # replace the killed worker


async def test_a_task_three_times_the_visibility_timeout_runs_once(
    front: ServerHandle, pool: Pool
) -> None:
    pool.ensure()  # two workers, one of them idle
    seconds = VISIBILITY_TIMEOUT_S * 3
    task_id = await create(front, "slow_compute", seconds=seconds, label="vt")
    done = await wait_status(front, task_id, {"completed", "failed"}, timeout=30)
    assert done["status"] == "completed", done
    await until(lambda: "ran" in pool.outcomes(task_id), timeout=10, what="logged")
    outcomes = pool.outcomes(task_id)
    assert outcomes.count("ran") == 1, outcomes
    assert set(outcomes) <= {"ran", "duplicate"}, outcomes


async def test_a_front_end_shut_down_leaves_its_tasks_running_on_workers(
    redis_server: RedisHandle, front: ServerHandle, pool: Pool
) -> None:
    pool.ensure()
    with front_end(redis_server) as other:
        task_id = await create(other, "slow_compute", seconds=2, label="left")
        await running(other, pool, task_id)
        other.terminate()
    done = await wait_status(front, task_id, {"completed", "failed"}, timeout=20)
    assert done["status"] == "completed", done
    await ran_once(pool, task_id)


@pytest.mark.parametrize("revision", ["2025-11-25", EXTENSION])
async def test_input_asked_on_a_worker_reaches_the_client(
    front: ServerHandle, pool: Pool, revision: str
) -> None:
    """``confirm_delete`` (not idempotent) holds its worker while it waits. The
    worker stores its input request in the task: the extension shows it
    (``inputRequests``, answered with ``tasks/update``); for 2025-11-25 the
    front-end holding the task's session sends it on its streams and stores the
    answer. Either way the answer reaches the worker and the user is asked once."""
    pool.ensure()
    asked: list[Any] = []

    async def answer(context: Any) -> dict[str, Any]:
        asked.append(context)
        return {"action": "accept", "content": {"confirm": True}}

    async with TasksClient(
        front.url,
        revision=revision,
        store=MemoryTaskIdStore(),
        elicitation_handler=answer,
    ) as client:
        done: Any = await client.call_tool(
            "confirm_delete", {"filename": "b.txt"}, timeout=30
        )
    assert wire(done)["content"][0]["text"] == "deleted b.txt"
    assert len(asked) == 1


@pytest.mark.parametrize("revision", ["2025-11-25", EXTENSION])
async def test_an_idempotent_tool_asking_for_input_frees_its_worker(
    front: ServerHandle, pool: Pool, revision: str
) -> None:
    """``ask_name`` (idempotent) ends its run with the question and is queued again
    with the answer: the user is asked once, the tool runs twice."""
    pool.ensure()
    asked: list[Any] = []

    async def answer(context: Any) -> dict[str, Any]:
        asked.append(context)
        return {"action": "accept", "content": {"name": "Ada"}}

    before = pool.logs().count(": input")
    async with TasksClient(
        front.url,
        revision=revision,
        store=MemoryTaskIdStore(),
        elicitation_handler=answer,
    ) as client:
        done: Any = await client.call_tool("ask_name", {}, timeout=30)
    assert wire(done)["content"][0]["text"] == "hello Ada"
    assert len(asked) == 1
    assert pool.logs().count(": input") == before + 1  # the first run ended there


async def test_an_answer_through_another_front_end_after_the_worker_died_is_kept(
    redis_server: RedisHandle, front: ServerHandle, pool: Pool
) -> None:
    """Done-when (d): ``ask_name`` (idempotent) asks on a worker through one
    front-end; every worker is killed while the task waits; the answer comes through
    another front-end replica. The answer is kept, a new worker runs the tool again
    with it, and the question is not asked again (no new input request, one run
    ended with the question)."""
    pool.ensure()
    task_id = await create(front, "ask_name")
    waiting = await wait_status(front, task_id, {"input_required"}, timeout=30)
    (key,) = waiting["inputRequests"]
    await until(
        lambda: "input" in pool.outcomes(task_id),
        timeout=10,
        what="the run ended with the question",
    )
    for worker in pool.workers:
        worker.kill9()
    with front_end(redis_server) as other:
        answer = {"action": "accept", "content": {"name": "Ada"}}
        await call(other, "tasks/update", taskId=task_id, inputResponses={key: answer})
        pool.ensure(1)
        done = await wait_status(other, task_id, TERMINAL, timeout=30)
    assert done["status"] == "completed", done
    assert done["result"]["content"][0]["text"] == "hello Ada"
    assert "inputRequests" not in done or not done["inputRequests"]
    await until(
        lambda: "ran" in pool.outcomes(task_id), timeout=10, what="the rerun's log"
    )
    assert pool.outcomes(task_id) == ["input", "ran"], pool.outcomes(task_id)


async def test_a_2025_answer_after_every_worker_died_is_kept(
    front: ServerHandle, pool: Pool
) -> None:
    """Done-when (d) for 2025-11-25, whose sessions live in one front-end: the worker
    running ``ask_name`` (idempotent) asks through the front-end holding the session;
    every worker is killed while the user thinks (in the client's handler), then one
    is started again. The answer the client sends is kept, the tool runs again with it
    and the user is asked once."""
    pool.ensure()
    asked: list[Any] = []
    before = pool.logs().count(": input")

    async def answer(context: Any) -> dict[str, Any]:
        asked.append(context)
        until_sync(  # the run ended with the question: the task waits, no worker
            lambda: pool.logs().count(": input") == before + 1,
            timeout=10,
            what="the run ended with the question",
        )
        for worker in pool.workers:
            worker.kill9()
        pool.ensure(1)
        return {"action": "accept", "content": {"name": "Ada"}}

    async with TasksClient(
        front.url,
        revision="2025-11-25",
        store=MemoryTaskIdStore(),
        elicitation_handler=answer,
    ) as client:
        done: Any = await client.call_tool("ask_name", {}, timeout=60)
    assert wire(done)["content"][0]["text"] == "hello Ada"
    assert len(asked) == 1


async def test_a_redis_restart_mid_task_loses_nothing_and_runs_nothing_twice(
    redis_server: RedisHandle, front: ServerHandle, pool: Pool
) -> None:
    pool.ensure()
    task_id = await create(front, "slow_compute", seconds=3, label="restart")
    await running(front, pool, task_id)
    redis_server.restart(hard=True)  # kill -9 and start again on the same port
    done = await wait_status(front, task_id, {"completed", "failed"}, timeout=30)
    assert done["status"] == "completed", done
    await ran_once(pool, task_id)
    assert len(pool.receivers(task_id)) == 1
    after = await create(front, "slow_compute", seconds=0.1, label="after")
    done = await wait_status(front, after, {"completed", "failed"}, timeout=30)
    assert done["status"] == "completed", done


async def test_a_typed_tool_runs_on_a_worker(front: ServerHandle, pool: Pool) -> None:
    """``brew`` (a typed tool): the worker validates the stored arguments into its
    values again and the result is its ``structuredContent``."""
    pool.ensure()
    task_id = await create(front, "brew", size="M", sugars=2, milk={"kind": "oat"})
    done = await wait_status(front, task_id, {"completed", "failed"}, timeout=30)
    assert done["status"] == "completed", done
    structured = done["result"]["structuredContent"]
    assert structured["size"] == "M" and structured["sugars"] == 2, structured
    await ran_once(pool, task_id)


async def test_progress_of_a_2025_task_on_a_worker_reaches_the_client(
    front: ServerHandle, pool: Pool
) -> None:
    """``long_report`` reports each step as progress on the call's token; from a
    worker it travels as a signal to the front-end holding the task's session."""
    pool.ensure()
    steps: list[tuple[float, float | None, str | None]] = []
    async with TasksClient(
        front.url, revision="2025-11-25", store=MemoryTaskIdStore()
    ) as client:
        await client.call_tool(
            "long_report",
            {"steps": 2},
            on_progress=lambda p, t, m: steps.append((p, t, m)),
            timeout=30,
        )
    assert steps == [(1.0, 2.0, "step 1/2"), (2.0, 2.0, "step 2/2")]
