"""The dual server of a package of both revisions, in process: what one revision does
reaches the other's worker, and closing the server fails the running tasks of both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import (
    ext_message,
    headers_for,
    message_2025,
    result_of,
)

pytestmark = pytest.mark.anyio


def _dual_in_process() -> tuple[Any, Any]:
    """A dual server on a memory store whose principal is the Authorization header."""
    from mcp_tasks.server import RequestInfo, TasksServer
    from mcp_tasks.stores import InMemoryTaskStore

    def principal(request: RequestInfo) -> str:
        return (request.headers or {}).get("authorization", "anonymous")

    server = TasksServer("dual", store=InMemoryTaskStore(), authenticate=principal)
    return server, RequestInfo


async def test_a_cancel_through_the_other_revision_stops_the_worker() -> None:
    """Issue 10, item 5: A task created through 2025-11-25 and cancelled through the
    extension (same principal): the tool sees the cancellation and its worker stops;
    and the reverse."""
    import asyncio

    server, request_info = _dual_in_process()
    started: dict[str, asyncio.Event] = {}
    stopped: dict[str, asyncio.Event] = {}

    @server.tool()
    async def wait_forever(ctx: Any, arguments: dict[str, Any]) -> str:
        label = str(arguments["label"])
        started[label].set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped[label].set()
        return "never"

    alice = {"authorization": "alice"}
    async with server:
        session = request_info(
            headers=alice, session_id=server.server_2025.open_session("alice").id
        )
        stateless = request_info(headers=alice)

        def routed(info: Any, message: dict[str, Any]) -> Any:
            """``info``, with the routing headers of an extension request."""
            if info is not stateless:
                return info
            return request_info(headers=headers_for(message, **alice))

        async def send(make: Any, info: Any, method: str, params: Any) -> Any:
            message = make(method, params)
            return await server.handle(message, routed(info, message))

        for label, create, cancel in (
            ("2025 -> ext", (message_2025, session), (ext_message, stateless)),
            ("ext -> 2025", (ext_message, stateless), (message_2025, session)),
        ):
            started[label], stopped[label] = asyncio.Event(), asyncio.Event()
            make, info = create
            params: dict[str, Any] = {
                "name": "wait_forever",
                "arguments": {"label": label},
            }
            if make is message_2025:
                params["task"] = {}
            created = result_of(await send(make, info, "tools/call", params))
            task_id = (created.get("task") or created)["taskId"]
            await asyncio.wait_for(started[label].wait(), 5)
            make, info = cancel
            answer = await send(make, info, "tasks/cancel", {"taskId": task_id})
            assert "error" not in (answer or {}), (label, answer)
            await asyncio.wait_for(stopped[label].wait(), 5)
            view = result_of(await send(make, info, "tasks/get", {"taskId": task_id}))
            assert view["status"] == "cancelled", (label, view)


async def test_closing_fails_the_running_tasks_of_both_revisions(
    tmp_path: Path,
) -> None:
    """Issue 10, item 5: Closing a dual server marks the running tasks of *both*
    revisions failed in the shared store, which closes once, after the last
    revision's server stopped."""
    import asyncio

    from mcp_tasks.server import RequestInfo, TasksServer
    from mcp_tasks.stores import SQLiteTaskStore

    path = str(tmp_path / "tasks.sqlite3")
    server = TasksServer("dual", store=SQLiteTaskStore(path))
    running = asyncio.Semaphore(0)

    @server.tool()
    async def forever(ctx: Any, arguments: dict[str, Any]) -> str:
        running.release()
        await asyncio.Event().wait()
        return "never"

    await server.start()
    session = RequestInfo(session_id=server.server_2025.open_session().id)
    old = result_of(
        await server.handle(
            message_2025("tools/call", {"name": "forever", "task": {}}), session
        )
    )["task"]["taskId"]
    new = result_of(
        await server.handle(
            ext_message("tools/call", {"name": "forever"}), RequestInfo()
        )
    )["taskId"]
    for _ in range(2):
        await asyncio.wait_for(running.acquire(), 5)
    await server.close()

    store = SQLiteTaskStore(path)
    await store.open()
    try:
        for task_id in (old, new):
            record = await store.get(task_id)
            assert record is not None and record.status == "failed", (task_id, record)
    finally:
        await store.close()
