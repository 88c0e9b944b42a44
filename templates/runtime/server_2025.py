"""The server adapter for MCP revision 2025-11-25, now ``server.rev_2025`` (this module
re-exports its names where they were)."""

from __future__ import annotations

from .jsonrpc import INVALID_PARAMS as INVALID_PARAMS
from .protocol_2025 import TABLES as TABLES
from .server.core import TaskServerCore as TaskServerCore
from .server.dispatch import Call as Call
from .server.rev_2025 import PROTOCOL_VERSION as PROTOCOL_VERSION
from .server.rev_2025 import AuditEvent as AuditEvent
from .server.rev_2025 import AuditHook as AuditHook
from .server.rev_2025 import Authenticate as Authenticate
from .server.rev_2025 import JsonRpcError as JsonRpcError
from .server.rev_2025 import Limits as Limits
from .server.rev_2025 import RateLimiter as RateLimiter
from .server.rev_2025 import RequestInfo as RequestInfo
from .server.rev_2025 import Session as Session
from .server.rev_2025 import TasksServer as TasksServer
from .server.rev_2025 import Tool as Tool
from .server.rev_2025 import ToolContext as ToolContext
from .server.rev_2025 import ToolError as ToolError

__all__ = [
    "PROTOCOL_VERSION",
    "Session",
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
