"""Client adapter for MCP Tasks, revision 2025-11-25 (experimental core Tasks).

The client asks for a task on ``tools/call`` only when the server declared
``capabilities.tasks.requests.tools.call`` and the tool's ``execution.taskSupport``
allows it; the shared polling loop then follows the task at the server's
``pollInterval`` and collects the outcome with ``tasks/result`` (the schema's ``result``
role; the requests the server sends for the task on its stream are answered). The
caller gets the tool's ``CallToolResult`` as if the call
had been answered at once::

    async with TasksClient(HttpTransport("http://127.0.0.1:8000/mcp")) as client:
        result = await client.call_tool("slow_compute", {"seconds": 3})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from . import client_core
from . import protocol_2025 as protocol
from .client_core import *  # noqa: F403 - the shared public names
from .client_core import (
    CapabilityNotDeclared,
    ClientCore,
    InvalidResponse,
    ProgressCallback,
    StatusCallback,
    TaskHandle,
    TaskNotFound,
    TasksClientError,
    decode_state,
)
from .models_2025 import (
    CallToolRequestParams,
    CallToolRequestParamsMeta,
    CallToolResult,
    ErrorCode,
    McpModel,
    Task,
    TaskMetadata,
)
from .protocol_2025 import EXTENSION_ID, PROTOCOL_VERSION, TERMINAL_STATUSES
from .task_ids import StoredTask
from .transport import JsonRpcError, SessionTransport, json_object

__all__: list[str] = [
    "EXTENSION_ID",
    "PROTOCOL_VERSION",
    "TERMINAL_STATUSES",
    "CannotCancelTask",
    "TaskAugmentationRequired",
    "TaskRequired",
    "decode_task",
]
__all__ += client_core.__all__


class CannotCancelTask(TaskNotFound):
    """``-32602`` on ``tasks/cancel``: the task is unknown or already in a terminal status."""


class TaskAugmentationRequired(JsonRpcError):
    """``-32601`` or ``-32600`` on a plain ``tools/call``: the server requires a task for it."""


class TaskRequired(TasksClientError):
    """The tool declares ``taskSupport: "required"`` but the call asked for no task; nothing was sent."""


def decode_task(raw: Mapping[str, Any]) -> Task:
    """Decode a ``Task`` object; a missing ``ttl`` is read as ``null`` (unlimited)."""
    return cast(Task, decode_state(raw, protocol.TABLES))


class TasksClient(ClientCore[CallToolResult]):
    """Client for the MCP Tasks of revision 2025-11-25 over any :class:`Transport`.

    Use it as an async context manager (``initialize`` runs on entry). The options are
    those of :class:`ClientCore`; ``prefer_tasks`` and ``retry_with_task`` are this
    revision's.
    """

    tables = protocol.TABLES

    not_found = {**ClientCore.not_found, "cancel": CannotCancelTask}

    def setup(self) -> None:
        self.server_capabilities: dict[str, Any] = {}
        """The server's capabilities from ``initialize``."""
        self.initialize_result: dict[str, Any] = {}
        """The whole ``initialize`` result."""
        self.connected = False
        """Whether ``initialize`` ran (or :meth:`rejoin` joined a session)."""

    async def open(self) -> None:
        """``initialize``, unless :meth:`rejoin` joined a session."""
        if not self.connected:
            await self.connect()

    def outcome(self, raw: Mapping[str, Any]) -> CallToolResult:
        return CallToolResult.model_validate(raw)

    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities sent in ``initialize`` (one entry per registered handler)."""
        capabilities = super().client_capabilities()
        if "elicitation" in capabilities:
            capabilities["elicitation"] = {"form": {}}
        return capabilities

    async def connect(self) -> dict[str, Any]:
        """Run the ``initialize`` handshake and return the server's ``InitializeResult``."""
        self.initialize_result = await self.request(
            "initialize",
            {
                "protocolVersion": protocol.PROTOCOL_VERSION,
                "capabilities": self.client_capabilities(),
                "clientInfo": self.client_info,
            },
        )
        capabilities = self.initialize_result.get("capabilities")
        self.server_capabilities = json_object(capabilities) or {}
        await self.transport.notify("notifications/initialized", {})
        self.connected = True
        return self.initialize_result

    async def rejoin(self, task_id: str) -> StoredTask | None:
        """Prepare to resume ``task_id`` after a restart, instead of :meth:`connect`.

        When the stored entry names the session the task was created in and the
        transport has sessions, that session is joined (a server may only serve the task
        there) and the stored server capabilities are used; otherwise a new session is
        initialized. Returns the stored entry, if any.
        """
        entry = await self.store.get(task_id)
        context = entry.context if entry is not None else {}
        session = context.get("session")
        capabilities = json_object(context.get("capabilities"))
        if (
            isinstance(self.transport, SessionTransport)
            and isinstance(session, str)
            and capabilities is not None
        ):
            self.transport.join_session(session, protocol.PROTOCOL_VERSION)
            self.server_capabilities = capabilities
            self.connected = True
        else:
            await self.connect()
        return entry

    def _tasks_capability(self, *path: str) -> bool:
        node = json_object(self.server_capabilities.get("tasks"))
        for name in path:
            node = json_object(node.get(name)) if node is not None else None
        return node is not None

    def supports_task_tools(self) -> bool:
        """Whether the server declared ``tasks.requests.tools.call``."""
        return self._tasks_capability("requests", "tools", "call")

    def can_list(self) -> bool:
        """Whether the server declared ``tasks.list``."""
        return self._tasks_capability("list")

    def can_cancel(self) -> bool:
        """Whether the server declared ``tasks.cancel``."""
        return self._tasks_capability("cancel")

    async def task_support(self, name: str) -> str:
        """The tool's ``execution.taskSupport`` (``"forbidden"`` when absent or unknown)."""
        if name not in self.tools:
            await self.list_tools()
        execution = json_object(self.tools.get(name, {}).get("execution")) or {}
        support = execution.get("taskSupport")
        return support if isinstance(support, str) else "forbidden"

    async def _use_task(self, name: str, task: bool | None) -> bool:
        """Decide whether a call of tool ``name`` is task-augmented; raise when ``task`` cannot be honoured."""
        if not self.supports_task_tools():
            if task:
                raise CapabilityNotDeclared(
                    "the server did not declare tasks.requests.tools.call"
                )
            return False
        support = await self.task_support(name)
        if support == "required":
            if task is False:
                raise TaskRequired(f"tool {name!r} must run as a task")
            return True
        if support == "optional":
            return self.prefer_tasks if task is None else task
        if task:
            raise CapabilityNotDeclared(f"tool {name!r} does not support tasks")
        return False

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        task: bool | None = None,
        ttl: int | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> TaskHandle[CallToolResult]:
        """Send ``tools/call`` and return a handle, without waiting for a task to finish.

        ``task`` forces or forbids a task (default: as the tool and ``prefer_tasks`` say);
        ``ttl`` is the requested task lifetime in milliseconds; ``on_progress`` receives
        the call's progress notifications until the task is terminal.
        """
        augmented = await self._use_task(name, task)
        token = self.track_progress(on_progress)
        meta = CallToolRequestParamsMeta(progress_token=token) if token else None
        params = CallToolRequestParams(
            name=name, arguments=dict(arguments or {}), meta=meta
        )
        try:
            raw = None if augmented else await self._plain_call(params)
            if raw is None:
                params.task = (
                    TaskMetadata(ttl=ttl) if ttl is not None else TaskMetadata()
                )
                raw = await self.request("tools/call", _wire(params))
            if json_object(raw.get("task")) is None:
                # A tool result: a plain call, or a task-augmented call answered at once.
                self.forget_progress(token)
                return TaskHandle(self, None, result=CallToolResult.model_validate(raw))
            return await self.adopt(
                raw, name, on_finish=lambda: self.forget_progress(token)
            )
        except BaseException as error:
            self.forget_progress(token)
            if isinstance(error, ValueError):
                message = "tools/call returned neither a task nor a tool result"
                raise InvalidResponse(message) from None
            raise

    def call_context(self) -> dict[str, Any]:
        """The session the task was created in and its capabilities (for :meth:`rejoin`)."""
        if isinstance(self.transport, SessionTransport) and self.transport.session_id:
            session = self.transport.session_id
            return {"session": session, "capabilities": self.server_capabilities}
        return {}

    async def _plain_call(self, params: CallToolRequestParams) -> dict[str, Any] | None:
        """A call without a task; ``None`` when the server requires one and may get it."""
        try:
            return await self.request("tools/call", _wire(params))
        except JsonRpcError as error:
            if error.code not in _TASK_NEEDED:
                raise
            if self.retry_with_task and self.supports_task_tools():
                return None
            raise TaskAugmentationRequired(
                error.code, error.message, error.data
            ) from None

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        task: bool | None = None,
        ttl: int | None = None,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call a tool and return its ``CallToolResult``, whether or not the server made a task.

        See :meth:`start_tool` for the options and :meth:`TaskHandle.result` for the errors.
        """
        handle = await self.start_tool(
            name, arguments, task=task, ttl=ttl, on_progress=on_progress
        )
        return await handle.result(timeout=timeout, on_status=on_status)

    async def cancel_task(self, task_id: str) -> Task:
        """``tasks/cancel`` (requires ``tasks.cancel``): the task as the server reports it.

        Raises :class:`CannotCancelTask` when the task is unknown or already terminal.
        """
        state = await super().cancel_task(task_id)
        if not isinstance(state, Task):
            raise InvalidResponse("tasks/cancel must answer with the task")
        return state


def _wire(params: McpModel) -> dict[str, Any]:
    """Request params as sent: wire names, no null fields."""
    return params.model_dump(mode="json", by_alias=True, exclude_none=True)


_TASK_NEEDED = (ErrorCode.INVALID_REQUEST, ErrorCode.METHOD_NOT_FOUND)
