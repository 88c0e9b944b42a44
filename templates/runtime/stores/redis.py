"""``RedisTaskStore``: a ``TaskStore`` on Redis, for servers that run as several
replicas.

Every replica points a :class:`RedisTaskStore` at the same Redis server and sees the
same tasks: a task created through one replica can be polled, updated and cancelled
through any other. The ``redis`` package (redis-py, asyncio API) is an optional
dependency: it is imported when the store opens, so this module imports without it.

Layout (every key starts with ``prefix``, ``"mcp-tasks:"`` by default)::

    {prefix}task:{task_id}         hash: status, seq, body (the record as JSON)
    {prefix}seq                    counter: INCR gives each new task its seq
    {prefix}owner-tasks:{owner}    sorted set: every task of the owner, score seq
    {prefix}owner-active:{owner}   set: the owner's tasks that are not terminal
    {prefix}unfinished             sorted set: every non-terminal task, score seq
    {prefix}expiry                 sorted set: every task with a TTL, score expires_at
    {prefix}owner-of               hash: task ID -> owner tag (to clean the indexes)
    {prefix}kept                   hash: task ID -> kept_bytes, for finished tasks
                                   that keep any (never expires: see Counts)
    {prefix}owner-kept             hash: owner tag -> the kept_bytes of its finished
                                   tasks in total
    {prefix}lease:{task_id}        string: the replica holding the worker lease (PX)
    {prefix}signals                pub/sub channel: signals between replicas
    {prefix}job:{task_id}          hash: the job of a task an executor runs in
                                   another process (``stores.redis_jobs``)

``{owner}`` is ``-`` for tasks without an owner and ``=`` followed by the principal
otherwise, so that no principal can collide with "no owner".

Expiry. The task hash gets a Redis key expiry at the task's ``expires_at`` plus
``expiry_grace_s`` (60 seconds by default). Until then the record stays readable,
so a status written just as the TTL runs out (a ``failed`` from a worker stopped by
the sweeper, for example) is still stored and visible to the store's readers; the
server itself answers "not found" for an expired task either way. The indexes do not
expire by themselves: ``expired`` keeps reporting a task until ``delete`` removes it
and its index entries, which the server's TTL sweeper does. A task hash whose key
expiry fired before any sweeper ran is skipped by ``get``, ``list_tasks`` and
``unfinished`` (the counts, ``count_active``, ``usage`` and a create's ``Quota``,
still include it), and the next sweep removes what is left of it, so nothing
outlives its TTL for good.

Counts. What the limits need is read in O(1), never by walking an owner's tasks:
the owner's unfinished tasks are ``SCARD owner-active``, its finished ones ``ZCARD
owner-tasks`` minus those, the store's tasks ``HLEN owner-of`` and the bytes its
finished tasks keep its field of ``owner-kept``. The scripts that create, finish and
delete a task update them with the indexes, so a create's ``Quota`` check is part of
the create script. A task's own ``kept`` entry does not expire with its hash, so the
deletion of a task whose key expired before the sweep still takes its bytes off.
(Tasks finished under a version of this store without ``kept`` count as keeping
nothing.)

Atomicity. ``create``, ``put``, :meth:`RedisTaskStore.transition` and ``delete`` each
run as one Lua script, so concurrent writers on different replicas never interleave
inside a write (a ``delete`` of many tasks runs one per 256). Terminal statuses
(``completed``, ``failed``, ``cancelled``) never change:
``put`` on a task that is already terminal is ignored and the stored record stays
as it was, and so is ``put`` on a task that no longer exists (it is never
re-created). ``transition`` additionally checks the current status against the
statuses it may leave and reports whether it applied, which is how two replicas
racing to complete and to cancel the same task end in exactly one terminal state.
Writing a record identical to the stored one counts as applied, so that a write
retried after a lost reply (see ``retries``) is not mistaken for a lost race.

Replicas. The store is a ``ReplicaStore``: ``hold_leases`` sets the lease keys
with a millisecond expiry (the server renews them while its workers run, and fails
a task whose lease key is gone), and ``publish``/``subscribe`` carry signals over one
Redis pub/sub channel, listened to by one background connection per store that
reconnects with backoff when Redis goes away. Pub/sub delivers at most once: a
signal published while a replica is reconnecting does not reach it, so after every
reconnection the handlers get ``{"kind": "resync"}`` to compare what they hold with
the store.

Outages. A command that still fails after ``retries`` attempts (a broken
connection, a timeout) raises :class:`RedisUnavailable`, a JSON-RPC error
(``-32603``, "Task store unavailable") that the server returns as is, without a
traceback. The store logs one warning with the cause when an outage starts and one
line when Redis answers again; the signal listener reconnects with backoff meanwhile.

Durability follows the Redis server's persistence settings: with
``appendonly yes`` and ``appendfsync always`` a write is on disk before the store
returns; with ``appendfsync everysec`` a crash of the machine (not of Redis) can lose
the last second of writes; with ``appendonly no`` a restart of Redis loses every task
written since the last RDB snapshot, or all of them without ``save`` points. ``open``
checks this (``CONFIG GET``) and logs a warning when Redis would lose acknowledged
tasks (see :meth:`RedisTaskStore.persistence_problems`).
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from . import codec
from .base import (
    LimitExceeded,
    Quota,
    ReplicaStore,
    Signal,
    SignalHandler,
    TaskRecord,
    TaskStore,
)
from .codec import kept_bytes, text
from .redis_jobs import RedisJobs
from .redis_link import Outage, RedisUnavailable, SignalChannel
from .redis_scripts import SCRIPTS, UPDATE_OUTCOMES

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisKeys", "RedisTaskStore", "RedisUnavailable"]

_log = logging.getLogger(__name__)


def _record(
    status: bytes | str | None, seq: bytes | str | None, body: bytes | str | None
) -> TaskRecord | None:
    """Rebuild a record from the ``status``, ``seq`` and ``body`` hash fields (the
    body holds the task ID and owner too)."""
    if status is None or seq is None or body is None:
        return None
    return codec.decode(body, status=text(status), seq=int(seq))


def _body(record: TaskRecord) -> str:
    """The JSON ``body`` field of a task hash (``status`` and ``seq`` are separate
    hash fields so that the scripts can read them)."""
    return codec.encode(record, identity=True)


class RedisKeys:
    """The names of the store's keys, each starting with ``prefix`` (see the module
    documentation for what each holds); ``tag`` is ``codec.owner_key`` of an owner."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.seq = f"{prefix}seq"
        self.unfinished = f"{prefix}unfinished"
        self.expiry = f"{prefix}expiry"
        self.owner_of = f"{prefix}owner-of"
        self.kept = f"{prefix}kept"
        self.owner_kept = f"{prefix}owner-kept"
        self.signals = f"{prefix}signals"

    def task(self, task_id: str) -> str:
        """The hash of a task."""
        return f"{self.prefix}task:{task_id}"

    def owner_tasks(self, tag: str) -> str:
        """The sorted set of an owner's tasks."""
        return f"{self.prefix}owner-tasks:{tag}"

    def owner_active(self, tag: str) -> str:
        """The set of an owner's unfinished tasks."""
        return f"{self.prefix}owner-active:{tag}"

    def lease(self, task_id: str) -> str:
        """The worker lease on a task."""
        return f"{self.prefix}lease:{task_id}"


class RedisTaskStore(RedisJobs):
    """A ``TaskStore`` shared by every replica that points at the same Redis.

    ``url`` is a redis-py URL (``redis://host:port/db``, ``rediss://`` for TLS,
    ``unix://`` for a socket). Pass ``client`` instead to use a
    ``redis.asyncio.Redis`` you manage yourself; the store then leaves it open on
    ``close``. ``prefix`` namespaces every key, so several servers can share one
    Redis database. ``expiry_grace_s`` is how long a task's hash outlives its TTL
    before Redis drops it (see the module documentation). ``retries`` is how often
    a command that hit a broken connection or a timeout is tried again (with
    exponential backoff), which carries the store over a Redis restart or failover;
    a command that still fails raises :class:`RedisUnavailable`. Retrying is safe:
    every write is idempotent, and a write retried after its reply was lost reports
    the outcome of the original. ``check_persistence`` makes ``open`` log a warning
    when the Redis server's persistence settings would lose acknowledged tasks.
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "mcp-tasks:",
        expiry_grace_s: float = 60.0,
        retries: int = 3,
        client: Redis | None = None,
        check_persistence: bool = True,
    ) -> None:
        if expiry_grace_s < 0:
            raise ValueError("expiry_grace_s must not be negative")
        self.url = url
        self.prefix = prefix
        self.expiry_grace_s = expiry_grace_s
        self.retries = retries
        self.check_persistence = check_persistence
        self._client = client
        self._owns_client = client is None
        self._shas: dict[str, str] = {}
        self._keys = RedisKeys(prefix)
        self._outage = Outage(lambda: self._where)
        self._signals = SignalChannel(self._redis, self._keys.signals, self._outage)

    # -- plumbing ------------------------------------------------------------

    @property
    def _where(self) -> str:
        """The Redis URL without credentials, for log messages."""
        parts = urlsplit(self.url)
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit(parts._replace(netloc=host))

    def _reaching(self) -> contextlib.AbstractContextManager[None]:
        """Raise :class:`RedisUnavailable` for a failure to reach Redis in the block."""
        return self._outage.reaching()

    def _redis(self) -> Redis:
        """The client, or ``RuntimeError`` when the store is not open."""
        if self._client is None:
            raise RuntimeError("RedisTaskStore is not open")
        return self._client

    async def _script(self, name: str, keys: Sequence[str], args: Sequence[str]) -> Any:
        """Run one of the Lua scripts by SHA, loading it again if Redis forgot it."""
        from redis.exceptions import NoScriptError

        client = self._redis()
        sha = self._shas.get(name)
        if sha is not None:
            try:
                return await client.evalsha(sha, len(keys), *keys, *args)
            except NoScriptError:  # Redis restarted or its script cache was flushed
                pass
        sha = await client.script_load(SCRIPTS[name])
        self._shas[name] = sha
        return await client.evalsha(sha, len(keys), *keys, *args)

    async def _range(
        self, key: str, low: str, high: str, count: int = -1
    ) -> list[tuple[str, float]]:
        """Up to ``count`` (-1: all) members of a sorted set with ``low <= score <=
        high``.

        ``low`` and ``high`` use the Redis syntax: ``-inf``, ``+inf``, ``(5`` for
        "more than 5".
        """
        reply: list[bytes | str] = await self._script(
            "range", [key], [low, high, str(count)]
        )
        members = reply[0::2]
        scores = reply[1::2]
        return [
            (text(member), float(score))
            for member, score in zip(members, scores, strict=True)
        ]

    def _expiry_args(self, record: TaskRecord) -> list[str]:
        """``expires_at`` and the key expiry in unix ms, or two empty strings."""
        expires_at = record.expires_at
        if expires_at is None:
            return ["", ""]
        key_expiry_ms = math.ceil((expires_at + self.expiry_grace_s) * 1000)
        return [repr(expires_at), str(key_expiry_ms)]

    async def _load(self, task_ids: Sequence[str]) -> list[TaskRecord | None]:
        """The records of ``task_ids`` in one round trip (None for missing ones)."""
        if not task_ids:
            return []
        pipe = self._redis().pipeline(transaction=False)
        for task_id in task_ids:
            pipe.hmget(self._keys.task(task_id), ["status", "seq", "body"])
        rows: list[list[bytes | str | None]] = await pipe.execute()
        return [_record(*row) for row in rows]

    # -- TaskStore -----------------------------------------------------------

    async def open(self) -> None:
        """Connect (creating the client from ``url`` unless one was given).

        Loading the Lua scripts doubles as a connection check: an unreachable
        Redis fails here rather than on the first request.
        """
        if self._client is None:
            try:
                from redis.asyncio import from_url
            except ImportError as error:
                raise ModuleNotFoundError(
                    "RedisTaskStore needs the redis package: pip install redis",
                    name="redis",
                ) from error
            from redis.asyncio.retry import Retry
            from redis.backoff import ExponentialWithJitterBackoff
            from redis.exceptions import ConnectionError, TimeoutError

            self._client = from_url(
                self.url,
                retry=Retry(
                    ExponentialWithJitterBackoff(cap=2.0, base=0.05), self.retries
                ),
                retry_on_error=[ConnectionError, TimeoutError],
                socket_connect_timeout=5.0,
            )
            self._owns_client = True
        for name, script in SCRIPTS.items():
            self._shas[name] = await self._client.script_load(script)
        if self.check_persistence:
            for problem in await self.persistence_problems():
                _log.warning("%s", problem)

    async def persistence_problems(self) -> list[str]:
        """How the Redis server's persistence settings would lose acknowledged tasks.

        Reads ``appendonly``, ``appendfsync`` and ``save`` with ``CONFIG GET``. Empty
        with ``appendonly yes`` and ``appendfsync`` ``always`` or ``everysec``; one
        sentence per problem otherwise, including when the server refuses ``CONFIG``
        (managed services, ACLs), since the store cannot tell then.
        """
        from redis.exceptions import ResponseError

        client: Any = self._redis()  # redis-py leaves ``config_get`` partly untyped
        settings: dict[str, str] = {}
        try:
            for name in ("appendonly", "appendfsync", "save"):
                reply: dict[Any, Any] = await client.config_get(name)
                for key, value in reply.items():
                    settings[text(key)] = text(value)
        except ResponseError as exc:
            return [
                f"could not check whether Redis at {self._where} would lose"
                f" acknowledged tasks (CONFIG GET refused: {exc}); make sure it runs"
                " with appendonly yes, or a restart of Redis loses tasks"
            ]
        if settings.get("appendonly") == "no":
            save = settings.get("save", "").strip()
            if not save:
                return [
                    f"Redis at {self._where} would lose acknowledged tasks: it keeps"
                    " them in memory only (appendonly no, no save points), so a"
                    " restart loses every task; run redis-server with --appendonly yes"
                ]
            return [
                f"Redis at {self._where} would lose acknowledged tasks: it persists"
                f" by RDB snapshots only (save {save!r}), so a restart loses every"
                " task written since the last snapshot; run redis-server with"
                " --appendonly yes"
            ]
        if settings.get("appendfsync") == "no":
            return [
                f"Redis at {self._where} would lose acknowledged tasks on a crash of"
                " its machine: appendfsync no leaves flushing the append-only file to"
                " the operating system (often 30 s); use everysec or always"
            ]
        return []

    async def close(self) -> None:
        """Close the client and its connection pool (unless the caller owns them)."""
        await self._signals.close()
        client = self._client
        if client is None:
            return
        if self._owns_client:
            self._client = None
            await client.aclose(close_connection_pool=True)

    async def create(
        self, record: TaskRecord, *, quota: Quota | None = None
    ) -> TaskRecord:
        """Store a new task and return it with ``seq`` assigned.

        Raises ``ValueError`` when a task with the same ID exists. With ``quota``,
        the limits are checked inside the create script (one atomic step for every
        replica), which raises ``LimitExceeded`` and stores nothing when one is
        reached.
        """
        quota = quota or Quota()
        maxima = (
            quota.max_active_tasks,
            quota.max_finished_tasks,
            quota.max_stored_bytes,
            quota.max_tasks,
        )
        with self._reaching():
            tag = codec.owner_key(record.owner)
            reply: list[Any] = await self._script(
                "create",
                [
                    self._keys.task(record.task_id),
                    self._keys.seq,
                    self._keys.owner_tasks(tag),
                    self._keys.owner_active(tag),
                    self._keys.unfinished,
                    self._keys.expiry,
                    self._keys.owner_of,
                    self._keys.kept,
                    self._keys.owner_kept,
                ],
                [record.task_id, record.status, _body(record), tag]
                + self._expiry_args(record)
                + [str(kept_bytes(record))]
                + ["" if maximum is None else str(maximum) for maximum in maxima],
            )
        seq = int(reply[0])
        if seq == -1:
            raise LimitExceeded(text(reply[1]), int(reply[2]), int(reply[3]))
        if seq == 0:
            raise ValueError(f"task {record.task_id!r} already exists")
        return replace(record, seq=seq)

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task with this ID, or None."""
        with self._reaching():
            status, seq, body = await self._redis().hmget(
                self._keys.task(task_id), ["status", "seq", "body"]
            )
            return _record(status, seq, body)

    async def _update(
        self,
        record: TaskRecord,
        allowed_from: Sequence[str],
        expected_updated_at: float | None = None,
    ) -> int:
        """Run the update script for ``record``; returns the script's outcome."""
        tag = codec.owner_key(record.owner)
        outcome: int = await self._script(
            "update",
            [
                self._keys.task(record.task_id),
                self._keys.owner_active(tag),
                self._keys.unfinished,
                self._keys.expiry,
                self._keys.kept,
                self._keys.owner_kept,
            ],
            [record.task_id, record.status, _body(record)]
            + self._expiry_args(record)
            + ["" if expected_updated_at is None else repr(expected_updated_at)]
            + [tag, str(kept_bytes(record))]
            + list(allowed_from),
        )
        return outcome

    async def put(self, record: TaskRecord) -> None:
        """Replace the stored state of an existing, non-terminal task.

        The write is atomic. It is ignored (the stored record stays) when the task
        no longer exists or is already terminal: terminal states never change.
        """
        with self._reaching():
            outcome = await self._update(record, ())
            if outcome != 1:
                _log.debug(
                    "put of task %s ignored: %s",
                    record.task_id,
                    UPDATE_OUTCOMES.get(outcome, f"outcome {outcome}"),
                )

    async def transition(
        self,
        task_id: str,
        allowed_from: frozenset[str],
        record: TaskRecord,
        *,
        expected_updated_at: float | None = None,
    ) -> bool:
        """Store ``record`` only if the task is currently in one of ``allowed_from``.

        With ``expected_updated_at``, the stored record must also still have that
        ``updated_at`` (it was not changed since the caller read it). The check and
        the write are one atomic step across every process sharing the Redis
        server, so of two replicas racing to move a ``working`` task to
        ``completed`` and to ``cancelled`` exactly one gets ``True``. A terminal
        task never changes, even if ``allowed_from`` names its status. Returns
        whether the record was written.
        """
        if record.task_id != task_id:
            raise ValueError(f"record is for task {record.task_id!r}, not {task_id!r}")
        if not allowed_from:
            return False
        with self._reaching():
            outcome = await self._update(
                record, sorted(allowed_from), expected_updated_at
            )
        return outcome == 1

    async def delete(self, task_ids: list[str]) -> None:
        """Forget these tasks: their hashes, every index entry and what they count
        for, one script per batch of 256."""
        if task_ids:
            with self._reaching():
                for start in range(0, len(task_ids), 256):
                    await self._delete(task_ids[start : start + 256])

    async def _delete(self, task_ids: list[str]) -> None:
        """``delete`` of a non-empty list."""
        found: list[bytes | str | None] = await self._redis().hmget(
            self._keys.owner_of, task_ids
        )
        keys = [
            self._keys.owner_of,
            self._keys.unfinished,
            self._keys.expiry,
            self._keys.kept,
            self._keys.owner_kept,
        ]
        args: list[str] = []
        for task_id, stored in zip(task_ids, found, strict=True):
            tag = "" if stored is None else text(stored)
            keys += [
                self._keys.task(task_id),
                self._keys.owner_tasks(tag),
                self._keys.owner_active(tag),
            ]
            args += [task_id, tag]
        await self._script("delete", keys, args)

    async def list_tasks(
        self, owner: str | None, after_seq: int, limit: int
    ) -> list[TaskRecord]:
        """Up to ``limit`` tasks of ``owner`` with ``seq > after_seq``, in ``seq``
        order."""
        with self._reaching():
            key = self._keys.owner_tasks(codec.owner_key(owner))
            found: list[TaskRecord] = []
            cursor = after_seq
            while len(found) < limit:
                wanted = limit - len(found)
                page = await self._range(key, f"({cursor}", "+inf", wanted)
                if not page:
                    break
                records = await self._load([task_id for task_id, _ in page])
                # A missing record is a task whose key expired before a sweep removed
                # its index entries: skip it and keep filling the page.
                found.extend(stored for stored in records if stored is not None)
                cursor = int(page[-1][1])
                if len(page) < wanted:
                    break
            return found

    async def usage(self, owner: str | None) -> tuple[int, int]:
        """How many finished tasks ``owner`` has, and their ``kept_bytes`` in total
        (three O(1) reads in one transaction; see Counts in the module docstring)."""
        tag = codec.owner_key(owner)
        with self._reaching():
            pipe: Any = self._redis().pipeline(transaction=True)
            pipe.zcard(self._keys.owner_tasks(tag))
            pipe.scard(self._keys.owner_active(tag))
            pipe.hget(self._keys.owner_kept, tag)
            tasks, active, kept = await pipe.execute()
        return int(tasks) - int(active), int(kept or 0)

    async def count_active(self, owner: str | None) -> int:
        """How many non-terminal tasks ``owner`` has."""
        with self._reaching():
            return int(
                await self._redis().scard(
                    self._keys.owner_active(codec.owner_key(owner))
                )
            )

    async def expired(self, now: float) -> list[str]:
        """IDs of the tasks whose TTL has elapsed at ``now``."""
        with self._reaching():
            page = await self._range(self._keys.expiry, "-inf", repr(now))
            return [task_id for task_id, _ in page]

    async def unfinished(self) -> list[TaskRecord]:
        """Every task that is not terminal, in ``seq`` order."""
        with self._reaching():
            page = await self._range(self._keys.unfinished, "-inf", "+inf")
            records = await self._load([task_id for task_id, _ in page])
            return [stored for stored in records if stored is not None]

    # -- ReplicaStore ----------------------------------------------------------

    async def hold_leases(
        self, task_ids: Sequence[str], holder: str, lease_ms: int
    ) -> list[str]:
        """Take or renew the leases on ``task_ids`` for ``lease_ms`` milliseconds,
        except where another run holds the task; return those tasks (see
        ``ReplicaStore.hold_leases``). One script, so no claim slips in between."""
        if not task_ids:
            return []
        keys: list[str] = []
        for task_id in task_ids:
            keys += [self._keys.lease(task_id), self._job_key(task_id)]
        with self._reaching():
            lost: list[int] = await self._job_script(
                "hold", keys, [holder, str(lease_ms)]
            )
        return [task_ids[int(position) - 1] for position in lost]

    async def leased(self, task_ids: Sequence[str]) -> list[bool]:
        """For each task, whether its lease key still exists."""
        if not task_ids:
            return []
        with self._reaching():
            pipe = self._redis().pipeline(transaction=False)
            for task_id in task_ids:
                pipe.exists(self._keys.lease(task_id))
            found: list[int] = await pipe.execute()
        return [bool(count) for count in found]

    async def publish(self, signal: Signal) -> None:
        """Send ``signal`` (a JSON object) to every subscribed replica."""
        with self._reaching():
            await self._signals.publish(signal)

    async def subscribe(self, handler: SignalHandler) -> None:
        """Call ``handler`` for every signal from now on; returns once subscribed.

        The first call starts the background listener; a Redis that cannot be
        reached raises here.
        """
        await self._signals.subscribe(handler)


if TYPE_CHECKING:
    from .jobs import JobStore

    _JOB_CHECK: type[JobStore] = RedisTaskStore
    """Static check that ``RedisTaskStore`` satisfies the ``JobStore`` protocol."""
    _REPLICA_CHECK: type[ReplicaStore] = RedisTaskStore
    """Static check that ``RedisTaskStore`` satisfies the ``ReplicaStore`` protocol."""
    _PROTOCOL_CHECK: type[TaskStore] = RedisTaskStore
    """Static check that ``RedisTaskStore`` satisfies the ``TaskStore`` protocol."""
