"""A client pinned to one revision against a real server of the other says so.

The extension client against ``examples/server_2025.py`` gets HTTP 400 "Missing
Mcp-Session-Id header" with a hint that the server may speak another revision; the
2025-11-25 client against ``examples/server_ext.py`` (its ``initialize`` refused for the
missing routing headers, or for the missing per-request ``_meta``) gets the same hint,
whether it is the single-revision package's client or the dual package's client pinned
to 2025-11-25.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcp_tasks.client import TasksClient as DualClient
from mcp_tasks.transport import JsonRpcError as DualJsonRpcError
from mcp_tasks_2025_11_25.client import TasksClient as Client2025
from mcp_tasks_2025_11_25.transport import HttpTransport as Http2025
from mcp_tasks_2025_11_25.transport import JsonRpcError
from mcp_tasks_ext.client import TasksClient as ClientExt
from mcp_tasks_ext.transport import HttpTransport as HttpExt
from mcp_tasks_ext.transport import TransportError
from tests.support.fakes import run
from tests.support.procs import ServerHandle
from tests.support.servers import example_server

HINT = "the server may speak another revision: use the package generated for that one"


@pytest.fixture(scope="module")
def ext_server() -> Iterator[ServerHandle]:
    """``examples/server_ext.py`` (the Tasks extension) with an in-memory store."""
    with example_server("server_ext", "--memory") as handle:
        yield handle


def test_the_2025_client_against_an_extension_server_gets_the_revision_hint(
    ext_server: ServerHandle,
) -> None:
    async def connect() -> None:
        async with Client2025(Http2025(ext_server.url)) as client:
            await client.call_tool("greet", {"name": "x"})

    with pytest.raises(JsonRpcError) as refused:
        run(connect())
    assert refused.value.code == -32020, refused.value
    assert "this client speaks MCP 2025-11-25" in str(refused.value)
    assert HINT in str(refused.value)


def test_the_dual_client_pinned_to_2025_gets_the_revision_hint(
    ext_server: ServerHandle,
) -> None:
    async def connect() -> None:
        async with DualClient(ext_server.url, revision="2025-11-25") as client:
            await client.call_tool("greet", {"name": "x"})

    with pytest.raises(DualJsonRpcError) as refused:
        run(connect())
    assert refused.value.code == -32020, refused.value
    assert "this client speaks MCP 2025-11-25" in str(refused.value)
    assert HINT in str(refused.value)


def test_the_extension_client_against_a_2025_server_gets_the_same_hint() -> None:
    async def call(url: str) -> None:
        async with ClientExt(HttpExt(url)) as client:
            await client.call_tool("greet", {"name": "x"})

    with (
        example_server("server_2025", "--memory") as server,
        pytest.raises(TransportError) as refused,
    ):
        run(call(server.url))
    assert "this client speaks MCP 2026-07-28" in str(refused.value)
    assert HINT in str(refused.value)
