"""Client adapter for the MCP Tasks extension ``io.modelcontextprotocol/tasks`` (stateless core).

Every request declares the extension in its per-request ``_meta``. A ``tools/call`` may be
answered at once, with an input request (answered and retried), or with a task; in the
last case the shared polling loop follows it, answers the task's ``inputRequests``
through ``tasks/update`` (each key once) and returns the inlined result, so the caller
always gets the tool's result::

    async with TasksClient(HttpTransport("http://127.0.0.1:8000/mcp")) as client:
        result = await client.call_tool("slow_compute", {"seconds": 3})
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, TypeAlias, cast

from . import client_core
from . import protocol_ext as protocol
from .client_core import *  # noqa: F403 - the shared public names
from .client_core import (
    ClientCore,
    InvalidResponse,
    TaskCancelled,
    TaskEnded,
    TaskFailed,
    TaskHandle,
    TasksClientError,
    Wait,
    answer_to_wire,
    decode_state,
    status_name,
)
from .models_ext import (
    CancelledTask,
    CompletedTask,
    CreateTaskResult,
    ErrorCode,
    FailedTask,
    InputRequiredTask,
    McpModel,
)
from .protocol_ext import (
    EXTENSION_ID,
    PROTOCOL_VERSION,
    TERMINAL_STATUSES,
    TaskSnapshot,
    TaskState,
)
from .transport import HttpTransport, JsonRpcError, json_object

__all__: list[str] = [
    "EXTENSION_ID",
    "PROTOCOL_VERSION",
    "TERMINAL_STATUSES",
    "DetailedTaskState",
    "HeaderMismatch",
    "MissingRequiredClientCapability",
    "UnsupportedProtocolVersion",
    "decode_detailed_task",
]
__all__ += client_core.__all__

DetailedTaskState: TypeAlias = TaskState
"""A ``tasks/get`` result or ``notifications/tasks`` payload: one class per status."""

Result: TypeAlias = dict[str, Any]
"""A tool's ``CallToolResult`` object, as received."""


class MissingRequiredClientCapability(JsonRpcError):
    """``-32021``: the request lacked a capability the server needs (see ``required_capabilities``)."""

    @property
    def required_capabilities(self) -> dict[str, Any]:
        """``error.data.requiredCapabilities`` (empty when the server sent none)."""
        data = json_object(self.data) or {}
        return json_object(data.get("requiredCapabilities")) or {}


class HeaderMismatch(JsonRpcError):
    """``-32020``: an ``Mcp-*`` routing header was missing or did not match the body."""


class UnsupportedProtocolVersion(JsonRpcError):
    """``-32022``: the server does not speak this protocol version (see ``supported``)."""

    @property
    def supported(self) -> list[str]:
        """``error.data.supported``: the versions the server offers."""
        value = (json_object(self.data) or {}).get("supported")
        items = cast("list[object]", value) if isinstance(value, list) else []
        return [str(item) for item in items]

    @property
    def requested(self) -> str | None:
        """``error.data.requested``: the version the server saw."""
        value = (json_object(self.data) or {}).get("requested")
        return value if isinstance(value, str) else None


def _result_type(result: Mapping[str, Any]) -> str:
    """The result's ``resultType``; a missing one means ``"complete"``."""
    value = result.get("resultType")
    return value if isinstance(value, str) else "complete"


def decode_detailed_task(raw: Mapping[str, Any]) -> DetailedTaskState:
    """Decode a ``tasks/get`` result or ``notifications/tasks`` params by its ``status``."""
    return cast(TaskState, decode_state(raw, protocol.TABLES))


class _Wait(Wait[Result]):
    """The extension's part of a wait: inlined outcomes, ``tasks/update``, ``subscriptions/listen``."""

    def __init__(self, handle: TaskHandle[Result], client: TasksClient) -> None:
        super().__init__(handle)
        self.client = client

    def poll_first(self, task: TaskSnapshot) -> bool:
        # The flat CreateTaskResult has no inputRequests and no outcome: fetch them at once.
        return isinstance(task, CreateTaskResult) and (
            status_name(task.status) not in protocol.ACTIVE_STATUSES
        )

    def pushed(self) -> bool:
        live = self.side is not None and not self.side.done()
        return self.handle.push_acknowledged and live

    async def start(self) -> None:
        if self.client.subscribe:
            self.side = asyncio.ensure_future(self._listen())

    async def settle(self, task: TaskSnapshot, status: str) -> None:
        handle, task_id = self.handle, task.task_id
        if isinstance(task, CompletedTask):
            handle.finish(dict(task.result))
        elif isinstance(task, FailedTask):
            error = task.error
            handle.fail(TaskFailed(task_id, error.code, error.message, error.data))
        elif isinstance(task, CancelledTask):
            handle.fail(TaskCancelled(task_id, task.status_message))
        elif status in protocol.TERMINAL_STATUSES:
            handle.fail(TaskEnded(task_id, status, task.status_message))
        elif status in protocol.INPUT_STATUSES and isinstance(task, InputRequiredTask):
            await self._answer(task)

    async def _answer(self, task: InputRequiredTask) -> None:
        """Answer the not-yet-answered ``inputRequests`` with one ``tasks/update``."""
        handle = self.handle
        responses: dict[str, dict[str, Any]] = {}
        pending = {
            k: v for k, v in task.input_requests.items() if k not in handle.answered
        }
        if pending and not protocol.has_role("update"):
            message = (
                "asks for input, but the schema defines no tasks/update to send it"
            )
            handle.fail(TasksClientError(f"task {task.task_id} {message}"))
        for key, request in pending.items() if protocol.has_role("update") else ():
            params = request.params.to_wire() if request.params is not None else {}
            answer = await self.client.answer_input(
                request.method, params, task.task_id, key
            )
            if answer is not None:
                responses[key] = answer
        if responses:
            await self.client.update_task(task.task_id, responses)
            handle.answered.update(responses)

    async def _listen(self) -> None:
        """Hold a ``subscriptions/listen`` stream for the task until it ends or fails."""
        client, handle = self.client, self.handle
        listen_id = f"listen-{client.next_request_id()}"
        client.subscriptions[listen_id] = handle
        try:
            await client.request(
                "subscriptions/listen",
                {"notifications": {"taskIds": [handle.task_id]}},
                request_id=listen_id,
            )
        except (JsonRpcError, TasksClientError):
            return
        finally:
            del client.subscriptions[listen_id]
            handle.push_acknowledged = False
            handle.wake()


class TasksClient(ClientCore[Result]):
    """Client for the ``io.modelcontextprotocol/tasks`` extension over any transport.

    The protocol is stateless, so ``async with`` only closes the transport at the end.
    The options are those of :class:`ClientCore`; ``declare_tasks``, ``subscribe`` and
    ``max_input_rounds`` are this revision's, and ``ttl_backstop`` defaults to on.
    """

    tables = protocol.TABLES

    errors = {
        **ClientCore.errors,
        ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY: MissingRequiredClientCapability,
        ErrorCode.HEADER_MISMATCH: HeaderMismatch,
        ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: UnsupportedProtocolVersion,
    }

    ttl_backstop_default = True

    def setup(self) -> None:
        self.subscriptions: dict[str | int, TaskHandle[Result]] = {}
        """Open ``subscriptions/listen`` streams by request ID (= subscription ID)."""
        if isinstance(self.transport, HttpTransport):
            self.transport.use_stateless(protocol.PROTOCOL_VERSION)

    def wait_for(self, handle: TaskHandle[Result]) -> Wait[Result]:
        return _Wait(handle, self)

    def decode(self, raw: Mapping[str, Any]) -> TaskState:
        if _result_type(raw) != "complete":
            raise InvalidResponse("a task state must have resultType 'complete'")
        return cast(TaskState, decode_state(raw, protocol.TABLES))

    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities declared on every request."""
        capabilities = super().client_capabilities()
        if self.declare_tasks:
            capabilities["extensions"] = {protocol.EXTENSION_ID: {}}
        return capabilities

    def request_meta(self) -> dict[str, Any]:
        """The per-request ``_meta``: protocol version, client capabilities and client info."""
        return {
            protocol.META_PROTOCOL_VERSION: protocol.PROTOCOL_VERSION,
            protocol.META_CLIENT_CAPABILITIES: self.client_capabilities(),
            protocol.META_CLIENT_INFO: self.client_info,
        }

    def prepare(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        meta = json_object(params.get("_meta")) or {}
        return {**params, "_meta": {**meta, **self.request_meta()}}

    def check(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        # resultType "task" is accepted only on tools/call with the extension declared.
        if _result_type(result) == "task" and (
            method != "tools/call" or not self.declare_tasks
        ):
            raise InvalidResponse(f"a task was returned for {method} unasked")
        return result

    async def discover(self) -> dict[str, Any]:
        """``server/discover``: the server's versions and capabilities (its ``ttlMs`` is a cache hint)."""
        return await self.request("server/discover", {})

    @staticmethod
    def server_supports_tasks(discovered: Mapping[str, Any]) -> bool:
        """Whether a ``server/discover`` result advertises the extension."""
        capabilities = json_object(discovered.get("capabilities")) or {}
        extensions = json_object(capabilities.get("extensions"))
        return extensions is not None and protocol.EXTENSION_ID in extensions

    async def start_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> TaskHandle[Result]:
        """Send ``tools/call`` (answering input-required rounds) and return a handle without waiting for a task."""
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        for _ in range(self.max_input_rounds):
            result = await self.request("tools/call", params)
            kind = _result_type(result)
            if kind == "complete":
                return TaskHandle(self, None, result=result)
            if kind == "task":
                return await self.adopt(result, name)
            if kind != "input_required":
                raise InvalidResponse(f"unknown resultType {kind!r} for tools/call")
            params = await self._retry_params(params, result)
        raise InvalidResponse(
            f"tools/call still needs input after {self.max_input_rounds} rounds"
        )

    async def adopt(self, result: Mapping[str, Any], name: str) -> TaskHandle[Result]:
        created = CreateTaskResult.model_validate(result)
        return await self.created(created, {"method": "tools/call", "name": name})

    async def _retry_params(
        self, params: dict[str, Any], result: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The params of the retry after an ``input_required`` result: answers and request state."""
        retry = {k: v for k, v in params.items() if k not in _RETRY_KEYS}
        responses: dict[str, Any] = {}
        for key, entry in (json_object(result.get("inputRequests")) or {}).items():
            request = json_object(entry) or {}
            method, raw = str(request.get("method")), request.get("params")
            answer = await self.answer_input(method, json_object(raw) or {}, None, key)
            if answer is not None:
                responses[key] = answer
        if responses:
            retry["inputResponses"] = responses
        state = result.get("requestState")
        if isinstance(state, str):
            retry["requestState"] = state
        return retry

    async def update_task(
        self, task_id: str, input_responses: Mapping[str, Mapping[str, Any] | McpModel]
    ) -> None:
        """``tasks/update``: deliver answers to some or all outstanding ``inputRequests``."""
        if not protocol.has_role("update"):
            raise TasksClientError("this revision's schema defines no tasks/update")
        responses = {key: answer_to_wire(v) for key, v in input_responses.items()}
        params = {protocol.TASK_FIELDS["task_id"]: task_id, "inputResponses": responses}
        self._check_ack(await self.request(protocol.ROLES["update"], params))

    def cancelled(self, result: dict[str, Any]) -> None:
        self._check_ack(result)
        return None

    @staticmethod
    def _check_ack(result: Mapping[str, Any]) -> None:
        if _result_type(result) != "complete":
            raise InvalidResponse("an acknowledgement must have resultType 'complete'")

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Route ``notifications/subscriptions/acknowledged`` and ``notifications/tasks``."""
        meta = json_object(params.get("_meta")) or {}
        subscription = meta.get(protocol.META_SUBSCRIPTION_ID)
        if method == "notifications/subscriptions/acknowledged":
            listed = json_object(params.get("notifications")) or {}
            ids = listed.get("taskIds")
            handle = (
                self.subscriptions.get(subscription)
                if isinstance(subscription, (str, int))
                else None
            )
            if handle is not None and isinstance(ids, list):
                acknowledged = cast("list[object]", ids)
                handle.push_acknowledged = handle.task_id in acknowledged
        elif subscription is None or subscription in self.subscriptions:
            await super()._on_notification(method, params)


_RETRY_KEYS = ("inputResponses", "requestState")
