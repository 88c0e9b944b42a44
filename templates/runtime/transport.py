"""Transports that carry JSON-RPC messages between the tasks client and a server.

The client core only needs the small :class:`Transport` protocol: send a request and get
its result (or a :class:`JsonRpcError`), send a notification, and hand incoming
notifications and server-to-client requests to the handlers the client installs.

Two implementations ship here:

* :class:`HttpTransport`: MCP streamable HTTP over ``httpx`` (an optional dependency,
  imported when the transport is built: without it, building one raises
  ``ModuleNotFoundError`` saying ``pip install httpx``). JSON and SSE responses are both
  accepted; server-to-client requests arriving on any SSE stream are answered by POST.
  It serves both kinds of MCP connection. With a session (2025-11-25), the
  ``Mcp-Session-Id`` from the ``initialize`` response is sent on every later request,
  and a GET event stream is opened after ``notifications/initialized`` so that messages
  the server sends outside of any request (such as task status notifications) arrive;
  sending that notification waits until the server answered the GET (at most
  ``GET_STREAM_WAIT_S``), so nothing sent for the next requests finds no stream.
  Stateless (2026-07-28, set up by the client with :meth:`HttpTransport.use_stateless`),
  every request carries the ``Mcp-Protocol-Version``, ``Mcp-Method`` and (where the
  method has one) ``Mcp-Name`` routing headers.
* :class:`StdioTransport`: newline-delimited JSON-RPC over a subprocess's stdin/stdout.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib
import importlib.util
import json
import sys
from collections import OrderedDict
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Mapping,
    Sequence,
)
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, cast, runtime_checkable

from .jsonrpc import INTERNAL_ERROR as INTERNAL_ERROR
from .jsonrpc import INVALID_PARAMS as INVALID_PARAMS
from .jsonrpc import INVALID_REQUEST as INVALID_REQUEST
from .jsonrpc import METHOD_NOT_FOUND as METHOD_NOT_FOUND
from .jsonrpc import PARSE_ERROR as PARSE_ERROR
from .jsonrpc import JsonRpcError as JsonRpcError
from .jsonrpc import RequestId as RequestId
from .jsonrpc import json_object as json_object

if TYPE_CHECKING:
    import httpx

__all__ = [
    "HttpTransport",
    "JsonRpcError",
    "NotificationHandler",
    "RequestHandler",
    "RequestId",
    "SessionTransport",
    "StdioTransport",
    "Transport",
    "TransportError",
    "json_object",
    "header_value",
    "revision_hint",
]

GET_STREAM_WAIT_S = 5.0
"""How long ``notifications/initialized`` waits for the server to answer the session's
GET stream before the client goes on without it."""

SSE_END_WAIT_S = 0.05
"""How long a request whose answer came on an SSE stream waits for the server to end
the stream (which keeps the connection for the next requests) before closing it."""


NotificationHandler: TypeAlias = Callable[[str, dict[str, Any]], Awaitable[None]]
"""Called with ``(method, params)`` for every notification the server sends."""

RequestHandler: TypeAlias = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Called with ``(method, params)`` for every request the server sends; returns the
result or raises :class:`JsonRpcError` to answer with an error response."""


_NAME_PARAMS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


def revision_hint(version: str) -> str:
    """The note added to an error a server of another revision may have caused: which
    revision this client speaks, and what to do about it."""
    return (
        f" (this client speaks MCP {version}; the server may speak another"
        " revision: use the package generated for that one)"
    )


def _json_objects(value: object) -> list[dict[str, Any]]:
    """The JSON objects in a decoded message or batch (other items are skipped)."""
    items = cast("list[object]", value) if isinstance(value, list) else [value]
    return [
        item for item in (json_object(entry) for entry in items) if item is not None
    ]


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


async def _ignore_notification(method: str, params: dict[str, Any]) -> None:
    """Default notification handler: drop the message."""


async def _refuse_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Default request handler: answer ``-32601``."""
    raise JsonRpcError(-32601, f"Method not found: {method}")


def _response_outcome(message: dict[str, Any]) -> dict[str, Any]:
    """Return the result of a JSON-RPC response or raise its error."""
    error = json_object(message.get("error"))
    if error is not None:
        raise JsonRpcError.from_wire(error)
    result = json_object(message.get("result"))
    if result is None:
        raise TransportError("response without a result object")
    return result


_ANSWERED_KEPT = 4096
"""How many server-to-client request IDs a transport remembers, so that a request the
server delivers again (on another stream, say) is answered once."""


class _Dispatcher:
    """Routes incoming messages to the installed handlers; shared by both transports.

    Each server-to-client request ID is answered once, however often the request
    arrives (a server may send a pending request again on each new stream): the
    handler runs once, and a copy that arrives later is dropped, unless the reply
    could not be delivered, which is then sent again instead.
    """

    def __init__(
        self, send_reply: Callable[[dict[str, Any]], Coroutine[Any, Any, bool]]
    ) -> None:
        """``send_reply`` sends a response to the server; False: it was not
        delivered."""
        self.on_notification: NotificationHandler = _ignore_notification
        self.on_request: RequestHandler = _refuse_request
        self.background: set[asyncio.Task[None]] = set()
        self._send_reply = send_reply
        self._answered: OrderedDict[str, dict[str, Any] | None] = OrderedDict()
        """Request IDs seen (JSON text), latest last: None while the handler runs or
        once its reply was delivered, else the reply to send again."""

    async def route(self, incoming: dict[str, Any]) -> bool:
        """Handle ``incoming`` when it is a notification or a request; return whether it
        was one.

        A notification is handed to the handler before this returns (so order is kept);
        a request is answered in the background through the transport's reply function,
        once per request ID.
        """
        method = incoming.get("method")
        if not isinstance(method, str):
            return False
        if "id" in incoming:
            key = json.dumps(incoming["id"])
            if key not in self._answered:
                self._answered[key] = None
                if len(self._answered) > _ANSWERED_KEPT:
                    self._answered.popitem(last=False)
                self.spawn(self._respond(key, incoming))
            else:
                undelivered = self._answered[key]
                if undelivered is not None:
                    self._answered[key] = None
                    self.spawn(self._deliver(key, undelivered))
        else:
            await self.on_notification(
                method, json_object(incoming.get("params")) or {}
            )
        return True

    async def _respond(self, key: str, incoming: dict[str, Any]) -> None:
        """Answer a request seen for the first time."""
        await self._deliver(key, await self.answer(incoming))

    async def _deliver(self, key: str, reply: dict[str, Any]) -> None:
        """Send ``reply``; keep it to send again when it did not get through."""
        delivered = False
        try:
            delivered = await self._send_reply(reply)
        finally:
            if not delivered and key in self._answered:
                self._answered[key] = reply

    def spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        """Run ``coroutine`` in the background, keeping a reference until it ends."""
        task = asyncio.ensure_future(coroutine)
        self.background.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        """Forget a finished background task; an answer that could not be delivered (the
        connection closed, for example on Ctrl-C) is dropped instead of being
        reported as "Task exception was never retrieved"."""
        self.background.discard(task)
        if not task.cancelled():
            task.exception()

    async def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        """Run the request handler for ``message`` and build the JSON-RPC response."""
        params = json_object(message.get("params")) or {}
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message.get("id")}
        try:
            reply["result"] = await self.on_request(str(message["method"]), params)
        except JsonRpcError as error:
            reply["error"] = error.to_wire()
        except Exception as error:  # a handler bug must still produce a response
            reply["error"] = {
                "code": -32603,
                "message": f"Client handler failed: {error}",
            }
        return reply

    async def cancel_background(self) -> None:
        """Cancel and await every background task."""
        tasks = list(self.background)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


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


def _require_httpx() -> None:
    """Import ``httpx`` now, so that its absence is reported where the transport is
    built."""
    try:
        importlib.import_module("httpx")
    except ImportError as error:
        raise ModuleNotFoundError(
            "HttpTransport needs the httpx package: pip install httpx", name="httpx"
        ) from error


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
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        """Prepare the transport; no connection is made until the first message.

        Raises ``ModuleNotFoundError`` naming the package to install when ``httpx`` is
        missing.
        """
        if http_client is None:
            _require_httpx()
        _note_sniffio_absent()
        self.url = url
        self._parsed: tuple[str, httpx.URL] | None = None
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._http = http_client
        self._owns_http = http_client is None
        self._dispatcher = _Dispatcher(self._send_reply)
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

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            import httpx

            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(self._timeout, read=None)
            )
        return self._http

    def _target(self) -> httpx.URL:
        """``url``, parsed once (httpx parses a string again for every request)."""
        import httpx

        if self._parsed is None or self._parsed[0] != self.url:
            self._parsed = (self.url, httpx.URL(self.url))
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
        import httpx

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
        for incoming in _json_objects(decoded):
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
        import httpx

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
                            received = _json_objects(json.loads(body))
                        except ValueError:
                            received = []
        except httpx.HTTPError as error:
            raise TransportError(f"HTTP transport failed: {error!r}") from error
        return status, received

    def _failure(self, status: int, decoded: object) -> str:
        """Describe an HTTP error whose body answers no request: its JSON-RPC error,
        and a hint."""
        text = f"HTTP {status} from {self.url}"
        for item in _json_objects(decoded):
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
            return _response_outcome(incoming)
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

    async def _events(self, response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
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
                    for item in _json_objects(decoded):
                        yield item
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))

    async def _listen_get_stream(self, opened: asyncio.Event) -> None:
        """Read the session's GET event stream until the server refuses it or the
        transport closes; ``opened`` is set once the server answered the first GET (or
        it failed).
        """
        import httpx

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
            import httpx

            with contextlib.suppress(httpx.HTTPError):
                await self._http.delete(self.url, headers=self._base_headers())
            self.session_id = None
        if self._owns_http:
            await self._http.aclose()
            self._http = None


class StdioTransport:
    """Newline-delimited JSON-RPC over the standard streams of a server subprocess."""

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """Remember how to start the server; it is started on the first message."""
        self.command = command
        self.args = list(args)
        self.env = dict(env) if env is not None else None
        self._process: asyncio.subprocess.Process | None = None
        self._pending: dict[RequestId, asyncio.Future[dict[str, Any]]] = {}
        self._dispatcher = _Dispatcher(self._send_reply)
        self._reader: asyncio.Task[None] | None = None

    def set_handlers(
        self, on_notification: NotificationHandler, on_request: RequestHandler
    ) -> None:
        """Install the callbacks for server notifications and server-to-client
        requests."""
        self._dispatcher.on_notification = on_notification
        self._dispatcher.on_request = on_request

    async def _started(self) -> asyncio.subprocess.Process:
        if self._process is None:
            self._process = await asyncio.create_subprocess_exec(
                self.command,
                *self.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=self.env,
            )
            self._reader = asyncio.ensure_future(self._read(self._process))
        return self._process

    async def _write(self, message: Mapping[str, Any]) -> None:
        process = await self._started()
        if process.stdin is None:
            raise TransportError("the server's stdin is closed")
        process.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        await process.stdin.drain()

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        """Read messages from the server until its stdout closes."""
        assert process.stdout is not None
        while line := await process.stdout.readline():
            try:
                decoded = json.loads(line)
            except ValueError:
                continue
            for incoming in _json_objects(decoded):
                if await self._dispatcher.route(incoming):
                    continue
                request_id = incoming.get("id")
                waiter = (
                    self._pending.pop(request_id, None)
                    if isinstance(request_id, (str, int))
                    else None
                )
                if waiter is not None and not waiter.done():
                    waiter.set_result(incoming)
        for waiter in self._pending.values():
            if not waiter.done():
                waiter.set_exception(TransportError("the server closed its stdout"))
        self._pending.clear()

    async def _send_reply(self, reply: dict[str, Any]) -> bool:
        """Write the response to a server-to-client request."""
        await self._write(reply)
        return True

    async def request(
        self, request_id: RequestId, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Write a request and wait for the response with the same ID."""
        waiter: asyncio.Future[dict[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )
        self._pending[request_id] = waiter
        try:
            await self._write(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            return _response_outcome(await waiter)
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Write a notification."""
        await self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def aclose(self) -> None:
        """Close the server's stdin, wait briefly for it to exit, then stop it."""
        await self._dispatcher.cancel_background()
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5.0)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
