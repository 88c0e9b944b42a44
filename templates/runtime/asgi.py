"""MCP streamable HTTP transport for ``server.TasksServer``: a small pure-ASGI app.

``create_app(server)`` returns the ASGI application (any ASGI server runs it; the
lifespan protocol starts and closes the ``TasksServer``). ``serve(server, host, port)``
runs it with uvicorn, which is imported only then.

Each POST carries one JSON-RPC message. A response is JSON unless its handler sends
messages of its own first (``subscriptions/listen``, input requests of a synchronous
tool, or those ``tasks/result`` delivers), in which case it becomes a
``text/event-stream`` that ends with the response; an error response gets the HTTP
status the server's revision asks for (``server.http_status``). A method answered
only with a stream (``subscriptions/listen``: ``server.stream_methods``) is refused
with 406 when the ``Accept`` header does not take ``text/event-stream``.

For a server with sessions (2025-11-25), ``initialize`` opens a session
(``Mcp-Session-Id`` response header) that every later request names; GET opens the
session's notification stream and DELETE ends it. A session belongs to the caller
that opened it (its principal, or its client address when anonymous): a POST, GET or
DELETE naming it from anyone else is answered 404, as for an unknown session. A
response is JSON unless its handler sends messages of its own first (input requests
of a synchronous tool, or those ``tasks/result`` delivers), in which case it becomes
a ``text/event-stream`` that ends with the response.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import socket
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Protocol, cast

from .server_core import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    JsonRpcError,
    RequestInfo,
    Session,
    envelope_error,
    json_text,
)
from .server_core import TaskServerCore as TasksServer

__all__ = ["Router", "create_app", "serve"]


class Router(Protocol):
    """Several servers behind one endpoint (``server_dual.DualServer``)."""

    session_server: TasksServer | None
    """The server with sessions: GET streams and DELETE go to it."""

    def server_for(self, headers: Mapping[str, str], message: Any) -> TasksServer:
        """The server that answers a POSTed ``message``."""
        ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_log = logging.getLogger(__name__)

_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})

MAX_JSON_DEPTH = 200
"""How deeply a request body's arrays and objects may nest (deeper: -32700)."""

_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[\[\]{}]")


def json_depth_exceeds(body: bytes, limit: int) -> bool:
    """Whether the JSON text ``body`` nests arrays and objects deeper than ``limit``.

    Counted without recursion (strings removed first), so any depth is safe to check
    before ``json.loads``, which would fail with ``RecursionError``.
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    depth = 0
    for match in _BRACKETS.finditer(_STRINGS.sub(b"", body)):
        if match.group() in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _origin_host(origin: str) -> str:
    """The host name in an ``Origin`` header value (``scheme://host[:port]``)."""
    authority = origin.partition("://")[2] or origin
    if authority.startswith("["):
        return authority[1:].partition("]")[0]
    return authority.partition(":")[0]


def _accepts_event_stream(accept: str) -> bool:
    """Whether an ``Accept`` header value takes ``text/event-stream`` (also through
    ``text/*`` or ``*/*``, unless with ``q=0``)."""
    for item in accept.split(","):
        media, _, parameters = item.partition(";")
        if media.strip().lower() not in ("text/event-stream", "text/*", "*/*"):
            continue
        weight = 1.0
        for parameter in parameters.split(";"):
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        if weight > 0:
            return True
    return False


def _error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": code, "message": message},
    }


class _Exchange:
    """One HTTP request/response: a JSON reply, or an SSE stream once messages flow."""

    def __init__(self, send: Send, extra_headers: list[tuple[bytes, bytes]]) -> None:
        self._send = send
        self._extra_headers = extra_headers
        self.streaming = False

    def without_headers(self) -> _Exchange:
        """The same exchange without the extra headers (not started yet)."""
        return _Exchange(self._send, [])

    async def json(self, status: int, body: dict[str, Any] | None) -> None:
        """Send a complete JSON response (or an empty one when ``body`` is None)."""
        payload = b"" if body is None else _encode(body).encode()
        headers = [(b"content-type", b"application/json"), *self._extra_headers]
        await self._send(
            {"type": "http.response.start", "status": status, "headers": headers}
        )
        await self._send({"type": "http.response.body", "body": payload})

    async def start_stream(self) -> None:
        """Send the headers of an SSE response (once)."""
        if not self.streaming:
            self.streaming = True
            headers = [
                (b"content-type", b"text/event-stream"),
                (b"cache-control", b"no-cache"),
                *self._extra_headers,
            ]
            await self._send(
                {"type": "http.response.start", "status": 200, "headers": headers}
            )

    async def event(self, message: dict[str, Any]) -> None:
        """Send one SSE event, starting the stream on first use."""
        await self.start_stream()
        data = _encode(message)
        await self._send(
            {
                "type": "http.response.body",
                "body": f"event: message\ndata: {data}\n\n".encode(),
                "more_body": True,
            }
        )

    async def end(self) -> None:
        """Close an SSE stream."""
        await self._send({"type": "http.response.body", "body": b""})


def _encode(message: dict[str, Any]) -> str:
    """A message as JSON text; one that JSON cannot hold (NaN, a cycle, too deep)
    becomes an internal error response with the same id."""
    try:
        return json_text(message)
    except (ValueError, TypeError, RecursionError) as error:
        _log.error("dropped a message that is not plain JSON: %s", error)
        request_id = message.get("id")
        return json_text(
            _error(
                INTERNAL_ERROR,
                "Internal error: the response was not plain JSON",
                request_id if isinstance(request_id, (str, int)) else None,
            )
        )


class _NotFinite(Exception):
    """A request body holds ``NaN``, ``Infinity`` or a number too large for a float."""


def _refuse_constant(name: str) -> float:
    raise _NotFinite(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotFinite(text)
    return value


_FINITE = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)
"""A decoder that refuses non-finite numbers (``json.loads`` takes them)."""


def _parse(body: bytes) -> tuple[Any, bool]:
    """The JSON value of a request body, and whether it is plain JSON (no ``NaN`` or
    ``Infinity``: what ``RequestInfo.checked_json`` promises); ``ValueError`` when it
    is not JSON."""
    if json_depth_exceeds(body, MAX_JSON_DEPTH):
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        try:  # what json.loads does with bytes, with the finite decoder
            text = body.decode(json.detect_encoding(body), "surrogatepass")
            return _FINITE.decode(text), True
        except _NotFinite:
            return json.loads(body), False
    except RecursionError:
        raise ValueError("nested too deeply") from None


async def _until_disconnect(receive: Receive) -> None:
    """Return once the client has gone away."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _read_body(
    receive: Receive, limit: int, timeout_s: float | None = None
) -> bytes | None:
    """The request body, or None when it is larger than ``limit``;
    ``asyncio.TimeoutError`` when it is not all in within ``timeout_s`` seconds."""
    if timeout_s is None:
        return await _read_chunks(receive, limit)
    return await asyncio.wait_for(_read_chunks(receive, limit), timeout_s)


async def _read_chunks(receive: Receive, limit: int) -> bytes | None:
    """The request body, or None when it is larger than ``limit``."""
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b""
        chunk = cast(bytes, message.get("body", b""))
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        more = bool(message.get("more_body", False))
    return b"".join(chunks)


def create_app(
    server: TasksServer | Router,
    *,
    path: str = "/mcp",
    max_body_bytes: int = 4 * 1_048_576,
    allowed_origins: frozenset[str] | None = None,
    body_timeout_s: float | None = 30.0,
) -> ASGIApp:
    """The ASGI application serving ``server`` at ``path`` (with or without a trailing
    slash).

    ``server`` may be a ``Router`` (a dual server): each POST goes to the server it
    picks, GET and DELETE to its server with sessions.

    Requests with an ``Origin`` header are accepted only from ``allowed_origins``
    (host names; by default the loopback names), against DNS rebinding.

    A POST whose body is not all in within ``body_timeout_s`` seconds (None: no
    deadline) is answered HTTP 408 and its connection closed, so that a client that
    announces a large body and sends it slowly, or never, cannot hold a connection.
    """
    paths = {path.rstrip("/") or "/", path.rstrip("/") + "/"}
    origins = allowed_origins if allowed_origins is not None else _LOCAL_HOSTS
    if isinstance(server, TasksServer):
        single = server
        sessions: TasksServer | None = single if single.uses_sessions else None

        def pick(headers: Mapping[str, str], message: Any) -> TasksServer:
            return single

    else:
        sessions, pick = server.session_server, server.server_for

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(server, receive, send)
            return
        if scope["type"] != "http":
            return
        exchange = _Exchange(send, [])
        if scope["path"] not in paths:
            await exchange.json(404, _error(INVALID_REQUEST, "Not found"))
            return
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope.get("headers", [])
        }
        origin = headers.get("origin")
        if origin is not None and _origin_host(origin) not in origins:
            await exchange.json(403, _error(INVALID_REQUEST, "Origin not allowed"))
            return
        method = scope["method"]
        client = scope.get("client")
        address = str(client[0]) if client else None
        if method == "POST":
            await _post(
                pick, headers, receive, send, max_body_bytes, address, body_timeout_s
            )
        elif method == "GET" and sessions is not None:
            await _get(sessions, headers, receive, send, address)
        elif method == "DELETE" and sessions is not None:
            session = await _owned_session(sessions, headers, address, exchange)
            if session is not None:
                sessions.close_session(session.id)
                await exchange.json(200, None)
        else:
            await exchange.json(405, _error(INVALID_REQUEST, "Method not allowed"))

    return app


async def _lifespan(server: TasksServer | Router, receive: Receive, send: Send) -> None:
    """ASGI lifespan: start the server on startup, close it on shutdown."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await server.start()
            except Exception as exc:  # reported to the ASGI server, which stops
                await send({"type": "lifespan.startup.failed", "message": repr(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await server.close()
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _refuse(
    exchange: _Exchange, server: TasksServer, error: JsonRpcError, request_id: Any
) -> None:
    """Answer with ``error`` (authentication or a session limit refused the request):
    HTTP 429 for a refused limit, else the status the revision gives the code."""
    refused = {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}
    limited = error.code == server.limits.limit_error_code
    await exchange.json(429 if limited else server.http_status(error.code), refused)


async def _owned_session(
    server: TasksServer,
    headers: dict[str, str],
    address: str | None,
    exchange: _Exchange,
) -> Session | None:
    """The session the request names (``Mcp-Session-Id``) if its caller opened it;
    else None, once the error is answered: 400 without the header, 404 for a session
    that does not exist or is another caller's (the same answer, so that nobody learns
    which sessions exist)."""
    session_id = headers.get("mcp-session-id")
    if session_id is None:
        await exchange.json(
            400, _error(INVALID_REQUEST, "Missing Mcp-Session-Id header")
        )
        return None
    request = RequestInfo(headers=headers, session_id=session_id, client=address)
    try:
        session = server.session_for(request)
    except JsonRpcError as error:  # authentication refused the caller
        await _refuse(exchange, server, error, None)
        return None
    if session is None:
        await exchange.json(404, _error(INVALID_REQUEST, "Session not found"))
    return session


async def _post(
    pick: Callable[[Mapping[str, str], Any], TasksServer],
    headers: dict[str, str],
    receive: Receive,
    send: Send,
    max_body_bytes: int,
    address: str | None = None,
    body_timeout_s: float | None = None,
) -> None:
    """Handle one POSTed JSON-RPC message."""
    exchange = _Exchange(send, [])
    try:
        body = await _read_body(receive, max_body_bytes, body_timeout_s)
    except asyncio.TimeoutError:  # not yet the built-in one on Python 3.10
        closing = _Exchange(send, [(b"connection", b"close")])
        await closing.json(
            408,
            _error(
                INVALID_REQUEST, f"Request body not received within {body_timeout_s}s"
            ),
        )
        return
    if body is None:
        await exchange.json(
            413,
            _error(INVALID_REQUEST, f"Request body larger than {max_body_bytes} bytes"),
        )
        return
    try:
        message, plain = _parse(body)
    except ValueError as error:  # UnicodeDecodeError included
        await exchange.json(
            400, _error(PARSE_ERROR, f"Parse error: body is not JSON ({error})")
        )
        return
    if not isinstance(message, dict):
        await exchange.json(
            400, _error(INVALID_REQUEST, "Expected one JSON-RPC message object")
        )
        return
    message = cast(dict[str, Any], message)
    server = pick(headers, message)
    invalid = envelope_error(message)
    if invalid is not None:
        await exchange.json(400, _error(invalid.code, invalid.message))
        return
    method = message.get("method")
    if method in server.stream_methods and not _accepts_event_stream(
        headers.get("accept", "")
    ):
        await exchange.json(
            406,
            _error(
                INVALID_REQUEST,
                f"Not Acceptable: {method} answers with a text/event-stream, which"
                " the Accept header must include",
                message.get("id"),
            ),
        )
        return
    session_id = headers.get("mcp-session-id")
    session: Session | None = None
    opened = False
    if not server.uses_sessions:
        session_id = None
    elif (
        message.get("method") == "initialize" and session_id is None and "id" in message
    ):
        try:
            session = server.open_session_for(
                RequestInfo(headers=headers, client=address)
            )
        except JsonRpcError as error:
            await _refuse(exchange, server, error, message.get("id"))
            return
        opened = True
    else:
        session = await _owned_session(server, headers, address, exchange)
        if session is None:
            return
    if session is not None:
        session_id = session.id
        exchange = _Exchange(send, [(b"mcp-session-id", session_id.encode())])
    info = RequestInfo(
        headers=headers, session_id=session_id, client=address, checked_json=plain
    )
    if session is None:
        await _answer(server, message, info, exchange, receive)
        return
    session.open_requests += 1  # a session in use is not closed to make room
    try:
        await _answer(server, message, info, exchange, receive, opened)
    finally:
        session.open_requests -= 1
        server.touch_session(session)


async def _answer(
    server: TasksServer,
    message: dict[str, Any],
    info: RequestInfo,
    exchange: _Exchange,
    receive: Receive,
    opened: bool = False,
) -> None:
    """Answer one POSTed message whose session (if any) was checked; ``opened``: it is
    the ``initialize`` that opened the session, closed again when it fails."""
    if "id" not in message or "method" not in message:  # notification or response
        await server.handle(message, info)
        await exchange.json(202, None)
        return
    try:
        if message["method"] in server.prompt_methods:
            # answered without waiting on anyone: no task, no disconnect watcher
            response = await server.handle(message, info, exchange.event)
        else:
            handler = asyncio.ensure_future(
                server.handle(message, info, exchange.event)
            )
            watcher = asyncio.ensure_future(_until_disconnect(receive))
            await asyncio.wait({handler, watcher}, return_when=asyncio.FIRST_COMPLETED)
            watcher.cancel()
            if not handler.done():
                handler.cancel()  # the client went away
                await asyncio.gather(handler, return_exceptions=True)
                return
            response = handler.result()
    except JsonRpcError as error:  # raised by the transport itself (not by handle)
        response = {"jsonrpc": "2.0", "id": message.get("id"), "error": error.to_wire()}
    if opened and response is not None and "error" in response:
        server.close_session(str(info.session_id))
        if not exchange.streaming:  # the refused session's id is no one's to use
            exchange = exchange.without_headers()
    if exchange.streaming:
        if response is not None:
            await exchange.event(response)
        await exchange.end()
        return
    status = 200
    if response is not None and "error" in response:
        failure = cast(dict[str, Any], response["error"])
        status = server.http_status(int(failure["code"]))
    await exchange.json(status, response)


async def _get(
    server: TasksServer,
    headers: dict[str, str],
    receive: Receive,
    send: Send,
    address: str | None = None,
) -> None:
    """The session's stream of messages that belong to no open response stream.

    Notifications, and the input requests of the tasks the session may hear (see
    ``server_core._Channel``); the server gets back the messages a closed stream never
    sent. Only the caller that opened the session may open its streams.
    """
    session_id = headers.get("mcp-session-id")
    extra = [] if session_id is None else [(b"mcp-session-id", session_id.encode())]
    exchange = _Exchange(send, extra)
    session = await _owned_session(server, headers, address, exchange)
    if session is None:
        return
    stream = session.open_stream()
    watcher = asyncio.ensure_future(_until_disconnect(receive))
    try:
        server.touch_session(session)
        server.stream_opened(session, stream)  # it may queue waiting messages
        await exchange.start_stream()
        while True:
            getter = asyncio.ensure_future(stream.get())
            await asyncio.wait({getter, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if not getter.done():
                getter.cancel()
                return
            message = getter.result()
            if message is None:
                break
            await exchange.event(message)
        await exchange.end()
    finally:
        watcher.cancel()
        server.stream_closed(session, session.close_stream(stream))
        server.touch_session(session)


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
) -> None:
    """Serve ``server`` over streamable HTTP with uvicorn until interrupted.

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

    _Server(config).run()


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
