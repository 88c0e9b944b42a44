"""One client for every revision a package carries: it finds out which one a server
speaks.

``DualClient`` takes an endpoint (a URL or a transport) and drives the client of the
revision the server speaks, among the revisions the package carries (the generated
subclass names each revision's client class in ``revision_clients``). Detection asks
``server/discover``, the discovery request of a stateless revision: a server that
answers it speaks a stateless revision (the first one whose protocol version the answer
lists); one that refuses it (a 2025-11-25 server answers an error, often HTTP 400 for
the missing session) gets the client of the first revision with sessions, whose
``initialize`` follows. The answer is remembered per endpoint
URL for the life of the process, so detection costs at most one round trip per
endpoint and none after it (clients opened at the same time to a new endpoint share one
question). A server that does not answer (the connection fails, HTTP 5xx) says nothing
about its revision: the error is raised and nothing is remembered. ``revision=`` pins a
revision and skips detection.

The same code works against either revision: ``call_tool`` and ``resume`` return the
tool's :class:`ToolResult` (as every client does), ``start_tool`` and ``task`` return a
:class:`DualHandle` whose ``result()`` does the same, and input handlers, durable task
IDs and cancellation are those of the revision's client.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, Generic, cast

from typing_extensions import TypeVar, Unpack

from ..jsonrpc import JsonRpcError
from ..protocol import (
    CallToolParams,
    CancelTaskParams,
    GetTaskParams,
    InputHandlers,
    SchemaNotification,
    TaskSnapshot,
    TaskState,
)
from ..revision import RevisionTables, choose_revision
from ..task_ids import SqliteTaskIdStore, StoredTask, TaskIdStore
from .core import ClientCore, ClientOptions
from .handle import StatusCallback, TaskHandle
from .http import HttpTransport
from .notifications import NotificationCallback, ProgressCallback
from .tool_result import ToolResult
from .transport import Transport, TransportError

__all__: list[str] = [
    "DualClient",
    "DualHandle",
    "detected_revisions",
    "forget_detected",
]

_DETECTED: dict[str, str] = {}
"""Endpoint URL -> the revision its server was found to speak (this process)."""

_DETECTING: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[str, asyncio.Lock]
] = weakref.WeakKeyDictionary()
"""Event loop -> endpoint URL -> the lock held while one client asks that endpoint."""


def _detection_lock(endpoint: str) -> asyncio.Lock:
    """The lock of ``endpoint`` in the running event loop (a lock belongs to one
    loop)."""
    locks = _DETECTING.setdefault(asyncio.get_running_loop(), {})
    return locks.setdefault(endpoint, asyncio.Lock())


def _refused(error: JsonRpcError | TransportError) -> bool:
    """Whether ``server/discover`` failed because the server refused it (a JSON-RPC
    error or an HTTP 4xx answer), rather than because no answer came."""
    if isinstance(error, JsonRpcError):
        return True
    return error.status is not None and 400 <= error.status < 500


def detected_revisions() -> dict[str, str]:
    """What detection found so far: endpoint URL -> revision id (a copy)."""
    return dict(_DETECTED)


def forget_detected(endpoint: str | None = None) -> None:
    """Forget what detection found for ``endpoint`` (every endpoint when None), so the
    next client to it asks ``server/discover`` again (after a server was replaced)."""
    if endpoint is None:
        _DETECTED.clear()
    else:
        _DETECTED.pop(endpoint, None)


S = TypeVar("S", default=dict[str, Any] | None)
"""The type of a result's ``structured`` content: a call's ``result_type``, else the
``structuredContent`` object as received (see :class:`ToolResult`)."""


class DualHandle(Generic[S]):
    """A task handle whose ``result()`` is the tool's :class:`ToolResult` in any
    revision."""

    def __init__(self, handle: TaskHandle[S]) -> None:
        self.handle = handle
        """The revision client's handle."""

    @property
    def task_id(self) -> str | None:
        """The task's ID (None when the server answered without a task)."""
        return self.handle.task_id

    @property
    def task(self) -> TaskSnapshot | None:
        """The latest snapshot of the task."""
        return self.handle.task

    @property
    def done(self) -> bool:
        """Whether the outcome is known."""
        return self.handle.done

    async def result(
        self, timeout: float | None = None, on_status: StatusCallback | None = None
    ) -> ToolResult[S]:
        """Wait for the task and return its :class:`ToolResult` (see
        ``TaskHandle.result``)."""
        return await self.handle.result(timeout=timeout, on_status=on_status)

    def snapshots(self, *, timeout: float | None = None) -> AsyncIterator[TaskSnapshot]:
        """Every new snapshot of the task until it ends (see
        ``TaskHandle.snapshots``)."""
        return self.handle.snapshots(timeout=timeout)

    def notifications(self) -> AsyncIterator[SchemaNotification]:
        """The schema's notifications naming the task (see
        ``TaskHandle.notifications``)."""
        return self.handle.notifications()

    async def cancel(self, **params: Unpack[CancelTaskParams]) -> TaskState | None:
        """Ask the server to cancel the task (see ``TaskHandle.cancel``); ``params``
        that the server's revision has no such param of are not sent."""
        own = own_params(self.handle.client.tables, "cancel", params)
        return await self.handle.cancel(**own)


P = TypeVar("P", CallToolParams, CancelTaskParams, GetTaskParams)
"""The keyword arguments of a call of the dual client (a params ``TypedDict``)."""


def own_params(tables: RevisionTables, role: str, params: P) -> P:
    """The ``params`` of the request of ``role`` that the revision of ``tables`` has
    (the package's params cover every revision; each revision sends its own)."""
    names = tables.extra_params.get(role, ())
    own = {k: v for k, v in params.items() if k in names}
    return cast(P, own)


class DualClient:
    """A Tasks client that speaks whichever revision of the package the server speaks.

    ``endpoint`` is the server's MCP URL or a transport (``HttpTransport``,
    ``StdioTransport``); ``revision`` pins one of the package's revision ids; every
    other option is passed to the revision's client (``store``, input handlers, poll
    and TTL settings, ``subscribe``, ...; a revision ignores the options of another).
    """

    clients: ClassVar[Mapping[str, type[ClientCore[Any]]]] = {}
    """Each revision's client class, by revision id, for a subclass that names them
    here rather than in :meth:`revision_clients`."""

    @classmethod
    def revision_clients(cls) -> Mapping[str, type[ClientCore[Any]]]:
        """Each revision's client class, by revision id, in the order detection
        prefers them (the generated subclass names the package's revisions)."""
        return cls.clients

    def __init__(
        self,
        endpoint: str | Transport,
        *,
        revision: str | None = None,
        input_handlers: InputHandlers | None = None,
        on_notification: NotificationCallback | None = None,
        **options: Unpack[ClientOptions],
    ) -> None:
        """``input_handlers`` and ``on_notification`` (typed by the package's
        ``protocol``: every revision's input methods and notifications) and the other
        ``options`` go to the revision's client."""
        if revision is not None and revision not in self.revision_clients():
            known = ", ".join(self.revision_clients())
            raise ValueError(
                f"unknown revision {revision!r} (this package has {known})"
            )
        self.transport: Transport = (
            HttpTransport(endpoint) if isinstance(endpoint, str) else endpoint
        )
        self.pinned = revision
        self.store: TaskIdStore = options.pop("store", None) or SqliteTaskIdStore()
        """Where task IDs are kept until their task ends (shared by the revisions)."""
        passed: dict[str, Any] = dict(options)
        if input_handlers is not None:
            passed["input_handlers"] = input_handlers
        if on_notification is not None:
            passed["on_notification"] = on_notification
        self.options = passed
        self._client: ClientCore[Any] | None = None

    # -- which revision -------------------------------------------------------------

    @property
    def revision(self) -> str | None:
        """The revision in use (None until :meth:`open` or :meth:`rejoin`)."""
        return self._client.tables.revision if self._client is not None else None

    @property
    def client(self) -> ClientCore[Any]:
        """The revision's client in use (after :meth:`open`), for revision-only
        calls."""
        if self._client is None:
            raise RuntimeError("the client is not open: use 'async with' or open()")
        return self._client

    def _endpoint(self) -> str | None:
        return self.transport.url if isinstance(self.transport, HttpTransport) else None

    def _revisions(self, *, stateless: bool) -> list[str]:
        """The revisions whose clients are stateless (or use sessions), in order."""
        clients = self.revision_clients()
        return [r for r, c in clients.items() if c.tables.stateless == stateless]

    def _build(self, revision: str) -> ClientCore[Any]:
        client_class = self.revision_clients()[revision]
        if (
            isinstance(self.transport, HttpTransport)
            and not client_class.tables.stateless
        ):
            self.transport.use_sessions()
        self._client = client_class(self.transport, store=self.store, **self.options)
        return self._client

    async def detect(self) -> str:
        """The revision the server speaks: pinned, remembered for the endpoint, or asked
        with one ``server/discover`` (which the extension's client keeps using).

        Raises the transport's error, remembering nothing, when the server gives no
        answer (the connection fails, HTTP 5xx).
        """
        if self.pinned is not None:
            return self.pinned
        endpoint = self._endpoint()
        if endpoint is None:
            return await self._ask()
        async with _detection_lock(endpoint):
            found = _DETECTED.get(endpoint)
            if found is None:
                found = _DETECTED[endpoint] = await self._ask()
            return found

    async def _ask(self) -> str:
        """Send ``server/discover`` with the first stateless revision's client: an
        answer means the newest stateless revision whose protocol version it lists
        (``supportedVersions``, see ``revision.choose_revision``; the first stateless
        one when it lists none of them), a
        refusal the first revision with sessions. Nothing is asked when the revisions
        are all of one kind and the answer could not choose among them."""
        stateless = self._revisions(stateless=True)
        sessions = self._revisions(stateless=False)
        if not stateless or (not sessions and len(stateless) == 1):
            return next(iter(self.revision_clients()))
        probe = self._build(stateless[0])
        try:
            found = await probe.request("server/discover", {})
        except (JsonRpcError, TransportError) as error:
            if not (_refused(error) and sessions):
                self._client = None  # nothing found out: the next open() asks again
                raise
            return sessions[0]
        clients = self.revision_clients()
        chosen = choose_revision(
            [clients[r].tables for r in stateless], found, stateless=True
        )
        return chosen.revision if chosen is not None else stateless[0]

    def _use(self, revision: str) -> ClientCore[Any]:
        """The client of ``revision``: the one in use when it is that revision's."""
        if self._client is not None and self._client.tables.revision == revision:
            return self._client
        return self._build(revision)

    async def open(self) -> None:
        """Detect the revision (unless known) and open its client (``initialize`` for
        2025-11-25, unless :meth:`rejoin` joined a session)."""
        if self._client is None:
            self._use(await self.detect())
        await self.client.open()

    async def rejoin(self, task_id: str) -> StoredTask | None:
        """Prepare to resume ``task_id`` after a restart, instead of :meth:`open`.

        A task stored with its session (2025-11-25) rejoins that session with the
        client of the first revision with sessions; any other is resumed with the
        detected revision's client. Returns the stored entry, if any.
        """
        sessions = self._revisions(stateless=False)
        entry = await self.store.get(task_id)
        if sessions and entry is not None and "session" in entry.context:
            client = self._use(sessions[0])
        else:
            client = self._use(await self.detect())
        rejoin = getattr(client, "rejoin", None)
        if rejoin is not None:
            await rejoin(task_id)
        else:
            await client.open()
        return entry

    async def aclose(self) -> None:
        """Close the revision's client (its subscriptions left to end, see
        ``ClientCore.drain_listen``) and the transport."""
        if self._client is not None:
            await self._client.aclose()
        else:
            await self.transport.aclose()

    async def __aenter__(self) -> DualClient:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- the calls of every revision --------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result_type: type[S] | None = None,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
        on_progress: ProgressCallback | None = None,
        **params: Unpack[CallToolParams],
    ) -> ToolResult[S]:
        """Call a tool and return its :class:`ToolResult`, task or not (``structured``
        validated into ``result_type`` when given); ``on_progress`` gets the call's
        ``notifications/progress``; ``params``: the call's params of the schema (those
        of the server's revision are sent)."""
        client = self.client
        return await client.call_tool(
            name,
            arguments,
            result_type=result_type,
            timeout=timeout,
            on_status=on_status,
            on_progress=on_progress,
            **own_params(client.tables, "create", params),
        )

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result_type: type[S] | None = None,
        on_progress: ProgressCallback | None = None,
        **params: Unpack[CallToolParams],
    ) -> DualHandle[S]:
        """Send ``tools/call`` and return a handle without waiting for the task."""
        client = self.client
        handle = await client.start_tool(
            name,
            arguments,
            result_type=result_type,
            on_progress=on_progress,
            **own_params(client.tables, "create", params),
        )
        return DualHandle(handle)

    def task(
        self, task_id: str, *, result_type: type[S] | None = None
    ) -> DualHandle[S]:
        """A handle for an existing task (fetched on first use)."""
        return DualHandle(self.client.task(task_id, result_type=result_type))

    async def resume(
        self,
        task_id: str,
        *,
        result_type: type[S] | None = None,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> ToolResult[S]:
        """Continue waiting for a task created earlier and return its
        :class:`ToolResult`."""
        handle = self.task(task_id, result_type=result_type)
        return await handle.result(timeout=timeout, on_status=on_status)

    async def get_task(
        self, task_id: str, **params: Unpack[GetTaskParams]
    ) -> TaskState:
        """The task's current state."""
        client = self.client
        return await client.get_task(
            task_id, **own_params(client.tables, "get", params)
        )

    async def cancel_task(
        self, task_id: str, **params: Unpack[CancelTaskParams]
    ) -> TaskState | None:
        """Ask the server to cancel the task."""
        client = self.client
        return await client.cancel_task(
            task_id, **own_params(client.tables, "cancel", params)
        )

    async def pending_tasks(self) -> list[StoredTask]:
        """The stored tasks not yet seen terminal."""
        return await self.client.pending_tasks()

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's tools (``tools/list``, every page)."""
        return await self.client.list_tools()
