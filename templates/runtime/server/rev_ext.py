"""Server adapter for the MCP Tasks extension ``io.modelcontextprotocol/tasks``.

Only what the tables cannot say is left here (core protocol 2026-07-28):
``server/discover``, a listing's cache hints (``ttlMs``, ``cacheScope``) and the wording
of ``-32021`` for a request that did not declare the extension. The rest is in
the parts of ``core``, chosen by the tables: the per-request ``_meta`` and the extension
gate (``meta_keys``, ``extension_id``), the server deciding which calls run as tasks (no
``task_request_field``), ``resultType`` and MRTR preflight (``result_kind_field``),
``subscriptions/listen``, the routing headers and the HTTP status of each error code,
with dispatch, workers and the Tasks roles; the hosting in the official SDKs is in
``sdk``."""

from __future__ import annotations

from typing import Any

from ..jsonrpc import JsonRpcError
from ..protocol_ext import EXTENSION_ID, PROTOCOL_VERSION, TABLES
from .core import TaskServerCore
from .dispatch import Call, Route
from .elicit import ElicitAnswer, ElicitContentError, elicitation_schema
from .info import AuditEvent, AuditHook, Authenticate, RequestInfo
from .limits import Limits, RateLimiter
from .tools import Tool, ToolContext, ToolError

__all__ = [
    "EXTENSION_ID",
    "PROTOCOL_VERSION",
    "AuditEvent",
    "AuditHook",
    "Authenticate",
    "ElicitAnswer",
    "ElicitContentError",
    "JsonRpcError",
    "Limits",
    "RateLimiter",
    "RequestInfo",
    "Tool",
    "ToolContext",
    "ToolError",
    "elicitation_schema",
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

    Over HTTP, every request must carry ``MCP-Protocol-Version`` and ``Mcp-Method``,
    and ``Mcp-Name`` where it names a target (``tools/call``, ``prompts/get``,
    ``resources/read``), all matching the body; a request without them is refused with
    -32020 (HTTP 400), as SEP-2243 requires. ``Mcp-Name`` on ``tasks/*`` must match
    ``taskId`` when sent; ``require_routing_headers=True`` also refuses ``tasks/*``
    without it (the extension's MUST; off by default because fastmcp 4.1.4 omits it),
    and ``require_routing_headers=False`` accepts requests without headers (clients
    older than SEP-2243), still refusing headers that do not match.
    """

    tables = TABLES

    def revision_routes(self) -> dict[str, Route]:
        return {"server/discover": self._discover}

    def tasks_not_declared(self, detail: str) -> JsonRpcError:
        """``-32021`` naming the Tasks extension as the missing capability."""
        return JsonRpcError(
            self.tables.error_codes["MISSING_REQUIRED_CLIENT_CAPABILITY"],
            f"Missing required client capability: {detail} needs the"
            f" {EXTENSION_ID} extension declared in this request's clientCapabilities",
            {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}},
        )

    def listing(self, tools: list[dict[str, Any]]) -> dict[str, Any]:
        return self.views.complete(
            {"tools": tools, "ttlMs": 0, "cacheScope": "private"}
        )

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
        return self.views.complete(result)
