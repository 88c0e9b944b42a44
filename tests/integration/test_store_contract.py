"""One contract for every ``TaskStore``: memory, SQLite and Redis behave the same.

Each test runs once per store. The Redis store talks to a real ``redis-server`` on
127.0.0.1 (started per module with an fsync-always append-only file, so a restart
keeps the data); those cases skip when ``redis-server`` is not installed and fail
under ``CI=true``. Every Redis test gets its own key prefix, so tests never see each
other's tasks.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_tasks_ext.redis_store import RedisTaskStore
from mcp_tasks_ext.stores import (
    TERMINAL_STATUSES,
    InMemoryTaskStore,
    LimitExceeded,
    Quota,
    SQLiteTaskStore,
    TaskRecord,
    TaskStore,
    TransitionStore,
    UsageStore,
    kept_bytes,
)
from tests.support.procs import RedisHandle, start_redis
from tests.support.waiting import until

pytestmark = pytest.mark.anyio

LIVE_STATUSES = ("working", "input_required")


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisHandle]:
    """A private redis-server with an fsync-always append-only file."""
    with start_redis(appendonly=True) as handle:
        yield handle


@dataclass
class Backend:
    """How to build a store of one kind, and what that kind promises."""

    name: str
    new_store: Callable[[], TaskStore]
    """A fresh store object over the same data (a second replica, or a restart)."""
    restart: Callable[[], None] | None
    """Restart the backing service between two stores; None when nothing persists."""
    strict_store: Callable[[], TaskStore] | None = None
    """A store object that sees another object's deletions at once, where
    ``new_store``'s may see them a moment later (SQLite's ``finished_recheck_s``);
    None: ``new_store``."""


@pytest.fixture(params=["memory", "sqlite", "redis"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """Each store implementation."""
    if request.param == "memory":
        return Backend("memory", InMemoryTaskStore, None)
    if request.param == "sqlite":
        path = str(tmp_path / "tasks.sqlite3")
        return Backend(
            "sqlite",
            lambda: SQLiteTaskStore(path),
            lambda: None,
            lambda: SQLiteTaskStore(path, finished_recheck_s=0),
        )
    server: RedisHandle = request.getfixturevalue("redis_server")
    prefix = f"contract-{uuid.uuid4().hex[:12]}:"
    return Backend(
        "redis",
        lambda: RedisTaskStore(server.url, prefix=prefix),
        lambda: server.restart(hard=True),
    )


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[TaskStore]:
    """An open store of the current kind, closed after the test."""
    opened = backend.new_store()
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


def task(
    task_id: str,
    owner: str | None = "alice",
    status: str = "working",
    *,
    ttl_ms: int | None = 60_000,
    created_at: float | None = None,
    **changes: Any,
) -> TaskRecord:
    """A task record created now (or at ``created_at``)."""
    now = time.time() if created_at is None else created_at
    return TaskRecord(
        task_id=task_id,
        owner=owner,
        tool="slow_tool",
        status=status,
        created_at=now,
        updated_at=now,
        ttl_ms=ttl_ms,
        poll_interval_ms=500,
        **changes,
    )


def ids(records: list[TaskRecord]) -> list[str]:
    return [r.task_id for r in records]


# -- create / get / put / delete ---------------------------------------------------


async def test_create_assigns_increasing_seq_and_get_returns_the_record(
    store: TaskStore,
) -> None:
    rich = task(
        "rich",
        status="input_required",
        status_message="waiting for the user",
        input_requests={"confirm": {"method": "elicitation/create", "params": {}}},
        error=None,
        result=None,
    )
    first = await store.create(rich)
    second = await store.create(task("plain", owner=None, ttl_ms=None))
    assert first.seq > 0
    assert second.seq > first.seq
    assert first == replace(rich, seq=first.seq)
    assert await store.get("rich") == first
    assert await store.get("plain") == second
    assert await store.get("missing") is None


async def test_put_replaces_the_state(store: TaskStore) -> None:
    created = await store.create(task("a"))
    waiting = replace(
        created,
        status="input_required",
        updated_at=created.updated_at + 1,
        input_requests={"k": {"method": "sampling/createMessage"}},
    )
    await store.put(waiting)
    assert await store.get("a") == waiting
    done = replace(
        waiting,
        status="completed",
        input_requests={},
        result={"content": [{"type": "text", "text": "ok"}], "isError": False},
    )
    await store.put(done)
    assert await store.get("a") == done


async def test_put_never_creates_a_missing_task(
    store: TaskStore,
) -> None:
    await store.put(replace(task("ghost"), seq=7))
    assert await store.get("ghost") is None
    assert await store.list_tasks("alice", 0, 10) == []
    assert await store.count_active("alice") == 0


async def test_delete_forgets_tasks_and_their_index_entries(store: TaskStore) -> None:
    for name in ("a", "b", "c"):
        await store.create(task(name))
    await store.create(task("d", owner="bob", status="completed"))
    await store.delete(["a", "d", "never-existed"])
    await store.delete([])
    assert await store.get("a") is None
    assert await store.get("d") is None
    assert ids(await store.list_tasks("alice", 0, 10)) == ["b", "c"]
    assert await store.list_tasks("bob", 0, 10) == []
    assert await store.count_active("alice") == 2
    assert ids(await store.unfinished()) == ["b", "c"]
    assert sorted(await store.expired(time.time() + 3600)) == ["b", "c"]


# -- listing, counting ---------------------------------------------------------------


async def test_list_tasks_pages_in_seq_order(store: TaskStore) -> None:
    created = [await store.create(task(f"t{i:02d}")) for i in range(25)]
    pages: list[list[str]] = []
    cursor = 0
    while True:
        assert len(pages) < 10, f"no end after {len(pages)} pages"
        page = await store.list_tasks("alice", cursor, 10)
        if not page:
            break
        pages.append(ids(page))
        cursor = page[-1].seq
    assert [len(p) for p in pages] == [10, 10, 5]
    assert sum(pages, []) == ids(created)
    assert ids(await store.list_tasks("alice", created[9].seq, 3)) == [
        "t10",
        "t11",
        "t12",
    ]
    assert await store.list_tasks("alice", created[-1].seq, 10) == []
    assert await store.list_tasks("alice", 0, 0) == []


async def test_owners_are_isolated(store: TaskStore) -> None:
    owners: list[str | None] = ["alice", "bob", None, "", "-", "=alice"]
    for n, owner in enumerate(owners):
        await store.create(task(f"task-{n}", owner=owner))
        await store.create(task(f"done-{n}", owner=owner, status="cancelled"))
    for n, owner in enumerate(owners):
        assert ids(await store.list_tasks(owner, 0, 100)) == [f"task-{n}", f"done-{n}"]
        assert await store.count_active(owner) == 1
    assert await store.list_tasks("carol", 0, 100) == []
    assert await store.count_active("carol") == 0


async def test_count_active_follows_status_changes(store: TaskStore) -> None:
    a = await store.create(task("a"))
    b = await store.create(task("b", status="input_required"))
    await store.create(task("c", status="completed"))
    await store.create(task("d", owner="bob"))
    assert await store.count_active("alice") == 2
    await store.put(replace(a, status="input_required"))
    assert await store.count_active("alice") == 2
    await store.put(replace(b, status="failed", error={"code": -32603, "message": "x"}))
    assert await store.count_active("alice") == 1
    await store.put(replace(a, status="cancelled"))
    assert await store.count_active("alice") == 0
    assert await store.count_active("bob") == 1


# -- expiry, recovery ----------------------------------------------------------------


async def test_expired_reports_tasks_whose_ttl_elapsed(store: TaskStore) -> None:
    start = time.time()
    short = await store.create(task("short", ttl_ms=1_000, created_at=start))
    await store.create(task("long", ttl_ms=60_000, created_at=start))
    await store.create(task("forever", ttl_ms=None, created_at=start))
    await store.create(
        task("done", status="completed", ttl_ms=1_000, created_at=start, owner="bob")
    )
    assert short.expires_at is not None
    assert sorted(await store.expired(start)) == []
    assert sorted(await store.expired(short.expires_at - 0.001)) == []
    assert sorted(await store.expired(short.expires_at)) == ["done", "short"]
    assert sorted(await store.expired(start + 3600)) == ["done", "long", "short"]
    await store.delete(await store.expired(start + 3600))
    assert ids(await store.unfinished()) == ["forever"]
    assert await store.expired(start + 10**9) == []


async def test_unfinished_lists_live_tasks_of_every_owner_in_seq_order(
    store: TaskStore,
) -> None:
    a = await store.create(task("a"))
    await store.create(task("b", owner="bob", status="input_required"))
    await store.create(task("c", status="completed"))
    await store.create(task("d", owner=None))
    assert ids(await store.unfinished()) == ["a", "b", "d"]
    await store.put(replace(a, status="completed", result={"content": []}))
    assert ids(await store.unfinished()) == ["b", "d"]


# -- persistence ---------------------------------------------------------------------


async def test_tasks_survive_reopening_the_store(backend: Backend) -> None:
    if backend.restart is None:
        pytest.skip(
            f"the {backend.name} store keeps nothing across reopening, by design"
        )
    first = backend.new_store()
    await first.open()
    try:
        working = await first.create(task("working", ttl_ms=None))
        done = await first.create(
            task("done", owner="bob", status="completed", result={"content": []})
        )
    finally:
        await first.close()
    backend.restart()
    second = backend.new_store()
    await second.open()
    try:
        assert await second.get("working") == working
        assert await second.get("done") == done
        assert ids(await second.unfinished()) == ["working"]
        assert await second.count_active("alice") == 1
        later = await second.create(task("later"))
        assert later.seq > done.seq
        assert ids(await second.list_tasks("alice", 0, 10)) == ["working", "later"]
    finally:
        await second.close()


async def test_a_second_store_object_sees_the_same_tasks(backend: Backend) -> None:
    """Two store objects over the same data (two replicas) agree."""
    if backend.restart is None:
        pytest.skip(f"the {backend.name} store is private to one object, by design")
    one, two = backend.new_store(), backend.new_store()
    await one.open()
    await two.open()
    try:
        created = await one.create(task("shared"))
        assert await two.get("shared") == created
        if backend.name == "sqlite":
            return  # its read cache assumes a single writer process
        await two.put(replace(created, status="completed", result={"content": []}))
        stored = await one.get("shared")
        assert stored is not None and stored.status == "completed"
    finally:
        await one.close()
        await two.close()


async def test_a_finished_task_deleted_through_another_store_object_is_gone(
    backend: Backend,
) -> None:
    """A finished task one replica read (and may keep) is gone once another replica
    deletes it, as after that replica's TTL sweep (SQLite, by default, sees such a
    deletion within ``finished_recheck_s``: see
    ``tests/unit/server/test_stores.py``)."""
    if backend.restart is None:
        pytest.skip(f"the {backend.name} store is private to one object, by design")
    one, two = (backend.strict_store or backend.new_store)(), backend.new_store()
    await one.open()
    await two.open()
    try:
        done = await one.create(
            task("done", status="completed", result={"content": [{"type": "text"}]})
        )
        kept = await one.create(task("kept", status="completed", result={"x": 1}))
        for _ in range(3):  # read thrice: the later reads may come from a cache
            assert await one.get("done") == done
            assert await one.get("kept") == kept
        await two.delete(["done"])
        assert await one.get("done") is None
        assert await one.get("kept") == kept
    finally:
        await one.close()
        await two.close()


# -- terminal states -----------------------------------------------------------------


@pytest.mark.parametrize("terminal", sorted(TERMINAL_STATUSES))
async def test_terminal_status_never_changes_through_put(
    store: TaskStore, terminal: str
) -> None:
    created = await store.create(task("t"))
    final = replace(
        created,
        status=terminal,
        status_message=f"{terminal} for good",
        updated_at=created.updated_at + 1,
    )
    await store.put(final)
    for status in (*LIVE_STATUSES, *sorted(TERMINAL_STATUSES - {terminal})):
        await store.put(
            replace(final, status=status, status_message="overwritten", result={})
        )
    await store.put(replace(final, status_message="overwritten"))
    assert await store.get("t") == final
    assert await store.count_active("alice") == 0
    assert await store.unfinished() == []


async def test_transition_is_a_check_and_set_on_the_status(store: TaskStore) -> None:
    assert isinstance(store, TransitionStore)
    created = await store.create(task("t"))
    asking = replace(
        created, status="input_required", updated_at=created.updated_at + 1
    )
    # the task is working: a transition that expects input_required does nothing
    assert not await store.transition("t", frozenset({"input_required"}), asking)
    assert await store.get("t") == created
    assert await store.transition("t", frozenset({"working"}), asking)
    assert await store.get("t") == asking
    # a missing task is never created
    assert not await store.transition("u", frozenset({"working"}), task("u"))
    assert await store.get("u") is None
    with pytest.raises(ValueError):
        await store.transition("t", frozenset({"input_required"}), task("u"))


async def test_transition_with_expected_updated_at_is_a_compare_and_set(
    store: TaskStore,
) -> None:
    assert isinstance(store, TransitionStore)
    created = await store.create(task("t", input_requests={"a": {"method": "x"}}))
    live = frozenset(LIVE_STATUSES)
    # two writers read the same record; the second one's write must not land
    first = replace(
        created,
        input_requests={"a": {"method": "x"}, "b": {"method": "y"}},
        updated_at=created.updated_at + 0.1,
    )
    second = replace(created, input_requests={}, updated_at=created.updated_at + 0.2)
    expected = created.updated_at
    assert await store.transition("t", live, first, expected_updated_at=expected)
    assert not await store.transition("t", live, second, expected_updated_at=expected)
    assert await store.get("t") == first
    assert await store.transition(
        "t", live, second, expected_updated_at=first.updated_at
    )
    assert await store.get("t") == second


async def test_transition_races_end_in_exactly_one_terminal_state(
    store: TaskStore,
) -> None:
    assert isinstance(store, TransitionStore)
    transitions = store
    live = frozenset(LIVE_STATUSES)

    async def attempt(record: TaskRecord, outcomes: list[bool]) -> None:
        outcomes.append(await transitions.transition(record.task_id, live, record))

    for round_number in range(20):
        created = await store.create(task(f"race-{round_number}"))
        later = created.updated_at + 1
        completed = replace(created, status="completed", result={}, updated_at=later)
        cancelled = replace(created, status="cancelled", updated_at=later)
        outcomes: list[bool] = []
        async with anyio.create_task_group() as group:
            group.start_soon(attempt, completed, outcomes)
            group.start_soon(attempt, cancelled, outcomes)
        assert sorted(outcomes) == [False, True]
        stored = await store.get(created.task_id)
        assert stored in (completed, cancelled)
        # terminal: even a transition naming the terminal status changes nothing
        assert stored is not None
        assert not await store.transition(
            created.task_id,
            frozenset({stored.status, *LIVE_STATUSES}),
            replace(stored, status="working"),
        )
        assert await store.get(created.task_id) == stored


# -- Redis key expiry ----------------------------------------------------------------


async def test_redis_keys_expire_after_ttl_plus_grace(
    redis_server: RedisHandle,
) -> None:
    """The task hash disappears on its own; ``delete`` then clears every index."""
    from redis.asyncio import from_url

    prefix = f"expiry-{uuid.uuid4().hex[:12]}:"
    store = RedisTaskStore(redis_server.url, prefix=prefix, expiry_grace_s=0.5)
    raw = from_url(redis_server.url)
    await store.open()
    try:
        created = await store.create(task("brief", ttl_ms=500))
        await store.create(task("kept", ttl_ms=None))
        key = f"{prefix}task:brief"
        pttl = await raw.pttl(key)
        assert 500 < pttl <= 1000
        assert created.expires_at is not None
        expires_at = created.expires_at
        # past the TTL, inside the grace period (the wait is the time left, not a guess)
        await anyio.sleep(max(expires_at - time.time(), 0) + 0.05)
        assert time.time() > expires_at
        assert await store.get("brief") == created

        # past TTL + grace: Redis drops the hash on its own
        async def dropped() -> bool:
            return bool(await raw.exists(key) == 0)

        await until(dropped, timeout=5, what="the task hash expired")
        assert time.time() > expires_at + 0.5
        assert await store.get("brief") is None
        assert ids(await store.list_tasks("alice", 0, 10)) == ["kept"]
        assert ids(await store.unfinished()) == ["kept"]
        assert await store.expired(time.time()) == ["brief"]
        await store.delete(await store.expired(time.time()))
        assert await store.count_active("alice") == 1
        await store.delete(["kept"])
        leftovers = [k async for k in raw.scan_iter(match=f"{prefix}*", count=1000)]
        assert leftovers == [f"{prefix}seq".encode()]
    finally:
        await store.close()
        await raw.aclose()


# -- usage (Limits.max_finished_tasks, max_stored_bytes) ------------------------------


async def test_usage_counts_each_owners_finished_tasks_and_their_results(
    store: TaskStore,
) -> None:
    """Every store counts what finished tasks keep, per owner (issue 9, item 3): the
    server refuses new tasks beyond ``Limits.max_finished_tasks``/``max_stored_bytes``.
    """
    from mcp_tasks_ext.stores import UsageStore

    assert isinstance(store, UsageStore)
    big = {"content": [{"type": "text", "text": "x" * 5000}]}
    a = await store.create(task("a"))
    await store.create(task("b"))
    await store.create(task("c", owner="bob"))
    assert await store.usage("alice") == (0, 0)
    await store.put(
        replace(a, status="completed", result=big, updated_at=a.updated_at + 1)
    )
    finished, kept = await store.usage("alice")
    assert finished == 1 and 5000 < kept < 6000
    assert await store.usage("bob") == (0, 0)
    await store.delete(["a"])
    assert await store.usage("alice") == (0, 0)


# -- limits checked with the create (Quota) ------------------------------------------

RACERS = 60
"""Concurrent creates in each race, against a limit of 5."""


@pytest.fixture
async def shared(backend: Backend, store: TaskStore) -> AsyncIterator[list[TaskStore]]:
    """``store`` and, where the data is shared, a second store object over it (a
    second replica, or a second process on the SQLite file)."""
    if backend.restart is None:
        yield [store]
        return
    second = backend.new_store()
    await second.open()
    try:
        yield [store, second]
    finally:
        await second.close()


async def race(
    stores: list[TaskStore], records: list[TaskRecord], quota: Quota
) -> tuple[list[TaskRecord], list[LimitExceeded]]:
    """Create every record at once (spread over ``stores``); the created records and
    the refusals."""
    created: list[TaskRecord] = []
    refused: list[LimitExceeded] = []

    async def attempt(target: TaskStore, record: TaskRecord) -> None:
        try:
            created.append(await target.create(record, quota=quota))
        except LimitExceeded as refusal:
            refused.append(refusal)

    async with anyio.create_task_group() as group:
        for index, record in enumerate(records):
            group.start_soon(attempt, stores[index % len(stores)], record)
    return created, refused


async def test_concurrent_creates_never_pass_the_active_limit(
    store: TaskStore, shared: list[TaskStore]
) -> None:
    records = [task(f"r{n}") for n in range(RACERS)]
    created, refused = await race(shared, records, Quota(max_active_tasks=5))
    assert len(created) == 5 and len(refused) == RACERS - 5
    assert {(r.limit, r.current, r.maximum) for r in refused} == {
        ("max_active_tasks", 5, 5)
    }
    assert await store.count_active("alice") == 5
    assert len(await store.list_tasks("alice", 0, 100)) == 5
    # another owner is not limited by alice's tasks
    await store.create(task("bob's", owner="bob"), quota=Quota(max_active_tasks=5))


async def test_concurrent_creates_never_pass_the_finished_limit(
    store: TaskStore, shared: list[TaskStore]
) -> None:
    """Unfinished tasks count towards ``max_finished_tasks``: each will finish, so
    the finished tasks never exceed the limit, even when every accepted task
    finishes while the others are still being created."""
    for n in range(2):
        await store.create(task(f"old{n}", status="completed", result={"n": n}))
    finished: list[str] = []
    refused: list[LimitExceeded] = []

    async def create_and_finish(target: TaskStore, record: TaskRecord) -> None:
        try:
            created = await target.create(record, quota=Quota(max_finished_tasks=5))
        except LimitExceeded as refusal:
            refused.append(refusal)
            return
        await target.put(replace(created, status="completed", result={"ok": True}))
        finished.append(created.task_id)

    async with anyio.create_task_group() as group:
        for n in range(RACERS):
            group.start_soon(create_and_finish, shared[n % len(shared)], task(f"r{n}"))
    assert len(finished) == 3 and len(refused) == RACERS - 3
    assert {(r.limit, r.current, r.maximum) for r in refused} == {
        ("max_finished_tasks", 5, 5)
    }
    assert await usage_of(store, "alice") == (0, 5)


async def test_concurrent_creates_of_many_owners_never_pass_the_store_limit(
    store: TaskStore, shared: list[TaskStore]
) -> None:
    """``max_tasks`` bounds the tasks of every owner together (rotating principals)."""
    await store.create(task("done", owner="zoe", status="completed", result={}))
    records = [task(f"r{n}", owner=f"principal-{n}") for n in range(RACERS)]
    created, refused = await race(shared, records, Quota(max_tasks=5))
    assert len(created) == 4 and len(refused) == RACERS - 4
    assert {(r.limit, r.current, r.maximum) for r in refused} == {("max_tasks", 5, 5)}
    await store.delete([created[0].task_id])
    await store.create(task("next", owner="principal-x"), quota=Quota(max_tasks=5))


async def test_the_stored_bytes_limit_counts_finished_results(store: TaskStore) -> None:
    quota = Quota(max_stored_bytes=2000)
    first = await store.create(task("a"), quota=quota)
    await store.put(replace(first, status="completed", result={"text": "x" * 1000}))
    second = await store.create(task("b"), quota=quota)  # about 1 KB kept so far
    await store.put(
        replace(second, status="failed", error={"code": 1, "message": "x" * 1000})
    )
    with pytest.raises(LimitExceeded) as refused:
        await store.create(task("c"), quota=quota)
    assert refused.value.limit == "max_stored_bytes"
    assert refused.value.current == sum(
        kept_bytes(record) for record in await store.list_tasks("alice", 0, 10)
    )
    await store.create(task("bob's", owner="bob"), quota=quota)  # per owner
    await store.delete(["a"])
    await store.create(task("c"), quota=quota)


async def test_a_refused_create_stores_nothing(store: TaskStore) -> None:
    await store.create(task("a"))
    with pytest.raises(LimitExceeded):
        await store.create(task("b"), quota=Quota(max_active_tasks=1))
    assert await store.get("b") is None
    assert ids(await store.list_tasks("alice", 0, 10)) == ["a"]
    assert ids(await store.unfinished()) == ["a"]
    assert await store.count_active("alice") == 1


# -- the counters agree with a recount ---------------------------------------------

Figures = dict[str | None, tuple[int, int, int]]
"""Per owner: unfinished tasks, finished tasks, their ``kept_bytes`` in total."""


async def usage_of(store: TaskStore, owner: str | None) -> tuple[int, int]:
    """``owner``'s unfinished and finished tasks, from the store's counters."""
    assert isinstance(store, UsageStore)
    return await store.count_active(owner), (await store.usage(owner))[0]


async def recount(store: TaskStore, owners: list[str | None]) -> Figures:
    """The figures counted from the records the store lists."""
    counted: Figures = {}
    for owner in owners:
        records = await store.list_tasks(owner, 0, 10_000)
        done = [record for record in records if record.is_terminal]
        kept = sum(kept_bytes(record) for record in done)
        counted[owner] = (len(records) - len(done), len(done), kept)
    return counted


async def counters(store: TaskStore, owners: list[str | None]) -> Figures:
    """The figures as the store's counters give them."""
    assert isinstance(store, UsageStore)
    counted: Figures = {}
    for owner in owners:
        finished, kept = await store.usage(owner)
        counted[owner] = (await store.count_active(owner), finished, kept)
    return counted


async def stored_total(store: TaskStore) -> int:
    """Every task the store holds, from its counter (as a create refused by
    ``max_tasks=0`` reports it)."""
    with pytest.raises(LimitExceeded) as refused:
        await store.create(task("probe", owner="nobody"), quota=Quota(max_tasks=0))
    return refused.value.current


async def test_counters_match_a_recount_after_finishes_expiry_and_a_restart(
    backend: Backend,
) -> None:
    owners: list[str | None] = ["alice", "bob", None]
    past = time.time() - 100  # 100 s ago: a TTL of 1 s has run out
    store = backend.new_store()
    if isinstance(store, RedisTaskStore):
        # grace 0: the hash of a task whose TTL ran out expires at once (a PEXPIREAT
        # in the past), long before any sweep
        store = RedisTaskStore(store.url, prefix=store.prefix, expiry_grace_s=0)
    await store.open()
    try:
        for owner in owners:
            for n in range(4):
                await store.create(task(f"{owner}-live{n}", owner=owner))
            for n, status in enumerate(sorted(TERMINAL_STATUSES)):
                created = await store.create(task(f"{owner}-end{n}", owner=owner))
                await store.put(
                    replace(created, status=status, result={"text": "r" * (100 * n)})
                )
            await store.create(
                task(f"{owner}-born-done", owner=owner, status="completed", result={})
            )
            # TTL run out: one task finished just before (its record, written with
            # the old creation time, expires at once on Redis), two unfinished
            ending = await store.create(task(f"{owner}-old0", owner=owner, ttl_ms=1000))
            await store.put(
                replace(
                    ending, status="completed", result={"t": "o" * 500}, created_at=past
                )
            )
            for n in (1, 2):
                await store.create(
                    task(f"{owner}-old{n}", owner=owner, created_at=past, ttl_ms=1000)
                )
        assert (await usage_of(store, "alice")) == (6, 5)  # the expired ones count
        await store.delete(["alice-live0", "bob-end0", "nothing-such"])
        if isinstance(store, RedisTaskStore):
            from redis.asyncio import from_url

            raw = from_url(store.url)
            try:  # the expired tasks' hashes went before any sweep
                for n in range(3):
                    assert not await raw.exists(f"{store.prefix}task:alice-old{n}")
            finally:
                await raw.aclose()
        await store.delete(await store.expired(time.time()))  # the server's sweep
        assert await counters(store, owners) == await recount(store, owners)
        assert [await usage_of(store, owner) for owner in owners] == [
            (3, 4),
            (4, 3),
            (4, 4),
        ]
        assert await stored_total(store) == 22
        left = [
            record.task_id
            for owner in owners
            for record in await store.list_tasks(owner, 0, 100)
        ]
        await store.delete(left[:5])
        assert await counters(store, owners) == await recount(store, owners)
        assert await stored_total(store) == 17
    finally:
        await store.close()
    if backend.restart is None:
        return
    backend.restart()
    reopened = backend.new_store()
    await reopened.open()
    try:
        assert await counters(reopened, owners) == await recount(reopened, owners)
        assert await stored_total(reopened) == 17
        await reopened.delete(left[5:])
        assert await counters(reopened, owners) == {o: (0, 0, 0) for o in owners}
        assert await stored_total(reopened) == 0
    finally:
        await reopened.close()
