"""The task ID stores of both golden packages: same behaviour, SQLite shared across
instances."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from .fakes import run

PACKAGES = ["mcp_tasks_2025_11_25", "mcp_tasks_ext"]


@pytest.mark.parametrize("package", PACKAGES)
@pytest.mark.parametrize("kind", ["sqlite", "memory"])
def test_store_save_get_pending_delete(package: str, kind: str, tmp_path: Path) -> None:
    module: Any = importlib.import_module(f"{package}.task_ids")
    store = (
        module.SqliteTaskIdStore(tmp_path / "sub" / "ids.db")
        if kind == "sqlite"
        else module.MemoryTaskIdStore()
    )

    async def scenario() -> None:
        assert await store.pending() == [] and await store.get("a") is None
        await store.save("a", {"method": "tools/call", "name": "x"})
        await store.save("b", {"method": "tools/call", "name": "y"})
        await store.save("a", {"method": "tools/call", "name": "z"})
        entry = await store.get("a")
        assert (
            entry is not None
            and entry.context == {"method": "tools/call", "name": "z"}
            and entry.saved_at > 0
        )
        assert sorted(e.task_id for e in await store.pending()) == ["a", "b"]
        await store.delete("a")
        await store.delete("never-saved")
        assert [e.task_id for e in await store.pending()] == ["b"]

    run(scenario())


def test_sqlite_store_is_shared_between_instances_and_defaults_to_env_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_tasks_ext.task_ids import SqliteTaskIdStore, default_store_path

    monkeypatch.setenv("MCP_TASKS_STORE", str(tmp_path / "env.db"))
    assert default_store_path() == tmp_path / "env.db"

    async def scenario() -> None:
        await SqliteTaskIdStore().save("t1", {"k": [1, 2]})
        entries = await SqliteTaskIdStore(tmp_path / "env.db").pending()
        assert [(e.task_id, e.context) for e in entries] == [("t1", {"k": [1, 2]})]

    run(scenario())
