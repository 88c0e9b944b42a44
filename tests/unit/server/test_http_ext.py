"""The Tasks extension's HTTP routing headers (SEP-2243), in process: strict and
lenient servers, and non-ASCII values in the base64 form.

``tests/integration/server/test_http_ext.py`` runs the HTTP edge against a real
``examples/server_ext.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_tasks_ext.server import RequestInfo, TasksServer, ToolContext
from mcp_tasks_ext.stores import InMemoryTaskStore
from tests.support.servers import (
    error_of,
    ext_message,
    headers_for,
    result_of,
)

pytestmark = pytest.mark.anyio


async def test_strict_and_lenient_routing_headers() -> None:
    """Digest D.2.18: ``require_routing_headers=True`` also refuses ``tasks/*``
    without ``Mcp-Name``; ``False`` (clients older than SEP-2243) serves requests
    without headers, but still refuses headers that do not match the body."""
    strict = TasksServer(
        "strict", store=InMemoryTaskStore(), require_routing_headers=True
    )
    lenient = TasksServer(
        "lenient", store=InMemoryTaskStore(), require_routing_headers=False
    )
    for server in (strict, lenient):

        @server.tool()
        async def noop(ctx: ToolContext, arguments: dict[str, Any]) -> str:
            return "ok"

    def info(message: dict[str, Any], **drop: bool) -> RequestInfo:
        headers = headers_for(message)
        for name in drop:
            del headers[name.replace("_", "-")]
        return RequestInfo(headers=headers)

    async with strict, lenient:
        call = ext_message("tools/call", {"name": "noop"})
        created = result_of(await strict.handle(call, info(call)))
        get = ext_message("tasks/get", {"taskId": created["taskId"]})
        no_name = await strict.handle(get, info(get, mcp_name=True))
        named = await strict.handle(get, info(get))

        bare = await lenient.handle(
            ext_message("tools/call", {"name": "noop"}), RequestInfo(headers={})
        )
        wrong = await lenient.handle(
            ext_message("tools/list"), RequestInfo(headers={"mcp-method": "ping"})
        )
    assert error_of(no_name)["code"] == -32020
    assert result_of(named)["taskId"] == created["taskId"]
    assert "taskId" in result_of(bare)
    assert error_of(wrong)["code"] == -32020


async def test_non_ascii_base64_routing_header_is_a_mismatch() -> None:
    """Digest D.2.18: A ``=?base64?...?=`` header with non-ASCII text (a latin-1
    header byte) is ``-32020`` (HTTP 400), not an internal error with a traceback."""
    server = TasksServer("hostile", store=InMemoryTaskStore())
    async with server:
        for value in ("=?base64?\xe9?=", "=?base64?\xff\xfe?="):
            response = await server.handle(
                ext_message("ping"), RequestInfo(headers={"mcp-method": value})
            )
            assert error_of(response)["code"] == -32020, response
    assert server.http_status(-32020) == 400
