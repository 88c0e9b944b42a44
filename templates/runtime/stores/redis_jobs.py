"""The ``JobStore`` part of ``RedisTaskStore`` (see ``stores.jobs``): each job is one
hash next to its task, and every decision on it (claim, requeue) is one Lua script,
so workers and replicas racing on a job never interleave.

Layout (``prefix`` as in ``stores.redis``)::

    {prefix}job:{task_id}   hash: spec (JSON), state (queued | running | waiting
                            | abandoned),
                            attempt, queued_at (unix ms), resubmits, answers
                            (JSON); it expires with the task's hash
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from .codec import text
from .jobs import Claim, ClaimOutcome, Job
from .redis_scripts import LUA_TERMINAL

if TYPE_CHECKING:
    import contextlib

    from redis.asyncio import Redis

    from .redis import RedisKeys

__all__ = ["RedisJobs"]

_CLAIM = """
-- KEYS: task hash, job hash, lease
-- ARGV: holder, lease ms
local status = redis.call('HGET', KEYS[1], 'status')
local state = redis.call('HGET', KEYS[2], 'state')
if not status or not state then
    return {'gone'}
end
if TERMINAL[status] then
    return {'ended'}
end
if state == 'waiting' then
    return {'waiting'}
end
if state ~= 'queued' then
    if redis.call('EXISTS', KEYS[3]) == 1 then
        return {'duplicate'}
    end
    return {'lost'}
end
-- queued: a lease left on it is stale (renewed just as its last run ended)
local attempt = redis.call('HINCRBY', KEYS[2], 'attempt', 1)
redis.call('HSET', KEYS[2], 'state', 'running')
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
return {'claimed', attempt}
"""
"""Take a live, queued job with a lease (see ``JobStore.claim_job``)."""

_REQUEUE = """
-- KEYS: job hash, lease
-- ARGV: expected attempt, now (unix ms), '1' to queue again a queued job
if redis.call('EXISTS', KEYS[2]) == 1 then
    return 0
end
local stored = redis.call('HMGET', KEYS[1], 'state', 'attempt')
if not stored[1] or tonumber(stored[2]) ~= tonumber(ARGV[1]) then
    return 0
end
if stored[1] == 'running' then
    redis.call('HSET', KEYS[1], 'state', 'queued', 'queued_at', ARGV[2])
    return 1
end
if ARGV[3] == '1' then
    redis.call('HSET', KEYS[1], 'queued_at', ARGV[2])
    redis.call('HINCRBY', KEYS[1], 'resubmits', 1)
    return 1
end
return 0
"""
"""Queue a job again at the expected attempt (see ``JobStore.requeue_job``)."""

_ABANDON = """
-- KEYS: job hash, lease
-- ARGV: expected attempt
-- Give up a queued job nobody took (its task is failed next), unless a worker took
-- it since it was read: a claim sets state and lease in one step.
if redis.call('EXISTS', KEYS[2]) == 1 then
    return 0
end
local stored = redis.call('HMGET', KEYS[1], 'state', 'attempt')
if stored[1] == 'abandoned' then
    return 1
end
if stored[1] ~= 'queued' or tonumber(stored[2]) ~= tonumber(ARGV[1]) then
    return 0
end
redis.call('HSET', KEYS[1], 'state', 'abandoned')
return 1
"""
"""Give up a queued job no worker took (see ``JobStore.abandon_job``)."""

_PARK = """
-- KEYS: job hash, lease
-- ARGV: the attempt of the run that ends, now (unix ms)
local stored = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'resume')
if stored[1] ~= 'running' or tonumber(stored[2]) ~= tonumber(ARGV[1]) then
    return 0
end
redis.call('DEL', KEYS[2])
if stored[3] then  -- answered before the run ended: queued at once
    redis.call('HDEL', KEYS[1], 'resume')
    redis.call('HSET', KEYS[1], 'state', 'queued', 'queued_at', ARGV[2])
    return 2
end
redis.call('HSET', KEYS[1], 'state', 'waiting')
return 1
"""
"""End a run that asked for input (see ``JobStore.park_job``)."""

_RESUME = """
-- KEYS: job hash
-- ARGV: every answer (a JSON object: the stored ones and the new), now (unix ms),
--       the attempt the answers were read at
local stored = redis.call('HMGET', KEYS[1], 'state', 'attempt')
if not stored[1] then
    return 0
end
if tonumber(stored[2]) ~= tonumber(ARGV[3]) then
    return -1  -- a run began or ended since the answers were read: read again
end
if stored[1] == 'running' then  -- its run has yet to end (park_job queues it)
    redis.call('HSET', KEYS[1], 'answers', ARGV[1], 'resume', '1')
    return 2
end
if stored[1] == 'queued' then  -- queued already (its lost run's lease lapsed)
    redis.call('HSET', KEYS[1], 'answers', ARGV[1])
    return 3
end
if stored[1] ~= 'waiting' then
    return 0
end
redis.call('HSET', KEYS[1], 'state', 'queued', 'queued_at', ARGV[2],
    'answers', ARGV[1])
return 1
"""
"""Queue a waiting job again with its answers (see ``JobStore.resume_job``)."""

_HOLD = """
-- KEYS: per task, its lease and its job hash
-- ARGV: holder, lease ms
-- A lease held by another holder, or lapsed on a job that is no longer running (the
-- lease check queued it again, or it ended), belongs to another run: those tasks'
-- positions (1-based) are returned and their leases left alone. Every other lease is
-- taken or renewed.
local lost = {}
for i = 1, #KEYS, 2 do
    local lease = redis.call('GET', KEYS[i])
    local state = redis.call('HGET', KEYS[i + 1], 'state')
    if (lease and lease ~= ARGV[1]) or (not lease and state and state ~= 'running') then
        lost[#lost + 1] = (i + 1) / 2
    else
        redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
    end
end
return lost
"""
"""Take or renew leases, except those of tasks another run holds (see
``ReplicaStore.hold_leases``)."""

JOB_SCRIPTS = {
    "claim": LUA_TERMINAL + _CLAIM,
    "hold": _HOLD,
    "requeue": _REQUEUE,
    "abandon": _ABANDON,
    "park": _PARK,
    "resume": _RESUME,
}
"""The job scripts by name (loaded on first use, run by SHA)."""

_FIELDS = ["spec", "state", "attempt", "queued_at", "resubmits", "answers"]


def _job(task_id: str, row: Sequence[bytes | str | None], leased: int) -> Job | None:
    """A job from its hash fields (``_FIELDS``) and whether its lease key exists,
    or None when it has none."""
    spec, state, attempt, queued_at, resubmits, answers = row
    if spec is None or state is None:
        return None
    found: Any = json.loads(text(answers)) if answers else {}
    return Job(
        task_id=task_id,
        spec=cast(dict[str, Any], json.loads(text(spec))),
        state=text(state),
        attempt=int(attempt or 0),
        queued_at=int(queued_at or 0) / 1000,
        resubmits=int(resubmits or 0),
        answers=cast(dict[str, Any], found) if isinstance(found, dict) else {},
        leased=bool(leased),
    )


class RedisJobs:
    """The ``JobStore`` methods of ``RedisTaskStore`` (a mixin: it uses the store's
    client, keys and outage handling)."""

    prefix: str
    expiry_grace_s: float
    _keys: RedisKeys
    _redis: Callable[[], Redis]
    _reaching: Callable[[], contextlib.AbstractContextManager[None]]

    def _job_key(self, task_id: str) -> str:
        """The hash of a task's job."""
        return f"{self.prefix}job:{task_id}"

    async def _job_script(
        self, name: str, keys: Sequence[str], args: Sequence[str]
    ) -> Any:
        """Run one of ``JOB_SCRIPTS`` by SHA, loading it when Redis does not know
        it."""
        from redis.exceptions import NoScriptError

        client = self._redis()
        shas = self.__dict__.setdefault("_job_shas", {})
        sha = shas.get(name)
        if sha is not None:
            try:
                return await client.evalsha(sha, len(keys), *keys, *args)
            except NoScriptError:  # Redis restarted or its script cache was flushed
                pass
        sha = shas[name] = await client.script_load(JOB_SCRIPTS[name])
        return await client.evalsha(sha, len(keys), *keys, *args)

    async def put_job(
        self, task_id: str, spec: dict[str, Any], expires_at: float | None
    ) -> None:
        """Store a queued job for ``task_id`` (see ``JobStore.put_job``), releasing
        the lease the creating replica took on the task (a queued task holds none)."""
        body = json.dumps(spec, separators=(",", ":"), allow_nan=False)
        key = self._job_key(task_id)
        with self._reaching():
            pipe: Any = self._redis().pipeline(transaction=True)
            pipe.delete(key, self._keys.lease(task_id))
            pipe.hset(
                key,
                mapping={
                    "spec": body,
                    "state": "queued",
                    "attempt": 0,
                    "queued_at": math.floor(time.time() * 1000),
                    "resubmits": 0,
                },
            )
            if expires_at is not None:
                pipe.pexpireat(
                    key, math.ceil((expires_at + self.expiry_grace_s) * 1000)
                )
            await pipe.execute()

    async def get_job(self, task_id: str) -> Job | None:
        """The job of ``task_id`` with its lease, or None (see ``get_jobs``)."""
        return (await self.get_jobs([task_id]))[0]

    async def get_jobs(self, task_ids: Sequence[str]) -> list[Job | None]:
        """The jobs of ``task_ids`` in one round trip (None where there is none),
        each with whether its task's lease exists, all read in one transaction
        (MULTI: a claim, which sets state and lease together, is seen whole or not
        at all)."""
        if not task_ids:
            return []
        with self._reaching():
            pipe = self._redis().pipeline(transaction=True)
            for task_id in task_ids:
                pipe.hmget(self._job_key(task_id), _FIELDS)
                pipe.exists(self._keys.lease(task_id))
            replies: list[Any] = await pipe.execute()
        return [
            _job(task_id, replies[2 * i], replies[2 * i + 1])
            for i, task_id in enumerate(task_ids)
        ]

    async def claim_job(self, task_id: str, holder: str, lease_ms: int) -> Claim:
        """Take the job of a live, queued task (see ``JobStore.claim_job``)."""
        with self._reaching():
            reply: list[Any] = await self._job_script(
                "claim",
                [
                    self._keys.task(task_id),
                    self._job_key(task_id),
                    self._keys.lease(task_id),
                ],
                [holder, str(lease_ms)],
            )
        outcome = cast(ClaimOutcome, text(reply[0]))
        if outcome != "claimed":
            return Claim(outcome)
        job = await self.get_job(task_id)
        if job is None:  # deleted between the two calls (the task expired)
            return Claim("gone")
        return Claim("claimed", job)

    async def requeue_job(
        self, task_id: str, attempt: int, *, resubmit: bool = False
    ) -> bool:
        """Queue a job again at ``attempt`` (see ``JobStore.requeue_job``)."""
        with self._reaching():
            done = await self._job_script(
                "requeue",
                [self._job_key(task_id), self._keys.lease(task_id)],
                [
                    str(attempt),
                    str(math.floor(time.time() * 1000)),
                    "1" if resubmit else "",
                ],
            )
        return bool(done)

    async def abandon_job(self, task_id: str, attempt: int) -> bool:
        """Give up a queued job no worker took (see ``JobStore.abandon_job``)."""
        with self._reaching():
            done = await self._job_script(
                "abandon",
                [self._job_key(task_id), self._keys.lease(task_id)],
                [str(attempt)],
            )
        return bool(done)

    async def park_job(self, task_id: str, attempt: int) -> bool:
        """End a run that asked for input (see ``JobStore.park_job``)."""
        with self._reaching():
            done = await self._job_script(
                "park",
                [self._job_key(task_id), self._keys.lease(task_id)],
                [str(attempt), str(math.floor(time.time() * 1000))],
            )
        return int(done) == 2

    async def resume_job(self, task_id: str, answers: dict[str, Any]) -> bool:
        """Queue a waiting job again with ``answers`` (see
        ``JobStore.resume_job``)."""
        while True:  # again while runs begin or end between the read and the script
            job = await self.get_job(task_id)
            if job is None or job.state not in ("waiting", "running", "queued"):
                return False
            every = {**job.answers, **answers}
            body = json.dumps(every, separators=(",", ":"), allow_nan=False)
            with self._reaching():
                done = await self._job_script(
                    "resume",
                    [self._job_key(task_id)],
                    [body, str(math.floor(time.time() * 1000)), str(job.attempt)],
                )
            if int(done) != -1:
                return int(done) == 1

    async def drop_job(self, task_id: str) -> None:
        """Forget the job of a task that ended."""
        with self._reaching():
            await self._redis().delete(self._job_key(task_id))
