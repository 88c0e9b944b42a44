"""``serve``: run the ASGI app of ``asgi.create_app`` with uvicorn (imported only
then), bounded in connections, header and body time, and file descriptors."""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import time
from typing import Any

from .asgi import create_app
from .core import TaskServerCore as TasksServer
from .http import Router

__all__ = ["serve"]

_log = logging.getLogger(__name__)


def serve(
    server: TasksServer | Router,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    path: str = "/mcp",
    log_level: str = "warning",
    shutdown_grace_s: int = 5,
    max_connections: int | None = 512,
    header_timeout_s: float | None = 10.0,
    body_timeout_s: float | None = 30.0,
    announce: bool = True,
) -> None:
    """Serve ``server`` over streamable HTTP with uvicorn until interrupted.

    Once it listens, one line on standard error says where (``listening on
    http://127.0.0.1:8000/mcp``; the port the system chose when ``port`` is 0), unless
    ``announce`` is False.

    On shutdown, open streams get ``shutdown_grace_s`` seconds before they are cut and
    the ``TasksServer`` closes.

    Slow and numerous clients are bounded, so that they cannot take every file
    descriptor of the process:

    - at most ``max_connections`` connections are open at once (open streams count); a
      connection beyond them is answered HTTP 503 and closed as soon as it is accepted;
    - a request whose head (request line and headers) is not all in within
      ``header_timeout_s`` seconds of the connection being opened, or of the previous
      response on it, gets HTTP 408 and its connection is closed;
    - a POST whose body is not all in within ``body_timeout_s`` seconds gets HTTP 408
      and its connection is closed (``create_app``).

    Overload (connections refused at the limit, ``accept()`` out of file descriptors)
    is logged at most once a minute, with counts, never once per connection. None
    turns a bound off. ``max_connections`` is lowered, with a warning, to leave
    ``DESCRIPTORS_KEPT`` of the process's file descriptors (``ulimit -n``) free.

    The connection limit and the head deadline come from a small subclass of
    uvicorn's h11 protocol (uvicorn has no setting for either), so ``serve`` always
    parses HTTP with h11. It overrides the protocol's connection, data and
    response-complete hooks, which uvicorn has kept for years (tested with 0.54).
    With both turned off, uvicorn's own protocol is used; put a reverse proxy with its
    own header deadline and connection limit in front then (nginx:
    ``client_header_timeout``, ``client_body_timeout``, ``limit_conn``).
    """
    try:
        import uvicorn
    except ImportError as error:
        raise ModuleNotFoundError(
            "serve() needs the uvicorn package: pip install uvicorn", name="uvicorn"
        ) from error

    max_connections = _within_descriptor_limit(max_connections)
    overload = _OverloadLog(max_connections)
    http: type[asyncio.Protocol] | str = "auto"
    if max_connections is not None or header_timeout_s is not None:
        http = _bounded_protocol(max_connections, header_timeout_s, overload)
    config = uvicorn.Config(
        create_app(server, path=path, body_timeout_s=body_timeout_s),
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=shutdown_grace_s,
        http=http,
    )

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            loop = asyncio.get_running_loop()
            loop.set_exception_handler(overload.exception_handler)
            await super().startup(sockets)
            if announce and self.started:
                print(f"listening on {_listening_url(self, path)}", file=sys.stderr)
                sys.stderr.flush()

    _Server(config).run()


def _listening_url(server: Any, path: str) -> str:
    """The URL a started uvicorn server listens on (its first socket)."""
    for listener in getattr(server, "servers", []):
        for sock in listener.sockets:
            host, port = sock.getsockname()[:2]
            shown = f"[{host}]" if ":" in host else host
            return f"http://{shown}:{port}{path}"
    return f"http://{server.config.host}:{server.config.port}{path}"


OVERLOAD_REPORT_S = 60.0
"""How often overload is logged at most (``serve``)."""

_ACCEPT_FAILED = "socket.accept() out of system resource"
"""The asyncio event loop's message when ``accept()`` fails for lack of descriptors."""

_REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n"
    b"content-length: 20\r\nconnection: close\r\n\r\nToo many connections"
)
_HEAD_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\n"
    b"content-length: 24\r\nconnection: close\r\n\r\nRequest headers too slow"
)


class _OverloadLog:
    """Counts what an overloaded server refuses and logs it at most once every
    ``OVERLOAD_REPORT_S`` seconds: the first event at once, later ones as counts."""

    def __init__(self, max_connections: int | None) -> None:
        self.max_connections = max_connections
        self.counts: dict[str, int] = {}
        """Events since the last report, by kind."""
        self.totals: dict[str, int] = {}
        """Events since the start, by kind."""
        self._reported: float | None = None

    def note(self, kind: str) -> None:
        """Count one event of ``kind``; log the counts when a report is due."""
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self.totals[kind] = self.totals.get(kind, 0) + 1
        now = time.monotonic()
        if self._reported is not None and now - self._reported < OVERLOAD_REPORT_S:
            return
        self._reported = now
        counted = ", ".join(f"{name}: {count}" for name, count in self.counts.items())
        self.counts = {}
        _log.warning(
            "server overloaded (connection limit %s); since the last report: %s"
            " (reported at most once every %.0fs)",
            self.max_connections,
            counted,
            OVERLOAD_REPORT_S,
        )

    def exception_handler(
        self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]
    ) -> None:
        """An event loop exception handler: a failed ``accept()`` (out of descriptors)
        is counted, anything else goes to the loop's default handler. (The loop retries
        the accept a second later, but reports the failure once for each of the
        ``backlog`` connections it tries to accept, thousands of tracebacks a second.)
        """
        if context.get("message") == _ACCEPT_FAILED:
            self.note("accept() failed, out of file descriptors")
            return
        loop.default_exception_handler(context)


def _bounded_protocol(
    max_connections: int | None,
    header_timeout_s: float | None,
    overload: _OverloadLog,
) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a connection limit and a deadline for each request's
    head (see ``serve``); its refusals go to ``overload``."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    if not hasattr(H11Protocol, "on_response_complete"):  # pragma: no cover
        raise RuntimeError(
            "this uvicorn's h11 protocol has no on_response_complete: serve() cannot"
            " bound connections; pass max_connections=None and header_timeout_s=None"
            " and put a reverse proxy in front"
        )

    class BoundedH11Protocol(H11Protocol):
        """Refuses connections beyond the limit; closes one whose next request head
        does not arrive in time."""

        _refused = False
        _head_timer: asyncio.TimerHandle | None = None
        _head_cycle: object = None

        def connection_made(  # type: ignore[override]  # as uvicorn's own
            self, transport: asyncio.Transport
        ) -> None:
            if max_connections is not None and len(self.connections) >= max_connections:
                self._refused = True
                overload.note("connections refused")
                transport.write(_REFUSED)
                transport.close()
                return
            super().connection_made(transport)
            self._await_head()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return
            self._stop_head_timer()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._check_head()

        def on_response_complete(self) -> None:
            if not self.transport.is_closing():
                self._await_head()  # before: a pipelined request may start at once
            super().on_response_complete()
            self._check_head()

        def _await_head(self) -> None:
            """Start the deadline of the next request's head."""
            if header_timeout_s is None:
                return
            self._stop_head_timer()
            self._head_cycle = self.cycle
            loop = asyncio.get_running_loop()
            self._head_timer = loop.call_later(header_timeout_s, self._head_too_late)

        def _check_head(self) -> None:
            """Stop the deadline once the head arrived (a new request cycle began)."""
            if self._head_timer is not None and self.cycle is not self._head_cycle:
                self._stop_head_timer()

        def _stop_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_too_late(self) -> None:
            self._head_timer = None
            if self.cycle is self._head_cycle and not self.transport.is_closing():
                self.transport.write(_HEAD_TIMED_OUT)
                self.transport.close()

    return BoundedH11Protocol


DESCRIPTORS_KEPT = 64
"""File descriptors ``serve`` keeps out of ``max_connections`` for the rest of the
process (store, logs, outgoing connections)."""


def _within_descriptor_limit(max_connections: int | None) -> int | None:
    """``max_connections``, lowered (with a warning) so that ``DESCRIPTORS_KEPT`` of the
    process's file descriptors (``ulimit -n``) stay free."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return max_connections
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if max_connections is None or soft == resource.RLIM_INFINITY:
        return max_connections
    allowed = max(1, soft - DESCRIPTORS_KEPT)
    if max_connections <= allowed:
        return max_connections
    _log.warning(
        "max_connections lowered from %d to %d: this process may open %d file"
        " descriptors (ulimit -n); raise that limit to allow more connections",
        max_connections,
        allowed,
        soft,
    )
    return allowed
