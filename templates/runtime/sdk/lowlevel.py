"""The low-level seam: :func:`mount` serves a ``TasksServer``'s tools and Tasks methods
from an official SDK's low-level ``Server`` (``mcp`` 2.x for the Tasks extension,
``mcp`` 1.x for 2025-11-25); ``TasksServer.mount`` calls it. What it uses of the SDK's
``Server`` is typed by the protocols :class:`LowlevelServer2` and
:class:`LowlevelServer1`, which the SDK classes satisfy."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, cast

from ..server_core import (
    Emit,
    RequestInfo,
    Session,
    TaskServerCore,
    http_headers,
)
from .shared import module, raise_sdk_error, wire

__all__ = ["LowlevelServer1", "LowlevelServer2", "mount"]


class LowlevelServer2(Protocol):
    """What :func:`mount` uses of an ``mcp`` 2.x low-level ``Server``
    (``mcp.server.lowlevel.Server`` satisfies it)."""

    @property
    def extensions(self) -> dict[str, dict[str, Any]]:
        """Extension identifier -> settings advertised by ``server/discover``."""
        ...

    @property
    def middleware(self) -> list[Any]:
        """The request middleware, outermost first."""
        ...

    lifespan: Callable[[Any], AbstractAsyncContextManager[Any]]
    """Called with the server; its context spans the server's run."""


class LowlevelServer1(Protocol):
    """What :func:`mount` (and ``fastmcp_tasks``) use of an ``mcp`` 1.x low-level
    ``Server`` (``mcp.server.lowlevel.Server``, a ``FastMCP`` app's ``_mcp_server``,
    satisfies it)."""

    @property
    def request_handlers(self) -> dict[Any, Any]:
        """``mcp.types`` request class -> async handler."""
        ...

    @property
    def request_context(self) -> Any:
        """The context of the request being handled."""
        ...

    def get_capabilities(
        self, notification_options: Any, experimental_capabilities: Any
    ) -> Any:
        """The server's ``ServerCapabilities``."""
        ...


_SDK1_REQUESTS = (
    ("tools/list", "ListToolsRequest", "ListToolsResult"),
    ("tools/call", "CallToolRequest", "CallToolResult"),
    ("tasks/get", "GetTaskRequest", "GetTaskResult"),
    ("tasks/result", "GetTaskPayloadRequest", "GetTaskPayloadResult"),
    ("tasks/list", "ListTasksRequest", "ListTasksResult"),
    ("tasks/cancel", "CancelTaskRequest", "CancelTaskResult"),
)
"""``mcp`` 1.x: method, ``mcp.types`` request class and result class of each request a
mounted server may answer (those the revision has, and the tool methods)."""

_SDK1_INPUT_RESULTS = {
    "elicitation/create": "ElicitResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
}
"""``mcp`` 1.x: the ``mcp.types`` result class of each server-to-client request."""


def mount(
    server: TaskServerCore, sdk_server: LowlevelServer2 | LowlevelServer1
) -> None:
    """Serve ``server``'s tools and Tasks methods from an official SDK's low-level
    ``Server`` (``TasksServer.mount``).

    The SDK is told by the object: ``mcp`` 2.x (``Server.middleware``) hosts the Tasks
    extension, ``mcp`` 1.x (``Server.request_handlers``) hosts 2025-11-25, whose core
    protocol it speaks.

    On ``mcp`` 2.x (the Tasks extension), a ``Server.middleware`` entry answers
    ``tools/list``, ``tools/call`` and ``tasks/*`` through ``handle`` (with the HTTP
    headers, so routing headers and ``authenticate`` work), the SDK's
    ``server/discover`` advertises the extension, and the SDK server's lifespan
    starts and closes this server; everything else stays with the SDK. Needs
    ``mcp>=2.3``.

    On ``mcp`` 1.x (2025-11-25), request handlers answer ``tools/list``,
    ``tools/call`` and the ``tasks/*`` requests through ``handle``, and the SDK's
    capabilities gain ``tasks``. Input requests of a task travel on the pending
    ``tasks/result`` response stream, as the SDK's ``related_request_id`` routes
    them. The SDK runs its lifespan once per session, so start and close this
    server in the application's lifespan (for example next to
    ``StreamableHTTPSessionManager.run()``). Needs ``mcp>=1.23,<2``.
    """
    extension = server.tables.is_extension
    if hasattr(sdk_server, "middleware") and extension:
        _mount_sdk2(server, cast(LowlevelServer2, sdk_server))
    elif hasattr(sdk_server, "request_handlers") and not extension:
        _mount_sdk1(server, cast(LowlevelServer1, sdk_server))
    else:
        raise RuntimeError(
            f"cannot mount an MCP {server.tables.protocol_version} server into"
            f" {type(sdk_server).__name__}: the Tasks extension needs an mcp 2.x"
            " Server, 2025-11-25 an mcp 1.x Server"
        )


def _mount_sdk2(server: TaskServerCore, sdk_server: LowlevelServer2) -> None:
    """``mcp`` 2.x: a middleware answers ``tools/*`` and ``tasks/*`` through ``handle``.

    The SDK's ``server/discover`` advertises the extension; its lifespan starts and
    closes ``server``. Every other method stays with the SDK.
    """
    mcp_error: Any = getattr(module("mcp.shared.exceptions"), "MCPError")
    sdk_server.extensions[server.tables.extension_id] = {}

    async def middleware(ctx: Any, call_next: Any) -> Any:
        method = str(ctx.method)
        ours = method in ("tools/list", "tools/call") or method.startswith("tasks/")
        if ctx.request_id is None or not ours:
            return await call_next(ctx)
        message = {
            "jsonrpc": "2.0",
            "id": ctx.request_id,
            "method": method,
            "params": dict(ctx.params or {}),
        }
        response = await server.handle(message, RequestInfo(headers=http_headers(ctx)))
        if response is None:
            return None
        if "error" in response:
            raise_sdk_error(response["error"], mcp_error)
        return response["result"]

    sdk_server.middleware.insert(0, middleware)
    sdk_lifespan = sdk_server.lifespan

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncGenerator[Any, None]:
        async with server, sdk_lifespan(app) as state:
            yield state

    sdk_server.lifespan = lifespan


def _mount_sdk1(server: TaskServerCore, sdk_server: LowlevelServer1) -> None:
    """``mcp`` 1.x: request handlers answer through ``handle``; capabilities gain
    ``tasks``.

    A task's input requests travel on the pending ``tasks/result`` response stream, as
    the SDK's ``related_request_id`` routes them; each SDK session is one session here.
    """
    types: Any = module("mcp.types")
    mcp_error: Any = getattr(module("mcp.shared.exceptions"), "McpError")
    metadata_type: Any = getattr(module("mcp.shared.message"), "ServerMessageMetadata")
    sessions: weakref.WeakKeyDictionary[Any, Session] = weakref.WeakKeyDictionary()
    relays: set[asyncio.Task[None]] = set()
    """Requests on their way to the client (held here: the loop keeps tasks weakly)."""

    def our_session(sdk_session: Any) -> Session:
        session = sessions.get(sdk_session)
        if session is None or session.id not in server.sessions:
            session = server.open_session()
            params = sdk_session.client_params
            if params is not None:
                session.client_capabilities = wire(params.capabilities)
            sessions[sdk_session] = session
        return session

    def emitter(ctx: Any) -> Emit:
        related = metadata_type(related_request_id=ctx.request_id)

        async def relay(message: dict[str, Any]) -> None:
            try:
                request = types.ServerRequest.model_validate(
                    {"method": message["method"], "params": message["params"]}
                )
                result_type = getattr(types, _SDK1_INPUT_RESULTS[message["method"]])
                result = await ctx.session.send_request(
                    request, result_type, metadata=related
                )
                reply: dict[str, Any] = {"id": message["id"], "result": wire(result)}
            except mcp_error as error:
                failure = {"code": error.error.code, "message": error.error.message}
                reply = {"id": message["id"], "error": failure}
            server.settle_reply(reply)

        async def emit(message: dict[str, Any]) -> None:
            if "id" in message:  # a request: its reply arrives later
                task = asyncio.get_running_loop().create_task(relay(message))
                relays.add(task)
                task.add_done_callback(relays.discard)
            else:
                notification = types.ServerNotification.model_validate(
                    {"method": message["method"], "params": message["params"]}
                )
                await ctx.session.send_notification(
                    notification, related_request_id=ctx.request_id
                )

        return emit

    def handler_for(result_name: str) -> Callable[[Any], Awaitable[Any]]:
        async def answer(request: Any) -> Any:
            ctx = sdk_server.request_context
            message = wire(request)
            message.update(jsonrpc="2.0", id=ctx.request_id)
            info = RequestInfo(
                headers=http_headers(ctx), session_id=our_session(ctx.session).id
            )
            response = await server.handle(message, info, emitter(ctx))
            if response is None or "error" in response:
                error = (response or {}).get("error") or {
                    "code": -32603,
                    "message": "No response",
                }
                raise mcp_error(types.ErrorData.model_validate(error))
            result = response["result"]
            name = "CreateTaskResult" if "task" in result else result_name
            return types.ServerResult(getattr(types, name).model_validate(result))

        return answer

    for method, request_name, result_name in _SDK1_REQUESTS:
        if method.startswith("tools/") or method in server.tables.methods:
            handler = handler_for(result_name)
            sdk_server.request_handlers[getattr(types, request_name)] = handler
    sdk_capabilities = sdk_server.get_capabilities

    def get_capabilities(*args: Any, **kwargs: Any) -> Any:
        capabilities = sdk_capabilities(*args, **kwargs)
        declared = server.capabilities().get("tasks", {})
        capabilities.tasks = types.ServerTasksCapability.model_validate(declared)
        return capabilities

    patched: Any = sdk_server  # the bound method is replaced on this instance
    patched.get_capabilities = get_capabilities
