"""Example MCP 2025-11-25 server with experimental Tasks.

Run from the repository root::

    .venv/bin/python examples/server_2025.py --host 127.0.0.1 --port 8000

and point a client at ``http://127.0.0.1:8000/mcp``. Tasks are kept in a SQLite file
(``--db``, default ``mcp-tasks-2025.sqlite3``) or in memory (``--memory``). Every field
of ``Limits`` has an option named after it (``--max-active-tasks N``,
``--max-finished-tasks N``, ``--max-tasks N``, ...; ``--help`` lists them). The same
server hosted in the official Python SDK (``mcp`` 1.x) is
``examples/server_2025_mcp1.py``.

Each task belongs to the caller's ``Authorization`` header value ("anonymous" when
there is none), which also enables ``tasks/list``; put a real authentication check in
``principal`` before exposing this beyond localhost.

Tools: ``greet`` (never a task), ``slow_compute``, ``failing_job`` (tool error),
``protocol_error_job`` (JSON-RPC error), ``confirm_delete`` and ``multi_input`` (ask for
input mid-flight), ``long_report`` (progress messages), ``must_task`` (only as a
task), ``brew`` (a typed tool of ``example_tools``: schemas from its signature, a
structured result) and ``order`` (a typed tool asking a typed question).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from example_tools import brew, order  # noqa: E402
from limit_options import add_limit_options, limits_from  # noqa: E402

from mcp_tasks_2025_11_25.asgi import serve  # noqa: E402
from mcp_tasks_2025_11_25.server import (  # noqa: E402
    JsonRpcError,
    Limits,
    RequestInfo,
    TasksServer,
    ToolContext,
    ToolError,
)
from mcp_tasks_2025_11_25.stores import InMemoryTaskStore, SQLiteTaskStore  # noqa: E402


def _schema(**properties: Any) -> dict[str, Any]:
    """An object input schema with these properties."""
    return {"type": "object", "properties": properties}


def _first_answer(response: dict[str, Any]) -> str:
    """The first value of an accepted elicitation's content (or the action)."""
    content: dict[str, Any] = response.get("content") or {}
    if response.get("action") == "accept" and content:
        return str(next(iter(content.values())))
    return str(response.get("action"))


def principal(request: RequestInfo) -> str:
    """The task owner: the Authorization header value, or "anonymous"."""
    return (request.headers or {}).get("authorization", "anonymous")


LIMITS = Limits(poll_interval_ms=200, default_ttl_ms=600_000)
"""The example's limits unless the command line changes them."""


def build_server(store_path: str | None, limits: Limits = LIMITS) -> TasksServer:
    """The example server with every tool registered."""
    store = InMemoryTaskStore() if store_path is None else SQLiteTaskStore(store_path)
    server = TasksServer(
        "mcptasks-example-2025",
        "1.0.0",
        store=store,
        limits=limits,
        authenticate=principal,
    )

    @server.tool(
        task_support="forbidden", input_schema=_schema(name={"type": "string"})
    )
    async def greet(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Say hello (never a task)."""
        return f"Hello, {arguments.get('name', 'world')}!"

    @server.tool(
        input_schema=_schema(seconds={"type": "number"}, label={"type": "string"})
    )
    async def slow_compute(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Sleep ``seconds`` seconds, then answer."""
        seconds = float(arguments.get("seconds", 0))
        label = str(arguments.get("label", ""))
        await ctx.report(f"computing {label} for {seconds}s")
        await asyncio.sleep(seconds)
        return f"computed {label} after {seconds}s"

    @server.tool()
    async def failing_job(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Fail with a tool error (``isError: true``) after about a second."""
        await asyncio.sleep(1)
        raise ToolError("job failed: the input could not be processed")

    @server.tool()
    async def protocol_error_job(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Fail with a JSON-RPC error."""
        await asyncio.sleep(0.2)
        raise JsonRpcError(-32603, "internal failure")

    @server.tool(input_schema=_schema(filename={"type": "string"}))
    async def confirm_delete(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Ask for confirmation before pretending to delete a file."""
        filename = str(arguments.get("filename", "x.txt"))
        answer = await ctx.elicit(
            f"Delete {filename}?", _schema(confirm={"type": "boolean"})
        )
        if answer.get("action") == "accept":
            return f"deleted {filename}"
        return f"kept {filename} ({answer.get('action')})"

    @server.tool()
    async def multi_input(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Ask two questions at once."""
        first, second = await asyncio.gather(
            ctx.elicit("First value?", _schema(confirm={"type": "boolean"})),
            ctx.elicit("Second value?", _schema(confirm={"type": "boolean"})),
        )
        return f"got {_first_answer(first)} and {_first_answer(second)}"

    @server.tool(input_schema=_schema(steps={"type": "integer"}))
    async def long_report(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Work through ``steps`` steps, reporting each as status and progress."""
        steps = int(arguments.get("steps", 5))
        for step in range(1, steps + 1):
            await ctx.report(f"step {step}/{steps}")
            await ctx.progress(step, steps, f"step {step}/{steps}")
            await asyncio.sleep(0.3)
        return f"report ready after {steps} steps"

    @server.tool(task_support="required")
    async def must_task(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Only callable as a task."""
        return "done as a task"

    server.tool()(brew)  # typed: schemas from its signature, a structured result
    server.tool()(order)  # typed, asking a typed question (a form from a model)
    return server


def main() -> None:
    """Parse the command line and serve."""
    parser = argparse.ArgumentParser(description=str(__doc__).splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", default="mcp-tasks-2025.sqlite3")
    parser.add_argument("--memory", action="store_true", help="keep tasks in memory")
    add_limit_options(parser, Limits, LIMITS)
    options = parser.parse_args()
    try:
        limits = limits_from(options, Limits)
    except ValueError as error:
        parser.error(str(error))
    serve(
        build_server(None if options.memory else options.db, limits),
        options.host,
        options.port,
    )


if __name__ == "__main__":
    main()
