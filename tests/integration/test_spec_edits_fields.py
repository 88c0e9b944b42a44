"""A task field in one revision's schema only, end to end: a real server process of a
package of both revisions (case ``i_progress_ext_only`` in
``tests/spec_edit_cases/fields.py``), the generated client of each revision over HTTP.

One tool serves both revisions and sets ``progress``, which only the extension's schema
has: the extension's client reads it on its snapshots, and a task of the 2025-11-25
revision completes (``set_fields`` leaves the field out instead of failing the task).
``ctx.revision`` names the revision of the call. With ``revision=`` the fields are
checked: the wrong revision is a ``ValueError`` the tool sees.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.spec_edits import all_cases
from tests.support import spec_cases

pytestmark = pytest.mark.anyio

CASE = all_cases()["i_progress_ext_only"]
EXT = "ext-2026-07-28"
REV_2025 = "2025-11-25"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The case's package (alone) on ``sys.path`` and its server; yields the URL."""
    out = tmp_path_factory.mktemp("fields")
    proc = spec_cases.generate(out, CASE)
    assert proc.returncode == 0, proc.stderr
    sys.path.insert(0, str(out))
    try:
        with spec_cases.serve(out, CASE) as url:
            yield url
    finally:
        sys.path.remove(str(out))
        for name in list(sys.modules):
            if name.split(".")[0] == CASE.package:
                del sys.modules[name]


def _text(result: Any) -> str:
    """A tool result as JSON text, whatever the client's result type."""
    for name in ("raw", "to_wire"):
        found = getattr(result, name, None)
        if found is not None:
            result = found() if callable(found) else found
            break
    return json.dumps(result, default=str)


def _client(url: str, revision: str) -> Any:
    ids = importlib.import_module(f"{CASE.package}.task_ids")
    client = importlib.import_module(f"{CASE.package}.client")
    return client.TasksClient(
        url,
        store=ids.MemoryTaskIdStore(),
        default_poll_interval=0.02,
        revision=revision,
    )


async def test_field_of_one_revision_set_by_a_tool_of_both(served: str) -> None:
    """The extension's task shows ``progress``; the 2025-11-25 task, whose schema has
    no such field, completes instead of failing."""
    seen: list[Any] = []
    async with _client(served, EXT) as client:
        handle = await client.start_tool("counting", {})
        async for snapshot in handle.snapshots(timeout=60):
            seen.append(getattr(snapshot, "progress", None))
            if seen.count(0.5) == 1 and seen[-1] == 0.5:
                await client.call_tool("open_gate", {})
        ext_result = await handle.result()
    assert 0.5 in seen, seen
    assert "counted" in _text(ext_result)

    async with _client(served, REV_2025) as client:
        handle = await client.start_tool("counting", {})
        await client.call_tool("open_gate", {})
        legacy = await handle.result(timeout=60)
    assert "counted" in _text(legacy)


@pytest.mark.parametrize("revision", [EXT, REV_2025])
async def test_tool_reads_the_revision_of_its_call(served: str, revision: str) -> None:
    """``ctx.revision`` is the revision of the client that called the tool."""
    async with _client(served, revision) as client:
        result = await client.call_tool("which_revision", {}, timeout=60)
    assert f"called under {revision}" in _text(result)


async def test_fields_checked_for_their_revision(served: str) -> None:
    """``set_fields(..., revision=...)`` applies the fields under that revision and
    raises ``ValueError`` in the tool under another."""
    async with _client(served, EXT) as client:
        checked = await client.call_tool("counting_checked", {}, timeout=60)
    assert f"checked under {EXT}" in _text(checked)
    async with _client(served, REV_2025) as client:
        refused = await client.call_tool("counting_checked", {}, timeout=60)
    text = _text(refused)
    assert f"refused under {REV_2025}" in text and EXT in text
