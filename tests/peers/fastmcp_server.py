"""Tasks extension peer server on ``fastmcp[tasks]==4.1.4``
(io.modelcontextprotocol/tasks).

Run with the peer virtualenv's interpreter::

    venv-fastmcp/bin/python tests/peers/fastmcp_server.py PORT

It serves streamable HTTP at ``http://127.0.0.1:PORT/mcp``. ``fastmcp_tasks`` keeps
its tasks in an in-memory Docket (no Redis needed) and answers ``tasks/get``,
``tasks/update`` and ``tasks/cancel``; a tool runs as a task when the request
declares the extension.

Tools:
    slow_compute(seconds, label)  reports two progress messages (they become the
                                  task's statusMessage), then returns "<label>: done"
    failing_job()                 raises: a tool execution error, so the task ends
                                  ``completed`` with an ``isError`` result
    confirm_delete(filename)      asks for ``confirm`` through an input request
                                  (task ``input_required``, answered by
                                  ``tasks/update``) and returns "deleted <filename>" or
                                  "kept <filename>"
    long_job(seconds)             sleeps; ``tasks/cancel`` stops it
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

mcp = FastMCP("mcptasks-peer-fastmcp")
mcp.add_extension(TasksExtension())

TASKED = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=200))


@mcp.tool(task=TASKED)
async def slow_compute(ctx: Context, seconds: float = 1.0, label: str = "job") -> str:
    """Wait `seconds`, reporting progress, then return '<label>: done'."""
    await ctx.report_progress(0, 2, f"{label}: started")
    await asyncio.sleep(seconds / 2)
    await ctx.report_progress(1, 2, f"{label}: halfway")
    await asyncio.sleep(seconds / 2)
    return f"{label}: done"


@mcp.tool(task=TASKED)
async def failing_job() -> str:
    """Always fails."""
    await asyncio.sleep(0.2)
    raise ValueError("failing_job failed on purpose")


@mcp.tool(task=TASKED)
async def confirm_delete(
    ctx: Context, filename: str = "file.txt"
) -> str | mcp_types.InputRequiredResult:
    """Ask the user to confirm deleting `filename`."""
    # A background task may not call ctx.elicit(); it returns an input request
    # instead and runs again once the client answered it with tasks/update.
    responses = ctx.input_responses or {}
    if "confirm" not in responses:
        request = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(
                message=f"Delete {filename}?",
                requested_schema={
                    "type": "object",
                    "properties": {
                        "confirm": {
                            "type": "boolean",
                            "description": "Delete the file?",
                        }
                    },
                    "required": ["confirm"],
                },
            )
        )
        return mcp_types.InputRequiredResult(input_requests={"confirm": request})
    answer = responses["confirm"]
    content = getattr(answer, "content", None) or {}
    confirmed = getattr(answer, "action", None) == "accept" and bool(
        content.get("confirm")
    )
    return f"{'deleted' if confirmed else 'kept'} {filename}"


@mcp.tool(task=TASKED)
async def long_job(seconds: float = 30.0) -> str:
    """Run for `seconds` unless cancelled first."""
    await asyncio.sleep(seconds)
    return "long_job: done"


if __name__ == "__main__":
    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=int(sys.argv[1]),
        show_banner=False,
        log_level="warning",
    )
