"""An example server with one rule broken at a time: the checker's mutants.

``python tests/checker/mutant_server.py ext|2025 PORT`` serves
``examples/server_ext.py`` or ``examples/server_2025.py`` (in memory) behind an ASGI
wrapper. ``/mcp`` is the example as it is; ``/m/NAME/mcp`` is the same server with
mutant ``NAME`` applied: a rewrite of the requests it receives or of the JSON answers it
sends (JSON bodies and SSE events). Each mutant breaks one rule of the spec; ``MUTANTS``
names the check that must catch it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

Message = dict[str, Any]
Headers = dict[str, str]


class State:
    """What a mutant remembers between messages."""

    def __init__(self) -> None:
        self.terminal_seen: set[str] = set()


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


# -- response mutations: (request method, response, state) -> None (in place) ----------


def terminal_changes(method: str, response: Message, state: State) -> None:
    result = _result(response)
    if method != "tasks/get" or result is None or result.get("status") != "completed":
        return
    task_id = str(result.get("taskId"))
    if task_id in state.terminal_seen:
        result["status"] = "cancelled"
        result.pop("result", None)
    state.terminal_seen.add(task_id)


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
    if method in ("tasks/get", "tasks/cancel"):
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


# -- request mutations: (headers, message) -> None (in place) --------------------------


def foreign_answered(headers: Headers, message: Message) -> None:
    if headers.get("authorization") == "other":
        del headers["authorization"]


def routing_ignored(headers: Headers, message: Message) -> None:
    params = message.get("params")
    if "mcp-method" in headers and isinstance(params, dict):
        headers["mcp-method"] = str(message.get("method"))
        if isinstance(params.get("taskId"), str):
            headers["mcp-name"] = params["taskId"]


_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}


def meta_not_required(headers: Headers, message: Message) -> None:
    params = message.get("params")
    if isinstance(params, dict) and "_meta" not in params:
        params["_meta"] = json.loads(json.dumps(_META))


def gating_ignored(headers: Headers, message: Message) -> None:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    key = "io.modelcontextprotocol/clientCapabilities"
    if isinstance(meta, dict) and isinstance(meta.get(key), dict):
        meta[key]["extensions"] = {"io.modelcontextprotocol/tasks": {}}


RESPONSE = Callable[[str, Message, State], None]
REQUEST = Callable[[Headers, Message], None]

MUTANTS: dict[str, dict[str, tuple[RESPONSE | REQUEST, str, str]]] = {
    "ext": {
        "terminal_changes": (terminal_changes, "response", "terminal.final"),
        "no_poll_interval": (no_poll_interval, "response", "hints.poll_interval"),
        "negative_ttl": (negative_ttl, "response", "hints.ttl"),
        "update_wrong_code": (
            _code_swap("tasks/update"),
            "response",
            "errors.unknown_task",
        ),
        "get_result_type": (_result_type("tasks/get"), "response", "shape.tasks/get"),
        "cancel_ack_wrong": (
            _result_type("tasks/cancel"),
            "response",
            "shape.tasks/cancel",
        ),
        "legacy_capability": (legacy_capability, "response", "capability.declared"),
        "foreign_answered": (foreign_answered, "request", "errors.foreign_task"),
        "routing_ignored": (routing_ignored, "request", "routing.headers"),
        "meta_not_required": (meta_not_required, "request", "envelope.meta"),
        "gating_ignored": (gating_ignored, "request", "capability.gating"),
    },
    "2025": {
        "terminal_changes": (terminal_changes, "response", "terminal.final"),
        "no_poll_interval": (no_poll_interval, "response", "hints.poll_interval"),
        "result_wrong_code": (
            _code_swap("tasks/result"),
            "response",
            "errors.unknown_task",
        ),
        "cancel_no_ttl": (cancel_no_ttl, "response", "shape.tasks/cancel"),
        "cancel_not_cancelled": (cancel_not_cancelled, "response", "cancel.accepted"),
        "no_related_task": (no_related_task, "response", "result.related_task"),
        "timestamps_back": (timestamps_back, "response", "task.timestamps"),
        "failed_as_completed": (failed_as_completed, "response", "outcome.failed"),
        "list_missing": (list_missing, "response", "method.tasks/list"),
        "no_cancel_capability": (
            no_cancel_capability,
            "response",
            "capability.declared",
        ),
        "create_no_ttl": (create_no_ttl, "response", "shape.CreateTaskResult"),
        "foreign_answered": (foreign_answered, "request", "errors.foreign_task"),
    },
}
"""Mutants by revision: name -> (mutation, what it rewrites, the check that must
fail)."""


def _rewrite(data: bytes, method: str, mutate: RESPONSE, state: State) -> bytes:
    """Apply a response mutation to a JSON body or to the SSE events of a chunk."""
    text = data.decode()
    stripped = text.strip()
    if stripped.startswith("{"):
        message = json.loads(stripped)
        mutate(method, message, state)
        return json.dumps(message).encode()
    lines = []
    for line in text.split("\n"):
        if line.startswith("data:"):
            try:
                message = json.loads(line[5:])
            except ValueError:
                lines.append(line)
                continue
            if isinstance(message, dict) and "method" not in message:
                mutate(method, message, state)
            line = "data: " + json.dumps(message)
        lines.append(line)
    return "\n".join(lines).encode()


def wrap(inner: Any, revision: str) -> Any:
    """The ASGI app: ``/m/NAME/mcp`` applies mutant NAME to ``inner``."""
    states: dict[str, State] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/m/"):
            await inner(scope, receive, send)
            return
        name = scope["path"].split("/")[2]
        mutation, kind, _ = MUTANTS[revision][name]
        state = states.setdefault(name, State())
        scope = {**scope, "path": "/mcp", "raw_path": b"/mcp"}
        body = b""
        more = True
        while more:
            event = await receive()
            body += event.get("body", b"")
            more = event.get("more_body", False)
        message: Any = json.loads(body) if body.strip() else None
        method = str(message.get("method")) if isinstance(message, dict) else ""
        if kind == "request" and isinstance(message, dict):
            headers = {
                k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]
            }
            mutation(headers, message)  # type: ignore[call-arg, arg-type]
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

        pending: list[dict[str, Any]] = []

        async def forward(event: dict[str, Any]) -> None:
            if kind != "response" or not method:
                await send(event)
                return
            if event["type"] == "http.response.start":
                pending.append(
                    event
                )  # held until the body is known (its length changes)
                return
            data = _rewrite(event.get("body", b""), method, mutation, state) if event.get("body") else b""  # type: ignore[arg-type]
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
