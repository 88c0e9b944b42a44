"""Crash and restart with the SQLite store: ``kill -9`` mid-task, restart on the same
file.

Every task created before the crash is still answerable; a task whose worker died is
``failed`` with a clear error; finished tasks keep their results until their TTL.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.procs import free_port

from .conftest import example_server, ext_message, message_2025, result_of

EXT_HEADERS = {"accept": "application/json, text/event-stream"}


def ext_call(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One extension request over HTTP; returns the result."""
    headers = {**EXT_HEADERS, "mcp-method": method}
    if "taskId" in params:
        headers["mcp-name"] = params["taskId"]
    response = httpx.post(
        url, json=ext_message(method, params), headers=headers, timeout=10
    )
    return result_of(response.json())


def wait_status(url: str, task_id: str, status: str) -> dict[str, Any]:
    """Poll ``tasks/get`` until ``status``."""
    deadline = time.monotonic() + 10
    while True:
        task = ext_call(url, "tasks/get", {"taskId": task_id})
        if task["status"] == status:
            return task
        assert time.monotonic() < deadline, task
        time.sleep(0.05)


def test_d2_crash_and_restart_keeps_every_task_answerable(tmp_path: Path) -> None:
    db = str(tmp_path / "tasks.sqlite3")
    port = free_port()
    with example_server("server_ext", "--db", db, port=port) as server:
        done = ext_call(
            server.url,
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 0, "label": "before"}},
        )
        wait_status(server.url, done["taskId"], "completed")
        running = ext_call(
            server.url,
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 60}},
        )
        asking = ext_call(
            server.url,
            "tools/call",
            {"name": "confirm_delete", "arguments": {"filename": "f"}},
        )
        wait_status(server.url, asking["taskId"], "input_required")
        server.kill9()
    with example_server("server_ext", "--db", db, port=port) as server:
        orphan = ext_call(server.url, "tasks/get", {"taskId": running["taskId"]})
        waiting = ext_call(server.url, "tasks/get", {"taskId": asking["taskId"]})
        finished = ext_call(server.url, "tasks/get", {"taskId": done["taskId"]})
    for task in (orphan, waiting):
        assert task["status"] == "failed"
        assert task["error"]["code"] == -32603
        assert "worker stopped unexpectedly" in task["error"]["message"]
        assert "inputRequests" not in task
    assert finished["status"] == "completed"
    assert finished["result"]["content"][0]["text"] == "computed before after 0.0s"


def test_d1_crash_and_restart_keeps_every_task_answerable(tmp_path: Path) -> None:
    db = str(tmp_path / "tasks.sqlite3")
    port = free_port()

    def session(url: str) -> httpx.Client:
        client = httpx.Client(
            timeout=10, headers={"accept": "application/json, text/event-stream"}
        )
        response = client.post(
            url,
            json=message_2025(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            ),
        )
        client.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        return client

    with example_server("server_2025", "--db", db, port=port) as server:
        client = session(server.url)
        try:
            created = result_of(
                client.post(
                    server.url,
                    json=message_2025(
                        "tools/call",
                        {
                            "name": "slow_compute",
                            "arguments": {"seconds": 60},
                            "task": {},
                        },
                    ),
                ).json()
            )
        finally:
            client.close()
        server.kill9()
    task_id = created["task"]["taskId"]
    with example_server("server_2025", "--db", db, port=port) as server:
        client = session(server.url)
        try:
            task = result_of(
                client.post(
                    server.url, json=message_2025("tasks/get", {"taskId": task_id})
                ).json()
            )
            replay = client.post(
                server.url, json=message_2025("tasks/result", {"taskId": task_id})
            ).json()
        finally:
            client.close()
    assert task["status"] == "failed"
    assert "worker stopped unexpectedly" in task["statusMessage"]
    assert replay["error"]["code"] == -32603
