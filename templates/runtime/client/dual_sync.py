"""The synchronous twin of the dual client: :class:`SyncDualClient` (the package's
``client.SyncTasksClient`` subclasses it) and :class:`SyncDualHandle`.

It runs the dual client (``DualClient``: detection of the server's revision, then
that revision's client) in an event loop of its own, as :mod:`.sync` describes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from typing_extensions import TypeVar, Unpack

from ..protocol import CallToolParams, CancelTaskParams, GetTaskParams, TaskState
from ..task_ids import StoredTask
from .dual import DualClient, DualHandle
from .handle import StatusCallback
from .notifications import NotificationCallback, ProgressCallback
from .sync import (
    LoopThread,
    SyncClientBase,
    SyncClientOptions,
    SyncHandleBase,
    SyncInputHandler,
)
from .tool_result import ToolResult
from .transport import Transport

__all__: list[str] = ["SyncDualClient", "SyncDualHandle"]

S = TypeVar("S", default=dict[str, Any] | None)
"""The type of a result's ``structured`` content: a call's ``result_type``, else the
``structuredContent`` object as received (as in ``DualClient``)."""


class SyncDualHandle(SyncHandleBase[ToolResult[S]]):
    """The sync twin of ``DualHandle``: ``result()`` is the tool's ``ToolResult`` (its
    ``structured`` content an ``S``) in any revision."""

    def __init__(self, handle: DualHandle[S], runner: LoopThread) -> None:
        """Wrap the async ``handle``, whose calls run in ``runner``'s loop."""
        super().__init__(handle, runner)

    def result(
        self, timeout: float | None = None, on_status: StatusCallback | None = None
    ) -> ToolResult[S]:
        """Wait for the task and return its ``ToolResult`` (see
        ``DualHandle.result``)."""
        return self._runner.run(
            self.handle.result(timeout=timeout, on_status=on_status)
        )


class SyncDualClient(SyncClientBase):
    """The sync twin of ``DualClient``: the same options and methods, without
    ``await``::

        with TasksClient.sync("http://127.0.0.1:8000/mcp") as client:
            result = client.call_tool("slow_compute", {"seconds": 3})
    """

    client_class: ClassVar[type[DualClient]] = DualClient
    """The async client class this one drives (the package's ``TasksClient``)."""

    def __init__(
        self,
        endpoint: str | Transport,
        *,
        revision: str | None = None,
        input_handlers: Mapping[str, SyncInputHandler] | None = None,
        on_notification: NotificationCallback | None = None,
        **options: Unpack[SyncClientOptions],
    ) -> None:
        """Start the client's loop thread and build the dual client there with these
        options (those of ``DualClient``; input handlers may be plain functions);
        nothing is sent."""
        super().__init__()
        passed = self._async_options(input_handlers, on_notification, options)
        client_class = self.client_class

        async def build() -> DualClient:
            return client_class(endpoint, revision=revision, **passed)

        try:
            self._client = self.runner.run(build())
        except BaseException:
            self.runner.close()
            raise

    @property
    def async_client(self) -> DualClient:
        """The async dual client (await its methods in the client's loop only)."""
        return self._client

    @property
    def revision(self) -> str | None:
        """The revision in use (None until :meth:`open` or :meth:`rejoin`)."""
        return self._client.revision

    def _handle(self, handle: DualHandle[S]) -> SyncDualHandle[S]:
        return SyncDualHandle(handle, self.runner)

    async def _aclose(self) -> None:
        await self._client.aclose()

    def detect(self) -> str:
        """The revision the server speaks (see ``DualClient.detect``)."""
        return self.runner.run(self._client.detect())

    def open(self) -> None:
        """Detect the revision (unless known) and open its client (``with`` calls
        it)."""
        self.runner.run(self._client.open())

    def rejoin(self, task_id: str) -> StoredTask | None:
        """Prepare to resume ``task_id`` after a restart, instead of :meth:`open`
        (see ``DualClient.rejoin``)."""
        return self.runner.run(self._client.rejoin(task_id))

    def call_tool(
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
        """Call a tool and return its ``ToolResult``, task or not (``structured``
        validated into ``result_type`` when given; see ``DualClient.call_tool``; the
        callbacks run in the client's loop thread)."""
        # Thin delegation to the async call_tool: the same parameters (the twin test
        # compares the signatures), passed on as they are, and its return type.
        return self.runner.run(
            self._client.call_tool(
                name,
                arguments,
                result_type=result_type,
                timeout=timeout,
                on_status=on_status,
                on_progress=on_progress,
                **params,
            )
        )

    def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result_type: type[S] | None = None,
        on_progress: ProgressCallback | None = None,
        **params: Unpack[CallToolParams],
    ) -> SyncDualHandle[S]:
        """Send ``tools/call`` and return a handle without waiting for the task."""
        handle = self.runner.run(
            self._client.start_tool(
                name,
                arguments,
                result_type=result_type,
                on_progress=on_progress,
                **params,
            )
        )
        return self._handle(handle)

    def task(
        self, task_id: str, *, result_type: type[S] | None = None
    ) -> SyncDualHandle[S]:
        """A handle for an existing task (fetched on first use)."""
        return self._handle(
            self.runner.call(
                lambda: self._client.task(task_id, result_type=result_type)
            )
        )

    def resume(
        self,
        task_id: str,
        *,
        result_type: type[S] | None = None,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> ToolResult[S]:
        """Continue waiting for a task created earlier and return its
        ``ToolResult``."""
        return self.runner.run(
            self._client.resume(
                task_id, result_type=result_type, timeout=timeout, on_status=on_status
            )
        )

    def get_task(self, task_id: str, **params: Unpack[GetTaskParams]) -> TaskState:
        """The task's current state."""
        return self.runner.run(self._client.get_task(task_id, **params))

    def cancel_task(
        self, task_id: str, **params: Unpack[CancelTaskParams]
    ) -> TaskState | None:
        """Ask the server to cancel the task."""
        return self.runner.run(self._client.cancel_task(task_id, **params))

    def pending_tasks(self) -> list[StoredTask]:
        """The stored tasks not yet seen terminal."""
        return self.runner.run(self._client.pending_tasks())

    def list_tools(self) -> list[dict[str, Any]]:
        """The server's tools (``tools/list``, every page)."""
        return self.runner.run(self._client.list_tools())
