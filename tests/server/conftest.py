"""Fixtures for the generated server skeletons (``server.py``, ``stores.py``,
``asgi.py``).

In-process tests drive ``TasksServer.handle`` directly with parsed JSON-RPC messages;
the HTTP and interop tests start the example servers in ``examples/`` as real
processes on 127.0.0.1.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.procs import ServerHandle, free_port, run_server

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

EXT = "io.modelcontextprotocol/tasks"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_VERSION = "io.modelcontextprotocol/protocolVersion"


def ext_message(
    method: str,
    params: dict[str, Any] | None = None,
    *,
    request_id: int | str = 1,
    declare: bool = True,
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A 2026-07-28 request with the required per-request ``_meta``.

    ``declare`` adds the Tasks extension (and elicitation) to the client capabilities
    unless ``capabilities`` gives them explicitly.
    """
    caps = capabilities
    if caps is None:
        caps = {"elicitation": {}, "extensions": {EXT: {}}} if declare else {}
    body = dict(params or {})
    body["_meta"] = {META_VERSION: "2026-07-28", META_CAPS: caps}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body}


def message_2025(
    method: str, params: dict[str, Any] | None = None, *, request_id: int | str = 1
) -> dict[str, Any]:
    """A 2025-11-25 request."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def result_of(response: dict[str, Any] | None) -> dict[str, Any]:
    """The ``result`` of a response, failing the test on an error response."""
    assert response is not None
    assert "error" not in response, response
    result: dict[str, Any] = response["result"]
    return result


def error_of(response: dict[str, Any] | None) -> dict[str, Any]:
    """The ``error`` of a response, failing the test on a success response."""
    assert response is not None
    assert "error" in response, response
    error: dict[str, Any] = response["error"]
    return error


@contextmanager
def example_server(
    name: str, *args: str, port: int | None = None
) -> Iterator[ServerHandle]:
    """Run ``examples/<name>.py --host 127.0.0.1 --port PORT *args`` as a real
    process."""
    port = port if port is not None else free_port()
    cmd = [
        sys.executable,
        str(EXAMPLES / f"{name}.py"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *args,
    ]
    with run_server(cmd, port, url_path="/mcp", timeout=30) as handle:
        yield handle
