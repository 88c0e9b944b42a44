"""Push delivery of task states (``subscriptions/listen``, ``subscribe=True``).

The race found by ``benchmarks/push_stress.py`` (64 concurrent subscribed calls on a
Redis store): a subscription reads its task's current state from the store once it
follows the task; when that read returns after a newer state was published to the
subscription (the task completed meanwhile), the stale state was queued last, the
stream sent ``completed`` and then ``working``, and the client, which keeps only the
latest of the notifications that arrive while its wait is busy, kept ``working`` and
waited for a push that never came. Each side is fixed and tested here on its own:

* the server's read is held at that seam (a real ``RedisTaskStore`` whose read of the
  task, from the subscription, waits until the worker's terminal state was published),
  over real HTTP, and the stream must send the terminal state alone;
* the client gets the terminal notification and then a stale one in one burst (a
  scripted peer), and its wait must still end;
* end to end, the generated client with ``subscribe=True`` against the server on the
  held store returns.

The second race the stress script found (a lease round that read the terminal state
its own worker had just written stopped that worker before it announced the state),
a status signal lost between replicas, and the connections of subscribed waits (the
server ends a finished subscription, the client lets it end) are tested here too.

Every wait has a deadline; nothing sleeps to order events.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import uvicorn

from mcp_tasks_ext.asgi import create_app
from mcp_tasks_ext.client import TasksClient
from mcp_tasks_ext.client_core import LISTEN_DRAIN_S
from mcp_tasks_ext.redis_store import RedisTaskStore
from mcp_tasks_ext.server import (
    AuditEvent,
    Limits,
    RequestInfo,
    TasksServer,
    ToolContext,
)
from mcp_tasks_ext.server_core import Call
from mcp_tasks_ext.stores import InMemoryTaskStore, Signal, TaskRecord
from mcp_tasks_ext.task_ids import MemoryTaskIdStore
from mcp_tasks_ext.transport import HttpTransport
from tests.support.fakes import TEXT_RESULT, FakeClock, FakePeer, StuckClock, task_ext
from tests.support.procs import RedisHandle, free_port, start_redis
from tests.support.servers import ext_message, headers_for, result_of
from tests.support.waiting import until

pytestmark = pytest.mark.anyio

DEADLINE_S = 15.0


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisHandle]:
    with start_redis() as handle:
        yield handle


class HeldStore(RedisTaskStore):
    """A real Redis store where a test can hold one read (``hold``: it returns what it
    read only once ``release`` is set, after setting ``held``) and one write
    (``hold_write``: written, then ``written`` is set, and it returns once
    ``release_write`` is set); ``read_after_write`` is set by the first read of the
    written task by another asyncio task than its worker."""

    def __init__(self, url: str, prefix: str) -> None:
        super().__init__(url, prefix=prefix, check_persistence=False)
        self.hold: Callable[[str], bool] = lambda task_id: False
        self.held = asyncio.Event()
        self.release = asyncio.Event()
        self.hold_write: Callable[[TaskRecord], bool] = lambda record: False
        self.written_id: str | None = None
        self.written = asyncio.Event()
        self.read_after_write = asyncio.Event()
        self.release_write = asyncio.Event()

    async def get(self, task_id: str) -> TaskRecord | None:
        record = await super().get(task_id)
        if self.hold(task_id):
            self.hold = lambda task_id: False  # once
            self.held.set()
            await asyncio.wait_for(self.release.wait(), DEADLINE_S)
        current = asyncio.current_task()
        if (
            task_id == self.written_id
            and current is not None
            and current.get_name() != f"task-{task_id}"
        ):
            self.read_after_write.set()
        return record

    async def transition(
        self,
        task_id: str,
        allowed_from: frozenset[str],
        record: TaskRecord,
        *,
        expected_updated_at: float | None = None,
    ) -> bool:
        stored = await super().transition(
            task_id, allowed_from, record, expected_updated_at=expected_updated_at
        )
        if stored and self.hold_write(record):
            self.hold_write = lambda record: False  # once
            self.written_id = task_id
            self.written.set()
            await asyncio.wait_for(self.release_write.wait(), DEADLINE_S)
        return stored


class Scene:
    """A server on a held Redis store with the tool ``gated``, which ends when
    ``gate`` is set; the ``completed`` audit event (which comes after the worker
    published its terminal state) sets the store's ``release``."""

    def __init__(
        self, redis: RedisHandle, prefix: str, limits: Limits | None = None
    ) -> None:
        self.store = HeldStore(redis.url, prefix)
        self.gate = asyncio.Event()
        self.server = TasksServer(
            "push-races", store=self.store, audit=self._audit, limits=limits
        )
        self.listening: set[asyncio.Task[Any] | None] = set()

        @self.server.tool()
        async def gated(ctx: ToolContext, arguments: dict[str, Any]) -> str:
            await self.gate.wait()
            return "released"

        listen = self.server.dispatcher.routes["subscriptions/listen"]

        async def listen_noted(call: Call) -> dict[str, Any]:
            self.listening.add(asyncio.current_task())
            return await listen(call)

        self.server.dispatcher.routes["subscriptions/listen"] = listen_noted

    def hold_the_subscription_read(self, task_id: str) -> None:
        """Hold the subscription's read of ``task_id`` made once it follows the task,
        until the worker published the task's terminal state."""
        server = self.server
        self.store.hold = lambda tid: (
            tid == task_id
            and tid in server.notifications.listeners
            and asyncio.current_task() in self.listening
        )

    def _audit(self, event: AuditEvent) -> None:
        if event.action == "completed":
            self.store.release.set()


@asynccontextmanager
async def serving(
    scene: Scene | TasksServer, connections: set[Any] | None = None
) -> AsyncIterator[str]:
    """Serve ``scene.server`` over HTTP on loopback (uvicorn in this event loop);
    ``connections`` gets the client address of every request (one per connection)."""
    port = free_port()
    app = create_app(scene.server if isinstance(scene, Scene) else scene)

    async def noted(scope: Any, receive: Any, send: Any) -> None:
        if connections is not None and scope["type"] == "http":
            connections.add(tuple(scope["client"]))
        await app(scope, receive, send)

    config = uvicorn.Config(
        noted,
        host="127.0.0.1",
        port=port,
        lifespan="on",
        log_level="warning",
        timeout_graceful_shutdown=2,
    )
    http = uvicorn.Server(config)
    runner = asyncio.create_task(http.serve())
    await until(
        lambda: http.started or runner.done(), timeout=DEADLINE_S, what="uvicorn up"
    )
    assert not runner.done(), "uvicorn failed to start"
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        http.should_exit = True
        await asyncio.wait_for(runner, DEADLINE_S)


async def test_listen_sends_no_stale_state_after_the_terminal_one(
    redis_server: RedisHandle,
) -> None:
    """The subscription reads the task (``working``), the task completes and its state
    is published to the subscription, then the read returns: the stream must not send
    the ``working`` it read after ``completed``."""
    scene = Scene(redis_server, "stale-after-terminal:")
    async with serving(scene) as url, httpx.AsyncClient(timeout=DEADLINE_S) as http:
        call = ext_message("tools/call", {"name": "gated"}, request_id="call-1")
        created = result_of(
            (await http.post(url, json=call, headers=headers_for(call))).json()
        )
        task_id = created["taskId"]
        scene.hold_the_subscription_read(task_id)
        listen = ext_message(
            "subscriptions/listen",
            {"notifications": {"taskIds": [task_id]}},
            request_id="listen-1",
        )
        events: list[dict[str, Any]] = []

        async def read_stream() -> None:
            async with http.stream(
                "POST", url, json=listen, headers=headers_for(listen)
            ) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        events.append(json.loads(line[6:]))

        reader = asyncio.create_task(read_stream())
        await asyncio.wait_for(scene.store.held.wait(), DEADLINE_S)
        scene.gate.set()  # the task completes while the subscription's read is held
        await until(
            lambda: any(
                e.get("params", {}).get("status") == "completed" for e in events
            ),
            timeout=DEADLINE_S,
            what="the completed notification",
        )
        # Every state of the task was queued before the acknowledgement went out:
        # closing the server ends the stream after them.
        await scene.server.close()
        await asyncio.wait_for(reader, DEADLINE_S)
    statuses = [
        e["params"]["status"]
        for e in events
        if e.get("method") == "notifications/tasks"
    ]
    # the task completed before the acknowledgement went out: its one state to send
    assert statuses == ["completed"], statuses


async def test_subscribed_wait_ends_when_the_task_completes_during_the_subscription(
    redis_server: RedisHandle,
) -> None:
    """End to end: the generated client with ``subscribe=True`` returns the result when
    the task completes while the server reads it for the subscription (it used to wait
    forever, the task completed and every process idle)."""
    scene = Scene(redis_server, "wait-ends:")
    async with serving(scene) as url:
        client = TasksClient(
            HttpTransport(url), store=MemoryTaskIdStore(), subscribe=True
        )
        async with client:
            handle = await client.start_tool("gated", {})
            assert handle.task_id is not None
            scene.hold_the_subscription_read(handle.task_id)
            waiting = asyncio.create_task(handle.result())
            await asyncio.wait_for(scene.store.held.wait(), DEADLINE_S)
            scene.gate.set()
            result = await asyncio.wait_for(waiting, DEADLINE_S)
    assert result.raw["content"][0]["text"] == "released"


async def test_lease_round_does_not_stop_a_worker_storing_its_outcome(
    redis_server: RedisHandle,
) -> None:
    """A lease round reads the task while its worker stores the terminal state: the
    write is done, the worker has yet to announce it. The round must not take the
    state for one written elsewhere and stop the worker (which then never announced
    it: the subscribed client waited forever for a task stored ``completed``)."""
    scene = Scene(redis_server, "lease-round:", Limits(lease_s=0.3))
    async with serving(scene) as url:
        client = TasksClient(
            HttpTransport(url), store=MemoryTaskIdStore(), subscribe=True
        )
        async with client:
            handle = await client.start_tool("gated", {})
            task_id = handle.task_id
            waiting = asyncio.create_task(handle.result())
            await until(
                lambda: handle.push_acknowledged,
                timeout=DEADLINE_S,
                what="the subscription acknowledged",
            )
            scene.store.hold_write = lambda record: (
                record.task_id == task_id and record.is_terminal
            )
            scene.gate.set()
            await asyncio.wait_for(scene.store.written.wait(), DEADLINE_S)
            # a lease round (every 0.1 s) reads the completed task: let it act first
            await asyncio.wait_for(scene.store.read_after_write.wait(), DEADLINE_S)
            scene.store.release_write.set()
            result = await asyncio.wait_for(waiting, DEADLINE_S)
    assert result.raw["content"][0]["text"] == "released"


async def test_subscribed_waits_keep_their_connections() -> None:
    """The server ends a subscription once its task sent its terminal state, and the
    client lets it end instead of closing its stream, so one client's subscribed
    calls reuse their connections (each used to open and close one)."""
    server = TasksServer("push-connections", store=InMemoryTaskStore())
    gates: list[asyncio.Event] = []

    @server.tool()
    async def gated(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        gates.append(gate := asyncio.Event())
        await gate.wait()
        return "released"

    connections: set[Any] = set()
    async with serving(server, connections) as url:
        client = TasksClient(
            HttpTransport(url), store=MemoryTaskIdStore(), subscribe=True
        )
        async with client:
            for _ in range(5):
                handle = await client.start_tool("gated", {})
                waiting = asyncio.create_task(handle.result())
                await until(
                    lambda handle=handle: handle.push_acknowledged,  # type: ignore[misc]
                    timeout=DEADLINE_S,
                    what="the subscription acknowledged",
                )
                gates[-1].set()  # the result comes by push
                result = await asyncio.wait_for(waiting, DEADLINE_S)
                assert result.raw["content"][0]["text"] == "released"
                await until(
                    lambda: not server.notifications.listeners,
                    timeout=DEADLINE_S,
                    what="the server ended the subscription",
                )
    assert len(connections) <= 2, connections


class LossyStore(RedisTaskStore):
    """A real Redis store whose status signals of the task ``lose`` names never reach
    Redis (pub/sub delivers at most once: a replica resubscribing misses them)."""

    lose: str | None = None

    async def publish(self, signal: Signal) -> None:
        if signal.get("kind") == "status" and signal.get("taskId") == self.lose:
            return
        await super().publish(signal)


async def test_subscription_on_another_replica_gets_a_lost_terminal_state(
    redis_server: RedisHandle,
) -> None:
    """The task runs on replica A, its subscription is on replica B, and A's signal
    of the terminal state is lost: B's next lease round gives the subscription the
    stored state (it used to keep waiting for a signal that never came)."""
    gate = asyncio.Event()
    lossy = LossyStore(redis_server.url, prefix="lossy:", check_persistence=False)
    a = TasksServer("replica-a", store=lossy, limits=Limits(lease_s=0.3))
    b = TasksServer(
        "replica-b",
        store=RedisTaskStore(
            redis_server.url, prefix="lossy:", check_persistence=False
        ),
        limits=Limits(lease_s=0.3),
    )

    @a.tool()
    async def gated(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await gate.wait()
        return "released"

    sent: list[dict[str, Any]] = []

    async def emit(message: dict[str, Any]) -> None:
        sent.append(message)

    async with a, b:
        call = ext_message("tools/call", {"name": "gated"}, request_id="call-1")
        task_id = result_of(await a.handle(call, RequestInfo()))["taskId"]
        listen = ext_message(
            "subscriptions/listen",
            {"notifications": {"taskIds": [task_id]}},
            request_id="listen-1",
        )
        stream = asyncio.create_task(b.handle(listen, RequestInfo(), emit))
        await until(lambda: len(sent) >= 2, timeout=DEADLINE_S, what="ack and state")
        lossy.lose = task_id
        gate.set()
        await until(
            lambda: sent[-1]["params"].get("status") == "completed",
            timeout=DEADLINE_S,
            what="the completed state on replica B's subscription",
        )
    await asyncio.wait_for(stream, DEADLINE_S)


class CancelEatingStore(RedisTaskStore):
    """A real Redis store whose ``unfinished`` (a lease round's first read), once
    ``armed``, sets ``entered`` and waits, and returns its reply even when its task is
    cancelled meanwhile (once), as redis-py 8.1 sometimes does for a command whose
    reply was on its way."""

    armed = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.entered = asyncio.Event()

    async def unfinished(self) -> list[TaskRecord]:
        if self.armed:
            self.armed = False
            self.entered.set()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()
        return await super().unfinished()


async def test_close_ends_a_lease_round_that_ate_its_cancellation(
    redis_server: RedisHandle,
) -> None:
    """``close`` cancels the lease rounds while one is inside a store call that
    returns normally instead of raising ``CancelledError``: the round loop must end
    anyway (it used to go on, and ``close`` waited for it forever: the hang of the
    lost-terminal-state test about once in eight runs)."""
    store = CancelEatingStore(
        redis_server.url, prefix="eats-cancel:", check_persistence=False
    )
    server = TasksServer("replica-a", store=store, limits=Limits(lease_s=0.3))
    await server.start()
    store.armed = True
    await asyncio.wait_for(store.entered.wait(), DEADLINE_S)
    await asyncio.wait_for(server.close(), DEADLINE_S)


async def test_stale_push_after_the_terminal_one_does_not_hide_it() -> None:
    """The client gets ``completed`` and then an older ``working`` on its subscription
    before its wait runs again: the wait ends with the result (it used to keep only the
    last notification, ``working``, and wait for a push that never came)."""
    listen_ids: list[Any] = []

    async def peer_server(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tools/call":
            return {
                **task_ext("working", updated="2025-11-25T10:40:00Z"),
                "resultType": "task",
            }
        if method == "tasks/get":
            return task_ext("working", updated="2025-11-25T10:40:00Z")
        assert method == "subscriptions/listen", method
        meta = {"io.modelcontextprotocol/subscriptionId": listen_ids[-1]}
        ids = params["notifications"]["taskIds"]
        for method_sent, sent in (
            (
                "notifications/subscriptions/acknowledged",
                {"notifications": {"taskIds": ids}},
            ),
            (
                "notifications/tasks",
                task_ext(
                    "completed", updated="2025-11-25T10:40:02Z", result=TEXT_RESULT
                ),
            ),
            (
                "notifications/tasks",
                task_ext("working", updated="2025-11-25T10:40:01Z"),
            ),
        ):
            await peer.to_client_notification(method_sent, {"_meta": meta, **sent})
        await asyncio.Event().wait()  # the stream stays open
        raise AssertionError("unreachable")

    class Peer(FakePeer):
        async def request(
            self, request_id: Any, method: str, params: dict[str, Any]
        ) -> dict[str, Any]:
            if method == "subscriptions/listen":
                listen_ids.append(request_id)
            return await super().request(request_id, method, params)

    clock = StuckClock()
    peer = Peer(peer_server, clock)
    client = TasksClient(
        peer, store=MemoryTaskIdStore(), clock=clock, sleep=clock.sleep, subscribe=True
    )
    result = await asyncio.wait_for(client.call_tool("job"), DEADLINE_S)
    assert result.raw == TEXT_RESULT
    assert isinstance(clock, FakeClock)


async def test_client_stops_draining_for_a_server_that_keeps_streams_open() -> None:
    """A server that keeps a subscription open after its task ended: the client leaves
    the first one running for ``LISTEN_DRAIN_S``, then stops it and, from then on,
    stops each finished wait's subscription at once (as before)."""
    listens: list[asyncio.Future[Any]] = []
    listen_ids: list[Any] = []

    async def peer_server(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tools/call":
            return {**task_ext("working"), "resultType": "task"}
        if method == "tasks/get":
            return task_ext("working")
        assert method == "subscriptions/listen", method
        meta = {"io.modelcontextprotocol/subscriptionId": listen_ids[-1]}
        ids = params["notifications"]["taskIds"]
        await peer.to_client_notification(
            "notifications/subscriptions/acknowledged",
            {"_meta": meta, "notifications": {"taskIds": ids}},
        )
        await peer.to_client_notification(
            "notifications/tasks",
            {"_meta": meta, **task_ext("completed", result=TEXT_RESULT)},
        )
        ended = asyncio.get_running_loop().create_future()
        listens.append(ended)
        await ended  # never set: the stream stays open until the client stops it
        raise AssertionError("unreachable")

    class Peer(FakePeer):
        async def request(
            self, request_id: Any, method: str, params: dict[str, Any]
        ) -> dict[str, Any]:
            if method == "subscriptions/listen":
                listen_ids.append(request_id)
            return await super().request(request_id, method, params)

    clock = StuckClock()
    peer = Peer(peer_server, clock)
    client = TasksClient(
        peer, store=MemoryTaskIdStore(), clock=clock, sleep=clock.sleep, subscribe=True
    )
    done = await asyncio.wait_for(client.call_tool("job"), DEADLINE_S)
    assert done.raw == TEXT_RESULT
    assert client.listens_end is None and not listens[0].done()  # left running
    await until(
        lambda: listens[0].done(),
        timeout=LISTEN_DRAIN_S + DEADLINE_S,
        what="the drained subscription stopped",
    )
    assert client.listens_end is False
    done = await asyncio.wait_for(client.call_tool("job"), DEADLINE_S)
    assert done.raw == TEXT_RESULT
    assert listens[1].done()  # stopped with its wait
    await client.aclose()
