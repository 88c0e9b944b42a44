"""Task snapshots and answers between their wire form and the revision's models: how
the client reads a task (by its status's class), a field by its wire name, a timestamp,
and whether one snapshot is older than another."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar, get_args

from pydantic import BaseModel

from ..protocol import TaskSnapshot
from ..revision import RevisionTables
from .errors import InvalidResponse

__all__ = [
    "answer_to_wire",
    "decode_as",
    "decode_state",
    "int_field",
    "older",
    "parse_time",
    "status_name",
    "to_wire",
    "wire_value",
]

M = TypeVar("M", bound=BaseModel)
"""A model class the client decodes a task shape as."""


def status_name(status: object) -> str:
    """Return a task status as its wire string (``"working"``, ``"completed"``, ...)."""
    return str(getattr(status, "value", status))


def answer_to_wire(value: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
    """A handler's answer, or a tool result, as a JSON object (a model's wire form)."""
    if isinstance(value, BaseModel):
        return to_wire(value)
    return dict(value)


def to_wire(model: BaseModel) -> dict[str, Any]:
    """A generated model's JSON-ready form (its ``to_wire()``)."""
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def decode_state(raw: Mapping[str, Any], tables: RevisionTables) -> BaseModel:
    """Decode a task state by its status (the revision's ``TASK_BY_STATUS``).

    An unknown status or a malformed task is an :class:`InvalidResponse`; fields the
    runtime does not know stay on the model.
    """
    status = raw.get(tables.task_fields["status"])
    kind = tables.task_by_status.get(status) if isinstance(status, str) else None
    if kind is None:
        raise InvalidResponse(f"unknown task status {status!r}")
    return decode_as(kind, raw, tables)


def decode_as(kind: type[M], raw: Mapping[str, Any], tables: RevisionTables) -> M:
    """Decode a task shape as ``kind``; malformed is an :class:`InvalidResponse`.

    A task field that the schema requires but allows to be null is read as null when a
    server leaves it out (``mcp`` 1.30 for Python omits a null ``ttl``).
    """
    data = dict(raw)
    for name, info in kind.model_fields.items():
        wire = info.serialization_alias or name
        nullable = type(None) in get_args(info.annotation)
        if wire in tables.task_fields.values() and nullable and info.is_required():
            data.setdefault(wire, None)
    try:
        return kind.model_validate(data)
    except ValueError as error:
        raise InvalidResponse(f"malformed task: {error}") from None


def wire_value(model: BaseModel, wire: str) -> object:
    """The value of ``model``'s declared field whose wire name is ``wire`` (``None``
    when its class has no such field: an unknown field kept on the model does not
    count)."""
    for name, info in type(model).model_fields.items():
        if (info.serialization_alias or name) == wire:
            return getattr(model, name)
    return None


def int_field(task: TaskSnapshot, name: str) -> int | None:
    """An integer task field by attribute name (None when absent or not an integer)."""
    value = getattr(task, name, None)
    return value if isinstance(value, int) else None


def parse_time(value: str) -> float | None:
    """An ISO 8601 timestamp as Unix time, or ``None`` when it does not parse."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.timestamp() if parsed.tzinfo is not None else None


def older(task: TaskSnapshot, than: TaskSnapshot, tables: RevisionTables) -> bool:
    """Whether snapshot ``task`` is older than ``than`` (of the same task): ``than`` is
    terminal and ``task`` is not, or ``task`` was last updated earlier."""
    if status_name(than.status) in tables.terminal:
        return status_name(task.status) not in tables.terminal
    updated, latest = parse_time(task.last_updated_at), parse_time(than.last_updated_at)
    return updated is not None and latest is not None and updated < latest
