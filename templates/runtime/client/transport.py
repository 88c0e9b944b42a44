"""What the tasks client needs from a connection to one server: the :class:`Transport`
protocol, :class:`SessionTransport` for transports with server-side sessions,
:class:`TransportError`, and the handler types a client installs.

The implementations are in :mod:`.http` (streamable HTTP) and :mod:`.stdio`; they share
the routing of incoming messages in :mod:`.dispatch`. Nothing here knows the client.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeAlias, runtime_checkable

from ..jsonrpc import RequestId

__all__ = [
    "NotificationHandler",
    "RequestHandler",
    "SessionTransport",
    "Transport",
    "TransportError",
    "revision_hint",
]

NotificationHandler: TypeAlias = Callable[[str, dict[str, Any]], Awaitable[None]]
"""Called with ``(method, params)`` for every notification the server sends."""

RequestHandler: TypeAlias = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Called with ``(method, params)`` for every request the server sends; returns the
result or raises :class:`JsonRpcError` to answer with an error response."""


def revision_hint(version: str) -> str:
    """The note added to an error a server of another revision may have caused: which
    revision this client speaks, and what to do about it."""
    return (
        f" (this client speaks MCP {version}; the server may speak another"
        " revision: use the package generated for that one)"
    )


class TransportError(Exception):
    """The transport could not deliver a message or read its answer."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        """The HTTP status the server answered with (None when no HTTP answer came:
        the connection failed, or the transport is not HTTP)."""


class Transport(Protocol):
    """What the tasks client needs from a connection to one server."""

    def set_handlers(
        self, on_notification: NotificationHandler, on_request: RequestHandler
    ) -> None:
        """Install the callbacks for server notifications and server-to-client
        requests."""
        ...

    async def request(
        self, request_id: RequestId, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Send a request and return its ``result``; raise :class:`JsonRpcError` on
        an error response."""
        ...

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification."""
        ...

    async def aclose(self) -> None:
        """Release the connection and stop background work."""
        ...


@runtime_checkable
class SessionTransport(Transport, Protocol):
    """A transport with server-side sessions (streamable HTTP): tasks may be bound to
    one.

    A server may only serve a task inside the session that created it (the TypeScript
    SDK does), so a process resuming a task after a crash joins the stored session.
    """

    session_id: str | None
    """The current session, once the server assigned one."""

    def join_session(self, session_id: str, protocol_version: str) -> None:
        """Use an existing, already initialized session instead of starting a new
        one."""
        ...
