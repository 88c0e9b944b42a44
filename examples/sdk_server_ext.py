"""An ``MCPServer`` app (official Python SDK, ``mcp`` 2.x) with durable tasks from the
generated Tasks-extension package, through ``mcp_tasks_ext.sdk.server_extension``.

The tools stay ordinary ``@mcp.tool()`` functions; ``@tasks.task_tool(...)`` marks the
ones that may (``"optional"``) or must (``"required"``) run as tasks. Inside a task,
``task_context()`` gives the ``ToolContext`` (status messages, elicitation,
cancellation). The tools are the fixtures of the official conformance suite (``greet``,
``slow_compute``, ``failing_job``, ``protocol_error_job``, ``confirm_delete``,
``multi_input``, ``test_tool_with_task``), as in ``examples/server_ext.py``. Run it with
an interpreter that has ``mcp>=2.3`` and ``uvicorn``, for example the fastmcp peer
virtualenv::

    $MCPTASKS_PEERS/venv-fastmcp/bin/python examples/sdk_server_ext.py --host 127.0.0.1
    --port 8000
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))

import uvicorn  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from mcp_tasks_ext.sdk import server_extension, task_context  # noqa: E402
from mcp_tasks_ext.server import Limits, TasksServer, ToolContext  # noqa: E402
from mcp_tasks_ext.stores import InMemoryTaskStore, SQLiteTaskStore  # noqa: E402


def _schema(**properties: Any) -> dict[str, Any]:
    """An object schema with these properties."""
    return {"type": "object", "properties": properties}


def _first_answer(response: Any) -> str:
    """The first value of an accepted elicitation's content (or the action)."""
    if not isinstance(response, dict):
        return str(response)
    answer = cast(dict[str, Any], response)
    content: dict[str, Any] = answer.get("content") or {}
    if answer.get("action") == "accept" and content:
        return str(next(iter(content.values())))
    return str(answer.get("action"))


async def ask_user_name(
    ctx: ToolContext, arguments: dict[str, Any]
) -> dict[str, dict[str, Any]] | None:
    """MRTR round 1 of ``test_tool_with_task``: ask the name before any task exists."""
    if "user_name" in ctx.input_responses:
        return None
    request = {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Your name?",
            "requestedSchema": _schema(name={"type": "string"}),
        },
    }
    return {"user_name": request}


def build_app(db: str | None) -> MCPServer:
    """The app: six task tools and one plain tool."""
    store = InMemoryTaskStore() if db is None else SQLiteTaskStore(db)
    limits = Limits(poll_interval_ms=200, default_ttl_ms=600_000)
    tasks = server_extension(TasksServer("sdk-example-ext", store=store, limits=limits))
    mcp = MCPServer("sdk-example-ext", extensions=[tasks])

    @mcp.tool()
    def greet(name: str = "world") -> str:
        """Say hello (never a task)."""
        return f"Hello, {name}!"

    @tasks.task_tool()
    @mcp.tool()
    async def slow_compute(seconds: float = 1.0, label: str = "") -> str:
        """Sleep ``seconds`` seconds, reporting progress in the task's status
        message."""
        ctx = task_context()
        if ctx is not None:
            await ctx.report(f"computing {label} for {seconds}s")
        await asyncio.sleep(seconds)
        return f"computed {label} after {seconds}s"

    @tasks.task_tool(task_support="required")
    @mcp.tool()
    async def failing_job() -> str:
        """Fail after a moment (always a task)."""
        await asyncio.sleep(0.3)
        raise ToolError("job failed: the input could not be processed")

    @tasks.task_tool(task_support="required")
    @mcp.tool()
    async def confirm_delete(filename: str = "x.txt") -> str:
        """Ask for confirmation (the task is input_required meanwhile)."""
        ctx = task_context()
        assert ctx is not None
        answer = await ctx.elicit(
            f"Delete {filename}?", _schema(confirm={"type": "boolean"})
        )
        if answer.get("action") == "accept":
            return f"deleted {filename}"
        return f"kept {filename} ({answer.get('action')})"

    @tasks.task_tool()
    @mcp.tool()
    async def protocol_error_job() -> str:
        """Fail with a JSON-RPC error (the task fails with it)."""
        await asyncio.sleep(0.2)
        raise MCPError(-32603, "internal failure")

    @tasks.task_tool()
    @mcp.tool()
    async def multi_input() -> str:
        """Ask two questions at once (both are in the task's input requests)."""
        ctx = task_context()
        assert ctx is not None
        first, second = await asyncio.gather(
            ctx.elicit("First value?", _schema(name={"type": "string"})),
            ctx.elicit("Second value?", _schema(name={"type": "string"})),
        )
        return f"got {_first_answer(first)} and {_first_answer(second)}"

    @tasks.task_tool(task_support="required", preflight=ask_user_name)
    @mcp.tool()
    async def test_tool_with_task() -> str:
        """Greet the user whose name was asked (MRTR) before the task started."""
        ctx = task_context()
        assert ctx is not None
        name = _first_answer(ctx.input_responses.get("user_name"))
        await asyncio.sleep(0.2)
        return f"Hello {name}!"

    return mcp


def main() -> None:
    """Parse the command line and serve."""
    parser = argparse.ArgumentParser(description=str(__doc__).splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", default="mcp-tasks-sdk-ext.sqlite3")
    parser.add_argument("--memory", action="store_true", help="keep tasks in memory")
    options = parser.parse_args()
    app = build_app(None if options.memory else options.db)
    http = app.streamable_http_app(json_response=True, stateless_http=True)
    uvicorn.run(http, host=options.host, port=options.port, log_level="warning")


if __name__ == "__main__":
    main()
