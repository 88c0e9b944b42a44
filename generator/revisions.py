"""The revision registry: what each supported Tasks revision is, in one record.

Input: nothing (constants). Output: ``REGISTRY``, revision id -> ``Revision``, in order
of age. A record holds every fact about its revision that the schema does not carry:
how to recognize its schema (``marker_methods``), the definitions besides the Tasks
ones that belong to its surface (``extra_roots``), its error codes, and its runtime
``Profile`` (statuses, method roles, wire fields, HTTP statuses, whether it is
stateless, the suffix of its modules and the runtime adapter files it needs). Every
stage reads the registry: the CLI's ``--revision`` names (``resolve``), detection,
extraction, normalization, the profile check and the choice of runtime files. Adding a
revision is adding one record (``register``), plus runtime adapters if it needs new
ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mcptasks_gen.profile import MethodRole, Profile


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorCodeSpec:
    """A JSON-RPC error code and when the revision uses it."""

    name: str
    code: int
    doc: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Revision:
    """A Tasks revision the generator knows: one record of the registry."""

    title: str
    marker_methods: frozenset[str]
    """Methods whose presence in a schema says it is this revision (detection tries
    the newest revision first, so a newer revision's schema may also have an older
    one's markers)."""
    extra_roots: tuple[str, ...]
    """Definitions other than the Tasks ones that belong to its surface."""
    error_codes: tuple[ErrorCodeSpec, ...]
    profile: Profile
    """What the runtime needs of the revision (see ``profile.Profile``)."""
    aliases: tuple[str, ...] = ()
    """Other names ``--revision`` accepts for it."""

    @property
    def id(self) -> str:
        """The revision id (``2025-11-25``, ``ext-2026-07-28``)."""
        return self.profile.revision

    @property
    def suffix(self) -> str:
        """Names the revision's modules: ``models_<suffix>.py``, ``api_<suffix>.py``."""
        return self.profile.suffix

    @property
    def runtime(self) -> tuple[str, ...]:
        """The runtime adapter files (client, server) its packages get."""
        return self.profile.runtime

    @property
    def stateless(self) -> bool:
        """Whether the revision has no sessions (every request stands alone)."""
        return self.profile.stateless

    @property
    def is_extension(self) -> bool:
        """Whether Tasks come as an extension of the core protocol."""
        return bool(self.profile.extension_id)


_COMMON_CODES = (
    ErrorCodeSpec(
        name="PARSE_ERROR", code=-32700, doc="The message is not valid JSON."
    ),
    ErrorCodeSpec(
        name="INVALID_REQUEST", code=-32600, doc="The message is not a valid request."
    ),
    ErrorCodeSpec(
        name="METHOD_NOT_FOUND",
        code=-32601,
        doc="The method does not exist or is not available.",
    ),
    ErrorCodeSpec(
        name="INVALID_PARAMS",
        code=-32602,
        doc="Invalid parameters; also an unknown, expired or foreign task ID.",
    ),
    ErrorCodeSpec(
        name="INTERNAL_ERROR", code=-32603, doc="The receiver failed internally."
    ),
)

_TASK_FIELDS_2025 = (
    "taskId",
    "status",
    "statusMessage",
    "createdAt",
    "lastUpdatedAt",
    "ttl",
    "pollInterval",
)
_TASK_FIELDS_EXT = (
    "taskId",
    "status",
    "statusMessage",
    "createdAt",
    "lastUpdatedAt",
    "ttlMs",
    "pollIntervalMs",
)
_LIVE = ("working", "input_required", "completed", "failed", "cancelled")

_PROFILE_2025_11_25 = Profile(
    revision="2025-11-25",
    protocol_version="2025-11-25",
    extension_id="",
    stateless=False,
    status_enum="TaskStatus",
    initial="working",
    statuses={
        "working": "active",
        "input_required": "input",
        "completed": "terminal",
        "failed": "terminal",
        "cancelled": "terminal",
    },
    transitions={"working": _LIVE[1:], "input_required": (_LIVE[0], *_LIVE[2:])},
    task_model="Task",
    task_fields=_TASK_FIELDS_2025,
    variant_union="",
    snapshot_models=(),
    methods=(
        MethodRole(
            method="tasks/get",
            role="get",
            sender="client",
            required=True,
            message="GetTaskRequest",
        ),
        MethodRole(
            method="tasks/result",
            role="result",
            sender="client",
            required=True,
            message="GetTaskPayloadRequest",
        ),
        MethodRole(
            method="tasks/list",
            role="list",
            sender="client",
            required=True,
            message="ListTasksRequest",
        ),
        MethodRole(
            method="tasks/cancel",
            role="cancel",
            sender="client",
            required=True,
            message="CancelTaskRequest",
        ),
        MethodRole(
            method="notifications/tasks/status",
            role="notify",
            sender="server",
            required=False,
            message="TaskStatusNotification",
        ),
    ),
    status_roles={
        "WORKING": "working",
        "INPUT_REQUIRED": "input_required",
        "COMPLETED": "completed",
        "FAILED": "failed",
        "CANCELLED": "cancelled",
    },
    meta_keys={
        "RELATED_TASK": "io.modelcontextprotocol/related-task",
        "MODEL_IMMEDIATE_RESPONSE": "io.modelcontextprotocol/model-immediate-response",
    },
    required_models=(
        "CallToolRequestParams",
        "CallToolRequestParamsMeta",
        "CallToolResult",
        "CancelTaskRequestParams",
        "CreateTaskResult",
        "GetTaskPayloadRequestParams",
        "GetTaskRequestParams",
        "ListTasksResult",
        "Task",
        "TaskMetadata",
    ),
    suffix="2025",
    runtime=(
        "client/rev_2025.py",
        "server/rev_2025.py",
        "client_2025.py",
        "server_2025.py",
    ),
    params_fields={
        "get": ("taskId",),
        "result": ("taskId",),
        "cancel": ("taskId",),
        "list": ("cursor",),
    },
    model_fields={
        "CallToolRequestParams": ("task",),
        "CallToolRequestParamsMeta": ("progressToken",),
        "CreateTaskResult": ("task",),
        "ElicitRequestFormParams": ("message", "requestedSchema"),
        "Error": ("code", "message", "data"),
        "ListTasksResult": ("tasks", "nextCursor"),
        "RelatedTaskMetadata": ("taskId",),
        "TaskMetadata": ("ttl",),
        "ToolExecution": ("taskSupport",),
    },
    check_rules={
        "create_wrapper": "task",
        "create_status_initial": True,
        "cancel_returns_task": True,
        "cancel_cooperative": False,
        "cancel_terminal_error": -32602,
        "tool_error_fails": True,
        "task_required_errors": (-32601, -32600),
        "role_capabilities": (("cancel", ("cancel",)), ("list", ("list",))),
        "routing_headers": False,
        "header_mismatch_error": 0,
        "missing_capability_error": 0,
        "meta_required": False,
    },
    task_request=("CallToolRequestParams", "task"),
    server_capabilities={
        "cancel": ("tasks", "cancel"),
        "list": ("tasks", "list"),
        "create": ("tasks", "requests", "tools", "call"),
    },
)

CORE_2025_11_25 = Revision(
    title="MCP 2025-11-25 experimental Tasks",
    marker_methods=frozenset({"tasks/result", "notifications/tasks/status"}),
    extra_roots=(
        "CallToolRequest",
        "CallToolResult",
        "ClientCapabilities",
        "CreateMessageRequest",
        "CreateMessageResult",
        "ElicitRequest",
        "ElicitResult",
        "Error",
        "ServerCapabilities",
        "Tool",
        "ToolExecution",
    ),
    error_codes=_COMMON_CODES,
    profile=_PROFILE_2025_11_25,
    aliases=("2025",),
)

_PROFILE_EXTENSION = Profile(
    revision="ext-2026-07-28",
    protocol_version="2026-07-28",
    extension_id="io.modelcontextprotocol/tasks",
    stateless=True,
    status_enum="TaskStatus",
    initial="working",
    statuses=_PROFILE_2025_11_25.statuses,
    transitions=_PROFILE_2025_11_25.transitions,
    task_model="Task",
    task_fields=_TASK_FIELDS_EXT,
    variant_union="DetailedTask",
    snapshot_models=("CreateTaskResult",),
    methods=(
        MethodRole(
            method="tasks/get",
            role="get",
            sender="client",
            required=True,
            message="GetTaskRequest",
        ),
        MethodRole(
            method="tasks/update",
            role="update",
            sender="client",
            required=False,
            message="UpdateTaskRequest",
        ),
        MethodRole(
            method="tasks/cancel",
            role="cancel",
            sender="client",
            required=True,
            message="CancelTaskRequest",
        ),
        MethodRole(
            method="tasks/list",
            role="list",
            sender="client",
            required=False,
            message="ListTasksRequest",
        ),
        MethodRole(
            method="tasks/result",
            role="result",
            sender="client",
            required=False,
            message="GetTaskPayloadRequest",
        ),
        MethodRole(
            method="notifications/tasks",
            role="notify",
            sender="server",
            required=False,
            message="TaskStatusNotification",
        ),
    ),
    status_roles=_PROFILE_2025_11_25.status_roles,
    meta_keys={
        "PROTOCOL_VERSION": "io.modelcontextprotocol/protocolVersion",
        "CLIENT_CAPABILITIES": "io.modelcontextprotocol/clientCapabilities",
        "CLIENT_INFO": "io.modelcontextprotocol/clientInfo",
        "SERVER_INFO": "io.modelcontextprotocol/serverInfo",
        "SUBSCRIPTION_ID": "io.modelcontextprotocol/subscriptionId",
    },
    required_models=(
        "CancelTaskRequestParams",
        "CancelledTask",
        "CompletedTask",
        "CreateTaskResult",
        "FailedTask",
        "GetTaskRequestParams",
        "InputRequiredTask",
        "WorkingTask",
    ),
    suffix="ext",
    runtime=(
        "client/rev_ext.py",
        "server/rev_ext.py",
        "client_ext.py",
        "server_ext.py",
    ),
    variant_fields={
        "input_required": ("inputRequests",),
        "completed": ("result",),
        "failed": ("error",),
    },
    params_fields={
        "get": ("taskId",),
        "cancel": ("taskId",),
        "update": ("taskId", "inputResponses"),
        "result": ("taskId",),
        "list": ("cursor",),
    },
    model_fields={
        "ElicitRequestFormParams": ("message", "requestedSchema"),
        "Error": ("code", "message", "data"),
        "ListTasksResult": ("tasks", "nextCursor"),
        "Result": ("resultType",),
        "TaskSubscriptionAcknowledgedNotifications": ("taskIds",),
        "TaskSubscriptionNotifications": ("taskIds",),
    },
    check_rules={
        "create_wrapper": "",
        "create_status_initial": False,
        "cancel_returns_task": False,
        "cancel_cooperative": True,
        "cancel_terminal_error": 0,
        "tool_error_fails": False,
        "task_required_errors": (-32021,),
        "role_capabilities": (),
        "routing_headers": True,
        "header_mismatch_error": -32020,
        "missing_capability_error": -32021,
        "meta_required": True,
    },
    http_statuses={
        "PARSE_ERROR": 400,
        "INVALID_REQUEST": 400,
        "INVALID_PARAMS": 400,
        "METHOD_NOT_FOUND": 404,
        "LIMIT_EXCEEDED": 429,
        "HEADER_MISMATCH": 400,
        "MISSING_REQUIRED_CLIENT_CAPABILITY": 400,
        "UNSUPPORTED_PROTOCOL_VERSION": 400,
    },
    result_kind=("Result", "resultType"),
    input_union="InputRequest",
)

EXTENSION = Revision(
    title="MCP Tasks extension io.modelcontextprotocol/tasks (with core 2026-07-28)",
    marker_methods=frozenset({"tasks/update", "notifications/tasks"}),
    extra_roots=("InputRequests", "InputResponses"),
    error_codes=(
        *_COMMON_CODES,
        ErrorCodeSpec(
            name="HEADER_MISMATCH",
            code=-32020,
            doc="Mcp-Method or Mcp-Name is missing or does not match the body.",
        ),
        ErrorCodeSpec(
            name="MISSING_REQUIRED_CLIENT_CAPABILITY",
            code=-32021,
            doc=(
                "The request did not declare a capability the server needs (e.g. the"
                " Tasks extension)."
            ),
        ),
        ErrorCodeSpec(
            name="UNSUPPORTED_PROTOCOL_VERSION",
            code=-32022,
            doc="The server does not speak the requested protocol version.",
        ),
    ),
    profile=_PROFILE_EXTENSION,
    aliases=("extension", "ext", "2026-07-28"),
)

REGISTRY: dict[str, Revision] = {r.id: r for r in (CORE_2025_11_25, EXTENSION)}
"""Every revision the generator knows, by id, oldest first (the order of the
revisions in a package of several)."""

DEFAULT_SCHEMA = (
    EXTENSION.id
)  # the embedded schema ``embedded_schema()`` names by default
DEFAULT_SCHEMAS = (CORE_2025_11_25.id, EXTENSION.id)
"""The embedded schemas generated when none is given: one package speaking both
revisions."""


def register(revision: Revision) -> Revision:
    """Add ``revision`` to the registry, after checking that its id, aliases, suffix
    and adapter files collide with no other revision's (ValueError if they do)."""
    taken = {revision.id, *revision.aliases}
    for other in REGISTRY.values():
        if other.id == revision.id:
            raise ValueError(f"revision {revision.id} is already registered")
        clash = taken & {other.id, *other.aliases}
        if clash:
            raise ValueError(
                f"revision {revision.id}: name {sorted(clash)[0]!r} is {other.id}'s"
            )
        if other.suffix == revision.suffix:
            raise ValueError(
                f"revision {revision.id}: suffix {revision.suffix!r} is {other.id}'s"
            )
    if not revision.suffix.isidentifier():
        raise ValueError(f"revision {revision.id}: suffix must be an identifier")
    REGISTRY[revision.id] = revision
    return revision


def aliases() -> dict[str, str]:
    """Every alias of a registered revision -> the revision's id."""
    return {alias: r.id for r in REGISTRY.values() for alias in r.aliases}


def names() -> list[str]:
    """Every name ``--revision`` accepts: ids and aliases, sorted."""
    return sorted({*REGISTRY, *aliases()})


def resolve(name: str) -> Revision | None:
    """The revision ``name`` (an id or an alias) names; None when it names none."""
    return REGISTRY.get(aliases().get(name, name))


def newest_first() -> list[Revision]:
    """The registered revisions, newest first (the order detection tries them in)."""
    return list(reversed(REGISTRY.values()))


def runtime_adapters(revisions: Iterable[Revision] | None = None) -> frozenset[str]:
    """The runtime adapter files of ``revisions`` (of every registered revision when
    None): a package gets its own revisions' and no other's."""
    chosen = REGISTRY.values() if revisions is None else revisions
    return frozenset(name for r in chosen for name in r.runtime)
