"""``serve()`` of the extension package with small bounds, for the slow-client tests.

Run as ``python tests/support/bounded_server.py PORT MAX_CONNECTIONS HEADER_S BODY_S
[NOFILE]`` (``none`` turns a bound off; ``NOFILE`` lowers the process's soft limit of
open file descriptors first). The server keeps its tasks in memory and has one tool,
``greet``.
"""

from __future__ import annotations

import logging
import resource
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))

from mcp_tasks_ext.asgi import serve  # noqa: E402
from mcp_tasks_ext.server import TasksServer, ToolContext  # noqa: E402
from mcp_tasks_ext.stores import InMemoryTaskStore  # noqa: E402


def _bound(text: str) -> float | None:
    return None if text == "none" else float(text)


def main() -> None:
    """Parse the command line and serve until killed."""
    port, connections, header_s, body_s = sys.argv[1:5]
    if len(sys.argv) > 5:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[5]), hard))
    logging.basicConfig(
        level=logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    server = TasksServer("bounded", store=InMemoryTaskStore())

    @server.tool(task_support="forbidden")
    async def greet(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        return "hello"

    serve(
        server,
        "127.0.0.1",
        int(port),
        max_connections=None if connections == "none" else int(connections),
        header_timeout_s=_bound(header_s),
        body_timeout_s=_bound(body_s),
    )


if __name__ == "__main__":
    main()
