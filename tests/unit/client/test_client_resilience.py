"""Transient failures while waiting, and HTTP errors that answer no request (issue 9,
items 19-20)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import mcp_tasks_ext.transport as ext
from mcp_tasks_ext.client import WaitTimeout
from mcp_tasks_ext.client.dispatch import Dispatcher
from mcp_tasks_ext.transport import TransportError
from tests.support.fakes import TEXT_RESULT, FakeClock, run, task_ext
from tests.support.waiting import until

from .test_client_ext import Server, make
from .test_http_transport import URL, Recorder


class Flaky(Server):
    """A server whose first ``failures`` polls break off in the transport."""

    def __init__(self, failures: int, **options: Any) -> None:
        super().__init__(**options)
        self.failures = failures

    async def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tasks/get" and self.failures:
            self.failures -= 1
            raise TransportError("connection reset")
        return await super().__call__(method, params)


def test_failed_polls_are_retried_with_backoff() -> None:
    async def scenario() -> None:
        gets = [task_ext("completed", result=TEXT_RESULT)]
        client, peer, clock = make(Flaky(3, gets=gets))
        assert (await client.call_tool("job")).raw["content"] == TEXT_RESULT["content"]
        assert len(peer.of("tasks/get")) == 4
        assert clock.sleeps == [0.5, 0.5, 1.0, 2.0]

    run(scenario())


def test_persistent_transport_failure_ends_the_wait() -> None:
    async def scenario() -> None:
        client, peer, _ = make(Flaky(100), transport_retries=2)
        with pytest.raises(TransportError):
            await client.call_tool("job")
        assert len(peer.of("tasks/get")) == 3

    run(scenario())


def test_retries_stay_within_the_overall_timeout() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client, _, _ = make(Flaky(100), clock, transport_retries=50)
        with pytest.raises(WaitTimeout):
            await client.call_tool("job", timeout=10)
        assert clock.now <= 10

    run(scenario())


def test_http_400_shows_the_json_rpc_error_of_its_body_and_hints_at_the_revision() -> (
    None
):
    body = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Bad Request: Missing session ID"},
    }
    recorder = Recorder(lambda m, r: httpx.Response(400, json=body))

    async def scenario() -> None:
        transport = ext.HttpTransport(URL, http_client=recorder.client())
        transport.use_stateless("2026-07-28")
        with pytest.raises(TransportError) as caught:
            await transport.request(1, "tasks/get", {"taskId": "x"})
        text = str(caught.value)
        assert "-32600" in text and "Missing session ID" in text
        assert "2026-07-28" in text and "another revision" in text

    run(scenario())


def test_an_answer_that_cannot_be_delivered_is_not_reported_as_never_retrieved() -> (
    None
):
    import asyncio
    import gc

    reported: list[dict[str, Any]] = []

    async def scenario() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, context: reported.append(context)
        )

        async def reply(message: dict[str, Any]) -> None:
            raise TransportError("the connection is closed")

        dispatcher = Dispatcher(reply)
        assert await dispatcher.route(
            {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {}}
        )
        await until(lambda: not dispatcher.background, interval=0, what="answered")
        gc.collect()

    run(scenario())
    gc.collect()
    assert not [c for c in reported if "never retrieved" in str(c.get("message"))]
