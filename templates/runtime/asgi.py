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
session's notification stream and DELETE ends it. A
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
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Protocol, cast

from .server_core import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    JsonRpcError,
    RequestInfo,
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


async def _read_body(receive: Receive, limit: int) -> bytes | None:
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
) -> ASGIApp:
    """The ASGI application serving ``server`` at ``path`` (with or without a trailing
    slash).

    ``server`` may be a ``Router`` (a dual server): each POST goes to the server it
    picks, GET and DELETE to its server with sessions.

    Requests with an ``Origin`` header are accepted only from ``allowed_origins``
    (host names; by default the loopback names), against DNS rebinding.
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
            await _post(pick, headers, receive, send, max_body_bytes, address)
        elif method == "GET" and sessions is not None:
            await _get(sessions, headers, receive, send)
        elif method == "DELETE" and sessions is not None:
            session_id = headers.get("mcp-session-id")
            if session_id is None or session_id not in sessions.sessions:
                await exchange.json(404, _error(INVALID_REQUEST, "Session not found"))
                return
            sessions.close_session(session_id)
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


async def _post(
    pick: Callable[[Mapping[str, str], Any], TasksServer],
    headers: dict[str, str],
    receive: Receive,
    send: Send,
    max_body_bytes: int,
    address: str | None = None,
) -> None:
    """Handle one POSTed JSON-RPC message."""
    exchange = _Exchange(send, [])
    body = await _read_body(receive, max_body_bytes)
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
    opened = None
    if not server.uses_sessions:
        session_id = None
    elif (
        message.get("method") == "initialize" and session_id is None and "id" in message
    ):
        try:
            opened = server.open_session_for(
                RequestInfo(headers=headers, client=address)
            )
        except JsonRpcError as error:
            refused = {
                "jsonrpc": "2.0",
                "id": message.get("id"),
                "error": error.to_wire(),
            }
            limited = error.code == server.limits.limit_error_code
            await exchange.json(
                429 if limited else server.http_status(error.code), refused
            )
            return
        session_id = opened.id
        exchange = _Exchange(send, [(b"mcp-session-id", session_id.encode())])
    elif session_id is None:
        await exchange.json(
            400, _error(INVALID_REQUEST, "Missing Mcp-Session-Id header")
        )
        return
    elif session_id not in server.sessions:
        await exchange.json(404, _error(INVALID_REQUEST, "Session not found"))
        return
    else:
        exchange = _Exchange(send, [(b"mcp-session-id", session_id.encode())])
    info = RequestInfo(
        headers=headers, session_id=session_id, client=address, checked_json=plain
    )
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
    if opened is not None and response is not None and "error" in response:
        server.close_session(opened.id)
        if not exchange.streaming:  # the refused session's id is no one's to use
            exchange = _Exchange(send, [])
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
    server: TasksServer, headers: dict[str, str], receive: Receive, send: Send
) -> None:
    """The session's stream of messages that belong to no open response stream.

    Notifications, and input requests of tasks while no ``tasks/result`` carries them;
    the server gets back the messages a closed stream never sent.
    """
    session_id = headers.get("mcp-session-id")
    session = server.sessions.get(session_id or "")
    extra = [] if session_id is None else [(b"mcp-session-id", session_id.encode())]
    exchange = _Exchange(send, extra)
    if session is None:
        status = 400 if session_id is None else 404
        await exchange.json(status, _error(INVALID_REQUEST, "Session not found"))
        return
    stream = session.open_stream()
    watcher = asyncio.ensure_future(_until_disconnect(receive))
    try:
        server.stream_opened(session)  # it may queue messages waiting for a stream
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


def serve(
    server: TasksServer | Router,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    path: str = "/mcp",
    log_level: str = "warning",
    shutdown_grace_s: int = 5,
) -> None:
    """Serve ``server`` over streamable HTTP with uvicorn until interrupted.

    On shutdown, open streams get ``shutdown_grace_s`` seconds before they are cut and
    the ``TasksServer`` closes.
    """
    try:
        import uvicorn
    except ImportError as error:
        raise ModuleNotFoundError(
            "serve() needs the uvicorn package: pip install uvicorn", name="uvicorn"
        ) from error

    uvicorn.run(
        create_app(server, path=path),
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=shutdown_grace_s,
    )
