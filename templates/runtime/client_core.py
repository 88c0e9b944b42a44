"""Revision-neutral client runtime: errors, input handling and the polling helpers.

The revision adapters (``client_2025`` for MCP 2025-11-25, ``client_ext`` for the Tasks
extension) build ``TasksClient`` and ``TaskHandle`` on these; the status sets and the
snapshot types come from the generated ``protocol`` module.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from .models import McpModel
from .protocol import TaskSnapshot
from .transport import JsonRpcError

StatusCallback: TypeAlias = Callable[["TaskSnapshot"], object]
"""Called with every new task snapshot (for a progress bar or a status line)."""


class TasksClientError(Exception):
    """Base class of the errors the client raises without a server error response."""


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


class TaskFailed(JsonRpcError):
    """The task failed; ``code``, ``message`` and ``data`` are the JSON-RPC error of the work."""

    def __init__(self, task_id: str, code: int, message: str, data: Any = None) -> None:
        """Keep the error fields and the task ID."""
        super().__init__(code, message, data)
        self.task_id = task_id


class TaskNotFound(JsonRpcError):
    """``-32602`` on a task method: the task ID is unknown, or the task expired and was purged."""


class MethodNotFound(JsonRpcError):
    """``-32601``: the server does not implement the method."""


@dataclass(frozen=True)
class InputContext:
    """One request from the server for input, handed to a registered input handler.

    Attributes:
        method: ``"elicitation/create"``, ``"sampling/createMessage"`` or ``"roots/list"``.
        params: The request's ``params`` exactly as received (wire names).
        task_id: The task the request belongs to, when it is tied to one.
        key: The ``inputRequests`` key the request was listed under, when it came that way.
    """

    method: str
    params: dict[str, Any]
    task_id: str | None = None
    key: str | None = None


InputHandler: TypeAlias = Callable[
    [InputContext], Awaitable[Mapping[str, Any] | McpModel | None]
]
"""Answers one input request; returns the result object (``ElicitResult``, ...), or ``None``
to leave the request unanswered for now."""


def status_name(status: object) -> str:
    """Return a task status as its wire string (``"working"``, ``"completed"``, ...)."""
    return str(getattr(status, "value", status))


def answer_to_wire(value: Mapping[str, Any] | McpModel) -> dict[str, Any]:
    """Return a handler's answer as a JSON object."""
    return value.to_wire() if isinstance(value, McpModel) else dict(value)


async def nap(
    sleep: Callable[[float], Awaitable[None]],
    seconds: float,
    wake: asyncio.Event,
    also: asyncio.Future[Any] | None = None,
) -> None:
    """Sleep ``seconds`` (through the injected ``sleep``), returning early when ``wake`` is set
    or ``also`` finishes. Nothing is left running afterwards."""
    if wake.is_set() or (also is not None and also.done()):
        return
    sleeper = asyncio.ensure_future(sleep(max(seconds, 0.0)))
    waiter = asyncio.ensure_future(wake.wait())
    waits: set[asyncio.Future[Any]] = {sleeper, waiter}
    if also is not None:
        waits.add(also)
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        sleeper.cancel()
        waiter.cancel()
        await asyncio.gather(sleeper, waiter, return_exceptions=True)
