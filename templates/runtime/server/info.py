"""What the server knows of one request and tells its hooks: ``RequestInfo`` from the
transport, ``HandlerContext`` for registered method handlers, the ``authenticate`` and
``audit`` hooks and their ``AuditEvent``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union

Emit = Callable[[dict[str, Any]], Awaitable[None]]
"""Sends one JSON-RPC message on the current request's response stream."""

RoutingHeaders = Union[bool, Literal["core"]]  # noqa: UP007 - evaluated on Python 3.10
"""Which missing HTTP routing headers a server refuses (``require_routing_headers``):
``"core"``, ``True`` (also ``Mcp-Name`` on the Tasks requests) or ``False`` (none)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestInfo:
    """What the transport knows about one incoming request.

    ``headers`` has lower-case names (None when the transport has no headers);
    ``principal`` is used as the caller's identity when the server has no
    ``authenticate`` hook.
    ``session_id`` names the session opened by ``initialize``; ``client`` is the
    caller's network address (host), when the transport knows it.
    """

    headers: Mapping[str, str] | None = None
    principal: str | None = None
    session_id: str | None = None
    client: str | None = None
    checked_json: bool = False
    """The transport parsed the message from JSON text and found no ``NaN`` or
    ``Infinity`` in it (nor nesting deeper than it allows): ``handle`` need not check
    again that ``params`` is plain JSON."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HandlerContext:
    """What a registered method handler learns about its request."""

    principal: str | None
    request: RequestInfo


CustomHandler = Callable[[dict[str, Any], HandlerContext], Awaitable[dict[str, Any]]]
"""Serves a method the runtime has no role for: ``(params, ctx) -> result``, wire form.

The generated ``server.TasksServer`` registers these through its typed ``on_*`` methods.
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditEvent:
    """One security-relevant event, passed to the ``audit`` hook."""

    action: str
    task_id: str | None
    principal: str | None
    detail: str = ""


Authenticate = Callable[[RequestInfo], str | None]
"""Maps a request to its principal (None: anonymous). Raise ``JsonRpcError`` to refuse
it.

It sees every request (over HTTP with sessions also each GET stream and DELETE); the
principal owns the tasks it creates and the sessions it opens, which no other caller
may use."""


AuditHook = Callable[[AuditEvent], None]
"""Receives every ``AuditEvent``."""
