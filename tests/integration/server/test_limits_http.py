"""Task limits under concurrent creates, through the example servers over real HTTP.

Each test runs an example server as a real process, with its limits set by the command
line options generated from ``Limits`` (``--max-active-tasks 5``, ...), and sends 60
``tools/call`` requests at once. The limits are checked by the store in the same
atomic step as the create, so exactly as many tasks as the limit allows are created,
whichever store holds them, and every refusal is a limit error with HTTP 429 (the
extension's status for ``LIMIT_EXCEEDED``) rather than 200.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_tasks_ext.server import Limits
from tests.support.procs import RedisHandle, start_redis
from tests.support.servers import (
    EXAMPLES,
    error_of,
    example_server,
    ext_message,
    result_of,
)
from tests.support.waiting import until

pytestmark = pytest.mark.anyio

RACERS = 60
ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisHandle]:
    """A private, in-memory redis-server for this module."""
    with start_redis() as handle:
        yield handle


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    """An extension ``tools/call`` asking for a task."""
    return ext_message("tools/call", {"name": tool, "arguments": arguments, "task": {}})


async def post(
    client: httpx.AsyncClient,
    url: str,
    message: dict[str, Any],
    principal: str = "alice",
) -> httpx.Response:
    """POST one extension request as ``principal`` (the example servers' owner is the
    ``Authorization`` header)."""
    params = message["params"]
    headers = {
        "accept": ACCEPT,
        "authorization": principal,
        "mcp-method": message["method"],
        "mcp-name": params.get("taskId") or params.get("name", ""),
        "mcp-protocol-version": "2026-07-28",
    }
    return await client.post(url, json=message, headers=headers)


async def burst(
    url: str, message: dict[str, Any], principals: list[str]
) -> tuple[list[dict[str, Any]], list[httpx.Response]]:
    """Send ``message`` once per principal, all at once; the created tasks and the
    refused responses."""
    limits = httpx.Limits(max_connections=len(principals))
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        responses = await asyncio.gather(
            *(post(client, url, message, who) for who in principals)
        )
    created = [result_of(r.json()) for r in responses if r.status_code == 200]
    refused = [r for r in responses if r.status_code != 200]
    return created, refused


def assert_limit_errors(refused: list[httpx.Response], text: str) -> None:
    """Every refusal is HTTP 429 with the limit error code and ``text``."""
    for response in refused:
        assert response.status_code == 429, response.text
        error = error_of(response.json())
        assert error["code"] == -32000
        assert text in error["message"], error


async def test_sixty_concurrent_creates_get_five_tasks_on_redis(
    redis_server: RedisHandle,
) -> None:
    """The security report's race (400 creates accepted against a limit of 100),
    scaled down, on the store shared by replicas."""
    with example_server(
        "server_ext", "--redis", redis_server.url, "--max-active-tasks", "5"
    ) as server:
        created, refused = await burst(
            server.url, call("slow_compute", seconds=600), ["alice"] * RACERS
        )
        assert len(created) == 5 and len(refused) == RACERS - 5
        assert all(task["status"] == "working" for task in created)
        assert_limit_errors(
            refused, "Too many unfinished tasks: 5 (limit 5 per principal)"
        )
        # bob has his own five
        created, _ = await burst(
            server.url, call("slow_compute", seconds=600), ["bob"] * 6
        )
        assert len(created) == 5


async def test_finished_tasks_never_pass_their_limit_on_sqlite(tmp_path: Path) -> None:
    """60 quick tasks at once against ``--max-finished-tasks 5``: five are created and
    finish; the unfinished ones counted as finished, no burst gets past the limit."""
    db = str(tmp_path / "tasks.sqlite3")
    with example_server(
        "server_ext", "--db", db, "--max-finished-tasks", "5"
    ) as server:
        created, refused = await burst(
            server.url, call("slow_compute", seconds=0), ["alice"] * RACERS
        )
        assert len(created) == 5 and len(refused) == RACERS - 5
        assert_limit_errors(refused, "Too many finished tasks kept: 5")
        async with httpx.AsyncClient(timeout=10) as client:

            async def all_completed() -> bool:
                for task in created:
                    got = message_for_get(task["taskId"])
                    state = result_of((await post(client, server.url, got)).json())
                    if state["status"] != "completed":
                        return False
                return True

            await until(all_completed, timeout=30, what="the five tasks completed")
            again = await post(client, server.url, call("slow_compute", seconds=0))
        assert_limit_errors([again], "Too many finished tasks kept: 5")


def message_for_get(task_id: str) -> dict[str, Any]:
    """An extension ``tasks/get``."""
    return ext_message("tasks/get", {"taskId": task_id})


async def test_rotating_principals_meet_the_store_wide_cap() -> None:
    """One principal per request gets past every per-principal limit, not the
    server-wide ``--max-tasks``."""
    with example_server("server_ext", "--memory", "--max-tasks", "5") as server:
        principals = [f"principal-{n}" for n in range(RACERS)]
        created, refused = await burst(
            server.url, call("slow_compute", seconds=600), principals
        )
    assert len(created) == 5 and len(refused) == RACERS - 5
    assert_limit_errors(refused, "The server holds too many tasks: 5 (limit 5")


async def test_limit_errors_are_429_with_any_limit_code_on_redis(
    redis_server: RedisHandle,
) -> None:
    """The dual server on Redis: a refused limit is 429 in the extension, also under
    a limit code of the operator's choosing; 2025-11-25 answers every JSON-RPC error
    with HTTP 200, limits included, since its clients (the official Python SDK 1.x)
    fail the whole session on any other status."""
    with example_server(
        "server",
        "--redis",
        redis_server.url,
        "--max-active-tasks",
        "1",
        "--limit-error-code",
        "-32099",
    ) as server:
        async with httpx.AsyncClient(timeout=10) as client:
            first = await post(client, server.url, call("slow_compute", seconds=600))
            second = await post(client, server.url, call("slow_compute", seconds=600))
            assert first.status_code == 200, first.text
            assert second.status_code == 429, second.text
            assert error_of(second.json())["code"] == -32099
            # the 2025-11-25 revision, through a session, as another principal
            opened = await client.post(
                server.url,
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                },
                headers={"accept": ACCEPT, "authorization": "carol"},
            )
            session = {
                "accept": ACCEPT,
                "authorization": "carol",
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            task_call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "slow_compute",
                    "arguments": {"seconds": 600},
                    "task": {},
                },
            }
            accepted = await client.post(server.url, json=task_call, headers=session)
            limited = await client.post(server.url, json=task_call, headers=session)
        assert "task" in result_of(accepted.json())
        assert limited.status_code == 200
        assert error_of(limited.json())["code"] == -32099


@pytest.mark.parametrize("example", ["server_2025", "server_ext", "server"])
def test_every_limits_field_has_an_option(example: str) -> None:
    """The options are generated from the ``Limits`` fields, so they stay in step."""
    shown = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{example}.py"), "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    for field in fields(Limits):
        assert "--" + field.name.replace("_", "-") + " " in shown, field.name
    assert "--lease-seconds" in shown  # the former spelling still works


def test_limit_options_build_the_limits() -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        from limit_options import add_limit_options, limits_from
    finally:
        sys.path.remove(str(EXAMPLES))
    import argparse

    parser = argparse.ArgumentParser()
    add_limit_options(parser, Limits, Limits(poll_interval_ms=200))
    options = parser.parse_args(
        ["--max-active-tasks", "5", "--max-tasks", "none", "--lease-seconds", "2.5"]
    )
    limits = limits_from(options, Limits)
    assert limits == Limits(
        poll_interval_ms=200, max_active_tasks=5, max_tasks=None, lease_s=2.5
    )
    assert limits_from(parser.parse_args([]), Limits) == Limits(poll_interval_ms=200)
