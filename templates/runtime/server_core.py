"""Revision-neutral server runtime: the JSON-RPC dispatcher, tools, task store, limits,
workers and the status state machine.

A server author registers tools and writes only their work::

    server = TasksServer("example", store=SQLiteTaskStore("tasks.db"))

    @server.tool(task_support="optional")
    async def slow(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await ctx.report("halfway")
        answer = await ctx.elicit("Go on?", {"type": "object", "properties": {}})
        return f"done ({answer['action']})"

``TasksServer.handle`` answers one parsed JSON-RPC message (transport-agnostic);
``asgi.create_app(server)`` serves it over streamable HTTP. The revision adapter
(``server_2025`` for MCP 2025-11-25, ``server_ext`` for the Tasks extension) overrides
the hooks of ``TaskServerCore`` where its revision differs outside the tables.
Statuses, transitions, method roles and task models come from the generated
``protocol`` module, so a status the schema adds (and the configuration classifies), a
task field, a removed method or an added method with a known role (``list``,
``update``, ``result``, ...) is handled here without code changes: each role's
mechanism is served wherever the schema has the role. Every task is bound to the
principal from the ``authenticate`` hook; other principals get "not found".
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import importlib
import json
import logging
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from types import ModuleType
from typing import Any, ClassVar, Literal, TypeVar, Union, cast

from pydantic import BaseModel

from .jsonrpc import INTERNAL_ERROR as INTERNAL_ERROR
from .jsonrpc import INVALID_PARAMS as INVALID_PARAMS
from .jsonrpc import INVALID_REQUEST as INVALID_REQUEST
from .jsonrpc import LIMIT_EXCEEDED as LIMIT_EXCEEDED
from .jsonrpc import METHOD_NOT_FOUND as METHOD_NOT_FOUND
from .jsonrpc import PARSE_ERROR as PARSE_ERROR
from .jsonrpc import JsonRpcError as JsonRpcError
from .jsonrpc import envelope_error as envelope_error
from .jsonrpc import valid_id as valid_id
from .protocol import StatusName, TaskFields, TaskState
from .revision import INPUT_CAPABILITIES as INPUT_CAPABILITIES
from .revision import INPUT_RESULTS as INPUT_RESULTS
from .revision import RevisionTables
from .stores import (
    BatchTransitionStore,
    LimitExceeded,
    Quota,
    ReplicaStore,
    Signal,
    SQLiteTaskStore,
    StoreUnavailable,
    TaskRecord,
    TaskStore,
    TransitionStore,
    kept_bytes,
)

__all__: list[str] = [
    "AuditEvent",
    "AuditHook",
    "Authenticate",
    "JsonRpcError",
    "Limits",
    "RateLimiter",
    "RequestInfo",
    "Tool",
    "ToolContext",
    "ToolError",
]
"""The public names every revision's ``server`` module re-exports."""

_log = logging.getLogger(__name__)

Emit = Callable[[dict[str, Any]], Awaitable[None]]
"""Sends one JSON-RPC message on the current request's response stream."""

TaskSupport = Literal["forbidden", "optional", "required"]
"""Whether a tool never, sometimes or always runs as a task."""

RoutingHeaders = Union[bool, Literal["core"]]  # noqa: UP007 - evaluated on Python 3.10
"""Which missing HTTP routing headers a server refuses (``require_routing_headers``):
``"core"``, ``True`` (also ``Mcp-Name`` on the Tasks requests) or ``False`` (none)."""

ToolOutput = Union[str, dict[str, Any]]  # noqa: UP007 - a public alias users subscript
"""What a tool handler returns: plain text, or a complete ``CallToolResult`` object."""

ToolHandler = Callable[["ToolContext", dict[str, Any]], Awaitable[ToolOutput]]
"""``async def handler(ctx, arguments) -> ToolOutput``: the work of one tool."""

Preflight = Callable[
    ["ToolContext", dict[str, Any]], Awaitable[dict[str, dict[str, Any]] | None]
]
"""Runs on ``tools/call`` before any task exists; returns MRTR ``inputRequests`` or
None.

Its answers arrive in ``ctx.input_responses`` when the client calls the tool again.
"""


class ToolError(Exception):
    """Raised by a tool handler for an error the model should see (``isError:
    true``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Resource limits and timing hints, all documented to clients through errors.

    - ``max_ttl_ms`` caps the lifetime of a task; ``default_ttl_ms`` is used when the
      client asks for none (None means unlimited). A task whose worker still runs
      when its TTL is about to run out is failed ("The task's TTL ran out ...") and
      its worker stopped, whatever the store: ``poll_interval_ms`` (at least 1 s, at
      most a third of the TTL) before it runs out, so that a client polling as
      suggested sees it ``failed`` before it expires and is deleted;
    - ``poll_interval_ms`` is the longest polling hint a task gets (None: no hint).
      A young task gets a shorter one, so that a tool that finishes at once is not
      reported a whole interval later: the hint is the task's age times
      ``poll_interval_growth``, but at least ``first_poll_interval_ms`` (None: a
      twentieth of ``poll_interval_ms``) and at most ``poll_interval_ms``
      (``poll_interval_at``). With the defaults a client polls when the task is
      about 0.05, 0.15 and 0.45 intervals old, then every interval: a task that ran
      for less than an interval is seen finished at most about twice as long after
      it finished as it had run, for about three more ``tasks/get`` per task than a
      fixed hint. ``first_poll_interval_ms=poll_interval_ms`` gives a fixed hint;
    - ``answer_within_ms``: where the revision lets the server answer a call with
      its result instead of a task (the extension), a task-capable tool that
      finishes within this many milliseconds of the call is answered inline, with
      its result (or its JSON-RPC error), and its task is forgotten; one that does
      not (or asks for input) is answered with its task as usual. 0 (the default)
      always answers with a task; ``Tool.answer_within_ms`` overrides it per tool.
    - ``max_active_tasks`` is the number of unfinished tasks one principal may have;
    - ``max_input_bytes`` bounds tool arguments and input responses (JSON size);
    - ``max_result_bytes`` bounds one task's stored result (JSON size): a tool whose
      result is larger fails its task;
    - ``max_finished_tasks`` and ``max_stored_bytes`` bound what one principal keeps
      in finished tasks until their TTL elapses (their number, and the JSON size of
      their results and errors); a new task beyond either is refused. Unfinished
      tasks count towards ``max_finished_tasks`` (each will finish), so the finished
      ones never exceed it; ``max_stored_bytes`` is checked against the tasks
      finished so far;
    - ``max_tasks`` bounds the tasks the store holds for all principals together
      (unfinished and finished), None for no bound;
    - ``sweep_interval_s`` is how often expired tasks are purged;
    - ``max_listens`` is the number of ``subscriptions/listen`` streams one principal
      (when anonymous: one client address) may hold open, and
      ``max_listen_task_ids`` the number of task IDs one of them may name;
    - ``lease_s`` is the worker lease on a store shared by several replicas (a
      ``ReplicaStore`` such as Redis): each replica renews the leases of the tasks it
      runs every ``lease_s / 3`` seconds and, as often, fails the unfinished tasks
      whose lease ran out, so a task whose replica died is ``failed`` within about
      ``lease_s * 4 / 3`` seconds. It must exceed the longest stall of the event loop;
    - ``limit_error_code`` is the JSON-RPC code for a refused limit (task count, rate
      limit), which the spec leaves open. Over HTTP it has the status the revision
      gives ``LIMIT_EXCEEDED``, whichever store holds the tasks: 429 in the
      extension, 200 in 2025-11-25 (which answers every JSON-RPC error with 200);
    - ``session_pressure`` and ``session_pressure_idle_s`` keep room for new sessions
      (revisions with sessions): once the open sessions reach ``session_pressure``
      times the server's ``max_sessions``, a new session first closes the sessions
      unused for ``session_pressure_idle_s`` seconds (no request or stream open),
      least recently used first, until the open ones are below that mark again. So
      sessions nobody uses (opened under made-up bearer tokens, say) cannot keep new
      clients out for long.

    The task-count limits are checked by the store in the same atomic step as the
    create (``stores.Quota``), so concurrent creates, on one server or on replicas
    sharing a store, never get past them.
    """

    max_ttl_ms: int | None = 86_400_000
    default_ttl_ms: int | None = 3_600_000
    poll_interval_ms: int | None = 1_000
    first_poll_interval_ms: int | None = None
    poll_interval_growth: float = 2.0
    answer_within_ms: int = 0
    max_active_tasks: int = 100
    max_input_bytes: int = 1_048_576
    max_result_bytes: int = 4 * 1_048_576
    max_finished_tasks: int = 1_000
    max_stored_bytes: int = 64 * 1_048_576
    max_tasks: int | None = 100_000
    sweep_interval_s: float = 30.0
    max_listens: int = 128
    max_listen_task_ids: int = 100
    lease_s: float = 15.0
    limit_error_code: int = LIMIT_EXCEEDED
    session_pressure: float = 0.8
    session_pressure_idle_s: float = 60.0

    def __post_init__(self) -> None:
        for name in ("sweep_interval_s", "lease_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"Limits.{name} must be a positive number of seconds")
        if not 0 <= self.session_pressure <= 1:
            raise ValueError("Limits.session_pressure must be between 0 and 1")
        if not self.session_pressure_idle_s >= 0:
            raise ValueError("Limits.session_pressure_idle_s must not be negative")
        if not 0 < self.poll_interval_growth < math.inf:
            raise ValueError("Limits.poll_interval_growth must be a positive number")
        first = self.first_poll_interval_ms
        if first is not None and not 0 <= first <= (self.poll_interval_ms or 0):
            raise ValueError(
                "Limits.first_poll_interval_ms must lie between 0 and"
                " Limits.poll_interval_ms"
            )
        if self.answer_within_ms < 0:
            raise ValueError("Limits.answer_within_ms must not be negative")

    def poll_interval_at(self, age_ms: float, longest: int | None) -> int | None:
        """The polling hint of a live task ``age_ms`` old whose longest hint is
        ``longest`` (the ``poll_interval_ms`` stored with it; None: no hint): its age
        times ``poll_interval_growth``, between ``first_poll_interval_ms`` (default a
        twentieth of ``longest``) and ``longest``."""
        if longest is None:
            return None
        first = self.first_poll_interval_ms
        first = longest // 20 if first is None else min(first, longest)
        grown = age_ms * self.poll_interval_growth
        if grown >= longest:
            return longest
        return max(first, round(grown))


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestInfo:
    """What the transport knows about one incoming request.

    ``headers`` has lower-case names (None when the transport has no headers);
    ``principal`` is used as the caller's identity when the server has no
    ``authenticate`` hook.
    ``session_id`` names the session opened by ``initialize``; ``client`` is the
    caller's network address (host), when the transport knows it.
    """

    headers: Mapping[str, str] | None = None
    principal: str | None = None
    session_id: str | None = None
    client: str | None = None
    checked_json: bool = False
    """The transport parsed the message from JSON text and found no ``NaN`` or
    ``Infinity`` in it (nor nesting deeper than it allows): ``handle`` need not check
    again that ``params`` is plain JSON."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HandlerContext:
    """What a registered method handler learns about its request."""

    principal: str | None
    request: RequestInfo


CustomHandler = Callable[[dict[str, Any], HandlerContext], Awaitable[dict[str, Any]]]
"""Serves a method the runtime has no role for: ``(params, ctx) -> result``, wire form.

The generated ``server.TasksServer`` registers these through its typed ``on_*`` methods.
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEvent:
    """One security-relevant event, passed to the ``audit`` hook."""

    action: str
    task_id: str | None
    principal: str | None
    detail: str = ""


Authenticate = Callable[[RequestInfo], str | None]
"""Maps a request to its principal (None: anonymous). Raise ``JsonRpcError`` to refuse
it.

It sees every request (over HTTP with sessions also each GET stream and DELETE); the
principal owns the tasks it creates and the sessions it opens, which no other caller
may use."""

RateLimiter = Callable[[str | None, str], bool]
"""``(principal, method) -> allowed``; a refused call gets ``LIMIT_EXCEEDED``."""

AuditHook = Callable[[AuditEvent], None]
"""Receives every ``AuditEvent``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A registered tool: its handler and how it is listed.

    ``preflight`` asks MRTR questions on ``tools/call`` before any task exists.

    ``immediate_response`` goes into the ``CreateTaskResult`` as
    ``_meta["io.modelcontextprotocol/model-immediate-response"]``: text a host may
    give the model while the task runs.

    ``answer_within_ms`` overrides ``Limits.answer_within_ms`` for this tool: where
    the revision allows it (the extension), a call that finishes within that many
    milliseconds is answered with its result instead of a task (0: never).
    """

    name: str
    handler: ToolHandler
    description: str = ""
    title: str | None = None
    input_schema: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    task_support: TaskSupport = "optional"
    preflight: Preflight | None = None
    immediate_response: str | None = None
    answer_within_ms: int | None = None


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


def _refusal(refused: LimitExceeded) -> str:
    """The error message for a create refused by a ``Limits`` task-count limit."""
    current, maximum = refused.current, refused.maximum
    if refused.limit == "max_active_tasks":
        return (
            f"Too many unfinished tasks: {current} (limit {maximum} per principal);"
            " wait for some to finish or cancel them"
        )
    if refused.limit == "max_finished_tasks":
        return (
            f"Too many finished tasks kept: {current}, unfinished ones included as"
            f" they will finish (limit {maximum} per principal); finished tasks are"
            " deleted when their TTL elapses"
        )
    if refused.limit == "max_stored_bytes":
        return (
            f"Finished tasks keep too much: {current} bytes of results (limit"
            f" {maximum} bytes per principal); they are deleted when their TTL"
            " elapses"
        )
    return (
        f"The server holds too many tasks: {current} (limit {maximum} for all"
        " principals); try again later"
    )


def _not_found() -> JsonRpcError:
    """The error for an unknown, expired or foreign task (never says which)."""
    return JsonRpcError(INVALID_PARAMS, "Failed to retrieve task: Task not found")


_FORM_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
}
"""Python types of the primitive JSON types an elicitation form may ask for."""


def _short(error: Exception) -> str:
    """An exception's message on one line, at most 300 characters."""
    text = " ".join(str(error).split())
    return text if len(text) <= 300 else text[:297] + "..."


def check_answer(
    method: str, params: Mapping[str, Any], answer: Any, models: ModuleType
) -> dict[str, Any]:
    """The client's ``answer`` to the input request ``method(params)``, checked.

    It must validate against the result model of ``models`` (``ElicitResult``, ...), and
    an accepted form elicitation's ``content`` must match the ``requestedSchema``:
    required fields present, each field of the primitive type (string, number,
    integer, boolean, or a list of strings) and value (``enum``, ``oneOf`` consts,
    bounds) asked for. Raises ``JsonRpcError`` (``-32602``) saying what is wrong.
    """
    what = f"The client's answer to {method}"
    if not isinstance(answer, dict):
        raise JsonRpcError(INVALID_PARAMS, f"{what} must be an object")
    checked = cast(dict[str, Any], answer)
    model: Any = getattr(models, INPUT_RESULTS.get(method, ""), None)
    if model is not None:
        try:
            model.model_validate(checked)
        except ValueError as error:
            raise JsonRpcError(
                INVALID_PARAMS, f"{what} is invalid: {_short(error)}"
            ) from None
    schema = params.get("requestedSchema")
    if (
        method == "elicitation/create"
        and checked.get("action") == "accept"
        and isinstance(schema, dict)
    ):
        _check_form(what, cast(dict[str, Any], schema), checked.get("content"))
    return checked


def _check_form(what: str, schema: dict[str, Any], content: Any) -> None:
    """Check an accepted elicitation's ``content`` against its ``requestedSchema``."""
    if content is None:
        content = {}
    if not isinstance(content, dict):
        raise JsonRpcError(INVALID_PARAMS, f"{what}: content must be an object")
    values = cast(dict[str, Any], content)
    raw_properties = schema.get("properties")
    properties = (
        cast(dict[str, Any], raw_properties) if isinstance(raw_properties, dict) else {}
    )
    required = schema.get("required")
    for name in cast("list[object]", required) if isinstance(required, list) else []:
        if name not in values:
            raise JsonRpcError(
                INVALID_PARAMS, f"{what}: required field {name!r} is missing"
            )
    for name, value in values.items():
        spec = properties.get(name)
        if isinstance(spec, dict):
            problem = _form_value_problem(cast(dict[str, Any], spec), value)
            if problem is not None:
                raise JsonRpcError(INVALID_PARAMS, f"{what}: field {name!r} {problem}")


def _allowed_values(spec: Mapping[str, Any]) -> list[Any] | None:
    """The values an ``enum`` or a ``oneOf``/``anyOf`` of consts allows (None: any)."""
    enum = spec.get("enum")
    if isinstance(enum, list):
        return list(cast("list[object]", enum))
    for key in ("oneOf", "anyOf"):
        options = spec.get(key)
        if isinstance(options, list):
            return [
                cast(dict[str, Any], option).get("const")
                for option in cast("list[object]", options)
                if isinstance(option, dict)
            ]
    return None


def _form_value_problem(spec: dict[str, Any], value: object) -> str | None:
    """What is wrong with one form value, or None."""
    kind = spec.get("type")
    if kind == "array":
        if not isinstance(value, list) or not all(
            isinstance(item, str) for item in cast("list[object]", value)
        ):
            return "must be a list of strings"
        items = spec.get("items")
        allowed = (
            _allowed_values(cast(dict[str, Any], items))
            if isinstance(items, dict)
            else None
        )
        chosen = cast("list[object]", value)
        if allowed is not None and any(item not in allowed for item in chosen):
            return "has a value that is not one of the choices"
        return None
    types = _FORM_TYPES.get(kind) if isinstance(kind, str) else None
    if types is None:
        return None  # a type the spec does not allow in forms: not checked here
    if not isinstance(value, types) or (kind != "boolean" and isinstance(value, bool)):
        return f"must be a {kind}"
    if isinstance(value, float) and not math.isfinite(value):
        return "must be a finite number"
    allowed = _allowed_values(spec)
    if allowed is not None and value not in allowed:
        return "is not one of the choices"
    if isinstance(value, str):
        low_key, high_key, measure = "minLength", "maxLength", float(len(value))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        low_key, high_key, measure = "minimum", "maximum", float(value)
    else:
        return None
    low, high = spec.get(low_key), spec.get(high_key)
    if isinstance(low, (int, float)) and measure < low:
        return f"is below {low_key} {low}"
    if isinstance(high, (int, float)) and measure > high:
        return f"is above {high_key} {high}"
    return None


def _through(model: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` as sent: validated by the schema's ``model`` and in its wire form."""
    return cast(dict[str, Any], cast(Any, model.model_validate(values)).to_wire())


_CURSOR_MAX_CHARS = 1024
"""The longest ``tasks/list`` cursor read (those made here name two task IDs)."""


def _encode_cursor(last_id: str, next_id: str) -> str:
    """An opaque cursor of the list role: the last task of a page and the first of the
    next one, both the caller's own, so it tells nothing about other callers' tasks
    (not how many there are: no server-wide position) and any replica can resume it."""
    anchors = json.dumps([last_id, next_id], separators=(",", ":"))
    return base64.urlsafe_b64encode(anchors.encode()).decode().rstrip("=")


def _decode_cursor(cursor: Any) -> tuple[str, str]:
    """The two task IDs in a cursor made by ``_encode_cursor``; ``-32602`` otherwise."""
    try:
        if not isinstance(cursor, str) or len(cursor) > _CURSOR_MAX_CHARS:
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


@dataclass(slots=True, kw_only=True)
class Call:
    """One incoming request as the dispatcher sees it.

    ``capabilities`` are the client's capabilities declared with this request (None:
    the session's count); ``tasks`` tells whether a task may answer it.
    """

    method: str
    params: dict[str, Any]
    request: RequestInfo
    principal: str | None
    emit: Emit | None
    request_id: Any
    session: Session | None = None
    capabilities: dict[str, Any] | None = None
    tasks: bool = True


Route = Callable[[Call], Awaitable[dict[str, Any]]]
"""Serves one method: the result object, or ``JsonRpcError``."""


def missing_capability(method: str, declared: Mapping[str, Any]) -> str | None:
    """The client capability an input request needs and ``declared`` lacks, if any."""
    capability = INPUT_CAPABILITIES.get(method)
    return capability if capability is not None and capability not in declared else None


NAMED_TARGETS: Mapping[str, str] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}
"""Core requests whose body names a target, by method: the params field that the
``Mcp-Name`` header mirrors (SEP-2243). The Tasks requests mirror ``taskId``."""


def _decode_header(value: str, mismatch: int) -> str:
    """Decode the ``=?base64?...?=`` sentinel form of a routing header (a malformed one
    is the error ``mismatch``)."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except ValueError:  # not base64 (binascii.Error), not ASCII, not UTF-8
            raise JsonRpcError(
                mismatch, "Malformed base64 value in a routing header"
            ) from None
    return value


def http_headers(sdk_context: Any) -> dict[str, str] | None:
    """The lower-cased HTTP headers of an SDK request context (None without HTTP)."""
    http = getattr(sdk_context, "request", None)
    if http is None:
        return None
    return {str(k).lower(): str(v) for k, v in http.headers.items()}


_LOST_WORKER = (
    "The replica running the task stopped before the task finished (its worker"
    " lease expired)"
)
"""The error message of a task failed because its worker lease ran out."""

_TTL_RAN_OUT = (
    "The task's TTL ran out before the task finished (it was failed just before it"
    " expired)"
)
"""The error message of a task failed just before its TTL ran out, by the server
running it (``TaskServerCore._fail_before_expiry``)."""

_SHUT_DOWN = "Server shut down before the task finished"
"""The error message of a task still running when the server closed."""

_CLOSE_WORKERS_S = 0.5
"""How long ``TaskServerCore.close`` lets stopped workers end (a tool may clean up,
or return its result)."""

_CLOSE_FAILING_S = 1.0
"""How long ``TaskServerCore.close`` spends marking unfinished tasks failed."""

_WIRE_CACHE_SIZE = 1024
"""How many wire forms of tasks ``TaskServerCore._task`` keeps (the latest made)."""

_WIRE_CACHE_MAX_KEPT = 4096
"""The largest finished task (JSON bytes of its result and error) whose wire form
``TaskServerCore._task`` keeps."""

_TOO_LARGE: dict[str, Any] = {}
"""The wire cache's mark for a finished task too large to keep."""

_MAX_WRITE_ATTEMPTS = 100
"""How often one status write is retried after losing a race to another writer."""

_Server = TypeVar("_Server", bound="TaskServerCore")


class Session:
    """One client connection, opened by ``initialize``.

    It remembers the client's capabilities and carries server-to-client messages
    that belong to no request (status and progress notifications; input requests of
    tasks that no ``tasks/result`` stream carries) to the client's open GET streams.
    """

    def __init__(
        self, session_id: str, owner: str | None = None, principal: str | None = None
    ) -> None:
        self.id = session_id
        self.owner = owner
        """Whom the session counts against and belongs to (principal or client
        address): only requests of that owner may use it."""
        self.principal = principal
        """The principal that opened the session (None: anonymous)."""
        self.last_used = time.monotonic()
        """When a request last named the session (``time.monotonic``)."""
        self.open_requests = 0
        """How many HTTP requests of the session are being answered now."""
        self.client_capabilities: dict[str, Any] = {}
        self._streams: set[asyncio.Queue[dict[str, Any] | None]] = set()

    def notify(self, message: dict[str, Any]) -> None:
        """Queue a notification on every open stream (dropped when none is open)."""
        for stream in self._streams:
            stream.put_nowait(message)

    def send(self, message: dict[str, Any]) -> bool:
        """Queue a message on one open stream only; False when none is open."""
        stream = next(iter(self._streams), None)
        if stream is None:
            return False
        stream.put_nowait(message)
        return True

    def open_stream(self) -> asyncio.Queue[dict[str, Any] | None]:
        """A new stream for the client's GET request; None in it ends the stream."""
        stream: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._streams.add(stream)
        return stream

    def close_stream(
        self, stream: asyncio.Queue[dict[str, Any] | None]
    ) -> list[dict[str, Any]]:
        """Forget a stream the client closed; return the messages it never sent."""
        self._streams.discard(stream)
        unsent: list[dict[str, Any]] = []
        while not stream.empty():
            message = stream.get_nowait()
            if message is not None:
                unsent.append(message)
        return unsent

    @property
    def streaming(self) -> bool:
        """Whether the client has a stream open on the session."""
        return bool(self._streams)

    @property
    def in_use(self) -> bool:
        """Whether a request or stream of the session is open (it is never closed to
        make room then)."""
        return self.open_requests > 0 or bool(self._streams)

    def close(self) -> None:
        """End every open stream."""
        for stream in self._streams:
            stream.put_nowait(None)
        self._streams.clear()


@dataclass(slots=True, eq=False)
class PendingRequest:
    """A server-to-client request waiting for its reply.

    Only a reply from ``principal`` through one of ``sessions`` (the sessions the
    request was sent on; None stands for a caller without a session) settles it.
    """

    method: str
    params: dict[str, Any]
    principal: str | None
    reply: asyncio.Future[dict[str, Any]]
    sessions: set[str | None] = field(default_factory=set[str | None])


@dataclass(slots=True)
class _Channel:
    """Server-to-client requests of one task, waiting for a stream to carry them (the
    result role's input mechanism), until the client answers them.

    Each result-role stream of the task carries every outstanding request once (a new
    stream again, for a client that lost the first). So does each GET stream that
    opens in a session that may hear them: the task's session and, for a task of an
    authenticated principal, any session of that principal; never another principal's
    or another anonymous client's. A request asked while no result-role stream is open
    goes out at once on a GET stream of the task's session (or, when it has none open,
    of each other session of the principal with one open).
    """

    outstanding: dict[str, dict[str, Any]] = field(
        default_factory=dict[str, dict[str, Any]]
    )
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    session: Session | None = None
    """The session of the task's ``tools/call``, whose GET stream may carry requests."""
    principal: str | None = None
    """The task's principal (None: anonymous, only its session hears its requests)."""
    readers: int = 0
    """How many result-role streams of the task are open."""
    carriers: dict[str, int] = field(default_factory=dict[str, int])
    """How many streams carried each outstanding request (or hold it queued)."""


@dataclass(slots=True, eq=False)
class _Subscription:
    """One ``subscriptions/listen`` stream: the states of its tasks waiting to be sent.

    A task keeps only its latest unsent state, so a client that reads slower than its
    tasks change holds at most one state per task here.
    """

    pending: dict[str, tuple[dict[str, Any], bool]] = field(
        default_factory=dict[str, tuple[dict[str, Any], bool]]
    )
    """Task ID -> its latest unsent state (wire form) and whether it is terminal."""
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False
    """The server is closing: send what is pending, then end the stream."""

    latest: dict[str, float] = field(default_factory=dict[str, float])
    """Task ID -> the ``updated_at`` of the last state it took."""

    def offer(self, record: TaskRecord, state: dict[str, Any]) -> None:
        """A task's new state (it replaces an unsent older one).

        A state not newer (by ``updated_at``, which every write raises) than the last
        one taken for its task is dropped: the subscription's read of the current
        state can return after a newer state was published to it, and that stale
        state must not replace (or follow) the newer one.
        """
        if record.updated_at <= self.latest.get(record.task_id, -math.inf):
            return
        self.latest[record.task_id] = record.updated_at
        self.pending[record.task_id] = (state, record.is_terminal)
        self.changed.set()

    def close(self) -> None:
        """End the stream once the pending states are sent."""
        self.closed = True
        self.changed.set()

    async def next_states(
        self,
    ) -> list[tuple[str, tuple[dict[str, Any], bool]]] | None:
        """The pending ``(task ID, (state, terminal))`` pairs, once there are any; None
        once closed and all sent."""
        while not self.pending:
            if self.closed:
                return None
            self.changed.clear()
            await self.changed.wait()
        states = list(self.pending.items())
        self.pending.clear()
        return states


class ToolContext:
    """What a tool handler gets: its task, status reporting, input and cancellation.

    ``task_id`` is None when the tool runs synchronously (no task was asked for, or the
    tool never runs as a task). ``client_capabilities`` are the capabilities the client
    declared (per session or per request, by revision); ``input_responses`` holds the
    answers to the tool's multi-round-trip preflight requests, if any (extension).
    """

    def __init__(
        self,
        server: TaskServerCore,
        *,
        tool: Tool,
        principal: str | None,
        client_capabilities: dict[str, Any] | None = None,
        input_responses: dict[str, Any] | None = None,
        session: Session | None = None,
        progress_token: str | int | None = None,
        emit: Emit | None = None,
        task_id: str | None = None,
    ) -> None:
        self._server = server
        self.tool = tool
        self.principal = principal
        self.session = session
        self.client_capabilities = (
            client_capabilities
            if client_capabilities is not None
            else session.client_capabilities if session is not None else {}
        )
        self.input_responses = input_responses or {}
        self.progress_token = progress_token
        self.emit = emit
        self.task_id = task_id
        self.cancelled = False
        """Set when the client asked to cancel the task; the worker is also
        cancelled."""
        self.finished = False
        """Set once the task is terminal (progress notifications stop)."""
        self.issued_keys: set[str] = set()
        """Input-request keys handed out for this task (unique for its life)."""
        self.settling: asyncio.Event | None = None
        """Set while the call waits to answer inline (``Limits.answer_within_ms``);
        the server sets it when the tool asks for input."""

    async def report(self, message: str) -> None:
        """Set the task's ``statusMessage`` (no-op when not running as a task)."""
        if self.task_id is not None:
            await self._server.set_status_message(self.task_id, message)

    async def set_fields(self, fields: TaskFields) -> None:
        """Set task fields the schema has and the runtime does not manage (see
        ``protocol.TaskFields``); clients read them on their next snapshot."""
        if self.task_id is not None:
            await self._server.set_task_fields(self.task_id, fields)

    async def set_status(self, status: StatusName, message: str | None = None) -> None:
        """Move the task to another active status (the revision's ``ACTIVE_STATUSES``),
        for example one the schema added and the configuration classified as active.

        Input and terminal statuses are reached through ``request_input`` and by
        returning or raising. An illegal transition raises ``ValueError``.
        """
        if status not in self._server.tables.active:
            raise ValueError(f"{status!r} is not an active status")
        if self.task_id is not None:
            changes: dict[str, Any] = {"status": status}
            if message is not None:
                changes["status_message"] = message
            await self._server.move_task(self.task_id, **changes)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` with the request's ``progressToken``, if any.

        The token stays valid for the whole task; nothing is sent once it is terminal.
        """
        if self.progress_token is None or self.finished:
            return
        await self._server.send_progress(self, progress, total, message)

    async def elicit(
        self, message: str, requested_schema: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask the user through the client (form elicitation); return the
        ``ElicitResult``."""
        return await self.request_input(
            "elicitation/create",
            {"mode": "form", "message": message, "requestedSchema": requested_schema},
        )

    async def request_input(
        self, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask the client for input mid-flight and wait for the answer.

        As a task, the task is ``input_required`` until the client answers; how the
        request travels follows the schema's method roles (see the server's
        ``request_input``).
        """
        return await self._server.request_input(self, method, params)


class TaskServerCore:
    """Revision-neutral plumbing: tools, store, limits, lifecycle, workers, transitions,
    and the mechanism of each Tasks role the revision's tables name (``_role_routes``,
    ``request_input``, ``_published``).

    ``uses_sessions`` tells the HTTP app whether ``initialize`` opens a session that
    later requests must name (2025-11-25) or every request stands alone (extension).

    Options of one revision (the other ignores them): sessions (2025-11-25) -
    ``max_sessions`` open at once, ``max_sessions_per_client`` per principal (or, when
    anonymous, per client address), ``session_idle_s`` after which an unused session
    with no open stream is closed to make room; ``task_mismatch_code`` for a
    ``params.task`` the tool's ``taskSupport`` does not allow.
    ``require_routing_headers`` (a revision with routing headers: the extension; see
    ``_check_headers``): ``"core"`` (default) refuses a request without the
    ``MCP-Protocol-Version`` and ``Mcp-Method`` headers, or without ``Mcp-Name`` where
    the core names a target (``tools/call``, ``prompts/get``, ``resources/read``);
    ``True`` also a Tasks request (``tasks/get``, ...) without ``Mcp-Name``; ``False``
    none (for clients older than the headers). ``enable_list
    (default: whether ``authenticate`` is set) and ``page_size`` serve the list role
    (``tasks/list``) wherever the schema has it.
    """

    uses_sessions: ClassVar[bool] = False
    tables: ClassVar[RevisionTables]
    """The revision's protocol tables (set by the revision's server class)."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        store: TaskStore | None = None,
        limits: Limits | None = None,
        authenticate: Authenticate | None = None,
        rate_limiter: RateLimiter | None = None,
        audit: AuditHook | None = None,
        instructions: str | None = None,
        recover_orphans: bool = True,
        enable_list: bool | None = None,
        page_size: int = 50,
        task_mismatch_code: int = METHOD_NOT_FOUND,
        max_sessions: int = 10_000,
        max_sessions_per_client: int = 64,
        session_idle_s: float = 3_600.0,
        require_routing_headers: RoutingHeaders = "core",
    ) -> None:
        """Configure the server (see the class docstring of the revision's server for
        the options); nothing runs until :meth:`start`."""
        self.enable_list = (
            authenticate is not None if enable_list is None else enable_list
        )
        self.page_size = page_size
        self.task_mismatch_code = task_mismatch_code
        self.max_sessions = max_sessions
        self.max_sessions_per_client = max_sessions_per_client
        self.session_idle_s = session_idle_s
        self.require_routing_headers: RoutingHeaders = require_routing_headers
        self.name = name
        self.version = version
        self.store: TaskStore = (
            store if store is not None else SQLiteTaskStore("mcp-tasks.sqlite3")
        )
        self.limits = limits if limits is not None else Limits()
        self.instructions = instructions
        self.recover_orphans = recover_orphans
        self._authenticate = authenticate
        self._rate_limiter = rate_limiter
        self._audit = audit
        self._tools: dict[str, Tool] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._storing: set[str] = set()
        """Tasks whose local worker's tool returned: it only stores the outcome now."""
        self._write_lock = asyncio.Lock()
        self._sweeper: asyncio.Task[None] | None = None
        self._lease_keepers: list[asyncio.Task[None]] = []
        self._expiring: set[asyncio.Task[None]] = set()
        """Running ``_fail_before_expiry`` calls (held until done: the loop keeps tasks
        only weakly)."""
        self._started = False
        self.replica_id = secrets.token_hex(8)
        """Names this process in worker leases and signals to other replicas."""
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        """The open sessions by id, least recently used first (``touch_session``)."""
        self._wire_cache: dict[tuple[str, float, str], dict[str, Any]] = {}
        self._poll_wire = list(self.tables.task_fields.values())[6]
        """The wire name of the task's poll interval field."""
        self.owns_store = True
        """Whether ``close`` closes the store (a dual server closes its shared one
        itself, after every revision's server stopped)."""
        self.siblings: list[TaskServerCore] = []
        """Servers of the other revisions on this store in this process (a dual server):
        they get this server's signals (cancellations, status changes) directly."""
        self.custom_handlers: dict[str, CustomHandler] = {}
        """Handlers of methods the runtime has no role for, by method name."""
        self._contexts: dict[str, ToolContext] = {}
        self._replies: dict[str, PendingRequest] = {}
        self._session_owners: dict[str, set[str]] = {}
        self._answers: dict[tuple[str, str], asyncio.Future[dict[str, Any]]] = {}
        """Input requests of local workers waiting for the update role, by task and
        key."""
        self._channels: dict[str, _Channel] = {}
        """Server-to-client input requests of local tasks (the result role), by task."""
        self._task_sessions: dict[str, Session] = {}
        """The session that created each live task (it gets the notify role's
        messages)."""
        self._listeners: dict[str, set[_Subscription]] = {}
        """Subscriptions following each task (they get its new states)."""
        self._listens: dict[str, int] = {}
        """Open ``subscriptions/listen`` streams by caller (``_caller``), for
        ``limits.max_listens``; a caller with none has no entry."""
        self._routes: dict[str, Route] = {
            "ping": self._ping,
            "tools/list": self._tools_list,
            "tools/call": self._call_tool,
        }
        tables = self.tables
        if "SUBSCRIPTION_ID" in tables.meta_keys and tables.has_role("notify"):
            self._routes["subscriptions/listen"] = self._listen
        self._routes.update(self._revision_routes())
        for role, route in self._role_routes().items():
            if role in self.tables.roles:  # a role the schema lacks is never served
                self._routes[self.tables.roles[role]] = route
        roles = self.tables.roles
        self.prompt_methods: frozenset[str] = frozenset(
            {"ping", "tools/list", *(roles[r] for r in ("get", "cancel") if r in roles)}
        )
        """Methods answered without waiting on a client, a tool or a task's progress:
        the HTTP transport awaits them directly, without watching for a disconnect."""
        self.stream_methods: frozenset[str] = frozenset(
            {"subscriptions/listen"} & set(self._routes)
        )
        """Methods answered only on a ``text/event-stream``: the HTTP transport refuses
        them (406) to a client whose ``Accept`` header does not take one."""
        self.setup()

    def setup(self) -> None:
        """Revision hook run at the end of ``__init__`` (state of its own)."""

    # -- sessions (revisions with ``initialize``) ------------------------------

    def open_session(
        self, owner: str | None = None, principal: str | None = None
    ) -> Session:
        """Start a session for an ``initialize`` request, counted against ``owner``
        (and opened by ``principal``).

        An owner may have ``max_sessions_per_client`` sessions and the server
        ``max_sessions``; beyond either, sessions idle for ``session_idle_s`` are
        closed, and if none is, the new session is refused (``JsonRpcError`` with
        ``limits.limit_error_code``). Past ``limits.session_pressure`` of
        ``max_sessions``, sessions idle for ``limits.session_pressure_idle_s`` are
        closed first, least recently used first. A session in use (a request or
        stream open) is never closed for another.
        """
        if owner is not None:
            owned = self._session_owners.get(owner, set())
            if len(owned) >= self.max_sessions_per_client:
                self._close_idle(list(owned))
            if len(owned) >= self.max_sessions_per_client:
                raise JsonRpcError(
                    self.limits.limit_error_code,
                    f"Too many open sessions for this client: {len(owned)} (limit"
                    f" {self.max_sessions_per_client}); end unused sessions with"
                    " HTTP DELETE",
                )
        mark = int(self.max_sessions * self.limits.session_pressure)
        if len(self.sessions) >= mark:
            self._close_least_used(self.limits.session_pressure_idle_s, mark - 1)
        if len(self.sessions) >= self.max_sessions:
            self._close_least_used(self.session_idle_s, self.max_sessions - 1)
        if len(self.sessions) >= self.max_sessions:
            raise JsonRpcError(
                self.limits.limit_error_code,
                f"Too many open sessions on this server (limit {self.max_sessions});"
                " try again later",
            )
        session = Session(secrets.token_hex(16), owner, principal)
        self.sessions[session.id] = session
        if owner is not None:
            self._session_owners.setdefault(owner, set()).add(session.id)
        return session

    def open_session_for(self, request: RequestInfo) -> Session:
        """``open_session`` for the caller of ``request``: its principal, or its client
        address when it has none. Raises ``JsonRpcError`` when authentication or the
        session limits refuse it."""
        principal = self._principal(request)
        owner = self._session_owner(principal, request.client)
        return self.open_session(owner, principal)

    def session_for(self, request: RequestInfo) -> Session | None:
        """The session ``request.session_id`` names, if the caller of ``request`` owns
        it (the principal that opened it; for an anonymous session, the same client
        address); None for an unknown session and for another caller's, which is
        audited (``session_refused``). Raises ``JsonRpcError`` when authentication
        refuses the request."""
        session = self.sessions.get(request.session_id or "")
        if session is None or session.owner is None:
            return session
        principal = self._principal(request)
        if self._session_owner(principal, request.client) != session.owner:
            self._emit_audit(
                "session_refused", None, principal, "a session another caller opened"
            )
            return None
        return session

    @staticmethod
    def _session_owner(principal: str | None, client: str | None) -> str:
        """Whom a session belongs to: its principal, or the client address that
        opened it when anonymous."""
        if principal is not None:
            return f"principal:{principal}"
        return f"address:{client or '?'}"

    def touch_session(self, session: Session) -> None:
        """Record that ``session`` is used now (it becomes the most recently used)."""
        session.last_used = time.monotonic()
        if session.id in self.sessions:
            self.sessions.move_to_end(session.id)

    def _close_idle(self, session_ids: list[str]) -> None:
        """Close the sessions among ``session_ids`` unused for ``session_idle_s``."""
        horizon = time.monotonic() - self.session_idle_s
        for session_id in session_ids:
            session = self.sessions.get(session_id)
            if (
                session is not None
                and session.last_used <= horizon
                and not session.in_use
            ):
                self.close_session(session_id)

    def _close_least_used(self, idle_s: float, keep: int) -> None:
        """Close sessions unused for ``idle_s`` seconds, least recently used first,
        while more than ``keep`` are open.

        Stops at the first session used more recently; one in use is marked used now
        instead (it goes last), so each session is looked at about once per
        ``idle_s``, however many are open.
        """
        now = time.monotonic()
        for _ in range(len(self.sessions)):
            if len(self.sessions) <= keep:
                return
            session = next(iter(self.sessions.values()))
            if session.last_used > now - idle_s:
                return
            if session.in_use:
                self.touch_session(session)
            else:
                self.close_session(session.id)

    def close_session(self, session_id: str) -> None:
        """End a session and its streams (its tasks live on)."""
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.close()
            if session.owner is not None:
                owned = self._session_owners.get(session.owner)
                if owned is not None:
                    owned.discard(session_id)
                    if not owned:
                        del self._session_owners[session.owner]

    def stream_opened(
        self,
        session: Session,
        stream: asyncio.Queue[dict[str, Any] | None] | None = None,
    ) -> None:
        """Called by the HTTP app once a GET stream of ``session`` is open (``stream``,
        from ``session.open_stream``; None: any of its streams): it carries every
        outstanding input request the session may hear (see ``_Channel``), even one
        another stream carried before, whose client may be gone."""
        for channel in self._channels.values():
            if not channel.outstanding or not self._hears(channel, session):
                continue
            for request_id, message in channel.outstanding.items():
                pending = self._replies.get(request_id)
                if pending is None:
                    continue
                if stream is not None:
                    stream.put_nowait(message)
                elif not session.send(message):
                    return
                pending.sessions.add(session.id)
                channel.carriers[request_id] = channel.carriers.get(request_id, 0) + 1

    def stream_closed(self, session: Session, unsent: list[dict[str, Any]]) -> None:
        """Called by the HTTP app when a GET stream of ``session`` ended before it
        sent the messages ``unsent``: requests no other stream carried wait for
        another stream again."""
        returned = {str(m["id"]) for m in unsent if "id" in m and "method" in m}
        if not returned:
            return
        for channel in self._channels.values():
            back = returned & channel.carriers.keys()
            if not back:
                continue
            for request_id in back:
                channel.carriers[request_id] -= 1
            channel.changed.set()  # a waiting result-role stream may carry them now
            self._push_input(channel)

    @staticmethod
    def _hears(channel: _Channel, session: Session) -> bool:
        """Whether streams of ``session`` may carry the input requests of
        ``channel``'s task: the task's session, or a session of its (authenticated)
        principal."""
        return session is channel.session or (
            channel.principal is not None and session.principal == channel.principal
        )

    async def handle(
        self,
        message: dict[str, Any],
        request: RequestInfo | None = None,
        emit: Emit | None = None,
    ) -> dict[str, Any] | None:
        """Answer one JSON-RPC message.

        Returns the response object, or None for notifications and for the client's
        responses to our requests. ``emit`` sends messages on the request's own
        response stream (input requests, progress, subscriptions).
        """
        invalid = envelope_error(message)
        if invalid is not None:
            return {"jsonrpc": "2.0", "id": None, "error": invalid.to_wire()}
        if "method" not in message:
            self._take_reply(message, request or RequestInfo())
            return None
        if "id" not in message:
            return None  # notifications (initialized, cancelled, ...) need no reply
        request_id = message.get("id")
        try:
            method = cast(str, message["method"])
            params = request_params(message)
            try:
                if request is None or not request.checked_json:
                    json_size(params)
            except (ValueError, RecursionError):
                raise JsonRpcError(
                    INVALID_PARAMS,
                    "params must be plain JSON (no NaN or Infinity, not nested too"
                    " deep)",
                ) from None
            request = request or RequestInfo()
            self._check_headers(method, params, request)
            call = self._begin(method, params, request, emit)
            call.request_id = request_id
            if method in self.tables.task_requests:
                self._check_rate(call.principal, method)
            route = self._routes.get(method)
            result = await (route(call) if route is not None else self._custom(call))
        except JsonRpcError as error:
            return {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}
        except Exception:  # a bug must yield an error response, not a dead stream
            _log.exception("internal error while handling %s", message.get("method"))
            internal = JsonRpcError(INTERNAL_ERROR, "Internal error")
            return {"jsonrpc": "2.0", "id": request_id, "error": internal.to_wire()}
        return {"jsonrpc": "2.0", "id": request_id, "result": self._respond(result)}

    def _check_headers(
        self, method: str, params: dict[str, Any], request: RequestInfo
    ) -> None:
        """Streamable HTTP headers that mirror the body (SEP-2243):
        ``MCP-Protocol-Version`` (the ``_meta`` protocol version), ``Mcp-Method`` and,
        for a request that names a target, ``Mcp-Name`` (``NAMED_TARGETS``; ``taskId``
        for the Tasks requests).

        A header that is sent must match the body. Which must be sent follows
        ``require_routing_headers``: ``"core"`` all of them except ``Mcp-Name`` on the
        Tasks requests (the extension asks for it, but clients on ``mcp`` 2.3, such as
        fastmcp 4.1.4, leave it out), ``True`` all, ``False`` none. A missing or
        mismatched header is the error ``HEADER_MISMATCH`` (-32020, HTTP 400); it is
        checked before the protocol version, so a client whose header and body disagree
        is told so. Only where the revision's error codes have ``HEADER_MISMATCH`` (the
        revision defines the headers); elsewhere they are ignored like any other header.
        """
        mismatch = self.tables.error_codes.get("HEADER_MISMATCH")
        headers = request.headers
        if mismatch is None or headers is None:
            return
        required = self.require_routing_headers
        version_key = self.tables.meta_keys.get("PROTOCOL_VERSION")
        meta = params.get("_meta")
        version = (
            cast(dict[str, Any], meta).get(version_key)
            if version_key is not None and isinstance(meta, dict)
            else None
        )
        if isinstance(version, str):  # else the envelope check refuses it (-32602)
            header_version = headers.get("mcp-protocol-version")
            if header_version is None and required:
                raise JsonRpcError(
                    mismatch,
                    f"Missing MCP-Protocol-Version header (expected {version!r})",
                )
            if header_version is not None and header_version.strip() != version:
                raise JsonRpcError(
                    mismatch,
                    f"MCP-Protocol-Version header {header_version!r} does not match"
                    f" the body's protocol version {version!r}",
                )
        header_method = headers.get("mcp-method")
        if header_method is None:
            if required:
                raise JsonRpcError(
                    mismatch, f"Missing Mcp-Method header (expected {method!r})"
                )
        elif _decode_header(header_method.strip(), mismatch) != method:
            raise JsonRpcError(
                mismatch,
                f"Mcp-Method header {header_method!r} does not match the body's"
                f" method {method!r}",
            )
        tasks = self.tables.task_requests
        field = "taskId" if method in tasks else NAMED_TARGETS.get(method)
        if field is None:
            return
        header_name = headers.get("mcp-name")
        if header_name is None:
            if params.get(field) is not None and (
                required is True or (required and method not in tasks)
            ):
                raise JsonRpcError(
                    mismatch, f"Missing Mcp-Name header (the body's {field})"
                )
            return
        if _decode_header(header_name.strip(), mismatch) != params.get(field):
            raise JsonRpcError(
                mismatch, f"Mcp-Name header does not match the body's {field}"
            )

    # -- revision hooks (the adapters override these) ---------------------------

    def _begin(
        self,
        method: str,
        params: dict[str, Any],
        request: RequestInfo,
        emit: Emit | None,
    ) -> Call:
        """Check a request's envelope and build its ``Call``.

        Where the schema has ``_meta`` keys for the protocol version and the client
        capabilities, every request must carry both, and only its own capabilities
        count (``_request_meta``). The call gets the session it names (if
        ``initialize`` opened one). Where Tasks are an extension (the tables'
        ``extension_id``), a task may answer only a request that declared it, and a
        Tasks request that did not is refused (``_tasks_not_declared``).
        """
        declared = self._request_meta(params)
        call = Call(
            method=method,
            params=params,
            request=request,
            principal=self._principal(request),
            emit=emit,
            request_id=None,
            capabilities=declared,
        )
        call.session = self.sessions.get(request.session_id or "")
        if call.session is not None:
            self.touch_session(call.session)
        extension = self.tables.extension_id
        if extension:
            counted = declared
            if counted is None:
                counted = call.session.client_capabilities if call.session else {}
            call.tasks = extension in (counted.get("extensions") or {})
            if method in self.tables.task_requests and not call.tasks:
                raise self._tasks_not_declared(method)
        return call

    def _request_meta(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """The client capabilities declared in a request's ``_meta``, after checking
        its protocol version; None where the schema has no such keys (the session's
        capabilities count)."""
        version_key = self.tables.meta_keys.get("PROTOCOL_VERSION")
        capabilities_key = self.tables.meta_keys.get("CLIENT_CAPABILITIES")
        if version_key is None or capabilities_key is None:
            return None
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            raise JsonRpcError(
                INVALID_PARAMS,
                f"params._meta with {version_key!r} and {capabilities_key!r} is"
                " required",
            )
        meta = cast(dict[str, Any], meta)
        version = meta.get(version_key)
        capabilities = meta.get(capabilities_key)
        if not isinstance(version, str) or not isinstance(capabilities, dict):
            raise JsonRpcError(
                INVALID_PARAMS,
                f"params._meta must carry {version_key!r} (string) and"
                f" {capabilities_key!r} (object)",
            )
        supported = self.tables.protocol_version
        if version != supported:
            raise JsonRpcError(
                self.tables.error_codes.get(
                    "UNSUPPORTED_PROTOCOL_VERSION", INVALID_PARAMS
                ),
                f"Unsupported protocol version {version!r}",
                {"supported": [supported], "requested": version},
            )
        return cast(dict[str, Any], capabilities)

    def _tasks_not_declared(self, detail: str) -> JsonRpcError:
        """The error for ``detail`` (a Tasks request, a task-only tool, ...) in a
        request that did not declare the Tasks extension; the revision's adapter
        words it."""
        return JsonRpcError(
            self.tables.error_codes.get(
                "MISSING_REQUIRED_CLIENT_CAPABILITY", INVALID_REQUEST
            ),
            f"{detail} needs the {self.tables.extension_id} extension declared",
        )

    def _revision_routes(self) -> dict[str, Route]:
        """Methods of the revision that play no Tasks role, by name."""
        return {}

    def _role_routes(self) -> dict[str, Route]:
        """Tasks methods served by the runtime, by role (the revision's ``ROLES``); only
        the roles the schema has are served, so a method the schema adds with a known
        role gets its mechanism on regeneration."""
        return {
            "get": self._tasks_get,
            "cancel": self._tasks_cancel,
            "list": self._tasks_list,
            "update": self._tasks_update,
            "result": self._tasks_result,
        }

    def _respond(self, result: dict[str, Any]) -> dict[str, Any]:
        """Last touch on every result: the server's name and version in ``_meta``
        where the schema has a key for them."""
        key = self.tables.meta_keys.get("SERVER_INFO")
        if key is not None:
            meta = dict(result.get("_meta") or {})
            meta[key] = {"name": self.name, "version": self.version}
            result["_meta"] = meta
        return result

    def _complete(self, result: dict[str, Any]) -> dict[str, Any]:
        """Mark a result as final where results name their kind (the tables'
        ``result_kind_field``, ``resultType``)."""
        if self.tables.result_kind_field:
            result[self.tables.result_kind_field] = "complete"
        return result

    def _listing(self, tools: list[dict[str, Any]]) -> dict[str, Any]:
        """The ``tools/list`` result."""
        return {"tools": tools}

    def _tool_wire(self, tool: Tool) -> dict[str, Any]:
        """A ``Tool`` entry for ``tools/list``, with its ``execution.taskSupport`` where
        the client asks for a task (the tables' ``task_request_field``)."""
        wire: dict[str, Any] = {"name": tool.name, "inputSchema": tool.input_schema}
        if tool.title is not None:
            wire["title"] = tool.title
        if tool.description:
            wire["description"] = tool.description
        if self.tables.task_request_field:
            wire["execution"] = {"taskSupport": tool.task_support}
        return wire

    async def _preflight(
        self, call: Call, ctx: ToolContext, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        """A result that answers ``tools/call`` before any work, or None.

        Where results name their kind (multi-round-trip requests, MRTR), the call's
        ``inputResponses`` go to ``ctx.input_responses`` and the tool's preflight
        questions, if it asks any, are the ``input_required`` result.
        """
        kind = self.tables.result_kind_field
        if not kind:
            return None
        ctx.input_responses = self._input_responses(
            call.params.get("inputResponses", {})
        )
        if ctx.tool.preflight is None:
            return None
        requests = await ctx.tool.preflight(ctx, arguments)
        if not requests:
            return None
        for request in requests.values():
            method = str(request.get("method"))
            self._require_capability(ctx, method)
        return {kind: "input_required", "inputRequests": requests}

    def _task_request(self, call: Call, tool: Tool) -> tuple[bool, int | None]:
        """Whether ``tools/call`` runs as a task, and the TTL asked for.

        Where the client asks for a task (``params.<task_request_field>``, honoured
        only while the ``create`` capability is declared), the tool's ``taskSupport``
        must allow what it asked (else ``task_mismatch_code``). Elsewhere the server
        decides: a task whenever the request declared Tasks and the tool allows one;
        a task-only tool in a request that did not is ``_tasks_not_declared``.
        """
        field = self.tables.task_request_field
        if not field:
            if call.tasks and tool.task_support != "forbidden":
                return True, None
            if tool.task_support == "required":
                raise self._tasks_not_declared(f"tool {tool.name!r}")
            return False, None
        task = call.params.get(field) if self._declares("create") else None
        if task is not None and tool.task_support == "forbidden":
            raise JsonRpcError(
                self.task_mismatch_code,
                f"Tool {tool.name!r} does not support task-augmented calls",
            )
        if task is None and tool.task_support == "required":
            raise JsonRpcError(
                self.task_mismatch_code,
                "Task augmentation required for tools/call requests to tool"
                f" {tool.name!r}",
            )
        if task is None:
            return False, None
        if not isinstance(task, dict):
            raise JsonRpcError(INVALID_PARAMS, f"params.{field} must be an object")
        ttl = cast(dict[str, Any], task).get("ttl")
        if ttl is None:
            return True, None
        return True, json_integer(ttl, f"params.{field}.ttl")

    def _created(self, record: TaskRecord, ctx: ToolContext) -> dict[str, Any]:
        """The create result of a new task, as the schema's model has it: the task
        under ``task`` or its fields inline, and the tool's ``immediate_response`` in
        ``_meta`` where the schema has that key."""
        model = self.tables.create_result
        created: dict[str, Any] = (
            {"task": self._task_model(record)}
            if "task" in model.model_fields
            else self._task_values(record)
        )
        immediate = self.tables.meta_keys.get("MODEL_IMMEDIATE_RESPONSE")
        if immediate is not None and ctx.tool.immediate_response is not None:
            created["meta"] = {immediate: ctx.tool.immediate_response}
        return _through(model, created)

    def _failed_result(self, result: dict[str, Any]) -> bool:
        """Whether a tool's ``CallToolResult`` fails its task (else it completes)."""
        return False

    def _status_payload(self, record: TaskRecord) -> dict[str, Any]:
        """Fields of the record's status variant beyond the common task fields: its
        ``inputRequests``, ``result`` or ``error``, as far as the variant's class has
        them (a required one is always filled in)."""
        fields = self.tables.task_by_status[record.status].model_fields
        payload: dict[str, Any] = {}
        if "input_requests" in fields:
            payload["input_requests"] = dict(record.input_requests)
        if "result" in fields and (record.result or fields["result"].is_required()):
            payload["result"] = record.result or {}
        if "error" in fields and (record.error or fields["error"].is_required()):
            fallback = {
                "code": INTERNAL_ERROR,
                "message": record.status_message or "Task failed",
            }
            payload["error"] = record.error or fallback
        return payload

    async def _cancel_result(
        self, cancelled: TaskRecord | None, record: TaskRecord, principal: str | None
    ) -> dict[str, Any]:
        """The cancel role's result (``cancelled`` is None when it was too late).

        Where the schema's result carries the task, it is the cancelled task, and a
        task that already was terminal is ``-32602`` (there is no cancelled task to
        report); otherwise the result is empty and cancelling is idempotent.
        """
        if not self.tables.result_carries_task("cancel"):
            return self._complete({})
        if cancelled is not None:
            return self._complete(self._task(cancelled))
        if not record.is_terminal:  # it ended while we tried
            record = await self._lookup(record.task_id, principal)
        raise JsonRpcError(
            INVALID_PARAMS,
            f"Cannot cancel task: already in terminal status {record.status!r}",
        )

    def _task_ended(self, task_id: str) -> None:
        """Called when a task's local worker stops."""
        self._channels.pop(task_id, None)

    async def _custom(self, call: Call) -> dict[str, Any]:
        """Serve ``method`` with its registered handler, or answer ``-32601``.

        A method of the schema that the runtime has no role for is served only once a
        handler is registered (``server.TasksServer.on_<method>``); until then it is
        "Method not found", as for a method the schema does not have.
        """
        handler = self.custom_handlers.get(call.method)
        if handler is None:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {call.method}")
        try:
            return await handler(
                call.params,
                HandlerContext(principal=call.principal, request=call.request),
            )
        except ValueError as error:  # pydantic's ValidationError of the params
            raise JsonRpcError(
                INVALID_PARAMS, f"Invalid params for {call.method}: {error}"
            ) from None

    # -- input: the mechanism follows the schema's roles --------------------------

    async def request_input(
        self, ctx: ToolContext, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask the client for input mid-flight and wait for the answer.

        Without a task, ``_input_without_task`` (the revision's way). As a task, the
        schema decides: with an update role whose input status variant carries
        ``inputRequests``, the task shows the request under a new key until the client
        answers with the update method (``wait_for_input``); else, with a result role,
        the request goes to the client as a server-to-client request on the result
        role's stream, or the session's GET stream (``_ask_on_streams``); the task is
        ``input_required`` meanwhile. Raises ``-32601`` when the schema has neither,
        the revision's missing-capability error when the client did not declare the
        capability the request needs, and ``-32602`` for a request the schema does not
        allow.
        """
        if ctx.task_id is None:
            return await self._input_without_task(ctx, method, params)
        if ctx.settling is not None:  # the client answers through the task
            ctx.settling.set()
        input_variant = self.tables.task_by_status[self.tables.input_required]
        by_update = (
            self.tables.has_role("update")
            and "input_requests" in input_variant.model_fields
        )
        if not by_update and not self.tables.has_role("result"):
            raise JsonRpcError(
                METHOD_NOT_FOUND,
                f"{method}: this schema has neither an update nor a result method to"
                " answer input requests through",
            )
        self._require_capability(ctx, method)
        if not by_update:
            return await self._ask_on_streams(ctx, ctx.task_id, method, params)
        prefix = method.split("/")[0]
        key = f"{prefix}-{secrets.token_hex(8)}"
        while key in ctx.issued_keys:
            key = f"{prefix}-{secrets.token_hex(8)}"
        ctx.issued_keys.add(key)
        return await self.wait_for_input(
            ctx.task_id, key, {"method": method, "params": params}
        )

    async def _input_without_task(
        self, ctx: ToolContext, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """An input request of a tool not running as a task: a server-to-client request
        on the call's own response stream. Where results name their kind, a call asks
        its questions by MRTR preflight instead, so only a task asks mid-flight (the
        request did not declare Tasks: ``_tasks_not_declared``)."""
        if self.tables.result_kind_field:
            raise self._tasks_not_declared(f"tool {ctx.tool.name!r} asking for input")
        self._require_capability(ctx, method)
        if ctx.emit is None:
            raise JsonRpcError(
                INTERNAL_ERROR, f"No response stream to send {method} on"
            )
        return await self.request_on_stream(
            ctx.emit,
            method,
            params,
            principal=ctx.principal,
            session_id=ctx.session.id if ctx.session is not None else None,
        )

    def _require_capability(self, ctx: ToolContext, method: str) -> None:
        """Refuse an input request ``method`` of ``ctx`` whose capability its client did
        not declare: the revision's ``MISSING_REQUIRED_CLIENT_CAPABILITY`` naming it in
        ``data.requiredCapabilities`` where its error codes have one, else ``-32600``.
        """
        capability = missing_capability(method, ctx.client_capabilities)
        if capability is None:
            return
        code = self.tables.error_codes.get("MISSING_REQUIRED_CLIENT_CAPABILITY")
        if code is not None:
            raise JsonRpcError(
                code,
                f"Missing required client capability: {method} needs {capability!r}"
                " in the client's capabilities",
                {"requiredCapabilities": {capability: {}}},
            )
        raise JsonRpcError(
            INVALID_REQUEST,
            f"The client did not declare the {capability!r} capability that"
            f" {method} needs",
        )

    async def wait_for_input(
        self, task_id: str, key: str, request: dict[str, Any]
    ) -> dict[str, Any]:
        """Publish one input request under ``key`` in the task's ``inputRequests`` and
        wait for its answer through the update role.

        The task is ``input_required`` while any key is outstanding.
        """
        answer: asyncio.Future[dict[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )
        self._answers[(task_id, key)] = answer
        input_required = self.tables.input_required
        try:

            def ask(record: TaskRecord) -> dict[str, Any]:
                asking = {**record.input_requests, key: request}
                try:  # refuse what the schema does not allow before the task shows it
                    self._task_model(
                        replace(record, status=input_required, input_requests=asking)
                    )
                except ValueError as error:
                    raise JsonRpcError(
                        INVALID_PARAMS, f"Invalid input request: {error}"
                    ) from None
                # answers the local worker already took are dropped from the task
                waiting = {
                    k: v
                    for k, v in record.answers.items()
                    if (task_id, k) in self._answers
                    and not self._answers[(task_id, k)].done()
                }
                return {
                    "status": input_required,
                    "input_requests": asking,
                    "answers": waiting,
                }

            asked = await self._mutate(task_id, ask)
            if asked is None:
                raise asyncio.CancelledError  # the task already ended
            return await answer
        finally:
            self._answers.pop((task_id, key), None)

    async def _tasks_update(self, call: Call) -> dict[str, Any]:
        """The update role: store answers for outstanding keys; ignore every other
        key."""
        task_id = task_id_param(call.params)
        responses = self._input_responses(call.params.get("inputResponses"))
        await self._lookup(task_id, call.principal)
        answered: dict[str, dict[str, Any]] = {}

        def answer(record: TaskRecord) -> dict[str, Any] | None:
            answered.clear()
            for key, value in responses.items():
                asked: Any = record.input_requests.get(key)
                if not isinstance(asked, dict):
                    continue  # unknown, answered or superseded: ignored
                request = cast(dict[str, Any], asked)
                params: Any = request.get("params")
                try:
                    answered[key] = check_answer(
                        str(request.get("method")),
                        (
                            cast(dict[str, Any], params)
                            if isinstance(params, dict)
                            else {}
                        ),
                        value,
                        self.tables.models,
                    )
                except JsonRpcError as error:  # nothing is stored; the key stays open
                    raise JsonRpcError(
                        INVALID_PARAMS, f"inputResponses[{key!r}]: {error.message}"
                    ) from None
            if not answered:
                return None
            remaining = {
                k: v for k, v in record.input_requests.items() if k not in answered
            }
            status = self.tables.input_required if remaining else self.tables.working
            # kept in the task too: the worker's replica may miss the signal below
            stored = {**record.answers, **answered}
            return {"status": status, "input_requests": remaining, "answers": stored}

        if await self._mutate(task_id, answer) is None:
            answered.clear()
        if self._deliver_answers(task_id, answered):
            # some waiting worker runs on another replica
            await self._signal("answers", task_id, answers=answered)
        return self._complete({})

    def _deliver_answers(self, task_id: str, answers: dict[str, Any]) -> bool:
        """Hand answers to the local ``wait_for_input`` calls; True if any was not
        here."""
        elsewhere = False
        for key, value in answers.items():
            future = self._answers.get((task_id, key))
            if future is None:
                elsewhere = True
            elif not future.done():
                future.set_result(cast(dict[str, Any], value))
        return elsewhere

    async def _ask_on_streams(
        self, ctx: ToolContext, task_id: str, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Send a task's input request to the client and wait for its result.

        The request (with the related-task ``_meta``, where the schema has that key)
        goes out on the client's streams as ``_Channel`` tells, until it is answered;
        the task works again once every outstanding request is answered. Raises
        ``JsonRpcError`` when the client answered with an error.
        """
        params = self._related(params, task_id)
        request_id, message, pending = self._new_request(method, params, ctx.principal)
        channel = self._channels.setdefault(task_id, _Channel())
        channel.session = ctx.session
        channel.principal = ctx.principal
        channel.outstanding[request_id] = message
        try:
            if await self._update(task_id, status=self.tables.input_required) is None:
                raise asyncio.CancelledError  # the task already ended
            self._push_input(channel)
            result = await pending.reply
        finally:
            self._replies.pop(request_id, None)
            channel.outstanding.pop(request_id, None)
            channel.carriers.pop(request_id, None)
        if not channel.outstanding:
            await self._update(task_id, status=self.tables.working)
        return result

    def _push_input(self, channel: _Channel) -> None:
        """Send a task's requests that no stream carries on a GET stream of its session
        or, when that has none open, of each other session of its principal with one
        (none while a result-role stream is open to carry them); those sessions may
        answer them."""
        if channel.readers:
            return
        waiting = [
            (request_id, message)
            for request_id, message in channel.outstanding.items()
            if not channel.carriers.get(request_id) and request_id in self._replies
        ]
        if not waiting:
            return
        listeners: list[Session] = []
        if channel.session is not None and channel.session.streaming:
            listeners.append(channel.session)
        elif channel.principal is not None:
            owner = self._session_owner(channel.principal, None)
            for session_id in self._session_owners.get(owner, ()):
                session = self.sessions.get(session_id)
                if (
                    session is not None
                    and session.streaming
                    and session.principal == channel.principal
                ):
                    listeners.append(session)
        for session in listeners:
            for request_id, message in waiting:
                session.send(message)
                self._replies[request_id].sessions.add(session.id)
                channel.carriers[request_id] = channel.carriers.get(request_id, 0) + 1

    async def _tasks_result(self, call: Call) -> dict[str, Any]:
        """The result role: block until the task is terminal, carrying its input
        requests on this stream; then replay the outcome (the stored error, or the
        result with the related-task ``_meta`` where the schema has that key)."""
        task_id = task_id_param(call.params)
        await self._lookup(task_id, call.principal)
        sent: set[str] = set()
        channel = self._channels.setdefault(task_id, _Channel())
        # an anonymous task's requests go only to the session that created it
        carries = call.emit is not None and (
            call.principal is not None
            or call.session is self._task_sessions.get(task_id)
        )
        if carries:
            channel.readers += 1
        try:
            while True:
                channel.changed.clear()  # before reading, so no change is missed
                record = await self._lookup(task_id, call.principal)
                if record.is_terminal:
                    break
                for request_id, message in list(channel.outstanding.items()):
                    if (
                        call.emit is not None
                        and carries
                        and request_id not in sent
                        and request_id in channel.outstanding  # not answered since
                    ):
                        sent.add(request_id)
                        channel.carriers[request_id] = (
                            channel.carriers.get(request_id, 0) + 1
                        )
                        pending = self._replies.get(request_id)
                        if pending is not None:  # only this session may answer it
                            pending.sessions.add(call.request.session_id)
                        await call.emit(message)
                if not self._started:
                    raise JsonRpcError(INTERNAL_ERROR, "Server is shutting down")
                await channel.changed.wait()
        finally:
            if carries:
                channel.readers -= 1
            if not channel.outstanding and task_id not in self._contexts:
                self._channels.pop(task_id, None)
            else:  # what no result-role stream carries now goes to the GET stream
                self._push_input(channel)
        self._emit_audit("result_retrieved", task_id, call.principal)
        if record.error is not None:
            stored = record.error
            raise JsonRpcError(
                int(stored.get("code", INTERNAL_ERROR)),
                str(stored.get("message", "")),
                stored.get("data"),
            )
        if record.result is None:
            raise JsonRpcError(INTERNAL_ERROR, "Task was cancelled; it has no result")
        return self._complete(self._related(record.result, task_id))

    def _related(self, message: dict[str, Any], task_id: str) -> dict[str, Any]:
        """A copy of ``message`` (request params or a result) whose ``_meta`` names the
        task under the schema's related-task key (unchanged without one)."""
        key = self.tables.meta_keys.get("RELATED_TASK")
        if key is None:
            return dict(message)
        return {
            **message,
            "_meta": {**message.get("_meta", {}), key: {"taskId": task_id}},
        }

    async def send_progress(
        self,
        ctx: ToolContext,
        progress: float,
        total: float | None,
        message: str | None,
    ) -> None:
        """``notifications/progress`` on the call's stream or, for a task, on the stream
        of the session that created it (dropped where there is no session)."""
        params: dict[str, Any] = {
            "progressToken": ctx.progress_token,
            "progress": progress,
        }
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        notification = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": params,
        }
        if ctx.task_id is None:
            if ctx.emit is not None:
                await ctx.emit(notification)
        elif ctx.session is not None:
            ctx.session.notify(notification)

    async def set_task_fields(self, task_id: str, fields: TaskFields) -> None:
        """Store values of ``protocol.TaskFields`` on a live task, by wire name."""
        values = cast(dict[str, Any], fields)
        extras = self.tables.task_extra_fields
        unknown = sorted(set(values) - set(extras))
        if unknown:
            raise ValueError(f"not a task field of this schema: {', '.join(unknown)}")
        await self._mutate(
            task_id,
            lambda record: {
                "extra": {
                    **record.extra,
                    **{extras[k]: v for k, v in values.items()},
                }
            },
        )

    def http_status(self, code: int) -> int:
        """The HTTP status the revision gives an error response with ``code`` (its
        ``http_statuses`` table; 200 for a code it does not list). A refused limit
        (``limits.limit_error_code``, whatever it is set to) has the status of
        ``LIMIT_EXCEEDED``: 429 where the revision lists it."""
        if code == self.limits.limit_error_code:
            code = LIMIT_EXCEEDED
        return self.tables.http_statuses.get(code, 200)

    # -- registration -------------------------------------------------------

    def add_tool(self, tool: Tool) -> None:
        """Register a tool (replacing one with the same name)."""
        self._tools[tool.name] = tool

    def tool(
        self,
        name: str | None = None,
        *,
        description: str = "",
        title: str | None = None,
        input_schema: dict[str, Any] | None = None,
        task_support: TaskSupport = "optional",
        preflight: Preflight | None = None,
        immediate_response: str | None = None,
        answer_within_ms: int | None = None,
    ) -> Callable[[ToolHandler], ToolHandler]:
        """Decorator registering ``async def handler(ctx, arguments)`` as a tool."""

        def register(handler: ToolHandler) -> ToolHandler:
            self.add_tool(
                Tool(
                    name=name or handler.__name__,
                    handler=handler,
                    description=description or (handler.__doc__ or "").strip(),
                    title=title,
                    input_schema=(
                        input_schema
                        if input_schema is not None
                        else {"type": "object", "properties": {}}
                    ),
                    task_support=task_support,
                    preflight=preflight,
                    immediate_response=immediate_response,
                    answer_within_ms=answer_within_ms,
                )
            )
            return handler

        return register

    @property
    def tools(self) -> list[Tool]:
        """The registered tools, in registration order."""
        return list(self._tools.values())

    def share_tools(self, other: TaskServerCore) -> None:
        """Serve the tools of ``other``, now and as it registers more (one set of tools
        for the servers of several revisions)."""
        self._tools = other._tools

    # -- lifecycle -----------------------------------------------------------

    async def start(self) -> None:
        """Open the store, fail tasks orphaned by a crash and start the TTL sweeper.

        With a ``ReplicaStore`` (several replicas sharing one store), orphans are the
        unfinished tasks whose worker lease ran out; they are failed now and whenever
        the periodic lease check finds more, and the server subscribes to the other
        replicas' signals. With any other store, orphans are every unfinished task,
        which is right when this process is the store's only server; with
        ``recover_orphans=False`` they are left alone.
        """
        if self._started:
            return
        self._started = True
        await self.store.open()
        store = self.store
        if isinstance(store, ReplicaStore):
            await store.subscribe(self._on_signal)
            await self.fail_lost_tasks()
            self._lease_keepers = [
                asyncio.create_task(
                    self._every(
                        lambda: self.limits.lease_s / 3,
                        lambda: self._renew_leases(store),
                        "renewing worker leases",
                    )
                ),
                asyncio.create_task(
                    self._every(
                        lambda: self.limits.lease_s / 3,
                        self.fail_lost_tasks,
                        "checking worker leases",
                    )
                ),
            ]
        elif self.recover_orphans:
            await self._recover()
        self._sweeper = asyncio.create_task(
            self._every(
                lambda: self.limits.sweep_interval_s,
                self.purge_expired,
                "purging expired tasks",
            )
        )

    async def close(self) -> None:
        """Stop the sweeper and every worker, then close the store (if ``owns_store``).

        Every worker is stopped at once (it sees ``CancelledError``; a tool that
        returns its result even so completes its task) and given
        ``_CLOSE_WORKERS_S`` to end. The tasks still unfinished are then marked
        ``failed`` ("Server shut down before the task finished"), so that no task is
        left ``working`` with nobody to finish it: in one write where the store has
        ``transition_many`` (the memory and SQLite stores), else one by one. That
        takes at most ``_CLOSE_FAILING_S``: a task not failed by then (a slow or
        unreachable store) stays unfinished, to be failed by the next start on a
        store of its own (``recover_orphans``) or by another replica's lease check
        on a shared one (``Limits.lease_s``).
        """
        if not self._started:
            return
        self._started = False
        background = [*self._lease_keepers]
        if self._sweeper is not None:
            background.append(self._sweeper)
        for job in background:
            job.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        self._lease_keepers = []
        await asyncio.gather(*self._expiring, return_exceptions=True)
        workers = dict(self._workers)
        for worker in workers.values():
            worker.cancel()
        if workers:
            await asyncio.wait(workers.values(), timeout=_CLOSE_WORKERS_S)
            try:
                await asyncio.wait_for(
                    self._fail_unfinished(list(workers), _SHUT_DOWN),
                    _CLOSE_FAILING_S,
                )
            except asyncio.TimeoutError:
                _log.warning(
                    "shutting down: tasks whose worker stopped were not all marked"
                    " failed within %.1f s; the rest stay unfinished",
                    _CLOSE_FAILING_S,
                )
            except StoreUnavailable:  # logged by the store
                pass
        await self._on_close()
        if self.owns_store:
            await self.store.close()

    async def _fail_unfinished(self, task_ids: list[str], message: str) -> None:
        """Mark every unfinished task of ``task_ids`` failed with ``message``: in one
        ``transition_many`` where the store has it, else one by one (``_finish``)."""
        store = self.store
        error = JsonRpcError(INTERNAL_ERROR, message)
        if not isinstance(store, BatchTransitionStore):
            for task_id in task_ids:
                await self._finish(
                    task_id, self.tables.failed, error=error, status_message=message
                )
            return
        pending: list[str] = task_ids
        for _ in range(_MAX_WRITE_ATTEMPTS):
            changes: list[tuple[frozenset[str], TaskRecord, float | None]] = []
            for task_id in pending:
                record = await store.get(task_id)
                if record is None or record.is_terminal:
                    continue
                failed = replace(
                    record,
                    status=self.tables.failed,
                    status_message=message,
                    error=error.to_wire(),
                    input_requests={},
                    updated_at=max(time.time(), record.updated_at + 0.001),
                )
                changes.append((frozenset({record.status}), failed, record.updated_at))
            if not changes:
                return
            written = await store.transition_many(changes)
            pending = []
            for (_, failed, _), stored in zip(changes, written, strict=True):
                if stored:
                    await self._announce(failed)
                    self._emit_audit(failed.status, failed.task_id, failed.owner)
                else:  # changed since it was read (a stopped worker's last write)
                    pending.append(failed.task_id)

    async def __aenter__(self: _Server) -> _Server:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _on_close(self) -> None:
        """Run by ``close`` before the store closes: end every session's streams, wake
        every result-role waiter and end every subscription gracefully."""
        for session_id in list(self.sessions):
            self.close_session(session_id)
        for channel in self._channels.values():
            channel.changed.set()
        for listeners in self._listeners.values():
            for subscription in listeners:
                subscription.close()

    def mount(self, sdk_server: Any) -> None:
        """Serve the tools and the Tasks methods from an official SDK's low-level
        ``Server``.

        On ``mcp`` 2.x (the Tasks extension), a ``Server.middleware`` entry answers
        ``tools/list``, ``tools/call`` and ``tasks/*`` through ``handle`` (with the HTTP
        headers, so routing headers and ``authenticate`` work), the SDK's
        ``server/discover`` advertises the extension, and the SDK server's lifespan
        starts and closes this server; everything else stays with the SDK. Needs
        ``mcp>=2.3``.

        On ``mcp`` 1.x (2025-11-25), request handlers answer ``tools/list``,
        ``tools/call`` and the ``tasks/*`` requests through ``handle``, and the SDK's
        capabilities gain ``tasks``. Input requests of a task travel on the pending
        ``tasks/result`` response stream, as the SDK's ``related_request_id`` routes
        them. The SDK runs its lifespan once per session, so start and close this
        server in the application's lifespan (for example next to
        ``StreamableHTTPSessionManager.run()``). Needs ``mcp>=1.23,<2``.

        The SDK is imported here, never at import time.
        """
        sdk: Any = importlib.import_module(".sdk", __package__)
        sdk.mount(self, sdk_server)

    def capabilities(self) -> dict[str, Any]:
        """The server capabilities: a fixed tool list, the Tasks extension where
        Tasks are one (the tables' ``extension_id``), and the path of each role the
        tables' ``server_capabilities`` lists wherever this server serves that role
        (``_serves``)."""
        declared: dict[str, Any] = {"tools": {"listChanged": False}}
        if self.tables.extension_id:
            declared["extensions"] = {self.tables.extension_id: {}}
        for role, path in self.tables.server_capabilities.items():
            if self._serves(role):
                node = declared
                for key in path:
                    node = node.setdefault(key, {})
        return declared

    def _serves(self, role: str) -> bool:
        """Whether this server serves ``role``: ``create`` while some tool may run as a
        task; a method's role where the schema has it (``list`` with ``enable_list``).
        """
        if role == "create":
            return any(t.task_support != "forbidden" for t in self._tools.values())
        return self.tables.has_role(role) and (role != "list" or self.enable_list)

    def _declares(self, role: str) -> bool:
        """Whether ``capabilities()`` declares ``role`` (True for a role the tables list
        no capability for)."""
        node: Any = self.capabilities()
        for key in self.tables.server_capabilities.get(role, ()):
            if not isinstance(node, dict) or key not in node:
                return False
            node = cast(dict[str, Any], node)[key]
        return True

    async def _recover(self) -> None:
        """Mark every unfinished task failed: its worker died with the previous
        process."""
        for record in await self.store.unfinished():
            error = JsonRpcError(
                INTERNAL_ERROR,
                "Task worker stopped unexpectedly (the server restarted before the"
                " task finished)",
            )
            await self._save(
                record,
                status=self.tables.failed,
                status_message=error.message,
                error=error.to_wire(),
                input_requests={},
            )
            self._emit_audit("recovered_as_failed", record.task_id, record.owner)

    @property
    def _lease_ms(self) -> int:
        """``limits.lease_s`` in milliseconds."""
        return max(1, round(self.limits.lease_s * 1000))

    async def _every(
        self,
        wait: Callable[[], float],
        job: Callable[[], Awaitable[object]],
        what: str,
    ) -> None:
        """Run ``job`` forever, ``wait()`` seconds apart (lease rounds, the TTL sweep).

        A store outage (which the store logs once) or any other failure (logged here)
        never ends the loop: the next round tries again.
        """
        while True:
            await asyncio.sleep(wait())
            try:
                await job()
            except StoreUnavailable:  # the store logged the outage; retry next round
                pass
            except Exception:  # keep going after a store failure
                _log.exception("%s failed", what)

    async def _renew_leases(self, store: ReplicaStore) -> None:
        """One lease round: renew the leases of this replica's running tasks.

        The round also catches up with signals that were lost (pub/sub delivers at
        most once; see ``_resync``).
        """
        await store.hold_leases(list(self._workers), self.replica_id, self._lease_ms)
        await self._resync()

    def _ttl_margin_s(self, ttl_ms: int) -> float:
        """How long before its TTL (``ttl_ms``) runs out a task still running here is
        failed: the poll interval (at least a second), so that a client polling as
        suggested sees the failure before the task expires, but at most a third of
        the TTL."""
        poll_s = (self.limits.poll_interval_ms or 0) / 1000
        return min(max(1.0, poll_s), ttl_ms / 3000)

    async def fail_lost_tasks(self) -> list[str]:
        """Fail every unfinished task whose worker lease ran out; return their IDs.

        Only a ``ReplicaStore`` has leases; with any other store this does nothing.
        Each failure is an atomic transition, so a worker finishing the task at the
        same moment on another replica either wins or loses as a whole.
        """
        store = self.store
        if not isinstance(store, ReplicaStore):
            return []
        candidates = [
            record
            for record in await store.unfinished()
            if record.task_id not in self._workers
        ]
        live = await store.leased([record.task_id for record in candidates])
        failed: list[str] = []
        for record, leased in zip(candidates, live, strict=True):
            if leased:
                continue
            error = JsonRpcError(INTERNAL_ERROR, _LOST_WORKER)
            if (
                await self._finish(
                    record.task_id,
                    self.tables.failed,
                    error=error,
                    status_message=_LOST_WORKER,
                )
                is not None
            ):
                failed.append(record.task_id)
                self._emit_audit("lease_expired", record.task_id, record.owner)
        return failed

    async def _signal(self, kind: str, task_id: str, **data: Any) -> None:
        """Tell the other replicas (if the store has any), or else the siblings, about
        ``task_id``.

        Best effort: a failure is logged, since the change itself is already stored.
        """
        store = self.store
        if not isinstance(store, ReplicaStore):
            # the same store in the same process (a dual server): tell them directly
            for sibling in self.siblings:
                await sibling._on_signal(
                    {"from": self.replica_id, "kind": kind, "taskId": task_id, **data}
                )
            return
        try:
            await store.publish(
                {"from": self.replica_id, "kind": kind, "taskId": task_id, **data}
            )
        except StoreUnavailable:  # logged by the store; resync recovers the signal
            _log.debug("publishing a %s signal for task %s failed", kind, task_id)
        except Exception:  # the store holds the truth; a lost signal is recoverable
            _log.exception("publishing a %s signal for task %s failed", kind, task_id)

    async def _on_signal(self, signal: Signal) -> None:
        """Act on a signal from another replica: status change or cancellation."""
        kind = signal.get("kind")
        if kind == "resync":
            await self._resync()
            return
        task_id = signal.get("taskId")
        if signal.get("from") == self.replica_id or not isinstance(task_id, str):
            return
        if kind == "status":
            record: Any = signal.get("record")
            if isinstance(record, dict):
                await self._published(TaskRecord(**cast(dict[str, Any], record)))
        elif kind == "cancel":
            self._cancelled_elsewhere(task_id)
        else:
            self._on_revision_signal(kind, task_id, signal)

    async def _resync(self) -> None:
        """Catch up with the store for every local worker, as signals may be lost.

        Run after the signal channel reconnects and at every lease round. A worker
        whose task ended elsewhere is stopped (not one whose tool returned: the
        terminal state read may be the one it is storing, which it has yet to
        announce, and it ends by itself); one waiting for input gets the answers
        stored in its task (``_stored_answers``), in case the answer signal never
        arrived; the subscriptions following tasks that run elsewhere get their
        stored state (``_catch_up_followers``).
        """
        for task_id in list(self._workers):
            record = await self.store.get(task_id)
            if record is None or record.is_terminal:
                if task_id not in self._storing:
                    self._cancelled_elsewhere(task_id)
                continue
            if record.answers:
                self._stored_answers(record)
        await self._catch_up_followers()

    async def _catch_up_followers(self) -> None:
        """Give every followed task that runs elsewhere its stored state, in case its
        status signal was lost: a subscription that already has that state drops
        it (``_Subscription.offer``), one that missed it gets it now."""
        for task_id in [t for t in self._listeners if t not in self._workers]:
            record = await self.store.get(task_id)
            listeners = self._listeners.get(task_id)
            if record is not None and listeners:
                task = self._task(record)
                for subscription in listeners:
                    subscription.offer(record, task)

    def _ttl_due(self, task_id: str, owner: str | None) -> None:
        """Timer of a local worker: its TTL runs out within ``_ttl_margin_s``."""
        if self._started and task_id in self._workers:
            expiring = asyncio.create_task(self._fail_before_expiry(task_id, owner))
            self._expiring.add(expiring)
            expiring.add_done_callback(self._expiring.discard)

    async def _fail_before_expiry(self, task_id: str, owner: str | None) -> None:
        """Fail a task still running here whose TTL is about to run out, and stop its
        worker, so that no task expires without a terminal status (on every store).

        The failed task stays readable until its TTL runs out, then the sweeper
        deletes it like any other.
        """
        error = JsonRpcError(INTERNAL_ERROR, _TTL_RAN_OUT)
        try:
            failed = await self._finish(
                task_id, self.tables.failed, error=error, status_message=_TTL_RAN_OUT
            )
        except StoreUnavailable:  # logged by the store
            return
        except Exception:  # a timer has no caller to report to
            _log.exception("failing task %s before its TTL ran out failed", task_id)
            return
        finally:
            self._stop_worker(task_id)
        if failed is not None:
            self._emit_audit("ttl_ran_out", task_id, owner)

    def _stored_answers(self, record: TaskRecord) -> None:
        """Answers stored in the task for a worker here that missed their signal."""
        self._deliver_answers(record.task_id, record.answers)

    def _on_revision_signal(self, kind: Any, task_id: str, signal: Signal) -> None:
        """Answers given through another replica for a worker running here."""
        answers: Any = signal.get("answers")
        if kind == "answers" and isinstance(answers, dict):
            self._deliver_answers(task_id, cast(dict[str, Any], answers))

    async def purge_expired(self) -> list[str]:
        """Delete every task whose TTL has elapsed (stopping its worker); return their
        IDs.

        With a ``ReplicaStore`` the local workers of tasks that another replica's
        sweep already deleted are stopped as well.
        """
        expired = await self.store.expired(time.time())
        for task_id in expired:
            worker = self._workers.pop(task_id, None)
            if worker is not None:
                worker.cancel()
            self._emit_audit("expired", task_id, None)
        await self.store.delete(expired)
        for task_id in expired:
            self._purged(task_id)
        if isinstance(self.store, ReplicaStore):
            # another replica's sweep may have deleted tasks whose worker runs here
            await self._resync()
        return expired

    def _purged(self, task_id: str) -> None:
        """Called for each task deleted after its TTL: wake its result-role waiters
        (they answer not-found)."""
        channel = self._channels.pop(task_id, None)
        if channel is not None:
            channel.changed.set()
        self._task_sessions.pop(task_id, None)

    # -- the Tasks flow ---------------------------------------------------------

    async def _ping(self, call: Call) -> dict[str, Any]:
        return self._complete({})

    async def _tools_list(self, call: Call) -> dict[str, Any]:
        return self._listing([self._tool_wire(tool) for tool in self._tools.values()])

    async def _call_tool(self, call: Call) -> dict[str, Any]:
        """Run a tool synchronously, or create a task and run it in the background."""
        tool, arguments = self._tool(call.params)
        meta = call.params.get("_meta")
        token = (
            cast(dict[str, Any], meta).get("progressToken")
            if isinstance(meta, dict)
            else None
        )
        ctx = ToolContext(
            self,
            tool=tool,
            principal=call.principal,
            client_capabilities=call.capabilities,
            session=call.session,
            progress_token=token if isinstance(token, (str, int)) else None,
            emit=call.emit,
        )
        asked = await self._preflight(call, ctx, arguments)
        if asked is not None:
            return asked
        as_task, ttl = self._task_request(call, tool)
        if not as_task:
            try:
                result = tool_result(await tool.handler(ctx, arguments))
            except ToolError as error:
                result = text_result(str(error), is_error=True)
            self._check_result(tool, result, stored=False)
            return self._complete(result)
        record = await self._new_task(tool, call.principal, ttl)
        ctx.task_id = record.task_id
        self._contexts[record.task_id] = ctx
        if ctx.session is not None:  # it gets the task's status notifications
            self._task_sessions[record.task_id] = ctx.session
        self._spawn(record, self._work(record.task_id, ctx, arguments))
        within_ms = self._answer_within_ms(tool)
        if within_ms > 0:
            answer = await self._answer_inline(record, ctx, within_ms)
            if answer is not None:
                return answer
        return self._created(record, ctx)

    def _answer_within_ms(self, tool: Tool) -> int:
        """How long a call of ``tool`` that runs as a task may wait for its result to
        answer with it instead of the task: ``Tool.answer_within_ms``, else
        ``Limits.answer_within_ms``; 0 where the client asked for the task (the
        revision's ``task_request_field``: it must get one)."""
        if self.tables.task_request_field:
            return 0
        if tool.answer_within_ms is not None:
            return tool.answer_within_ms
        return self.limits.answer_within_ms

    async def _answer_inline(
        self, record: TaskRecord, ctx: ToolContext, within_ms: int
    ) -> dict[str, Any] | None:
        """The new task's outcome when its tool finishes within ``within_ms``: its
        result, or its JSON-RPC error raised; the task is then deleted (the client
        never learns of it). None when the tool is still running, asks for input or
        ended otherwise (cancelled, say): the call is answered with the task."""
        task_id = record.task_id
        worker = self._workers.get(task_id)
        if worker is None:
            return None
        settling = ctx.settling = asyncio.Event()
        worker.add_done_callback(lambda _: settling.set())
        try:
            await asyncio.wait_for(settling.wait(), within_ms / 1000)
        except asyncio.TimeoutError:
            return None
        finally:
            ctx.settling = None
        if not worker.done():  # it asks for input
            return None
        ended = await self.store.get(task_id)
        if ended is None:
            return None
        error = ended.error
        if ended.status == self.tables.completed and ended.result is not None:
            answer: dict[str, Any] | None = dict(ended.result)
        elif ended.status == self.tables.failed and error is not None:
            answer = None
        else:
            return None
        await self.store.delete([task_id])
        self._emit_audit("answered_inline", task_id, ended.owner)
        if answer is None:
            assert error is not None
            raise JsonRpcError(error["code"], error["message"], error.get("data"))
        return answer

    async def _work(
        self, task_id: str, ctx: ToolContext, arguments: dict[str, Any]
    ) -> None:
        """Run a tool as a task and store its outcome.

        A result completes the task (or fails it, keeping the result, where the
        revision says an ``isError`` result does); a ``JsonRpcError`` or an unexpected
        exception fails it with that error.
        """
        try:
            try:
                try:
                    result = tool_result(await ctx.tool.handler(ctx, arguments))
                finally:  # from here on the worker stores the outcome (see _resync)
                    self._storing.add(task_id)
            except ToolError as error:
                result = text_result(str(error), is_error=True)
            except JsonRpcError as error:
                await self._finish(task_id, self.tables.failed, error=error)
                return
            except Exception as exc:  # the tool's bug must not kill the server
                _log.exception("tool %s failed", ctx.tool.name)
                internal = JsonRpcError(
                    INTERNAL_ERROR,
                    f"Internal error in tool {ctx.tool.name!r}: {type(exc).__name__}",
                )
                await self._finish(task_id, self.tables.failed, error=internal)
                return
            result = self._complete(result)
            try:
                self._check_result(ctx.tool, result, stored=True)
            except JsonRpcError as error:
                await self._finish(task_id, self.tables.failed, error=error)
                return
            if not self._failed_result(result):
                await self._finish(task_id, self.tables.completed, result=result)
                return
            blocks: list[Any] = result.get("content", [])
            texts = [
                str(cast(dict[str, Any], block)["text"])
                for block in blocks
                if isinstance(block, dict) and "text" in block
            ]
            message = "Tool reported an error: " + (" ".join(texts) or "no details")
            await self._finish(
                task_id, self.tables.failed, result=result, status_message=message
            )
        finally:
            ctx.finished = True
            self._storing.discard(task_id)
            self._contexts.pop(task_id, None)
            self._task_ended(task_id)

    async def _tasks_get(self, call: Call) -> dict[str, Any]:
        """The task's current state (the variant of its status)."""
        record = await self._lookup(task_id_param(call.params), call.principal)
        self._emit_audit("retrieved", record.task_id, call.principal)
        return self._complete(self._task(record))

    async def _tasks_cancel(self, call: Call) -> dict[str, Any]:
        """Cancel a live task (stopping its worker, here or on another replica)."""
        record = await self._lookup(task_id_param(call.params), call.principal)
        cancelled = None
        if not record.is_terminal:
            ctx = self._contexts.get(record.task_id)
            if ctx is not None:
                ctx.cancelled = True
            cancelled = await self._finish(
                record.task_id,
                self.tables.cancelled,
                status_message=self.cancel_message,
            )
            self._stop_worker(record.task_id)
            if cancelled is not None and ctx is None:
                # the worker may run on another replica
                await self._signal("cancel", record.task_id)
        return await self._cancel_result(cancelled, record, call.principal)

    async def _tasks_list(self, call: Call) -> dict[str, Any]:
        """One page of the caller's tasks, built through the schema's result model of
        the list role; an opaque ``nextCursor`` while more remain
        (``_encode_cursor``). Only with ``enable_list`` (else ``-32601``): principals
        must be told apart for a list to be private."""
        if not self.enable_list:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {call.method}")
        cursor = call.params.get("cursor")
        after = 0
        if cursor is not None:
            after = await self._resume_at(_decode_cursor(cursor), call.principal)
        size = self.page_size
        page = await self._page(call.principal, after, size)
        listed: dict[str, Any] = {"tasks": [self._task(r) for r in page[:size]]}
        if len(page) > size:
            listed["nextCursor"] = _encode_cursor(
                page[size - 1].task_id, page[size].task_id
            )
        listed = self._complete(listed)
        model = self.tables.methods[call.method].result
        if model is None:
            return listed
        return _through(model, listed)

    cancel_message: ClassVar[str] = "Cancelled by request"
    """The ``statusMessage`` of a task cancelled through ``tasks/cancel``."""

    def _task_model(self, record: TaskRecord) -> TaskState:
        """The record as the generated model of its status (``TASK_BY_STATUS``)."""
        values = self._task_values(record)
        values.update(self._status_payload(record))
        model = self.tables.task_by_status[record.status]
        return cast(TaskState, model.model_validate(values))

    def _task_values(self, record: TaskRecord) -> dict[str, Any]:
        """The task fields of a record by attribute name, for a generated task model.

        The fields the runtime manages, and the ``TaskFields`` tool code set
        (``record.extra``, by wire name, which the models accept as well).
        """
        key, status, message, created, updated, ttl, poll = self.tables.task_fields
        values: dict[str, Any] = {
            key: record.task_id,
            status: record.status,
            created: rfc3339(record.created_at),
            updated: rfc3339(record.updated_at),
            ttl: record.ttl_ms,
        }
        if record.status_message is not None:
            values[message] = record.status_message
        if record.poll_interval_ms is not None:
            values[poll] = self._poll_hint(record)
        values.update(record.extra)
        return values

    def _poll_hint(self, record: TaskRecord) -> int | None:
        """The polling hint of the record now: ``Limits.poll_interval_at`` its age
        while it is live, the longest (stored) hint once it is terminal."""
        if record.is_terminal:
            return record.poll_interval_ms
        age_ms = (time.time() - record.created_at) * 1000
        return self.limits.poll_interval_at(age_ms, record.poll_interval_ms)

    def _task(self, record: TaskRecord) -> dict[str, Any]:
        """The wire form of ``_task_model`` (a new dict; the nested values are shared).

        Every change of a task bumps its ``updated_at`` and a finished task never
        changes, so the wire form of one ``(task_id, updated_at, status)`` never
        changes: the last ones made (the tasks clients poll) are kept, except those of
        finished tasks whose result and error exceed ``_WIRE_CACHE_MAX_KEPT`` bytes
        (only a mark is kept for those, so their size is measured once).
        """
        key = (record.task_id, record.updated_at, record.status)
        wire = self._wire_cache.get(key)
        if wire is None:
            wire = self._task_model(record).to_wire()
            large = record.is_terminal and kept_bytes(record) > _WIRE_CACHE_MAX_KEPT
            self._wire_cache[key] = _TOO_LARGE if large else wire
            if len(self._wire_cache) > _WIRE_CACHE_SIZE:
                self._wire_cache.pop(next(iter(self._wire_cache)))
        elif wire is _TOO_LARGE:
            return self._task_model(record).to_wire()
        wire = dict(wire)
        if not record.is_terminal and record.poll_interval_ms is not None:
            # a live task's hint grows with its age (``Limits.poll_interval_at``)
            wire[self._poll_wire] = self._poll_hint(record)
        return wire

    def _cancelled_elsewhere(self, task_id: str) -> None:
        """Mark the local worker of a task another replica cancelled, and stop it."""
        ctx = self._contexts.get(task_id)
        if ctx is not None:
            ctx.cancelled = True
        self._stop_worker(task_id)

    # -- server-to-client requests -----------------------------------------------

    def _take_reply(self, message: dict[str, Any], request: RequestInfo) -> bool:
        """Deliver the client's response to the request that awaits it.

        Only the principal the request was sent to, through a session it was sent on,
        may answer it; any other reply is ignored (and audited) without touching the
        waiting request. Returns whether the reply was taken.
        """
        request_id = message.get("id")
        pending = self._replies.get(request_id) if isinstance(request_id, str) else None
        if pending is None or pending.reply.done():
            return False
        try:
            principal = self._principal(request)
        except JsonRpcError:
            principal = None
            allowed = False
        else:
            allowed = principal == pending.principal
        if not allowed or request.session_id not in pending.sessions:
            self._emit_audit(
                "reply_rejected",
                None,
                principal,
                f"a reply to {pending.method} from another session or principal",
            )
            return False
        self._settle(pending, message)
        return True

    def settle_reply(self, message: dict[str, Any]) -> None:
        """Resolve the request ``message`` answers, when the carrier already vouches for
        its sender (an SDK session the request was sent on); unknown IDs are ignored."""
        request_id = message.get("id")
        pending = self._replies.get(request_id) if isinstance(request_id, str) else None
        if pending is not None:
            self._settle(pending, message)

    def _settle(self, pending: PendingRequest, message: dict[str, Any]) -> None:
        """Resolve a pending request with the client's reply (checked by the caller)."""
        future = pending.reply
        if future.done():
            return
        raw_error = message.get("error")
        if isinstance(raw_error, dict):
            error = cast(dict[str, Any], raw_error)
            future.set_exception(
                JsonRpcError(
                    int(error.get("code", INTERNAL_ERROR)),
                    str(error.get("message", "")),
                    error.get("data"),
                )
            )
        else:
            try:
                future.set_result(
                    check_answer(
                        pending.method,
                        pending.params,
                        message.get("result"),
                        self.tables.models,
                    )
                )
            except JsonRpcError as error:
                future.set_exception(error)

    def _new_request(
        self, method: str, params: dict[str, Any], principal: str | None
    ) -> tuple[str, dict[str, Any], PendingRequest]:
        """A new server-to-client request to ``principal`` and its pending reply.

        Its id is random (not guessable), so only the client it is sent to knows it.
        """
        request_id = secrets.token_urlsafe(18)
        while request_id in self._replies:
            request_id = secrets.token_urlsafe(18)
        reply: asyncio.Future[dict[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )
        pending = PendingRequest(
            method=method, params=params, principal=principal, reply=reply
        )
        self._replies[request_id] = pending
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        return request_id, {**message, "params": params}, pending

    async def request_on_stream(
        self,
        emit: Emit,
        method: str,
        params: dict[str, Any],
        *,
        principal: str | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Send a request on a response stream and wait for the (checked) reply.

        Only ``principal`` answering through session ``session_id`` settles it.
        """
        request_id, message, pending = self._new_request(method, params, principal)
        pending.sessions.add(session_id)
        try:
            await emit(message)
            return await pending.reply
        finally:
            self._replies.pop(request_id, None)

    async def _resume_at(self, anchors: tuple[str, str], principal: str | None) -> int:
        """The store position (``list_tasks``'s ``after_seq``) where a cursor's page
        starts: just before its first task, or, when that one was deleted since (its
        TTL ran out), just after the last task of the page before.

        ``-32602`` when neither is a task of the caller: a forged cursor, another
        caller's, or one whose two tasks were both deleted (list again from the start).
        """
        last_id, next_id = anchors
        for task_id, offset in ((next_id, -1), (last_id, 0)):
            record = await self.store.get(task_id)
            if record is not None and record.owner == principal:
                return record.seq + offset
        raise JsonRpcError(
            INVALID_PARAMS,
            "Invalid cursor (or the tasks at its position expired): list again"
            " without one",
        )

    async def _page(
        self, principal: str | None, after: int, size: int
    ) -> list[TaskRecord]:
        """Up to ``size + 1`` unexpired tasks of ``principal`` after position
        ``after``."""
        now = time.time()
        page: list[TaskRecord] = []
        while len(page) <= size:
            batch = await self.store.list_tasks(principal, after, size + 1)
            for record in batch:
                after = record.seq
                if not record.is_expired(now):
                    page.append(record)
            if len(batch) <= size:
                break
        return page

    # -- helpers used by the revision dispatchers ---------------------------

    def _principal(self, request: RequestInfo) -> str | None:
        """The caller's principal, from the ``authenticate`` hook."""
        if self._authenticate is None:
            return request.principal
        return self._authenticate(request)

    def _caller(self, principal: str | None, request: RequestInfo) -> str:
        """Whom a per-caller bound counts against: the principal, or when there is
        none the client's network address."""
        if principal is not None:
            return f"principal:{principal}"
        return f"address:{request.client or '?'}"

    def _check_rate(self, principal: str | None, method: str) -> None:
        """Apply the rate limiter hook, if any."""
        if self._rate_limiter is not None and not self._rate_limiter(principal, method):
            raise JsonRpcError(
                self.limits.limit_error_code,
                f"Rate limit exceeded for {method}; slow down to the task's poll"
                " interval",
            )

    def _emit_audit(
        self, action: str, task_id: str | None, principal: str | None, detail: str = ""
    ) -> None:
        """Send one event to the audit hook, if any."""
        if self._audit is not None:
            self._audit(
                AuditEvent(
                    action=action, task_id=task_id, principal=principal, detail=detail
                )
            )

    def _input_responses(self, responses: Any) -> dict[str, Any]:
        """A request's ``params.inputResponses``, checked: an object within the size
        limit."""
        if not isinstance(responses, dict):
            raise JsonRpcError(
                INVALID_PARAMS, "params.inputResponses must be an object"
            )
        self._check_size("params.inputResponses", responses)
        return cast(dict[str, Any], responses)

    def _check_size(self, what: str, value: Any) -> None:
        """Refuse inputs larger than ``limits.max_input_bytes``."""
        size = json_size(value)
        if size > self.limits.max_input_bytes:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"{what} is too large: {size} bytes (limit"
                f" {self.limits.max_input_bytes})",
            )

    def _tool(self, params: dict[str, Any]) -> tuple[Tool, dict[str, Any]]:
        """The tool named by ``params.name`` and its checked arguments."""
        name = params.get("name")
        if not isinstance(name, str):
            raise JsonRpcError(INVALID_PARAMS, "params.name must be a string")
        tool = self._tools.get(name)
        if tool is None:
            raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.arguments must be an object")
        self._check_size("params.arguments", arguments)
        return tool, cast(dict[str, Any], arguments)

    def _check_result(
        self, tool: Tool, result: dict[str, Any], *, stored: bool
    ) -> None:
        """Refuse a tool result that is not plain JSON, or (``stored``) is larger than
        ``limits.max_result_bytes``."""
        try:
            size = json_size(result)
        except (ValueError, RecursionError, TypeError) as error:
            raise JsonRpcError(
                INTERNAL_ERROR,
                f"Tool {tool.name!r} returned a result that is not plain JSON:"
                f" {_short(error)}",
            ) from None
        if stored and size > self.limits.max_result_bytes:
            raise JsonRpcError(
                INTERNAL_ERROR,
                f"Tool {tool.name!r} returned a result too large to keep: {size}"
                f" bytes (limit {self.limits.max_result_bytes})",
            )

    def _ttl(self, requested: int | None) -> int | None:
        """The TTL a new task gets: the request clamped to the maximum, or the
        default."""
        ttl = requested if requested is not None else self.limits.default_ttl_ms
        maximum = self.limits.max_ttl_ms
        if maximum is not None and (ttl is None or ttl > maximum):
            return maximum
        return ttl

    async def _lookup(self, task_id: str, principal: str | None) -> TaskRecord:
        """The caller's task, or the not-found error (unknown, expired or foreign)."""
        if not is_text(task_id):  # no store could hold it (lone surrogates)
            raise _not_found()
        record = await self.store.get(task_id)
        if record is None or record.owner != principal:
            self._emit_audit("lookup_failed", task_id, principal)
            raise _not_found()
        if record.is_expired(time.time()):
            raise _not_found()
        return record

    async def _new_task(
        self, tool: Tool, principal: str | None, requested_ttl: int | None
    ) -> TaskRecord:
        """Create and durably store a new ``working`` task, enforcing the limits
        (checked by the store with the create: ``stores.Quota``)."""
        limits = self.limits
        store = self.store
        now = time.time()
        task_id = new_task_id()
        if isinstance(store, ReplicaStore):
            # leased before it exists, so no replica ever sees it without a lease
            await store.hold_leases([task_id], self.replica_id, self._lease_ms)
        try:
            record = await store.create(
                TaskRecord(
                    task_id=task_id,
                    owner=principal,
                    tool=tool.name,
                    status=self.tables.initial,
                    created_at=now,
                    updated_at=now,
                    ttl_ms=self._ttl(requested_ttl),
                    poll_interval_ms=limits.poll_interval_ms,
                ),
                quota=Quota(
                    max_active_tasks=limits.max_active_tasks,
                    max_finished_tasks=limits.max_finished_tasks,
                    max_stored_bytes=limits.max_stored_bytes,
                    max_tasks=limits.max_tasks,
                ),
            )
        except LimitExceeded as refused:
            raise JsonRpcError(limits.limit_error_code, _refusal(refused)) from None
        self._emit_audit("created", record.task_id, principal, tool.name)
        return record

    def _spawn(self, record: TaskRecord, work: Coroutine[Any, Any, None]) -> None:
        """Run a task's worker in the background; if it still runs when the task's TTL
        is about to run out, the task is failed and the worker stopped
        (``_fail_before_expiry``)."""
        task_id = record.task_id
        worker = asyncio.create_task(work, name=f"task-{task_id}")
        self._workers[task_id] = worker
        timer: asyncio.TimerHandle | None = None
        expires_at = record.expires_at
        if expires_at is not None and record.ttl_ms is not None:
            delay = expires_at - self._ttl_margin_s(record.ttl_ms) - time.time()
            timer = asyncio.get_running_loop().call_later(
                max(0.0, delay), self._ttl_due, task_id, record.owner
            )

        def ended(_: object) -> None:
            self._workers.pop(task_id, None)
            if timer is not None:
                timer.cancel()

        worker.add_done_callback(ended)

    def _stop_worker(self, task_id: str) -> None:
        """Ask a task's worker to stop (it sees ``CancelledError``)."""
        worker = self._workers.get(task_id)
        if worker is not None and worker is not asyncio.current_task():
            worker.cancel()

    async def _save(self, record: TaskRecord, **changes: Any) -> TaskRecord:
        """Store ``record`` with ``changes`` and a bumped ``updated_at``; publish it."""
        now = max(time.time(), record.updated_at + 0.001)
        updated = replace(record, updated_at=now, **changes)
        await self.store.put(updated)
        await self._announce(updated)
        return updated

    async def _published(self, record: TaskRecord) -> None:
        """Called after every stored change: wake the task's result-role waiters, and
        where the schema has a notify role, send the new state to the session that
        created the task and to every subscription that follows it."""
        channel = self._channels.get(record.task_id)
        if channel is not None:
            channel.changed.set()
        notify = self.tables.roles.get("notify")
        session = self._task_sessions.get(record.task_id)
        listeners = self._listeners.get(record.task_id)
        if notify is not None and (session is not None or listeners):
            task = self._task(record)
            if session is not None:
                session.notify({"jsonrpc": "2.0", "method": notify, "params": task})
            for subscription in listeners or ():
                subscription.offer(record, task)
        if record.is_terminal:
            self._task_sessions.pop(record.task_id, None)

    async def _listen(self, call: Call) -> dict[str, Any]:
        """``subscriptions/listen`` (where the schema has a subscription ``_meta`` key
        and a notify role): acknowledge the caller's task IDs among those requested,
        then stream their states as the notify role's messages.

        IDs the caller cannot see (unknown, expired, another principal's) are left
        out of the acknowledgement alike, so it reveals nothing about other callers'
        tasks. Task IDs need Tasks declared (``_tasks_not_declared``); a request may
        name ``limits.max_listen_task_ids`` of them, and a caller may hold
        ``limits.max_listens`` streams at once. The stream ends (with the listen
        result) once every task it follows has sent its terminal state, at once
        when it follows none, or when the server closes; everything it registered is
        released when it ends, also when the client goes away.
        """
        requested = self._listen_task_ids(call)
        emit = call.emit
        if emit is None:
            raise JsonRpcError(
                INVALID_REQUEST, "subscriptions/listen needs a streaming transport"
            )
        caller = self._caller(call.principal, call.request)
        open_now = self._listens.get(caller, 0)
        if open_now >= self.limits.max_listens:
            raise JsonRpcError(
                self.limits.limit_error_code,
                f"Too many open subscriptions/listen streams: {open_now} (limit"
                f" {self.limits.max_listens} per principal); close some first",
            )
        self._listens[caller] = open_now + 1
        try:
            return await self._stream_states(call, emit, requested)
        finally:
            left = self._listens[caller] - 1
            if left:
                self._listens[caller] = left
            else:
                del self._listens[caller]

    def _listen_task_ids(self, call: Call) -> list[str] | None:
        """The distinct task IDs a ``subscriptions/listen`` asks for (None: it asks
        for no task notifications), checked."""
        notifications: Any = call.params.get("notifications", {})
        if not isinstance(notifications, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.notifications must be an object")
        requested: Any = cast(dict[str, Any], notifications).get("taskIds")
        if requested is None:
            return None
        if not call.tasks:
            raise self._tasks_not_declared("subscriptions/listen with taskIds")
        if not isinstance(requested, list) or not all(
            isinstance(t, str) for t in cast("list[object]", requested)
        ):
            raise JsonRpcError(INVALID_PARAMS, "notifications.taskIds must be strings")
        distinct = list(dict.fromkeys(cast(list[str], requested)))
        if len(distinct) > self.limits.max_listen_task_ids:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"notifications.taskIds names {len(distinct)} tasks (limit"
                f" {self.limits.max_listen_task_ids} per subscriptions/listen)",
            )
        return distinct

    async def _stream_states(
        self, call: Call, emit: Emit, requested: list[str] | None
    ) -> dict[str, Any]:
        """The acknowledgement and the states of a ``subscriptions/listen``; its
        result."""
        accepted: list[TaskRecord] = []
        for task_id in requested or []:
            try:
                accepted.append(await self._lookup(task_id, call.principal))
            except JsonRpcError:
                continue  # not the caller's to follow: left out of the ack
        subscription_id = {self.tables.meta_keys["SUBSCRIPTION_ID"]: call.request_id}
        ack: dict[str, Any] = {"_meta": subscription_id, "notifications": {}}
        if requested is not None:
            ack["notifications"]["taskIds"] = [r.task_id for r in accepted]
        notify = self.tables.roles["notify"]
        live = {record.task_id for record in accepted}
        async with self._following(accepted) as subscription:
            await emit(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": ack,
                }
            )
            while live and (states := await subscription.next_states()) is not None:
                for task_id, (task, terminal) in states:
                    params = {"_meta": subscription_id, **task}
                    await emit({"jsonrpc": "2.0", "method": notify, "params": params})
                    if terminal:
                        live.discard(task_id)
        return self._complete({"_meta": subscription_id})

    @contextlib.asynccontextmanager
    async def _following(
        self, records: list[TaskRecord]
    ) -> AsyncGenerator[_Subscription, None]:
        """Follow tasks for a subscription: it gets each task's current state and then
        every state ``_published`` gives it, until the server closes. The current
        state is read once the subscription follows the task, so the last state it
        gets is the task's latest. On exit the tasks' listener entries are removed
        (a task with no subscription left has none)."""
        subscription = _Subscription()
        for record in records:
            self._listeners.setdefault(record.task_id, set()).add(subscription)
        try:
            for record in records:
                current = await self.store.get(record.task_id)
                if current is not None:
                    subscription.offer(current, self._task(current))
            yield subscription
        finally:
            for record in records:
                listeners = self._listeners.get(record.task_id)
                if listeners is not None:
                    listeners.discard(subscription)
                    if not listeners:
                        del self._listeners[record.task_id]

    async def _announce(self, record: TaskRecord) -> None:
        """Publish a stored change here and on every replica (with a
        ``ReplicaStore``) or sibling (the other revisions of a dual server)."""
        await self._published(record)
        if isinstance(self.store, ReplicaStore):
            await self._signal("status", record.task_id, record=asdict(record))
        else:
            for sibling in self.siblings:
                await sibling._published(record)

    async def move_task(self, task_id: str, **changes: Any) -> TaskRecord | None:
        """Apply ``changes`` (``status``, ``status_message``, ...) to a live task
        through the state machine; None when it is gone or terminal. See ``_update``."""
        return await self._update(task_id, **changes)

    async def set_status_message(self, task_id: str, message: str) -> None:
        """Set a live task's ``statusMessage`` (ignored once it is terminal)."""
        await self._update(task_id, status_message=message)

    async def _update(self, task_id: str, **changes: Any) -> TaskRecord | None:
        """Apply ``changes`` to a live task, following the status state machine.

        Returns the new record, or None when the task is gone or already terminal
        (terminal states never change). An illegal transition raises ``ValueError``.
        """
        return await self._mutate(task_id, lambda record: changes)

    async def _mutate(
        self,
        task_id: str,
        change: Callable[[TaskRecord], dict[str, Any] | None],
    ) -> TaskRecord | None:
        """Apply ``change(record)`` (the changed fields, or None: no change) to a live
        task.

        With a ``TransitionStore`` the write is an atomic compare-and-set on the record
        read (its status and ``updated_at``), so a replica racing this one
        (completing, cancelling, answering, asking) either goes first, and ``change``
        runs again on its result, or fails its own write.
        Returns the new record, or None when nothing was written: the task is gone or
        terminal, or ``change`` returned None. An illegal transition raises
        ``ValueError``.
        """
        async with self._write_lock:
            for _ in range(_MAX_WRITE_ATTEMPTS):
                record = await self.store.get(task_id)
                if record is None or record.is_terminal:
                    return None
                changes = change(record)
                if changes is None:
                    return None
                status = changes.get("status", record.status)
                if (
                    status != record.status
                    and status
                    not in self.tables.transitions.get(record.status, frozenset())
                ):
                    raise ValueError(f"illegal transition {record.status} -> {status}")
                now = max(time.time(), record.updated_at + 0.001)
                updated = replace(record, updated_at=now, **changes)
                store = self.store
                if isinstance(store, TransitionStore):
                    if not await store.transition(
                        task_id,
                        frozenset({record.status}),
                        updated,
                        expected_updated_at=record.updated_at,
                    ):
                        continue  # another writer went first: read it again
                else:
                    await store.put(updated)
                await self._announce(updated)
                return updated
        raise RuntimeError(
            f"task {task_id}: {_MAX_WRITE_ATTEMPTS} writes in a row lost a race"
        )

    async def _finish(
        self,
        task_id: str,
        status: str,
        *,
        result: dict[str, Any] | None = None,
        error: JsonRpcError | None = None,
        status_message: str | None = None,
    ) -> TaskRecord | None:
        """Move a task to a terminal status (no-op when it already is terminal)."""
        changes: dict[str, Any] = {"status": status, "input_requests": {}}
        if result is not None:
            changes["result"] = result
        if error is not None:
            changes["error"] = error.to_wire()
            changes["status_message"] = status_message or (
                f"Tool execution failed: {error.message}"
            )
        elif status_message is not None:
            changes["status_message"] = status_message
        record = await self._update(task_id, **changes)
        if record is not None:
            self._emit_audit(status, task_id, record.owner)
        return record
