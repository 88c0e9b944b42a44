"""Server adapter for the MCP Tasks extension ``io.modelcontextprotocol/tasks``.

What is left here is what the tables cannot say (core protocol 2026-07-28):
``server/discover``, the cache hints of a listing (``ttlMs``, ``cacheScope``) and the
wording of the ``-32021`` error for a request that did not declare the extension.
Everything else is in ``server_core``, chosen by the tables: dispatch, workers, the
state machine, the mechanisms of the Tasks roles (``inputRequests`` answered with
``tasks/update``, status notifications, ...), the per-request ``_meta`` (protocol
version, client capabilities) and the extension gate (``extension_id``), the server
deciding which calls run as tasks (no ``task_request_field``), ``resultType`` and MRTR
preflight questions (``result_kind_field``), ``subscriptions/listen`` (the
subscription ``_meta`` key), the ``Mcp-Method``/``Mcp-Name`` routing-header check
(``-32020``) and the HTTP status of each error code; the hosting in the official SDKs
(``mount``) is in ``sdk``."""

from __future__ import annotations

from typing import Any

from .models_ext import ErrorCode
from .protocol_ext import EXTENSION_ID, PROTOCOL_VERSION, TABLES
from .server_core import (
    AuditEvent,
    AuditHook,
    Authenticate,
    Call,
    JsonRpcError,
    Limits,
    RateLimiter,
    RequestInfo,
    Route,
    TaskServerCore,
    Tool,
    ToolContext,
    ToolError,
)

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

    def _revision_routes(self) -> dict[str, Route]:
        return {"server/discover": self._discover}

    def _tasks_not_declared(self, detail: str) -> JsonRpcError:
        """``-32021`` naming the Tasks extension as the missing capability."""
        return JsonRpcError(
            int(ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY),
            f"Missing required client capability: {detail} needs the"
            f" {EXTENSION_ID} extension declared in this request's clientCapabilities",
            {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}},
        )

    def _listing(self, tools: list[dict[str, Any]]) -> dict[str, Any]:
        return self._complete({"tools": tools, "ttlMs": 0, "cacheScope": "private"})

    async def _discover(self, call: Call) -> dict[str, Any]:
        """The ``server/discover`` result advertising the extension."""
        result: dict[str, Any] = {
            "supportedVersions": [PROTOCOL_VERSION],
            "capabilities": self.capabilities(),
            "ttlMs": 0,
            "cacheScope": "private",
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return self._complete(result)
