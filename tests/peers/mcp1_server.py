"""Tasks peer server on the official Python SDK ``mcp==1.30.0`` (revision 2025-11-25).

Run with the peer virtualenv's interpreter::

    venv-mcp1/bin/python tests/peers/mcp1_server.py PORT

It serves streamable HTTP at ``http://127.0.0.1:PORT/mcp/`` (the SDK mounts the
endpoint with a trailing slash). Every tool accepts task augmentation; the SDK's
in-memory task store answers ``tasks/get``, ``tasks/result``, ``tasks/list`` and
``tasks/cancel``.

Tools:
    slow_compute(seconds, label)  reports two status messages, then returns "<label>:
    done" failing_job()                 raises, so the task ends ``failed``
    confirm_delete(filename)      elicits a yes/no confirmation (delivered through
                                  ``tasks/result``) and returns "deleted/kept
                                  <filename>"
    long_job(seconds)             sleeps in small steps and stops early once cancelled
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp.types as types
import uvicorn
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.types import Receive, Scope, Send

# The SDK marks its experimental Tasks API deprecated; it is exactly what this peer
# exercises.
warnings.filterwarnings("ignore", category=DeprecationWarning)

server: Server[Any, Any] = Server("mcptasks-peer-mcp1")
support = server.experimental.enable_tasks()


def _tool(name: str, description: str, properties: dict[str, Any]) -> types.Tool:
    return types.Tool(
        name=name,
        description=description,
        inputSchema={
            "type": "object",
            "properties": properties,
            "required": list(properties),
        },
        execution=types.ToolExecution(taskSupport="optional"),
    )


TOOLS = [
    _tool(
        "slow_compute",
        "Wait `seconds`, reporting progress, then return '<label>: done'.",
        {"seconds": {"type": "number"}, "label": {"type": "string"}},
    ),
    _tool("failing_job", "Always fails.", {}),
    _tool(
        "confirm_delete",
        "Ask the user to confirm deleting `filename`.",
        {"filename": {"type": "string"}},
    ),
    _tool(
        "long_job",
        "Run for `seconds` unless cancelled first.",
        {"seconds": {"type": "number"}},
    ),
]

CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "description": "Delete the file?"}},
    "required": ["confirm"],
}


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def _is_cancelled(task_id: str) -> bool:
    task = await support.store.get_task(task_id)
    return task is None or task.status == "cancelled"


async def run_tool(
    task: ServerTaskContext, name: str, args: dict[str, Any]
) -> types.CallToolResult:
    """The body of every tool when it runs as a task."""
    if name == "slow_compute":
        seconds = float(args.get("seconds", 1.0))
        label = str(args.get("label", "job"))
        await task.update_status(f"{label}: started")
        await anyio.sleep(seconds / 2)
        await task.update_status(f"{label}: halfway")
        await anyio.sleep(seconds / 2)
        return _text(f"{label}: done")
    if name == "failing_job":
        await anyio.sleep(0.2)
        raise RuntimeError("failing_job failed on purpose")
    if name == "confirm_delete":
        filename = str(args.get("filename", ""))
        answer = await task.elicit(f"Delete {filename}?", CONFIRM_SCHEMA)
        confirmed = answer.action == "accept" and bool(
            (answer.content or {}).get("confirm")
        )
        return _text(f"{'deleted' if confirmed else 'kept'} {filename}")
    if name == "long_job":
        seconds = float(args.get("seconds", 30.0))
        await task.update_status("long_job: running")
        deadline = anyio.current_time() + seconds
        while anyio.current_time() < deadline:
            if await _is_cancelled(task.task_id):
                # Refresh the context's cached task (now terminal) so the SDK does
                # not try to complete a cancelled task when this function returns.
                await task.update_status("long_job: cancelled", notify=False)
                return _text("long_job: cancelled")
            await anyio.sleep(0.05)
        return _text("long_job: done")
    raise ValueError(f"unknown tool {name}")


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return TOOLS


@server.call_tool()
async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
    ctx = server.request_context
    tool = next((t for t in TOOLS if t.name == name), None)
    if tool is None:
        raise ValueError(f"unknown tool {name}")
    ctx.experimental.validate_for_tool(tool)
    args = arguments or {}
    if ctx.experimental.is_task:

        async def work(task: ServerTaskContext) -> types.CallToolResult:
            return await run_tool(task, name, args)

        return await ctx.experimental.run_task(work)
    if name == "failing_job":
        raise RuntimeError("failing_job failed on purpose")
    if name == "slow_compute":
        await anyio.sleep(float(args.get("seconds", 1.0)))
        return _text(f"{args.get('label', 'job')}: done")
    raise ValueError(f"{name} needs task augmentation in this peer")


def main() -> None:
    port = int(sys.argv[1])
    manager = StreamableHTTPSessionManager(app=server, stateless=False)

    async def handle(scope: Scope, receive: Receive, send: Send) -> None:
        await manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    app = Starlette(routes=[Mount("/mcp", app=handle)], lifespan=lifespan)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
