"""The Lua scripts of ``RedisTaskStore``: each write of a task is one script, so
concurrent writers on different replicas never interleave inside a write (see
``stores.redis``)."""

from __future__ import annotations

import json

from ..protocol import TERMINAL_STATUSES

__all__ = ["LUA_TERMINAL", "SCRIPTS", "UPDATE_OUTCOMES"]

LUA_TERMINAL = (
    "local TERMINAL = {"
    + ", ".join(
        f"[{json.dumps(status)}] = true" for status in sorted(TERMINAL_STATUSES)
    )
    + "}\n"
)
"""A Lua table naming the terminal statuses, shared by the scripts below and the job
scripts (``redis_jobs``)."""

_CREATE = """
-- KEYS: task hash, seq counter, owner-tasks, owner-active, unfinished, expiry,
--       owner-of, kept, owner-kept
-- ARGV: task id, status, body, owner tag, expires_at ('' = never),
--       key expiry in unix ms ('' = never), kept bytes (when terminal), then the
--       limits ('' = none): max_active_tasks, max_finished_tasks, max_stored_bytes,
--       max_tasks
local stored = redis.call('HMGET', KEYS[1], 'seq', 'body')
if stored[1] then
    if stored[2] == ARGV[3] then
        return {tonumber(stored[1])}  -- the same create, retried after a lost reply
    end
    return {0}
end
local active = redis.call('SCARD', KEYS[4])
local function refuse(limit, maximum, current)
    if maximum ~= '' and current >= tonumber(maximum) then
        return {-1, limit, current, tonumber(maximum)}
    end
end
local refused = refuse('max_active_tasks', ARGV[8], active)
    or refuse('max_finished_tasks', ARGV[9], redis.call('ZCARD', KEYS[3]))
    or (ARGV[10] ~= '' and refuse('max_stored_bytes', ARGV[10],
        tonumber(redis.call('HGET', KEYS[9], ARGV[4]) or '0')))
    or (ARGV[11] ~= '' and refuse('max_tasks', ARGV[11], redis.call('HLEN', KEYS[7])))
if refused then
    return refused
end
local seq = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'seq', seq, 'body', ARGV[3])
if TERMINAL[ARGV[2]] and tonumber(ARGV[7]) > 0 then
    redis.call('HSET', KEYS[8], ARGV[1], ARGV[7])
    redis.call('HINCRBY', KEYS[9], ARGV[4], ARGV[7])
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
return {seq}
"""
"""Store a new task; returns ``{seq}``, ``{0}`` when another task has that ID, or
``{-1, limit, current, maximum}`` when a limit refuses it (the finished tasks checked
against ``max_finished_tasks`` include the unfinished ones: ``ZCARD`` of every task
of the owner)."""

_UPDATE = """
-- KEYS: task hash, owner-active, unfinished, expiry, kept, owner-kept
-- ARGV: task id, status, body, expires_at ('' = never),
--       key expiry in unix ms ('' = never), the updated_at the stored record
--       must have ('' = any), owner tag, kept bytes (when terminal), then the
--       statuses the task may currently be in (none given: any status that is not
--       terminal)
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
if #ARGV > 8 then
    local allowed = false
    for i = 9, #ARGV do
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
    if tonumber(ARGV[8]) > 0 then
        redis.call('HSET', KEYS[5], ARGV[1], ARGV[8])
        redis.call('HINCRBY', KEYS[6], ARGV[7], ARGV[8])
    end
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

_DELETE = """
-- KEYS: owner-of, unfinished, expiry, kept, owner-kept, then for each task: its
--       hash, its owner's owner-tasks and owner-active
-- ARGV: for each task: its id and the owner tag owner-of held for it ('' = none)
local deleted = 0
for i = 1, #ARGV, 2 do
    local task_id, tag = ARGV[i], ARGV[i + 1]
    local base = 5 + (i - 1) / 2 * 3
    redis.call('DEL', KEYS[base + 1])
    redis.call('ZREM', KEYS[2], task_id)
    redis.call('ZREM', KEYS[3], task_id)
    if tag ~= '' and redis.call('HGET', KEYS[1], task_id) == tag then
        redis.call('HDEL', KEYS[1], task_id)
        redis.call('ZREM', KEYS[base + 2], task_id)
        redis.call('SREM', KEYS[base + 3], task_id)
        local kept = redis.call('HGET', KEYS[4], task_id)
        if kept then
            redis.call('HDEL', KEYS[4], task_id)
            if redis.call('HINCRBY', KEYS[5], tag, -tonumber(kept)) <= 0 then
                redis.call('HDEL', KEYS[5], tag)
            end
        end
        deleted = deleted + 1
    end
end
return deleted
"""
"""Forget tasks with every index entry and count; returns how many were indexed (a
task deleted twice, by two sweeping replicas say, is taken off the counts once)."""

_RANGE = """
-- KEYS: a sorted set
-- ARGV: min score, max score, how many members at most (-1 = all)
return redis.call(
    'ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES', 'LIMIT', 0, ARGV[3])
"""
"""Members of a sorted set by score, as a flat ``member, score, ...`` list."""

SCRIPTS = {
    "create": LUA_TERMINAL + _CREATE,
    "update": LUA_TERMINAL + _UPDATE,
    "delete": _DELETE,
    "range": _RANGE,
}
"""Every script by name (loaded when the store opens, run by SHA)."""

UPDATE_OUTCOMES = {
    0: "the task does not exist",
    -1: "the task is already terminal",
    -2: "the task's current status does not allow it",
    -3: "the task changed since it was read",
}
"""What each outcome of the update script other than 1 (applied) means."""
