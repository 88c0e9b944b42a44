"""One client for every revision a package carries: it finds out which one a server
speaks.

``DualClient`` takes an endpoint (a URL or a transport) and drives the client of the
revision the server speaks (the generated subclass names each revision's client class
in ``clients``). Detection asks ``server/discover``, the stateless revision's discovery
request: a server that answers it speaks the Tasks extension; one that refuses it (a
2025-11-25 server answers an error, often HTTP 400 for the missing session) gets the
2025-11-25 client, whose ``initialize`` follows. The answer is remembered per endpoint
URL for the life of the process, so detection costs at most one round trip per
endpoint and none after it (clients opened at the same time to a new endpoint share one
question). A server that does not answer (the connection fails, HTTP 5xx) says nothing
about its revision: the error is raised and nothing is remembered. ``revision=`` pins a
revision and skips detection.

The same code works against either revision: ``call_tool`` and ``resume`` return the
tool's ``CallToolResult`` as a JSON object, ``start_tool`` and ``task`` return a
:class:`DualHandle` whose ``result()`` does the same, and input handlers, durable task
IDs and cancellation are those of the revision's client.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar

from . import client_core
from .client_core import *  # noqa: F403 - the shared public names (errors, handles)
from .client_core import (
    ClientCore,
    ProgressCallback,
    StatusCallback,
    TaskHandle,
    answer_to_wire,
)
from .protocol import REVISIONS, TaskSnapshot, TaskState
from .task_ids import SqliteTaskIdStore, StoredTask, TaskIdStore
from .transport import HttpTransport, JsonRpcError, Transport, TransportError

__all__: list[str] = [
    "DualClient",
    "DualHandle",
    "detected_revisions",
    "forget_detected",
]
__all__ += client_core.__all__

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


class DualHandle:
    """A task handle whose ``result()`` is the ``CallToolResult`` JSON object in any
    revision."""

    def __init__(self, handle: TaskHandle[Any]) -> None:
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
    ) -> dict[str, Any]:
        """Wait for the task and return its ``CallToolResult`` (see
        ``TaskHandle.result``)."""
        return answer_to_wire(
            await self.handle.result(timeout=timeout, on_status=on_status)
        )

    def snapshots(self, *, timeout: float | None = None) -> AsyncIterator[TaskSnapshot]:
        """Every new snapshot of the task until it ends (see
        ``TaskHandle.snapshots``)."""
        return self.handle.snapshots(timeout=timeout)

    async def cancel(self) -> TaskState | None:
        """Ask the server to cancel the task (see ``TaskHandle.cancel``)."""
        return await self.handle.cancel()


class DualClient:
    """A Tasks client that speaks whichever revision of the package the server speaks.

    ``endpoint`` is the server's MCP URL or a transport (``HttpTransport``,
    ``StdioTransport``); ``revision`` pins a revision id of ``REVISIONS``; every other
    option is passed to the revision's client (``store``, input handlers, poll and TTL
    settings, ``subscribe``, ...; a revision ignores the options of another).
    """

    clients: ClassVar[dict[str, type[ClientCore[Any]]]]
    """Each revision's client class, by revision id (set by the generated subclass)."""

    def __init__(
        self,
        endpoint: str | Transport,
        *,
        revision: str | None = None,
        **options: Any,
    ) -> None:
        if revision is not None and revision not in self.clients:
            known = ", ".join(self.clients)
            raise ValueError(
                f"unknown revision {revision!r} (this package has {known})"
            )
        self.transport: Transport = (
            HttpTransport(endpoint) if isinstance(endpoint, str) else endpoint
        )
        self.pinned = revision
        self.store: TaskIdStore = options.pop("store", None) or SqliteTaskIdStore()
        """Where task IDs are kept until their task ends (shared by the revisions)."""
        self.options = options
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

    def _stateless(self) -> str | None:
        return next((r for r, t in REVISIONS.items() if t.extension_id), None)

    def _with_sessions(self) -> str | None:
        return next((r for r, t in REVISIONS.items() if not t.extension_id), None)

    def _build(self, revision: str) -> ClientCore[Any]:
        if (
            isinstance(self.transport, HttpTransport)
            and not REVISIONS[revision].extension_id
        ):
            self.transport.use_sessions()
        self._client = self.clients[revision](
            self.transport, store=self.store, **self.options
        )
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
        """Send ``server/discover``: answered means the extension, refused
        2025-11-25."""
        stateless, sessions = self._stateless(), self._with_sessions()
        if stateless is None or sessions is None:
            return next(iter(self.clients))
        probe = self._build(stateless)
        try:
            await probe.request("server/discover", {})
        except (JsonRpcError, TransportError) as error:
            if not _refused(error):
                self._client = None  # nothing found out: the next open() asks again
                raise
            return sessions
        return stateless

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

        A task stored with its 2025-11-25 session rejoins that session; any other is
        resumed with the detected revision's client. Returns the stored entry, if any.
        """
        sessions = self._with_sessions()
        entry = await self.store.get(task_id)
        if sessions is not None and entry is not None and "session" in entry.context:
            client = self._use(sessions)
        else:
            client = self._use(await self.detect())
        rejoin = getattr(client, "rejoin", None)
        if rejoin is not None:
            await rejoin(task_id)
        else:
            await client.open()
        return entry

    async def aclose(self) -> None:
        """Close the transport."""
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
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """Call a tool and return its ``CallToolResult`` object, task or not;
        ``on_progress`` gets the call's ``notifications/progress``."""
        result = await self.client.call_tool(
            name,
            arguments,
            timeout=timeout,
            on_status=on_status,
            on_progress=on_progress,
        )
        return answer_to_wire(result)

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
    ) -> DualHandle:
        """Send ``tools/call`` and return a handle without waiting for the task."""
        handle = await self.client.start_tool(name, arguments, on_progress=on_progress)
        return DualHandle(handle)

    def task(self, task_id: str) -> DualHandle:
        """A handle for an existing task (fetched on first use)."""
        return DualHandle(self.client.task(task_id))

    async def resume(
        self,
        task_id: str,
        *,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> dict[str, Any]:
        """Continue waiting for a task created earlier and return its result object."""
        return await self.task(task_id).result(timeout=timeout, on_status=on_status)

    async def get_task(self, task_id: str) -> TaskState:
        """The task's current state."""
        return await self.client.get_task(task_id)

    async def cancel_task(self, task_id: str) -> TaskState | None:
        """Ask the server to cancel the task."""
        return await self.client.cancel_task(task_id)

    async def pending_tasks(self) -> list[StoredTask]:
        """The stored tasks not yet seen terminal."""
        return await self.client.pending_tasks()

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's tools (``tools/list``, every page)."""
        return await self.client.list_tools()
