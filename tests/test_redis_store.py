"""``RedisTaskStore`` beyond the shared contract: atomic transitions across processes.

The centre piece races two real OS processes sharing one ``redis-server``: for each of
200 tasks one process tries to complete it and the other to cancel it at the same
moment (a two-process barrier in Redis releases both together). Exactly one must win
every time, the stored record must be the winner's whole record (no torn write), and
the terminal state must never change afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mcp_tasks_ext.redis_store import RedisTaskStore
from mcp_tasks_ext.stores import TERMINAL_STATUSES, TaskRecord
from tests.support.procs import RedisHandle, start_redis

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
LIVE = frozenset({"working", "input_required"})
RACES = 200


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisHandle]:
    """A private, in-memory redis-server for this module."""
    with start_redis() as handle:
        yield handle


@pytest.fixture
async def store(redis_server: RedisHandle) -> AsyncIterator[RedisTaskStore]:
    """An open store under a fresh key prefix."""
    opened = RedisTaskStore(redis_server.url, prefix=f"t-{uuid.uuid4().hex[:12]}:")
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


def task(
    task_id: str,
    status: str = "working",
    *,
    ttl_ms: int | None = 60_000,
    created_at: float | None = None,
    **changes: Any,
) -> TaskRecord:
    """A task of ``alice`` created now (or at ``created_at``)."""
    now = time.time() if created_at is None else created_at
    return TaskRecord(
        task_id=task_id,
        owner="alice",
        tool="slow_tool",
        status=status,
        created_at=now,
        updated_at=now,
        ttl_ms=ttl_ms,
        **changes,
    )


# -- transition ----------------------------------------------------------------------


async def test_transition_applies_only_from_an_allowed_status(
    store: RedisTaskStore,
) -> None:
    created = await store.create(task("t"))
    waiting = replace(created, status="input_required")
    assert not await store.transition("t", frozenset({"input_required"}), waiting)
    assert await store.get("t") == created
    assert await store.transition("t", frozenset({"working"}), waiting)
    assert await store.get("t") == waiting
    assert await store.count_active("alice") == 1
    done = replace(waiting, status="completed", result={"content": []})
    assert await store.transition("t", LIVE, done)
    assert await store.get("t") == done
    assert await store.count_active("alice") == 0
    assert await store.unfinished() == []


async def test_transition_never_leaves_a_terminal_status(store: RedisTaskStore) -> None:
    created = await store.create(task("t", status="cancelled"))
    everything = LIVE | TERMINAL_STATUSES
    for status in sorted(everything):
        assert not await store.transition(
            "t", everything, replace(created, status=status, status_message="no")
        )
    assert await store.get("t") == created


async def test_transition_refuses_missing_tasks_and_empty_sources(
    store: RedisTaskStore,
) -> None:
    assert not await store.transition("ghost", LIVE, task("ghost", "completed"))
    assert await store.get("ghost") is None
    created = await store.create(task("t"))
    assert not await store.transition(
        "t", frozenset(), replace(created, status="failed")
    )
    assert await store.get("t") == created
    with pytest.raises(ValueError, match="not 'other'"):
        await store.transition("other", LIVE, created)


async def test_create_refuses_a_taken_task_id(store: RedisTaskStore) -> None:
    created = await store.create(task("t"))
    with pytest.raises(ValueError, match="already exists"):
        await store.create(task("t", status="completed"))
    assert await store.get("t") == created


async def test_ttl_changes_move_the_key_expiry(
    store: RedisTaskStore, redis_server: RedisHandle
) -> None:
    from redis.asyncio import from_url

    raw = from_url(redis_server.url)
    try:
        created = await store.create(task("t", ttl_ms=None))
        key = f"{store.prefix}task:t"
        assert await raw.pttl(key) == -1
        await store.put(replace(created, ttl_ms=120_000))
        assert 60_000 < await raw.pttl(key) <= 180_000
        assert await store.expired(time.time() + 121) == ["t"]
        await store.put(replace(created, ttl_ms=None))
        assert await raw.pttl(key) == -1
        assert await store.expired(time.time() + 10**6) == []
    finally:
        await raw.aclose()


async def test_a_retried_write_reports_the_original_outcome(
    store: RedisTaskStore,
) -> None:
    """What redis-py's retry does after a lost reply: the same write again."""
    created = await store.create(task("t"))
    assert await store.create(task("t", created_at=created.created_at)) == created
    done = replace(created, status="completed", result={"content": []})
    assert await store.transition("t", LIVE, done)
    assert await store.transition("t", LIVE, done)
    assert not await store.transition("t", LIVE, replace(done, status="cancelled"))
    assert await store.get("t") == done


# -- connection handling -------------------------------------------------------------


async def test_scripts_are_reloaded_after_a_script_flush(
    store: RedisTaskStore, redis_server: RedisHandle
) -> None:
    from redis.asyncio import from_url

    created = await store.create(task("t"))
    raw = from_url(redis_server.url)
    try:
        await raw.script_flush()
    finally:
        await raw.aclose()
    done = replace(created, status="completed")
    assert await store.transition("t", LIVE, done)
    assert await store.get("t") == done


async def test_store_keeps_working_across_a_redis_restart() -> None:
    with start_redis(appendonly=True) as server:
        store = RedisTaskStore(server.url, prefix="restart:")
        await store.open()
        try:
            created = await store.create(task("t"))
            server.restart(hard=True)
            assert await store.get("t") == created
            assert await store.transition(
                "t", LIVE, replace(created, status="completed")
            )
        finally:
            await store.close()


async def test_close_releases_only_what_the_store_opened(
    redis_server: RedisHandle,
) -> None:
    from redis.asyncio import from_url

    own = RedisTaskStore(redis_server.url, prefix="close:")
    await own.open()
    await own.close()
    await own.close()  # idempotent
    with pytest.raises(RuntimeError, match="not open"):
        await own.get("t")

    client = from_url(redis_server.url)
    try:
        borrowed = RedisTaskStore(client=client, prefix="close:")
        await borrowed.open()
        await borrowed.close()
        assert await client.ping()
    finally:
        await client.aclose()


def test_module_imports_without_redis_installed() -> None:
    """redis is optional: importing the module and building a store need no redis."""
    script = textwrap.dedent("""
        import asyncio, sys
        sys.modules["redis"] = None  # as if redis-py were not installed
        for package in ("mcp_tasks_ext", "mcp_tasks_2025_11_25"):
            module = __import__(package + ".redis_store", fromlist=["RedisTaskStore"])
            store = module.RedisTaskStore("redis://127.0.0.1:1/0")
            try:
                asyncio.run(store.open())
            except ImportError:
                pass
            else:
                raise SystemExit("open() should need redis")
        print("ok")
        """)
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(GENERATED)},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


async def test_both_packages_ship_the_store(redis_server: RedisHandle) -> None:
    from mcp_tasks_2025_11_25.redis_store import RedisTaskStore as Store2025
    from mcp_tasks_2025_11_25.stores import TaskRecord as Record2025

    store = Store2025(redis_server.url, prefix=f"t-{uuid.uuid4().hex[:12]}:")
    await store.open()
    try:
        now = time.time()
        created = await store.create(
            Record2025(
                task_id="t",
                owner=None,
                tool="x",
                status="working",
                created_at=now,
                updated_at=now,
                ttl_ms=None,
            )
        )
        assert await store.get("t") == created
    finally:
        await store.close()


# -- the race --------------------------------------------------------------------------

_CONTENDER = textwrap.dedent("""
    import asyncio, json, sys, time
    from dataclasses import replace

    from redis.asyncio import from_url

    from mcp_tasks_ext.redis_store import RedisTaskStore

    LIVE = frozenset({"working", "input_required"})


    async def main(url: str, prefix: str, role: str, count: int) -> None:
        other = "cancel" if role == "complete" else "complete"
        store = RedisTaskStore(url, prefix=prefix)
        await store.open()
        barrier = from_url(url)
        wins = []
        for n in range(count):
            task_id = f"race-{n}"
            current = await store.get(task_id)
            if role == "complete":
                final = replace(
                    current,
                    status="completed",
                    result={"content": [{"type": "text", "text": task_id}]},
                    status_message="completed by the worker",
                    updated_at=time.time(),
                )
            else:
                final = replace(
                    current,
                    status="cancelled",
                    status_message="cancelled by the client",
                    updated_at=time.time(),
                )
            # Two-process barrier: announce readiness, wait for the other side.
            await barrier.rpush(f"{prefix}go:{other}:{n}", 1)
            if await barrier.blpop([f"{prefix}go:{role}:{n}"], timeout=20) is None:
                raise SystemExit(f"{role}: the other process never reached task {n}")
            wins.append(await store.transition(task_id, LIVE, final))
        await barrier.aclose()
        await store.close()
        print(json.dumps(wins))


    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
    """)


async def test_complete_versus_cancel_race_has_exactly_one_winner(
    store: RedisTaskStore, redis_server: RedisHandle
) -> None:
    for n in range(RACES):
        await store.create(
            task(f"race-{n}", status="working" if n % 2 else "input_required")
        )
    started = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(GENERATED)}
    contenders = {
        role: subprocess.Popen(
            [
                sys.executable,
                "-c",
                _CONTENDER,
                redis_server.url,
                store.prefix,
                role,
                str(RACES),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for role in ("complete", "cancel")
    }
    wins: dict[str, list[bool]] = {}
    for role, proc in contenders.items():
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, f"{role} contender failed:\n{err}"
        wins[role] = json.loads(out)
    elapsed = time.monotonic() - started

    completed = 0
    for n in range(RACES):
        task_id = f"race-{n}"
        outcome = (wins["complete"][n], wins["cancel"][n])
        assert outcome in ((True, False), (False, True)), (task_id, outcome)
        stored = await store.get(task_id)
        assert stored is not None
        if outcome[0]:
            completed += 1
            assert stored.status == "completed"
            assert stored.status_message == "completed by the worker"
            assert stored.result == {"content": [{"type": "text", "text": task_id}]}
        else:
            assert stored.status == "cancelled"
            assert stored.status_message == "cancelled by the client"
            assert stored.result is None
        # Terminal is final: neither a plain put nor another transition changes it.
        await store.put(replace(stored, status="working", status_message="again"))
        assert not await store.transition(
            task_id, LIVE | TERMINAL_STATUSES, replace(stored, status="failed")
        )
        assert await store.get(task_id) == stored
    assert await store.unfinished() == []
    assert await store.count_active("alice") == 0
    assert 0 < completed < RACES, "one side won every race: the processes never met"
    print(
        f"\n{RACES} races in {elapsed:.2f}s: complete won {completed},"
        f" cancel won {RACES - completed}"
    )
