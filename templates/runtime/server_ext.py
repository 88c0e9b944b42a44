"""Server adapter for the MCP Tasks extension ``io.modelcontextprotocol/tasks``.

What differs from 2025-11-25 lives here (core protocol 2026-07-28): every request
carries its ``_meta`` (protocol version, client capabilities) and only that request's
capabilities count, so no task answers a request that did not declare the extension
(a task-only tool gets ``-32021``); ``server/discover``; the ``Mcp-Method``/``Mcp-Name``
routing headers (``-32020``); ``resultType``; MRTR preflight questions;
``inputRequests`` answered with ``tasks/update``; ``subscriptions/listen`` streaming
``notifications/tasks``. Dispatch, workers, the state machine and the hosting in the
official SDKs (``mount``) are in ``server_core`` and ``sdk``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import secrets
from dataclasses import replace
from typing import Any, cast

from .models_ext import CreateTaskResult, ErrorCode
from .protocol_ext import (
    TABLES,
    COMPLETED,
    EXTENSION_ID,
    FAILED,
    INPUT_REQUIRED,
    INPUT_STATUSES,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    PROTOCOL_VERSION,
    ROLES,
    WORKING,
    has_role,
)
from .server_core import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LIMIT_EXCEEDED,
    METHOD_NOT_FOUND,
    AuditEvent,
    AuditHook,
    Authenticate,
    Call,
    Emit,
    JsonRpcError,
    Limits,
    RateLimiter,
    RequestInfo,
    Route,
    TaskServerCore,
    Tool,
    ToolContext,
    ToolError,
    check_answer,
    missing_capability,
    task_id_param,
)
from .stores import Signal, TaskRecord

__all__ = [
    "EXTENSION_ID",
    "PROTOCOL_VERSION",
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

HEADER_MISMATCH = int(ErrorCode.HEADER_MISMATCH)
MISSING_REQUIRED_CLIENT_CAPABILITY = int(ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY)
UNSUPPORTED_PROTOCOL_VERSION = int(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION)

_STATUS_BY_CODE = {
    int(ErrorCode.PARSE_ERROR): 400,
    int(ErrorCode.INVALID_REQUEST): 400,
    int(ErrorCode.INVALID_PARAMS): 400,
    int(ErrorCode.METHOD_NOT_FOUND): 404,
    LIMIT_EXCEEDED: 429,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
}
"""HTTP status of an error response, by JSON-RPC code."""


def _missing_extension(detail: str) -> JsonRpcError:
    """``-32021`` naming the Tasks extension as the missing capability."""
    return JsonRpcError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: {detail} needs the"
        f" {EXTENSION_ID} extension declared in this request's clientCapabilities",
        {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}},
    )


def _missing(capability: str, detail: str) -> JsonRpcError:
    """``-32021`` naming a client capability."""
    return JsonRpcError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: {detail}",
        {"requiredCapabilities": {capability: {}}},
    )


def _decode_header(value: str) -> str:
    """Decode the ``=?base64?...?=`` sentinel form of a routing header."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise JsonRpcError(
                HEADER_MISMATCH, "Malformed base64 value in a routing header"
            ) from None
    return value


class TasksServer(TaskServerCore):
    """A Tasks-extension server: tools, task store, dispatcher and worker runtime.

    ``store`` defaults to ``SQLiteTaskStore("mcp-tasks.sqlite3")``. ``authenticate``
    maps each request to a principal that owns the tasks it creates. Use
    ``async with server:`` (or ``start``/``close``) around serving. At start,
    ``recover_orphans`` fails every task a crashed process left unfinished in the
    store. Replicas sharing a ``ReplicaStore`` (Redis) ignore it: they fail only the
    tasks whose worker lease ran out (see ``Limits.lease_s``) and pass cancellations,
    input answers and status notifications to each other.

    Over HTTP, ``Mcp-Method`` and ``Mcp-Name`` must match the body whenever they are
    sent. ``require_routing_headers=True`` also refuses ``tasks/*`` requests that lack
    them; it is off by default because some clients (fastmcp 4.1.4) omit ``Mcp-Name``.
    """

    tables = TABLES

    def setup(self) -> None:
        self._answers: dict[tuple[str, str], asyncio.Future[dict[str, Any]]] = {}
        self._listeners: dict[str, set[asyncio.Queue[dict[str, Any] | None]]] = {}

    def http_status(self, code: int) -> int:
        """The HTTP status the protocol asks for with an error response of ``code``."""
        return _STATUS_BY_CODE.get(code, 200)

    # -- dispatch -------------------------------------------------------------------

    def _begin(
        self,
        method: str,
        params: dict[str, Any],
        request: RequestInfo,
        emit: Emit | None,
    ) -> Call:
        """Routing headers, the per-request ``_meta`` and the extension gate."""
        self._check_headers(method, params, request)
        capabilities = self._check_meta(params)
        call = super()._begin(method, params, request, emit)
        call.capabilities = capabilities
        call.tasks = EXTENSION_ID in (capabilities.get("extensions") or {})
        if method in TABLES.task_requests and not call.tasks:
            raise _missing_extension(method)
        return call

    def _revision_routes(self) -> dict[str, Route]:
        return {"server/discover": self._discover, "subscriptions/listen": self._listen}

    def _role_routes(self) -> dict[str, Route]:
        return {**super()._role_routes(), "update": self._tasks_update}

    def _respond(self, result: dict[str, Any]) -> dict[str, Any]:
        meta = dict(result.get("_meta") or {})
        meta[META_SERVER_INFO] = {"name": self.name, "version": self.version}
        result["_meta"] = meta
        return result

    def _complete(self, result: dict[str, Any]) -> dict[str, Any]:
        result["resultType"] = "complete"
        return result

    def _listing(self, tools: list[dict[str, Any]]) -> dict[str, Any]:
        return self._complete({"tools": tools, "ttlMs": 0, "cacheScope": "private"})

    async def _discover(self, call: Call) -> dict[str, Any]:
        """The ``server/discover`` result advertising the extension."""
        result: dict[str, Any] = {
            "supportedVersions": [PROTOCOL_VERSION],
            "capabilities": {
                "tools": {"listChanged": False},
                "extensions": {EXTENSION_ID: {}},
            },
            "ttlMs": 0,
            "cacheScope": "private",
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return self._complete(result)

    def _check_headers(
        self, method: str, params: dict[str, Any], request: RequestInfo
    ) -> None:
        """Streamable HTTP routing headers: ``Mcp-Method`` and ``Mcp-Name`` match the body."""
        headers = request.headers
        if headers is None:
            return
        header_method = headers.get("mcp-method")
        header_name = headers.get("mcp-name")
        if method in TABLES.task_requests and self.require_routing_headers:
            if header_method is None or header_name is None:
                raise JsonRpcError(
                    HEADER_MISMATCH,
                    f"{method} requires the Mcp-Method and Mcp-Name headers",
                )
        if header_method is not None and _decode_header(header_method) != method:
            raise JsonRpcError(
                HEADER_MISMATCH,
                f"Mcp-Method header {header_method!r} does not match the body's"
                f" method {method!r}",
            )
        if header_name is None or (
            method not in TABLES.task_requests and method != "tools/call"
        ):
            return
        field = "taskId" if method in TABLES.task_requests else "name"
        if _decode_header(header_name) != params.get(field):
            raise JsonRpcError(
                HEADER_MISMATCH, f"Mcp-Name header does not match the body's {field}"
            )

    @staticmethod
    def _check_meta(params: dict[str, Any]) -> dict[str, Any]:
        """Check the required per-request ``_meta``; return the client capabilities."""
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            raise JsonRpcError(
                INVALID_PARAMS,
                f"params._meta with {META_PROTOCOL_VERSION!r} and"
                f" {META_CLIENT_CAPABILITIES!r} is required",
            )
        meta = cast(dict[str, Any], meta)
        version = meta.get(META_PROTOCOL_VERSION)
        capabilities = meta.get(META_CLIENT_CAPABILITIES)
        if not isinstance(version, str) or not isinstance(capabilities, dict):
            raise JsonRpcError(
                INVALID_PARAMS,
                f"params._meta must carry {META_PROTOCOL_VERSION!r} (string) and"
                f" {META_CLIENT_CAPABILITIES!r} (object)",
            )
        if version != PROTOCOL_VERSION:
            raise JsonRpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version {version!r}",
                {"supported": [PROTOCOL_VERSION], "requested": version},
            )
        return cast(dict[str, Any], capabilities)

    # -- tools/call and the task shapes ------------------------------------------------

    async def _preflight(
        self, call: Call, ctx: ToolContext, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Take ``inputResponses``; ask the tool's MRTR questions, if any."""
        responses = call.params.get("inputResponses", {})
        if not isinstance(responses, dict):
            raise JsonRpcError(
                INVALID_PARAMS, "params.inputResponses must be an object"
            )
        self._check_size("params.inputResponses", responses)
        ctx.input_responses = cast(dict[str, Any], responses)
        if ctx.tool.preflight is None:
            return None
        requests = await ctx.tool.preflight(ctx, arguments)
        if not requests:
            return None
        for request in requests.values():
            capability = missing_capability(
                str(request.get("method")), ctx.client_capabilities
            )
            if capability is not None:
                raise _missing(capability, repr(capability))
        return {"resultType": "input_required", "inputRequests": requests}

    def _task_request(self, call: Call, tool: Tool) -> tuple[bool, int | None]:
        """A task whenever the request declared the extension and the tool allows one."""
        if call.tasks and tool.task_support != "forbidden":
            return True, None
        if tool.task_support == "required":
            raise _missing_extension(f"tool {tool.name!r}")
        return False, None

    def _created(self, record: TaskRecord, ctx: ToolContext) -> dict[str, Any]:
        return CreateTaskResult.model_validate(self._task_values(record)).to_wire()

    def _status_payload(self, record: TaskRecord) -> dict[str, Any]:
        """``inputRequests``, ``result`` or ``error``, as the status variant has it."""
        if record.status in INPUT_STATUSES:
            return {"input_requests": dict(record.input_requests)}
        if record.status == COMPLETED:
            return {"result": record.result or {}}
        if record.status == FAILED:
            fallback = {
                "code": INTERNAL_ERROR,
                "message": record.status_message or "Task failed",
            }
            return {"error": record.error or fallback}
        return {}

    async def _cancel_result(
        self, cancelled: TaskRecord | None, record: TaskRecord, principal: str | None
    ) -> dict[str, Any]:
        return self._complete({})

    # -- input ------------------------------------------------------------------------

    async def request_input(
        self, ctx: ToolContext, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask the client for input mid-flight and wait for the answer.

        The task moves to ``input_required`` with a new key in ``inputRequests`` (unique
        for the task's life) until the client answers with ``tasks/update``, then works
        again. Several requests may be outstanding at once. Raises ``-32021`` when the
        tool is not running as a task or the client did not declare the capability the
        request needs, ``-32602`` for a request the schema does not allow, and
        ``-32601`` when the schema has no ``tasks/update`` to answer through.
        """
        if ctx.task_id is None:
            raise _missing_extension(f"tool {ctx.tool.name!r} asking for input")
        if not has_role("update"):
            raise JsonRpcError(
                METHOD_NOT_FOUND,
                f"{method}: this schema has no tasks/update to answer input requests",
            )
        capability = missing_capability(method, ctx.client_capabilities)
        if capability is not None:
            raise _missing(
                capability,
                f"{method} needs {capability!r} in the client's capabilities",
            )
        request = {"method": method, "params": params}
        key = f"{method.split('/')[0]}-{secrets.token_hex(8)}"
        while key in ctx.issued_keys:
            key = f"{method.split('/')[0]}-{secrets.token_hex(8)}"
        ctx.issued_keys.add(key)
        return await self.wait_for_input(ctx.task_id, key, request)

    async def wait_for_input(
        self, task_id: str, key: str, request: dict[str, Any]
    ) -> dict[str, Any]:
        """Publish one input request under ``key`` and wait for its answer.

        The task is ``input_required`` while any key is outstanding.
        """
        answer: asyncio.Future[dict[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )
        self._answers[(task_id, key)] = answer
        try:

            def ask(record: TaskRecord) -> dict[str, Any]:
                asking = {**record.input_requests, key: request}
                try:  # refuse what the schema does not allow before tasks/get shows it
                    self._task_model(
                        replace(record, status=INPUT_REQUIRED, input_requests=asking)
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
                    "status": INPUT_REQUIRED,
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
        """Store answers for outstanding keys; ignore every other key."""
        task_id = task_id_param(call.params)
        responses = call.params.get("inputResponses")
        if not isinstance(responses, dict):
            raise JsonRpcError(
                INVALID_PARAMS, "params.inputResponses must be an object"
            )
        self._check_size("params.inputResponses", responses)
        await self._lookup(task_id, call.principal)
        answered: dict[str, dict[str, Any]] = {}

        def answer(record: TaskRecord) -> dict[str, Any] | None:
            answered.clear()
            for key, value in cast(dict[str, Any], responses).items():
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
                        TABLES.models,
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
            status = INPUT_REQUIRED if remaining else WORKING
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
        """Hand answers to the local ``wait_for_input`` calls; True if any was not here."""
        elsewhere = False
        for key, value in answers.items():
            future = self._answers.get((task_id, key))
            if future is None:
                elsewhere = True
            elif not future.done():
                future.set_result(cast(dict[str, Any], value))
        return elsewhere

    def _stored_answers(self, record: TaskRecord) -> None:
        """Answers stored in the task for a worker here that missed their signal."""
        self._deliver_answers(record.task_id, record.answers)

    def _on_revision_signal(self, kind: Any, task_id: str, signal: Signal) -> None:
        """Answers given through another replica for a worker running here."""
        answers: Any = signal.get("answers")
        if kind == "answers" and isinstance(answers, dict):
            self._deliver_answers(task_id, cast(dict[str, Any], answers))

    # -- notifications ----------------------------------------------------------------

    async def _listen(self, call: Call) -> dict[str, Any]:
        """Stream ``notifications/tasks`` for the requested task IDs until closed."""
        notifications: Any = call.params.get("notifications", {})
        if not isinstance(notifications, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.notifications must be an object")
        requested: Any = cast(dict[str, Any], notifications).get("taskIds")
        if requested is not None:
            if not call.tasks:
                raise _missing_extension("subscriptions/listen with taskIds")
            if not isinstance(requested, list) or not all(
                isinstance(t, str) for t in cast("list[object]", requested)
            ):
                raise JsonRpcError(
                    INVALID_PARAMS, "notifications.taskIds must be strings"
                )
        emit = call.emit
        if emit is None:
            raise JsonRpcError(
                INVALID_REQUEST, "subscriptions/listen needs a streaming transport"
            )
        accepted: list[TaskRecord] = []
        for task_id in cast(list[str], requested or []):
            try:
                accepted.append(await self._lookup(task_id, call.principal))
            except JsonRpcError:
                continue  # unknown or foreign IDs are simply not acknowledged
        subscription = {META_SUBSCRIPTION_ID: call.request_id}
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        for record in accepted:
            self._listeners.setdefault(record.task_id, set()).add(queue)
        try:
            ack: dict[str, Any] = {"_meta": subscription, "notifications": {}}
            if requested is not None:
                ack["notifications"]["taskIds"] = [r.task_id for r in accepted]
            await emit(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": ack,
                }
            )
            notify = ROLES.get("notify")
            for record in accepted if notify is not None else []:
                queue.put_nowait(self._task(record))
            while (task := await queue.get()) is not None:
                params = {"_meta": subscription, **task}
                await emit({"jsonrpc": "2.0", "method": notify, "params": params})
        finally:
            for record in accepted:
                listeners = self._listeners.get(record.task_id)
                if listeners is not None:
                    listeners.discard(queue)
                    if not listeners:
                        del self._listeners[record.task_id]
        return self._complete({"_meta": subscription})

    async def _published(self, record: TaskRecord) -> None:
        """Push the new task state to every subscription that follows it."""
        listeners = self._listeners.get(record.task_id)
        if listeners and has_role("notify"):
            task = self._task(record)
            for queue in listeners:
                queue.put_nowait(task)

    async def _on_close(self) -> None:
        """End every subscription gracefully."""
        for listeners in self._listeners.values():
            for queue in listeners:
                queue.put_nowait(None)
