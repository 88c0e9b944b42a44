"""One server for every revision a package carries: one endpoint, one set of tools, one
store.

``DualServer`` builds one server per revision (the subclass names their classes in
``servers``) on the same task store and the same tools, and routes each request to the
revision it belongs to:

* a request naming a session (``Mcp-Session-Id``), and ``initialize``, go to the
  revision with sessions (2025-11-25), as do the GET stream and DELETE;
* every other request goes to the stateless revision (the Tasks extension), which
  reads the protocol version and capabilities from the request's own ``_meta``.

A task belongs to the principal that created it, whichever revision it came through:
a task created through one revision is visible through the other only to the same
principal (with ``authenticate``, the same identity; without it every caller of either
revision is the one anonymous principal, as in a server of one revision). A
cancellation or status change made through one revision reaches the other's worker and
subscribers (the servers are each other's ``siblings``); input requests are answered
through the revision that created the task.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypedDict, cast

from typing_extensions import Unpack

from ..stores import SQLiteTaskStore, TaskStore
from .core import TaskServerCore
from .executor import Executor
from .info import AuditHook, Authenticate, Emit, RequestInfo, RoutingHeaders
from .limits import Limits, RateLimiter
from .tools import Tool, ToolRegistrar

__all__ = ["DualServer", "ServerOptions"]


class ServerOptions(TypedDict, total=False):
    """The keyword options of every revision's server (``TaskServerCore``; see the
    revision's ``TasksServer`` for what each does) besides ``store`` and
    ``recover_orphans``, as the dual server takes them: a misspelt one is a type
    error."""

    limits: Limits | None
    authenticate: Authenticate | None
    rate_limiter: RateLimiter | None
    audit: AuditHook | None
    instructions: str | None
    enable_list: bool | None
    page_size: int
    task_mismatch_code: int
    max_sessions: int
    max_sessions_per_client: int
    session_idle_s: float
    require_routing_headers: RoutingHeaders
    executor: Executor | None


class DualServer(ToolRegistrar):
    """Serves every revision of the package on one endpoint (see the module docstring).

    The options are those of each revision's ``TasksServer`` (:class:`ServerOptions`;
    a revision ignores the options of another); ``store`` (default
    ``SQLiteTaskStore("mcp-tasks.sqlite3")``) and the tools are shared, and orphans of
    a crash are recovered once.
    """

    servers: ClassVar[dict[str, type[TaskServerCore]]]
    """Each revision's server class, by revision id (set by a subclass, or given by
    its ``revision_servers``)."""

    @classmethod
    def revision_servers(cls) -> dict[str, type[TaskServerCore]]:
        """Each revision's server class, by revision id: ``servers`` (the generated
        subclass imports them here instead, when the first server is built)."""
        return dict(cls.servers)

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        store: TaskStore | None = None,
        recover_orphans: bool = True,
        **options: Unpack[ServerOptions],
    ) -> None:
        self.store: TaskStore = (
            store if store is not None else SQLiteTaskStore("mcp-tasks.sqlite3")
        )
        self.by_revision: dict[str, TaskServerCore] = {}
        """Each revision's server, by revision id (for revision-only settings and
        handlers)."""
        for index, (revision, server_class) in enumerate(
            self.revision_servers().items()
        ):
            server = server_class(
                name,
                version,
                store=self.store,
                recover_orphans=recover_orphans and index == 0,
                **options,
            )
            if self.by_revision:
                server.share_tools(next(iter(self.by_revision.values())))
            self.by_revision[revision] = server
        for server in self.by_revision.values():
            server.siblings = [s for s in self.by_revision.values() if s is not server]
            server.owns_store = False
        first = next(iter(self.by_revision.values()))
        self.session_server: TaskServerCore | None = next(
            (s for s in self.by_revision.values() if s.uses_sessions), None
        )
        """The revision with sessions (``initialize``, GET stream, DELETE), if any."""
        self.stateless_server: TaskServerCore = next(
            (s for s in self.by_revision.values() if not s.uses_sessions), first
        )
        """The revision every request without a session goes to."""

    def add_tool(self, tool: Tool) -> None:
        """Register ``tool`` for every revision."""
        self.stateless_server.add_tool(tool)

    @property
    def tools(self) -> list[Tool]:
        """The registered tools, in registration order."""
        return self.stateless_server.tools

    def server_for(self, headers: Mapping[str, str], message: Any) -> TaskServerCore:
        """The revision's server that answers ``message`` sent with ``headers``
        (lower-case names): sessions and ``initialize`` go to the revision with
        sessions."""
        sessions = self.session_server
        if sessions is not None and (
            "mcp-session-id" in headers
            or (
                isinstance(message, dict)
                and cast(dict[str, Any], message).get("method") == "initialize"
            )
        ):
            return sessions
        return self.stateless_server

    async def handle(
        self,
        message: dict[str, Any],
        info: RequestInfo | None = None,
        emit: Emit | None = None,
    ) -> dict[str, Any] | None:
        """Answer one JSON-RPC message in process (as ``TasksServer.handle``): a request
        of a session (``info.session_id``) goes to the revision with sessions."""
        if info is not None and info.session_id is not None and self.session_server:
            return await self.session_server.handle(message, info, emit)
        headers = (info.headers or {}) if info is not None else {}
        server = self.server_for(headers, message)
        return await server.handle(message, info, emit)

    async def start(self) -> None:
        """Start every revision's server (the store opens once)."""
        for server in self.by_revision.values():
            await server.start()

    async def close(self) -> None:
        """Close every revision's server (each fails its running tasks in the store),
        then the shared store."""
        for server in self.by_revision.values():
            await server.close()
        await self.store.close()

    async def __aenter__(self) -> DualServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
