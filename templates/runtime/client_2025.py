"""Client adapter for MCP Tasks, revision 2025-11-25: it moved to ``client.rev_2025``.

This module re-exports its names and the shared client names, so imports from here
keep working.
"""

from __future__ import annotations

from .client import rev_2025 as _adapter
from .client import shared as _shared
from .client.codec import decode_state as decode_state
from .client.core import ClientCore as ClientCore
from .client.rev_2025 import *  # noqa: F403 - the revision's public names
from .client.rev_2025 import OTHER_REVISION_CODES as OTHER_REVISION_CODES
from .client.rev_2025 import TasksClient as TasksClient
from .client.shared import *  # noqa: F403 - the shared public names
from .client.transport import SessionTransport as SessionTransport
from .client.transport import revision_hint as revision_hint
from .jsonrpc import JsonRpcError as JsonRpcError
from .jsonrpc import json_object as json_object
from .models_2025 import CallToolResult as CallToolResult
from .models_2025 import Task as Task
from .task_ids import StoredTask as StoredTask

__all__: list[str] = []
__all__ += _adapter.__all__
__all__ += _shared.__all__
