"""The dual client picks among the revisions it is given as a collection, however
many: ``server/discover`` answered means the stateless revision whose protocol version
the answer lists, refused the first revision with sessions. A third revision here is
the extension's client under another revision id and protocol version; the server is
``httpx.MockTransport``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

import httpx
import pytest

from mcp_tasks import api_2025, api_ext
from mcp_tasks.client import ClientCore, DualClient, forget_detected
from mcp_tasks.task_ids import MemoryTaskIdStore
from mcp_tasks.transport import HttpTransport
from tests.support.fakes import run

from .test_http_transport import Recorder, reply

LATER_VERSION = "2099-01-01"


class LaterClient(api_ext.TasksClient):
    """The extension's client as a later stateless revision would have it."""

    tables = dataclasses.replace(
        api_ext.TasksClient.tables,
        revision="ext-2099-01-01",
        protocol_version=LATER_VERSION,
    )


class ThreeRevisions(DualClient):
    """A dual client of three revisions: one with sessions, two stateless."""

    clients: ClassVar[Mapping[str, type[ClientCore[Any]]]] = {
        "2025-11-25": api_2025.TasksClient,
        api_ext.TasksClient.tables.revision: api_ext.TasksClient,
        LaterClient.tables.revision: LaterClient,
    }


def detect(url: str, respond: Any) -> str:
    """The revision ``ThreeRevisions`` detects at ``url`` (nothing remembered)."""

    async def scenario() -> str:
        recorder = Recorder(respond)
        transport = HttpTransport(url, http_client=recorder.client())
        client = ThreeRevisions(transport, store=MemoryTaskIdStore())
        try:
            return await client.detect()
        finally:
            await transport.aclose()

    forget_detected(url)
    try:
        return str(run(scenario()))
    finally:
        forget_detected(url)


def discover_lists(*versions: str) -> Any:
    def respond(message: dict[str, Any], request: httpx.Request) -> httpx.Response:
        assert message.get("method") == "server/discover"
        result = {"resultType": "complete", "supportedVersions": list(versions)}
        return reply(message, {**result, "capabilities": {}})

    return respond


@pytest.mark.parametrize(
    ("versions", "expected"),
    [
        ((LATER_VERSION,), LaterClient.tables.revision),
        (
            (api_ext.TasksClient.tables.protocol_version,),
            api_ext.TasksClient.tables.revision,
        ),
        (("1999-01-01",), api_ext.TasksClient.tables.revision),
    ],
)
def test_an_answered_discover_picks_the_stateless_revision_it_lists(
    versions: tuple[str, ...], expected: str
) -> None:
    """The answer's ``supportedVersions`` chooses among the stateless revisions (the
    first one when it lists none of them)."""
    url = f"http://127.0.0.1:9/mcp-{'-'.join(versions)}"
    assert detect(url, discover_lists(*versions)) == expected


def test_a_refused_discover_picks_the_revision_with_sessions() -> None:
    def refuse(message: dict[str, Any], request: httpx.Request) -> httpx.Response:
        error = {"code": -32600, "message": "Bad Request: no valid session ID"}
        body = {"jsonrpc": "2.0", "id": message.get("id"), "error": error}
        return httpx.Response(400, json=body)

    assert detect("http://127.0.0.1:9/mcp-refused", refuse) == "2025-11-25"
