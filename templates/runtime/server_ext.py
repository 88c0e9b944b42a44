"""Server skeleton for the MCP Tasks extension ``io.modelcontextprotocol/tasks``.

A server author registers tools and writes only their work::

    server = TasksServer("example", store=SQLiteTaskStore("tasks.db"))

    @server.tool(task_support="optional")
    async def slow(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        await ctx.report("halfway")
        answer = await ctx.elicit("Go on?", {"type": "object", "properties": {}})
        return f"done ({answer['action']})"

``TasksServer.handle`` answers one parsed JSON-RPC message (transport-agnostic);
``asgi.create_app(server)`` serves it over streamable HTTP.

What the plumbing guarantees (core protocol 2026-07-28 with the extension):

- capability gate: only the current request's
  ``_meta["io.modelcontextprotocol/clientCapabilities"]`` counts; no task is ever
  returned to a request that did not declare the extension, and a task-only tool
  then gets ``-32021`` with ``data.requiredCapabilities``; a request without
  ``protocolVersion`` or ``clientCapabilities`` gets ``-32602``;
- ``CreateTaskResult`` is sent only after the task is durably stored;
- ``tasks/get`` returns the ``DetailedTask`` of the current status, ``tasks/update``
  stores answers for outstanding input keys only, ``tasks/cancel`` acknowledges and
  stops the worker; ``tasks/result`` and ``tasks/list`` do not exist (``-32601``);
- the status state machine keeps terminal states final and bumps ``lastUpdatedAt``;
- ``subscriptions/listen`` with ``notifications.taskIds`` streams ``notifications/tasks``;
- every task is bound to the principal from the ``authenticate`` hook; other
  principals get "not found".
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import importlib
import logging
import secrets
from collections.abc import AsyncGenerator
from typing import Any, cast

from .models import ErrorCode
from .protocol import METHODS, has_role
from .server_core import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LIMIT_EXCEEDED,
    METHOD_NOT_FOUND,
    AuditEvent,
    AuditHook,
    Authenticate,
    Emit,
    JsonRpcError,
    Limits,
    RateLimiter,
    RequestInfo,
    TaskServerCore,
    Tool,
    ToolContext,
    ToolError,
    request_params,
    rfc3339,
    task_id_param,
    text_result,
    tool_result,
)
from .stores import Signal, TaskRecord, TaskStore

__all__ = [
    "EXTENSION_ID",
    "PROTOCOL_VERSION",
    "AuditEvent",
    "JsonRpcError",
    "Limits",
    "RequestInfo",
    "Tool",
    "ToolContext",
    "ToolError",
]

PROTOCOL_VERSION = "2026-07-28"
"""The core protocol revision this server speaks."""

EXTENSION_ID = "io.modelcontextprotocol/tasks"
"""The Tasks extension identifier."""

HEADER_MISMATCH = int(ErrorCode.HEADER_MISMATCH)
MISSING_REQUIRED_CLIENT_CAPABILITY = int(ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY)
UNSUPPORTED_PROTOCOL_VERSION = int(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION)

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

_TASK_METHODS = frozenset(
    name
    for name, spec in METHODS.items()
    if spec.sender == "client" and not spec.notification
)
"""The Tasks requests of the schema: they need the extension declared."""
_MOUNTED_METHODS = _TASK_METHODS | {
    "tools/list",
    "tools/call",
    "tasks/result",
    "tasks/list",
}
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

_CAPABILITY_FOR_INPUT = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}

_log = logging.getLogger(__name__)


def _missing_extension(detail: str) -> JsonRpcError:
    """``-32021`` naming the Tasks extension as the missing capability."""
    return JsonRpcError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: {detail} needs the"
        f" {EXTENSION_ID} extension declared in this request's clientCapabilities",
        {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}},
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
        require_routing_headers: bool = False,
    ) -> None:
        super().__init__(
            name,
            version,
            store=store,
            limits=limits,
            authenticate=authenticate,
            rate_limiter=rate_limiter,
            audit=audit,
            instructions=instructions,
            recover_orphans=recover_orphans,
        )
        self.require_routing_headers = require_routing_headers
        self._contexts: dict[str, ToolContext] = {}
        self._answers: dict[tuple[str, str], asyncio.Future[dict[str, Any]]] = {}
        self._listeners: dict[str, set[asyncio.Queue[dict[str, Any] | None]]] = {}

    def http_status(self, code: int) -> int:
        """The HTTP status the protocol asks for with an error response of ``code``."""
        return _STATUS_BY_CODE.get(code, 200)

    async def request_input(
        self, ctx: ToolContext, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask the client for input mid-flight and wait for the answer.

        The task moves to ``input_required`` with a new key in ``inputRequests`` (unique
        for the task's life) until the client answers with ``tasks/update``, then back
        to ``working``. Several requests may be outstanding at once. Raises
        ``JsonRpcError(-32021)`` when the tool is not running as a task or the client did
        not declare the capability the request needs, and ``-32601`` when the schema
        has no ``tasks/update`` to answer through.
        """
        if ctx.task_id is None:
            raise _missing_extension(f"tool {ctx.tool.name!r} asking for input")
        if not has_role("update"):
            raise JsonRpcError(
                METHOD_NOT_FOUND,
                f"{method}: this revision has no tasks/update to answer input requests",
            )
        capability = _CAPABILITY_FOR_INPUT.get(method)
        if capability is not None and capability not in ctx.client_capabilities:
            raise JsonRpcError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: {method} needs"
                f" {capability!r} in the client's capabilities",
                {"requiredCapabilities": {capability: {}}},
            )
        key = f"{method.split('/')[0]}-{secrets.token_hex(8)}"
        while key in ctx.issued_keys:
            key = f"{method.split('/')[0]}-{secrets.token_hex(8)}"
        ctx.issued_keys.add(key)
        return await self.wait_for_input(
            ctx.task_id, key, {"method": method, "params": params}
        )

    # -- hosting in the official SDK ------------------------------------------

    def mount(self, sdk_server: Any) -> None:
        """Serve the tools and the Tasks methods from an ``mcp`` 2.x low-level ``Server``.

        Adds a ``Server.middleware`` entry that answers ``tools/list``, ``tools/call``
        and ``tasks/*`` through ``handle`` (with the HTTP headers, so routing headers
        and the ``authenticate`` hook work), advertises the extension in the SDK's
        ``server/discover``, and wraps the SDK server's lifespan so that this server
        starts and closes with it. Everything else (``server/discover``,
        ``subscriptions/listen``, other features) stays with the SDK. Needs
        ``mcp>=2.3``, imported here.
        """
        mcp_error: Any = getattr(
            importlib.import_module("mcp.shared.exceptions"), "MCPError"
        )
        sdk_server.extensions[EXTENSION_ID] = {}

        async def middleware(ctx: Any, call_next: Any) -> Any:
            if ctx.request_id is None or ctx.method not in _MOUNTED_METHODS:
                return await call_next(ctx)
            http = getattr(ctx, "request", None)
            headers = None
            if http is not None:
                headers = {str(k).lower(): str(v) for k, v in http.headers.items()}
            message = {
                "jsonrpc": "2.0",
                "id": ctx.request_id,
                "method": ctx.method,
                "params": dict(ctx.params or {}),
            }
            response = await self.handle(message, RequestInfo(headers=headers))
            if response is None:
                return None
            if "error" in response:
                error = response["error"]
                raise mcp_error(error["code"], error["message"], error.get("data"))
            return response["result"]

        sdk_server.middleware.insert(0, middleware)
        sdk_lifespan = sdk_server.lifespan

        @contextlib.asynccontextmanager
        async def lifespan(app: Any) -> AsyncGenerator[Any, None]:
            async with self:
                async with sdk_lifespan(app) as state:
                    yield state

        sdk_server.lifespan = lifespan

    # -- dispatcher ---------------------------------------------------------

    async def handle(
        self,
        message: dict[str, Any],
        request: RequestInfo | None = None,
        emit: Emit | None = None,
    ) -> dict[str, Any] | None:
        """Answer one JSON-RPC message.

        Returns the response object, or None for notifications and responses. ``emit``
        sends messages on the request's own stream; ``subscriptions/listen`` needs it.
        """
        if "method" not in message:
            return None  # a response: this server sends no requests
        request_id = message.get("id")
        if "id" not in message:
            return (
                None  # notifications (including notifications/cancelled) need no reply
            )
        try:
            result = await self._dispatch(
                message, request or RequestInfo(), emit, request_id
            )
        except JsonRpcError as error:
            return {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}
        except Exception:  # a bug must yield an error response, not a dead stream
            _log.exception("internal error while handling %s", message.get("method"))
            internal = JsonRpcError(INTERNAL_ERROR, "Internal error")
            return {"jsonrpc": "2.0", "id": request_id, "error": internal.to_wire()}
        meta = dict(result.get("_meta") or {})
        meta[META_SERVER_INFO] = {"name": self.name, "version": self.version}
        result["_meta"] = meta
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    async def _dispatch(
        self,
        message: dict[str, Any],
        request: RequestInfo,
        emit: Emit | None,
        request_id: Any,
    ) -> dict[str, Any]:
        """Route one request; raises ``JsonRpcError`` for every failure."""
        method = message.get("method")
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            raise JsonRpcError(INVALID_REQUEST, "Not a JSON-RPC 2.0 request")
        params = request_params(message)
        self._check_headers(method, params, request)
        capabilities = self._check_meta(params)
        declared = EXTENSION_ID in (capabilities.get("extensions") or {})
        principal = self._principal(request)
        if method in _TASK_METHODS:
            if not declared:
                raise _missing_extension(method)
            self._check_rate(principal, method)
        if method == "server/discover":
            return self._discover()
        if method == "ping":
            return {"resultType": "complete"}
        if method == "tools/list":
            return {
                "resultType": "complete",
                "tools": [self._tool_wire(tool) for tool in self._tools.values()],
                "ttlMs": 0,
                "cacheScope": "private",
            }
        if method == "tools/call":
            return await self._call_tool(params, capabilities, declared, principal)
        if method == "tasks/get":
            record = await self._lookup(task_id_param(params), principal)
            self._emit_audit("retrieved", record.task_id, principal)
            return {"resultType": "complete", **self._detailed(record)}
        if method == "tasks/update" and has_role("update"):
            return await self._tasks_update(params, principal)
        if method == "tasks/cancel":
            return await self._tasks_cancel(params, principal)
        if method == "subscriptions/listen":
            return await self._listen(params, declared, principal, emit, request_id)
        return await self._call_custom(method, params, principal, request)

    def _check_headers(
        self, method: str, params: dict[str, Any], request: RequestInfo
    ) -> None:
        """Streamable HTTP routing headers: ``Mcp-Method`` and ``Mcp-Name`` match the body."""
        headers = request.headers
        if headers is None:
            return
        header_method = headers.get("mcp-method")
        header_name = headers.get("mcp-name")
        if method in _TASK_METHODS and self.require_routing_headers:
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
        if header_name is None:
            return
        if method in _TASK_METHODS:
            expected = params.get("taskId")
        elif method == "tools/call":
            expected = params.get("name")
        else:
            return
        if _decode_header(header_name) != expected:
            raise JsonRpcError(
                HEADER_MISMATCH,
                f"Mcp-Name header does not match the body's"
                f" {'taskId' if method in _TASK_METHODS else 'name'}",
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

    def _discover(self) -> dict[str, Any]:
        """The ``server/discover`` result advertising the extension."""
        result: dict[str, Any] = {
            "resultType": "complete",
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
        return result

    @staticmethod
    def _tool_wire(tool: Tool) -> dict[str, Any]:
        """A ``Tool`` entry for ``tools/list``."""
        wire: dict[str, Any] = {"name": tool.name, "inputSchema": tool.input_schema}
        if tool.title is not None:
            wire["title"] = tool.title
        if tool.description:
            wire["description"] = tool.description
        return wire

    # -- wire shapes ---------------------------------------------------------

    @staticmethod
    def _task(record: TaskRecord) -> dict[str, Any]:
        """The ``Task`` fields of a record."""
        task: dict[str, Any] = {
            "taskId": record.task_id,
            "status": record.status,
            "createdAt": rfc3339(record.created_at),
            "lastUpdatedAt": rfc3339(record.updated_at),
            "ttlMs": record.ttl_ms,
        }
        if record.status_message is not None:
            task["statusMessage"] = record.status_message
        if record.poll_interval_ms is not None:
            task["pollIntervalMs"] = record.poll_interval_ms
        task.update(record.extra)
        return task

    def _detailed(self, record: TaskRecord) -> dict[str, Any]:
        """The ``DetailedTask`` variant for the record's status."""
        task = self._task(record)
        if record.status == "input_required":
            task["inputRequests"] = dict(record.input_requests)
        elif record.status == "completed" and record.result is not None:
            task["result"] = record.result
        elif record.status == "failed":
            task["error"] = record.error or {
                "code": INTERNAL_ERROR,
                "message": record.status_message or "Task failed",
            }
        return task

    # -- tools/call ------------------------------------------------------------

    async def _call_tool(
        self,
        params: dict[str, Any],
        capabilities: dict[str, Any],
        declared: bool,
        principal: str | None,
    ) -> dict[str, Any]:
        """Run a tool synchronously, ask MRTR questions, or create a task."""
        tool, arguments = self._tool(params)
        responses = params.get("inputResponses", {})
        if not isinstance(responses, dict):
            raise JsonRpcError(
                INVALID_PARAMS, "params.inputResponses must be an object"
            )
        self._check_size("params.inputResponses", responses)
        ctx = ToolContext(
            self,
            tool=tool,
            principal=principal,
            client_capabilities=capabilities,
            input_responses=cast(dict[str, Any], responses),
        )
        if tool.preflight is not None:
            requests = await tool.preflight(ctx, arguments)
            if requests:
                for request in requests.values():
                    capability = _CAPABILITY_FOR_INPUT.get(str(request.get("method")))
                    if capability is not None and capability not in capabilities:
                        raise JsonRpcError(
                            MISSING_REQUIRED_CLIENT_CAPABILITY,
                            f"Missing required client capability: {capability!r}",
                            {"requiredCapabilities": {capability: {}}},
                        )
                return {"resultType": "input_required", "inputRequests": requests}
        as_task = declared and tool.task_support != "forbidden"
        if not as_task:
            if tool.task_support == "required":
                raise _missing_extension(f"tool {tool.name!r}")
            try:
                result = tool_result(await tool.handler(ctx, arguments))
            except ToolError as error:
                result = text_result(str(error), is_error=True)
            result["resultType"] = "complete"
            return result
        record = await self._new_task(tool, principal, None)
        ctx.task_id = record.task_id
        self._contexts[record.task_id] = ctx
        self._spawn(record.task_id, self._work(record.task_id, ctx, arguments))
        return {"resultType": "task", **self._task(record)}

    async def _work(
        self, task_id: str, ctx: ToolContext, arguments: dict[str, Any]
    ) -> None:
        """Run a tool as a task and store its outcome.

        A result (even ``isError: true``) completes the task; a ``JsonRpcError`` or an
        unexpected exception fails it with the JSON-RPC error inlined.
        """
        try:
            try:
                result = tool_result(await ctx.tool.handler(ctx, arguments))
            except ToolError as error:
                result = text_result(str(error), is_error=True)
            except JsonRpcError as error:
                await self._finish(task_id, "failed", error=error)
                return
            except Exception as exc:  # the tool's bug must not kill the server
                _log.exception("tool %s failed", ctx.tool.name)
                internal = JsonRpcError(
                    INTERNAL_ERROR,
                    f"Internal error in tool {ctx.tool.name!r}: {type(exc).__name__}",
                )
                await self._finish(task_id, "failed", error=internal)
                return
            result["resultType"] = "complete"
            await self._finish(task_id, "completed", result=result)
        finally:
            self._contexts.pop(task_id, None)

    # -- input -------------------------------------------------------------------

    async def wait_for_input(
        self, task_id: str, key: str, request: dict[str, Any]
    ) -> dict[str, Any]:
        """Publish one input request under ``key`` and wait for its answer.

        The task is ``input_required`` while any key is outstanding. Used by
        ``ToolContext.request_input``.
        """
        answer: asyncio.Future[dict[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )
        self._answers[(task_id, key)] = answer
        try:
            asked = await self._mutate(
                task_id,
                lambda record: {
                    "status": "input_required",
                    "input_requests": {**record.input_requests, key: request},
                },
            )
            if asked is None:
                raise asyncio.CancelledError  # the task already ended
            return await answer
        finally:
            self._answers.pop((task_id, key), None)

    async def _tasks_update(
        self, params: dict[str, Any], principal: str | None
    ) -> dict[str, Any]:
        """Store answers for outstanding keys; ignore every other key."""
        task_id = task_id_param(params)
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise JsonRpcError(
                INVALID_PARAMS, "params.inputResponses must be an object"
            )
        self._check_size("params.inputResponses", responses)
        await self._lookup(task_id, principal)
        answered: dict[str, dict[str, Any]] = {}

        def answer(record: TaskRecord) -> dict[str, Any] | None:
            answered.clear()
            for key, value in cast(dict[str, Any], responses).items():
                if key in record.input_requests and isinstance(value, dict):
                    answered[key] = cast(dict[str, Any], value)
            if not answered:
                return None
            remaining = {
                k: v for k, v in record.input_requests.items() if k not in answered
            }
            return {
                "status": "input_required" if remaining else "working",
                "input_requests": remaining,
            }

        if await self._mutate(task_id, answer) is None:
            answered.clear()
        if self._deliver_answers(task_id, answered):
            # some waiting worker runs on another replica
            await self._signal("answers", task_id, answers=answered)
        return {"resultType": "complete"}

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

    def _on_revision_signal(self, kind: Any, task_id: str, signal: Signal) -> None:
        """Answers given through another replica for a worker running here."""
        answers: Any = signal.get("answers")
        if kind == "answers" and isinstance(answers, dict):
            self._deliver_answers(task_id, cast(dict[str, Any], answers))

    # -- cancel ------------------------------------------------------------------

    async def _tasks_cancel(
        self, params: dict[str, Any], principal: str | None
    ) -> dict[str, Any]:
        """Record the cancellation, stop the worker and acknowledge."""
        record = await self._lookup(task_id_param(params), principal)
        if not record.is_terminal:
            ctx = self._contexts.get(record.task_id)
            if ctx is not None:
                ctx.cancelled = True
            cancelled = await self._finish(
                record.task_id, "cancelled", status_message="Cancelled by request"
            )
            self._stop_worker(record.task_id)
            if cancelled is not None and ctx is None:
                # the worker may run on another replica
                await self._signal("cancel", record.task_id)
        return {"resultType": "complete"}

    def _cancelled_elsewhere(self, task_id: str) -> None:
        """Mark the local worker of a task another replica cancelled, and stop it."""
        ctx = self._contexts.get(task_id)
        if ctx is not None:
            ctx.cancelled = True
        self._stop_worker(task_id)

    # -- notifications ---------------------------------------------------------

    async def _listen(
        self,
        params: dict[str, Any],
        declared: bool,
        principal: str | None,
        emit: Emit | None,
        request_id: Any,
    ) -> dict[str, Any]:
        """Stream ``notifications/tasks`` for the requested task IDs until closed."""
        notifications: Any = params.get("notifications", {})
        if not isinstance(notifications, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.notifications must be an object")
        requested: Any = cast(dict[str, Any], notifications).get("taskIds")
        if requested is not None:
            if not declared:
                raise _missing_extension("subscriptions/listen with taskIds")
            if not isinstance(requested, list) or not all(
                isinstance(t, str) for t in cast("list[object]", requested)
            ):
                raise JsonRpcError(
                    INVALID_PARAMS, "notifications.taskIds must be strings"
                )
        if emit is None:
            raise JsonRpcError(
                INVALID_REQUEST, "subscriptions/listen needs a streaming transport"
            )
        accepted: list[TaskRecord] = []
        for task_id in cast(list[str], requested or []):
            try:
                accepted.append(await self._lookup(task_id, principal))
            except JsonRpcError:
                continue  # unknown or foreign IDs are simply not acknowledged
        subscription = {META_SUBSCRIPTION_ID: request_id}
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
            for record in accepted:
                queue.put_nowait(self._detailed(record))
            while (task := await queue.get()) is not None:
                await emit(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/tasks",
                        "params": {"_meta": subscription, **task},
                    }
                )
        finally:
            for record in accepted:
                listeners = self._listeners.get(record.task_id)
                if listeners is not None:
                    listeners.discard(queue)
                    if not listeners:
                        del self._listeners[record.task_id]
        return {"resultType": "complete", "_meta": subscription}

    async def _published(self, record: TaskRecord) -> None:
        """Push the new ``DetailedTask`` to every subscription that follows it."""
        listeners = self._listeners.get(record.task_id)
        if listeners:
            task = self._detailed(record)
            for queue in listeners:
                queue.put_nowait(task)

    async def _on_close(self) -> None:
        """End every subscription gracefully."""
        for listeners in self._listeners.values():
            for queue in listeners:
                queue.put_nowait(None)
