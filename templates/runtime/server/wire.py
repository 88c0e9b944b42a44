"""Small wire helpers of the server: JSON sizes and numbers, request params, task IDs,
timestamps, ``tools/list`` cursors and ``CallToolResult`` shapes.

Nothing here holds state; every part of the server uses these.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import secrets
from datetime import datetime, timezone
from typing import Any, Union, cast

from pydantic import BaseModel, ValidationError

from ..jsonrpc import INVALID_PARAMS, JsonRpcError, validation_problems
from ..revision import RevisionTables

ToolOutput = Union[str, dict[str, Any]]  # noqa: UP007 - a public alias users subscript
"""What a tool handler returns: plain text, or a complete ``CallToolResult`` object."""


def new_task_id() -> str:
    """A task ID with 128 bits from the operating system's CSPRNG."""
    return secrets.token_hex(16)


@functools.lru_cache(maxsize=4096)
def rfc3339(timestamp: float) -> str:
    """An RFC 3339 UTC timestamp with milliseconds, e.g. ``2025-11-25T10:30:00.000Z``.

    Cached: a task's two times are formatted on every read of it."""
    moment = datetime.fromtimestamp(timestamp, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


_JSON = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
"""Compact JSON without ``NaN`` (one encoder: ``json.dumps`` with options builds one
per call)."""


def json_size(value: Any) -> int:
    """The size in bytes of ``value`` as compact JSON.

    Raises ``ValueError`` for what JSON cannot hold (a non-finite number, a lone
    surrogate is fine: it is escaped) and ``RecursionError`` when nested too deep.
    """
    return len(_JSON.encode(value).encode())


def json_text(value: Any) -> str:
    """``value`` as compact JSON; never ``NaN`` or ``Infinity`` (``ValueError``)."""
    return _JSON.encode(value)


def json_integer(
    value: Any, what: str, *, minimum: int = 0, maximum: int = 2**53 - 1
) -> int:
    """A JSON number that must be a whole number in ``[minimum, maximum]``.

    ``true``/``false`` are not numbers; a float must be finite and integral.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise JsonRpcError(INVALID_PARAMS, f"{what} must be a number")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise JsonRpcError(INVALID_PARAMS, f"{what} must be a finite whole number")
    if not minimum <= value <= maximum:
        raise JsonRpcError(
            INVALID_PARAMS, f"{what} must be between {minimum} and {maximum}"
        )
    return int(value)


def is_text(value: str) -> bool:
    """Whether ``value`` is valid Unicode text (no lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    """A ``CallToolResult`` holding one text block."""
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def tool_result(output: ToolOutput) -> dict[str, Any]:
    """The ``CallToolResult`` for what a handler returned."""
    if isinstance(output, str):
        return text_result(output)
    return dict(output)


def request_params(message: dict[str, Any]) -> dict[str, Any]:
    """The request's ``params`` object (``{}`` when absent)."""
    params = message.get("params")
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise JsonRpcError(INVALID_PARAMS, "params must be an object")
    return cast(dict[str, Any], params)


def task_id_param(params: dict[str, Any]) -> str:
    """``params.taskId``, checked."""
    task_id = params.get("taskId")
    if not isinstance(task_id, str) or not task_id or not is_text(task_id):
        raise JsonRpcError(INVALID_PARAMS, "params.taskId must be a non-empty string")
    return task_id


def not_found() -> JsonRpcError:
    """The error for an unknown, expired or foreign task (never says which)."""
    return JsonRpcError(INVALID_PARAMS, "Failed to retrieve task: Task not found")


def short(error: Exception) -> str:
    """An exception's message on one line, at most 300 characters."""
    text = " ".join(str(error).split())
    return text if len(text) <= 300 else text[:297] + "..."


def through(model: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` as sent: validated by the schema's ``model`` and in its wire form."""
    return cast(dict[str, Any], cast(Any, model.model_validate(values)).to_wire())


def http_headers(sdk_context: Any) -> dict[str, str] | None:
    """The lower-cased HTTP headers of an SDK request context (None without HTTP)."""
    http = getattr(sdk_context, "request", None)
    if http is None:
        return None
    return {str(k).lower(): str(v) for k, v in http.headers.items()}


CURSOR_MAX_CHARS = 1024
"""The longest ``tasks/list`` cursor read (those made here name two task IDs)."""


def encode_cursor(last_id: str, next_id: str) -> str:
    """An opaque cursor of the list role: the last task of a page and the first of the
    next one, both the caller's own, so it tells nothing about other callers' tasks
    (not how many there are: no server-wide position) and any replica can resume it."""
    anchors = json.dumps([last_id, next_id], separators=(",", ":"))
    return base64.urlsafe_b64encode(anchors.encode()).decode().rstrip("=")


def decode_cursor(cursor: Any) -> tuple[str, str]:
    """The two task IDs in a cursor made by ``encode_cursor``; ``-32602`` otherwise."""
    try:
        if not isinstance(cursor, str) or len(cursor) > CURSOR_MAX_CHARS:
            raise ValueError("not a cursor")
        text = base64.b64decode(
            cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True
        )
        anchors: object = json.loads(text)
        if not isinstance(anchors, list) or len(cast("list[object]", anchors)) != 2:
            raise ValueError("not a cursor")
        last, following = cast("list[object]", anchors)
        if not (
            isinstance(last, str)
            and isinstance(following, str)
            and is_text(last)
            and is_text(following)
        ):
            raise ValueError("not a cursor")
        return last, following
    except ValueError:  # not base64 (binascii.Error), not UTF-8, not JSON
        raise JsonRpcError(INVALID_PARAMS, "Invalid cursor") from None


RUNTIME_PARAMS: dict[str, frozenset[str]] = {
    "create": frozenset(
        {"name", "arguments", "task", "inputResponses", "requestState", "_meta"}
    ),
    "get": frozenset({"taskId", "_meta"}),
    "cancel": frozenset({"taskId", "_meta"}),
    "update": frozenset({"taskId", "inputResponses", "_meta"}),
    "result": frozenset({"taskId", "_meta"}),
    "list": frozenset({"cursor", "_meta"}),
}
"""Role -> the params of its request that the runtime reads itself (where the
schema has no params model to tell them)."""


def unmanaged_params(
    tables: RevisionTables, role: str, params: dict[str, Any]
) -> dict[str, Any]:
    """The params of a request of ``role`` that the runtime does not manage (wire
    names), for the server code: what the schema adds, and any other key.

    Where the schema adds params to the request, the whole params are first checked by
    its params model: ``-32602`` names the first param that does not fit (a required
    one missing, say)."""
    model = tables.params_models.get(role)
    added = tables.extra_params.get(role, ())
    if model is None:
        own = RUNTIME_PARAMS.get(role, frozenset({"_meta"}))
    else:
        if added:
            try:
                model.model_validate(params)
            except ValidationError as error:
                where, message = validation_problems(error)[0]
                raise JsonRpcError(
                    INVALID_PARAMS, f"Invalid params.{where}: {message}"
                ) from None
        own = frozenset(
            {"_meta"}
            | {
                info.serialization_alias or name
                for name, info in model.model_fields.items()
                if name not in added
            }
        )
    return {k: v for k, v in params.items() if k not in own}
