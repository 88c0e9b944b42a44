"""Client adapter for the MCP Tasks extension ``io.modelcontextprotocol/tasks``: it
moved to ``client.rev_ext``.

This module re-exports its names and the shared client names, so imports from here
keep working.
"""

from __future__ import annotations

from .client import rev_ext as _adapter
from .client import shared as _shared
from .client.codec import decode_state as decode_state
from .client.core import ClientCore as ClientCore
from .client.rev_ext import *  # noqa: F403 - the revision's public names
from .client.rev_ext import Result as Result
from .client.rev_ext import TasksClient as TasksClient
from .client.shared import *  # noqa: F403 - the shared public names
from .jsonrpc import json_object as json_object

__all__: list[str] = []
__all__ += _adapter.__all__
__all__ += _shared.__all__
