"""Server adapter for MCP revision 2025-11-25 with its experimental Tasks.

Only what the tables cannot say is left here: the ``initialize`` handshake (sessions
themselves are in the core), the cancelled task's status message and ``isError``
failing a task. The rest is in the parts of ``core``, chosen by the tables:
dispatch, workers, the mechanisms of the Tasks roles, ``params.task`` and
``execution.taskSupport`` (``task_request_field``) and the capabilities
``initialize`` declares (``server_capabilities``); the hosting in the official SDKs
is in ``sdk``.
"""

from __future__ import annotations

from typing import Any, cast

from ..jsonrpc import INVALID_PARAMS, JsonRpcError
from ..protocol_2025 import PROTOCOL_VERSION, TABLES
from .core import TaskServerCore
from .dispatch import Call, Route
from .elicit import ElicitAnswer, ElicitContentError, elicitation_schema
from .info import AuditEvent, AuditHook, Authenticate, RequestInfo
from .limits import Limits, RateLimiter
from .sessions import Session
from .tools import Tool, ToolContext, ToolError

__all__ = [
    "PROTOCOL_VERSION",
    "Session",
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
    """A 2025-11-25 Tasks server: tools, task store, sessions, dispatcher, workers.

    ``store`` defaults to ``SQLiteTaskStore("mcp-tasks.sqlite3")``. ``authenticate``
    maps each request to the principal that owns the tasks it creates; ``tasks/list``
    is offered only when requestors can be told apart (``enable_list``, by default
    whether ``authenticate`` is set). ``task_mismatch_code`` is the error for a
    ``params.task`` that the tool's ``taskSupport`` does not allow (``-32601`` by
    default; ``-32600`` is also allowed by the spec). At start, ``recover_orphans``
    fails every task a crashed process left unfinished in the store. Replicas sharing
    a ``ReplicaStore`` (Redis) ignore it: they fail only the tasks whose worker lease
    ran out (see ``Limits.lease_s``) and pass cancellations and status changes to
    each other, so ``tasks/result`` on one replica follows a worker on another.
    """

    tables = TABLES

    cancel_message = "The task was cancelled by request."

    def revision_routes(self) -> dict[str, Route]:
        return {"initialize": self._initialize}

    async def _initialize(self, call: Call) -> dict[str, Any]:
        """Record the client's capabilities; declare ours."""
        capabilities = call.params.get("capabilities")
        if not isinstance(capabilities, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.capabilities must be an object")
        if call.session is not None:
            call.session.client_capabilities = cast(dict[str, Any], capabilities)
        result: dict[str, Any] = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": self.capabilities(),
            "serverInfo": {"name": self.name, "version": self.version},
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def failed_result(self, result: dict[str, Any]) -> bool:
        """An ``isError`` result fails its task."""
        return bool(result.get("isError"))
