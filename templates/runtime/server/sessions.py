"""Sessions (revisions with ``initialize``): ``Session``, one client connection, and
``SessionRegistry``, the open sessions of a server with their limits."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..jsonrpc import JsonRpcError
from .limits import Limits


class Session:
    """One client connection, opened by ``initialize``.

    It remembers the client's capabilities and carries server-to-client messages
    that belong to no request (status and progress notifications; input requests of
    tasks that no ``tasks/result`` stream carries) to the client's open GET streams.
    """

    def __init__(
        self, session_id: str, owner: str | None = None, principal: str | None = None
    ) -> None:
        self.id = session_id
        self.owner = owner
        """Whom the session counts against and belongs to (principal or client
        address): only requests of that owner may use it."""
        self.principal = principal
        """The principal that opened the session (None: anonymous)."""
        self.last_used = time.monotonic()
        """When a request last named the session (``time.monotonic``)."""
        self.open_requests = 0
        """How many HTTP requests of the session are being answered now."""
        self.client_capabilities: dict[str, Any] = {}
        self._streams: set[asyncio.Queue[dict[str, Any] | None]] = set()

    def notify(self, message: dict[str, Any]) -> None:
        """Queue a notification on every open stream (dropped when none is open)."""
        for stream in self._streams:
            stream.put_nowait(message)

    def send(
        self, message: dict[str, Any]
    ) -> asyncio.Queue[dict[str, Any] | None] | None:
        """Queue a message on one open stream only; that stream (None when none is
        open)."""
        stream = next(iter(self._streams), None)
        if stream is not None:
            stream.put_nowait(message)
        return stream

    def has_stream(self, stream: object) -> bool:
        """Whether ``stream`` (from ``open_stream``) is still open."""
        return stream in self._streams

    def open_stream(self) -> asyncio.Queue[dict[str, Any] | None]:
        """A new stream for the client's GET request; None in it ends the stream."""
        stream: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._streams.add(stream)
        return stream

    def close_stream(
        self, stream: asyncio.Queue[dict[str, Any] | None]
    ) -> list[dict[str, Any]]:
        """Forget a stream the client closed; return the messages it never sent."""
        self._streams.discard(stream)
        unsent: list[dict[str, Any]] = []
        while not stream.empty():
            message = stream.get_nowait()
            if message is not None:
                unsent.append(message)
        return unsent

    @property
    def streaming(self) -> bool:
        """Whether the client has a stream open on the session."""
        return bool(self._streams)

    @property
    def in_use(self) -> bool:
        """Whether a request or stream of the session is open (it is never closed to
        make room then)."""
        return self.open_requests > 0 or bool(self._streams)

    def close(self) -> None:
        """End every open stream."""
        for stream in self._streams:
            stream.put_nowait(None)
        self._streams.clear()


class SessionRegistry(Mapping[str, Session]):
    """The open sessions by id, least recently used first (``touch``), and the limits
    on them: ``max_sessions`` open at once, ``max_sessions_per_client`` per owner
    (principal, or client address when anonymous), ``session_idle_s`` after which an
    unused session with no open stream may be closed to make room; the session
    pressure of ``Limits`` (read from ``limits()`` when a session opens)."""

    def __init__(
        self,
        limits: Callable[[], Limits],
        *,
        max_sessions: int = 10_000,
        max_sessions_per_client: int = 64,
        session_idle_s: float = 3_600.0,
    ) -> None:
        self.limits = limits
        self.max_sessions = max_sessions
        self.max_sessions_per_client = max_sessions_per_client
        self.session_idle_s = session_idle_s
        self._open: OrderedDict[str, Session] = OrderedDict()
        self._owners: dict[str, set[str]] = {}

    def __getitem__(self, session_id: str) -> Session:
        return self._open[session_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._open)

    def __len__(self) -> int:
        return len(self._open)

    def open(self, owner: str | None = None, principal: str | None = None) -> Session:
        """Start a session for an ``initialize`` request, counted against ``owner``
        (and opened by ``principal``).

        An owner may have ``max_sessions_per_client`` sessions and the server
        ``max_sessions``; beyond either, sessions idle for ``session_idle_s`` are
        closed, and if none is, the new session is refused (``JsonRpcError`` with
        ``limits.limit_error_code``). Past ``limits.session_pressure`` of
        ``max_sessions``, sessions idle for ``limits.session_pressure_idle_s`` are
        closed first, least recently used first. A session in use (a request or
        stream open) is never closed for another.
        """
        limits = self.limits()
        if owner is not None:
            owned = self._owners.get(owner, set())
            if len(owned) >= self.max_sessions_per_client:
                self.close_idle(list(owned))
            if len(owned) >= self.max_sessions_per_client:
                raise JsonRpcError(
                    limits.limit_error_code,
                    f"Too many open sessions for this client: {len(owned)} (limit"
                    f" {self.max_sessions_per_client}); end unused sessions with"
                    " HTTP DELETE",
                )
        mark = int(self.max_sessions * limits.session_pressure)
        if len(self._open) >= mark:
            self.close_least_used(limits.session_pressure_idle_s, mark - 1)
        if len(self._open) >= self.max_sessions:
            self.close_least_used(self.session_idle_s, self.max_sessions - 1)
        if len(self._open) >= self.max_sessions:
            raise JsonRpcError(
                limits.limit_error_code,
                f"Too many open sessions on this server (limit {self.max_sessions});"
                " try again later",
            )
        session = Session(secrets.token_hex(16), owner, principal)
        self._open[session.id] = session
        if owner is not None:
            self._owners.setdefault(owner, set()).add(session.id)
        return session

    @staticmethod
    def owner(principal: str | None, client: str | None) -> str:
        """Whom a session belongs to: its principal, or the client address that
        opened it when anonymous."""
        if principal is not None:
            return f"principal:{principal}"
        return f"address:{client or '?'}"

    def of_principal(self, principal: str) -> list[Session]:
        """The open sessions that ``principal`` opened."""
        found: list[Session] = []
        for session_id in self._owners.get(self.owner(principal, None), ()):
            session = self._open.get(session_id)
            if session is not None and session.principal == principal:
                found.append(session)
        return found

    def touch(self, session: Session) -> None:
        """Record that ``session`` is used now (it becomes the most recently used)."""
        session.last_used = time.monotonic()
        if session.id in self._open:
            self._open.move_to_end(session.id)

    def close_idle(self, session_ids: list[str]) -> None:
        """Close the sessions among ``session_ids`` unused for ``session_idle_s``."""
        horizon = time.monotonic() - self.session_idle_s
        for session_id in session_ids:
            session = self._open.get(session_id)
            if (
                session is not None
                and session.last_used <= horizon
                and not session.in_use
            ):
                self.close(session_id)

    def close_least_used(self, idle_s: float, keep: int) -> None:
        """Close sessions unused for ``idle_s`` seconds, least recently used first,
        while more than ``keep`` are open.

        Stops at the first session used more recently; one in use is marked used now
        instead (it goes last), so each session is looked at about once per
        ``idle_s``, however many are open.
        """
        now = time.monotonic()
        for _ in range(len(self._open)):
            if len(self._open) <= keep:
                return
            session = next(iter(self._open.values()))
            if session.last_used > now - idle_s:
                return
            if session.in_use:
                self.touch(session)
            else:
                self.close(session.id)

    def close(self, session_id: str) -> None:
        """End a session and its streams (its tasks live on)."""
        session = self._open.pop(session_id, None)
        if session is not None:
            session.close()
            if session.owner is not None:
                owned = self._owners.get(session.owner)
                if owned is not None:
                    owned.discard(session_id)
                    if not owned:
                        del self._owners[session.owner]

    def close_all(self) -> None:
        """End every session and its streams."""
        for session_id in list(self._open):
            self.close(session_id)
