"""A ``FastMCP`` app (official Python SDK, ``mcp`` 1.x) with durable MCP 2025-11-25
tasks from the generated package, through ``mcp_tasks_2025_11_25.sdk.fastmcp_tasks``.

The tools stay ordinary ``@app.tool()`` functions; ``@tasks.task_tool(...)`` marks the
ones that may (``"optional"``) or must (``"required"``) run as tasks. Inside a task,
``task_context()`` gives the ``ToolContext`` (status messages, elicitation,
cancellation). Run it with an interpreter that has ``mcp==1.30`` installed, for example
the mcp1 peer virtualenv (endpoint ``/mcp``)::

    $MCPTASKS_PEERS/venv-mcp1/bin/python examples/sdk_server_2025.py --host 127.0.0.1
    --port 8000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import warnings
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))

import uvicorn  # noqa: E402
from mcp.server.fastmcp import FastMCP  # noqa: E402
from mcp.server.fastmcp.exceptions import ToolError  # noqa: E402

from mcp_tasks_2025_11_25.sdk import fastmcp_tasks, task_context  # noqa: E402
from mcp_tasks_2025_11_25.server import Limits, TasksServer  # noqa: E402
from mcp_tasks_2025_11_25.stores import (  # noqa: E402
    InMemoryTaskStore,
    SQLiteTaskStore,
)

# mcp 1.x marks its Tasks types experimental and deprecated; they are what this serves
warnings.filterwarnings("ignore", category=DeprecationWarning)


def build_app(db: str | None) -> tuple[FastMCP, TasksServer]:
    """The app (three task tools and one plain tool) and its ``TasksServer``."""
    store = InMemoryTaskStore() if db is None else SQLiteTaskStore(db)
    limits = Limits(poll_interval_ms=200, default_ttl_ms=600_000)
    server = TasksServer("sdk-example-2025", store=store, limits=limits)
    app = FastMCP("sdk-example-2025")
    tasks = fastmcp_tasks(app, server)

    @app.tool()
    def greet(name: str = "world") -> str:
        """Say hello (never a task)."""
        return f"Hello, {name}!"

    @tasks.task_tool()
    @app.tool()
    async def slow_compute(seconds: float = 1.0, label: str = "") -> str:
        """Sleep ``seconds`` seconds, reporting progress in the task's status
        message."""
        ctx = task_context()
        if ctx is not None:
            await ctx.report(f"computing {label} for {seconds}s")
        await asyncio.sleep(seconds)
        return f"computed {label} after {seconds}s"

    @tasks.task_tool(task_support="required")
    @app.tool()
    async def failing_job() -> str:
        """Fail after a moment (always a task)."""
        await asyncio.sleep(0.3)
        raise ToolError("job failed: the input could not be processed")

    @tasks.task_tool(task_support="required")
    @app.tool()
    async def confirm_delete(filename: str = "x.txt") -> str:
        """Ask for confirmation (the task is input_required meanwhile)."""
        ctx = task_context()
        assert ctx is not None
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {"confirm": {"type": "boolean"}},
        }
        answer = await ctx.elicit(f"Delete {filename}?", schema)
        if answer.get("action") == "accept":
            return f"deleted {filename}"
        return f"kept {filename} ({answer.get('action')})"

    return app, server


def main() -> None:
    """Parse the command line and serve."""
    parser = argparse.ArgumentParser(description=str(__doc__).splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", default="mcp-tasks-sdk-2025.sqlite3")
    parser.add_argument("--memory", action="store_true", help="keep tasks in memory")
    options = parser.parse_args()
    app, server = build_app(None if options.memory else options.db)
    http = app.streamable_http_app()
    sdk_lifespan = http.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(starlette: Any) -> AsyncGenerator[None, None]:
        async with server, sdk_lifespan(starlette):  # tasks end with the app
            yield

    http.router.lifespan_context = lifespan
    uvicorn.run(http, host=options.host, port=options.port, log_level="warning")


if __name__ == "__main__":
    main()
