"""Wait for a condition instead of sleeping a fixed time and hoping it happened.

A test that needs something to have happened first (a stream to be open, a worker to
have finished) polls for it with a deadline: it goes on as soon as the condition holds,
and fails with a message naming the condition when the deadline passes, however slow
or loaded the machine is.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable


async def until(
    condition: Callable[[], bool | Awaitable[bool]],
    *,
    timeout: float = 10.0,
    interval: float = 0.01,
    what: str = "condition",
) -> None:
    """Return once ``condition()`` (sync or async) is true; ``AssertionError`` after
    ``timeout``.

    ``interval=0`` only yields to the event loop between checks (for in-process fakes).
    """
    deadline = time.monotonic() + timeout
    while True:
        outcome = condition()
        if inspect.isawaitable(outcome):
            outcome = await outcome
        if outcome:
            return
        assert time.monotonic() < deadline, f"{what} still false after {timeout}s"
        await asyncio.sleep(interval)


def until_sync(
    condition: Callable[[], bool],
    *,
    timeout: float = 10.0,
    interval: float = 0.05,
    what: str = "condition",
) -> None:
    """:func:`until` for code outside an event loop."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} still false after {timeout}s"
        time.sleep(interval)
