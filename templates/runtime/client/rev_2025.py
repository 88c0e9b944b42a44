"""Client adapter for MCP Tasks, revision 2025-11-25 (experimental core Tasks).

What is this revision's own: the ``initialize`` handshake and its session (joined again
by :meth:`TasksClient.rejoin` after a restart), the ``elicitation.form`` capability, the
tool result checked as a ``CallToolResult`` (``ToolResult.model``) and the task that
``tasks/cancel`` answers with. The rest is shared and chosen by the tables: asking for a
task on ``tools/call`` only when the server declared ``tasks.requests.tools.call`` and
the tool's ``execution.taskSupport`` allows it, following it at the server's
``pollInterval`` and collecting the outcome with ``tasks/result`` while answering the
requests the server sends for the task. The caller gets the tool's result (a
``ToolResult``, as from every client) as if the call had been answered at once::

    async with TasksClient(HttpTransport("http://127.0.0.1:8000/mcp")) as client:
        result = await client.call_tool("slow_compute", {"seconds": 3})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from typing_extensions import Unpack

from .. import protocol_2025 as protocol
from ..jsonrpc import JsonRpcError, json_object
from ..models_2025 import CallToolResult, Task
from ..protocol import CancelTaskParams
from ..protocol_2025 import EXTENSION_ID, PROTOCOL_VERSION, TERMINAL_STATUSES
from ..task_ids import StoredTask
from .codec import decode_state
from .core import ClientCore
from .errors import InvalidResponse, TaskNotFound
from .notifications import NotificationCallback
from .sync import SyncClientCore, SyncClientOptions, SyncInputHandler
from .transport import SessionTransport, Transport, revision_hint

__all__: list[str] = [
    "EXTENSION_ID",
    "PROTOCOL_VERSION",
    "TERMINAL_STATUSES",
    "CannotCancelTask",
    "decode_task",
]


OTHER_REVISION_CODES = frozenset({-32600, -32601, -32602, -32020, -32021, -32022})
"""Errors a server of another revision answers ``initialize`` with: invalid request,
method not found (a revision without ``initialize``), invalid params (a per-request
``_meta`` it misses), a missing routing header, capability or protocol version (the
stateless revision's ``-32020`` to ``-32022``). :meth:`TasksClient.connect` adds the
revision hint to them."""


class CannotCancelTask(TaskNotFound):
    """``-32602`` on ``tasks/cancel``: the task is unknown or already in a terminal
    status."""


def decode_task(raw: Mapping[str, Any]) -> Task:
    """Decode a ``Task`` object; a missing ``ttl`` is read as ``null`` (unlimited)."""
    return cast(Task, decode_state(raw, protocol.TABLES))


class TasksClient(ClientCore[CallToolResult]):
    """Client for the MCP Tasks of revision 2025-11-25 over any :class:`Transport`.

    Use it as an async context manager (``initialize`` runs on entry). The options are
    those of :class:`ClientCore`.
    """

    tables = protocol.TABLES

    not_found = {**ClientCore.not_found, "cancel": CannotCancelTask}

    @classmethod
    def sync(
        cls,
        transport: Transport | str,
        *,
        input_handlers: Mapping[str, SyncInputHandler] | None = None,
        on_notification: NotificationCallback | None = None,
        **options: Unpack[SyncClientOptions],
    ) -> SyncTasksClient:
        """The synchronous client with these options (see :class:`SyncTasksClient`)."""
        return SyncTasksClient(
            transport,
            input_handlers=input_handlers,
            on_notification=on_notification,
            **options,
        )

    def setup(self) -> None:
        self.initialize_result: dict[str, Any] = {}
        """The whole ``initialize`` result."""
        self.connected = False
        """Whether ``initialize`` ran (or :meth:`rejoin` joined a session)."""

    async def open(self) -> None:
        """``initialize``, unless :meth:`rejoin` joined a session."""
        if not self.connected:
            await self.connect()

    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities sent in ``initialize`` (one entry per registered
        handler)."""
        capabilities = super().client_capabilities()
        if "elicitation" in capabilities:
            capabilities["elicitation"] = {"form": {}}
        return capabilities

    async def connect(self) -> dict[str, Any]:
        """Run the ``initialize`` handshake and return the server's
        ``InitializeResult``.

        An error that a server of another revision answers with
        (``OTHER_REVISION_CODES``, e.g. the extension's ``-32020`` for the missing
        routing headers) is raised with the hint that the server may speak another
        revision.
        """
        try:
            self.initialize_result = await self.request(
                "initialize",
                {
                    "protocolVersion": protocol.PROTOCOL_VERSION,
                    "capabilities": self.client_capabilities(),
                    "clientInfo": self.client_info,
                },
            )
        except JsonRpcError as error:
            if error.code not in OTHER_REVISION_CODES:
                raise
            hinted = error.message + revision_hint(protocol.PROTOCOL_VERSION)
            raise type(error)(error.code, hinted, error.data) from error
        capabilities = self.initialize_result.get("capabilities")
        self.server_capabilities = json_object(capabilities) or {}
        await self.transport.notify("notifications/initialized", {})
        self.connected = True
        return self.initialize_result

    async def rejoin(self, task_id: str) -> StoredTask | None:
        """Prepare to resume ``task_id`` after a restart, instead of :meth:`connect`.

        When the stored entry names the session the task was created in and the
        transport has sessions, that session is joined (a server may only serve the task
        there) and the stored server capabilities are used; otherwise a new session is
        initialized. Returns the stored entry, if any.
        """
        entry = await self.store.get(task_id)
        context = entry.context if entry is not None else {}
        session = context.get("session")
        capabilities = json_object(context.get("capabilities"))
        if (
            isinstance(self.transport, SessionTransport)
            and isinstance(session, str)
            and capabilities is not None
        ):
            self.transport.join_session(session, protocol.PROTOCOL_VERSION)
            self.server_capabilities = capabilities
            self.connected = True
        else:
            await self.connect()
        return entry

    def call_context(self) -> dict[str, Any]:
        """The session the task was created in and its capabilities (for
        :meth:`rejoin`)."""
        if isinstance(self.transport, SessionTransport) and self.transport.session_id:
            session = self.transport.session_id
            return {"session": session, "capabilities": self.server_capabilities}
        return {}

    async def cancel_task(
        self, task_id: str, **params: Unpack[CancelTaskParams]
    ) -> Task:
        """``tasks/cancel`` (requires ``tasks.cancel``): the task as the server reports
        it.

        Raises :class:`CannotCancelTask` when the task is unknown or already terminal.
        """
        state = await super().cancel_task(task_id, **params)
        if not isinstance(state, Task):
            raise InvalidResponse("tasks/cancel must answer with the task")
        return state


class SyncTasksClient(SyncClientCore[CallToolResult]):
    """The synchronous twin of :class:`TasksClient` (see ``client.sync``): the same
    options and methods, without ``await``; ``with`` runs ``initialize``."""

    client_class = TasksClient

    @property
    def async_client(self) -> TasksClient:
        """The async client (await its methods in the client's loop only)."""
        return cast(TasksClient, self._client)

    def connect(self) -> dict[str, Any]:
        """Run the ``initialize`` handshake and return the server's
        ``InitializeResult`` (see :meth:`TasksClient.connect`)."""
        return self.runner.run(self.async_client.connect())

    def rejoin(self, task_id: str) -> StoredTask | None:
        """Prepare to resume ``task_id`` after a restart, instead of :meth:`connect`
        (see :meth:`TasksClient.rejoin`)."""
        return self.runner.run(self.async_client.rejoin(task_id))

    def cancel_task(self, task_id: str, **params: Unpack[CancelTaskParams]) -> Task:
        """``tasks/cancel`` (requires ``tasks.cancel``): the task as the server
        reports it (see :meth:`TasksClient.cancel_task`)."""
        return self.runner.run(self.async_client.cancel_task(task_id, **params))
