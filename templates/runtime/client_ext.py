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

from collections.abc import Mapping
from typing import Any, TypeAlias, cast

from . import client_core
from . import protocol_ext as protocol
from .client_core import *  # noqa: F403 - the shared public names
from .client_core import (
    ClientCore,
    HeaderMismatch,
    InvalidResponse,
    MissingRequiredClientCapability,
    TaskHandle,
    UnsupportedProtocolVersion,
    decode_state,
)
from .protocol_ext import EXTENSION_ID, PROTOCOL_VERSION, TERMINAL_STATUSES, TaskState
from .transport import HttpTransport, json_object

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


def _result_type(result: Mapping[str, Any]) -> str:
    """The result's ``resultType``; a missing one means ``"complete"``."""
    value = result.get("resultType")
    return value if isinstance(value, str) else "complete"


def decode_detailed_task(raw: Mapping[str, Any]) -> DetailedTaskState:
    """Decode a ``tasks/get`` result or ``notifications/tasks`` params by its ``status``."""
    return cast(TaskState, decode_state(raw, protocol.TABLES))


class TasksClient(ClientCore[Result]):
    """Client for the ``io.modelcontextprotocol/tasks`` extension over any transport.

    The protocol is stateless, so ``async with`` only closes the transport at the end.
    The options are those of :class:`ClientCore`; ``declare_tasks``, ``subscribe`` and
    ``max_input_rounds`` are this revision's, and ``ttl_backstop`` defaults to on.
    """

    tables = protocol.TABLES

    ttl_backstop_default = True

    def setup(self) -> None:
        if isinstance(self.transport, HttpTransport):
            self.transport.use_stateless(protocol.PROTOCOL_VERSION)

    def outcome(self, raw: Mapping[str, Any]) -> Result:
        return dict(raw)

    def decode(self, raw: Mapping[str, Any]) -> TaskState:
        if _result_type(raw) != "complete":
            raise InvalidResponse("a task state must have resultType 'complete'")
        return cast(TaskState, decode_state(raw, self.tables))

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
        kind = _result_type(result)
        if kind == "task" and (method != "tools/call" or not self.declare_tasks):
            raise InvalidResponse(f"a task was returned for {method} unasked")
        spec = self.tables.methods.get(method)
        if spec is not None and spec.role in _ACKNOWLEDGED and kind != "complete":
            raise InvalidResponse("an acknowledgement must have resultType 'complete'")
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

    async def _retry_params(
        self, params: dict[str, Any], result: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The params of the retry after an ``input_required`` result: answers and request state."""
        retry = {k: v for k, v in params.items() if k not in _RETRY_KEYS}
        requests = json_object(result.get("inputRequests")) or {}
        responses = await self.answer_requests(requests)
        if responses:
            retry["inputResponses"] = responses
        state = result.get("requestState")
        if isinstance(state, str):
            retry["requestState"] = state
        return retry


_RETRY_KEYS = ("inputResponses", "requestState")
_ACKNOWLEDGED = ("update", "cancel")
