"""Durable storage for the IDs of tasks that are still running.

A client saves a task ID as soon as the server creates the task and deletes it once the
task reaches a terminal status (or is cancelled). After a crash or restart, the IDs left
in the store are the tasks whose results were never collected; pass one to
``resume(task_id)`` on a new client to continue waiting for it.

Two implementations ship here: :class:`SqliteTaskIdStore` (the default, standard library
only, every database call runs in a worker thread so the event loop never blocks) and
:class:`MemoryTaskIdStore` (for tests and short-lived programs).
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "MemoryTaskIdStore",
    "SqliteTaskIdStore",
    "StoredTask",
    "TaskIdStore",
    "default_store_path",
]


@dataclass(frozen=True)
class StoredTask:
    """One saved task ID with the context the client stored next to it.

    Attributes:
        task_id: The server-generated task ID.
        context: JSON-compatible details about the original request (for example
            ``{"method": "tools/call", "name": "slow_compute"}``).
        saved_at: Unix time (seconds) when the ID was saved.
    """

    task_id: str
    context: dict[str, Any] = field(default_factory=dict[str, Any])
    saved_at: float = 0.0


class TaskIdStore(Protocol):
    """Where a client keeps the IDs of tasks it has not finished waiting for."""

    async def save(self, task_id: str, context: Mapping[str, Any]) -> None:
        """Remember ``task_id`` (replacing an earlier entry with the same ID)."""
        ...

    async def delete(self, task_id: str) -> None:
        """Forget ``task_id``; deleting an unknown ID is not an error."""
        ...

    async def get(self, task_id: str) -> StoredTask | None:
        """Return the entry for ``task_id``, or ``None`` when it is not stored."""
        ...

    async def pending(self) -> list[StoredTask]:
        """Return every stored entry, oldest first."""
        ...


class MemoryTaskIdStore:
    """A :class:`TaskIdStore` that lives in process memory only."""

    def __init__(self) -> None:
        """Create an empty store."""
        self._entries: dict[str, StoredTask] = {}

    async def save(self, task_id: str, context: Mapping[str, Any]) -> None:
        """Remember ``task_id`` with a copy of ``context``."""
        self._entries[task_id] = StoredTask(task_id, dict(context), time.time())

    async def delete(self, task_id: str) -> None:
        """Forget ``task_id``."""
        self._entries.pop(task_id, None)

    async def get(self, task_id: str) -> StoredTask | None:
        """Return the entry for ``task_id`` or ``None``."""
        return self._entries.get(task_id)

    async def pending(self) -> list[StoredTask]:
        """Return every entry, oldest first."""
        return sorted(self._entries.values(), key=lambda entry: entry.saved_at)


def default_store_path() -> Path:
    """Return the default SQLite file: ``$MCP_TASKS_STORE`` or a file under the
    user's state directory."""
    configured = os.environ.get("MCP_TASKS_STORE")
    if configured:
        return Path(configured)
    state_home = os.environ.get("XDG_STATE_HOME") or str(
        Path.home() / ".local" / "state"
    )
    return Path(state_home) / "mcp-tasks" / "task_ids.sqlite3"


class SqliteTaskIdStore:
    """A :class:`TaskIdStore` backed by one SQLite file (standard library ``sqlite3``).

    Each operation opens its own short-lived connection in a worker thread, so several
    processes may share the file and the event loop never waits on disk I/O.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        """Use the database at ``path`` (created on first use; default
        :func:`default_store_path`)."""
        self.path = Path(path) if path is not None else default_store_path()
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=30.0)
        if not self._ready:
            with connection:
                connection.execute(
                    "CREATE TABLE IF NOT EXISTS task_ids (task_id TEXT PRIMARY KEY,"
                    " context TEXT NOT NULL, saved_at REAL NOT NULL)"
                )
            self._ready = True
        return connection

    def _save(self, task_id: str, context: str, saved_at: float) -> None:
        connection = self._connect()
        try:
            with connection:
                connection.execute(
                    "INSERT OR REPLACE INTO task_ids (task_id, context, saved_at)"
                    " VALUES (?, ?, ?)",
                    (task_id, context, saved_at),
                )
        finally:
            connection.close()

    def _delete(self, task_id: str) -> None:
        connection = self._connect()
        try:
            with connection:
                connection.execute("DELETE FROM task_ids WHERE task_id = ?", (task_id,))
        finally:
            connection.close()

    def _select(self, task_id: str | None) -> list[StoredTask]:
        connection = self._connect()
        try:
            if task_id is None:
                rows = connection.execute(
                    "SELECT task_id, context, saved_at FROM task_ids ORDER BY saved_at,"
                    " task_id"
                ).fetchall()
            else:
                rows = connection.execute(
                    "SELECT task_id, context, saved_at FROM task_ids WHERE task_id = ?",
                    (task_id,),
                ).fetchall()
        finally:
            connection.close()
        return [
            StoredTask(str(row[0]), dict(json.loads(row[1])), float(row[2]))
            for row in rows
        ]

    async def save(self, task_id: str, context: Mapping[str, Any]) -> None:
        """Remember ``task_id``; ``context`` must be JSON-serializable."""
        encoded = json.dumps(dict(context), sort_keys=True)
        await asyncio.to_thread(self._save, task_id, encoded, time.time())

    async def delete(self, task_id: str) -> None:
        """Forget ``task_id``."""
        await asyncio.to_thread(self._delete, task_id)

    async def get(self, task_id: str) -> StoredTask | None:
        """Return the entry for ``task_id`` or ``None``."""
        rows = await asyncio.to_thread(self._select, task_id)
        return rows[0] if rows else None

    async def pending(self) -> list[StoredTask]:
        """Return every entry, oldest first."""
        return await asyncio.to_thread(self._select, None)
