"""Example MCP Tasks server speaking both revisions on one port (``mcp_tasks``, dual).

Run from the repository root::

    .venv/bin/python examples/server.py --host 127.0.0.1 --port 8000

and point any Tasks client at ``http://127.0.0.1:8000/mcp``: 2025-11-25 clients
(``initialize`` and a session, ``tasks/result``, ``notifications/tasks/status``) and
Tasks-extension clients (MCP 2026-07-28 + ``io.modelcontextprotocol/tasks``: per-request
``_meta``, ``tasks/update``, ``subscriptions/listen``) are served by the same tools and
the same task store. Tasks are kept in a SQLite file (``--db``, default
``mcp-tasks.sqlite3``), in memory (``--memory``), or in Redis
(``--redis redis://127.0.0.1:6379/0``), where several replicas share them. With
``--executor celery:examples.celery_app`` (and ``--redis``) the tools run on Celery
workers (``celery -A examples.celery_app worker``, from the repository root) instead
of in this process (see ``examples/celery_app.py``). Every field
of ``Limits`` has an option named after it (``--max-active-tasks N``,
``--max-finished-tasks N``, ``--max-tasks N``, ``--lease-s SECONDS``, ...; ``--help``
lists them).

Each task belongs to the caller's ``Authorization`` header value ("anonymous" when
there is none), whichever revision created it; put a real authentication check in
``principal`` before exposing this beyond localhost.

Tools: those of ``examples/example_tools.py`` (the conformance suite's fixtures,
``long_report``, ``ask_name``, ``weather`` and the typed ``brew``), plus ``must_task``
(only as a task).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from example_tools import add_tools, principal  # noqa: E402
from limit_options import add_limit_options, limits_from  # noqa: E402

from mcp_tasks.asgi import serve  # noqa: E402
from mcp_tasks.redis_store import RedisTaskStore  # noqa: E402
from mcp_tasks.server import TasksServer  # noqa: E402
from mcp_tasks.server_core import (  # noqa: E402
    JsonRpcError,
    Limits,
    ToolContext,
    ToolError,
)
from mcp_tasks.stores import (  # noqa: E402
    InMemoryTaskStore,
    SQLiteTaskStore,
    TaskStore,
)

LIMITS = Limits(poll_interval_ms=200, default_ttl_ms=600_000)
"""The example's limits unless the command line changes them."""


def build_server(
    store_path: str | None,
    *,
    redis_url: str | None = None,
    lease_s: float = 15.0,
    limits: Limits | None = None,
    executor: Any = None,
) -> TasksServer:
    """The example server with every tool registered.

    ``redis_url`` (which wins over ``store_path``) keeps the tasks in Redis; None for
    ``store_path`` keeps them in memory. The limits are ``LIMITS`` with ``lease_s``,
    or ``limits`` when given. ``executor`` runs the tools (None: in this process).
    """
    store: TaskStore
    if redis_url is not None:
        store = RedisTaskStore(redis_url)
    elif store_path is None:
        store = InMemoryTaskStore()
    else:
        store = SQLiteTaskStore(store_path)
    server = TasksServer(
        "mcptasks-example",
        "1.0.0",
        store=store,
        limits=limits or replace(LIMITS, lease_s=lease_s),
        authenticate=principal,
        executor=executor,
    )

    add_tools(server, ToolError, JsonRpcError)

    @server.tool(task_support="required")
    async def must_task(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Only callable as a task."""
        return "done as a task"

    return server


def load_executor(spec: str) -> Any:
    """The executor ``--executor`` names: ``celery:MODULE`` is the ``executor`` of
    a Celery app module (imported from the current directory, as ``celery -A`` does).
    """
    kind, _, module_name = spec.partition(":")
    if kind != "celery" or not module_name:
        raise ValueError(f"--executor must be celery:MODULE, not {spec!r}")
    sys.path.insert(0, str(Path.cwd()))
    module = importlib.import_module(module_name)
    return module.executor


def main() -> None:
    """Parse the command line and serve."""
    parser = argparse.ArgumentParser(description=str(__doc__).splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", default="mcp-tasks.sqlite3")
    parser.add_argument("--memory", action="store_true", help="keep tasks in memory")
    parser.add_argument(
        "--redis", metavar="URL", help="keep tasks in Redis, shared by replicas"
    )
    parser.add_argument(
        "--executor",
        metavar="celery:MODULE",
        help="run the tools on Celery workers of the app in MODULE (needs --redis)",
    )
    add_limit_options(parser, Limits, LIMITS)
    options = parser.parse_args()
    try:
        limits = limits_from(options, Limits)
    except ValueError as error:
        parser.error(str(error))
    executor = None
    if options.executor:
        if not options.redis:
            parser.error("--executor needs --redis (the workers share the task store)")
        try:
            executor = load_executor(options.executor)
        except (ValueError, ImportError, AttributeError) as error:
            parser.error(f"--executor: {error}")
    if options.redis:
        # the store warns at start when Redis would lose acknowledged tasks (its
        # persistence settings), and logs the start and end of each Redis outage
        logging.basicConfig(
            level=logging.INFO, format="%(levelname)s %(name)s: %(message)s"
        )
    server = build_server(
        None if options.memory else options.db,
        redis_url=options.redis,
        limits=limits,
        executor=executor,
    )
    serve(server, options.host, options.port)


if __name__ == "__main__":
    main()
