"""An example server with one rule broken at a time: the checker's mutants.

``python tests/integration/checker/mutant_server.py ext|2025 PORT`` serves
``examples/server_ext.py`` or ``examples/server_2025.py`` (in memory) behind an ASGI
proxy. ``/mcp`` is the example as it is; ``/m/NAME/mcp`` is the same server with mutant
``NAME`` applied, all at the wire: a rewrite of the requests it receives (headers and
JSON body), an answer the proxy gives instead of the server, or a rewrite of the JSON
messages it sends (JSON bodies and SSE events, on any stream). Each mutant breaks one
rule of the spec; ``MUTANTS`` names the check that must catch it ("" for a server the
checker must pass).

The extension's server requires the ``Mcp-Method``/``Mcp-Name`` routing headers on
``tasks/*`` (``require_routing_headers``), as the spec says; the mutant
``routing_missing_accepted`` takes that back at the wire.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]

Message = dict[str, Any]
Headers = dict[str, str]
TERMINAL = ("completed", "failed", "cancelled")
OTHER = "other"
"""The ``Authorization`` of the second principal the tests give the checker."""


class State:
    """What a mutant remembers between messages."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        """The checker's own ``Authorization`` on this mutant's path (``owner_of``)."""
        self.terminal_seen: set[str] = set()
        self.completed_at: dict[str, float] = {}
        self.cancelled_late: set[str] = set()
        self.created: set[str] = set()
        self.reply_sessions: dict[str, str] = {}


def owner_of(name: str) -> str:
    """The ``Authorization`` the checker runs with against mutant ``name``: runs against
    several mutants at once are different principals (a server delivers a task's input
    requests to every session of its principal, so one principal's runs would answer
    each other's)."""
    return f"owner-{name}"


@dataclass(frozen=True)
class Stream:
    """The request whose answer (or GET stream) carries a message the server sends."""

    method: str
    """The request's JSON-RPC method as the client sent it ("" for a GET stream)."""
    headers: Headers
    """The request's headers as the client sent them (lower-case names)."""


def _result(message: Message) -> Message | None:
    result = message.get("result")
    return result if isinstance(result, dict) else None


def _tasks(message: Message) -> list[Message]:
    """Every task shape inside an answer (flat results, ``task`` of 2025 results)."""
    result = _result(message)
    if result is None:
        return []
    shapes = [result]
    if isinstance(result.get("task"), dict):
        shapes.append(result["task"])
    return [s for s in shapes if "taskId" in s]


def _params(message: Message) -> Message:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


# -- response mutations: (request method, response, state) -> None (in place) ----------


LATER_S = 0.45
"""How long after a task was first read completed ``terminal_changes`` rewrites it:
later than the next poll (the server's poll interval is 0.2 s), within the polls the
checker makes after a terminal status (three, a poll interval apart)."""


def terminal_changes(method: str, response: Message, state: State) -> None:
    result = _result(response)
    if method != "tasks/get" or result is None or result.get("status") != "completed":
        return
    task_id = str(result.get("taskId"))
    first = state.completed_at.setdefault(task_id, time.monotonic())
    if time.monotonic() - first >= LATER_S:
        result["status"] = "cancelled"
        result.pop("result", None)


def _everywhere(
    mutate: Callable[[str, Message, State], None],
) -> Callable[[Message, Stream, State], None]:
    """A rewrite of the task in answers, applied to the task in notifications too (a
    server that stores the wrong value reports it everywhere)."""

    def stream(message: Message, stream: Stream, state: State) -> None:
        if message.get("method") in (
            "notifications/tasks",
            "notifications/tasks/status",
        ):
            wrapped = {"result": _params(message)}
            mutate("tasks/get", wrapped, state)

    return stream


def no_poll_interval(method: str, response: Message, state: State) -> None:
    for task in _tasks(response):
        task.pop("pollIntervalMs", None)
        task.pop("pollInterval", None)


def negative_ttl(method: str, response: Message, state: State) -> None:
    for task in _tasks(response):
        for name in ("ttl", "ttlMs"):
            if name in task:
                task[name] = -5


def _code_swap(target: str) -> Callable[[str, Message, State], None]:
    def mutate(method: str, response: Message, state: State) -> None:
        error = response.get("error")
        if method == target and isinstance(error, dict) and error.get("code") == -32602:
            error["code"] = -32603

    return mutate


def _result_type(target: str) -> Callable[[str, Message, State], None]:
    def mutate(method: str, response: Message, state: State) -> None:
        result = _result(response)
        if method == target and result is not None:
            result["resultType"] = "task"

    return mutate


def legacy_capability(method: str, response: Message, state: State) -> None:
    result = _result(response)
    if method == "server/discover" and result is not None:
        result.setdefault("capabilities", {})["tasks"] = {"cancel": {}}


def cancel_no_ttl(method: str, response: Message, state: State) -> None:
    result = _result(response)
    if method == "tasks/cancel" and result is not None:
        result.pop("ttl", None)


def cancel_not_cancelled(method: str, response: Message, state: State) -> None:
    result = _result(response)
    if method == "tasks/cancel" and result is not None:
        result["status"] = "working"


def no_related_task(method: str, response: Message, state: State) -> None:
    result = _result(response)
    if method == "tasks/result" and result is not None:
        meta = result.get("_meta")
        if isinstance(meta, dict):
            meta.pop("io.modelcontextprotocol/related-task", None)


def timestamps_back(method: str, response: Message, state: State) -> None:
    result = _result(response)
    if method == "tasks/get" and result is not None and "lastUpdatedAt" in result:
        result["lastUpdatedAt"] = "2000-01-01T00:00:00Z"


def failed_as_completed(method: str, response: Message, state: State) -> None:
    if method in ("tasks/get", "tasks/cancel", "tasks/list"):
        for task in _tasks(response):
            if task.get("status") == "failed":
                task["status"] = "completed"


def list_missing(method: str, response: Message, state: State) -> None:
    if method == "tasks/list":
        response.pop("result", None)
        response["error"] = {"code": -32601, "message": "Method not found"}


def no_cancel_capability(method: str, response: Message, state: State) -> None:
    result = _result(response)
    if method == "initialize" and result is not None:
        tasks = result.get("capabilities", {}).get("tasks", {})
        tasks.pop("cancel", None)


def create_no_ttl(method: str, response: Message, state: State) -> None:
    result = _result(response)
    if method == "tools/call" and result is not None:
        task = result.get("task")
        if isinstance(task, dict):
            task.pop("ttl", None)


def terminal_to_cancelled(method: str, response: Message, state: State) -> None:
    """After a cancel of a terminal task (``remember_late_cancel``), report it
    cancelled."""
    result = _result(response)
    if method != "tasks/get" or result is None:
        return
    task_id = str(result.get("taskId"))
    if task_id in state.cancelled_late:
        result["status"] = "cancelled"
        result.pop("result", None)
        result.pop("error", None)
    elif result.get("status") in TERMINAL:
        state.terminal_seen.add(task_id)


def cancel_acked(method: str, response: Message, state: State) -> None:
    """The answer to a cancel turned into a ``tasks/get`` (``cancel_as_get``): an
    ack."""
    result = _result(response)
    if method == "tasks/cancel" and result is not None:
        meta = result.get("_meta")
        response["result"] = {
            "resultType": "complete",
            **({"_meta": meta} if meta else {}),
        }


def remember_created(method: str, response: Message, state: State) -> None:
    result = _result(response)
    if method != "tools/call" or result is None:
        return
    task = result.get("task") if isinstance(result.get("task"), dict) else result
    if result.get("resultType") == "task" or "task" in result:
        state.created.add(str(task.get("taskId")))


# -- stream mutations: (message, stream, state) -> None, every message the server sends


def notifications_say_working(message: Message, stream: Stream, state: State) -> None:
    if message.get("method") == "notifications/tasks/status" and "params" in message:
        _params(message)["status"] = "working"


def remember_reply_session(message: Message, stream: Stream, state: State) -> None:
    """Which session each server-to-client request went out on."""
    if "method" in message and "id" in message:
        state.reply_sessions[str(message["id"])] = stream.headers.get(
            "mcp-session-id", ""
        )


# -- request mutations: (headers, message, state) -> None (in place), or a reply -------

Reply = tuple[int, Message]
"""An answer the proxy gives instead of the server: HTTP status and JSON-RPC message."""


def as_owner(*methods: str) -> Callable[[Headers, Message, State], None]:
    """Requests of the second principal (of ``methods``; all when none) run as the
    owner."""

    def mutate(headers: Headers, message: Message, state: State) -> None:
        chosen = not methods or message.get("method") in methods
        if headers.get("authorization") == OTHER and chosen:
            headers["authorization"] = state.owner

    return mutate


def foreign_reply(headers: Headers, message: Message, state: State) -> None:
    """The second principal's reply to a server request reaches it as the owner's: sent
    on the session the request went to (a server that routes replies by ID alone)."""
    session = state.reply_sessions.get(str(message.get("id")))
    if headers.get("authorization") == OTHER and "method" not in message and session:
        headers["authorization"] = state.owner
        headers["mcp-session-id"] = session


def routing_ignored(headers: Headers, message: Message, state: State) -> None:
    """Wrong routing headers are corrected, so the server accepts them."""
    params = _params(message)
    if "mcp-method" in headers:
        headers["mcp-method"] = str(message.get("method"))
    if "mcp-name" in headers and isinstance(params.get("taskId"), str):
        headers["mcp-name"] = params["taskId"]


def routing_missing_accepted(headers: Headers, message: Message, state: State) -> None:
    """Missing routing headers on ``tasks/*`` are filled in, so the server accepts
    them."""
    method, params = message.get("method"), _params(message)
    if isinstance(method, str) and method.startswith("tasks/"):
        headers.setdefault("mcp-method", method)
        if isinstance(params.get("taskId"), str):
            headers.setdefault("mcp-name", params["taskId"])


_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}


def meta_not_required(headers: Headers, message: Message, state: State) -> None:
    params = message.get("params")
    if isinstance(params, dict) and "_meta" not in params:
        params["_meta"] = json.loads(json.dumps(_META))


def gating_ignored(headers: Headers, message: Message, state: State) -> None:
    meta = _params(message).get("_meta")
    key = "io.modelcontextprotocol/clientCapabilities"
    if isinstance(meta, dict) and isinstance(meta.get(key), dict):
        meta[key]["extensions"] = {"io.modelcontextprotocol/tasks": {}}


def remember_late_cancel(headers: Headers, message: Message, state: State) -> None:
    task_id = _params(message).get("taskId")
    if message.get("method") == "tasks/cancel" and task_id in state.terminal_seen:
        state.cancelled_late.add(str(task_id))


def cancel_as_get(headers: Headers, message: Message, state: State) -> None:
    """A cancel is only looked up (``cancel_acked`` answers the ack): acknowledged, and
    the task goes on (a cooperative cancel the work ignores)."""
    if message.get("method") == "tasks/cancel":
        message["method"] = "tasks/get"
        if "mcp-method" in headers:
            headers["mcp-method"] = "tasks/get"


def first_get_unknown(
    http_status: int,
) -> Callable[[Headers, Message, State], Reply | None]:
    """The first ``tasks/get`` of a new task is answered "not found" (a create reply
    sent before the task is stored), with the revision's HTTP status for -32602."""

    def mutate(headers: Headers, message: Message, state: State) -> Reply | None:
        task_id = _params(message).get("taskId")
        if message.get("method") != "tasks/get" or task_id not in state.created:
            return None
        state.created.discard(str(task_id))
        error = {"code": -32602, "message": "Failed to retrieve task: Task not found"}
        return http_status, {"jsonrpc": "2.0", "id": message.get("id"), "error": error}

    return mutate


RESPONSE = Callable[[str, Message, State], None]
REQUEST = Callable[[Headers, Message, State], Reply | None]
STREAM = Callable[[Message, Stream, State], None]


@dataclass(frozen=True)
class Mutant:
    """One broken rule: the hooks that break it and the check that must catch it."""

    check: str
    """The only check that must fail ("": no check may fail: the server is
    compliant)."""
    request: REQUEST | None = None
    """Rewrites a request the client sent, or answers it instead of the server."""
    response: RESPONSE | None = None
    """Rewrites an answer (a message without ``method``), by the request's method."""
    stream: STREAM | None = None
    """Sees every message the server sends (answers, notifications, requests)."""


MUTANTS: dict[str, dict[str, Mutant]] = {
    "ext": {
        "terminal_changes": Mutant("terminal.final", response=terminal_changes),
        "no_poll_interval": Mutant("hints.poll_interval", response=no_poll_interval),
        "negative_ttl": Mutant(
            "hints.ttl", response=negative_ttl, stream=_everywhere(negative_ttl)
        ),
        "update_wrong_code": Mutant(
            "errors.unknown_task", response=_code_swap("tasks/update")
        ),
        "get_result_type": Mutant(
            "shape.tasks/get", response=_result_type("tasks/get")
        ),
        "cancel_ack_wrong": Mutant(
            "shape.tasks/cancel", response=_result_type("tasks/cancel")
        ),
        "legacy_capability": Mutant("capability.declared", response=legacy_capability),
        "foreign_answered": Mutant("errors.foreign_task", request=as_owner()),
        "foreign_cancel": Mutant(
            "errors.foreign_task", request=as_owner("tasks/cancel")
        ),
        "foreign_update": Mutant(
            "errors.foreign_task", request=as_owner("tasks/update")
        ),
        "foreign_listen": Mutant(
            "errors.foreign_task", request=as_owner("subscriptions/listen")
        ),
        "routing_ignored": Mutant("routing.headers", request=routing_ignored),
        "routing_missing_accepted": Mutant(
            "routing.headers_missing", request=routing_missing_accepted
        ),
        "meta_not_required": Mutant("envelope.meta", request=meta_not_required),
        "gating_ignored": Mutant("capability.gating", request=gating_ignored),
        "terminal_cancel_rewrites": Mutant(
            "terminal.final",
            request=remember_late_cancel,
            response=terminal_to_cancelled,
        ),
        "cancel_ignored": Mutant("", request=cancel_as_get, response=cancel_acked),
        "create_not_durable": Mutant(
            "create.durable", request=first_get_unknown(400), response=remember_created
        ),
    },
    "2025": {
        "terminal_changes": Mutant("terminal.final", response=terminal_changes),
        "no_poll_interval": Mutant("hints.poll_interval", response=no_poll_interval),
        "result_wrong_code": Mutant(
            "errors.unknown_task", response=_code_swap("tasks/result")
        ),
        "cancel_no_ttl": Mutant("shape.tasks/cancel", response=cancel_no_ttl),
        "cancel_not_cancelled": Mutant(
            "cancel.accepted", response=cancel_not_cancelled
        ),
        "no_related_task": Mutant("result.related_task", response=no_related_task),
        "timestamps_back": Mutant(
            "task.timestamps",
            response=timestamps_back,
            stream=_everywhere(timestamps_back),
        ),
        "failed_as_completed": Mutant(
            "outcome.failed",
            response=failed_as_completed,
            stream=_everywhere(failed_as_completed),
        ),
        "list_missing": Mutant("method.tasks/list", response=list_missing),
        "no_cancel_capability": Mutant(
            "capability.declared", response=no_cancel_capability
        ),
        "create_no_ttl": Mutant("shape.CreateTaskResult", response=create_no_ttl),
        "foreign_answered": Mutant("errors.foreign_task", request=as_owner()),
        "foreign_cancel": Mutant(
            "errors.foreign_task", request=as_owner("tasks/cancel")
        ),
        "foreign_result": Mutant(
            "errors.foreign_task", request=as_owner("tasks/result")
        ),
        "foreign_list": Mutant("errors.foreign_task", request=as_owner("tasks/list")),
        "foreign_reply": Mutant(
            "errors.foreign_task", request=foreign_reply, stream=remember_reply_session
        ),
        "notifications_stale": Mutant(
            "notifications.status", stream=notifications_say_working
        ),
        "create_not_durable": Mutant(
            "create.durable", request=first_get_unknown(200), response=remember_created
        ),
    },
}
"""Mutants by revision and name."""


def _rewrite(data: bytes, visit: Callable[[Message], None]) -> bytes:
    """Apply ``visit`` to each message of a JSON body or of the SSE events of a
    chunk."""
    text = data.decode()
    stripped = text.strip()
    if stripped.startswith("{"):
        message = json.loads(stripped)
        visit(message)
        return json.dumps(message).encode()
    lines = []
    for line in text.split("\n"):
        if line.startswith("data:"):
            try:
                message = json.loads(line[5:])
            except ValueError:
                lines.append(line)
                continue
            if isinstance(message, dict):
                visit(message)
            line = "data: " + json.dumps(message)
        lines.append(line)
    return "\n".join(lines).encode()


async def _answer(send: Any, status: int, message: Message) -> None:
    data = json.dumps(message).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def _event_stream(start: dict[str, Any]) -> bool:
    return any(
        k.lower() == b"content-type" and v.startswith(b"text/event-stream")
        for k, v in start["headers"]
    )


def wrap(inner: Any, revision: str) -> Any:
    """The ASGI app: ``/m/NAME/mcp`` applies mutant NAME to ``inner``."""
    states: dict[str, State] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/m/"):
            await inner(scope, receive, send)
            return
        name = scope["path"].split("/")[2]
        mutant = MUTANTS[revision][name]
        state = states.setdefault(name, State(owner_of(name)))
        scope = {**scope, "path": "/mcp", "raw_path": b"/mcp"}
        body = b""
        more = True
        while more:
            event = await receive()
            body += event.get("body", b"")
            more = event.get("more_body", False)
        message: Any = json.loads(body) if body.strip() else None
        method = str(message.get("method", "")) if isinstance(message, dict) else ""
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1")
            for k, v in scope["headers"]
        }
        stream = Stream(method, dict(headers))
        if mutant.request is not None and isinstance(message, dict):
            reply = mutant.request(headers, message, state)
            if reply is not None:
                await _answer(send, *reply)
                return
            scope["headers"] = [
                (k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()
            ]
            body = json.dumps(message).encode()
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        def visit(message: Message) -> None:
            if mutant.response is not None and "method" not in message and method:
                mutant.response(method, message, state)
            if mutant.stream is not None:
                mutant.stream(message, stream, state)

        pending: list[dict[str, Any]] = []
        rewriting = mutant.response is not None or mutant.stream is not None

        async def forward(event: dict[str, Any]) -> None:
            if not rewriting or event["type"] not in (
                "http.response.start",
                "http.response.body",
            ):
                await send(event)
                return
            if event["type"] == "http.response.start":
                if _event_stream(event):
                    await send(event)  # a stream has no length to fix: start it now
                else:
                    pending.append(
                        event
                    )  # held until the body is known (its length changes)
                return
            data = _rewrite(event["body"], visit) if event.get("body") else b""
            if pending:
                start = pending.pop()
                start["headers"] = [
                    (k, v)
                    for k, v in start["headers"]
                    if k.lower() != b"content-length"
                ]
                if not event.get("more_body", False):
                    start["headers"].append(
                        (b"content-length", str(len(data)).encode())
                    )
                await send(start)
            await send({**event, "body": data})

        await inner(scope, replay, forward)

    return app


def main() -> None:
    revision, port = sys.argv[1], int(sys.argv[2])
    script = (
        ROOT / "examples" / ("server_ext.py" if revision == "ext" else "server_2025.py")
    )
    spec = importlib.util.spec_from_file_location("example_server", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server = module.build_server(None)
    if revision == "ext":
        # the spec's rule (SEP-2243): tasks/* without the routing headers is refused
        assert hasattr(server, "require_routing_headers"), "the server option moved"
        server.require_routing_headers = True
    asgi = importlib.import_module(
        "mcp_tasks_ext.asgi" if revision == "ext" else "mcp_tasks_2025_11_25.asgi"
    )
    import uvicorn

    uvicorn.run(
        wrap(asgi.create_app(server), revision),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
    )


if __name__ == "__main__":
    main()
