"""MCP streamable HTTP transport for ``server.TasksServer``, now ``server.asgi`` (the
app), ``server.serve`` (uvicorn) and ``server.http`` (parsing, responses); this module
re-exports their names where they were."""

from __future__ import annotations

from .jsonrpc import INTERNAL_ERROR as INTERNAL_ERROR
from .jsonrpc import INVALID_REQUEST as INVALID_REQUEST
from .jsonrpc import PARSE_ERROR as PARSE_ERROR
from .jsonrpc import JsonRpcError as JsonRpcError
from .jsonrpc import envelope_error as envelope_error
from .server.asgi import create_app as create_app
from .server.core import TaskServerCore
from .server.http import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from .server.http import Router as Router
from .server.http import json_depth_exceeds as json_depth_exceeds
from .server.info import RequestInfo as RequestInfo
from .server.serve import DESCRIPTORS_KEPT as DESCRIPTORS_KEPT
from .server.serve import OVERLOAD_REPORT_S as OVERLOAD_REPORT_S
from .server.serve import serve as serve
from .server.sessions import Session as Session
from .server.wire import json_text as json_text

__all__ = ["Router", "create_app", "serve"]

TasksServer = TaskServerCore
"""The server class ``create_app`` and ``serve`` take (``server.core``)."""
