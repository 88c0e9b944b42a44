"""The server adapter for the MCP Tasks extension, now ``server.rev_ext`` (this module
re-exports its names where they were)."""

from __future__ import annotations

from .protocol_ext import TABLES as TABLES
from .server.core import TaskServerCore as TaskServerCore
from .server.dispatch import Call as Call
from .server.rev_ext import EXTENSION_ID as EXTENSION_ID
from .server.rev_ext import PROTOCOL_VERSION as PROTOCOL_VERSION
from .server.rev_ext import AuditEvent as AuditEvent
from .server.rev_ext import AuditHook as AuditHook
from .server.rev_ext import Authenticate as Authenticate
from .server.rev_ext import JsonRpcError as JsonRpcError
from .server.rev_ext import Limits as Limits
from .server.rev_ext import RateLimiter as RateLimiter
from .server.rev_ext import RequestInfo as RequestInfo
from .server.rev_ext import TasksServer as TasksServer
from .server.rev_ext import Tool as Tool
from .server.rev_ext import ToolContext as ToolContext
from .server.rev_ext import ToolError as ToolError

__all__ = [
    "EXTENSION_ID",
    "PROTOCOL_VERSION",
    "AuditEvent",
    "AuditHook",
    "Authenticate",
    "JsonRpcError",
    "Limits",
    "RateLimiter",
    "RequestInfo",
    "Tool",
    "ToolContext",
    "ToolError",
]
