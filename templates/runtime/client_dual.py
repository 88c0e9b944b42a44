"""One client for every revision a package carries: it moved to ``client.dual``.

This module re-exports its names and the shared client names, so imports from here
keep working.
"""

from __future__ import annotations

from .client import dual as _dual
from .client import shared as _shared
from .client.codec import answer_to_wire as answer_to_wire
from .client.core import ClientCore as ClientCore
from .client.dual import *  # noqa: F403 - the dual client's public names
from .client.http import HttpTransport as HttpTransport
from .client.shared import *  # noqa: F403 - the shared public names
from .client.transport import Transport as Transport
from .client.transport import TransportError as TransportError
from .jsonrpc import JsonRpcError as JsonRpcError
from .protocol import REVISIONS as REVISIONS
from .task_ids import SqliteTaskIdStore as SqliteTaskIdStore
from .task_ids import StoredTask as StoredTask
from .task_ids import TaskIdStore as TaskIdStore

__all__: list[str] = []
__all__ += _dual.__all__
__all__ += _shared.__all__
