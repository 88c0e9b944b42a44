"""MCP streamable HTTP for the tasks client: :class:`HttpTransport`, over ``httpx`` (an
optional dependency, imported when the transport is built: without it, building one
raises ``ModuleNotFoundError`` saying ``pip install httpx``). What the transport uses of
``httpx`` is typed by the local protocols :class:`AsyncHttpClient` and
:class:`HttpResponse`, so the package type-checks where ``httpx`` is not installed.

JSON and SSE responses are both accepted; server-to-client requests arriving on any
SSE stream are answered by POST. It serves both kinds of MCP connection. With a session
(2025-11-25), the ``Mcp-Session-Id`` from the ``initialize`` response is sent on every
later request, and a GET event stream is opened after ``notifications/initialized`` so
that messages the server sends outside of any request (such as task status
notifications) arrive; sending that notification waits until the server answered the
GET (at most ``GET_STREAM_WAIT_S``), so nothing sent for the next requests finds no
stream. Stateless (2026-07-28, set up by the client with
:meth:`HttpTransport.use_stateless`), every request carries the
``Mcp-Protocol-Version``, ``Mcp-Method`` and (where the method has one) ``Mcp-Name``
routing headers.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib
import importlib.util
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from ..jsonrpc import JsonRpcError, RequestId, json_object
from .dispatch import Dispatcher, json_objects, response_outcome
from .transport import (
    NotificationHandler,
    RequestHandler,
    TransportError,
    revision_hint,
)

__all__ = [
    "GET_STREAM_WAIT_S",
    "SSE_END_WAIT_S",
    "AsyncHttpClient",
    "HttpResponse",
    "HttpTransport",
    "header_value",
]

GET_STREAM_WAIT_S = 5.0
"""How long ``notifications/initialized`` waits for the server to answer the session's
GET stream before the client goes on without it."""

SSE_END_WAIT_S = 0.05
"""How long a request whose answer came on an SSE stream waits for the server to end
the stream (which keeps the connection for the next requests) before closing it."""


_NAME_PARAMS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


def header_value(value: str) -> str:
    """Return ``value`` as an HTTP header value, using the ``=?base64?...?=`` form when
    unsafe.

    A value is sent as is when it is printable ASCII without leading or trailing
    whitespace (and does not itself look like the sentinel form).
    """
    safe = (
        value != ""
        and all(" " <= character <= "~" for character in value)
        and value == value.strip()
        and not value.startswith("=?base64?")
    )
    if safe:
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


class HttpResponse(Protocol):
    """What :class:`HttpTransport` reads of an ``httpx.Response`` (a structural type:
    ``httpx`` need not be installed to type-check the package)."""

    @property
    def status_code(self) -> int:
        """The HTTP status."""
        ...

    @property
    def headers(self) -> Mapping[str, str]:
        """The response headers (case-insensitive in ``httpx``)."""
        ...

    async def aread(self) -> bytes:
        """The whole body."""
        ...

    def aiter_lines(self) -> AsyncIterator[str]:
        """The body line by line, as it arrives (SSE)."""
        ...


class AsyncHttpClient(Protocol):
    """What :class:`HttpTransport` uses of an ``httpx.AsyncClient`` (the
    ``http_client`` it may be given): ``httpx.AsyncClient`` satisfies it."""

    def stream(
        self,
        method: str,
        url: Any,
        *,
        json: Any = ...,
        headers: Mapping[str, str] | None = ...,
    ) -> AbstractAsyncContextManager[HttpResponse]:
        """Send a request; the response is read inside the ``async with``."""
        ...

    async def delete(
        self, url: Any, *, headers: Mapping[str, str] | None = ...
    ) -> object:
        """Send a DELETE (ends a session)."""
        ...

    async def aclose(self) -> None:
        """Close the connections."""
        ...


KEEPALIVE_EXPIRY_S = 4.0
"""How long the transport's own ``httpx`` client keeps an idle connection for reuse:
less than the 5 s after which uvicorn, hypercorn and Node's HTTP server close an idle
one. At ``httpx``'s default (5 s as well) a request sent on a connection idle for
about 5 s (a task polled every 5 s, say) sometimes reaches the server as it closes
the connection, and fails with ``ReadError`` (2 requests in 100 against uvicorn)."""


def _httpx() -> Any:
    """The ``httpx`` module (typed ``Any``: it is imported at run time only, so the
    package type-checks without it)."""
    return importlib.import_module("httpx")


def _require_httpx() -> None:
    """Import ``httpx`` now, so that its absence is reported where the transport is
    built."""
    try:
        _httpx()
    except ImportError as error:
        raise ModuleNotFoundError(
            "HttpTransport needs the httpx package: pip install httpx", name="httpx"
        ) from error


def new_http_client(
    timeout: float,
    *,
    on_request: Callable[[Any], Awaitable[None]] | None = None,
) -> AsyncHttpClient:
    """An ``httpx.AsyncClient`` as the transport builds its own: ``timeout`` bounds
    connecting and writing, reads are unbounded, idle connections are kept
    ``KEEPALIVE_EXPIRY_S`` (``httpx``'s other pool limits as by default);
    ``on_request`` is awaited with each request before it goes out (an ``httpx``
    request hook)."""
    httpx = _httpx()
    client: AsyncHttpClient = httpx.AsyncClient(
        timeout=httpx.Timeout(timeout, read=None),
        limits=httpx.Limits(
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=KEEPALIVE_EXPIRY_S,
        ),
        event_hooks={"request": [on_request] if on_request is not None else []},
    )
    return client


def _note_sniffio_absent() -> None:
    """Where ``sniffio`` is not installed, record it as absent in ``sys.modules``.

    httpcore 1.0 imports ``sniffio`` each time it sets up a lock, an event or a
    semaphore (several times per request), and since anyio 4.11 no longer installs
    it, each of those imports fails after searching every ``sys.path`` entry: about
    a fifth of the client's CPU time per task. A ``None`` entry makes the import fail
    at once, as it would anyway; nothing changes where ``sniffio`` is installed.
    """
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]


class HttpTransport:
    """MCP streamable HTTP transport built on ``httpx.AsyncClient``.

    ``url`` is the server's MCP endpoint (for example ``http://127.0.0.1:8000/mcp``).
    ``headers`` are added to every request (for example an ``Authorization`` header).
    ``timeout`` bounds connecting and writing; reads are unbounded because task results
    and event streams may legitimately stay open for a long time.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        http_client: AsyncHttpClient | None = None,
    ) -> None:
        """Prepare the transport; no connection is made until the first message.

        Raises ``ModuleNotFoundError`` naming the package to install when ``httpx`` is
        missing.
        """
        if http_client is None:
            _require_httpx()
        _note_sniffio_absent()
        self.url = url
        self._parsed: tuple[str, Any] | None = None
        """``url`` and its ``httpx.URL``."""
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._http = http_client
        self._owns_http = http_client is None
        self._dispatcher = Dispatcher(self._send_reply)
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.routing_headers = False
        """Send ``Mcp-Method`` and ``Mcp-Name`` (stateless protocol revisions)."""

    def set_handlers(
        self, on_notification: NotificationHandler, on_request: RequestHandler
    ) -> None:
        """Install the callbacks for server notifications and server-to-client
        requests."""
        self._dispatcher.on_notification = on_notification
        self._dispatcher.on_request = on_request

    def _client(self) -> AsyncHttpClient:
        if self._http is None:
            self._http = new_http_client(self._timeout)
        return self._http

    def _target(self) -> Any:
        """``url`` as an ``httpx.URL``, parsed once (httpx parses a string again for
        every request)."""
        if self._parsed is None or self._parsed[0] != self.url:
            self._parsed = (self.url, _httpx().URL(self.url))
        return self._parsed[1]

    def _base_headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **self._headers,
        }
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["Mcp-Protocol-Version"] = self.protocol_version
        return headers

    def _message_headers(
        self, method: str | None, params: Mapping[str, Any]
    ) -> dict[str, str]:
        headers = self._base_headers()
        if method is not None and self.routing_headers:
            headers["Mcp-Method"] = method
            name_param = _NAME_PARAMS.get(method)
            name = params.get(name_param) if name_param is not None else None
            if isinstance(name, str):
                headers["Mcp-Name"] = header_value(name)
        return headers

    async def request(
        self, request_id: RequestId, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """POST a request and return its result, reading a JSON body or an SSE
        stream."""
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": method,
            "params": params,
        }
        result = await self._post(
            message, self._message_headers(method, params), request_id
        )
        if result is None:
            raise TransportError(f"no response to {method}")
        if method == "initialize" and not self.routing_headers:
            version = result.get("protocolVersion")
            self.protocol_version = version if isinstance(version, str) else None
        return result

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """POST a notification (the server answers ``202 Accepted``)."""
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        await self._post(message, self._message_headers(method, params), None)
        if method == "notifications/initialized" and self.session_id is not None:
            # Wait until the server has the GET stream, so that nothing it sends for
            # the next requests (a task's progress, say) finds no stream and is dropped.
            opened = asyncio.Event()
            self._dispatcher.spawn(self._listen_get_stream(opened))
            # a server slow to answer the GET: carry on, as before it opens (Python
            # 3.10's wait_for raises asyncio's TimeoutError, not yet the built-in one)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(opened.wait(), GET_STREAM_WAIT_S)

    def join_session(self, session_id: str, protocol_version: str) -> None:
        """Send later requests in the existing session ``session_id`` (no
        ``initialize``)."""
        self.session_id = session_id
        self.protocol_version = protocol_version

    def use_sessions(self) -> None:
        """Speak a revision with sessions: no protocol version or routing headers until
        ``initialize`` (undoes :meth:`use_stateless`)."""
        self.session_id = None
        self.protocol_version = None
        self.routing_headers = False

    def use_stateless(self, protocol_version: str) -> None:
        """Speak a stateless revision: every request names ``protocol_version`` and
        carries the ``Mcp-Method``/``Mcp-Name`` routing headers; no session is used."""
        self.session_id = None
        self.protocol_version = protocol_version
        self.routing_headers = True

    async def _post(
        self,
        message: Mapping[str, Any],
        headers: Mapping[str, str],
        request_id: RequestId | None,
    ) -> dict[str, Any] | None:
        """POST one message; return the result matching ``request_id`` (``None`` when
        there is none)."""
        httpx = _httpx()
        try:
            async with self._client().stream(
                "POST", self._target(), json=message, headers=headers
            ) as response:
                session_id = response.headers.get("mcp-session-id")
                if session_id:
                    self.session_id = session_id
                content_type = response.headers.get("content-type", "")
                if content_type.startswith("text/event-stream"):
                    events = self._events(response)
                    async for incoming in events:
                        outcome = await self._handle(incoming, request_id)
                        if outcome is not None:
                            await self._read_to_end(events)
                            return outcome
                    if request_id is None:
                        return None
                    raise TransportError(
                        "the event stream ended before the response arrived"
                    )
                body = await response.aread()
                status = response.status_code
        except httpx.HTTPError as error:
            raise TransportError(f"HTTP transport failed: {error!r}") from error
        if not body.strip():
            if status >= 400:
                raise TransportError(f"HTTP {status} from {self.url}", status=status)
            return None
        try:
            decoded = json.loads(body)
        except ValueError as error:
            raise TransportError(
                f"HTTP {status}: body is not JSON", status=status
            ) from error
        for incoming in json_objects(decoded):
            outcome = await self._handle(incoming, request_id)
            if outcome is not None:
                return outcome
        if status >= 400:
            raise TransportError(self._failure(status, decoded), status=status)
        return None

    def headers_for(self, method: str, params: Mapping[str, Any]) -> dict[str, str]:
        """The headers :meth:`request` would send with ``method`` (session, protocol
        version and routing headers included)."""
        return self._message_headers(method, params)

    async def exchange(
        self, message: Mapping[str, Any], headers: Mapping[str, str]
    ) -> tuple[int, list[dict[str, Any]]]:
        """POST one message with exactly ``headers``; return the HTTP status and every
        JSON message of the answer (a JSON body or an SSE stream), without interpreting
        them.

        For tools that probe a server (the checker), e.g. with deliberately wrong
        routing headers."""
        httpx = _httpx()
        received: list[dict[str, Any]] = []
        try:
            async with self._client().stream(
                "POST", self.url, json=dict(message), headers=dict(headers)
            ) as response:
                status = response.status_code
                if response.headers.get("content-type", "").startswith(
                    "text/event-stream"
                ):
                    async for incoming in self._events(response):
                        received.append(incoming)
                        if "method" not in incoming:
                            break
                else:
                    body = await response.aread()
                    if body.strip():
                        try:
                            received = json_objects(json.loads(body))
                        except ValueError:
                            received = []
        except httpx.HTTPError as error:
            raise TransportError(f"HTTP transport failed: {error!r}") from error
        return status, received

    def _failure(self, status: int, decoded: object) -> str:
        """Describe an HTTP error whose body answers no request: its JSON-RPC error,
        and a hint."""
        text = f"HTTP {status} from {self.url}"
        for item in json_objects(decoded):
            error = json_object(item.get("error"))
            if error is not None:
                failure = JsonRpcError.from_wire(error)
                text += f": JSON-RPC error {failure.code}: {failure.message}"
                break
        if status == 400:
            text += revision_hint(self.protocol_version or "2025-11-25")
        return text

    async def _handle(
        self, incoming: dict[str, Any], request_id: RequestId | None
    ) -> dict[str, Any] | None:
        """Dispatch one incoming message; return the result when it answers
        ``request_id``."""
        if await self._dispatcher.route(incoming):
            return None
        if request_id is not None and incoming.get("id") == request_id:
            return response_outcome(incoming)
        return None

    async def _send_reply(self, reply: dict[str, Any]) -> bool:
        """POST the response to a server-to-client request; whether it got through."""
        try:
            await self._post(reply, self._base_headers(), None)
        except TransportError:
            return False
        return True

    async def _read_to_end(self, events: AsyncIterator[dict[str, Any]]) -> None:
        """Read the rest of an SSE response whose answer came (a server ends it right
        after), at most ``SSE_END_WAIT_S``: a response read to its end leaves its
        connection to the next requests, where one closed early closes it."""

        async def rest() -> None:
            async for incoming in events:
                await self._handle(incoming, None)

        # a server that keeps the stream open: it is closed after the wait, as before
        # (asyncio.TimeoutError: not yet the built-in one on Python 3.10)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(rest(), SSE_END_WAIT_S)

    async def _events(self, response: HttpResponse) -> AsyncIterator[dict[str, Any]]:
        """Yield the JSON messages of an SSE response, one per ``data`` event."""
        data: list[str] = []
        async for line in response.aiter_lines():
            if line == "":
                if data:
                    payload = "\n".join(data)
                    data = []
                    try:
                        decoded = json.loads(payload)
                    except ValueError:
                        continue
                    for item in json_objects(decoded):
                        yield item
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))

    async def _listen_get_stream(self, opened: asyncio.Event) -> None:
        """Read the session's GET event stream until the server refuses it or the
        transport closes; ``opened`` is set once the server answered the first GET (or
        it failed).
        """
        httpx = _httpx()
        try:
            while True:
                try:
                    async with self._client().stream(
                        "GET",
                        self.url,
                        headers={**self._base_headers(), "Accept": "text/event-stream"},
                    ) as response:
                        opened.set()
                        if response.status_code != 200:
                            return
                        async for incoming in self._events(response):
                            await self._handle(incoming, None)
                except httpx.HTTPError:
                    return
                await asyncio.sleep(1.0)
        finally:
            opened.set()

    async def aclose(self) -> None:
        """Stop background streams, end the session (if any) and close the HTTP
        client."""
        await self._dispatcher.cancel_background()
        if self._http is None:
            return
        if self.session_id is not None:
            httpx = _httpx()
            with contextlib.suppress(httpx.HTTPError):
                await self._http.delete(self.url, headers=self._base_headers())
            self.session_id = None
        if self._owns_http:
            await self._http.aclose()
            self._http = None
