"""Drive ``mcp.client.Client`` with ``mcp_tasks_ext.sdk.client_extension`` (mcp 2.x).

Usage: ``sdk_seam_client.py URL STORE``; runs the scenarios against a server with the
example tools (``slow_compute``, ``failing_job``, ``confirm_delete``, ``greet``) and
prints one JSON report. Needs the golden packages on ``sys.path`` (``PYTHONPATH``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from mcp.client import Client
from mcp_types import ElicitResult
from mcp_tasks_ext.client import TaskCancelled
from mcp_tasks_ext.sdk import client_extension
from mcp_tasks_ext.task_ids import SqliteTaskIdStore


async def main(url: str, store_path: str) -> dict[str, Any]:
    report: dict[str, Any] = {"elicitations": [], "statuses": []}

    async def elicit(context: Any, params: Any) -> ElicitResult:
        report["elicitations"].append(params.message)
        return ElicitResult(action="accept", content={"confirm": True})

    def text(result: Any) -> str:
        return " ".join(b.text for b in result.content if hasattr(b, "text"))

    handles: list[Any] = []
    tasks = client_extension(
        store=SqliteTaskIdStore(store_path),
        on_task=handles.append,
        on_status=lambda t: report["statuses"].append(str(t.status)),
    )
    async with Client(url, extensions=[tasks], elicitation_callback=elicit) as client:
        done = await client.call_tool("slow_compute", {"seconds": 0.3, "label": "a"})
        report["completed"] = text(done)
        report["greet"] = text(await client.call_tool("greet", {"name": "b"}))
        asked = await client.call_tool("confirm_delete", {"filename": "f.txt"})
        report["input"] = text(asked)
        failed = await client.call_tool("failing_job", {})
        report["failed"] = [failed.is_error, text(failed)]

        # cancel through the handle while call_tool waits
        handles.clear()
        call = asyncio.ensure_future(client.call_tool("slow_compute", {"seconds": 30}))
        while not handles:
            await asyncio.sleep(0.05)
        await tasks.cancel(handles[0].task_id)
        try:
            await call
            report["cancelled"] = False
        except TaskCancelled:
            report["cancelled"] = True

    # abandon a wait (as a crash would), then resume it from the store
    quiet = client_extension(
        store=SqliteTaskIdStore(store_path),
        on_task=handles.append,
        cancel_on_abort=False,
    )
    handles.clear()
    async with Client(url, extensions=[quiet]) as client:
        call = asyncio.ensure_future(client.call_tool("slow_compute", {"seconds": 1}))
        while not handles:
            await asyncio.sleep(0.05)
        task_id = handles[0].task_id
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
    again = client_extension(store=SqliteTaskIdStore(store_path))
    async with Client(url, extensions=[again]) as client:
        report["pending"] = task_id in await again.pending()
        report["resumed"] = text(await again.resume(client, task_id))
        report["pending_after"] = await again.pending()
    return report


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))))
