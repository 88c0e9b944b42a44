"""Server adapter for MCP revision 2025-11-25 with its experimental Tasks.

What differs from the extension outside the protocol tables lives here: ``initialize``
and its capabilities (sessions themselves are in the core), ``params.task`` asking for a
task, ``execution.taskSupport`` on tools, ``isError`` failing a task. Dispatch, workers, the state machine and the mechanisms of
the Tasks roles (``tasks/result`` blocking while it carries the task's input requests,
``tasks/list``, ``notifications/tasks/status``, the nested ``CreateTaskResult``) are in
``server_core``, chosen by the tables; the hosting in the official SDKs (``mount``) is
in ``sdk``.
"""

from __future__ import annotations

from typing import Any, cast

from .protocol_2025 import (
    TABLES,
    PROTOCOL_VERSION,
)
from .server_core import (
    INVALID_PARAMS,
    AuditEvent,
    AuditHook,
    Authenticate,
    Call,
    JsonRpcError,
    Limits,
    RateLimiter,
    RequestInfo,
    Route,
    Session,
    TaskServerCore,
    Tool,
    ToolContext,
    ToolError,
    json_integer,
)

__all__ = [
    "PROTOCOL_VERSION",
    "Session",
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

    uses_sessions = True
    cancel_message = "The task was cancelled by request."

    def capabilities(self) -> dict[str, Any]:
        """The server capabilities declared in the ``initialize`` result."""
        tasks: dict[str, Any] = {"cancel": {}}
        if self.enable_list:
            tasks["list"] = {}
        if any(tool.task_support != "forbidden" for tool in self._tools.values()):
            tasks["requests"] = {"tools": {"call": {}}}
        return {"tools": {"listChanged": False}, "tasks": tasks}

    # -- dispatch -------------------------------------------------------------------

    def _revision_routes(self) -> dict[str, Route]:
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

    def _tool_wire(self, tool: Tool) -> dict[str, Any]:
        """A ``Tool`` entry with its ``execution.taskSupport``."""
        return {
            **super()._tool_wire(tool),
            "execution": {"taskSupport": tool.task_support},
        }

    # -- tools/call -----------------------------------------------------------------

    def _task_request(self, call: Call, tool: Tool) -> tuple[bool, int | None]:
        """``params.task`` asks for a task (ignored without the capability)."""
        task = call.params.get("task")
        if "tools" not in self.capabilities()["tasks"].get("requests", {}):
            task = None
        if task is not None and tool.task_support == "forbidden":
            raise JsonRpcError(
                self.task_mismatch_code,
                f"Tool {tool.name!r} does not support task-augmented calls",
            )
        if task is None and tool.task_support == "required":
            raise JsonRpcError(
                self.task_mismatch_code,
                f"Task augmentation required for tools/call requests to tool {tool.name!r}",
            )
        if task is None:
            return False, None
        if not isinstance(task, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.task must be an object")
        ttl = cast(dict[str, Any], task).get("ttl")
        if ttl is None:
            return True, None
        return True, json_integer(ttl, "params.task.ttl")

    def _failed_result(self, result: dict[str, Any]) -> bool:
        return bool(result.get("isError"))
