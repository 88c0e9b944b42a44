"""Server adapter for MCP revision 2025-11-25 with its experimental Tasks.

What differs from the extension outside the protocol tables lives here: ``initialize``
and its capabilities (sessions themselves are in the core), ``params.task`` asking for a
task, ``execution.taskSupport`` on tools, ``isError`` failing a task, and the ``mcp``
1.x mount. Dispatch, workers, the state machine and the mechanisms of the Tasks roles
(``tasks/result`` blocking while it carries the task's input requests, ``tasks/list``,
``notifications/tasks/status``, the nested ``CreateTaskResult``) are in
``server_core``, chosen by the tables.
"""

from __future__ import annotations

import asyncio
import importlib
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, cast

from .protocol_2025 import (
    TABLES,
    PROTOCOL_VERSION,
)
from .server_core import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
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
    Session,
    TaskServerCore,
    Tool,
    ToolContext,
    ToolError,
    http_headers,
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

_INPUT_RESULT_TYPES = {
    "elicitation/create": "ElicitResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
}
"""``mcp.types`` result class of each server-to-client request (SDK mounting)."""

_MOUNTED_REQUESTS = {
    "ListToolsRequest": "ListToolsResult",
    "CallToolRequest": "CallToolResult",
    "GetTaskRequest": "GetTaskResult",
    "GetTaskPayloadRequest": "GetTaskPayloadResult",
    "ListTasksRequest": "ListTasksResult",
    "CancelTaskRequest": "CancelTaskResult",
}
"""``mcp.types`` request class -> result class answered through ``handle`` (SDK mounting)."""


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

    # -- hosting in the official SDK ------------------------------------------------

    def mount(self, sdk_server: Any) -> None:
        """Serve the tools and the Tasks methods from an ``mcp`` 1.x low-level ``Server``.

        Registers request handlers (``tools/list``, ``tools/call``, ``tasks/*``) that
        answer through ``handle``, and adds ``capabilities.tasks`` to what the SDK
        declares. Input requests of a task travel on the pending ``tasks/result``
        response stream, as the SDK's ``related_request_id`` routes them. The SDK runs
        its lifespan once per session, so start and close this server in the
        application's lifespan (for example next to
        ``StreamableHTTPSessionManager.run()``). Needs ``mcp>=1.23,<2``, imported here.
        """
        types: Any = importlib.import_module("mcp.types")
        mcp_error: Any = getattr(
            importlib.import_module("mcp.shared.exceptions"), "McpError"
        )
        metadata_type: Any = getattr(
            importlib.import_module("mcp.shared.message"), "ServerMessageMetadata"
        )
        sessions: weakref.WeakKeyDictionary[Any, Session] = weakref.WeakKeyDictionary()

        def our_session(sdk_session: Any) -> Session:
            session = sessions.get(sdk_session)
            if session is None or session.id not in self.sessions:
                session = self.open_session()
                params = sdk_session.client_params
                if params is not None:
                    session.client_capabilities = params.capabilities.model_dump(
                        by_alias=True, mode="json", exclude_none=True
                    )
                sessions[sdk_session] = session
            return session

        def emitter(ctx: Any) -> Emit:
            related = metadata_type(related_request_id=ctx.request_id)

            async def relay(message: dict[str, Any]) -> None:
                try:
                    request = types.ServerRequest.model_validate(
                        {"method": message["method"], "params": message["params"]}
                    )
                    result_type = getattr(types, _INPUT_RESULT_TYPES[message["method"]])
                    result = await ctx.session.send_request(
                        request, result_type, metadata=related
                    )
                    wire = result.model_dump(
                        by_alias=True, mode="json", exclude_none=True
                    )
                    reply: dict[str, Any] = {"id": message["id"], "result": wire}
                except mcp_error as error:
                    failure = {"code": error.error.code, "message": error.error.message}
                    reply = {"id": message["id"], "error": failure}
                pending = self._replies.get(message["id"])
                if pending is not None:  # the SDK session it was sent on answered
                    self._settle(pending, reply)

            async def emit(message: dict[str, Any]) -> None:
                if "id" in message:  # a request: its reply arrives later
                    asyncio.get_running_loop().create_task(relay(message))
                else:
                    notification = types.ServerNotification.model_validate(
                        {"method": message["method"], "params": message["params"]}
                    )
                    await ctx.session.send_notification(
                        notification, related_request_id=ctx.request_id
                    )

            return emit

        def handler_for(result_name: str) -> Callable[[Any], Awaitable[Any]]:
            async def answer(request: Any) -> Any:
                ctx = sdk_server.request_context
                message = request.model_dump(
                    by_alias=True, mode="json", exclude_none=True
                )
                message.update(jsonrpc="2.0", id=ctx.request_id)
                info = RequestInfo(
                    headers=http_headers(ctx), session_id=our_session(ctx.session).id
                )
                response = await self.handle(message, info, emitter(ctx))
                if response is None or "error" in response:
                    error = (response or {}).get("error") or {
                        "code": INTERNAL_ERROR,
                        "message": "No response",
                    }
                    raise mcp_error(types.ErrorData.model_validate(error))
                result = response["result"]
                name = "CreateTaskResult" if "task" in result else result_name
                return types.ServerResult(getattr(types, name).model_validate(result))

            return answer

        for request_name, result_name in _MOUNTED_REQUESTS.items():
            sdk_server.request_handlers[getattr(types, request_name)] = handler_for(
                result_name
            )
        sdk_capabilities = sdk_server.get_capabilities

        def get_capabilities(*args: Any, **kwargs: Any) -> Any:
            capabilities = sdk_capabilities(*args, **kwargs)
            capabilities.tasks = types.ServerTasksCapability.model_validate(
                self.capabilities()["tasks"]
            )
            return capabilities

        sdk_server.get_capabilities = get_capabilities
