"""Several server replicas sharing one real ``redis-server``.

The process tests run ``examples/server_ext.py --redis URL`` two or three times on
127.0.0.1 and talk to them over streamable HTTP: a task created through one replica
is polled, answered, cancelled and followed (``subscriptions/listen``) through
another; a replica killed with SIGKILL mid-task has its task failed by a survivor
within the lease bound; replicas restarted against the same Redis lose nothing.

The in-process tests put two ``TasksServer`` objects (each with its own store
connection and replica ID) on the same Redis, where the worker itself can be
observed: a cancel received by one reaches the other's worker through pub/sub (also
across a Redis restart), complete-versus-cancel races across the two end in exactly
one terminal state, per-principal isolation and the active-task limit hold across
replicas, and a 2025-11-25 ``tasks/result`` on one replica follows the worker on
the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_tasks_ext.redis_store import RedisTaskStore
from mcp_tasks_ext.server import (
    AuditEvent,
    Limits,
    RequestInfo,
    TasksServer,
    ToolContext,
)
from tests.support.procs import (
    RedisHandle,
    ServerHandle,
    free_port,
    run_server,
    start_redis,
)
from tests.support.waiting import until

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "server_ext.py"
EXT = "io.modelcontextprotocol/tasks"
LEASE_S = 3.0
FAILOVER_BOUND_S = LEASE_S * 4 / 3 + 1.5
"""Lease expiry plus one lease check, with room for a loaded machine."""


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisHandle]:
    """A private redis-server shared by every replica in this module."""
    with start_redis() as handle:
        yield handle


@contextlib.contextmanager
def replica(redis: RedisHandle, port: int | None = None) -> Iterator[ServerHandle]:
    """One ``examples/server_ext.py`` process on ``redis`` with a short lease."""
    port = port if port is not None else free_port()
    cmd = [
        sys.executable,
        str(EXAMPLE),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--redis",
        redis.url,
        "--lease-seconds",
        str(LEASE_S),
    ]
    with run_server(cmd, port, url_path="/mcp", timeout=30) as handle:
        yield handle


def message(
    method: str, params: dict[str, Any], request_id: int | str = 1
) -> dict[str, Any]:
    """A 2026-07-28 request declaring the Tasks extension and elicitation."""
    body = dict(params)
    body["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {EXT: {}},
        },
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body}


def headers_for(request: dict[str, Any]) -> dict[str, str]:
    """The headers a conforming client sends with ``request``."""
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-method": request["method"],
        "mcp-protocol-version": request["params"]["_meta"][
            "io.modelcontextprotocol/protocolVersion"
        ],
    }
    params = request["params"]
    if "taskId" in params:
        headers["mcp-name"] = params["taskId"]
    elif request["method"] == "tools/call":
        headers["mcp-name"] = params["name"]
    return headers


async def call(server: ServerHandle, method: str, **params: Any) -> dict[str, Any]:
    """POST one request to ``server``; its ``result`` (an error fails the test)."""
    request = message(method, params)
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(
            server.url, json=request, headers=headers_for(request)
        )
    body = response.json()
    assert "result" in body, (body, server.log_tail())
    result: dict[str, Any] = body["result"]
    return result


async def create(server: ServerHandle, tool: str, **arguments: Any) -> str:
    """Call ``tool`` as a task on ``server``; its task ID."""
    result = await call(server, "tools/call", name=tool, arguments=arguments)
    assert result["resultType"] == "task", result
    task_id: str = result["taskId"]
    return task_id


async def get(server: ServerHandle, task_id: str) -> dict[str, Any]:
    """``tasks/get`` through ``server``."""
    return await call(server, "tasks/get", taskId=task_id)


async def wait_status(
    server: ServerHandle, task_id: str, statuses: set[str], timeout: float = 10
) -> dict[str, Any]:
    """Poll ``server`` every 50 ms until the task is in one of ``statuses``."""
    deadline = time.monotonic() + timeout
    while True:
        task = await get(server, task_id)
        if task["status"] in statuses:
            return task
        assert time.monotonic() < deadline, f"task stuck in {task['status']}: {task}"
        await asyncio.sleep(0.05)


# -- real processes ---------------------------------------------------------------


async def test_create_poll_update_cancel_and_listen_across_replicas(
    redis_server: RedisHandle,
) -> None:
    with replica(redis_server) as a, replica(redis_server) as b:
        # created on A, polled on B, answered through B: only A's worker can finish it
        asked = await create(a, "ask_name")
        waiting = await wait_status(b, asked, {"input_required"})
        (key,) = waiting["inputRequests"]
        answer = {"action": "accept", "content": {"name": "Ada"}}
        started = time.monotonic()
        await call(b, "tasks/update", taskId=asked, inputResponses={key: answer})
        done = await wait_status(b, asked, {"completed"}, timeout=5)
        assert time.monotonic() - started < 2
        assert done["result"]["content"][0]["text"] == "hello Ada"
        assert (await get(a, asked))["status"] == "completed"

        # cancelled through B while A's worker runs; both replicas agree
        slow = await create(a, "slow_compute", seconds=30, label="x")
        assert (await get(b, slow))["status"] == "working"
        assert (await call(b, "tasks/cancel", taskId=slow))["resultType"] == "complete"
        for server in (a, b):
            assert (await get(server, slow))["status"] == "cancelled"

        # B streams the notifications of a task whose worker runs on A
        report = await create(a, "long_report", steps=3)
        listen = message(
            "subscriptions/listen",
            {"notifications": {"taskIds": [report]}},
            request_id="sub-1",
        )
        events: list[dict[str, Any]] = []
        async with (
            httpx.AsyncClient(timeout=15) as client,
            client.stream(
                "POST", b.url, json=listen, headers=headers_for(listen)
            ) as response,
        ):
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    events.append(json.loads(line[6:]))
                    if events[-1]["params"].get("status") == "completed":
                        break
        assert events[0]["method"] == "notifications/subscriptions/acknowledged"
        statuses = [e["params"].get("status") for e in events[1:]]
        assert statuses[-1] == "completed"
        assert "step 3/3" in [e["params"].get("statusMessage") for e in events[1:]]
        assert events[-1]["params"]["result"]["content"][0]["text"].startswith(
            "report ready"
        )


async def test_killed_replica_fails_over_and_restarts_lose_nothing(
    redis_server: RedisHandle,
) -> None:
    with replica(redis_server) as b, replica(redis_server) as c:
        finished: list[str] = []
        with replica(redis_server) as a:
            for label in ("one", "two"):
                task_id = await create(a, "slow_compute", seconds=0, label=label)
                await wait_status(c, task_id, {"completed"})
                finished.append(task_id)
            doomed = await create(a, "slow_compute", seconds=60, label="doomed")
            survivor = await create(
                b, "slow_compute", seconds=LEASE_S * 2, label="kept"
            )
            assert (await get(c, doomed))["status"] == "working"
            a.kill9()
            killed_at = time.monotonic()
        failed = await wait_status(c, doomed, {"failed"}, timeout=FAILOVER_BOUND_S + 5)
        failover = time.monotonic() - killed_at
        assert failover < FAILOVER_BOUND_S, failover
        print(f"failover after kill -9: {failover:.2f}s (lease {LEASE_S}s)")
        assert failed["error"]["code"] == -32603
        assert "replica running the task stopped" in failed["error"]["message"]
        assert (await get(b, doomed)) == failed
        # B's own task kept its lease the whole time and completes normally
        assert (await get(c, survivor))["status"] == "working"
        kept = await wait_status(c, survivor, {"completed"}, timeout=LEASE_S * 2 + 5)
        assert kept["result"]["content"][0]["text"].startswith("computed kept")
        before = {t: await get(b, t) for t in [*finished, doomed, survivor]}

    # every replica stopped; fresh ones on the same Redis see the same tasks
    with replica(redis_server) as d, replica(redis_server) as e:
        for server in (d, e):
            for task_id, task in before.items():
                assert (await get(server, task_id)) == task


# -- in-process replicas: the worker's side -----------------------------------------


@contextlib.asynccontextmanager
async def two_replicas(
    redis: RedisHandle,
    audit: list[AuditEvent] | None = None,
    max_active_tasks: int = 1000,
) -> AsyncIterator[tuple[TasksServer, TasksServer, dict[str, asyncio.Event]]]:
    """Two servers on one Redis (fresh prefix) with a ``hold`` and a ``quick`` tool.

    ``hold`` waits until cancelled and sets ``events["stopped"]`` when its worker sees
    the cancellation; ``quick`` returns after a few milliseconds.
    """
    prefix = f"r-{uuid.uuid4().hex[:12]}:"
    events = {"started": asyncio.Event(), "stopped": asyncio.Event()}
    servers: list[TasksServer] = []
    for _ in range(2):
        server = TasksServer(
            "replica",
            store=RedisTaskStore(redis.url, prefix=prefix),
            limits=Limits(lease_s=LEASE_S, max_active_tasks=max_active_tasks),
            audit=audit.append if audit is not None else None,
        )

        @server.tool()
        async def hold(ctx: ToolContext, arguments: dict[str, Any]) -> str:
            """Wait until cancelled."""
            events["started"].set()
            try:
                await asyncio.Event().wait()  # until cancelled
            except asyncio.CancelledError:
                if ctx.cancelled:
                    events["stopped"].set()
                raise
            return "never"

        @server.tool()
        async def quick(ctx: ToolContext, arguments: dict[str, Any]) -> str:
            """Return almost at once."""
            await asyncio.sleep(float(arguments.get("delay", 0)))
            return "done"

        servers.append(server)
    async with servers[0], servers[1]:
        yield servers[0], servers[1], events


async def respond(
    server: TasksServer, method: str, principal: str | None = None, **params: Any
) -> dict[str, Any]:
    """One request through ``TasksServer.handle`` as ``principal``; the response."""
    response = await server.handle(
        message(method, params), RequestInfo(principal=principal)
    )
    assert response is not None
    return response


async def handle(server: TasksServer, method: str, **params: Any) -> dict[str, Any]:
    """One request through ``TasksServer.handle``; its result."""
    response = await respond(server, method, **params)
    assert "result" in response, response
    result: dict[str, Any] = response["result"]
    return result


async def test_principals_and_limits_hold_across_replicas(
    redis_server: RedisHandle,
) -> None:
    async with two_replicas(redis_server, max_active_tasks=2) as (a, b, _):
        created = [
            (await respond(a, "tools/call", "alice", name="hold", arguments={}))[
                "result"
            ]["taskId"]
            for _ in range(2)
        ]
        # alice's third unfinished task is refused on the other replica too
        refused = await respond(b, "tools/call", "alice", name="hold", arguments={})
        assert refused["error"]["code"] == -32000, refused
        assert "Too many unfinished tasks" in refused["error"]["message"]
        # bob neither sees nor cancels alice's tasks through any replica
        for server in (a, b):
            for task_id in created:
                for method in ("tasks/get", "tasks/cancel"):
                    hidden = await respond(server, method, "bob", taskId=task_id)
                    assert hidden["error"]["message"].endswith("Task not found")
        for task_id in created:
            got = await respond(b, "tasks/get", "alice", taskId=task_id)
            assert got["result"]["status"] == "working"
        # cancelling one through B frees a slot for alice on B
        await respond(b, "tasks/cancel", "alice", taskId=created[0])
        again = await respond(b, "tools/call", "alice", name="hold", arguments={})
        assert again["result"]["resultType"] == "task", again


async def test_cancel_through_one_replica_stops_the_worker_on_the_other(
    redis_server: RedisHandle,
) -> None:
    async with two_replicas(redis_server) as (a, b, events):
        created = await handle(a, "tools/call", name="hold", arguments={})
        await asyncio.wait_for(events["started"].wait(), 5)
        started = time.monotonic()
        await handle(b, "tasks/cancel", taskId=created["taskId"])
        await asyncio.wait_for(events["stopped"].wait(), 2)
        assert time.monotonic() - started < 1
        task = await handle(a, "tasks/get", taskId=created["taskId"])
        assert task["status"] == "cancelled"


async def test_complete_versus_cancel_races_end_in_one_terminal_state(
    redis_server: RedisHandle,
) -> None:
    audit: list[AuditEvent] = []
    async with two_replicas(redis_server, audit) as (a, b, _):
        task_ids: list[str] = []
        for round_number in range(40):
            # the worker finishes after 0 to 7 ms, the cancel goes out after 3 ms
            delay = (round_number % 8) * 0.001
            created = await handle(
                a, "tools/call", name="quick", arguments={"delay": delay}
            )
            task_ids.append(created["taskId"])
            await asyncio.sleep(0.003)  # not ordering: spreads the race over the delays
            await handle(b, "tasks/cancel", taskId=created["taskId"])
        # every worker has ended, so every losing worker has tried its write
        await until(
            lambda: not a.lifecycle.workers and not b.lifecycle.workers,
            timeout=10,
            what="every worker ended",
        )
        outcomes: dict[str, int] = {}
        for task_id in task_ids:
            final = {
                (await handle(server, "tasks/get", taskId=task_id))["status"]
                for server in (a, b)
            }
            assert len(final) == 1 and final <= {"completed", "cancelled"}, final
            terminal = [
                e.action
                for e in audit
                if e.task_id == task_id
                and e.action in {"completed", "cancelled", "failed"}
            ]
            assert terminal == list(final), terminal
            outcomes[terminal[0]] = outcomes.get(terminal[0], 0) + 1
        print("complete-versus-cancel outcomes:", outcomes)
        assert sum(outcomes.values()) == len(task_ids)


async def test_signals_survive_a_redis_restart() -> None:
    with start_redis(appendonly=True) as redis:
        async with two_replicas(redis) as (a, b, events):
            created = await handle(a, "tools/call", name="hold", arguments={})
            await asyncio.wait_for(events["started"].wait(), 5)
            await asyncio.to_thread(redis.restart)
            # B's commands reconnect at once; A's listener resubscribes with backoff
            # and, having possibly missed the signal, checks its workers against Redis
            await handle(b, "tasks/cancel", taskId=created["taskId"])
            await asyncio.wait_for(events["stopped"].wait(), 5)
            task = await handle(a, "tasks/get", taskId=created["taskId"])
            assert task["status"] == "cancelled"


async def test_2025_tasks_result_on_one_replica_follows_the_worker_on_another(
    redis_server: RedisHandle,
) -> None:
    import mcp_tasks_2025_11_25.redis_store as redis_2025
    import mcp_tasks_2025_11_25.server as server_2025

    prefix = f"r25-{uuid.uuid4().hex[:12]}:"
    release, entered = asyncio.Event(), asyncio.Event()
    servers: list[server_2025.TasksServer] = []
    for _ in range(2):
        server = server_2025.TasksServer(
            "replica-2025",
            store=redis_2025.RedisTaskStore(redis_server.url, prefix=prefix),
            limits=server_2025.Limits(lease_s=LEASE_S),
        )

        @server.tool()
        async def gated(ctx: server_2025.ToolContext, arguments: dict[str, Any]) -> str:
            """Return once the test releases it."""
            entered.set()
            await release.wait()
            return "released"

        servers.append(server)
    a, b = servers
    async with a, b:
        sessions = {id(s): s.open_session().id for s in servers}
        request_ids = iter(range(1, 1000))

        async def call(
            server: server_2025.TasksServer, method: str, params: dict[str, Any]
        ) -> dict[str, Any]:
            request = {
                "jsonrpc": "2.0",
                "id": next(request_ids),
                "method": method,
                "params": params,
            }
            info = server_2025.RequestInfo(session_id=sessions[id(server)])
            response = await server.handle(request, info)
            assert response is not None and "result" in response, response
            result: dict[str, Any] = response["result"]
            return result

        for server in servers:
            await call(
                server,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            )
        created = await call(
            a, "tools/call", {"name": "gated", "arguments": {}, "task": {}}
        )
        task_id = created["task"]["taskId"]
        await asyncio.wait_for(entered.wait(), 5)  # A's worker runs
        pending = asyncio.create_task(call(b, "tasks/result", {"taskId": task_id}))
        # B blocks while A's worker runs: no answer within a while (a bounded check of
        # something that must not happen, not a wait for something to happen)
        done, _ = await asyncio.wait({pending}, timeout=0.2)
        assert not done
        release.set()
        result = await asyncio.wait_for(pending, 5)
        assert result["content"] == [{"type": "text", "text": "released"}]


def test_lease_and_sweep_intervals_must_be_positive() -> None:
    """A zero lease would make the renewal and check loops spin: refused up front."""
    from mcp_tasks_ext.server import Limits

    for name in ("lease_s", "sweep_interval_s"):
        with pytest.raises(ValueError, match=f"Limits.{name} must be a positive"):
            Limits(**{name: 0})
