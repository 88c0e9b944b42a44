"""Drive ``mcp.client.Client`` with ``mcp_tasks_ext.sdk.client_extension`` (mcp 2.x).

Usage: ``sdk_seam_client.py URL STORE [ours|fastmcp]``; runs the scenarios against a
server and prints one JSON report. ``ours`` (default): a server with the example tools
(``slow_compute``, ``failing_job``, ``protocol_error_job``, ``confirm_delete``,
``greet``: ``examples/server_ext.py`` or ``examples/sdk_server_ext.py``); ``fastmcp``:
the fastmcp-tasks peer server (``tests/peers/fastmcp_server.py``: ``slow_compute``,
``failing_job``, ``confirm_delete``, ``long_job``; no plain tool, no protocol error).
Needs the golden packages on ``sys.path`` (``PYTHONPATH``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult

from mcp_tasks_ext.client import TaskCancelled
from mcp_tasks_ext.sdk import client_extension
from mcp_tasks_ext.task_ids import SqliteTaskIdStore

LONG_TOOL = {"ours": "slow_compute", "fastmcp": "long_job"}
"""A tool that runs for ``seconds`` (cancelled mid-way)."""


async def main(url: str, store_path: str, kind: str) -> dict[str, Any]:
    report: dict[str, Any] = {"elicitations": [], "statuses": []}
    ours = kind == "ours"

    async def elicit(context: Any, params: Any) -> ElicitResult:
        report["elicitations"].append(params.message)
        return ElicitResult(action="accept", content={"confirm": True})

    def text(result: Any) -> str:
        return " ".join(b.text for b in result.content if hasattr(b, "text"))

    async def first_handle() -> Any:
        while not handles:  # on_task runs as soon as the server answered with a task
            await asyncio.sleep(0.02)
        return handles[0]

    handles: list[Any] = []
    tasks = client_extension(
        store=SqliteTaskIdStore(store_path),
        on_task=handles.append,
        on_status=lambda t: report["statuses"].append(str(t.status)),
    )
    async with Client(url, extensions=[tasks], elicitation_callback=elicit) as client:
        done = await client.call_tool("slow_compute", {"seconds": 0.3, "label": "a"})
        report["completed"] = text(done)
        report["completed_is_error"] = done.is_error
        if ours:
            report["greet"] = text(await client.call_tool("greet", {"name": "b"}))
        asked = await client.call_tool("confirm_delete", {"filename": "f.txt"})
        report["input"] = text(asked)
        failed = await client.call_tool("failing_job", {})
        report["failed"] = [failed.is_error, text(failed)]
        if ours:  # a task that ends "failed" raises the task's JSON-RPC error
            try:
                await client.call_tool("protocol_error_job", {})
                report["protocol_error"] = None
            except MCPError as error:
                report["protocol_error"] = [error.code, error.message]

        # cancel through the handle while call_tool waits
        handles.clear()
        call = asyncio.ensure_future(client.call_tool(LONG_TOOL[kind], {"seconds": 30}))
        handle = await asyncio.wait_for(first_handle(), 10)
        await tasks.cancel(handle.task_id)
        try:
            await call
            report["cancelled"] = False
        except TaskCancelled:
            report["cancelled"] = True
        # what the server says of it now (tasks/get through the same session)
        seen = tasks.tasks_client(client.session)
        for _ in range(100):
            state = await seen.get_task(handle.task_id)
            if str(state.status) != "working":
                break
            await asyncio.sleep(0.05)
        report["cancelled_status"] = str(state.status)

    # abandon a wait (as a crash would), then resume it from the store
    quiet = client_extension(
        store=SqliteTaskIdStore(store_path),
        on_task=handles.append,
        cancel_on_abort=False,
    )
    handles.clear()
    async with Client(url, extensions=[quiet]) as client:
        call = asyncio.ensure_future(
            client.call_tool("slow_compute", {"seconds": 1, "label": "r"})
        )
        task_id = (await asyncio.wait_for(first_handle(), 10)).task_id
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
    again = client_extension(store=SqliteTaskIdStore(store_path))
    async with Client(url, extensions=[again]) as client:
        report["pending"] = task_id in await again.pending()
        report["resumed"] = text(await again.resume(client, task_id))
        report["pending_after"] = await again.pending()
    return report


if __name__ == "__main__":
    kind = sys.argv[3] if len(sys.argv) > 3 else "ours"
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], kind))))
