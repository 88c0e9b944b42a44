"""Issue 9, server items 1 and 4-7 over HTTP: hostile input and cross-session abuse.

These run ``examples/server_2025.py`` as a real process (its principal is the
``Authorization`` header value) and talk raw HTTP to it; items 2, 3, 5, 6 and 22 in
process are in ``tests/unit/server/test_hardening.py``. Hostile input must never yield
HTTP 500 or a traceback in the log.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.procs import ServerHandle
from tests.support.servers import (
    example_server,
    initialize,
    message_2025,
    no_traceback,
    result_of,
)

pytestmark = pytest.mark.anyio


def strict_json(text: str) -> Any:
    """Parse ``text`` as JSON proper (no NaN or Infinity)."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def server_2025_http() -> Iterator[ServerHandle]:
    with example_server("server_2025", "--memory") as handle:
        yield handle


@pytest.fixture()
def server_2025_sqlite(tmp_path: Path) -> Iterator[ServerHandle]:
    with example_server("server_2025", "--db", str(tmp_path / "t.db")) as handle:
        yield handle


async def sse_messages(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            yield strict_json(line[6:])


async def forge_replies(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], ids: list[Any]
) -> None:
    """Post accepting answers with every id in ``ids`` in another principal's
    session."""
    for request_id in ids:
        forged = await client.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {"action": "accept", "content": {"confirm": True}},
            },
            headers=headers,
        )
        assert forged.status_code < 500


# -- item 1: side-request replies are bound to their session and principal -------------


async def test_other_principal_cannot_answer_a_task_elicitation(
    server_2025_http: ServerHandle,
) -> None:
    """Issue 9, item 1: other principal cannot answer a task elicitation."""
    url = server_2025_http.url
    async with httpx.AsyncClient(timeout=20) as client:
        alice = await initialize(client, url, "Bearer A")
        bob = await initialize(client, url, "Bearer B")
        created = await client.post(
            url,
            json=message_2025(
                "tools/call",
                {
                    "name": "confirm_delete",
                    "arguments": {"filename": "A-secret.txt"},
                    "task": {"ttl": 60000},
                },
            ),
            headers=alice,
        )
        task_id = result_of(created.json())["task"]["taskId"]
        async with client.stream(
            "POST",
            url,
            json=message_2025("tasks/result", {"taskId": task_id}, request_id=2),
            headers=alice,
        ) as stream:
            messages = sse_messages(stream)
            request = await anext(messages)
            assert request["method"] == "elicitation/create"
            # B tries sequential ids and even the real one
            await forge_replies(client, url, bob, [*range(1, 200), request["id"]])
            # a reply from A's principal through another session is not A's answer
            # either
            alice_again = await initialize(client, url, "Bearer A")
            await forge_replies(client, url, alice_again, [request["id"]])
            answered = await client.post(
                url,
                json={
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"action": "decline"},
                },
                headers=alice,
            )
            assert answered.status_code == 202
            final = [m async for m in messages][-1]
    text = result_of(final)["content"][0]["text"]
    assert text == "kept A-secret.txt (decline)"
    no_traceback(server_2025_http)


async def test_other_principal_cannot_answer_a_synchronous_side_request(
    server_2025_http: ServerHandle,
) -> None:
    """Issue 9, item 1: other principal cannot answer a synchronous side request."""
    url = server_2025_http.url
    async with httpx.AsyncClient(timeout=20) as client:
        alice = await initialize(client, url, "Bearer A")
        bob = await initialize(client, url, "Bearer B")
        async with client.stream(
            "POST",
            url,
            json=message_2025(
                "tools/call",
                {"name": "confirm_delete", "arguments": {"filename": "A-secret.txt"}},
            ),
            headers=alice,
        ) as stream:
            messages = sse_messages(stream)
            request = await anext(messages)
            assert request["method"] == "elicitation/create"
            assert isinstance(request["id"], str) and len(request["id"]) >= 22
            await forge_replies(client, url, bob, [*range(1, 200), request["id"]])
            answered = await client.post(
                url,
                json={
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"action": "decline"},
                },
                headers=alice,
            )
            assert answered.status_code == 202
            final = [m async for m in messages][-1]
    assert result_of(final)["content"][0]["text"] == "kept A-secret.txt (decline)"
    no_traceback(server_2025_http)


# -- items 4, 5 and 7: bad JSON, numbers and ids over HTTP -----------------------------


async def post_raw(
    client: httpx.AsyncClient, url: str, body: str, headers: dict[str, str]
) -> tuple[int, Any]:
    response = await client.post(
        url,
        content=body.encode(),
        headers={**headers, "content-type": "application/json"},
    )
    return response.status_code, strict_json(response.text) if response.text else None


async def test_deeply_nested_json_is_a_parse_error(
    server_2025_http: ServerHandle,
) -> None:
    """Issue 9, item 4: deeply nested json is a parse error."""
    url = server_2025_http.url
    async with httpx.AsyncClient(timeout=20) as client:
        headers = await initialize(client, url)
        bodies = [
            "[" * 100_000 + "]" * 100_000,
            '{"jsonrpc":"2.0","method":"ping","id":' + "[" * 2000 + "]" * 2000 + "}",
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet",'
            '"arguments":{"a":' + '{"b":' * 2000 + "1" + "}" * 2000 + "}}}",
        ]
        for body in bodies:
            status, answer = await post_raw(client, url, body, headers)
            assert status == 400, body[:80]
            assert answer["error"]["code"] == -32700 and answer["id"] is None
        # moderately nested input still works
        nested = (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"x":'
            + "[" * 100
            + "]" * 100
            + "}}}"
        )
        status, answer = await post_raw(client, url, nested, headers)
        assert status == 200 and "result" in answer
    no_traceback(server_2025_http)


@pytest.mark.parametrize(
    "ttl", ["1e400", "-1e400", "Infinity", "NaN", "true", "-1", '"5"']
)
async def test_bad_task_ttl_is_invalid_params(
    server_2025_http: ServerHandle, ttl: str
) -> None:
    """Issue 9, item 5: bad task ttl is invalid params."""
    url = server_2025_http.url
    async with httpx.AsyncClient(timeout=20) as client:
        headers = await initialize(client, url)
        body = (
            '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":'
            '"slow_compute","arguments":{},"task":{"ttl":' + ttl + "}}}"
        )
        status, answer = await post_raw(client, url, body, headers)
    assert status < 500
    assert answer["id"] == 5 and answer["error"]["code"] == -32602, answer
    no_traceback(server_2025_http)


@pytest.mark.parametrize(
    "request_id", ["1e400", "NaN", "Infinity", "{}", "[]", "true", "1.5", "null"]
)
async def test_invalid_ids_are_invalid_requests(
    server_2025_http: ServerHandle, request_id: str
) -> None:
    """Issue 9, item 7: invalid ids are invalid requests."""
    url = server_2025_http.url
    async with httpx.AsyncClient(timeout=20) as client:
        headers = await initialize(client, url)
        body = '{"jsonrpc":"2.0","id":' + request_id + ',"method":"ping"}'
        status, answer = await post_raw(client, url, body, headers)
    assert status == 400
    assert answer["id"] is None and answer["error"]["code"] == -32600, answer
    no_traceback(server_2025_http)


async def test_message_with_only_an_id_is_an_invalid_request(
    server_2025_http: ServerHandle,
) -> None:
    """Issue 9, item 7: message with only an id is an invalid request."""
    url = server_2025_http.url
    async with httpx.AsyncClient(timeout=20) as client:
        headers = await initialize(client, url)
        status, answer = await post_raw(
            client, url, '{"jsonrpc":"2.0","id":7}', headers
        )
        good = await post_raw(
            client, url, '{"jsonrpc":"2.0","id":"s-1","method":"ping"}', headers
        )
        numbered = await post_raw(
            client, url, '{"jsonrpc":"2.0","id":-3,"method":"ping"}', headers
        )
        nan_args = await post_raw(
            client,
            url,
            '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"greet",'
            '"arguments":{"name":NaN}}}',
            headers,
        )
    assert status == 400 and answer["error"]["code"] == -32600 and answer["id"] is None
    assert good[1] == {"jsonrpc": "2.0", "id": "s-1", "result": {}}
    assert numbered[1]["id"] == -3 and "result" in numbered[1]
    assert nan_args[1]["id"] == 8 and nan_args[1]["error"]["code"] == -32602
    no_traceback(server_2025_http)


# -- item 6: lone surrogates -----------------------------------------------------------


async def test_lone_surrogate_task_id_on_sqlite_is_invalid_params(
    server_2025_sqlite: ServerHandle,
) -> None:
    """Issue 9, item 6: lone surrogate task id on sqlite is invalid params."""
    url = server_2025_sqlite.url
    async with httpx.AsyncClient(timeout=20) as client:
        headers = await initialize(client, url)
        answers = [
            await post_raw(
                client,
                url,
                '{"jsonrpc":"2.0","id":1,"method":"'
                + method
                + '","params":{"taskId":"\\ud800"}}',
                headers,
            )
            for method in ("tasks/get", "tasks/result", "tasks/cancel")
        ]
    for status, answer in answers:
        assert status < 500 and answer["error"]["code"] == -32602, answer
    no_traceback(server_2025_sqlite)
