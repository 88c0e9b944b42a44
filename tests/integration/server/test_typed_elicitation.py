"""Typed elicitation end to end: a real server process (``tests/support/
typed_input_server.py``) whose tools call ``ctx.elicit(message, Model)``, and the
generated client over HTTP answering the form, in each revision: 2025-11-25
(``elicitation/create`` on the task's stream) and the extension (the task's
``inputRequests``, answered with ``tasks/update``), each in its own package and both
through the dual server of the package of both revisions.

Accepted, the tool gets the model; declined or cancelled, ``content`` is None; content
the form let through but the model refuses is an ``isError`` result naming the field.
The schema subset itself is unit-tested in
``tests/unit/server/test_typed_elicitation.py``.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.support.procs import free_port, run_server

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).resolve().parents[2] / "support" / "typed_input_server.py"

EXT = "ext-2026-07-28"
REV_2025 = "2025-11-25"

SETUPS = [
    ("mcp_tasks", EXT),
    ("mcp_tasks", REV_2025),
    ("mcp_tasks_ext", None),
    ("mcp_tasks_2025_11_25", None),
]
"""(server and client package, the dual client's revision)."""


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    """One typed-input server per package, started on first use; yields their URLs
    by package."""
    with ExitStack() as stack:

        class Lazy(dict[str, str]):
            def __missing__(self, package: str) -> str:
                port = free_port()
                command = [
                    sys.executable,
                    str(SERVER),
                    package,
                    str(port),
                ]
                handle = stack.enter_context(run_server(command, port, url_path="/mcp"))
                self[package] = handle.url
                return handle.url

        yield Lazy()


def _answer_with(result: dict[str, Any]) -> Any:
    async def answer(context: Any) -> dict[str, Any]:
        return result

    return answer


def _client(
    package: str, revision: str | None, url: str, result: dict[str, Any]
) -> Any:
    ids = importlib.import_module(f"{package}.task_ids")
    client = importlib.import_module(f"{package}.client")
    options: dict[str, Any] = {} if revision is None else {"revision": revision}
    return client.TasksClient(
        url,
        store=ids.MemoryTaskIdStore(),
        default_poll_interval=0.02,
        elicitation_handler=_answer_with(result),
        **options,
    )


def _wire(result: Any) -> dict[str, Any]:
    """A tool result as its wire dict, whatever the client's result type."""
    for name in ("raw", "to_wire"):
        found = getattr(result, name, None)
        if found is not None:
            return dict(found() if callable(found) else found)
    return dict(result)


def _told(result: Any) -> dict[str, Any]:
    """What the tool said its answer was (its JSON text)."""
    wire = _wire(result)
    assert not wire.get("isError"), wire
    told: dict[str, Any] = json.loads(wire["content"][0]["text"])
    return told


async def _call(
    urls: dict[str, str],
    setup: tuple[str, str | None],
    tool: str,
    result: dict[str, Any],
) -> Any:
    package, revision = setup
    async with _client(package, revision, urls[package], result) as client:
        return await client.call_tool(tool, {}, timeout=60)


@pytest.mark.parametrize("setup", SETUPS, ids=lambda s: f"{s[0]}-{s[1] or 'own'}")
async def test_accepted_answer_is_the_model(
    urls: dict[str, str], setup: tuple[str, str | None]
) -> None:
    told = _told(
        await _call(
            urls,
            setup,
            "sweeten",
            {"action": "accept", "content": {"sugars": 2, "milk": True}},
        )
    )
    assert told == {
        "action": "accept",
        "content": {"sugars": 2, "sweetener": "sugar", "milk": True},
        "type": "Sugars",
    }


@pytest.mark.parametrize("setup", SETUPS, ids=lambda s: f"{s[0]}-{s[1] or 'own'}")
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_declined_answer_has_no_content(
    urls: dict[str, str], setup: tuple[str, str | None], action: str
) -> None:
    told = _told(await _call(urls, setup, "sweeten", {"action": action}))
    assert told == {"action": action, "content": None, "type": "NoneType"}


@pytest.mark.parametrize("setup", SETUPS, ids=lambda s: f"{s[0]}-{s[1] or 'own'}")
async def test_content_the_model_refuses_is_an_error_result_naming_the_field(
    urls: dict[str, str], setup: tuple[str, str | None]
) -> None:
    result = await _call(
        urls, setup, "enter_code", {"action": "accept", "content": {"code": "ABC"}}
    )
    wire = _wire(result)
    assert wire.get("isError") is True, wire
    text = wire["content"][0]["text"]
    assert "Code" in text and "code" in text and "pattern" in text, text


@pytest.mark.parametrize("setup", SETUPS[:2], ids=lambda s: f"{s[0]}-{s[1]}")
async def test_schema_dict_still_gets_the_elicit_result_dict(
    urls: dict[str, str], setup: tuple[str, str | None]
) -> None:
    told = _told(
        await _call(
            urls, setup, "untyped", {"action": "accept", "content": {"ok": True}}
        )
    )
    assert told["type"] == "dict"
    assert (told["answer"]["action"], told["answer"]["content"]) == (
        "accept",
        {"ok": True},
    )
