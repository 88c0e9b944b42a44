"""The rounds of ``lifecycle.every`` (lease renewal, lease check, TTL sweep) keep
their rate: the time a round takes is not added to the wait before the next.

With the old schedule (sleep, then run) a lease renewed every ``lease_s / 3`` was
renewed every ``lease_s / 3`` plus the round's own time, which on a loaded machine
(a slow store, a slow catch-up with lost signals in the same round) let a live
worker's lease lapse.
"""

from __future__ import annotations

import asyncio

import pytest

from mcp_tasks.server.lifecycle import every

pytestmark = pytest.mark.anyio

PERIOD_S = 0.2
ROUND_S = 0.15
"""How long each round takes: most of a period."""
ROUNDS = 5


async def test_a_slow_round_does_not_delay_the_next() -> None:
    loop = asyncio.get_running_loop()
    starts: list[float] = []
    enough = asyncio.Event()

    async def slow_round() -> None:
        starts.append(loop.time())
        if len(starts) >= ROUNDS:
            enough.set()
        await asyncio.sleep(ROUND_S)  # the round's own work (a slow store)

    began = loop.time()
    rounds = asyncio.create_task(
        every(lambda: PERIOD_S, slow_round, "test rounds", lambda: True)
    )
    try:
        await asyncio.wait_for(enough.wait(), timeout=30)
    finally:
        rounds.cancel()
        await asyncio.gather(rounds, return_exceptions=True)
    # round n starts n periods after the loop began (late ones catch up at once),
    # not n * (period + round)
    elapsed = starts[ROUNDS - 1] - began
    assert elapsed < ROUNDS * PERIOD_S + ROUND_S, (elapsed, starts)


async def test_a_round_longer_than_the_period_is_followed_at_once_without_a_burst() -> (
    None
):
    loop = asyncio.get_running_loop()
    starts: list[float] = []
    enough = asyncio.Event()

    async def long_round() -> None:
        starts.append(loop.time())
        if len(starts) >= 3:
            enough.set()
        await asyncio.sleep(PERIOD_S * 2)

    rounds = asyncio.create_task(
        every(lambda: PERIOD_S, long_round, "test rounds", lambda: True)
    )
    try:
        await asyncio.wait_for(enough.wait(), timeout=30)
    finally:
        rounds.cancel()
        await asyncio.gather(rounds, return_exceptions=True)
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert all(gap >= PERIOD_S * 2 for gap in gaps), gaps  # one round at a time
