"""The errors the tasks client raises: :class:`TasksClientError` and its kinds for what
goes wrong without a server error response, and a typed :class:`JsonRpcError` for each
error response the client tells apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from ..jsonrpc import JsonRpcError, json_object

__all__ = [
    "ERRORS_BY_NAME",
    "CapabilityNotDeclared",
    "HeaderMismatch",
    "InputNotHandled",
    "InvalidResponse",
    "MethodNotFound",
    "MissingRequiredClientCapability",
    "TaskAugmentationRequired",
    "TaskCancelled",
    "TaskEnded",
    "TaskExpired",
    "TaskFailed",
    "TaskNotFound",
    "TaskRequired",
    "TasksClientError",
    "UnsupportedProtocolVersion",
    "WaitTimeout",
]


class TasksClientError(Exception):
    """Base class of the errors the client raises without a server error response."""


class InputNotHandled(TasksClientError):
    """The server asked for input with a method the client has no handler for; the
    wait on its task ends at once (register one: ``input_handlers={method:
    handler}``)."""

    def __init__(self, method: str, task_id: str | None = None) -> None:
        """Record the method and the task that asked."""
        where = f"task {task_id}" if task_id is not None else "the server"
        super().__init__(
            f"{where} asks for input with {method}, and the client has no handler"
            f" for it (pass input_handlers={{{method!r}: handler}})"
        )
        self.method = method
        self.task_id = task_id


class InvalidResponse(TasksClientError):
    """The server answered with something this revision does not allow."""


class WaitTimeout(TasksClientError, TimeoutError):
    """The overall timeout of a wait elapsed before the task reached a terminal status.

    The task keeps running on the server and its ID stays in the task ID store, so the
    wait can be continued later with ``resume(task_id)``.
    """

    def __init__(self, task_id: str) -> None:
        """Record which task was being waited for."""
        super().__init__(f"timed out waiting for task {task_id}")
        self.task_id = task_id


class TaskCancelled(TasksClientError):
    """The task ended in status ``cancelled`` (or was cancelled by this client)."""

    def __init__(self, task_id: str, status_message: str | None = None) -> None:
        """Record the task ID and the server's status message, if any."""
        super().__init__(
            f"task {task_id} was cancelled"
            + (f": {status_message}" if status_message else "")
        )
        self.task_id = task_id
        self.status_message = status_message


class TaskEnded(TasksClientError):
    """The task ended in a terminal status that carries no result: one the schema
    added and the configuration classified as terminal (``rejected``), which the
    tool entered with ``ctx.finish``. ``status`` names it; ``status_message`` is the
    message the tool gave, if any."""

    def __init__(self, task_id: str, status: str, status_message: str | None) -> None:
        """Record the task ID, its final status and message."""
        super().__init__(f"task {task_id} ended in status {status!r}")
        self.task_id, self.status, self.status_message = task_id, status, status_message


class TaskExpired(TasksClientError):
    """The task's ``createdAt`` plus its TTL passed before it reached a terminal
    status."""

    def __init__(self, task_id: str) -> None:
        """Record the expired task's ID."""
        super().__init__(f"task {task_id} outlived its ttl")
        self.task_id = task_id


class TaskFailed(JsonRpcError):
    """The task failed; ``code``, ``message`` and ``data`` are the JSON-RPC error of
    the work."""

    def __init__(self, task_id: str, code: int, message: str, data: Any = None) -> None:
        """Keep the error fields and the task ID."""
        super().__init__(code, message, data)
        self.task_id = task_id


class CapabilityNotDeclared(TasksClientError):
    """The server did not declare the capability an operation needs; nothing was
    sent."""


class TaskRequired(TasksClientError):
    """The tool declares ``taskSupport: "required"`` but the call asked for no task;
    nothing was sent."""


class TaskAugmentationRequired(JsonRpcError):
    """``-32601`` or ``-32600`` on a plain ``tools/call``: the server requires a task
    for it."""


class TaskNotFound(JsonRpcError):
    """``-32602`` on a task method: the task ID is unknown, or the task expired and
    was purged."""


class MethodNotFound(JsonRpcError):
    """``-32601``: the server does not implement the method."""


class MissingRequiredClientCapability(JsonRpcError):
    """``-32021``: the request lacked a capability the server needs (see
    ``required_capabilities``)."""

    @property
    def required_capabilities(self) -> dict[str, Any]:
        """``error.data.requiredCapabilities`` (empty when the server sent none)."""
        data = json_object(self.data) or {}
        return json_object(data.get("requiredCapabilities")) or {}


class HeaderMismatch(JsonRpcError):
    """``-32020``: an ``Mcp-*`` routing header was missing or did not match the body."""


class UnsupportedProtocolVersion(JsonRpcError):
    """``-32022``: the server does not speak this protocol version (see
    ``supported``)."""

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


ERRORS_BY_NAME: Mapping[str, type[JsonRpcError]] = {
    "HEADER_MISMATCH": HeaderMismatch,
    "MISSING_REQUIRED_CLIENT_CAPABILITY": MissingRequiredClientCapability,
    "UNSUPPORTED_PROTOCOL_VERSION": UnsupportedProtocolVersion,
}
"""The typed error of each error-code meaning, by its member name in the schema's
``ErrorCode``: a revision raises the ones whose codes its schema lists."""
