"""Helpers for the server tests: JSON-RPC messages for both revisions, the headers a
conforming client sends, and the example servers of ``examples/`` run as real processes
on 127.0.0.1.

In-process tests drive ``TasksServer.handle`` directly with parsed JSON-RPC messages;
the HTTP and interop tests start the example servers with :func:`example_server`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.procs import ServerHandle, free_port, run_server

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

EXT = "io.modelcontextprotocol/tasks"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
ACCEPT = {"accept": "application/json, text/event-stream"}


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


def headers_for(message: dict[str, Any], **extra: str) -> dict[str, str]:
    """Headers a conforming client sends for ``message``."""
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-method": message["method"],
    }
    params = message.get("params", {})
    version = params.get("_meta", {}).get(META_VERSION)
    if isinstance(version, str):
        headers["mcp-protocol-version"] = version
    if "taskId" in params:
        headers["mcp-name"] = params["taskId"]
    elif message["method"] == "tools/call":
        headers["mcp-name"] = params["name"]
    headers.update(extra)
    return headers


def no_traceback(handle: ServerHandle) -> None:
    """Fail the test if the server's log shows a traceback."""
    tail = handle.log_tail(400)
    assert "Traceback" not in tail, tail


async def initialize(
    client: httpx.AsyncClient, url: str, authorization: str | None = None
) -> dict[str, str]:
    """Open a 2025-11-25 session over HTTP; the headers of the requests that follow."""
    auth = {} if authorization is None else {"authorization": authorization}
    response = await client.post(
        url,
        json=message_2025(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        ),
        headers={**ACCEPT, **auth},
    )
    assert response.status_code == 200, response.text
    return {
        **ACCEPT,
        **auth,
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
