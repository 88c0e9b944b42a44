"""``Host``: what the parts of a server (``sessions``, ``lifecycle``, ``inputs``, ...)
use of the server that holds them.

``core.TaskServerCore`` is the host; the parts know it only through this protocol, so
they never import the core, and each can be built around any object that has these
members (a test's stand-in, say).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from typing_extensions import Unpack

from ..jsonrpc import JsonRpcError
from ..protocol import TaskFields
from ..revision import RevisionTables
from ..stores import TaskChanges, TaskRecord, TaskStore
from .info import CustomHandler, RequestInfo, RoutingHeaders
from .limits import Limits

if TYPE_CHECKING:
    from .calls import ToolCalls
    from .dispatch import Route
    from .executor import Executor
    from .inputs import InputRequests
    from .lifecycle import Lifecycle
    from .replicas import Replicas
    from .replies import Replies
    from .roles import TaskRoles
    from .sessions import SessionRegistry
    from .subscriptions import Notifications
    from .tools import ToolContext, ToolRegistry
    from .views import TaskViews


class Host(Protocol):
    """The server as its parts see it: settings, the revision's hooks, and the other
    parts."""

    tables: ClassVar[RevisionTables]
    """The revision's protocol tables."""

    @property
    def limits(self) -> Limits: ...

    @property
    def store(self) -> TaskStore: ...

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def started(self) -> bool:
        """Whether the server is serving (between ``start`` and ``close``)."""
        ...

    @property
    def enable_list(self) -> bool: ...

    @property
    def page_size(self) -> int: ...

    @property
    def task_mismatch_code(self) -> int: ...

    @property
    def require_routing_headers(self) -> RoutingHeaders: ...

    @property
    def recover_orphans(self) -> bool: ...

    cancel_message: ClassVar[str]

    @property
    def custom_handlers(self) -> dict[str, CustomHandler]: ...

    @property
    def siblings(self) -> Sequence[Host]:
        """The servers of the other revisions on this store in this process."""
        ...

    @property
    def registry(self) -> ToolRegistry: ...

    @property
    def sessions(self) -> SessionRegistry: ...

    @property
    def replies(self) -> Replies: ...

    @property
    def views(self) -> TaskViews: ...

    @property
    def lifecycle(self) -> Lifecycle: ...

    @property
    def replicas(self) -> Replicas: ...

    @property
    def notifications(self) -> Notifications: ...

    @property
    def inputs(self) -> InputRequests: ...

    @property
    def calls(self) -> ToolCalls: ...

    @property
    def roles(self) -> TaskRoles: ...

    @property
    def executor(self) -> Executor:
        """Runs the tools of the server's tasks (``server.executor``)."""
        ...

    def principal(self, request: RequestInfo) -> str | None:
        """The caller's principal (the ``authenticate`` hook)."""
        ...

    def emit_audit(
        self, action: str, task_id: str | None, principal: str | None, detail: str = ""
    ) -> None:
        """Send one event to the ``audit`` hook, if any."""
        ...

    def capabilities(self) -> dict[str, Any]: ...

    def declares(self, role: str) -> bool:
        """Whether ``capabilities()`` declares ``role``."""
        ...

    async def published(self, record: TaskRecord) -> None:
        """Called after every stored change of a task (here, or told by a replica or a
        sibling)."""
        ...

    # the revision's hooks (``rev_2025``, ``rev_ext`` override them)

    def revision_routes(self) -> dict[str, Route]: ...

    def tasks_not_declared(self, detail: str) -> JsonRpcError: ...

    def listing(self, tools: list[dict[str, Any]]) -> dict[str, Any]: ...

    def failed_result(self, result: dict[str, Any]) -> bool: ...

    # what a tool's ``ToolContext`` asks of its server

    async def set_status_message(self, task_id: str, message: str) -> None: ...

    async def set_task_fields(self, task_id: str, fields: TaskFields) -> None: ...

    async def move_task(
        self, task_id: str, **changes: Unpack[TaskChanges]
    ) -> TaskRecord | None: ...

    async def send_progress(
        self,
        ctx: ToolContext,
        progress: float,
        total: float | None,
        message: str | None,
    ) -> None: ...

    async def request_input(
        self, ctx: ToolContext, method: str, params: dict[str, Any]
    ) -> dict[str, Any]: ...
