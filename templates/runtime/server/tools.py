"""Tools: ``Tool`` (a registered tool), ``ToolRegistry`` (the tools a server serves),
``ToolContext`` (what a tool's handler gets) and ``ToolError``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast, overload

from pydantic import BaseModel

from ..jsonrpc import INVALID_PARAMS, JsonRpcError
from ..protocol import StatusName, TaskFields
from .info import Emit
from .limits import Limits, check_size
from .sessions import Session
from .signatures import ToolSignature, tool_signature
from .wire import ToolOutput

if TYPE_CHECKING:
    from .elicit import ElicitAnswer
    from .host import Host

M = TypeVar("M", bound=BaseModel)
"""A pydantic model a typed elicitation asks for."""

TaskSupport = Literal["forbidden", "optional", "required"]
"""Whether a tool never, sometimes or always runs as a task."""

ToolHandler = Callable[["ToolContext", dict[str, Any]], Awaitable[ToolOutput]]
"""``async def handler(ctx, arguments) -> ToolOutput``: the work of one tool."""

ToolFunction = TypeVar("ToolFunction", bound=Callable[..., Awaitable[object]])
"""What ``@server.tool()`` registers, and gives back unchanged: a dict tool (a
``ToolHandler``) or a typed one (``async def brew(ctx, size: str, ...) -> Receipt``)."""

Preflight = Callable[
    ["ToolContext", dict[str, Any]], Awaitable[dict[str, dict[str, Any]] | None]
]
"""Runs on ``tools/call`` before any task exists; returns MRTR ``inputRequests`` or
None.

Its answers arrive in ``ctx.input_responses`` when the client calls the tool again.
"""


class ToolError(Exception):
    """Raised by a tool handler for an error the model should see (``isError:
    true``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A registered tool: its handler and how it is listed.

    ``preflight`` asks MRTR questions on ``tools/call`` before any task exists.

    ``immediate_response`` goes into the ``CreateTaskResult`` as
    ``_meta["io.modelcontextprotocol/model-immediate-response"]``: text a host may
    give the model while the task runs.

    ``answer_within_ms`` overrides ``Limits.answer_within_ms`` for this tool: where
    the revision allows it (the extension), a call that finishes within that many
    milliseconds is answered with its result instead of a task (0: never).

    ``signature`` is set for a typed tool (see ``signatures.ToolSignature``): the
    call's arguments are validated by it before the tool runs (``-32602`` naming the
    field) and ``handler`` gets the validated values; ``output_schema`` is listed
    where the revision's ``Tool`` has ``outputSchema``.

    ``idempotent``: running the tool twice does no harm, so an executor whose worker
    was lost mid-task may run it again (``server.executor``); else that task fails.
    """

    name: str
    handler: ToolHandler
    description: str = ""
    title: str | None = None
    input_schema: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    task_support: TaskSupport = "optional"
    preflight: Preflight | None = None
    immediate_response: str | None = None
    answer_within_ms: int | None = None
    output_schema: dict[str, Any] | None = None
    signature: ToolSignature | None = None
    idempotent: bool = False

    def handler_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """What ``handler`` gets for the call's checked ``arguments``: the same dict
        for a dict tool, the validated values for a typed one (``-32602`` naming the
        field that does not fit)."""
        if self.signature is None:
            return arguments
        return self.signature.parse(arguments)


class ToolRegistrar:
    """The ``tool`` decorator of a registry or a server: one definition, registering
    through the owner's ``add_tool``."""

    def add_tool(self, tool: Tool) -> None:
        """Register a tool (replacing one with the same name)."""
        raise NotImplementedError

    def tool(
        self,
        name: str | None = None,
        *,
        description: str = "",
        title: str | None = None,
        input_schema: dict[str, Any] | None = None,
        task_support: TaskSupport = "optional",
        preflight: Preflight | None = None,
        immediate_response: str | None = None,
        answer_within_ms: int | None = None,
        idempotent: bool = False,
    ) -> Callable[[ToolFunction], ToolFunction]:
        """Decorator registering an async function as a tool (of every revision the
        server serves) and returning it unchanged.

        A dict tool is ``async def handler(ctx, arguments)`` (``arguments``
        annotated ``dict[str, Any]`` or not at all), or any function registered with
        ``input_schema``: it gets the call's arguments as they came and returns a
        ``ToolOutput``. Any other signature is a typed tool, ``async def brew(ctx:
        ToolContext, size: Literal["S", "M", "L"], sugars: int = 0) -> Receipt``: its
        ``inputSchema`` is made from the parameters after the context (pydantic
        types, defaults, ``Annotated[..., Field(description=...)]``, the docstring's
        ``Args:`` entries), the call's arguments are validated into those Python
        values before the tool runs or any task exists (``-32602`` naming the
        field), and a result annotated with a pydantic model, a ``TypedDict`` or any
        type but ``str`` and ``ToolOutput`` gets an ``outputSchema`` and is sent as
        ``structuredContent`` with a text block of its JSON (other types wrapped as
        ``{"result": ...}``). A signature that cannot be a schema is a
        ``TypeError`` naming the tool and the parameter.

        ``name`` defaults to the function's name and ``description`` to its
        docstring (a typed tool's: up to its ``Args:`` section); ``task_support``,
        ``preflight`` (MRTR questions before any task exists, an extension feature;
        it gets the arguments as they came), ``immediate_response``,
        ``answer_within_ms`` and ``idempotent``: see ``Tool``.
        """

        def register(function: ToolFunction) -> ToolFunction:
            tool_name = name or getattr(function, "__name__", "")
            if not tool_name:
                raise TypeError("a tool needs a name: pass name=")
            signature = (
                tool_signature(function, tool_name) if input_schema is None else None
            )
            if signature is None:
                handler = cast(ToolHandler, function)
                docstring = (getattr(function, "__doc__", None) or "").strip()
                schema: dict[str, Any] = (
                    input_schema
                    if input_schema is not None
                    else {"type": "object", "properties": {}}
                )
            else:
                handler = signature.run
                docstring = signature.description
                schema = signature.input_schema
            self.add_tool(
                Tool(
                    name=tool_name,
                    handler=handler,
                    description=description or docstring,
                    title=title,
                    input_schema=schema,
                    task_support=task_support,
                    preflight=preflight,
                    immediate_response=immediate_response,
                    answer_within_ms=answer_within_ms,
                    output_schema=(
                        signature.output_schema if signature is not None else None
                    ),
                    signature=signature,
                    idempotent=idempotent,
                )
            )
            return function

        return register


class ToolRegistry(ToolRegistrar):
    """The tools a server serves, by name, in registration order (the servers of
    several revisions share one: ``TaskServerCore.share_tools``)."""

    def __init__(self) -> None:
        self.by_name: dict[str, Tool] = {}

    def add(self, tool: Tool) -> None:
        """Register a tool (replacing one with the same name)."""
        self.by_name[tool.name] = tool

    def add_tool(self, tool: Tool) -> None:
        """Register a tool (replacing one with the same name): ``add``."""
        self.add(tool)

    @property
    def tools(self) -> list[Tool]:
        """The registered tools, in registration order."""
        return list(self.by_name.values())

    def any_task_capable(self) -> bool:
        """Whether some tool may run as a task."""
        return any(t.task_support != "forbidden" for t in self.by_name.values())

    def called(
        self, params: dict[str, Any], limits: Limits
    ) -> tuple[Tool, dict[str, Any]]:
        """The tool named by ``tools/call``'s ``params.name`` and its checked
        arguments."""
        name = params.get("name")
        if not isinstance(name, str):
            raise JsonRpcError(INVALID_PARAMS, "params.name must be a string")
        tool = self.by_name.get(name)
        if tool is None:
            raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise JsonRpcError(INVALID_PARAMS, "params.arguments must be an object")
        check_size(limits, "params.arguments", arguments)
        return tool, cast(dict[str, Any], arguments)


class ToolContext:
    """What a tool handler gets: its task, status reporting, input and cancellation.

    ``task_id`` is None when the tool runs synchronously (no task was asked for, or the
    tool never runs as a task). ``client_capabilities`` are the capabilities the client
    declared (per session or per request, by revision); ``input_responses`` holds the
    answers to the tool's multi-round-trip preflight requests, if any (extension).
    """

    def __init__(
        self,
        server: Host,
        *,
        tool: Tool,
        principal: str | None,
        client_capabilities: dict[str, Any] | None = None,
        input_responses: dict[str, Any] | None = None,
        session: Session | None = None,
        progress_token: str | int | None = None,
        emit: Emit | None = None,
        task_id: str | None = None,
    ) -> None:
        self._server = server
        self.tool = tool
        self.principal = principal
        self.session = session
        self.client_capabilities = (
            client_capabilities
            if client_capabilities is not None
            else session.client_capabilities if session is not None else {}
        )
        self.input_responses = input_responses or {}
        self.progress_token = progress_token
        self.emit = emit
        self.task_id = task_id
        self.cancelled = False
        """Set when the client asked to cancel the task; the worker is also
        cancelled."""
        self.finished = False
        """Set once the task is terminal (progress notifications stop)."""
        self.issued_keys: set[str] = set()
        """Input-request keys handed out for this task (unique for its life)."""
        self.settling: asyncio.Event | None = None
        """Set while the call waits to answer inline (``Limits.answer_within_ms``);
        the server sets it when the tool asks for input."""
        self.request_params: dict[str, Any] = {}
        """The params of the ``tools/call`` request that are not the runtime's own
        (wire names): what the schema adds to the call, and any other key."""
        self.task_params: dict[str, dict[str, Any]] = {}
        """Method -> the params not the runtime's own (wire names) of the latest
        Tasks request on this task that this server answered, e.g.
        ``ctx.task_params["tasks/cancel"]["reason"]`` (set before the worker is
        cancelled)."""

    async def report(self, message: str) -> None:
        """Set the task's ``statusMessage`` (no-op when not running as a task)."""
        if self.task_id is not None:
            await self._server.set_status_message(self.task_id, message)

    @property
    def revision(self) -> str:
        """The id of the revision this call (and its task) runs under: the
        ``REVISION`` of its ``protocol_<revision>`` module (``"2025-11-25"``,
        ``"ext-2026-07-28"``). In a package of several revisions it is the revision
        of the client that called the tool."""
        return self._server.tables.revision

    @overload
    async def set_fields(self, fields: TaskFields) -> None: ...

    @overload
    async def set_fields(
        self, fields: Mapping[str, object], *, revision: str
    ) -> None: ...

    async def set_fields(
        self, fields: Mapping[str, object], *, revision: str | None = None
    ) -> None:
        """Set task fields the schema has and the runtime does not manage (see
        ``protocol.TaskFields``); clients read them on their next snapshot.

        The fields the task's revision does not have are left out (logged at debug
        level), so that one tool serving several revisions sets them all and never
        fails a task of a revision that lacks one. To have them checked instead, name
        the revision the fields are for: ``ctx.set_fields(protocol_ext.TaskFields(
        progress=0.5), revision=protocol_ext.REVISION)`` (type-checked against that
        revision's ``TaskFields``) raises ``ValueError`` when ``revision`` is not
        ``ctx.revision`` or names a field that revision does not have. Without a task
        it does nothing (after that check).
        """
        if revision is not None:
            if revision != self.revision:
                raise ValueError(
                    f"task fields of revision {revision} given to a call of"
                    f" revision {self.revision} (compare ctx.revision first)"
                )
            extras = self._server.tables.task_extra_fields
            unknown = sorted(set(fields) - set(extras))
            if unknown:
                raise ValueError(
                    f"not a task field of revision {revision}: {', '.join(unknown)}"
                )
        if self.task_id is not None:
            await self._server.set_task_fields(self.task_id, cast(TaskFields, fields))

    async def set_status(self, status: StatusName, message: str | None = None) -> None:
        """Move the task to another active status (the revision's ``ACTIVE_STATUSES``),
        for example one the schema added and the configuration classified as active.

        Input and terminal statuses are reached through ``request_input`` and by
        returning or raising. An illegal transition raises ``ValueError``.
        """
        if status not in self._server.tables.active:
            raise ValueError(f"{status!r} is not an active status")
        if self.task_id is not None:
            changes: dict[str, Any] = {"status": status}
            if message is not None:
                changes["status_message"] = message
            await self._server.move_task(self.task_id, **changes)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` with the request's ``progressToken``, if any.

        The token stays valid for the whole task; nothing is sent once it is terminal.
        """
        if self.progress_token is None or self.finished:
            return
        await self._server.send_progress(self, progress, total, message)

    async def notify(self, method: str, params: Mapping[str, Any] | BaseModel) -> None:
        """Send a notification of the schema that the runtime has no role for
        (``notifications/tasks/progress``, ...: ``protocol.SchemaNotification``).

        ``params`` (wire names, or the generated params model) are validated by the
        generated model (``ValueError`` when invalid or when the schema has no such
        notification); the task's ID is filled in where the params have a task ID
        field left out. It goes to the task's creator and to the streams that follow
        the task: the session's stream (a revision with sessions) and the
        ``subscriptions/listen`` streams of the task; without a task, the call's own
        response stream. Nothing is sent once the task is terminal.
        """
        await self._server.notifications.schema_note(self, method, params)

    @overload
    async def elicit(
        self,
        message: str,
        requested_schema: type[M],
        *,
        status: StatusName | None = None,
    ) -> ElicitAnswer[M]: ...

    @overload
    async def elicit(
        self,
        message: str,
        requested_schema: dict[str, Any],
        *,
        status: StatusName | None = None,
    ) -> dict[str, Any]: ...

    async def elicit(
        self,
        message: str,
        requested_schema: type[BaseModel] | dict[str, Any],
        *,
        status: StatusName | None = None,
    ) -> ElicitAnswer[Any] | dict[str, Any]:
        """Ask the user through the client (form elicitation). ``status``: as for
        ``request_input``.

        With a pydantic model class, the form is made from the model
        (``elicitation_schema``: ``TypeError`` naming a field the form cannot ask
        for) and the answer is an ``ElicitAnswer`` of the model: ``action``, and
        ``content`` validated into the model when accepted, else None
        (``ElicitContentError``, a ``ToolError``, when accepted content does not
        fit the model). With a JSON Schema ``dict``, the answer is the
        ``ElicitResult`` as sent (a ``dict``).
        """
        if isinstance(requested_schema, dict):
            return await self.request_input(
                "elicitation/create",
                {
                    "mode": "form",
                    "message": message,
                    "requestedSchema": requested_schema,
                },
                status=status,
            )
        from .elicit import ElicitAnswer, elicitation_schema

        answer = await self.request_input(
            "elicitation/create",
            {
                "mode": "form",
                "message": message,
                "requestedSchema": elicitation_schema(requested_schema),
            },
            status=status,
        )
        return ElicitAnswer.of(requested_schema, answer)

    async def request_input(
        self,
        method: str,
        params: dict[str, Any],
        *,
        status: StatusName | None = None,
    ) -> dict[str, Any]:
        """Ask the client for input mid-flight and wait for the answer.

        As a task, the task waits in ``status`` until the client answers: an input
        status of the revision (``INPUT_STATUSES``), for example one the schema added
        and the configuration classified as input (``awaiting_approval``); the
        revision's ``input_required`` by default. How the request travels follows the
        schema's method roles (see the server's ``request_input``). A status that is
        not an input status raises ``ValueError``.
        """
        if status is not None and status not in self._server.tables.input:
            raise ValueError(f"{status!r} is not an input status")
        return await self._server.inputs.request_input(
            self, method, params, status=status
        )

    async def finish(self, status: StatusName, message: str | None = None) -> None:
        """End the task in a terminal ``status`` that carries no result or error: one
        the schema added and the configuration classified as terminal (``rejected``),
        or ``cancelled``; ``message`` becomes its ``statusMessage``.

        The task never changes again: what the tool returns or raises afterwards is
        dropped, and the client's wait ends with ``TaskEnded`` naming the status
        (``TaskCancelled`` for ``cancelled``). To complete or fail the task, return or
        raise instead: ``completed`` and ``failed`` raise ``ValueError``, as does a
        status that is not terminal. Without a task (a synchronous call) it does
        nothing.
        """
        tables = self._server.tables
        if status not in tables.terminal:
            raise ValueError(f"{status!r} is not a terminal status")
        if status in (tables.completed, tables.failed):
            raise ValueError(
                f"{status!r} carries the tool's outcome: return a result or raise"
                " instead of finishing the task in it"
            )
        if self.task_id is None:
            return
        changes: dict[str, Any] = {"status": status, "input_requests": {}}
        if message is not None:
            changes["status_message"] = message
        ended = await self._server.move_task(self.task_id, **changes)
        self.finished = True
        if ended is not None:
            self._server.emit_audit(status, self.task_id, ended.owner)
