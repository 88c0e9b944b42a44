"""The example 2025-11-25 Tasks server hosted inside the official Python SDK (``mcp``
1.x).

Same tools as ``server_2025.py``; the SDK's low-level ``Server`` and its
``StreamableHTTPSessionManager`` serve streamable HTTP (endpoint ``/mcp/``) and
``TasksServer.mount`` plugs the generated skeleton into it. Run it with an interpreter
that has ``mcp==1.30.0`` installed, for example the mcp1 peer virtualenv::

    $MCPTASKS_PEERS/venv-mcp1/bin/python examples/server_2025_mcp1.py --host 127.0.0.1
    --port 8000
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import AsyncGenerator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import uvicorn  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.server.streamable_http_manager import (
    StreamableHTTPSessionManager,
)  # noqa: E402
from server_2025 import build_server  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.routing import Mount  # noqa: E402

# mcp 1.x marks its Tasks types experimental and deprecated; they are what this serves
warnings.filterwarnings("ignore", category=DeprecationWarning)


def main() -> None:
    """Parse the command line and serve."""
    parser = argparse.ArgumentParser(description=str(__doc__).splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", default="mcp-tasks-2025.sqlite3")
    parser.add_argument("--memory", action="store_true", help="keep tasks in memory")
    options = parser.parse_args()
    tasks = build_server(None if options.memory else options.db)
    sdk_server: Server = Server("mcptasks-example-2025-mcp1", version="1.0.0")
    tasks.mount(sdk_server)
    manager = StreamableHTTPSessionManager(app=sdk_server)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncGenerator[None, None]:
        async with tasks, manager.run():
            yield

    app = Starlette(
        routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan
    )
    uvicorn.run(app, host=options.host, port=options.port, log_level="warning")


if __name__ == "__main__":
    main()
