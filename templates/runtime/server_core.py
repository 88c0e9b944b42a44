"""The revision-neutral server runtime, now the ``server`` subpackage (this module
re-exports its names where they were).

- ``server.core``: ``TaskServerCore``, the server that holds and wires the parts;
- ``server.tools``: ``Tool``, ``ToolContext``, ``ToolError``, ``ToolRegistry``;
- ``server.elicit``: ``ElicitAnswer``, ``ElicitContentError``, ``elicitation_schema``;
- ``server.info``: ``RequestInfo``, ``HandlerContext``, ``AuditEvent``, the hooks;
- ``server.limits``: ``Limits``, ``RateLimiter``;
- ``server.sessions``: ``Session``, ``SessionRegistry``;
- ``server.lifecycle``: task creation, workers, the state machine, TTL timers;
- ``server.inputs`` and ``server.replies``: input requests and their answers;
- ``server.subscriptions``: notifications and ``subscriptions/listen``;
- ``server.replicas``: worker leases and signals between replicas;
- ``server.dispatch``: ``Call`` and the JSON-RPC dispatcher;
- ``server.calls``, ``server.roles``: ``tools/call`` and the Tasks roles;
- ``server.wire``, ``server.answers``, ``server.views``: wire helpers and shapes.
"""

from __future__ import annotations

from .jsonrpc import INTERNAL_ERROR as INTERNAL_ERROR
from .jsonrpc import INVALID_PARAMS as INVALID_PARAMS
from .jsonrpc import INVALID_REQUEST as INVALID_REQUEST
from .jsonrpc import LIMIT_EXCEEDED as LIMIT_EXCEEDED
from .jsonrpc import METHOD_NOT_FOUND as METHOD_NOT_FOUND
from .jsonrpc import PARSE_ERROR as PARSE_ERROR
from .jsonrpc import JsonRpcError as JsonRpcError
from .jsonrpc import envelope_error as envelope_error
from .jsonrpc import valid_id as valid_id
from .protocol import TaskFields as TaskFields
from .protocol import TaskState as TaskState
from .revision import INPUT_CAPABILITIES as INPUT_CAPABILITIES
from .revision import INPUT_RESULTS as INPUT_RESULTS
from .revision import RevisionTables as RevisionTables
from .server.answers import check_answer as check_answer
from .server.answers import missing_capability as missing_capability
from .server.core import TaskServerCore as TaskServerCore
from .server.dispatch import NAMED_TARGETS as NAMED_TARGETS
from .server.dispatch import Call as Call
from .server.dispatch import Route as Route
from .server.elicit import ElicitAnswer as ElicitAnswer
from .server.elicit import ElicitContentError as ElicitContentError
from .server.elicit import elicitation_schema as elicitation_schema
from .server.info import AuditEvent as AuditEvent
from .server.info import AuditHook as AuditHook
from .server.info import Authenticate as Authenticate
from .server.info import CustomHandler as CustomHandler
from .server.info import Emit as Emit
from .server.info import HandlerContext as HandlerContext
from .server.info import RequestInfo as RequestInfo
from .server.info import RoutingHeaders as RoutingHeaders
from .server.limits import Limits as Limits
from .server.limits import RateLimiter as RateLimiter
from .server.replies import PendingRequest as PendingRequest
from .server.sessions import Session as Session
from .server.tools import Preflight as Preflight
from .server.tools import TaskSupport as TaskSupport
from .server.tools import Tool as Tool
from .server.tools import ToolContext as ToolContext
from .server.tools import ToolError as ToolError
from .server.tools import ToolHandler as ToolHandler
from .server.wire import ToolOutput as ToolOutput
from .server.wire import http_headers as http_headers
from .server.wire import is_text as is_text
from .server.wire import json_integer as json_integer
from .server.wire import json_size as json_size
from .server.wire import json_text as json_text
from .server.wire import new_task_id as new_task_id
from .server.wire import request_params as request_params
from .server.wire import rfc3339 as rfc3339
from .server.wire import task_id_param as task_id_param
from .server.wire import text_result as text_result
from .server.wire import tool_result as tool_result
from .stores import BatchTransitionStore as BatchTransitionStore
from .stores import LimitExceeded as LimitExceeded
from .stores import Quota as Quota
from .stores import ReplicaStore as ReplicaStore
from .stores import SQLiteTaskStore as SQLiteTaskStore
from .stores import StoreUnavailable as StoreUnavailable
from .stores import TaskRecord as TaskRecord
from .stores import TaskStore as TaskStore
from .stores import TransitionStore as TransitionStore
from .stores import kept_bytes as kept_bytes

__all__: list[str] = [
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
"""The public names every revision's ``server`` module re-exports."""
