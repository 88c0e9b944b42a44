"""The client seam (the Tasks extension, ``mcp`` 2.x): :func:`client_extension` gives a
``ClientExtension`` for ``mcp.client.Client(url, extensions=[...])``.

A plain ``await client.call_tool(...)`` that the server answers with a task then runs
this package's polling loop: input requests go to the host's elicitation, sampling
and roots callbacks (or to handlers given here) and are delivered with
``tasks/update``; the task ID is stored until the task ends; cancelling the call
sends ``tasks/cancel``; the ordinary ``CallToolResult`` is returned.

The SDK objects the seam uses are typed by small protocols (:class:`SdkSession`,
:class:`SdkClient`, :class:`SdkToolResult`) that ``mcp``'s classes satisfy, so the
package type-checks without ``mcp`` installed.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, cast

from typing_extensions import Unpack

from ..client.core import ClientSettings
from ..client_core import (
    ClientCore,
    InputContext,
    InputHandler,
    StatusCallback,
    TaskFailed,
    TaskHandle,
)
from ..jsonrpc import JsonRpcError
from ..task_ids import SqliteTaskIdStore, TaskIdStore
from ..transport import NotificationHandler, RequestHandler, RequestId
from .shared import SdkBase, extension_tables, forward_to_seam, module, wire

__all__ = [
    "ClientSeam",
    "SdkClient",
    "SdkSession",
    "SdkToolResult",
    "SdkTransport",
    "TasksClientExtension",
    "client_extension",
]


class SdkSession(Protocol):
    """What the seam uses of an ``mcp`` 2.x ``ClientSession`` (a structural type:
    ``mcp.client.session.ClientSession`` satisfies it)."""

    async def send_request(self, request: Any, result_type: Any) -> Any:
        """Send a request; its result validated as ``result_type``."""
        ...

    async def dispatch_input_request(self, ctx: Any, request: Any) -> Any:
        """Answer an input request with the client's own callbacks."""
        ...


class SdkClient(Protocol):
    """What the seam uses of an ``mcp`` 2.x ``mcp.client.Client``: its session."""

    @property
    def session(self) -> SdkSession:
        """The connected ``ClientSession``."""
        ...


class SdkToolResult(Protocol):
    """What a ``tools/call`` result of the SDK has (``mcp_types.CallToolResult``
    satisfies it): the content blocks, the structured content, the error flag, and
    pydantic's ``model_dump``. ``isinstance(result, CallToolResult)`` narrows it to the
    SDK's class."""

    def model_dump(
        self, *, mode: str = ..., by_alias: bool = ..., exclude_none: bool = ...
    ) -> dict[str, Any]:
        """The result as a dict (``mode="json"``: JSON values; ``by_alias``: wire
        names)."""
        ...

    @property
    def content(self) -> Sequence[Any]:
        """The content blocks."""
        ...

    @property
    def structured_content(self) -> Any:
        """The structured result (``structuredContent``), or None."""
        ...

    @property
    def is_error(self) -> bool:
        """Whether the tool failed (``isError``)."""
        ...


def _extension_client() -> type[ClientCore[Any]]:
    """The client class of the package's Tasks extension revision."""
    extension_tables("client_extension")
    adapter = importlib.import_module("..client_ext", __package__)
    return cast(type[ClientCore[Any]], adapter.TasksClient)


class SdkTransport:
    """This package's ``Transport`` over an ``mcp`` 2.x ``ClientSession``.

    Requests go through ``ClientSession.send_request`` (the session adds its ``_meta``
    and the ``Mcp-Name`` header from ``taskId``); the modern protocol has no back
    channel, so no notifications or server requests arrive here.
    """

    def __init__(self, session: SdkSession) -> None:
        self.session = session
        self._error_type: Any = getattr(module("mcp.shared.exceptions"), "MCPError")

    def set_handlers(
        self, on_notification: NotificationHandler, on_request: RequestHandler
    ) -> None:
        """Nothing to route: results are all that arrive."""

    async def request(
        self, request_id: RequestId, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Send one request through the session; SDK errors become ``JsonRpcError``."""
        request = _raw_request_type()(method=method, params=params)
        try:
            result = await self.session.send_request(request, _object_adapter())
        except self._error_type as error:
            raise JsonRpcError(error.code, error.message, error.data) from None
        return cast(dict[str, Any], result)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """The modern protocol sends no client notifications: dropped."""

    async def aclose(self) -> None:
        """The session belongs to the SDK's ``Client``: left open."""


@functools.cache
def _raw_request_type() -> Any:
    """A ``mcp_types.Request`` subclass for any method, naming the task in
    ``Mcp-Name``."""
    base: Any = getattr(module("mcp_types"), "Request")
    task_id = extension_tables("client_extension").task_fields["task_id"]
    namespace = {"name_param": task_id, "__module__": __name__}
    return type("TasksRequest", (base[dict[str, Any], str],), namespace)


@functools.cache
def _object_adapter() -> Any:
    pydantic: Any = importlib.import_module("pydantic")
    return pydantic.TypeAdapter(dict[str, Any])


@functools.cache
def _claim_model() -> Any:
    """The claimed ``tools/call`` result: ``resultType: "task"`` with the task's
    fields."""
    result: Any = getattr(module("mcp_types"), "Result")
    pydantic: Any = importlib.import_module("pydantic")
    namespace = {
        "__module__": __name__,
        "__annotations__": {"result_type": Literal["task"]},
        "model_config": pydantic.ConfigDict(extra="allow"),
    }
    return type("CreateTaskClaim", (result,), namespace)


def _session_handler(session: SdkSession) -> InputHandler:
    """An input handler that asks the SDK session's own callbacks (the host's)."""
    types: Any = module("mcp_types")
    context_type: Any = getattr(module("mcp.client.session"), "ClientRequestContext")
    adapter: Any = getattr(importlib.import_module("pydantic"), "TypeAdapter")(
        types.InputRequest
    )

    async def ask(request: InputContext) -> dict[str, Any] | None:
        sdk_request = adapter.validate_python(
            {"method": request.method, "params": request.params}
        )
        key = request.key or f"task-{request.task_id}"
        answer = await session.dispatch_input_request(
            context_type(session=session, request_id=key), sdk_request
        )
        if isinstance(answer, types.ErrorData):
            raise JsonRpcError(answer.code, answer.message, answer.data)
        return wire(answer)

    return ask


class ClientSeam:
    """What :func:`client_extension` adds to an SDK ``Client``; its instance is
    ``extension.seam``.

    ``handles`` maps the task IDs of calls being waited for to their ``TaskHandle``
    (``snapshots()`` for a progress display, ``cancel()``); ``on_task`` is called with
    each new handle. The other options are :class:`ClientCore`'s
    (``default_poll_interval``, ``poll_after_cancel``, ``transport_retries``, ...).
    """

    def __init__(
        self,
        *,
        store: TaskIdStore | None = None,
        elicitation_handler: InputHandler | None = None,
        sampling_handler: InputHandler | None = None,
        roots_handler: InputHandler | None = None,
        on_task: Callable[[TaskHandle[Any]], object] | None = None,
        on_status: StatusCallback | None = None,
        cancel_on_abort: bool = True,
        **client_options: Unpack[ClientSettings],
    ) -> None:
        self.store: TaskIdStore = store if store is not None else SqliteTaskIdStore()
        self.elicitation_handler = elicitation_handler
        self.sampling_handler = sampling_handler
        self.roots_handler = roots_handler
        self.on_task = on_task
        self.on_status = on_status
        self.cancel_on_abort = cancel_on_abort
        self.client_options: ClientSettings = client_options
        self.handles: dict[str, TaskHandle[Any]] = {}

    def tasks_client(self, session: SdkSession) -> ClientCore[Any]:
        """A ``TasksClient`` speaking through ``session`` (an ``mcp`` 2.x
        ``ClientSession``)."""
        fallback = _session_handler(session)
        return _extension_client()(
            SdkTransport(session),
            store=self.store,
            elicitation_handler=self.elicitation_handler or fallback,
            sampling_handler=self.sampling_handler or fallback,
            roots_handler=self.roots_handler or fallback,
            cancel_on_abort=self.cancel_on_abort,
            **self.client_options,
        )

    def claims(self) -> list[Any]:
        """The ``ResultClaim`` for ``resultType: "task"`` on ``tools/call``."""
        claim: Any = getattr(module("mcp.client.extension"), "ResultClaim")
        return [claim(result_type="task", model=_claim_model(), resolve=self.resolve)]

    async def resolve(self, claimed: Any, ctx: Any) -> SdkToolResult:
        """Wait for the task of a ``tools/call`` and return its ``CallToolResult``."""
        client = self.tasks_client(cast(SdkSession, ctx.session))
        handle = await client.adopt(wire(claimed), str(ctx.tool_name))
        return await self._finish(handle, ctx.read_timeout_seconds)

    async def resume(
        self,
        client: SdkClient | SdkSession,
        task_id: str,
        *,
        timeout: float | None = None,
    ) -> SdkToolResult:
        """Continue waiting for a stored task (for example after the process was
        killed) through ``client`` (an ``mcp.client.Client`` or its ``ClientSession``)
        and return its ``CallToolResult``.
        """
        session = cast(SdkSession, getattr(client, "session", client))
        handle = self.tasks_client(session).task(task_id)
        return await self._finish(handle, timeout)

    async def pending(self) -> list[str]:
        """The IDs of stored tasks not yet seen ending."""
        return [task.task_id for task in await self.store.pending()]

    async def cancel(self, task_id: str) -> None:
        """Cancel a task being waited for (``tasks/cancel``); its call raises
        ``TaskCancelled``."""
        await self.handles[task_id].cancel()

    async def _finish(
        self, handle: TaskHandle[Any], timeout: float | None
    ) -> SdkToolResult:
        types: Any = module("mcp_types")
        error_type: Any = getattr(module("mcp.shared.exceptions"), "MCPError")
        task_id = handle.task_id
        if task_id is not None:
            self.handles[task_id] = handle
            if self.on_task is not None:
                self.on_task(handle)
        try:
            result = await handle.result(timeout=timeout, on_status=self.on_status)
        except TaskFailed as failure:
            raise error_type(failure.code, failure.message, failure.data) from failure
        finally:
            if task_id is not None:
                self.handles.pop(task_id, None)
        validated: SdkToolResult = types.CallToolResult.model_validate(
            result.raw, by_name=False
        )
        return validated


class TasksClientExtension(SdkBase):  # type: ignore[misc]  # mcp's ClientExtension
    """The Tasks extension for ``mcp.client.Client(url, extensions=[...])``
    (``mcp>=2.3``) that :func:`client_extension` returns.

    At run time its class also derives from ``mcp.client.extension.ClientExtension``
    (made when the SDK is first imported); type checkers see that base as ``Any``
    (:data:`~.shared.SdkBase`), so the object is accepted by ``Client`` and the
    package type-checks without ``mcp``. What users call is typed here; the other
    attributes of its :class:`ClientSeam` (``seam``) are forwarded.
    """

    identifier: str
    """The Tasks extension's identifier (set on the class made at run time)."""

    def __init__(self, seam: ClientSeam) -> None:
        self.seam = seam

    def claims(self) -> list[Any]:
        """The ``ResultClaim`` for ``resultType: "task"`` on ``tools/call``."""
        return self.seam.claims()

    @property
    def handles(self) -> dict[str, TaskHandle[Any]]:
        """The ``TaskHandle`` of each task being waited for, by task ID."""
        return self.seam.handles

    @property
    def store(self) -> TaskIdStore:
        """Where the task IDs are kept until their tasks end."""
        return self.seam.store

    async def resume(
        self,
        client: SdkClient | SdkSession,
        task_id: str,
        *,
        timeout: float | None = None,
    ) -> SdkToolResult:
        """Continue waiting for a stored task (see :meth:`ClientSeam.resume`)."""
        return await self.seam.resume(client, task_id, timeout=timeout)

    async def pending(self) -> list[str]:
        """The IDs of stored tasks not yet seen ending."""
        return await self.seam.pending()

    async def cancel(self, task_id: str) -> None:
        """Cancel a task being waited for (``tasks/cancel``)."""
        await self.seam.cancel(task_id)

    def __getattr__(self, name: str) -> Any:
        return forward_to_seam(self, name)


def client_extension(
    *,
    store: TaskIdStore | None = None,
    elicitation_handler: InputHandler | None = None,
    sampling_handler: InputHandler | None = None,
    roots_handler: InputHandler | None = None,
    on_task: Callable[[TaskHandle[Any]], object] | None = None,
    on_status: StatusCallback | None = None,
    cancel_on_abort: bool = True,
    **client_options: Unpack[ClientSettings],
) -> TasksClientExtension:
    """A ``ClientExtension`` for ``mcp.client.Client(url, extensions=[...])``
    (``mcp>=2.3``).

    Input handlers left out use the ``Client``'s own callbacks
    (``elicitation_callback``, ``sampling_callback``, ``list_roots_callback``).
    ``store`` keeps task IDs (SQLite file by default); ``on_task`` gets each new
    ``TaskHandle``; ``on_status`` each snapshot. The extension object forwards
    :class:`ClientSeam`'s methods (``resume``, ``pending``, ``cancel``, ``handles``).
    """
    extension_tables("client_extension")
    seam = ClientSeam(
        store=store,
        elicitation_handler=elicitation_handler,
        sampling_handler=sampling_handler,
        roots_handler=roots_handler,
        on_task=on_task,
        on_status=on_status,
        cancel_on_abort=cancel_on_abort,
        **client_options,
    )
    return _client_extension_type()(seam)


@functools.cache
def _client_extension_type() -> type[TasksClientExtension]:
    """:class:`TasksClientExtension` with ``mcp``'s ``ClientExtension`` as a second
    base."""
    base: type[object] = getattr(module("mcp.client.extension"), "ClientExtension")
    namespace = {
        "__module__": __name__,
        "__doc__": TasksClientExtension.__doc__,
        "identifier": extension_tables("client_extension").extension_id,
    }
    made = type("TasksClientExtension", (TasksClientExtension, base), namespace)
    return cast(type[TasksClientExtension], made)
