"""The one record codec of the stores: a ``TaskRecord`` as JSON text and back.

Every store that keeps records outside the process (SQLite, Redis) keeps the fields
it never queries in one JSON ``body``; the fields it queries (``status``, ``seq``,
and in SQLite the ``task_id`` and ``owner``) live beside it, in columns or hash
fields, and come back as arguments of ``decode``. The body's bytes must not change
from one release to the next: files and Redis databases written by an earlier one
are read by the next (and a create retried after a lost reply is recognised by its
body, see ``stores.redis``).

It also holds what the stores measure the same way: the bytes a finished task keeps
(``kept_bytes``) and the key of an owner in the per-owner counts (``owner_key``).
"""

from __future__ import annotations

import json
from typing import Any

from .base import TaskRecord

__all__ = [
    "BODY_FIELDS",
    "IDENTITY_FIELDS",
    "decode",
    "encode",
    "kept_bytes",
    "owner_key",
    "text",
]

IDENTITY_FIELDS = ("task_id", "owner")
"""The fields naming a task and its owner: in the body unless the store keeps them
beside it (SQLite has columns for them)."""

BODY_FIELDS = (
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
"""The record fields that are never queried, always in the body (``status`` and
``seq`` never are: every store keeps them beside it)."""

_WITH_IDENTITY = IDENTITY_FIELDS + BODY_FIELDS


def encode(record: TaskRecord, *, identity: bool = False) -> str:
    """The JSON body of ``record``: ``BODY_FIELDS``, after ``IDENTITY_FIELDS`` when
    ``identity`` (compact, in this order, so that equal records give equal text)."""
    names = _WITH_IDENTITY if identity else BODY_FIELDS
    return json.dumps(
        {name: getattr(record, name) for name in names}, separators=(",", ":")
    )


def decode(
    body: str | bytes,
    *,
    status: str,
    seq: int,
    identity: tuple[str, str | None] | None = None,
) -> TaskRecord:
    """Rebuild a record from its ``body`` and the fields kept beside it.

    ``identity`` is ``(task_id, owner)`` when the store keeps them beside the body;
    None reads them from the body (``encode(..., identity=True)``).
    """
    data: dict[str, Any] = json.loads(body)
    task_id, owner = (data["task_id"], data["owner"]) if identity is None else identity
    return TaskRecord(
        task_id=task_id,
        owner=owner,
        tool=data["tool"],
        status=status,
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
        seq=seq,
    )


def kept_bytes(record: TaskRecord) -> int:
    """What a finished task keeps until its TTL: the JSON size of its result and error
    (0 while it is unfinished)."""
    if not record.is_terminal:
        return 0
    return len(
        json.dumps([record.result, record.error], separators=(",", ":")).encode()
    )


def owner_key(owner: str | None) -> str:
    """The key of ``owner`` in the per-owner counts and indexes: ``-`` for no owner,
    ``=`` followed by the principal otherwise, so that no principal can collide with
    "no owner" (nor with a key of the store's own, such as SQLite's ``*``)."""
    return "-" if owner is None else "=" + owner


def text(value: bytes | str) -> str:
    """A stored value as text (a Redis client may or may not decode replies)."""
    return value.decode() if isinstance(value, bytes) else value
