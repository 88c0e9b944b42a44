"""One server for every revision a package carries, now ``server.dual`` (this module
re-exports its names where they were)."""

from __future__ import annotations

from .server.core import TaskServerCore as TaskServerCore
from .server.dual import DualServer as DualServer
from .server.info import RequestInfo as RequestInfo
from .server.tools import Tool as Tool
from .stores import SQLiteTaskStore as SQLiteTaskStore
from .stores import TaskStore as TaskStore

__all__ = ["DualServer"]
