"""A ``TaskStore`` on Redis, for servers that run as several replicas.

Every replica points a :class:`RedisTaskStore` at the same Redis server and sees the
same tasks: a task created through one replica can be polled, updated and cancelled
through any other. The ``redis`` package (redis-py, asyncio API) is an optional
dependency: it is imported when the store opens, so this module imports without it.

Layout (every key starts with ``prefix``, ``"mcp-tasks:"`` by default)::

    {prefix}task:{task_id}         hash: status, seq, body (the record as JSON), and
                                   kept (the body's size, once terminal: usage())
    {prefix}seq                    counter: INCR gives each new task its seq
    {prefix}owner-tasks:{owner}    sorted set: every task of the owner, score seq
    {prefix}owner-active:{owner}   set: the owner's tasks that are not terminal
    {prefix}unfinished             sorted set: every non-terminal task, score seq
    {prefix}expiry                 sorted set: every task with a TTL, score expires_at
    {prefix}owner-of               hash: task ID -> owner tag (to clean the indexes)
    {prefix}lease:{task_id}        string: the replica holding the worker lease (PX)
    {prefix}signals                pub/sub channel: signals between replicas

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
``unfinished`` (``count_active`` still counts it if it was not terminal), and the
next sweep removes what is left of it, so nothing outlives its TTL for good.

Atomicity. ``create``, ``put`` and :meth:`RedisTaskStore.transition` each run as one
Lua script, so concurrent writers on different replicas never interleave inside a
write. Terminal statuses (``completed``, ``failed``, ``cancelled``) never change:
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

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import Generator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit, urlunsplit

from .server_core import INTERNAL_ERROR, JsonRpcError
from .stores import (
    TERMINAL_STATUSES,
    ReplicaStore,
    Signal,
    SignalHandler,
    StoreUnavailable,
    TaskRecord,
    TaskStore,
)

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisTaskStore", "RedisUnavailable"]

_log = logging.getLogger(__name__)


class RedisUnavailable(JsonRpcError, StoreUnavailable):
    """Redis could not be reached (after the retries): the request fails cleanly.

    A JSON-RPC error, so the server answers with it as is (no traceback); the store
    has logged the cause once for the whole outage.
    """

    def __init__(self) -> None:
        super().__init__(
            INTERNAL_ERROR,
            "Task store unavailable: Redis cannot be reached; try again shortly",
        )


_LUA_TERMINAL = (
    "local TERMINAL = {"
    + ", ".join(
        f"[{json.dumps(status)}] = true" for status in sorted(TERMINAL_STATUSES)
    )
    + "}\n"
)
"""A Lua table naming the terminal statuses, shared by the scripts below."""

_CREATE = """
-- KEYS: task hash, seq counter, owner-tasks, owner-active, unfinished, expiry, owner-of
-- ARGV: task id, status, body, owner tag, expires_at ('' = never),
--       key expiry in unix ms ('' = never)
local stored = redis.call('HMGET', KEYS[1], 'seq', 'body')
if stored[1] then
    if stored[2] == ARGV[3] then
        return tonumber(stored[1])  -- the same create, retried after a lost reply
    end
    return 0
end
local seq = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'seq', seq, 'body', ARGV[3])
if TERMINAL[ARGV[2]] then
    redis.call('HSET', KEYS[1], 'kept', string.len(ARGV[3]))
end
redis.call('HSET', KEYS[7], ARGV[1], ARGV[4])
redis.call('ZADD', KEYS[3], seq, ARGV[1])
if not TERMINAL[ARGV[2]] then
    redis.call('SADD', KEYS[4], ARGV[1])
    redis.call('ZADD', KEYS[5], seq, ARGV[1])
end
if ARGV[5] ~= '' then
    redis.call('ZADD', KEYS[6], ARGV[5], ARGV[1])
    redis.call('PEXPIREAT', KEYS[1], ARGV[6])
end
return seq
"""
"""Store a new task; returns its seq, or 0 when another task has that ID."""

_UPDATE = """
-- KEYS: task hash, owner-active, unfinished, expiry
-- ARGV: task id, status, body, expires_at ('' = never),
--       key expiry in unix ms ('' = never), the updated_at the stored record
--       must have ('' = any), then the statuses the task may currently be in
--       (none given: any status that is not terminal)
local stored = redis.call('HMGET', KEYS[1], 'status', 'body')
local current = stored[1]
if not current then
    return 0
end
if current == ARGV[2] and stored[2] == ARGV[3] then
    return 1  -- already stored: the same write, retried after a lost reply
end
if TERMINAL[current] then
    return -1
end
if ARGV[6] ~= '' and cjson.decode(stored[2])['updated_at'] ~= tonumber(ARGV[6]) then
    return -3
end
if #ARGV > 6 then
    local allowed = false
    for i = 7, #ARGV do
        if ARGV[i] == current then
            allowed = true
            break
        end
    end
    if not allowed then
        return -2
    end
end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'body', ARGV[3])
if TERMINAL[ARGV[2]] then
    redis.call('HSET', KEYS[1], 'kept', string.len(ARGV[3]))
    redis.call('SREM', KEYS[2], ARGV[1])
    redis.call('ZREM', KEYS[3], ARGV[1])
else
    redis.call('SADD', KEYS[2], ARGV[1])
    redis.call('ZADD', KEYS[3], redis.call('HGET', KEYS[1], 'seq'), ARGV[1])
end
if ARGV[4] == '' then
    redis.call('ZREM', KEYS[4], ARGV[1])
    redis.call('PERSIST', KEYS[1])
else
    redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1])
    redis.call('PEXPIREAT', KEYS[1], ARGV[5])
end
return 1
"""
"""Replace a live task's state; returns 1 (applied), 0 (no such task),
-1 (already terminal), -2 (current status not among the allowed ones) or -3 (the
stored record changed since the writer read it)."""

_RANGE = """
-- KEYS: a sorted set
-- ARGV: min score, max score, how many members at most (-1 = all)
return redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES', 'LIMIT', 0, ARGV[3])
"""
"""Members of a sorted set by score, as a flat ``member, score, ...`` list."""

_SCRIPTS = {
    "create": _LUA_TERMINAL + _CREATE,
    "update": _LUA_TERMINAL + _UPDATE,
    "range": _RANGE,
}

_UPDATE_OUTCOMES = {
    0: "the task does not exist",
    -1: "the task is already terminal",
    -2: "the task's current status does not allow it",
    -3: "the task changed since it was read",
}

_BODY_FIELDS = (
    "task_id",
    "owner",
    "tool",
    "created_at",
    "updated_at",
    "ttl_ms",
    "poll_interval_ms",
    "status_message",
    "result",
    "error",
    "input_requests",
    "extra",
    "answers",
)
"""The record fields kept in the hash's JSON ``body`` (``status`` and ``seq`` are
separate hash fields so that the scripts can read them)."""


def _text(value: bytes | str) -> str:
    """A Redis reply as text (the client may or may not decode replies)."""
    return value.decode() if isinstance(value, bytes) else value


def _owner_tag(owner: str | None) -> str:
    """The key suffix for ``owner``: ``-`` for no owner, ``=`` + principal otherwise."""
    return "-" if owner is None else "=" + owner


def _body(record: TaskRecord) -> str:
    """The JSON ``body`` field of a task hash."""
    return json.dumps(
        {name: getattr(record, name) for name in _BODY_FIELDS}, separators=(",", ":")
    )


def _record(
    status: bytes | str | None, seq: bytes | str | None, body: bytes | str | None
) -> TaskRecord | None:
    """Rebuild a record from the ``status``, ``seq`` and ``body`` hash fields."""
    if status is None or seq is None or body is None:
        return None
    data: dict[str, Any] = json.loads(body)
    return TaskRecord(
        task_id=data["task_id"],
        owner=data["owner"],
        tool=data["tool"],
        status=_text(status),
        created_at=data["created_at"],
        updated_at=data["updated_at"],
        ttl_ms=data["ttl_ms"],
        poll_interval_ms=data["poll_interval_ms"],
        status_message=data["status_message"],
        result=data["result"],
        error=data["error"],
        input_requests=data["input_requests"],
        extra=data.get("extra") or {},
        answers=data.get("answers") or {},
        seq=int(seq),
    )


class RedisTaskStore:
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
        self._handlers: list[SignalHandler] = []
        self._listener: asyncio.Task[None] | None = None
        self._resyncs: set[asyncio.Task[None]] = set()
        self._down_since: float | None = None

    # -- keys ----------------------------------------------------------------

    def _task_key(self, task_id: str) -> str:
        return f"{self.prefix}task:{task_id}"

    def _owner_tasks_key(self, tag: str) -> str:
        return f"{self.prefix}owner-tasks:{tag}"

    def _owner_active_key(self, tag: str) -> str:
        return f"{self.prefix}owner-active:{tag}"

    @property
    def _seq_key(self) -> str:
        return f"{self.prefix}seq"

    @property
    def _unfinished_key(self) -> str:
        return f"{self.prefix}unfinished"

    @property
    def _expiry_key(self) -> str:
        return f"{self.prefix}expiry"

    @property
    def _owner_of_key(self) -> str:
        return f"{self.prefix}owner-of"

    def _lease_key(self, task_id: str) -> str:
        return f"{self.prefix}lease:{task_id}"

    @property
    def _signal_channel(self) -> str:
        return f"{self.prefix}signals"

    # -- plumbing ------------------------------------------------------------

    @property
    def _where(self) -> str:
        """The Redis URL without credentials, for log messages."""
        parts = urlsplit(self.url)
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit(parts._replace(netloc=host))

    def _note_down(self, cause: BaseException) -> None:
        """Log the start of an outage once (later failures of it only at debug
        level)."""
        if self._down_since is None:
            self._down_since = time.monotonic()
            _log.warning(
                "Redis at %s unreachable (%s): requests fail with 'Task store"
                " unavailable' until it answers again; commands are retried with"
                " backoff and the signal channel reconnects by itself",
                self._where,
                str(cause) or type(cause).__name__,
            )
        else:
            _log.debug("Redis at %s still unreachable (%s)", self._where, cause)

    def _note_up(self) -> None:
        """Log the end of an outage."""
        if self._down_since is not None:
            outage = time.monotonic() - self._down_since
            self._down_since = None
            _log.info("Redis at %s answers again after %.1f s", self._where, outage)

    @contextlib.contextmanager
    def _reaching(self) -> Generator[None, None, None]:
        """Raise :class:`RedisUnavailable` for a failure to reach Redis in the block."""
        from redis.exceptions import ConnectionError, TimeoutError

        try:
            yield
        except (ConnectionError, TimeoutError, OSError) as exc:
            self._note_down(exc)
            raise RedisUnavailable() from None
        self._note_up()

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
        sha = await client.script_load(_SCRIPTS[name])
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
            (_text(member), float(score))
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
            pipe.hmget(self._task_key(task_id), ["status", "seq", "body"])
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
        for name, script in _SCRIPTS.items():
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
                    settings[_text(key)] = _text(value)
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
        listener = self._listener
        if listener is not None:
            self._listener = None
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)
        for resync in list(self._resyncs):
            resync.cancel()
        self._handlers.clear()
        client = self._client
        if client is None:
            return
        if self._owns_client:
            self._client = None
            await client.aclose(close_connection_pool=True)

    async def create(self, record: TaskRecord) -> TaskRecord:
        """Store a new task and return it with ``seq`` assigned.

        Raises ``ValueError`` when a task with the same ID exists.
        """
        with self._reaching():
            tag = _owner_tag(record.owner)
            seq: int = await self._script(
                "create",
                [
                    self._task_key(record.task_id),
                    self._seq_key,
                    self._owner_tasks_key(tag),
                    self._owner_active_key(tag),
                    self._unfinished_key,
                    self._expiry_key,
                    self._owner_of_key,
                ],
                [record.task_id, record.status, _body(record), tag]
                + self._expiry_args(record),
            )
            if seq == 0:
                raise ValueError(f"task {record.task_id!r} already exists")
            return replace(record, seq=seq)

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task with this ID, or None."""
        with self._reaching():
            status, seq, body = await self._redis().hmget(
                self._task_key(task_id), ["status", "seq", "body"]
            )
            return _record(status, seq, body)

    async def _update(
        self,
        record: TaskRecord,
        allowed_from: Sequence[str],
        expected_updated_at: float | None = None,
    ) -> int:
        """Run the update script for ``record``; returns the script's outcome."""
        tag = _owner_tag(record.owner)
        outcome: int = await self._script(
            "update",
            [
                self._task_key(record.task_id),
                self._owner_active_key(tag),
                self._unfinished_key,
                self._expiry_key,
            ],
            [record.task_id, record.status, _body(record)]
            + self._expiry_args(record)
            + ["" if expected_updated_at is None else repr(expected_updated_at)]
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
                    _UPDATE_OUTCOMES.get(outcome, f"outcome {outcome}"),
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
        """Forget these tasks: their hashes and every index entry, in one
        transaction."""
        if task_ids:
            with self._reaching():
                await self._delete(task_ids)

    async def _delete(self, task_ids: list[str]) -> None:
        """``delete`` of a non-empty list."""
        client = self._redis()
        tags: list[bytes | str | None] = await client.hmget(
            self._owner_of_key, task_ids
        )
        pipe = client.pipeline(transaction=True)
        pipe.delete(*[self._task_key(task_id) for task_id in task_ids])
        pipe.zrem(self._unfinished_key, *task_ids)
        pipe.zrem(self._expiry_key, *task_ids)
        pipe.hdel(self._owner_of_key, *task_ids)
        for task_id, tag in zip(task_ids, tags, strict=True):
            if tag is not None:
                pipe.zrem(self._owner_tasks_key(_text(tag)), task_id)
                pipe.srem(self._owner_active_key(_text(tag)), task_id)
        await pipe.execute()

    async def list_tasks(
        self, owner: str | None, after_seq: int, limit: int
    ) -> list[TaskRecord]:
        """Up to ``limit`` tasks of ``owner`` with ``seq > after_seq``, in ``seq``
        order."""
        with self._reaching():
            key = self._owner_tasks_key(_owner_tag(owner))
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
        """How many finished tasks ``owner`` has, and what they keep in bytes (the
        size of each one's stored body, which holds its result or error)."""
        tag = _owner_tag(owner)
        with self._reaching():
            pipe: Any = self._redis().pipeline(transaction=False)
            pipe.zrange(self._owner_tasks_key(tag), 0, -1)
            pipe.smembers(self._owner_active_key(tag))
            indexes: list[Any] = await pipe.execute()
            live = {_text(task_id) for task_id in indexes[1]}
            done = [_text(t) for t in indexes[0] if _text(t) not in live]
            if not done:
                return 0, 0
            pipe = self._redis().pipeline(transaction=False)
            for task_id in done:
                pipe.hget(self._task_key(task_id), "kept")
            sizes: list[bytes | str | None] = await pipe.execute()
        kept = [int(size) for size in sizes if size is not None]  # expired ones: gone
        return len(kept), sum(kept)

    async def count_active(self, owner: str | None) -> int:
        """How many non-terminal tasks ``owner`` has."""
        with self._reaching():
            return int(
                await self._redis().scard(self._owner_active_key(_owner_tag(owner)))
            )

    async def expired(self, now: float) -> list[str]:
        """IDs of the tasks whose TTL has elapsed at ``now``."""
        with self._reaching():
            page = await self._range(self._expiry_key, "-inf", repr(now))
            return [task_id for task_id, _ in page]

    async def unfinished(self) -> list[TaskRecord]:
        """Every task that is not terminal, in ``seq`` order."""
        with self._reaching():
            page = await self._range(self._unfinished_key, "-inf", "+inf")
            records = await self._load([task_id for task_id, _ in page])
            return [stored for stored in records if stored is not None]

    # -- ReplicaStore ----------------------------------------------------------

    async def hold_leases(
        self, task_ids: Sequence[str], holder: str, lease_ms: int
    ) -> None:
        """Take or renew the leases on ``task_ids`` for ``lease_ms`` milliseconds."""
        if not task_ids:
            return
        with self._reaching():
            pipe = self._redis().pipeline(transaction=False)
            for task_id in task_ids:
                pipe.set(self._lease_key(task_id), holder, px=lease_ms)
            await pipe.execute()

    async def leased(self, task_ids: Sequence[str]) -> list[bool]:
        """For each task, whether its lease key still exists."""
        if not task_ids:
            return []
        with self._reaching():
            pipe = self._redis().pipeline(transaction=False)
            for task_id in task_ids:
                pipe.exists(self._lease_key(task_id))
            found: list[int] = await pipe.execute()
        return [bool(count) for count in found]

    async def publish(self, signal: Signal) -> None:
        """Send ``signal`` (a JSON object) to every subscribed replica."""
        with self._reaching():
            client: Any = self._redis()  # redis-py leaves ``publish`` partly untyped
            await client.publish(
                self._signal_channel, json.dumps(signal, separators=(",", ":"))
            )

    async def subscribe(self, handler: SignalHandler) -> None:
        """Call ``handler`` for every signal from now on; returns once subscribed.

        The first call starts the background listener; a Redis that cannot be
        reached raises here.
        """
        self._handlers.append(handler)
        if self._listener is not None:
            return
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._listener = asyncio.create_task(
            self._listen(ready), name="redis-task-store-signals"
        )
        try:
            await ready
        except BaseException:
            self._listener = None
            raise

    async def _listen(self, ready: asyncio.Future[None]) -> None:
        """Receive signals until cancelled, reconnecting with backoff."""
        from redis.exceptions import ConnectionError, TimeoutError

        delay = 0.05
        while True:
            client: Any = self._redis()  # redis-py's PubSub is partly untyped
            pubsub: Any = client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self._signal_channel)
                # redis-py may reconnect and resubscribe inside ``listen`` on its own
                pubsub.connection.register_connect_callback(self._reconnected)
                if not ready.done():
                    ready.set_result(None)
                else:  # reconnected: signals may have been missed
                    self._note_up()
                    await self._hand_out({"kind": "resync"})
                delay = 0.05
                async for message in pubsub.listen():
                    await self._dispatch_signal(cast(object, message))
            except (ConnectionError, TimeoutError, OSError) as exc:
                if not ready.done():
                    ready.set_exception(exc)
                    return
                self._note_down(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def _reconnected(self, connection: object) -> None:
        """Connect callback of the pub/sub connection: tell the handlers to resync."""
        resync = asyncio.get_running_loop().create_task(
            self._hand_out({"kind": "resync"})
        )
        self._resyncs.add(resync)
        resync.add_done_callback(self._resyncs.discard)

    async def _dispatch_signal(self, message: object) -> None:
        """Decode one pub/sub message and hand it to every handler."""
        if not isinstance(message, dict):
            return
        fields = cast(dict[str, Any], message)
        if fields.get("type") != "message":
            return
        try:
            signal: Any = json.loads(_text(fields["data"]))
        except (ValueError, KeyError):
            _log.warning("ignoring a malformed signal")
            return
        if isinstance(signal, dict):
            await self._hand_out(cast(Signal, signal))

    async def _hand_out(self, signal: Signal) -> None:
        """Call every handler with ``signal``."""
        for handler in list(self._handlers):
            try:
                await handler(signal)
            except StoreUnavailable:  # logged once for the outage; resync will follow
                _log.debug("signal handler stopped by a store outage")
            except Exception:  # one failing handler must not stop the listener
                _log.exception("signal handler failed")


if TYPE_CHECKING:
    _REPLICA_CHECK: type[ReplicaStore] = RedisTaskStore
    """Static check that ``RedisTaskStore`` satisfies the ``ReplicaStore`` protocol."""
    _PROTOCOL_CHECK: type[TaskStore] = RedisTaskStore
    """Static check that ``RedisTaskStore`` satisfies the ``TaskStore`` protocol."""
