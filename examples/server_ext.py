"""Example Tasks-extension server (MCP 2026-07-28 + io.modelcontextprotocol/tasks).

Run from the repository root::

    .venv/bin/python examples/server_ext.py --host 127.0.0.1 --port 8000

and point a client at ``http://127.0.0.1:8000/mcp``. Tasks are kept in a SQLite file
(``--db``, default ``mcp-tasks-ext.sqlite3``), in memory (``--memory``), or in Redis
(``--redis redis://127.0.0.1:6379/0``), where several replicas of this server share
them; ``--lease-seconds`` sets the worker lease that bounds how long a task whose
replica died stays unfinished. The same
server hosted in the official Python SDK (``mcp`` 2.x) is ``examples/server_ext_mcp2.py``.

Tools: the fixtures of the official conformance suite (``greet``, ``slow_compute``,
``failing_job``, ``protocol_error_job``, ``confirm_delete``, ``multi_input``,
``test_tool_with_task``), plus ``long_report`` (progress messages) and ``ask_name``
(asks for input mid-flight).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))

from mcp_tasks_ext.asgi import serve  # noqa: E402
from mcp_tasks_ext.server import (  # noqa: E402
    JsonRpcError,
    Limits,
    TasksServer,
    ToolContext,
    ToolError,
)
from mcp_tasks_ext.server_core import RequestInfo  # noqa: E402
from mcp_tasks_ext.redis_store import RedisTaskStore  # noqa: E402
from mcp_tasks_ext.stores import (  # noqa: E402
    InMemoryTaskStore,
    SQLiteTaskStore,
    TaskStore,
)


def _schema(**properties: Any) -> dict[str, Any]:
    """An object input schema with these properties."""
    return {"type": "object", "properties": properties}


def _first_answer(response: Any) -> str:
    """The first value of an accepted elicitation's content (or the action)."""
    if isinstance(response, dict) and response.get("action") == "accept":
        content = response.get("content") or {}
        if content:
            return str(next(iter(content.values())))
    return str(response.get("action") if isinstance(response, dict) else response)


def principal(request: RequestInfo) -> str:
    """The task owner: the Authorization header value, or "anonymous"."""
    return (request.headers or {}).get("authorization", "anonymous")


def build_server(
    store_path: str | None, *, redis_url: str | None = None, lease_s: float = 15.0
) -> TasksServer:
    """The example server with every tool registered.

    ``redis_url`` (which wins over ``store_path``) keeps the tasks in Redis; None for
    ``store_path`` keeps them in memory.
    """
    store: TaskStore
    if redis_url is not None:
        store = RedisTaskStore(redis_url)
    elif store_path is None:
        store = InMemoryTaskStore()
    else:
        store = SQLiteTaskStore(store_path)
    server = TasksServer(
        "mcptasks-example-ext",
        "1.0.0",
        store=store,
        limits=Limits(poll_interval_ms=200, default_ttl_ms=600_000, lease_s=lease_s),
        authenticate=principal,
    )

    @server.tool(
        task_support="forbidden", input_schema=_schema(name={"type": "string"})
    )
    async def greet(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Say hello (always synchronous)."""
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

    @server.tool(task_support="required")
    async def failing_job(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Fail with a tool error after about a second (always a task)."""
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
            ctx.elicit("First value?", _schema(name={"type": "string"})),
            ctx.elicit("Second value?", _schema(name={"type": "string"})),
        )
        return f"got {_first_answer(first)} and {_first_answer(second)}"

    async def ask_user_name(
        ctx: ToolContext, arguments: dict[str, Any]
    ) -> dict[str, dict[str, Any]] | None:
        """MRTR round 1: ask for the user's name before any task exists."""
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

    @server.tool(task_support="required", preflight=ask_user_name)
    async def test_tool_with_task(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Greet the user whose name was gathered before the task started."""
        name = _first_answer(ctx.input_responses.get("user_name"))
        await asyncio.sleep(0.2)
        return f"Hello {name}!"

    @server.tool(input_schema=_schema(steps={"type": "integer"}))
    async def long_report(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Work through ``steps`` steps, reporting each one in ``statusMessage``."""
        steps = int(arguments.get("steps", 5))
        for step in range(1, steps + 1):
            await ctx.report(f"step {step}/{steps}")
            await asyncio.sleep(0.3)
        return f"report ready after {steps} steps"

    @server.tool()
    async def ask_name(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Ask the user's name mid-flight and greet them."""
        answer = await ctx.elicit(
            "What is your name?", _schema(name={"type": "string"})
        )
        return f"hello {_first_answer(answer)}"

    return server


def main() -> None:
    """Parse the command line and serve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", default="mcp-tasks-ext.sqlite3")
    parser.add_argument("--memory", action="store_true", help="keep tasks in memory")
    parser.add_argument(
        "--redis", metavar="URL", help="keep tasks in Redis, shared by replicas"
    )
    parser.add_argument(
        "--lease-seconds",
        type=float,
        default=15.0,
        help="worker lease on Redis (a dead replica's tasks fail within ~4/3 of it)",
    )
    options = parser.parse_args()
    if options.redis:
        # the store warns at start when Redis would lose acknowledged tasks (its
        # persistence settings), and logs the start and end of each Redis outage
        logging.basicConfig(
            level=logging.INFO, format="%(levelname)s %(name)s: %(message)s"
        )
    server = build_server(
        None if options.memory else options.db,
        redis_url=options.redis,
        lease_s=options.lease_seconds,
    )
    serve(server, options.host, options.port)


if __name__ == "__main__":
    main()
