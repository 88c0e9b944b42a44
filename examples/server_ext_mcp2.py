"""The example Tasks-extension server hosted inside the official Python SDK (``mcp``
2.x).

Same tools as ``server_ext.py``; the SDK's low-level ``Server`` serves streamable HTTP
(stateless, JSON responses) and ``TasksServer.mount`` plugs the generated skeleton into
it. Run it with an interpreter that has ``mcp>=2.3`` and ``uvicorn`` installed, for
example the fastmcp peer virtualenv::

    $MCPTASKS_PEERS/venv-fastmcp/bin/python examples/server_ext_mcp2.py --host 127.0.0.1
    --port 8000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import uvicorn  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from server_ext import build_server  # noqa: E402


def main() -> None:
    """Parse the command line and serve."""
    parser = argparse.ArgumentParser(description=str(__doc__).splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", default="mcp-tasks-ext.sqlite3")
    parser.add_argument("--memory", action="store_true", help="keep tasks in memory")
    options = parser.parse_args()
    sdk_server: Server = Server("mcptasks-example-ext-mcp2", version="1.0.0")
    build_server(None if options.memory else options.db).mount(sdk_server)
    app = sdk_server.streamable_http_app(json_response=True, stateless_http=True)
    uvicorn.run(app, host=options.host, port=options.port, log_level="warning")


if __name__ == "__main__":
    main()
