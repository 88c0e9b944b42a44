"""What the shared runtime knows about one Tasks revision: its tables, in one object.

Every generated ``protocol_<revision>`` module builds a :class:`RevisionTables` (its
``TABLES``) from the schema and the revision profile. The revision's adapters
(``client_2025`` and ``server_2025``, or ``client_ext`` and ``server_ext``) hand it to
the shared cores, which read statuses, transitions, task variants, task fields, method
roles and error codes from it instead of importing a revision's modules. That is what
lets one package carry two revisions on one runtime.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal, cast

from pydantic import BaseModel, create_model

__all__ = [
    "INPUT_CAPABILITIES",
    "INPUT_RESULTS",
    "InputMethod",
    "MethodSpec",
    "RevisionTables",
    "choose_revision",
    "default_inputs",
]

INPUT_CAPABILITIES = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
"""Input request method (server to client) -> the client capability that declares a
handler for it."""

INPUT_RESULTS = {
    "elicitation/create": "ElicitResult",
    "sampling/createMessage": "CreateMessageResult",
    "roots/list": "ListRootsResult",
}
"""The generated model of the client's answer to each input request (if the schema
has it)."""

_PARAMS_MODELS: dict[type[BaseModel], type[BaseModel]] = {}
"""Request model -> a model of its ``params`` field alone (built once)."""


@dataclass(frozen=True, slots=True)
class InputMethod:
    """A request the server may send the client for input: a member of the schema's
    input-request union (or, where the schema has none, one of the defaults of
    :data:`INPUT_CAPABILITIES`), with the models the schema has for it."""

    name: str
    capability: str
    """The client capability that declares a handler for it (``elicitation``)."""
    request: type[BaseModel] | None = None
    """The request model (``ElicitRequest``; None where the schema has none)."""
    result: type[BaseModel] | None = None
    """The model of the client's answer (``ElicitResult``; None: any object)."""

    def parse_params(self, params: Mapping[str, Any]) -> Any:
        """``params`` (wire form) validated as the request model's ``params``: the
        generated model (``ValueError`` when invalid); the dict itself where the
        schema has no request model."""
        model = self.request
        if model is None or "params" not in model.model_fields:
            return dict(params)
        wrapper = _PARAMS_MODELS.get(model)
        if wrapper is None:
            info = model.model_fields["params"]
            annotation: Any = info.annotation
            wrapper = _PARAMS_MODELS[model] = create_model(
                f"_{model.__name__}ParamsOnly",
                __module__=model.__module__,
                params=(annotation, info),
            )
        return getattr(wrapper.model_validate({"params": dict(params)}), "params")

    def check_params(self, params: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
        """``params`` (a model or its wire form) checked against the request model;
        the wire form (``ValueError`` when invalid)."""
        if isinstance(params, BaseModel):
            wire: dict[str, Any] = params.model_dump(
                mode="json", by_alias=True, exclude_none=True
            )
        else:
            wire = dict(params)
        self.parse_params(wire)
        return wire


def default_inputs() -> dict[str, InputMethod]:
    """The input methods of :data:`INPUT_CAPABILITIES`, without models."""
    return {
        method: InputMethod(method, capability)
        for method, capability in INPUT_CAPABILITIES.items()
    }


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """A method of the revision and what the runtime does with it."""

    name: str
    role: str
    """``get``, ``update``, ``cancel``, ``list``, ``result``, ``notify``, or
    ``custom`` (served by a registered handler)."""
    sender: Literal["client", "server"]
    message: type[BaseModel]
    notification: bool
    result: type[BaseModel] | None = None
    """The result model of a request (None for a notification or a result the schema
    leaves open)."""
    params: type[BaseModel] | None = None
    """The params model (None where the params are not one object model)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RevisionTables:
    """One revision's protocol tables, as the generated ``protocol_<revision>``
    module has them (see that module for each table's contents)."""

    revision: str
    """The revision id (``2025-11-25``, ``ext-2026-07-28``)."""
    protocol_version: str
    """The MCP protocol version the runtime speaks in this revision."""
    extension_id: str
    """The Tasks extension identifier ("" when Tasks are part of the core protocol)."""
    stateless: bool
    """Whether the revision has no sessions: every request stands alone (the
    extension), rather than belonging to a session that ``initialize`` opened
    (2025-11-25). From the revision's record in the generator's registry."""
    package_name: str
    """The import name of the package (the default client name on the wire)."""
    models: ModuleType
    """The revision's generated models module."""
    task_model: type[BaseModel]
    """The task model (the entries of a ``list`` result; every status's class in
    2025-11-25)."""
    statuses: tuple[str, ...]
    initial: str
    working: str
    input_required: str
    completed: str
    failed: str
    cancelled: str
    active: frozenset[str]
    input: frozenset[str]
    terminal: frozenset[str]
    transitions: Mapping[str, frozenset[str]]
    task_by_status: Mapping[str, type[BaseModel]]
    task_fields: Mapping[str, str]
    """Task fields the runtime reads and writes: attribute name -> wire name, in the
    profile's order (id, status, message, created, updated, TTL, poll interval)."""
    task_extra_fields: Mapping[str, str]
    methods: Mapping[str, MethodSpec]
    roles: Mapping[str, str]
    meta_keys: Mapping[str, str]
    get_params: type[BaseModel]
    """The params model of the ``get`` method (built with ``task_id=``)."""
    cancel_params: type[BaseModel]
    """The params model of the ``cancel`` method (built with ``task_id=``)."""
    create_result: type[BaseModel]
    """The result of a task-creating request (the task nested under ``task``, or its
    fields inline)."""
    error_codes: Mapping[str, int]
    """The revision's JSON-RPC error codes by ``ErrorCode`` name; a mechanism whose
    error code the revision lacks (``HEADER_MISMATCH``: routing headers) does not
    run."""
    http_statuses: Mapping[int, int]
    """The HTTP status of an error response, by JSON-RPC code (200 for any other)."""
    task_request_field: str = ""
    """The ``tools/call`` params field by which a client asks for a task (``task``);
    empty where the server alone decides whether a call runs as a task."""
    result_kind_field: str = ""
    """The result field naming what a result is (``resultType``: ``complete``,
    ``task``, ``input_required``); empty where a task result is told by the create
    result's shape."""
    server_capabilities: Mapping[str, tuple[str, ...]] = field(
        default_factory=dict[str, tuple[str, ...]]
    )
    """Role -> path in the server capabilities that declares it (``create``:
    task-augmented ``tools/call``); a server declares what it serves, a client uses a
    listed role only where it is declared."""
    extra_params: Mapping[str, tuple[str, ...]] = field(
        default_factory=dict[str, tuple[str, ...]]
    )
    """Role -> the params of its request that the runtime does not manage (attribute
    names): the keyword arguments of the calls that send it (``create``:
    ``tools/call``)."""
    param_defaults: Mapping[str, Mapping[str, object]] = field(
        default_factory=dict[str, Mapping[str, object]]
    )
    """Role -> the configured values of those params (attribute names): sent when the
    runtime sends the request on its own, and the keywords' defaults."""
    params_models: Mapping[str, type[BaseModel]] = field(
        default_factory=dict[str, type[BaseModel]]
    )
    """Role -> the params model of its request, where the schema has one."""
    inputs: Mapping[str, InputMethod] = field(default_factory=default_inputs)
    """The input requests the server may send the client, by method: the members of
    the schema's input-request union, with their params and result models."""
    task_requests: frozenset[str] = field(init=False)
    """The Tasks requests a client sends (rate-limited; gated by the extension)."""

    def __post_init__(self) -> None:
        requests = frozenset(
            name
            for name, spec in self.methods.items()
            if spec.sender == "client" and not spec.notification
        )
        object.__setattr__(self, "task_requests", requests)

    @property
    def is_extension(self) -> bool:
        """Whether Tasks come as an extension that peers declare (its id in the
        capabilities' ``extensions``), not as part of the core protocol."""
        return bool(self.extension_id)

    @property
    def client_asks_for_tasks(self) -> bool:
        """Whether a client asks for a task in the request's params (the
        ``task_request_field``), rather than the server alone deciding."""
        return bool(self.task_request_field)

    @property
    def results_say_their_kind(self) -> bool:
        """Whether results carry a field naming their kind (``resultType``)."""
        return bool(self.result_kind_field)

    def method(self, role: str) -> str:
        """The method that plays ``role`` (``"get"`` -> ``"tasks/get"``); KeyError,
        naming the role and the revision, when the schema has none."""
        try:
            return self.roles[role]
        except KeyError:
            raise KeyError(
                f"revision {self.revision} has no method for role {role!r}"
            ) from None

    def request_params(
        self, role: str, given: Mapping[str, object], base: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The wire params of the request of ``role``: ``base`` (wire names: what the
        runtime manages) with the params it does not manage, the configured values
        (:attr:`param_defaults`) overridden by ``given`` (attribute names), checked by
        the request's params model (``ValidationError``). ``TypeError`` names a param
        of ``given`` the request does not have."""
        names = self.extra_params.get(role, ())
        unknown = sorted(set(given) - set(names))
        if unknown:
            method = "tools/call" if role == "create" else self.roles.get(role, role)
            raise TypeError(f"{method} has no param {unknown[0]!r} in {self.revision}")
        values = {**self.param_defaults.get(role, {}), **given}
        if not values:
            return dict(base)
        model = self.params_models[role]
        wire = model.model_validate({**base, **values}).model_dump(
            mode="json", by_alias=True, exclude_unset=True
        )
        aliases = {
            model.model_fields[name].serialization_alias or name for name in values
        }
        return {**base, **{k: v for k, v in wire.items() if k in aliases}}

    def has_role(self, role: str) -> bool:
        """Whether the schema has the method that plays ``role`` (e.g. ``"update"``)."""
        return role in self.roles

    def input_method(self, method: str) -> InputMethod:
        """The input method ``method``; one not in the table (a server of another
        schema may send it) gets the capability its first path segment names and no
        models."""
        known = self.inputs.get(method)
        return known if known is not None else InputMethod(method, method.split("/")[0])

    def schema_notification(self, method: str) -> MethodSpec | None:
        """The server notification ``method`` of the schema that the runtime has no
        role for (tool code sends it, clients hand it to their callbacks); None for
        any other method."""
        spec = self.methods.get(method)
        if spec is None or not spec.notification or spec.sender != "server":
            return None
        return spec if spec.role == "custom" else None

    def result_carries_task(self, role: str) -> bool:
        """Whether the result model of the method playing ``role`` carries the task's
        fields (2025-11-25 answers ``tasks/cancel`` with the task, the extension with an
        acknowledgement); False when the schema has no such method or result model."""
        spec = self.methods.get(self.roles.get(role, ""))
        model = spec.result if spec is not None else None
        return model is not None and "task_id" in model.model_fields


def choose_revision(
    revisions: Iterable[RevisionTables], answer: Mapping[str, Any], *, stateless: bool
) -> RevisionTables | None:
    """The revision a server speaks, of those of ``revisions`` that are ``stateless``
    (or not), from its answer to ``server/discover`` (its ``supportedVersions``) or to
    ``initialize`` (its ``protocolVersion``): the newest (the last in ``revisions``)
    whose protocol version the server names; None when it names none of theirs."""
    listed: object = answer.get("supportedVersions") if stateless else None
    versions: list[object] = (
        cast(list[object], listed)
        if isinstance(listed, list)
        else [answer.get("protocolVersion")]
    )
    named = {v for v in versions if isinstance(v, str)}
    found = [
        r for r in revisions if r.stateless == stateless and r.protocol_version in named
    ]
    return found[-1] if found else None
