"""The client base that every revision's client extends: :class:`ClientCore`.

The Tasks mechanisms are written once, each chosen by the generated ``protocol`` tables
(method roles, the fields of each status's class, ``_meta`` keys, the schema's error
codes), so a schema that gains a method or a field gets its mechanism on regeneration.
``ClientCore`` holds the options and the connection, sends the requests, and is
composed of parts, each with its own state: :class:`~.inputs.InputAnswerer` (the input
handlers), :class:`~.notifications.NotificationRouter` and
:class:`~.notifications.ListenDrain` (what the server sends outside of answers),
:class:`~.results.ResultReader` (result kinds, task states, typed errors) and
:class:`~.calls.ToolCalls` (``tools/call``). A wait on a task is a
:class:`~.handle.TaskHandle` driving a :class:`~.wait.Wait`. What is the revision's own
lives in its adapter (``rev_2025`` or ``rev_ext``), a subclass of :class:`ClientCore`:
the handshake (``initialize`` and its session, or ``server/discover``). Every tool
result is a :class:`~.tool_result.ToolResult`.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, Generic, TypedDict, cast

from pydantic import BaseModel
from typing_extensions import TypeVar, Unpack

from ..jsonrpc import METHOD_NOT_FOUND, JsonRpcError, RequestId, json_object
from ..protocol import (
    CallToolParams,
    CancelTaskParams,
    GetTaskParams,
    InputHandlers,
    ListTasksParams,
    TaskResultParams,
    TaskSnapshot,
    TaskState,
    UpdateTaskParams,
)
from ..revision import RevisionTables
from ..task_ids import SqliteTaskIdStore, StoredTask, TaskIdStore
from .calls import ToolCalls
from .codec import int_field, parse_time
from .errors import (
    CapabilityNotDeclared,
    MethodNotFound,
    TaskNotFound,
)
from .handle import StatusCallback, TaskHandle
from .http import HttpTransport
from .inputs import InputAnswerer, InputHandler
from .notifications import (
    ListenDrain,
    NotificationCallback,
    NotificationRouter,
    ProgressCallback,
)
from .results import ResultReader
from .tasks import TaskRequests
from .tool_result import ToolResult
from .transport import Transport
from .wait import Wait

__all__ = ["ClientCore", "ClientOptions", "ClientSettings", "speaks_statelessly"]

R = TypeVar("R")
"""The revision's own form of a tool result: its generated ``CallToolResult`` (what
:attr:`ToolResult.model` is), or ``dict`` where the schema defines none. Every client
returns a :class:`ToolResult`; the parameter names the revision's model."""
T = TypeVar("T", default=dict[str, Any] | None)
"""A call's ``result_type``: the type of its result's ``structured`` content (without
one, the ``structuredContent`` object as received, or ``None``)."""
C = TypeVar("C", bound="ClientCore[Any]")


class ClientSettings(TypedDict, total=False):
    """The options of :class:`ClientOptions` other than the task ID store, the input
    handlers and ``cancel_on_abort`` (which the official SDK's seam takes as
    arguments of its own; see ``sdk.client_extension``)."""

    client_info: Mapping[str, Any] | None
    default_poll_interval: float
    poll_after_cancel: bool
    ttl_backstop: bool | None
    transport_retries: int
    clock: Callable[[], float]
    sleep: Callable[[float], Awaitable[None]]
    wall_clock: Callable[[], float]
    prefer_tasks: bool
    retry_with_task: bool
    declare_tasks: bool
    subscribe: bool
    max_input_rounds: int


class ClientOptions(ClientSettings, total=False):
    """The keyword options of every revision's client (see :class:`ClientCore`), as
    the dual client takes them: a misspelt one is a type error. ``input_handlers`` and
    ``on_notification`` are arguments of their own, typed by each package's protocol.

    * ``store``: where task IDs are kept while their tasks run (default: SQLite file,
      see :class:`SqliteTaskIdStore`).
    * ``client_info``: the client's ``Implementation`` (name and version).
    * ``default_poll_interval``: seconds between ``tasks/get`` calls when the server
      gives no poll interval (the server's value, when present, is always honoured).
    * ``cancel_on_abort``: send ``tasks/cancel`` when a waiting coroutine is cancelled.
    * ``poll_after_cancel``: after :meth:`TaskHandle.cancel`, keep polling until the
      task is terminal instead of ending the wait (and keep the stored ID until then).
    * ``ttl_backstop``: end a wait with :class:`TaskExpired` once ``createdAt`` plus the
      task's TTL passed (default: the revision's ``ttl_backstop_default``).
    * ``transport_retries``: how many failed polls in a row (connection errors) a wait
      retries, after pauses of 1, 2, 4, ... poll intervals, before it fails.
    * ``input_handlers``: input method (of ``protocol.INPUT_METHODS``) -> its
      handler (typed by ``protocol.InputHandlers``), declared in the capabilities;
      input with a method that has none ends the wait with :class:`InputNotHandled`.
      ``elicitation_handler``, ``sampling_handler`` and ``roots_handler`` are
      shorthands (naming a method both ways is a ``TypeError``).
    * ``on_notification``: gets the schema's notifications (no runtime role) as models.
    * ``clock``, ``sleep`` and ``wall_clock``: monotonic time, sleep and Unix time
      sources (tests inject fakes).

    Options that only some schemas use (the others ignore them):

    * ``prefer_tasks`` (a ``tools/call`` that asks for its task, as in 2025-11-25):
      whether tools with ``taskSupport: "optional"`` run as tasks when a call does not
      say.
    * ``retry_with_task`` (the same): retry a plain call as a task when the server
      answers that a task is required, instead of raising
      :class:`TaskAugmentationRequired`.
    * ``declare_tasks`` (a Tasks extension): declare the extension on every request
      (default). Without it the server must not create tasks, and a task result is
      rejected.
    * ``subscribe`` (a schema with the ``notify`` role and a subscription ``_meta``
      key): also ask for the task's notifications through ``subscriptions/listen``;
      acknowledged tasks are then followed by push.
    * ``max_input_rounds`` (a result kind field, as the extension's ``resultType``): how
      many ``input_required`` answers one ``tools/call`` may need.
    """

    store: TaskIdStore | None
    cancel_on_abort: bool
    elicitation_handler: InputHandler | None
    sampling_handler: InputHandler | None
    roots_handler: InputHandler | None


def speaks_statelessly(tables: RevisionTables) -> bool:
    """Whether a client of the revision of ``tables`` sends the protocol version and
    its capabilities in each request's ``_meta`` instead of opening a session (kept
    for callers of earlier versions: ``tables.stateless`` says it)."""
    return tables.stateless


class ClientCore(Generic[R]):
    """What the Tasks clients of every revision share (the adapters subclass it as
    ``TasksClient``); the keyword options are those of :class:`ClientOptions` (each
    described there), ``input_handlers`` and ``on_notification``."""

    tables: ClassVar[RevisionTables]
    """The revision's protocol tables (set by the revision's client class)."""

    ttl_backstop_default: ClassVar[bool] = False
    """Whether a wait ends at ``createdAt`` plus the TTL (``ttl_backstop``: None)."""

    errors: ClassVar[Mapping[int, type[JsonRpcError]]] = {
        METHOD_NOT_FOUND: MethodNotFound
    }
    """Error code -> its typed error (with :data:`ERRORS_BY_NAME`'s, by ErrorCode)."""
    not_found: ClassVar[Mapping[str, type[JsonRpcError]]] = dict.fromkeys(
        ("get", "result", "update", "cancel"), TaskNotFound
    )
    """Method role -> the typed error raised for ``-32602`` (unknown task) on it."""

    def __init__(
        self,
        transport: Transport | str,
        *,
        store: TaskIdStore | None = None,
        client_info: Mapping[str, Any] | None = None,
        default_poll_interval: float = 1.0,
        cancel_on_abort: bool = False,
        poll_after_cancel: bool = False,
        ttl_backstop: bool | None = None,
        transport_retries: int = 5,
        elicitation_handler: InputHandler | None = None,
        sampling_handler: InputHandler | None = None,
        roots_handler: InputHandler | None = None,
        input_handlers: InputHandlers | None = None,
        on_notification: NotificationCallback | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        wall_clock: Callable[[], float] = time.time,
        prefer_tasks: bool = True,
        retry_with_task: bool = False,
        declare_tasks: bool = True,
        subscribe: bool = False,
        max_input_rounds: int = 16,
    ) -> None:
        """Configure the client (``transport``: or an HTTP URL); nothing is sent."""
        tables = self.tables
        if isinstance(transport, str):
            transport = HttpTransport(transport)
        self.transport = transport
        self.store: TaskIdStore = store if store is not None else SqliteTaskIdStore()
        self.client_info = dict(
            client_info or {"name": tables.package_name, "version": "1.0.0"}
        )
        self.default_poll_interval = default_poll_interval
        self.cancel_on_abort = cancel_on_abort
        self.poll_after_cancel = poll_after_cancel
        self.ttl_backstop = (
            self.ttl_backstop_default if ttl_backstop is None else ttl_backstop
        )
        self.prefer_tasks = prefer_tasks
        self.retry_with_task = retry_with_task
        self.declare_tasks = declare_tasks
        self.subscribe = subscribe
        self.max_input_rounds = max_input_rounds
        self.transport_retries = transport_retries
        self.clock, self.sleep, self.wall_clock = clock, sleep, wall_clock
        self.inputs = InputAnswerer.of(
            tables,
            cast("Mapping[str, InputHandler]", input_handlers or {}),
            (elicitation_handler, sampling_handler, roots_handler),
        )
        """The input handlers (a part: answers input requests)."""
        self.handlers: dict[str, InputHandler] = self.inputs.handlers
        """Input request method -> its handler (the :attr:`inputs` part's)."""
        self.results = ResultReader(
            tables, errors=self.errors, not_found=self.not_found
        )
        """Reads results and error responses (a part)."""
        self.notifications: NotificationRouter[R] = NotificationRouter(
            tables, self.decode
        )
        """Routes the server's notifications to the waits and callbacks (a part)."""
        self.notifications.callback = on_notification
        self.inputs.unhandled = self.notifications.fail_waits
        self.drains = ListenDrain()
        """The finished waits' subscriptions left for the server to end (a part)."""
        self.calls: ToolCalls[R] = ToolCalls(self)
        """Sends ``tools/call`` and follows the tasks it creates (a part)."""
        self.tasks: TaskRequests[R] = TaskRequests(self)
        """Sends the Tasks requests (a part)."""
        self.server_capabilities: dict[str, Any] = {}
        """The server's capabilities (from the handshake, where the revision has
        one)."""
        self._ids = itertools.count(1)
        transport.set_handlers(
            self.notifications.on_notification, self.inputs.on_request
        )
        if self.stateless and isinstance(transport, HttpTransport):
            transport.use_stateless(tables.protocol_version)
        self.setup()

    @property
    def stateless(self) -> bool:
        """Whether every request carries the protocol version and the client
        capabilities in its own ``_meta`` instead of a session (the revision's
        ``stateless`` fact).
        """
        return self.tables.stateless

    @property
    def tools(self) -> dict[str, dict[str, Any]]:
        """The tools seen in ``tools/list``, by name."""
        return self.calls.tools

    @property
    def subscriptions(self) -> dict[str | int, TaskHandle[Any]]:
        """Open ``subscriptions/listen`` streams by request ID (= subscription ID)."""
        return self.notifications.subscriptions

    @property
    def listens_end(self) -> bool | None:
        """Whether the server ends a subscription's stream once its tasks ended (None:
        not known yet); see :class:`.ListenDrain`."""
        return self.drains.listens_end

    @listens_end.setter
    def listens_end(self, value: bool | None) -> None:
        self.drains.listens_end = value

    def setup(self) -> None:
        """Revision hook run at the end of ``__init__`` (state of its own, transport
        set-up)."""

    async def __aenter__(self: C) -> C:
        """Open the connection (:meth:`open`) and return the client."""
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the transport."""
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the subscriptions left for the server to end (:attr:`drains`), then
        close the transport."""
        await self.drains.close()
        await self.transport.aclose()

    # -- hooks of the revision --------------------------------------------------------

    async def open(self) -> None:
        """Start the connection (a handshake, when the revision has one)."""

    def client_capabilities(self) -> dict[str, Any]:
        """The client capabilities: one entry per registered input handler, and the
        Tasks extension (where Tasks are one) unless ``declare_tasks`` is off."""
        capabilities = self.inputs.capabilities()
        if self.tables.is_extension and self.declare_tasks:
            capabilities["extensions"] = {self.tables.extension_id: {}}
        return capabilities

    def wait_for(self, handle: TaskHandle[Any]) -> Wait[R]:
        """The hooks of one wait on ``handle``."""
        return Wait(handle, self)

    def outcome(self, raw: Mapping[str, Any]) -> ToolResult[Any]:
        """A tool result (wire form) as the call's :class:`ToolResult`, its
        ``structuredContent`` as received (``ValueError`` when it is no tool result:
        where the schema defines a ``CallToolResult``, ``raw`` must validate as
        one)."""
        model = getattr(self.tables.models, "CallToolResult", None)
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return ToolResult.from_wire(raw)
        result = ToolResult.from_wire(raw, model_type=model)
        _ = result.model  # checked on receipt, as the revision's result model
        return result

    def call_context(self) -> dict[str, Any]:
        """What is stored with a new task's ID besides the method and the tool's
        name."""
        return {}

    # -- reading results ------------------------------------------------------------

    def decode(self, raw: Mapping[str, Any]) -> TaskState:
        """Decode a ``tasks/get`` result (or a status notification)."""
        return self.results.state(raw)

    def result_kind(self, result: Mapping[str, Any]) -> str:
        """What a result is: ``complete``, ``task`` or ``input_required`` (see
        :meth:`.ResultReader.kind`)."""
        return self.results.kind(result)

    def check(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        """Check a result's kind before it is returned (see
        :meth:`.ResultReader.check`)."""
        return self.results.check(method, result, tasks_declared=self.declare_tasks)

    def map_error(self, method: str, error: JsonRpcError) -> JsonRpcError:
        """Return the typed form of an error response to ``method``."""
        return self.results.error(method, error)

    def cancelled(self, result: dict[str, Any]) -> TaskState | None:
        """Read a ``tasks/cancel`` result: the task, when the schema's result model
        carries the task's fields (else an acknowledgement: ``None``)."""
        carries = self.tables.result_carries_task("cancel")
        return self.decode(result) if carries else None

    def poll_interval_ms(self, task: TaskSnapshot) -> int | None:
        """The task's poll interval in milliseconds (the revision's poll interval
        field)."""
        return int_field(task, list(self.tables.task_fields)[6])

    def ttl_ms(self, task: TaskSnapshot) -> int | None:
        """The task's lifetime in milliseconds (``None``: unlimited)."""
        return int_field(task, list(self.tables.task_fields)[5])

    def poll_interval_of(self, task: TaskSnapshot) -> float:
        """Seconds to wait before the next ``tasks/get``: the task's interval or the
        default."""
        interval = self.poll_interval_ms(task)
        if interval is None or interval < 0:
            return self.default_poll_interval
        return interval / 1000.0

    def expired(self, task: TaskSnapshot) -> bool:
        """Whether ``createdAt`` plus the task's TTL lies in the past."""
        ttl = self.ttl_ms(task)
        if ttl is None:
            return False
        created = parse_time(task.created_at)
        return ttl < 0 or (
            created is not None and self.wall_clock() > created + ttl / 1000.0
        )

    # -- what the server declared ---------------------------------------------------

    def declared(self, role: str) -> bool:
        """Whether the server declared ``role`` in its capabilities, where the profile
        gives the role a capability path (any other role needs no declaration)."""
        path = self.tables.server_capabilities.get(role)
        node: dict[str, Any] | None = self.server_capabilities
        for name in path or ():
            node = json_object(node.get(name)) if node is not None else None
        return node is not None

    def require_declared(self, role: str) -> None:
        """Raise :class:`CapabilityNotDeclared` naming the capability path unless the
        server declared ``role`` (see :meth:`declared`); nothing is sent."""
        if not self.declared(role):
            path = ".".join(self.tables.server_capabilities[role])
            raise CapabilityNotDeclared(f"the server did not declare {path}")

    def supports_task_tools(self) -> bool:
        """Whether a ``tools/call`` may create a task (the ``create`` capability,
        such as 2025-11-25's ``tasks.requests.tools.call``, where the revision has
        one)."""
        return self.declared("create")

    def can_cancel(self) -> bool:
        """Whether ``tasks/cancel`` may be sent (declared, where the revision
        declares it)."""
        return self.declared("cancel")

    def can_list(self) -> bool:
        """Whether ``tasks/list`` may be sent (declared, where the revision declares
        it)."""
        return self.declared("list")

    def can_listen(self) -> bool:
        """Whether a wait may subscribe to the task's notifications (the schema has the
        ``notify`` role and a subscription ``_meta`` key)."""
        return (
            self.tables.has_role("notify")
            and "SUBSCRIPTION_ID" in self.tables.meta_keys
        )

    # -- sending ----------------------------------------------------------------------

    def next_request_id(self) -> int:
        """A JSON-RPC ID not used before by this client."""
        return next(self._ids)

    def request_meta(self) -> dict[str, Any]:
        """The per-request ``_meta`` of a :attr:`stateless` client: protocol version,
        client capabilities and client info (empty otherwise)."""
        if not self.stateless:
            return {}
        keys = self.tables.meta_keys
        meta = {
            keys["PROTOCOL_VERSION"]: self.tables.protocol_version,
            keys["CLIENT_CAPABILITIES"]: self.client_capabilities(),
        }
        if "CLIENT_INFO" in keys:
            meta[keys["CLIENT_INFO"]] = self.client_info
        return meta

    def prepare(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The params as sent: with the per-request ``_meta`` of a :attr:`stateless`
        client."""
        if not self.stateless:
            return params
        meta = json_object(params.get("_meta")) or {}
        return {**params, "_meta": {**meta, **self.request_meta()}}

    async def request(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        request_id: RequestId | None = None,
    ) -> dict[str, Any]:
        """Send one request with a fresh ID; error responses are raised as typed
        errors."""
        try:
            result = await self.transport.request(
                request_id if request_id is not None else next(self._ids),
                method,
                self.prepare(method, dict(params)),
            )
        except JsonRpcError as error:
            raise self.map_error(method, error) from None
        return self.check(method, result)

    # -- tools ------------------------------------------------------------------------

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result_type: type[T] | None = None,
        task: bool | None = None,
        ttl: int | None = None,
        on_progress: ProgressCallback | None = None,
        **params: Unpack[CallToolParams],
    ) -> TaskHandle[T]:
        """Send ``tools/call`` and return a handle, without waiting for a task to
        finish.

        Where the schema lets a call ask for a task (``params.task``), ``task`` forces
        or forbids one (default: as the tool's ``execution.taskSupport`` and
        ``prefer_tasks`` say) and ``ttl`` is the requested lifetime in milliseconds;
        where the server decides, both must be left unset. An ``input_required`` result
        is answered with the registered handlers and the call retried, at most
        ``max_input_rounds`` times. ``on_progress`` receives the call's progress
        notifications until the task is terminal; ``params``: ``CallToolParams``.
        ``result_type``: what the handle's :class:`ToolResult` validates the
        ``structuredContent`` into (a pydantic model, dataclass, ...).
        """
        handle = await self.calls.start(name, arguments, task, ttl, on_progress, params)
        handle.result_type = result_type
        return handle

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result_type: type[T] | None = None,
        task: bool | None = None,
        ttl: int | None = None,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
        on_progress: ProgressCallback | None = None,
        **params: Unpack[CallToolParams],
    ) -> ToolResult[T]:
        """Call a tool and return its :class:`ToolResult`, whether or not the server
        made a task; with ``result_type``, its ``structured`` content is validated into
        that type (:class:`InvalidStructuredContent`, naming the fields, when it does
        not fit).

        See :meth:`start_tool` for the options and :meth:`TaskHandle.result` for the
        errors.
        """
        handle = await self.start_tool(
            name,
            arguments,
            result_type=result_type,
            task=task,
            ttl=ttl,
            on_progress=on_progress,
            **params,
        )
        return await handle.result(timeout=timeout, on_status=on_status)

    async def adopt(
        self,
        result: Mapping[str, Any],
        name: str,
        *,
        on_finish: Callable[[], object] | None = None,
    ) -> TaskHandle[dict[str, Any] | None]:
        """Follow the task a ``tools/call`` created (``result`` is that call's task
        result, wire form, as the schema's create result has it: the task under ``task``
        or its fields inline), also one that other code sent, such as the official SDK's
        client.
        """
        return await self.calls.adopt(result, name, on_finish=on_finish)

    async def task_support(self, name: str) -> str:
        """The tool's ``execution.taskSupport`` (``"forbidden"`` when absent or
        unknown)."""
        return await self.calls.task_support(name)

    async def list_tools(self) -> list[dict[str, Any]]:
        """``tools/list``: every tool, following ``nextCursor``; also kept in
        :attr:`tools`."""
        return await self.calls.list_tools()

    # -- tasks ------------------------------------------------------------------------

    async def get_task(
        self, task_id: str, **params: Unpack[GetTaskParams]
    ) -> TaskState:
        """``tasks/get``: the task's current state (one class per status)."""
        return await self.tasks.get(task_id, params)

    async def cancel_task(
        self, task_id: str, **params: Unpack[CancelTaskParams]
    ) -> TaskState | None:
        """``tasks/cancel``: ask the server to stop the task (cooperative; the final
        status may differ); the task it reports, when the revision's answer carries
        one. The stored ID is dropped unless ``poll_after_cancel`` is set."""
        return await self.tasks.cancel(task_id, params)

    async def get_task_payload(
        self, task_id: str, **params: Unpack[TaskResultParams]
    ) -> dict[str, Any]:
        """``tasks/result`` (the ``result`` role): block until the task is terminal and
        return the original request's result (its JSON-RPC error raised as
        :class:`JsonRpcError`)."""
        return await self.tasks.payload(task_id, params)

    async def update_task(
        self,
        task_id: str,
        input_responses: Mapping[str, Mapping[str, Any] | BaseModel],
        **params: Unpack[UpdateTaskParams],
    ) -> None:
        """``tasks/update`` (the ``update`` role): deliver answers to some or all
        outstanding ``inputRequests``."""
        await self.tasks.update(task_id, input_responses, params)

    async def list_tasks(self, **params: Unpack[ListTasksParams]) -> list[TaskState]:
        """``tasks/list`` (the ``list`` role): every task, following ``nextCursor``."""
        return await self.tasks.list(params)

    async def created(
        self,
        task: TaskSnapshot,
        context: Mapping[str, Any],
        *,
        model_immediate_response: str | None = None,
        on_finish: Callable[[], object] | None = None,
    ) -> TaskHandle[Any]:
        """Store a new task's ID with ``context`` and return its handle (see
        :class:`TaskHandle` for the options)."""
        await self.store.save(task.task_id, context)
        return TaskHandle(
            self,
            task,
            context=context,
            model_immediate_response=model_immediate_response,
            on_finish=on_finish,
        )

    def task(
        self, task_id: str, *, result_type: type[T] | None = None
    ) -> TaskHandle[T]:
        """Return a handle for an existing task (fetched on first use) so it can be
        awaited; ``result_type`` as in :meth:`call_tool`."""
        return TaskHandle(self, None, task_id=task_id, result_type=result_type)

    async def resume(
        self,
        task_id: str,
        *,
        result_type: type[T] | None = None,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> ToolResult[T]:
        """Continue waiting for a task created earlier (for example by a process that
        crashed) and return its :class:`ToolResult` (``result_type`` as in
        :meth:`call_tool`)."""
        handle = self.task(task_id, result_type=result_type)
        return await handle.result(timeout=timeout, on_status=on_status)

    async def pending_tasks(self) -> list[StoredTask]:
        """The tasks in the store: created, and not yet seen terminal."""
        return await self.store.pending()

    async def answer_requests(
        self, requests: Mapping[str, object], task_id: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """Answer an ``inputRequests`` map with the registered handlers (see
        :meth:`.InputAnswerer.answer_all`)."""
        return await self.inputs.answer_all(requests, task_id)
