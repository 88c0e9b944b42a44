"""Client adapter for the MCP Tasks extension ``io.modelcontextprotocol/tasks``
(stateless core).

What is this revision's own: ``server/discover`` and the TTL backstop on by default (its
schema defines no ``CallToolResult`` model: ``ToolResult.model`` is ``None``). The rest
is shared and chosen by the tables: every request declares the extension in its
per-request ``_meta``; a ``tools/call`` may be answered at once, with an input request
(answered and retried), or with a task, which the shared polling loop follows, answering
its ``inputRequests`` through ``tasks/update`` (each key once) and returning the inlined
result, so the caller always gets the tool's result (a ``ToolResult``, as from every
client)::

    async with TasksClient(HttpTransport("http://127.0.0.1:8000/mcp")) as client:
        result = await client.call_tool("slow_compute", {"seconds": 3})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias, cast

from typing_extensions import Unpack

from .. import protocol_ext as protocol
from ..jsonrpc import json_object
from ..protocol_ext import EXTENSION_ID, PROTOCOL_VERSION, TERMINAL_STATUSES, TaskState
from .codec import decode_state
from .core import ClientCore
from .errors import (
    HeaderMismatch,
    MissingRequiredClientCapability,
    UnsupportedProtocolVersion,
)
from .notifications import NotificationCallback
from .sync import SyncClientCore, SyncClientOptions, SyncInputHandler
from .transport import Transport

__all__: list[str] = [
    "EXTENSION_ID",
    "PROTOCOL_VERSION",
    "TERMINAL_STATUSES",
    "DetailedTaskState",
    "HeaderMismatch",
    "MissingRequiredClientCapability",
    "UnsupportedProtocolVersion",
    "decode_detailed_task",
]

DetailedTaskState: TypeAlias = TaskState
"""A ``tasks/get`` result or ``notifications/tasks`` payload: one class per status."""

Result: TypeAlias = dict[str, Any]
"""The revision's own form of a tool result (``ClientCore``'s parameter): the
``CallToolResult`` object, as received (``ToolResult.raw``)."""


def decode_detailed_task(raw: Mapping[str, Any]) -> DetailedTaskState:
    """Decode a ``tasks/get`` result or ``notifications/tasks`` params by its
    ``status``."""
    return cast(TaskState, decode_state(raw, protocol.TABLES))


class TasksClient(ClientCore[Result]):
    """Client for the ``io.modelcontextprotocol/tasks`` extension over any transport.

    The protocol is stateless, so ``async with`` only closes the transport at the end.
    The options are those of :class:`ClientCore`; ``ttl_backstop`` defaults to on.
    """

    tables = protocol.TABLES

    ttl_backstop_default = True

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

    async def discover(self) -> dict[str, Any]:
        """``server/discover``: the server's versions and capabilities (its ``ttlMs``
        is a cache hint)."""
        return await self.request("server/discover", {})

    @staticmethod
    def server_supports_tasks(discovered: Mapping[str, Any]) -> bool:
        """Whether a ``server/discover`` result advertises the extension."""
        capabilities = json_object(discovered.get("capabilities")) or {}
        extensions = json_object(capabilities.get("extensions"))
        return extensions is not None and protocol.EXTENSION_ID in extensions


class SyncTasksClient(SyncClientCore[Result]):
    """The synchronous twin of :class:`TasksClient` (see ``client.sync``): the same
    options and methods, without ``await``."""

    client_class = TasksClient

    @property
    def async_client(self) -> TasksClient:
        """The async client (await its methods in the client's loop only)."""
        return cast(TasksClient, self._client)

    def discover(self) -> dict[str, Any]:
        """``server/discover``: the server's versions and capabilities (see
        :meth:`TasksClient.discover`)."""
        return self.runner.run(self.async_client.discover())
