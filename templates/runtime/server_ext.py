"""Server adapter for the MCP Tasks extension ``io.modelcontextprotocol/tasks``.

What differs from 2025-11-25 outside the protocol tables lives here (core protocol
2026-07-28): every request carries its ``_meta`` (protocol version, client
capabilities) and only that request's capabilities count, so no task answers a
request that did not declare the extension (a task-only tool gets ``-32021``);
``server/discover``; ``resultType``; MRTR preflight questions;
``subscriptions/listen``. Dispatch, workers, the state machine, the mechanisms of the
Tasks roles (``inputRequests`` answered with ``tasks/update``, status notifications,
...), the ``Mcp-Method``/``Mcp-Name`` routing-header check (``-32020``) and the HTTP
status of each error code are in ``server_core``, chosen by the tables; the hosting in
the official SDKs (``mount``) is in ``sdk``."""

from __future__ import annotations

from typing import Any, cast

from .models_ext import ErrorCode
from .protocol_ext import (
    TABLES,
    EXTENSION_ID,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    META_SUBSCRIPTION_ID,
    PROTOCOL_VERSION,
    ROLES,
)
from .server_core import (
    INVALID_PARAMS,
    INVALID_REQUEST,
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
    missing_capability,
)
from .stores import TaskRecord

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

MISSING_REQUIRED_CLIENT_CAPABILITY = int(ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY)
UNSUPPORTED_PROTOCOL_VERSION = int(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION)


def _missing_extension(detail: str) -> JsonRpcError:
    """``-32021`` naming the Tasks extension as the missing capability."""
    return JsonRpcError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: {detail} needs the"
        f" {EXTENSION_ID} extension declared in this request's clientCapabilities",
        {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}},
    )


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

    # -- dispatch -------------------------------------------------------------------

    def _begin(
        self,
        method: str,
        params: dict[str, Any],
        request: RequestInfo,
        emit: Emit | None,
    ) -> Call:
        """The per-request ``_meta`` and the extension gate."""
        capabilities = self._check_meta(params)
        call = super()._begin(method, params, request, emit)
        call.capabilities = capabilities
        call.tasks = EXTENSION_ID in (capabilities.get("extensions") or {})
        if method in TABLES.task_requests and not call.tasks:
            raise _missing_extension(method)
        return call

    def _revision_routes(self) -> dict[str, Route]:
        return {"server/discover": self._discover, "subscriptions/listen": self._listen}

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
            method = str(request.get("method"))
            capability = missing_capability(method, ctx.client_capabilities)
            if capability is not None:
                raise self._missing_capability(capability, method)
        return {"resultType": "input_required", "inputRequests": requests}

    def _task_request(self, call: Call, tool: Tool) -> tuple[bool, int | None]:
        """A task whenever the request declared the extension and the tool allows one."""
        if call.tasks and tool.task_support != "forbidden":
            return True, None
        if tool.task_support == "required":
            raise _missing_extension(f"tool {tool.name!r}")
        return False, None

    async def _input_without_task(
        self, ctx: ToolContext, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Only a task asks for input mid-flight (a call asks by MRTR preflight)."""
        raise _missing_extension(f"tool {ctx.tool.name!r} asking for input")

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
        ack: dict[str, Any] = {"_meta": subscription, "notifications": {}}
        if requested is not None:
            ack["notifications"]["taskIds"] = [r.task_id for r in accepted]
        async with self._following(accepted) as queue:
            await emit(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": ack,
                }
            )
            while (task := await queue.get()) is not None:
                params = {"_meta": subscription, **task}
                await emit(
                    {"jsonrpc": "2.0", "method": ROLES["notify"], "params": params}
                )
        return self._complete({"_meta": subscription})
