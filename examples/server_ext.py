"""Example Tasks-extension server (MCP 2026-07-28 + io.modelcontextprotocol/tasks).

Run from the repository root::

    .venv/bin/python examples/server_ext.py --host 127.0.0.1 --port 8000

and point a client at ``http://127.0.0.1:8000/mcp``. Tasks are kept in a SQLite file
(``--db``, default ``mcp-tasks-ext.sqlite3``), in memory (``--memory``), or in Redis
(``--redis redis://127.0.0.1:6379/0``), where several replicas of this server share
them; ``--lease-s`` (or ``--lease-seconds``) sets the worker lease that bounds how long
a task whose replica died stays unfinished. Every field of ``Limits`` has an option
named after it (``--max-active-tasks N``, ``--max-finished-tasks N``, ``--max-tasks N``,
...; ``--help`` lists them). The same server hosted in the official Python SDK (``mcp``
2.x) is ``examples/server_ext_mcp2.py``.

Tools: those of ``examples/example_tools.py`` (the conformance suite's fixtures,
``long_report``, ``ask_name``, ``weather`` and the typed ``brew``), shared with the
server of both revisions, ``examples/server.py``. Each task belongs to the caller's
``Authorization`` header value ("anonymous" when there is none).
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from example_tools import add_tools, principal  # noqa: E402
from limit_options import add_limit_options, limits_from  # noqa: E402

from mcp_tasks_ext.asgi import serve  # noqa: E402
from mcp_tasks_ext.redis_store import RedisTaskStore  # noqa: E402
from mcp_tasks_ext.server import (  # noqa: E402
    JsonRpcError,
    Limits,
    TasksServer,
    ToolError,
)
from mcp_tasks_ext.stores import (  # noqa: E402
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
) -> TasksServer:
    """The example server with every tool registered.

    ``redis_url`` (which wins over ``store_path``) keeps the tasks in Redis; None for
    ``store_path`` keeps them in memory. The limits are ``LIMITS`` with ``lease_s``,
    or ``limits`` when given.
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
        limits=limits or replace(LIMITS, lease_s=lease_s),
        authenticate=principal,
    )

    add_tools(server, ToolError, JsonRpcError)
    return server


def main() -> None:
    """Parse the command line and serve."""
    parser = argparse.ArgumentParser(description=str(__doc__).splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", default="mcp-tasks-ext.sqlite3")
    parser.add_argument("--memory", action="store_true", help="keep tasks in memory")
    parser.add_argument(
        "--redis", metavar="URL", help="keep tasks in Redis, shared by replicas"
    )
    add_limit_options(parser, Limits, LIMITS)
    options = parser.parse_args()
    try:
        limits = limits_from(options, Limits)
    except ValueError as error:
        parser.error(str(error))
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
    )
    serve(server, options.host, options.port)


if __name__ == "__main__":
    main()
