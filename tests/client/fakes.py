"""Scripted in-process peers and a fake clock for the client checklist tests.

A :class:`FakePeer` is a :class:`Transport` whose server side is a Python callable:
every request the client sends is recorded (ID, method, deep-copied params) and answered
by ``handler(method, params)``. The peer can push notifications and send requests to the
client through the handlers the client installed.

:class:`FakeClock` replaces ``time.monotonic`` and ``asyncio.sleep``: sleeping advances
the clock instantly and records the duration, so poll timing is asserted exactly and
never depends on the machine's speed.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Handler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass
class Sent:
    """One request the client sent."""

    id: Any
    method: str
    params: dict[str, Any]
    at: float


@dataclass
class FakePeer:
    """A transport whose server is ``handler``; records everything the client sends."""

    handler: Handler
    clock: Callable[[], float] = lambda: 0.0
    sent: list[Sent] = field(default_factory=list)
    notified: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    closed: bool = False

    def set_handlers(self, on_notification: Any, on_request: Any) -> None:
        self.to_client_notification = on_notification
        self.to_client_request = on_request

    async def request(
        self, request_id: Any, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        self.sent.append(Sent(request_id, method, copy.deepcopy(params), self.clock()))
        return await self.handler(method, params)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        self.notified.append((method, copy.deepcopy(params)))

    async def aclose(self) -> None:
        self.closed = True

    def methods(self) -> list[str]:
        """The methods of the requests sent so far, in order."""
        return [entry.method for entry in self.sent]

    def of(self, method: str) -> list[Sent]:
        """The requests sent with ``method``."""
        return [entry for entry in self.sent if entry.method == method]


class FakeClock:
    """Monotonic time that only moves when the client sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


class StuckClock(FakeClock):
    """A clock whose sleeps never finish: only a notification (or cancellation) wakes
    a wait."""

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.Event().wait()


def run(coroutine: Awaitable[Any]) -> Any:
    """Run a coroutine to completion in a fresh event loop."""

    async def main() -> Any:
        return await coroutine

    return asyncio.run(main())


TASK_ID = "786512e2-9e0d-44bd-8f29-789f320fe840"


def task_2025(
    status: str = "working",
    *,
    poll: int | None = 500,
    ttl: int | None = 60000,
    updated: str = "2025-11-25T10:40:00Z",
    message: str | None = None,
    task_id: str = TASK_ID,
) -> dict[str, Any]:
    """A 2025-11-25 ``Task`` object."""
    task: dict[str, Any] = {
        "taskId": task_id,
        "status": status,
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": updated,
        "ttl": ttl,
    }
    if poll is not None:
        task["pollInterval"] = poll
    if message is not None:
        task["statusMessage"] = message
    return task


def task_ext(
    status: str = "working",
    *,
    poll: int | None = 500,
    ttl: int | None = None,
    updated: str = "2025-11-25T10:40:00Z",
    message: str | None = None,
    task_id: str = TASK_ID,
    **extra: Any,
) -> dict[str, Any]:
    """An extension ``DetailedTask`` object (as a ``tasks/get`` result,
    ``resultType`` included)."""
    task: dict[str, Any] = {
        "resultType": "complete",
        "taskId": task_id,
        "status": status,
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": updated,
        "ttlMs": ttl,
        **extra,
    }
    if poll is not None:
        task["pollIntervalMs"] = poll
    if message is not None:
        task["statusMessage"] = message
    return task


TEXT_RESULT: dict[str, Any] = {
    "content": [{"type": "text", "text": "done"}],
    "isError": False,
}
