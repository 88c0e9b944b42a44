"""D.2.22 dual stack: one task store shared by a 2025-11-25 server and an extension
server.

The two generated packages are separate servers, but their ``TaskRecord`` is
revision-neutral, so both can run in one process on one store: legacy clients keep
``tasks/get`` and ``tasks/cancel`` on the tasks they created through the legacy flow,
and the extension endpoint sees the same tasks.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_tasks_2025_11_25 import server as legacy
from mcp_tasks_ext import server as ext
from mcp_tasks_ext.stores import InMemoryTaskStore
from tests.support.servers import ext_message, message_2025, result_of

pytestmark = pytest.mark.anyio


async def test_legacy_tasks_stay_reachable_on_a_shared_store() -> None:
    """Digest D.2.22: legacy tasks stay reachable on a shared store."""
    store = InMemoryTaskStore()
    release = asyncio.Event()
    old = legacy.TasksServer("legacy", store=store)  # type: ignore[arg-type]  # same store class, other package
    new = ext.TasksServer("ext", store=store, recover_orphans=False)

    @old.tool()
    async def job(ctx: legacy.ToolContext, arguments: dict[str, Any]) -> str:
        await release.wait()
        return "done"

    async with old, new:
        created = result_of(
            await old.handle(message_2025("tools/call", {"name": "job", "task": {}}))
        )
        task_id = created["task"]["taskId"]
        legacy_view = result_of(
            await old.handle(message_2025("tasks/get", {"taskId": task_id}))
        )
        ext_view = result_of(
            await new.handle(ext_message("tasks/get", {"taskId": task_id}))
        )
        cancelled = result_of(
            await old.handle(message_2025("tasks/cancel", {"taskId": task_id}))
        )
        deadline = asyncio.get_running_loop().time() + 5
        while task_id in old.lifecycle.workers:  # the cancelled worker is being stopped
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.005)
        release.set()  # nothing runs any more that it could release
        after = result_of(
            await new.handle(ext_message("tasks/get", {"taskId": task_id}))
        )
    assert legacy_view["status"] == ext_view["status"] == "working"
    assert ext_view["ttlMs"] == legacy_view["ttl"]
    assert cancelled["status"] == "cancelled"
    assert after["status"] == "cancelled"
