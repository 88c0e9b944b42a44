"""``TaskServerCore``: the revision-neutral server, made of parts that each hold their
own state (``sessions``, ``lifecycle``, ``inputs``, ``replicas``, ...), wired here.

The revision adapters (``rev_2025``, ``rev_ext``) subclass it and override its hooks
(``revision_routes``, ``tasks_not_declared``, ``listing``, ``failed_result``) where
their revision differs outside the tables. Every part sees the server only through
``host.Host``.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any, ClassVar, TypeVar, cast

from typing_extensions import Unpack

from ..jsonrpc import INVALID_REQUEST, LIMIT_EXCEEDED, METHOD_NOT_FOUND, JsonRpcError
from ..protocol import TaskFields
from ..revision import RevisionTables
from ..stores import (
    ReplicaStore,
    SQLiteTaskStore,
    TaskChanges,
    TaskRecord,
    TaskStore,
)
from .calls import ToolCalls
from .dispatch import Dispatcher, Route
from .executor import Executor, InProcessExecutor
from .info import (
    AuditEvent,
    AuditHook,
    Authenticate,
    CustomHandler,
    Emit,
    RequestInfo,
    RoutingHeaders,
)
from .inputs import InputRequests
from .lifecycle import Lifecycle
from .limits import Limits, RateLimiter
from .replicas import Replicas
from .replies import Replies
from .roles import TaskRoles
from .sessions import Session, SessionRegistry
from .subscriptions import Notifications
from .tools import Tool, ToolContext, ToolRegistrar, ToolRegistry
from .views import TaskViews

_Server = TypeVar("_Server", bound="TaskServerCore")


class TaskServerCore(ToolRegistrar):
    """The revision-neutral server: tools, store, limits, sessions, task lifecycle,
    input requests, replicas and the dispatcher, each a part with its own state
    (``registry``, ``sessions``, ``lifecycle``, ``inputs``, ``replicas``,
    ``dispatcher``, ...), serving the mechanism of each Tasks role the revision's
    tables name.

    ``uses_sessions`` (the revision's tables: not ``stateless``) tells the HTTP app
    whether ``initialize`` opens a session that later requests must name
    (2025-11-25) or every request stands alone (extension).

    Options of one revision (the other ignores them): sessions (2025-11-25) -
    ``max_sessions`` open at once, ``max_sessions_per_client`` per principal (or, when
    anonymous, per client address), ``session_idle_s`` after which an unused session
    with no open stream is closed to make room; ``task_mismatch_code`` for a
    ``params.task`` the tool's ``taskSupport`` does not allow.
    ``require_routing_headers`` (a revision with routing headers: the extension; see
    ``Dispatcher.check_headers``): ``"core"`` (default) refuses a request without the
    ``MCP-Protocol-Version`` and ``Mcp-Method`` headers, or without ``Mcp-Name`` where
    the core names a target (``tools/call``, ``prompts/get``, ``resources/read``);
    ``True`` also a Tasks request (``tasks/get``, ...) without ``Mcp-Name``; ``False``
    none (for clients older than the headers). ``enable_list``
    (default: whether ``authenticate`` is set) and ``page_size`` serve the list role
    (``tasks/list``) wherever the schema has it. ``executor`` runs the tools of tasks
    (default ``InProcessExecutor``: in this process; see ``server.executor``).
    """

    tables: ClassVar[RevisionTables]
    """The revision's protocol tables (set by the revision's server class)."""

    @property
    def uses_sessions(self) -> bool:
        """Whether ``initialize`` opens a session (the revision is not stateless)."""
        return not self.tables.stateless

    cancel_message: ClassVar[str] = "Cancelled by request"
    """The ``statusMessage`` of a task cancelled through ``tasks/cancel``."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        store: TaskStore | None = None,
        limits: Limits | None = None,
        authenticate: Authenticate | None = None,
        rate_limiter: RateLimiter | None = None,
        audit: AuditHook | None = None,
        instructions: str | None = None,
        recover_orphans: bool = True,
        enable_list: bool | None = None,
        page_size: int = 50,
        task_mismatch_code: int = METHOD_NOT_FOUND,
        max_sessions: int = 10_000,
        max_sessions_per_client: int = 64,
        session_idle_s: float = 3_600.0,
        require_routing_headers: RoutingHeaders = "core",
        executor: Executor | None = None,
    ) -> None:
        """Configure the server (see the class docstring of the revision's server for
        the options); nothing runs until :meth:`start`."""
        self.name = name
        self.version = version
        self.store: TaskStore = (
            store if store is not None else SQLiteTaskStore("mcp-tasks.sqlite3")
        )
        self.limits = limits if limits is not None else Limits()
        self.instructions = instructions
        self.recover_orphans = recover_orphans
        self.enable_list = (
            authenticate is not None if enable_list is None else enable_list
        )
        self.page_size = page_size
        # options of one revision (the other ignores them)
        self.task_mismatch_code = task_mismatch_code
        self.require_routing_headers: RoutingHeaders = require_routing_headers
        self.sessions = SessionRegistry(
            lambda: self.limits,
            max_sessions=max_sessions,
            max_sessions_per_client=max_sessions_per_client,
            session_idle_s=session_idle_s,
        )
        """The open sessions by id, least recently used first (``touch_session``)."""
        self._authenticate = authenticate
        self._audit = audit
        self._started = False
        self.owns_store = True
        """Whether ``close`` closes the store (a dual server closes its shared one
        itself, after every revision's server stopped)."""
        self.siblings: list[TaskServerCore] = []
        """Servers of the other revisions on this store in this process (a dual server):
        they get this server's signals (cancellations, status changes) directly."""
        self.custom_handlers: dict[str, CustomHandler] = {}
        """Handlers of methods the runtime has no role for, by method name."""
        self.registry = ToolRegistry()
        self.replies = Replies(self.tables.models, self.tables.inputs)
        self.views = TaskViews(self)
        self.lifecycle = Lifecycle(self)
        self.replicas = Replicas(self)
        self.notifications = Notifications(self)
        self.inputs = InputRequests(self)
        self.calls = ToolCalls(self)
        self.roles = TaskRoles(self)
        self.dispatcher = Dispatcher(self, rate_limiter)
        self.executor: Executor = (
            executor if executor is not None else InProcessExecutor()
        )
        """Runs the tools of this server's tasks: in this process (the default), or
        in worker processes (``server.celery_executor.CeleryExecutor``); see
        ``server.executor``."""
        self.executor.bind(self)
        self.setup()

    def setup(self) -> None:
        """Revision hook run at the end of ``__init__`` (state of its own)."""

    # -- the revision's hooks (the adapters override these) ---------------------

    def revision_routes(self) -> dict[str, Route]:
        """Methods of the revision that play no Tasks role, by name."""
        return {}

    def tasks_not_declared(self, detail: str) -> JsonRpcError:
        """The error for ``detail`` (a Tasks request, a task-only tool, ...) in a
        request that did not declare the Tasks extension; the revision's adapter
        words it."""
        return JsonRpcError(
            self.tables.error_codes.get(
                "MISSING_REQUIRED_CLIENT_CAPABILITY", INVALID_REQUEST
            ),
            f"{detail} needs the {self.tables.extension_id} extension declared",
        )

    def listing(self, tools: list[dict[str, Any]]) -> dict[str, Any]:
        """The ``tools/list`` result."""
        return {"tools": tools}

    def failed_result(self, result: dict[str, Any]) -> bool:
        """Whether a tool's ``CallToolResult`` fails its task (else it completes)."""
        return False

    # -- settings and what the parts share --------------------------------------

    @property
    def started(self) -> bool:
        """Whether the server is serving (between ``start`` and ``close``)."""
        return self._started

    @property
    def replica_id(self) -> str:
        """Names this process in worker leases and signals to other replicas."""
        return self.replicas.replica_id

    @property
    def max_sessions(self) -> int:
        """How many sessions may be open at once (``sessions.max_sessions``)."""
        return self.sessions.max_sessions

    @property
    def max_sessions_per_client(self) -> int:
        """How many sessions one principal or client address may have open."""
        return self.sessions.max_sessions_per_client

    @property
    def session_idle_s(self) -> float:
        """After how long unused a session may be closed to make room."""
        return self.sessions.session_idle_s

    @property
    def prompt_methods(self) -> frozenset[str]:
        """Methods answered without waiting on a client, a tool or a task's progress:
        the HTTP transport awaits them directly, without watching for a disconnect."""
        return self.dispatcher.prompt_methods

    @property
    def stream_methods(self) -> frozenset[str]:
        """Methods answered only on a ``text/event-stream``: the HTTP transport refuses
        them (406) to a client whose ``Accept`` header does not take one."""
        return self.dispatcher.stream_methods

    def principal(self, request: RequestInfo) -> str | None:
        """The caller's principal, from the ``authenticate`` hook."""
        if self._authenticate is None:
            return request.principal
        return self._authenticate(request)

    def emit_audit(
        self, action: str, task_id: str | None, principal: str | None, detail: str = ""
    ) -> None:
        """Send one event to the audit hook, if any."""
        if self._audit is not None:
            self._audit(
                AuditEvent(
                    action=action, task_id=task_id, principal=principal, detail=detail
                )
            )

    async def published(self, record: TaskRecord) -> None:
        """Called after every stored change (here, or told by a replica or a sibling):
        wake the task's result-role waiters and held ``tasks/get`` calls, and send its
        new state to whoever hears of it (``Notifications.published``)."""
        self.inputs.changed(record.task_id)
        self.roles.changed(record.task_id)
        await self.executor.published(self, record)  # before the session is dropped
        await self.notifications.published(record)

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
        return await self.dispatcher.handle(message, request, emit)

    # -- sessions (revisions with ``initialize``) -------------------------------

    def open_session(
        self, owner: str | None = None, principal: str | None = None
    ) -> Session:
        """Start a session for an ``initialize`` request, counted against ``owner``
        (and opened by ``principal``): see ``SessionRegistry.open`` for its limits."""
        return self.sessions.open(owner, principal)

    def open_session_for(self, request: RequestInfo) -> Session:
        """``open_session`` for the caller of ``request``: its principal, or its client
        address when it has none. Raises ``JsonRpcError`` when authentication or the
        session limits refuse it."""
        principal = self.principal(request)
        owner = self.sessions.owner(principal, request.client)
        return self.open_session(owner, principal)

    def session_for(self, request: RequestInfo) -> Session | None:
        """The session ``request.session_id`` names, if the caller of ``request`` owns
        it (the principal that opened it; for an anonymous session, the same client
        address); None for an unknown session and for another caller's, which is
        audited (``session_refused``). Raises ``JsonRpcError`` when authentication
        refuses the request."""
        session = self.sessions.get(request.session_id or "")
        if session is None or session.owner is None:
            return session
        principal = self.principal(request)
        if self.sessions.owner(principal, request.client) != session.owner:
            self.emit_audit(
                "session_refused", None, principal, "a session another caller opened"
            )
            return None
        return session

    def touch_session(self, session: Session) -> None:
        """Record that ``session`` is used now (it becomes the most recently used)."""
        self.sessions.touch(session)

    def close_session(self, session_id: str) -> None:
        """End a session and its streams (its tasks live on)."""
        self.sessions.close(session_id)

    def stream_opened(
        self,
        session: Session,
        stream: asyncio.Queue[dict[str, Any] | None] | None = None,
    ) -> None:
        """Called by the HTTP app once a GET stream of ``session`` is open (``stream``;
        None: any of its streams): see ``InputRequests.stream_opened``."""
        self.inputs.stream_opened(session, stream)

    def stream_closed(self, session: Session, unsent: list[dict[str, Any]]) -> None:
        """Called by the HTTP app when a GET stream of ``session`` ended before it
        sent the messages ``unsent`` (see ``InputRequests.stream_closed``)."""
        self.inputs.stream_closed(session, unsent)

    # -- what tools ask of their server (``ToolContext``) -------------------------

    async def request_input(
        self, ctx: ToolContext, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Ask the client for input mid-flight and wait for the answer (see
        ``InputRequests.request_input``: the mechanism follows the schema's roles)."""
        return await self.inputs.request_input(ctx, method, params)

    async def wait_for_input(
        self, task_id: str, key: str, request: dict[str, Any]
    ) -> dict[str, Any]:
        """Publish one input request under ``key`` in the task's ``inputRequests`` and
        wait for its answer through the update role (``InputRequests.wait_for_input``).
        """
        return await self.inputs.wait_for_input(task_id, key, request)

    async def send_progress(
        self,
        ctx: ToolContext,
        progress: float,
        total: float | None,
        message: str | None,
    ) -> None:
        """``notifications/progress`` of a tool (see ``Notifications.progress``)."""
        await self.notifications.progress(ctx, progress, total, message)

    async def set_task_fields(self, task_id: str, fields: TaskFields) -> None:
        """Store values of ``protocol.TaskFields`` on a live task, by wire name."""
        await self.lifecycle.set_fields(task_id, fields)

    async def move_task(
        self, task_id: str, **changes: Unpack[TaskChanges]
    ) -> TaskRecord | None:
        """Apply ``changes`` (``status``, ``status_message``, ...) to a live task
        through the state machine; None when it is gone or terminal (see
        ``Lifecycle.update``)."""
        return await self.lifecycle.update(task_id, **changes)

    async def set_status_message(self, task_id: str, message: str) -> None:
        """Set a live task's ``statusMessage`` (ignored once it is terminal)."""
        await self.lifecycle.update(task_id, status_message=message)

    # -- server-to-client requests ----------------------------------------------

    def settle_reply(self, message: dict[str, Any]) -> None:
        """Resolve the request ``message`` answers, when the carrier already vouches for
        its sender (an SDK session the request was sent on); unknown IDs are ignored."""
        self.replies.settle_reply(message)

    async def request_on_stream(
        self,
        emit: Emit,
        method: str,
        params: dict[str, Any],
        *,
        principal: str | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Send a request on a response stream and wait for the (checked) reply.

        Only ``principal`` answering through session ``session_id`` settles it.
        """
        return await self.replies.request_on_stream(
            emit, method, params, principal=principal, session_id=session_id
        )

    # -- registration -----------------------------------------------------------

    def add_tool(self, tool: Tool) -> None:
        """Register a tool (replacing one with the same name)."""
        self.registry.add(tool)

    @property
    def tools(self) -> list[Tool]:
        """The registered tools, in registration order."""
        return self.registry.tools

    def share_tools(self, other: TaskServerCore) -> None:
        """Serve the tools of ``other``, now and as it registers more (one set of tools
        for the servers of several revisions)."""
        self.registry = other.registry

    # -- lifecycle --------------------------------------------------------------

    async def start(self) -> None:
        """Open the store, fail tasks orphaned by a crash and start the TTL sweeper.

        With a ``ReplicaStore`` (several replicas sharing one store), orphans are the
        unfinished tasks whose worker lease ran out; they are failed now and whenever
        the periodic lease check finds more, and the server subscribes to the other
        replicas' signals. With any other store, orphans are every unfinished task,
        which is right when this process is the store's only server; with
        ``recover_orphans=False`` they are left alone.
        """
        if self._started:
            return
        self._started = True
        await self.store.open()
        store = self.store
        if isinstance(store, ReplicaStore):
            await self.replicas.start(store)
        elif self.recover_orphans:
            await self.lifecycle.recover()
        self.lifecycle.start_sweeper()

    async def close(self) -> None:
        """Stop the sweeper and every worker, then close the store (if ``owns_store``).

        Every worker is stopped at once (it sees ``CancelledError``; a tool that
        returns its result even so completes its task) and given
        ``lifecycle.CLOSE_WORKERS_S`` to end. The tasks still unfinished are then
        marked ``failed`` ("Server shut down before the task finished"), so that no
        task is left ``working`` with nobody to finish it: in one write where the
        store has ``transition_many`` (the memory and SQLite stores), else one by one.
        That takes at most ``lifecycle.CLOSE_FAILING_S``: a task not failed by then (a
        slow or unreachable store) stays unfinished, to be failed by the next start on a
        store of its own (``recover_orphans``) or by another replica's lease check
        on a shared one (``Limits.lease_s``).
        """
        if not self._started:
            return
        self._started = False
        await self.replicas.stop()
        await self.lifecycle.stop()
        self.sessions.close_all()  # ends every session's streams
        self.inputs.close()  # wakes every result-role waiter
        self.roles.close()  # answers every held tasks/get
        self.notifications.close()  # ends every subscription gracefully
        if self.owns_store:
            await self.store.close()

    async def __aenter__(self: _Server) -> _Server:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def fail_lost_tasks(self) -> list[str]:
        """Fail every unfinished task whose worker lease ran out; return their IDs (see
        ``Replicas.fail_lost_tasks``; only a ``ReplicaStore`` has leases)."""
        return await self.replicas.fail_lost_tasks()

    async def purge_expired(self) -> list[str]:
        """Delete every task whose TTL has elapsed (stopping its worker); return their
        IDs (see ``Lifecycle.purge_expired``)."""
        return await self.lifecycle.purge_expired()

    def http_status(self, code: int) -> int:
        """The HTTP status the revision gives an error response with ``code`` (its
        ``http_statuses`` table; 200 for a code it does not list). A refused limit
        (``limits.limit_error_code``, whatever it is set to) has the status of
        ``LIMIT_EXCEEDED``: 429 where the revision lists it."""
        if code == self.limits.limit_error_code:
            code = LIMIT_EXCEEDED
        return self.tables.http_statuses.get(code, 200)

    def mount(self, sdk_server: Any) -> None:
        """Serve the tools and the Tasks methods from an official SDK's low-level
        ``Server``: ``mcp`` 2.x for the Tasks extension, ``mcp`` 1.x for 2025-11-25
        (see ``sdk.mount`` for what each hosts). The SDK is imported here, never at
        import time."""
        sdk: Any = importlib.import_module("..sdk", __package__)
        sdk.mount(self, sdk_server)

    def capabilities(self) -> dict[str, Any]:
        """The server capabilities: a fixed tool list, the Tasks extension where
        Tasks are one (the tables' ``extension_id``), and the path of each role the
        tables' ``server_capabilities`` lists wherever this server serves that role
        (``serves``)."""
        declared: dict[str, Any] = {"tools": {"listChanged": False}}
        if self.tables.is_extension:
            declared["extensions"] = {self.tables.extension_id: {}}
        for role, path in self.tables.server_capabilities.items():
            if self.serves(role):
                node = declared
                for key in path:
                    node = node.setdefault(key, {})
        return declared

    def serves(self, role: str) -> bool:
        """Whether this server serves ``role``: ``create`` while some tool may run as a
        task; a method's role where the schema has it (``list`` with ``enable_list``).
        """
        if role == "create":
            return self.registry.any_task_capable()
        return self.tables.has_role(role) and (role != "list" or self.enable_list)

    def declares(self, role: str) -> bool:
        """Whether ``capabilities()`` declares ``role`` (True for a role the tables list
        no capability for)."""
        node: Any = self.capabilities()
        for key in self.tables.server_capabilities.get(role, ()):
            if not isinstance(node, dict) or key not in node:
                return False
            node = cast(dict[str, Any], node)[key]
        return True
