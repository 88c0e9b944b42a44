"""The examples are written in the typed style and type-check as a user's code would:
``mypy --strict`` and pyright strict pass on every example that needs only the
generated package (the ones built on an official SDK are checked with that SDK in
``tests/interop/test_examples_sdk_types.py``). The typed ``order`` tool (a typed tool
asking a typed question) answers the generated client of each revision over HTTP."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.procs import ServerHandle
from tests.support.servers import EXAMPLES, example_server
from tests.support.typecheck import mypy_errors, pyright_errors

SDK_EXAMPLES = {
    "sdk_client_ext.py",
    "sdk_server_2025.py",
    "sdk_server_ext.py",
    "server_2025_mcp1.py",
    "server_ext_mcp2.py",
}
"""The examples built on an official SDK (checked with it, in the interop tier)."""

PLAIN_EXAMPLES = sorted(
    path for path in EXAMPLES.glob("*.py") if path.name not in SDK_EXAMPLES
)


def test_every_example_is_type_checked_somewhere() -> None:
    """A new example is checked here or, built on an SDK, in the interop tier."""
    assert {p.name for p in EXAMPLES.glob("*.py")} == SDK_EXAMPLES | {
        p.name for p in PLAIN_EXAMPLES
    }
    assert len(PLAIN_EXAMPLES) >= 6


@pytest.mark.timeout(300)  # mypy over the examples and the packages they import
def test_the_examples_pass_mypy_strict(tmp_path: Path) -> None:
    assert mypy_errors(PLAIN_EXAMPLES, sys.executable, tmp_path / "cache") == []


@pytest.mark.timeout(300)  # pyright strict over the examples and what they import
def test_the_examples_pass_pyright_strict(tmp_path: Path) -> None:
    assert pyright_errors(PLAIN_EXAMPLES, sys.executable, tmp_path) == []


sys.path.insert(0, str(EXAMPLES))
from example_tools import Receipt  # noqa: E402

from mcp_tasks.client import InputContext, TasksClient  # noqa: E402


@pytest.fixture(scope="module")
def server() -> Iterator[ServerHandle]:
    """``examples/server.py`` (both revisions) with a memory store."""
    with example_server("server", "--memory") as handle:
        yield handle


@pytest.mark.anyio
@pytest.mark.parametrize("revision", ["2025-11-25", "ext-2026-07-28"])
@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_the_typed_order_tool_asks_a_typed_question(
    server: ServerHandle, revision: str, action: str
) -> None:
    """``order`` asks "How many sugars?" with a form made from its ``Sugars`` model;
    an accepted answer arrives in the tool as a ``Sugars`` and shows in the receipt,
    a declined one as None (no sugar); the client reads the receipt as a
    ``Receipt``."""
    asked: list[dict[str, Any]] = []

    async def answer(request: InputContext) -> dict[str, Any]:
        asked.append(dict(request.params))
        if action == "decline":
            return {"action": "decline"}
        return {"action": "accept", "content": {"sugars": 2}}

    async with TasksClient(
        server.url, revision=revision, elicitation_handler=answer
    ) as client:
        result = await client.call_tool(
            "order", {"size": "L"}, result_type=Receipt, timeout=30
        )
    assert [a["message"] for a in asked] == ["How many sugars?"]
    form = asked[0]["requestedSchema"]
    assert form["properties"]["sugars"]["type"] == "integer"
    assert form["properties"]["sugars"]["maximum"] == 5
    receipt = result.structured
    assert isinstance(receipt, Receipt)
    assert (receipt.size, receipt.sugars) == ("L", 2 if action == "accept" else 0)
    assert not result.is_error
