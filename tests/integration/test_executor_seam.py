"""The executor seam (``server.executor``) on a real ``redis-server``, in process.

A front-end server and a worker server share one Redis task store; the executor under
test is a ``RemoteExecutor`` whose queue is an ``asyncio.Queue`` read by the worker
(``RemoteExecutor.run``, the same entry a Celery worker calls), so what the store
decides can be observed without worker processes (``test_celery_executor`` runs the
real ones): only the task ID travels, the job is JSON in the store, a queued task holds
no lease and the lease check leaves it alone, a duplicate delivery drops out, a task
cancelled while queued never runs, and a lost worker's task is run again (idempotent
tool, bounded attempts) or failed with a message saying the worker was lost.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcp_tasks_ext.redis_store import RedisTaskStore
from mcp_tasks_ext.server import Limits, RequestInfo, TasksServer, ToolContext
from mcp_tasks_ext.server.executor import WORKER_LOST, RemoteExecutor, not_taken
from mcp_tasks_ext.server.lifecycle import TTL_RAN_OUT
from mcp_tasks_ext.stores import InMemoryTaskStore, SQLiteTaskStore
from tests.support.procs import RedisHandle, start_redis
from tests.support.waiting import until

pytestmark = pytest.mark.anyio

EXT = "io.modelcontextprotocol/tasks"
LEASE_S = 30.0
"""The servers' lease: their own lease rounds (every ``LEASE_S / 3``) never run
during a test, which calls the lease check itself."""
DEAD_LEASE_MS = 300
"""The lease of a worker that dies at once (``lose_worker``)."""


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisHandle]:
    """A private redis-server for this module."""
    with start_redis() as handle:
        yield handle


class QueueExecutor(RemoteExecutor):
    """A ``RemoteExecutor`` whose broker is an ``asyncio.Queue`` of task IDs."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.submitted: list[str] = []
        self.unreachable = False
        """Whether the broker refuses messages now."""

    async def submit(self, task_id: str) -> None:
        if self.unreachable:
            raise ConnectionError("the broker is down")
        self.submitted.append(task_id)
        self.queue.put_nowait(task_id)


class Deployment:
    """A front-end and a worker server on one Redis prefix, and what the tools did."""

    def __init__(self, front: TasksServer, worker: TasksServer, ex: QueueExecutor):
        self.front = front
        self.worker = worker
        self.executor = ex
        self.runs: dict[str, int] = {}
        self.outcomes: list[str] = []
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()

    async def deliver(self, count: int = 1) -> list[str]:
        """Run the next ``count`` queued task IDs on the worker (each in the
        background); their outcomes once each returns."""
        ids = [self.executor.queue.get_nowait() for _ in range(count)]
        outcomes = await asyncio.gather(*(self.executor.run(i) for i in ids))
        self.outcomes.extend(outcomes)
        return list(outcomes)


def build(
    store: RedisTaskStore,
    ex: QueueExecutor,
    dep: list[Deployment],
    ttl_ms: int | None = None,
) -> TasksServer:
    """A server on ``store`` with the tools of these tests."""
    limits = Limits(lease_s=LEASE_S)
    if ttl_ms is not None:
        limits = Limits(lease_s=LEASE_S, default_ttl_ms=ttl_ms)
    server = TasksServer("seam", store=store, limits=limits, executor=ex)

    @server.tool(idempotent=True)
    async def again(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Idempotent: count the run, wait ``seconds``, answer."""
        dep[0].runs[ctx.task_id or ""] = dep[0].runs.get(ctx.task_id or "", 0) + 1
        await asyncio.sleep(float(arguments.get("seconds", 0)))
        return f"ran {arguments.get('label', '')}"

    @server.tool()
    async def once(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Not idempotent: count the run, then wait until cancelled."""
        dep[0].runs[ctx.task_id or ""] = dep[0].runs.get(ctx.task_id or "", 0) + 1
        dep[0].started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            dep[0].stopped.set()
            raise
        return "never"

    @server.tool(idempotent=True)
    async def ask_twice(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Idempotent: count the run, ask two questions, answer with both."""
        dep[0].runs[ctx.task_id or ""] = dep[0].runs.get(ctx.task_id or "", 0) + 1
        first = await ctx.elicit("First?", NAME)
        second = await ctx.elicit("Second?", NAME)
        return f"{first['content']['name']} and {second['content']['name']}"

    @server.tool()
    async def ask_holding(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Not idempotent: count the run, ask once (holding the worker)."""
        dep[0].runs[ctx.task_id or ""] = dep[0].runs.get(ctx.task_id or "", 0) + 1
        answer = await ctx.elicit("Name?", NAME)
        return f"hello {answer['content']['name']}"

    async def ask_first(
        ctx: ToolContext, arguments: dict[str, Any]
    ) -> dict[str, dict[str, Any]] | None:
        """MRTR preflight: ask for a name before the task exists."""
        if "who" in ctx.input_responses:
            return None
        params = {"mode": "form", "message": "Who?", "requestedSchema": NAME}
        return {"who": {"method": "elicitation/create", "params": params}}

    @server.tool(preflight=ask_first)
    async def greet_later(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Greet the name the preflight gathered."""
        return f"hello {ctx.input_responses['who']['content']['name']}"

    return server


NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


def named(name: str) -> dict[str, Any]:
    """An accepted elicitation answer."""
    return {"action": "accept", "content": {"name": name}}


@asynccontextmanager
async def deployment(
    redis: RedisHandle, ttl_ms: int | None = None, **options: Any
) -> AsyncIterator[Deployment]:
    """A started front-end and worker sharing a fresh prefix and one executor."""
    prefix = f"x-{uuid.uuid4().hex[:10]}:"
    ex = QueueExecutor(**options)
    holder: list[Deployment] = []
    front = build(RedisTaskStore(redis.url, prefix=prefix), ex, holder, ttl_ms)
    worker = build(RedisTaskStore(redis.url, prefix=prefix), ex, holder, ttl_ms)
    ex.serve(worker)
    holder.append(Deployment(front, worker, ex))
    async with front, worker:
        yield holder[0]


def message(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 request declaring the Tasks extension."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {EXT: {}},
        },
    }
    body = {**params, "_meta": meta}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": body}


async def result(server: TasksServer, method: str, **params: Any) -> dict[str, Any]:
    """One request through ``server.handle`` as alice; its result."""
    response = await server.handle(
        message(method, params), RequestInfo(principal="alice")
    )
    assert response is not None and "result" in response, response
    answer: dict[str, Any] = response["result"]
    return answer


async def create(dep: Deployment, tool: str, **arguments: Any) -> str:
    """Call ``tool`` as a task through the front-end; its ID (queued, not run)."""
    created = await result(dep.front, "tools/call", name=tool, arguments=arguments)
    assert created["resultType"] == "task", created
    task_id: str = created["taskId"]
    return task_id


async def status(dep: Deployment, task_id: str) -> dict[str, Any]:
    """``tasks/get`` through the front-end."""
    return await result(dep.front, "tasks/get", taskId=task_id)


async def test_a_task_runs_on_the_worker_from_its_stored_json_job(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server) as dep:
        task_id = await create(dep, "again", label="one")
        assert dep.executor.submitted == [task_id]  # only the ID travels
        assert not dep.front.lifecycle.workers  # nothing runs on the front-end
        store = dep.front.store
        assert isinstance(store, RedisTaskStore)
        raw: Any = await store._redis().hget(store._job_key(task_id), "spec")
        assert json.loads(raw)["arguments"] == {"label": "one"}
        # a queued task holds no lease, and the lease check leaves it alone
        assert await store.leased([task_id]) == [False]
        await asyncio.sleep(0)  # let the created task's announcement settle
        assert await dep.front.fail_lost_tasks() == []
        assert (await status(dep, task_id))["status"] == "working"

        assert await dep.deliver() == ["ran"]
        done = await status(dep, task_id)
        assert done["status"] == "completed", done
        answer = await result(dep.front, "tasks/get", taskId=task_id)
        assert answer["result"]["content"][0]["text"] == "ran one"
        assert dep.runs == {task_id: 1}
        assert await store.get_job(task_id) is None  # dropped once the task ended


async def test_a_duplicate_delivery_drops_out_and_the_tool_runs_once(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server) as dep:
        task_id = await create(dep, "again", seconds=0.3)
        await dep.executor.submit(task_id)  # the broker delivers it twice
        assert sorted(await dep.deliver(2)) == ["duplicate", "ran"]
        await dep.executor.submit(task_id)  # and once more after it ended (its
        assert await dep.deliver() == ["gone"]  # job is dropped with the outcome)
        assert dep.runs == {task_id: 1}
        assert (await status(dep, task_id))["status"] == "completed"


async def test_a_task_cancelled_while_queued_never_runs(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server) as dep:
        task_id = await create(dep, "once")
        cancelled = await result(dep.front, "tasks/cancel", taskId=task_id)
        assert cancelled["resultType"] == "complete"
        assert await dep.deliver() == ["ended"]
        assert dep.runs == {}
        assert (await status(dep, task_id))["status"] == "cancelled"


async def test_cancel_stops_a_running_task_on_the_worker(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server) as dep:
        task_id = await create(dep, "once")
        running = asyncio.create_task(dep.deliver())
        await asyncio.wait_for(dep.started.wait(), 5)
        loop = asyncio.get_running_loop()
        began = loop.time()
        await result(dep.front, "tasks/cancel", taskId=task_id)
        await asyncio.wait_for(dep.stopped.wait(), 2)
        assert loop.time() - began < 1
        assert await asyncio.wait_for(running, 5) == ["ran"]
        assert (await status(dep, task_id))["status"] == "cancelled"
        assert dep.runs == {task_id: 1}


async def lose_worker(dep: Deployment, task_id: str) -> None:
    """A worker takes the task and dies before running it: its lease lapses."""
    store = dep.front.store
    assert isinstance(store, RedisTaskStore)
    dep.executor.queue.get_nowait()
    claim = await store.claim_job(task_id, "dead-worker", DEAD_LEASE_MS)
    assert claim.outcome == "claimed"
    await until(lambda: _unleased(store, task_id), timeout=5, what="the lease lapsed")


async def _unleased(store: RedisTaskStore, task_id: str) -> bool:
    return await store.leased([task_id]) == [False]


async def test_a_lost_worker_s_idempotent_task_runs_again_once(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server) as dep:
        task_id = await create(dep, "again", label="x")
        await lose_worker(dep, task_id)
        # a late duplicate of the first delivery leaves it to the lease check
        assert await dep.executor.run(task_id) == "lost"
        assert await dep.front.fail_lost_tasks() == []  # queued again instead
        assert dep.executor.submitted == [task_id, task_id]
        assert await dep.deliver() == ["ran"]
        assert (await status(dep, task_id))["status"] == "completed"
        assert dep.runs == {task_id: 1}


async def test_a_stalled_worker_whose_task_runs_elsewhere_stops_storing_nothing(
    redis_server: RedisHandle,
) -> None:
    """A worker stalled past its lease (its renewals stopped: here, its lease key is
    deleted) finds, at its next lease round, its idempotent task queued again by the
    lease check: its run stops instead of renewing the lease, and stores nothing. A
    run whose lease another worker took stops the same way. The task completes once,
    from the run that holds it."""
    async with deployment(redis_server) as dep:
        store = dep.front.store
        assert isinstance(store, RedisTaskStore)
        task_id = await create(dep, "again", seconds=60)
        stalled = asyncio.create_task(dep.deliver())
        await until(lambda: _running(dep, task_id), timeout=5, what="the run started")
        await store._redis().delete(store._keys.lease(task_id))  # the stall
        assert await dep.front.fail_lost_tasks() == []  # queued again
        assert dep.executor.submitted == [task_id, task_id]
        replicas = dep.worker.replicas
        assert await replicas.hold_leases(store) == [task_id]
        assert await asyncio.wait_for(stalled, 5) == ["superseded"]
        assert await store.leased([task_id]) == [False]  # left to the next run
        assert (await status(dep, task_id))["status"] == "working"

        # the next run; meanwhile another worker claims it again (a duplicate)
        dep.runs.clear()
        again = asyncio.create_task(dep.deliver())
        await until(lambda: _running(dep, task_id), timeout=5, what="the rerun")
        await store._redis().set(store._keys.lease(task_id), "another-worker")
        assert await replicas.hold_leases(store) == [task_id]
        assert await asyncio.wait_for(again, 5) == ["superseded"]
        assert await store._redis().get(store._keys.lease(task_id)) in (
            b"another-worker",
            "another-worker",
        )
        assert dep.worker.lifecycle.superseded == set()


async def _running(dep: Deployment, task_id: str) -> bool:
    return task_id in dep.worker.lifecycle.workers and bool(dep.runs.get(task_id))


async def test_a_lost_worker_s_other_task_fails_saying_the_worker_was_lost(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server) as dep:
        task_id = await create(dep, "once")
        await lose_worker(dep, task_id)
        assert await dep.front.fail_lost_tasks() == [task_id]
        failed = await status(dep, task_id)
        assert failed["status"] == "failed"
        assert failed["statusMessage"] == WORKER_LOST
        assert dep.runs == {}


async def test_a_task_a_worker_takes_while_the_lease_check_runs_is_left_to_it(
    redis_server: RedisHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the lease check reads the queued task's lease (none), a worker takes the task
    # (state and lease at once), then the check reads the job: running, and leased
    async with deployment(redis_server) as dep:
        task_id = await create(dep, "once")
        assert await check_as_a_worker_takes_it(dep, task_id, "leased", monkeypatch)
        assert dep.runs == {task_id: 1}


async def check_as_a_worker_takes_it(
    dep: Deployment, task_id: str, read: str, monkeypatch: pytest.MonkeyPatch
) -> bool:
    """Run the front-end's lease check with a worker taking the queued task just after
    the check's first call of the store's ``read`` method; assert the check left the
    task to it, cancel the task, and return whether the worker's run then ended."""
    store = dep.front.store
    assert isinstance(store, RedisTaskStore)
    original = getattr(store, read)
    runs: list[asyncio.Task[list[str]]] = []

    async def read_then_taken(*args: Any) -> Any:
        answer = await original(*args)
        if not runs:
            runs.append(asyncio.create_task(dep.deliver()))
            await until(lambda: _running(dep, task_id), what="the worker took it")
        return answer

    monkeypatch.setattr(store, read, read_then_taken)
    assert await dep.front.fail_lost_tasks() == []
    assert runs and (await status(dep, task_id))["status"] == "working"
    await result(dep.front, "tasks/cancel", taskId=task_id)
    return await runs[0] == ["ran"]


async def test_a_task_that_loses_its_worker_every_time_fails_after_max_attempts(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server, max_attempts=2) as dep:
        task_id = await create(dep, "again")
        await lose_worker(dep, task_id)
        assert await dep.front.fail_lost_tasks() == []  # attempt 2 of 2
        await lose_worker(dep, task_id)
        assert await dep.front.fail_lost_tasks() == [task_id]
        failed = await status(dep, task_id)
        assert failed["status"] == "failed"
        assert failed["statusMessage"] == f"{WORKER_LOST}, 2 times"
        assert dep.runs == {}


async def test_a_task_no_worker_takes_is_submitted_again_then_failed(
    redis_server: RedisHandle,
) -> None:
    timeout_s = 0.3
    async with deployment(redis_server, queue_timeout_s=timeout_s) as dep:
        task_id = await create(dep, "again")
        await until(
            lambda: _resubmitted(dep, task_id), timeout=5, what="submitted again"
        )
        await until(
            lambda: _failed(dep, task_id), timeout=5, what="failed as not taken"
        )
        failed = await status(dep, task_id)
        assert failed["statusMessage"] == not_taken(timeout_s * 2)
        assert dep.runs == {}


async def test_a_task_a_worker_takes_as_it_is_given_up_is_left_to_it(
    redis_server: RedisHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the lease check reads the job (queued twice, nobody took it) and a worker
    # takes it before the check gives it up: the task is the worker's
    timeout_s = 0.3
    async with deployment(redis_server, queue_timeout_s=timeout_s) as dep:
        task_id = await create(dep, "once")
        await until(
            lambda: _resubmitted(dep, task_id), timeout=5, what="submitted again"
        )
        store = dep.front.store
        assert isinstance(store, RedisTaskStore)
        await until(
            lambda: _queued_for(store, task_id, timeout_s), timeout=5, what="waited"
        )
        assert await check_as_a_worker_takes_it(dep, task_id, "get_job", monkeypatch)
        assert await dep.deliver() == ["gone"]  # the message sent again: dropped
        assert dep.runs == {task_id: 1}


async def test_a_task_given_up_before_its_failure_was_stored_is_failed_next_time(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server) as dep:
        task_id = await create(dep, "once")
        store = dep.front.store
        assert isinstance(store, RedisTaskStore)
        assert await store.abandon_job(task_id, 0)  # then the failure was not stored
        assert await store.abandon_job(task_id, 0)  # given up already: still True
        assert await dep.front.fail_lost_tasks() == [task_id]
        failed = await status(dep, task_id)
        assert failed["statusMessage"] == not_taken(dep.executor.queue_timeout_s * 2)
        assert await dep.deliver() == ["ended"]
        assert dep.runs == {}


async def _queued_for(store: RedisTaskStore, task_id: str, seconds: float) -> bool:
    job = await store.get_job(task_id)
    return job is not None and time.time() - job.queued_at >= seconds


async def _resubmitted(dep: Deployment, task_id: str) -> bool:
    await dep.front.fail_lost_tasks()
    return dep.executor.submitted.count(task_id) == 2


async def _failed(dep: Deployment, task_id: str) -> bool:
    await dep.front.fail_lost_tasks()
    return (await status(dep, task_id))["status"] == "failed"


async def test_a_remote_executor_refuses_a_store_other_processes_cannot_share(
    tmp_path: Any,
) -> None:
    for store in (InMemoryTaskStore(), SQLiteTaskStore(str(tmp_path / "t.db"))):
        with pytest.raises(ValueError, match="RedisTaskStore"):
            TasksServer("x", store=store, executor=QueueExecutor())


async def test_a_running_task_stops_on_the_stored_cancel_without_its_signal(
    redis_server: RedisHandle,
) -> None:
    """The cancelled status in the store is the marker: a worker that never hears
    the cancel signal (pub/sub delivers at most once) reads it while the tool runs
    (``cancel_check_s``)."""
    async with deployment(redis_server, cancel_check_s=0.2) as dep:
        task_id = await create(dep, "once")
        running = asyncio.create_task(dep.deliver())
        await asyncio.wait_for(dep.started.wait(), 5)
        loop = asyncio.get_running_loop()
        began = loop.time()
        # stored and announced as a status change only: no cancel signal is sent
        await dep.front.lifecycle.finish(task_id, "cancelled", status_message="x")
        await asyncio.wait_for(dep.stopped.wait(), 2)
        assert loop.time() - began < 1
        assert await asyncio.wait_for(running, 5) == ["ran"]
        assert (await status(dep, task_id))["status"] == "cancelled"


async def answer(dep: Deployment, task_id: str, name: str) -> str:
    """Answer the task's one outstanding input request through the front-end; its
    key."""
    waiting = await status(dep, task_id)
    assert waiting["status"] == "input_required", waiting
    (key,) = waiting["inputRequests"]
    await result(
        dep.front, "tasks/update", taskId=task_id, inputResponses={key: named(name)}
    )
    return str(key)


async def test_an_idempotent_tool_asking_for_input_holds_no_worker_while_it_waits(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server) as dep:
        task_id = await create(dep, "ask_twice")
        assert await dep.deliver() == ["input"]  # the run ended with the question
        store = dep.front.store
        assert isinstance(store, RedisTaskStore)
        assert not dep.worker.lifecycle.workers
        assert await store.leased([task_id]) == [False]
        assert await dep.front.fail_lost_tasks() == []  # waiting: left alone
        assert await dep.executor.run(task_id) == "waiting"  # a stray delivery
        first = await answer(dep, task_id, "Ada")
        assert dep.executor.submitted.count(task_id) == 2  # queued again
        # the second run gets the first answer from the store and asks the second
        assert await dep.deliver() == ["input"]
        second = await answer(dep, task_id, "Bob")
        assert second != first
        assert await dep.deliver() == ["ran"]
        done = await result(dep.front, "tasks/get", taskId=task_id)
        assert done["status"] == "completed", done
        assert done["result"]["content"][0]["text"] == "Ada and Bob"
        assert dep.runs == {task_id: 3}


async def test_an_answer_to_a_lost_run_s_question_is_kept_for_the_next_run(
    redis_server: RedisHandle,
) -> None:
    """The worker dies after its run showed the question and before it parked the
    job: the lease check queues the job again, and the answer that comes while it is
    queued is kept for the next run, which does not ask it again."""
    async with deployment(redis_server) as dep:
        task_id = await create(dep, "ask_twice")
        assert await dep.deliver() == ["input"]
        store = dep.front.store
        assert isinstance(store, RedisTaskStore)
        # as if the run had died before park_job: running, its lease lapsed
        await store._redis().hset(store._job_key(task_id), "state", "running")
        assert await dep.front.fail_lost_tasks() == []  # queued again
        assert dep.executor.submitted.count(task_id) == 2
        first = await answer(dep, task_id, "Ada")
        assert dep.executor.submitted.count(task_id) == 2  # queued already
        assert await dep.deliver() == ["input"]
        second = await answer(dep, task_id, "Bob")
        assert second != first  # the first question was not asked again
        assert await dep.deliver() == ["ran"]
        done = await result(dep.front, "tasks/get", taskId=task_id)
        assert done["result"]["content"][0]["text"] == "Ada and Bob"


async def test_answers_that_come_before_the_run_ends_queue_it_as_it_ends(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server) as dep:
        task_id = await create(dep, "again")
        store = dep.front.store
        assert isinstance(store, RedisTaskStore)
        claim = await store.claim_job(task_id, "worker", 5_000)
        assert claim.job is not None
        # answered while the run that asked has not parked its job yet
        assert await store.resume_job(task_id, {"k": named("Ada")}) is False
        assert await store.park_job(task_id, claim.job.attempt) is True  # queued
        job = await store.get_job(task_id)
        assert job is not None and job.state == "queued"
        assert job.answers == {"k": named("Ada")}
        assert await store.leased([task_id]) == [False]


async def test_a_tool_that_is_not_idempotent_holds_its_worker_for_input(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server) as dep:
        task_id = await create(dep, "ask_holding")
        running = asyncio.create_task(dep.deliver())
        await until(lambda: _asking(dep, task_id), timeout=5, what="the tool asked")
        assert task_id in dep.worker.lifecycle.workers  # it holds its worker
        await answer(dep, task_id, "Ada")
        assert await asyncio.wait_for(running, 5) == ["ran"]
        done = await result(dep.front, "tasks/get", taskId=task_id)
        assert done["result"]["content"][0]["text"] == "hello Ada"
        assert dep.executor.submitted == [task_id]
        assert dep.runs == {task_id: 1}


async def _asking(dep: Deployment, task_id: str) -> bool:
    return (await status(dep, task_id))["status"] == "input_required"


async def test_the_answers_to_preflight_questions_reach_the_worker(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server) as dep:
        asked = await result(dep.front, "tools/call", name="greet_later", arguments={})
        assert asked["resultType"] == "input_required", asked
        task_id = await create_with(
            dep, "greet_later", inputResponses={"who": named("Ada")}
        )
        assert await dep.deliver() == ["ran"]
        done = await result(dep.front, "tasks/get", taskId=task_id)
        assert done["result"]["content"][0]["text"] == "hello Ada", done


async def create_with(dep: Deployment, tool: str, **params: Any) -> str:
    """Call ``tool`` with no arguments and ``params`` as a task; its ID."""
    created = await result(dep.front, "tools/call", name=tool, arguments={}, **params)
    assert created["resultType"] == "task", created
    return str(created["taskId"])


async def test_a_task_the_broker_refused_is_created_and_sent_again_later(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server, queue_timeout_s=0.3) as dep:
        dep.executor.unreachable = True
        task_id = await create(dep, "again", label="late")  # created all the same
        assert dep.executor.submitted == []
        dep.executor.unreachable = False
        await until(
            lambda: _sent(dep, task_id), timeout=5, what="the task was sent again"
        )
        assert await dep.deliver() == ["ran"]
        assert (await status(dep, task_id))["status"] == "completed"


async def _sent(dep: Deployment, task_id: str) -> bool:
    await dep.front.fail_lost_tasks()
    return task_id in dep.executor.submitted


async def test_a_queued_task_whose_ttl_runs_out_is_failed_first(
    redis_server: RedisHandle,
) -> None:
    async with deployment(redis_server, ttl_ms=1_500) as dep:
        task_id = await create(dep, "again")
        assert await dep.front.fail_lost_tasks() == []  # still queued, in time
        await until(
            lambda: _failed(dep, task_id), timeout=5, what="failed before expiry"
        )
        failed = await status(dep, task_id)
        assert failed["statusMessage"] == TTL_RAN_OUT
        assert await dep.deliver() == ["ended"]  # never run
