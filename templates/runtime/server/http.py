"""HTTP plumbing of the streamable HTTP transport: the ASGI types, the ``Router``
protocol of a dual server, the JSON body parser (no ``NaN``, bounded depth), the
request body reader and ``Exchange``, one response (JSON or ``text/event-stream``)."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..jsonrpc import INTERNAL_ERROR
from .wire import json_text

if TYPE_CHECKING:
    from .core import TaskServerCore as TasksServer


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

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})

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


def origin_host(origin: str) -> str:
    """The host name in an ``Origin`` header value (``scheme://host[:port]``)."""
    authority = origin.partition("://")[2] or origin
    if authority.startswith("["):
        return authority[1:].partition("]")[0]
    return authority.partition(":")[0]


def accepts_event_stream(accept: str) -> bool:
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


def error_body(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": code, "message": message},
    }


class Exchange:
    """One HTTP request/response: a JSON reply, or an SSE stream once messages flow."""

    def __init__(self, send: Send, extra_headers: list[tuple[bytes, bytes]]) -> None:
        self._send = send
        self._extra_headers = extra_headers
        self.streaming = False

    def without_headers(self) -> Exchange:
        """The same exchange without the extra headers (not started yet)."""
        return Exchange(self._send, [])

    async def json(self, status: int, body: dict[str, Any] | None) -> None:
        """Send a complete JSON response (or an empty one when ``body`` is None)."""
        payload = b"" if body is None else encode_event(body).encode()
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
        data = encode_event(message)
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


def encode_event(message: dict[str, Any]) -> str:
    """A message as JSON text; one that JSON cannot hold (NaN, a cycle, too deep)
    becomes an internal error response with the same id."""
    try:
        return json_text(message)
    except (ValueError, TypeError, RecursionError) as error:
        _log.error("dropped a message that is not plain JSON: %s", error)
        request_id = message.get("id")
        return json_text(
            error_body(
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


def parse_body(body: bytes) -> tuple[Any, bool]:
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


async def until_disconnect(receive: Receive) -> None:
    """Return once the client has gone away."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def read_body(
    receive: Receive, limit: int, timeout_s: float | None = None
) -> bytes | None:
    """The request body, or None when it is larger than ``limit``;
    ``asyncio.TimeoutError`` when it is not all in within ``timeout_s`` seconds."""
    if timeout_s is None:
        return await read_chunks(receive, limit)
    return await asyncio.wait_for(read_chunks(receive, limit), timeout_s)


async def read_chunks(receive: Receive, limit: int) -> bytes | None:
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
