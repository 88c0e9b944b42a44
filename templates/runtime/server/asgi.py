"""MCP streamable HTTP transport for ``server.TasksServer``: a small pure-ASGI app.

``create_app(server)`` returns the ASGI application (any ASGI server runs it; the
lifespan protocol starts and closes the ``TasksServer``). ``serve.serve(server, host,
port)`` runs it with uvicorn, which is imported only then.

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
import logging
from collections.abc import Callable, Mapping
from typing import Any, cast

from ..jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    JsonRpcError,
    envelope_error,
)
from .core import TaskServerCore as TasksServer
from .http import (
    LOCAL_HOSTS,
    ASGIApp,
    Exchange,
    Receive,
    Router,
    Scope,
    Send,
    accepts_event_stream,
    error_body,
    origin_host,
    parse_body,
    read_body,
    until_disconnect,
)
from .info import RequestInfo
from .sessions import Session

__all__ = ["Router", "create_app"]

_log = logging.getLogger(__name__)


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
    origins = allowed_origins if allowed_origins is not None else LOCAL_HOSTS
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
        exchange = Exchange(send, [])
        if scope["path"] not in paths:
            await exchange.json(404, error_body(INVALID_REQUEST, "Not found"))
            return
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope.get("headers", [])
        }
        origin = headers.get("origin")
        if origin is not None and origin_host(origin) not in origins:
            await exchange.json(403, error_body(INVALID_REQUEST, "Origin not allowed"))
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
            await exchange.json(405, error_body(INVALID_REQUEST, "Method not allowed"))

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
    exchange: Exchange, server: TasksServer, error: JsonRpcError, request_id: Any
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
    exchange: Exchange,
) -> Session | None:
    """The session the request names (``Mcp-Session-Id``) if its caller opened it;
    else None, once the error is answered: 400 without the header, 404 for a session
    that does not exist or is another caller's (the same answer, so that nobody learns
    which sessions exist)."""
    session_id = headers.get("mcp-session-id")
    if session_id is None:
        await exchange.json(
            400, error_body(INVALID_REQUEST, "Missing Mcp-Session-Id header")
        )
        return None
    request = RequestInfo(headers=headers, session_id=session_id, client=address)
    try:
        session = server.session_for(request)
    except JsonRpcError as error:  # authentication refused the caller
        await _refuse(exchange, server, error, None)
        return None
    if session is None:
        await exchange.json(404, error_body(INVALID_REQUEST, "Session not found"))
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
    exchange = Exchange(send, [])
    try:
        body = await read_body(receive, max_body_bytes, body_timeout_s)
    except asyncio.TimeoutError:  # not yet the built-in one on Python 3.10
        closing = Exchange(send, [(b"connection", b"close")])
        await closing.json(
            408,
            error_body(
                INVALID_REQUEST, f"Request body not received within {body_timeout_s}s"
            ),
        )
        return
    if body is None:
        await exchange.json(
            413,
            error_body(
                INVALID_REQUEST, f"Request body larger than {max_body_bytes} bytes"
            ),
        )
        return
    try:
        message, plain = parse_body(body)
    except ValueError as error:  # UnicodeDecodeError included
        await exchange.json(
            400, error_body(PARSE_ERROR, f"Parse error: body is not JSON ({error})")
        )
        return
    if not isinstance(message, dict):
        await exchange.json(
            400, error_body(INVALID_REQUEST, "Expected one JSON-RPC message object")
        )
        return
    message = cast(dict[str, Any], message)
    server = pick(headers, message)
    invalid = envelope_error(message)
    if invalid is not None:
        await exchange.json(400, error_body(invalid.code, invalid.message))
        return
    method = message.get("method")
    if method in server.stream_methods and not accepts_event_stream(
        headers.get("accept", "")
    ):
        await exchange.json(
            406,
            error_body(
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
        exchange = Exchange(send, [(b"mcp-session-id", session_id.encode())])
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
    exchange: Exchange,
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
            watcher = asyncio.ensure_future(until_disconnect(receive))
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
    ``inputs.Channel``); the server gets back the messages a closed stream never
    sent. Only the caller that opened the session may open its streams.
    """
    session_id = headers.get("mcp-session-id")
    extra = [] if session_id is None else [(b"mcp-session-id", session_id.encode())]
    exchange = Exchange(send, extra)
    session = await _owned_session(server, headers, address, exchange)
    if session is None:
        return
    stream = session.open_stream()
    watcher = asyncio.ensure_future(until_disconnect(receive))
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
