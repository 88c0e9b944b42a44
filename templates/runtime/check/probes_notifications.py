"""The checker's probe of the status notifications: each one compared with the task
as a ``tasks/get`` sent when it arrived showed it (``notifications.status``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..jsonrpc import json_object
from .checks import all_runs, parse_time
from .registry import check
from .results import CheckFailed, CheckSkipped, Exchange
from .session import Session

__all__: list[str] = []

_EMPTY: dict[str, Any] = {}


def _status(task: Mapping[str, Any], s: Session) -> object:
    return task.get(s.field(1))


@check(
    "notifications.status", "status notifications carry the task as tasks/get has it"
)
async def _notifications(s: Session) -> str:
    await all_runs(s)
    method = s.tables.roles.get("notify")
    if method is not None and s.tables.stateless:
        await _listen_to_one(s)  # stateless: notifications come only to a subscriber
    await s.settle(s.timeout)
    got = [e for e in s.log if e.incoming and e.method == method and e.via != "other"]
    if not got:
        raise CheckSkipped("the server sent no status notification (they are optional)")
    key = s.tables.meta_keys.get("RELATED_TASK")
    by_task: dict[str, list[Exchange]] = {}
    for exchange in got:
        status = exchange.params.get(s.field(1))
        task_id = exchange.params.get(s.field(0))
        if status not in s.tables.statuses or not isinstance(task_id, str):
            raise CheckFailed("a notification without a task", exchange)
        meta = json_object(exchange.params.get("_meta")) or {}
        if key is not None and key in meta:
            raise CheckFailed(
                "a status notification carries related-task _meta", exchange
            )
        by_task.setdefault(task_id, []).append(exchange)
    for task_id in by_task:
        await _final_notification(s, task_id)
        _judge(s, task_id)
    return (
        f"{len(got)} notification(s) about {len(by_task)} task(s): legal transitions,"
        " as tasks/get has the task, the last one with its final status"
    )


async def _listen_to_one(s: Session) -> None:
    """Follow a new task of the ``completes`` kind through ``subscriptions/listen``
    until it is terminal and its last notification came (or the wait ran out)."""
    key = s.tables.meta_keys.get("SUBSCRIPTION_ID")
    if key is None:
        return
    with contextlib.suppress(CheckSkipped):
        run = await s.create("completes")
        listen_id = "mcptasks-check-listen-" + secrets.token_hex(4)
        params = {"notifications": {"taskIds": [run.task_id]}}
        listen = asyncio.ensure_future(
            s.send("subscriptions/listen", params, request_id=listen_id)
        )
        try:
            task: dict[str, Any] = {}
            while _status(task, s) not in s.tables.terminal:
                await asyncio.sleep(s.pause(task))
                task, _ = await s.get(run)
            if any(
                e.params.get(s.field(0)) == run.task_id
                for e in _subscribed(s, listen_id)
            ):
                await _final_notification(s, run.task_id)
        finally:
            listen.cancel()
            await asyncio.gather(listen, return_exceptions=True)


def _subscribed(s: Session, listen_id: str) -> list[Exchange]:
    """The notifications that came on the subscription ``listen_id``."""
    key = s.tables.meta_keys["SUBSCRIPTION_ID"]
    return [
        e
        for e in s.log
        if e.incoming
        and (json_object(e.params.get("_meta")) or _EMPTY).get(key) == listen_id
    ]


def _observations(
    s: Session, task_id: str
) -> list[tuple[str, dict[str, Any], Exchange]]:
    """Everything the checker saw of a task, in the order of its states: ``create``,
    ``poll`` and ``notification`` (by ``lastUpdatedAt``, then by arrival)."""
    get = s.tables.roles["get"]
    notify = s.tables.roles.get("notify")
    seen: list[tuple[str, dict[str, Any], Exchange]] = []
    for e in s.log:
        if e.via == "other":
            continue
        if e.incoming and e.method == notify:
            task = e.params
            kind = "notification"
        elif not e.incoming and e.method == get and e.result is not None:
            task, kind = e.result, "poll"
        elif not e.incoming and e.method == "tools/call" and e.result is not None:
            task, kind = s.task_of(e.result) or {}, "create"
        else:
            continue
        if task.get(s.field(0)) == task_id:
            seen.append((kind, task, e))
    times = [parse_time(task.get(s.field(4))) for _, task, _ in seen]
    if all(t is not None for t in times):
        order = sorted(range(len(seen)), key=lambda i: (times[i], seen[i][2].seq))
    else:
        order = sorted(range(len(seen)), key=lambda i: seen[i][2].seq)
    return [seen[i] for i in order]


def _final(s: Session, task_id: str) -> object:
    """The terminal status polls saw the task in (None while none did)."""
    for kind, task, _ in _observations(s, task_id):
        if kind == "poll" and _status(task, s) in s.tables.terminal:
            return _status(task, s)
    return None


async def _final_notification(s: Session, task_id: str) -> None:
    """Wait a little for the notification of the task's final status (it may come just
    after the poll that saw it)."""

    def arrived() -> bool:
        final = _final(s, task_id)
        notes = [t for k, t, _ in _observations(s, task_id) if k == "notification"]
        return final is None or (bool(notes) and _status(notes[-1], s) == final)

    await s.wait_until(arrived, 2.0)


def _judge(s: Session, task_id: str) -> None:
    """Each notification follows the status seen before it by a legal transition,
    agrees with the ``tasks/get`` sent as it arrived, and the last one carries the final
    status the polls saw (unless the task ended by the checker's own ``tasks/cancel``,
    whose answer told the final status)."""
    previous: tuple[str, dict[str, Any], Exchange] | None = None
    last: tuple[dict[str, Any], Exchange] | None = None
    for kind, task, exchange in _observations(s, task_id):
        status = _status(task, s)
        if kind == "notification":
            last = task, exchange
            before = _status(previous[1], s) if previous is not None else None
            if before is not None and before != status:
                allowed = s.tables.transitions.get(str(before), frozenset())
                if before in s.tables.terminal or status not in allowed:
                    raise CheckFailed(
                        f"a notification says {status} after the"
                        f" {previous and previous[0]} saw {before}: not a legal"
                        " transition",
                        exchange,
                    )
        previous = kind, task, exchange
    for notification, get in s.confirmations:
        if notification.params.get(s.field(0)) == task_id and get.result is not None:
            _agree(s, notification, get)
    final = _final(s, task_id)
    if final == s.tables.cancelled and _cancelled_by_request(s, task_id):
        return  # the answer to the checker's tasks/cancel told it (A.10: some changes)
    if last is not None and final is not None and _status(last[0], s) != final:
        raise CheckFailed(
            f"the last notification about the task says {_status(last[0], s)};"
            f" tasks/get says it ended {final}",
            last[1],
        )


def _cancelled_by_request(s: Session, task_id: str) -> bool:
    """Whether the checker's own ``tasks/cancel`` of the task was accepted."""
    method = s.tables.roles.get("cancel")
    return any(
        e.method == method
        and e.result is not None
        and e.via != "other"
        and e.params.get(s.field(0)) == task_id
        for e in s.log
    )


def _cancelled_after_seen(s: Session, said: dict[str, Any], get: Exchange) -> bool:
    """Whether the checker sent its own ``tasks/cancel`` of the task before ``get`` was
    answered, after a ``tasks/get`` of its had seen the task in the terminal status
    the notification ``said`` (``terminal.final`` cancels finished tasks). A server
    that changes the status then breaks ``terminal.final``; a notification whose
    ``tasks/get`` sees that change (sent before the cancel or after, answered after
    it) is not wrong for it."""
    task_id, status = said.get(s.field(0)), _status(said, s)
    get_method, cancel = s.tables.roles.get("get"), s.tables.roles.get("cancel")
    mine = [
        e
        for e in s.log
        if not e.incoming and e.via != "other" and e.params.get(s.field(0)) == task_id
    ]
    seen = [
        e.seq
        for e in mine
        if e.method == get_method
        and e.result is not None
        and _status(e.result, s) == status
    ]
    return any(
        e.method == cancel and e.sent < get.seq and any(t < e.sent for t in seen)
        for e in mine
    )


def _agree(s: Session, notification: Exchange, get: Exchange) -> None:
    """A notification and the ``tasks/get`` sent as it arrived: where the task has not
    changed since (same status, same ``lastUpdatedAt``), every field the notification
    carries is the same; where it changed, it changed forward (not to an older
    ``lastUpdatedAt``, not away from a terminal status)."""
    said, now = notification.params, get.result or {}
    updated = s.field(4)
    times: list[datetime | None] = [
        parse_time(said.get(updated)),
        parse_time(now.get(updated)),
    ]
    if _status(said, s) == _status(now, s) and said.get(updated) == now.get(updated):
        for name, value in said.items():
            if name not in ("_meta", s.field(6)) and now.get(name) != value:
                raise CheckFailed(
                    f"a notification has {name}={json.dumps(value)[:80]}; tasks/get"
                    f" right after, same status and {updated}, has"
                    f" {json.dumps(now.get(name))[:80]}",
                    notification,
                )
        return
    if times[0] is not None and times[1] is not None and times[1] < times[0]:
        raise CheckFailed(
            f"a notification says {_status(said, s)} ({updated} {said.get(updated)});"
            f" tasks/get right after says {_status(now, s)} ({now.get(updated)})",
            notification,
        )
    if _status(said, s) in s.tables.terminal and _status(now, s) != _status(said, s):
        if _cancelled_after_seen(s, said, get):
            return  # a terminal status changed by a tasks/cancel: terminal.final's
        raise CheckFailed(
            f"a notification says {_status(said, s)}; tasks/get right after says"
            f" {_status(now, s)}",
            notification,
        )
