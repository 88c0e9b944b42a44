"""The extension server over streamable HTTP: the example server as a real process.

Covers what only exists on HTTP: status codes of errors, the ``Mcp-Method`` /
``Mcp-Name`` routing headers (D.2.18), the ``subscriptions/listen`` SSE stream and the
transport limits.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcp_tasks_ext.server import RequestInfo, TasksServer, ToolContext
from mcp_tasks_ext.stores import InMemoryTaskStore
from tests.support.procs import ServerHandle

from .conftest import error_of, example_server, ext_message, result_of

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def ext_server() -> Iterator[ServerHandle]:
    """``examples/server_ext.py`` with an in-memory store."""
    with example_server("server_ext", "--memory") as handle:
        yield handle


def headers_for(message: dict[str, Any], **extra: str) -> dict[str, str]:
    """Headers a conforming client sends for ``message``."""
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-method": message["method"],
    }
    params = message.get("params", {})
    if "taskId" in params:
        headers["mcp-name"] = params["taskId"]
    elif message["method"] == "tools/call":
        headers["mcp-name"] = params["name"]
    headers.update(extra)
    return headers


async def post(
    url: str, message: dict[str, Any], headers: dict[str, str] | None = None
) -> httpx.Response:
    """POST one message."""
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.post(
            url,
            json=message,
            headers=headers if headers is not None else headers_for(message),
        )


async def test_d2_02_missing_meta_is_http_400(ext_server: ServerHandle) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = await post(ext_server.url, message)
    assert response.status_code == 400
    assert error_of(response.json())["code"] == -32602


async def test_d2_03_task_only_tool_without_extension_is_http_400(
    ext_server: ServerHandle,
) -> None:
    message = ext_message("tools/call", {"name": "failing_job"}, declare=False)
    response = await post(ext_server.url, message)
    assert response.status_code == 400
    error = error_of(response.json())
    assert error["code"] == -32021
    assert error["data"] == {
        "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
async def test_d2_16_removed_methods_are_http_404(
    ext_server: ServerHandle, method: str
) -> None:
    response = await post(
        ext_server.url,
        ext_message(method, {"taskId": "x"}),
        {"mcp-method": method, "mcp-name": "x"},
    )
    assert response.status_code == 404
    assert error_of(response.json())["code"] == -32601


async def test_d2_18_mismatched_method_header_is_32020(
    ext_server: ServerHandle,
) -> None:
    message = ext_message("tools/call", {"name": "greet", "arguments": {"name": "x"}})
    response = await post(
        ext_server.url, message, headers_for(message, **{"mcp-method": "tasks/get"})
    )
    assert response.status_code == 400
    assert error_of(response.json())["code"] == -32020


async def test_d2_18_mismatched_name_header_is_32020(ext_server: ServerHandle) -> None:
    created = result_of(
        (
            await post(
                ext_server.url,
                ext_message(
                    "tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}}
                ),
            )
        ).json()
    )
    message = ext_message("tasks/get", {"taskId": created["taskId"]})
    wrong = await post(
        ext_server.url, message, headers_for(message, **{"mcp-name": "another-task"})
    )
    assert wrong.status_code == 400 and error_of(wrong.json())["code"] == -32020
    encoded = "=?base64?" + base64.b64encode(created["taskId"].encode()).decode() + "?="
    sentinel = await post(
        ext_server.url, message, headers_for(message, **{"mcp-name": encoded})
    )
    assert (
        sentinel.status_code == 200
        and result_of(sentinel.json())["taskId"] == created["taskId"]
    )
    await post(
        ext_server.url, ext_message("tasks/cancel", {"taskId": created["taskId"]})
    )


async def test_d2_18_strict_mode_requires_routing_headers() -> None:
    server = TasksServer(
        "strict", store=InMemoryTaskStore(), require_routing_headers=True
    )

    @server.tool()
    async def noop(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        return "ok"

    async with server:
        created = result_of(
            await server.handle(
                ext_message("tools/call", {"name": "noop"}), RequestInfo(headers={})
            )
        )
        message = ext_message("tasks/get", {"taskId": created["taskId"]})
        missing = await server.handle(
            message, RequestInfo(headers={"mcp-method": "tasks/get"})
        )
        present = await server.handle(
            message,
            RequestInfo(
                headers={"mcp-method": "tasks/get", "mcp-name": created["taskId"]}
            ),
        )
    assert error_of(missing)["code"] == -32020
    assert result_of(present)["taskId"] == created["taskId"]


async def test_d2_05_get_right_after_create_over_http(ext_server: ServerHandle) -> None:
    created = result_of(
        (
            await post(
                ext_server.url,
                ext_message(
                    "tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}}
                ),
            )
        ).json()
    )
    got = await post(
        ext_server.url, ext_message("tasks/get", {"taskId": created["taskId"]})
    )
    assert got.status_code == 200 and result_of(got.json())["status"] == "working"
    unknown = await post(ext_server.url, ext_message("tasks/get", {"taskId": "nope"}))
    assert unknown.status_code == 400 and error_of(unknown.json())["code"] == -32602
    await post(
        ext_server.url, ext_message("tasks/cancel", {"taskId": created["taskId"]})
    )


async def test_d2_17_listen_streams_server_sent_events(
    ext_server: ServerHandle,
) -> None:
    created = result_of(
        (
            await post(
                ext_server.url,
                ext_message(
                    "tools/call",
                    {"name": "slow_compute", "arguments": {"seconds": 0.3}},
                ),
            )
        ).json()
    )
    listen = ext_message(
        "subscriptions/listen",
        {"notifications": {"taskIds": [created["taskId"]]}},
        request_id="sub-1",
    )
    events: list[dict[str, Any]] = []
    async with (
        httpx.AsyncClient(timeout=10) as client,
        client.stream(
            "POST", ext_server.url, json=listen, headers=headers_for(listen)
        ) as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
                if events[-1]["params"].get("status") == "completed":
                    break
    assert events[0]["method"] == "notifications/subscriptions/acknowledged"
    assert events[0]["params"]["notifications"]["taskIds"] == [created["taskId"]]
    assert all(
        e["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "sub-1"}
        for e in events
    )
    assert events[-1]["method"] == "notifications/tasks"
    assert events[-1]["params"]["result"]["content"][0]["text"].startswith("computed")


async def test_transport_limits_and_malformed_requests(
    ext_server: ServerHandle,
) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        huge = await client.post(
            ext_server.url,
            content=b"x" * (5 * 1024 * 1024),
            headers={"content-type": "application/json"},
        )
        parse = await client.post(
            ext_server.url,
            content=b"{not json",
            headers={"content-type": "application/json"},
        )
        batch = await client.post(ext_server.url, json=[ext_message("ping")])
        origin = await client.post(
            ext_server.url,
            json=ext_message("ping"),
            headers={"origin": "http://evil.example", "mcp-method": "ping"},
        )
        local = await client.post(
            ext_server.url,
            json=ext_message("ping"),
            headers={"origin": "http://localhost:3000", "mcp-method": "ping"},
        )
        get = await client.get(ext_server.url)
        notification = await client.post(
            ext_server.url,
            json={"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}},
        )
        other_path = await client.post(
            ext_server.base_url + "/elsewhere", json=ext_message("ping")
        )
    assert huge.status_code == 413
    assert parse.status_code == 400 and parse.json()["error"]["code"] == -32700
    assert batch.status_code == 400
    assert origin.status_code == 403
    assert local.status_code == 200
    assert get.status_code == 405
    assert notification.status_code == 202
    assert other_path.status_code == 404


async def test_d2_18_non_ascii_base64_routing_header_is_a_mismatch() -> None:
    """A ``=?base64?...?=`` header with non-ASCII text (a latin-1 header byte) is
    ``-32020`` (HTTP 400), not an internal error with a traceback."""
    server = TasksServer("hostile", store=InMemoryTaskStore())
    async with server:
        for value in ("=?base64?\xe9?=", "=?base64?\xff\xfe?="):
            response = await server.handle(
                ext_message("ping"), RequestInfo(headers={"mcp-method": value})
            )
            assert error_of(response)["code"] == -32020, response
    assert server.http_status(-32020) == 400
