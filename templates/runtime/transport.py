"""Transports that carry JSON-RPC messages between the tasks client and a server.

They moved into the ``client`` subpackage: the :class:`Transport` protocol,
:class:`TransportError` and the handler types are in ``client.transport``,
:class:`HttpTransport` (MCP streamable HTTP over ``httpx``) in ``client.http``,
:class:`StdioTransport` (newline-delimited JSON-RPC over a subprocess's standard
streams) in ``client.stdio``. This module re-exports them, so imports from here keep
working.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as TYPE_CHECKING

from .client.http import GET_STREAM_WAIT_S as GET_STREAM_WAIT_S
from .client.http import KEEPALIVE_EXPIRY_S as KEEPALIVE_EXPIRY_S
from .client.http import SSE_END_WAIT_S as SSE_END_WAIT_S
from .client.http import HttpTransport as HttpTransport
from .client.http import header_value as header_value
from .client.stdio import StdioTransport as StdioTransport
from .client.transport import NotificationHandler as NotificationHandler
from .client.transport import RequestHandler as RequestHandler
from .client.transport import SessionTransport as SessionTransport
from .client.transport import Transport as Transport
from .client.transport import TransportError as TransportError
from .client.transport import revision_hint as revision_hint
from .jsonrpc import INTERNAL_ERROR as INTERNAL_ERROR
from .jsonrpc import INVALID_PARAMS as INVALID_PARAMS
from .jsonrpc import INVALID_REQUEST as INVALID_REQUEST
from .jsonrpc import METHOD_NOT_FOUND as METHOD_NOT_FOUND
from .jsonrpc import PARSE_ERROR as PARSE_ERROR
from .jsonrpc import JsonRpcError as JsonRpcError
from .jsonrpc import RequestId as RequestId
from .jsonrpc import json_object as json_object

__all__ = [
    "HttpTransport",
    "JsonRpcError",
    "NotificationHandler",
    "RequestHandler",
    "RequestId",
    "SessionTransport",
    "StdioTransport",
    "Transport",
    "TransportError",
    "json_object",
    "header_value",
    "revision_hint",
]
