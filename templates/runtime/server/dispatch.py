"""The JSON-RPC dispatcher: one incoming message checked (envelope, routing headers,
protocol version, capabilities, rate) and routed to the part that serves its method
(``Call`` is the request as the parts see it)."""

from __future__ import annotations

import base64
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    JsonRpcError,
    envelope_error,
)
from .info import Emit, HandlerContext, RequestInfo
from .limits import RateLimiter
from .sessions import Session
from .wire import json_size, request_params

if TYPE_CHECKING:
    from .host import Host

_log = logging.getLogger(__name__)


@dataclass(slots=True, kw_only=True)
class Call:
    """One incoming request as the dispatcher sees it.

    ``capabilities`` are the client's capabilities declared with this request (None:
    the session's count); ``tasks`` tells whether a task may answer it.
    """

    method: str
    params: dict[str, Any]
    request: RequestInfo
    principal: str | None
    emit: Emit | None
    request_id: Any
    session: Session | None = None
    capabilities: dict[str, Any] | None = None
    tasks: bool = True


Route = Callable[[Call], Awaitable[dict[str, Any]]]
"""Serves one method: the result object, or ``JsonRpcError``."""


NAMED_TARGETS: Mapping[str, str] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}
"""Core requests whose body names a target, by method: the params field that the
``Mcp-Name`` header mirrors (SEP-2243). The Tasks requests mirror ``taskId``."""


def decode_header(value: str, mismatch: int) -> str:
    """Decode the ``=?base64?...?=`` sentinel form of a routing header (a malformed one
    is the error ``mismatch``)."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except ValueError:  # not base64 (binascii.Error), not ASCII, not UTF-8
            raise JsonRpcError(
                mismatch, "Malformed base64 value in a routing header"
            ) from None
    return value


class Dispatcher:
    """Answers the JSON-RPC messages of one server: ``routes`` maps each method the
    runtime serves to the part that serves it (the revision's own methods, and each
    Tasks role the schema has); any other method goes to the ``custom_handlers``.

    ``rate_limiter`` is the server's hook, applied to the Tasks requests.
    """

    def __init__(self, host: Host, rate_limiter: RateLimiter | None = None) -> None:
        self.host = host
        self.rate_limiter = rate_limiter
        tables = host.tables
        self.routes: dict[str, Route] = {
            "ping": host.calls.ping,
            "tools/list": host.calls.tools_list,
            "tools/call": host.calls.call_tool,
        }
        if "SUBSCRIPTION_ID" in tables.meta_keys and tables.has_role("notify"):
            self.routes["subscriptions/listen"] = host.notifications.listen
        self.routes.update(host.revision_routes())
        by_role: dict[str, Route] = {
            "get": host.roles.tasks_get,
            "cancel": host.roles.tasks_cancel,
            "list": host.roles.tasks_list,
            "update": host.inputs.tasks_update,
            "result": host.inputs.tasks_result,
        }
        for role, route in by_role.items():
            if tables.has_role(role):  # a role the schema lacks is never served
                self.routes[tables.method(role)] = route
        self.prompt_methods: frozenset[str] = frozenset(
            {
                "ping",
                "tools/list",
                *(tables.method(r) for r in ("get", "cancel") if tables.has_role(r)),
            }
        )
        """Methods answered without waiting on a client, a tool or a task's progress:
        the HTTP transport awaits them directly, without watching for a disconnect."""
        self.stream_methods: frozenset[str] = frozenset(
            {"subscriptions/listen"} & set(self.routes)
        )
        """Methods answered only on a ``text/event-stream``: the HTTP transport refuses
        them (406) to a client whose ``Accept`` header does not take one."""

    async def handle(
        self,
        message: dict[str, Any],
        request: RequestInfo | None = None,
        emit: Emit | None = None,
    ) -> dict[str, Any] | None:
        """Answer one JSON-RPC message.

        Returns the response object, or None for notifications and for the client's
        responses to our requests. ``emit`` sends messages on the request's own
        response stream (input requests, progress, subscriptions).
        """
        invalid = envelope_error(message)
        if invalid is not None:
            return {"jsonrpc": "2.0", "id": None, "error": invalid.to_wire()}
        if "method" not in message:
            self.take_reply(message, request or RequestInfo())
            return None
        if "id" not in message:
            return None  # notifications (initialized, cancelled, ...) need no reply
        request_id = message.get("id")
        try:
            method = cast(str, message["method"])
            params = request_params(message)
            try:
                if request is None or not request.checked_json:
                    json_size(params)
            except (ValueError, RecursionError):
                raise JsonRpcError(
                    INVALID_PARAMS,
                    "params must be plain JSON (no NaN or Infinity, not nested too"
                    " deep)",
                ) from None
            request = request or RequestInfo()
            self.check_headers(method, params, request)
            call = self.begin(method, params, request, emit)
            call.request_id = request_id
            if method in self.host.tables.task_requests:
                self.check_rate(call.principal, method)
            route = self.routes.get(method)
            result = await (route(call) if route is not None else self.custom(call))
        except JsonRpcError as error:
            return {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}
        except Exception:  # a bug must yield an error response, not a dead stream
            _log.exception("internal error while handling %s", message.get("method"))
            internal = JsonRpcError(INTERNAL_ERROR, "Internal error")
            return {"jsonrpc": "2.0", "id": request_id, "error": internal.to_wire()}
        return {"jsonrpc": "2.0", "id": request_id, "result": self.respond(result)}

    def check_headers(
        self, method: str, params: dict[str, Any], request: RequestInfo
    ) -> None:
        """Streamable HTTP headers that mirror the body (SEP-2243):
        ``MCP-Protocol-Version`` (the ``_meta`` protocol version), ``Mcp-Method`` and,
        for a request that names a target, ``Mcp-Name`` (``NAMED_TARGETS``; ``taskId``
        for the Tasks requests).

        A header that is sent must match the body. Which must be sent follows
        ``require_routing_headers``: ``"core"`` all of them except ``Mcp-Name`` on the
        Tasks requests (the extension asks for it, but clients on ``mcp`` 2.3, such as
        fastmcp 4.1.4, leave it out), ``True`` all, ``False`` none. A missing or
        mismatched header is the error ``HEADER_MISMATCH`` (-32020, HTTP 400); it is
        checked before the protocol version, so a client whose header and body disagree
        is told so. Only where the revision's error codes have ``HEADER_MISMATCH`` (the
        revision defines the headers); elsewhere they are ignored like any other header.
        """
        mismatch = self.host.tables.error_codes.get("HEADER_MISMATCH")
        headers = request.headers
        if mismatch is None or headers is None:
            return
        required = self.host.require_routing_headers
        version_key = self.host.tables.meta_keys.get("PROTOCOL_VERSION")
        meta = params.get("_meta")
        version = (
            cast(dict[str, Any], meta).get(version_key)
            if version_key is not None and isinstance(meta, dict)
            else None
        )
        if isinstance(version, str):  # else the envelope check refuses it (-32602)
            header_version = headers.get("mcp-protocol-version")
            if header_version is None and required:
                raise JsonRpcError(
                    mismatch,
                    f"Missing MCP-Protocol-Version header (expected {version!r})",
                )
            if header_version is not None and header_version.strip() != version:
                raise JsonRpcError(
                    mismatch,
                    f"MCP-Protocol-Version header {header_version!r} does not match"
                    f" the body's protocol version {version!r}",
                )
        header_method = headers.get("mcp-method")
        if header_method is None:
            if required:
                raise JsonRpcError(
                    mismatch, f"Missing Mcp-Method header (expected {method!r})"
                )
        elif decode_header(header_method.strip(), mismatch) != method:
            raise JsonRpcError(
                mismatch,
                f"Mcp-Method header {header_method!r} does not match the body's"
                f" method {method!r}",
            )
        tasks = self.host.tables.task_requests
        field = "taskId" if method in tasks else NAMED_TARGETS.get(method)
        if field is None:
            return
        header_name = headers.get("mcp-name")
        if header_name is None:
            if params.get(field) is not None and (
                required is True or (required and method not in tasks)
            ):
                raise JsonRpcError(
                    mismatch, f"Missing Mcp-Name header (the body's {field})"
                )
            return
        if decode_header(header_name.strip(), mismatch) != params.get(field):
            raise JsonRpcError(
                mismatch, f"Mcp-Name header does not match the body's {field}"
            )

    def begin(
        self,
        method: str,
        params: dict[str, Any],
        request: RequestInfo,
        emit: Emit | None,
    ) -> Call:
        """Check a request's envelope and build its ``Call``.

        Where the schema has ``_meta`` keys for the protocol version and the client
        capabilities, every request must carry both, and only its own capabilities
        count (``request_meta``). The call gets the session it names (if
        ``initialize`` opened one). Where Tasks are an extension (the tables'
        ``extension_id``), a task may answer only a request that declared it, and a
        Tasks request that did not is refused (``Host.tasks_not_declared``).
        """
        declared = self.request_meta(params)
        call = Call(
            method=method,
            params=params,
            request=request,
            principal=self.host.principal(request),
            emit=emit,
            request_id=None,
            capabilities=declared,
        )
        call.session = self.host.sessions.get(request.session_id or "")
        if call.session is not None:
            self.host.sessions.touch(call.session)
        tables = self.host.tables
        if tables.is_extension:
            counted = declared
            if counted is None:
                counted = call.session.client_capabilities if call.session else {}
            call.tasks = tables.extension_id in (counted.get("extensions") or {})
            if method in tables.task_requests and not call.tasks:
                raise self.host.tasks_not_declared(method)
        return call

    def request_meta(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """The client capabilities declared in a request's ``_meta``, after checking
        its protocol version; None where the schema has no such keys (the session's
        capabilities count)."""
        version_key = self.host.tables.meta_keys.get("PROTOCOL_VERSION")
        capabilities_key = self.host.tables.meta_keys.get("CLIENT_CAPABILITIES")
        if version_key is None or capabilities_key is None:
            return None
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            raise JsonRpcError(
                INVALID_PARAMS,
                f"params._meta with {version_key!r} and {capabilities_key!r} is"
                " required",
            )
        meta = cast(dict[str, Any], meta)
        version = meta.get(version_key)
        capabilities = meta.get(capabilities_key)
        if not isinstance(version, str) or not isinstance(capabilities, dict):
            raise JsonRpcError(
                INVALID_PARAMS,
                f"params._meta must carry {version_key!r} (string) and"
                f" {capabilities_key!r} (object)",
            )
        supported = self.host.tables.protocol_version
        if version != supported:
            raise JsonRpcError(
                self.host.tables.error_codes.get(
                    "UNSUPPORTED_PROTOCOL_VERSION", INVALID_PARAMS
                ),
                f"Unsupported protocol version {version!r}",
                {"supported": [supported], "requested": version},
            )
        return cast(dict[str, Any], capabilities)

    def respond(self, result: dict[str, Any]) -> dict[str, Any]:
        """Last touch on every result: the server's name and version in ``_meta``
        where the schema has a key for them."""
        key = self.host.tables.meta_keys.get("SERVER_INFO")
        if key is not None:
            meta = dict(result.get("_meta") or {})
            meta[key] = {"name": self.host.name, "version": self.host.version}
            result["_meta"] = meta
        return result

    async def custom(self, call: Call) -> dict[str, Any]:
        """Serve ``method`` with its registered handler, or answer ``-32601``.

        A method of the schema that the runtime has no role for is served only once a
        handler is registered (``server.TasksServer.on_<method>``); until then it is
        "Method not found", as for a method the schema does not have.
        """
        handler = self.host.custom_handlers.get(call.method)
        if handler is None:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {call.method}")
        try:
            return await handler(
                call.params,
                HandlerContext(principal=call.principal, request=call.request),
            )
        except ValueError as error:  # pydantic's ValidationError of the params
            raise JsonRpcError(
                INVALID_PARAMS, f"Invalid params for {call.method}: {error}"
            ) from None

    def take_reply(self, message: dict[str, Any], request: RequestInfo) -> bool:
        """Deliver the client's response to the request that awaits it.

        Only the principal the request was sent to, through a session it was sent on,
        may answer it; any other reply is ignored (and audited) without touching the
        waiting request. Returns whether the reply was taken.
        """
        request_id = message.get("id")
        pending = self.host.replies.get(request_id)
        if pending is None or pending.reply.done():
            return False
        try:
            principal = self.host.principal(request)
        except JsonRpcError:
            principal = None
            allowed = False
        else:
            allowed = principal == pending.principal
        if not allowed or request.session_id not in pending.sessions:
            self.host.emit_audit(
                "reply_rejected",
                None,
                principal,
                f"a reply to {pending.method} from another session or principal",
            )
            return False
        self.host.replies.settle(pending, message)
        return True

    def check_rate(self, principal: str | None, method: str) -> None:
        """Apply the rate limiter hook, if any."""
        if self.rate_limiter is not None and not self.rate_limiter(principal, method):
            raise JsonRpcError(
                self.host.limits.limit_error_code,
                f"Rate limit exceeded for {method}; slow down to the task's poll"
                " interval",
            )
