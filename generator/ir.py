"""The intermediate model: what the templates render, already decided in full.

Tree::

    Package
      models: Model...         one per generated class, in output order
        ObjectModel            fields: Field...
        EnumModel              members: EnumMember...
        RootModel              a union, list, map or scalar wrapper
      dispatches: Dispatch...  discriminators of unions that pydantic's own cannot pick
      methods: Method...       the revision's Tasks methods and notifications
      error_codes: ErrorCode... files: OutputFile...     which files the package has and
      which template renders each

No I/O and no jinja here; every value is final (identifiers validated, literals rendered
as Python source, tuples sorted where order is not meaningful). Types are
``typeexpr.Type`` trees: the templates render them (``| py``), every other stage walks
them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mcptasks_gen import typeexpr as tx
from mcptasks_gen.errors import Location
from mcptasks_gen.naming import ClassName, PyIdent, py_str
from mcptasks_gen.typeexpr import Type


@dataclass(frozen=True, slots=True, kw_only=True)
class Field:
    """One attribute of an object model."""

    name: PyIdent
    wire_name: str
    annotation: Type
    required: bool
    constant: bool  # a required ``const``: defaulted to its value and always sent
    doc: str
    loc: Location
    const_value: str | int | bool | None = None  # the value of a constant field
    # optional, and its schema admits null: a null set is a value, not an absence
    nullable: bool = False

    @property
    def leaves_out_none(self) -> bool:
        """Whether ``None`` stands for absent: an optional field whose schema does not
        admit null, left out of the output while it is ``None`` (``exclude_if``)."""
        return not self.required and not self.nullable

    @property
    def default(self) -> str:
        """Python source of the default value: the constant's, ``None`` for an
        optional field, "" for none."""
        if self.constant:
            return py_str(self.const_value)
        return "" if self.required else "None"

    @property
    def wire_literal(self) -> str:
        """The wire name as a Python string literal."""
        return py_str(self.wire_name)

    @property
    def aliased(self) -> bool:
        """Whether the wire name differs from the attribute name."""
        return self.wire_name != self.name


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectModel:
    """A JSON object type: a pydantic model with fields."""

    kind: Literal["object"] = "object"
    name: ClassName
    doc: str
    fields: tuple[Field, ...]
    closed: bool  # unknown fields are rejected instead of kept
    loc: Location
    counts_constants: bool = (
        False  # validation counts missing constants as set (``model_post_init``)
    )
    # ``to_wire()`` sends only the fields that were set: this model or one it holds has
    # a nullable optional field (``Field.nullable``)
    set_only: bool = False

    @property
    def constants(self) -> tuple[PyIdent, ...]:
        """Attributes holding required constants."""
        return tuple(f.name for f in self.fields if f.constant)


@dataclass(frozen=True, slots=True, kw_only=True)
class EnumMember:
    """One value of a string enumeration."""

    name: PyIdent
    value: str  # Python literal
    raw: str


@dataclass(frozen=True, slots=True, kw_only=True)
class EnumModel:
    """A closed set of strings: a ``str`` enum, so members compare equal to their
    values."""

    kind: Literal["enum"] = "enum"
    name: ClassName
    doc: str
    members: tuple[EnumMember, ...]
    loc: Location


@dataclass(frozen=True, slots=True, kw_only=True)
class RootModel:
    """Any other named type (union, list, map, scalar): a pydantic ``RootModel``."""

    kind: Literal["root"] = "root"
    name: ClassName
    doc: str
    annotation: Type
    discriminator: str  # the property a union is discriminated on, "" when none
    loc: Location
    set_only: bool = False  # as ``ObjectModel.set_only``, for what the annotation holds


Model = ObjectModel | EnumModel | RootModel


@dataclass(frozen=True, slots=True, kw_only=True)
class Dispatch:
    """How a union whose object members all pin one property to string constants picks
    its member(s): ``Annotated[A | B | ..., <name>]``, where ``<name>`` is a
    module-level ``_Dispatch`` of ``models.py``, which turns the union into a tagged
    one.

    Used where pydantic's own discriminator cannot be: members that share a value
    (string, enum and plain string field schemas all have ``"type": "string"``) or that
    leave the property out (a form's ``mode``). ``cases`` are Python source, one
    ``value: (properties, tags)`` entry each (``None`` for the property absent or null).
    """

    name: PyIdent  # the module-level constant the annotations use
    names: tuple[
        str, ...
    ]  # the pinned property: its wire name, then the members' attribute names for it
    cases: tuple[str, ...]
    always_present: bool  # every member requires the property: pydantic-core reads it

    @property
    def names_literal(self) -> str:
        """``names`` as a Python tuple."""
        return (
            "("
            + ", ".join(py_str(n) for n in self.names)
            + ("," if len(self.names) == 1 else "")
            + ")"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Method:
    """A JSON-RPC method or notification of the Tasks surface."""

    name: str  # wire name, e.g. "tasks/get"
    literal: str  # the wire name as a Python literal
    notification: bool
    message: ClassName  # the whole request/notification model
    params: Type  # type of ``params``
    result: Type  # type of the result (``None`` for notifications)


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorCode:
    """A JSON-RPC error code the revision uses."""

    name: PyIdent
    code: int
    doc: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputFile:
    """A file of the generated package and the template that renders it ("" for none).

    A ``verbatim`` file is a runtime module copied as it is (its template is its path
    below the template folder); it carries no schema hash in its header.
    """

    path: str
    template: str
    verbatim: bool = False
    revision: str = (
        ""  # the suffix of the revision whose schema renders it ("": the package's)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Package:
    """Everything one generated package consists of."""

    name: PyIdent
    revision: str
    is_extension: bool
    title: str
    schema_name: str
    schema_sha256: str
    generator_version: str
    regenerate: str  # the command that regenerates this package
    typing_imports: tuple[str, ...]
    pydantic_imports: tuple[str, ...]
    models: tuple[Model, ...]
    rebuild: tuple[
        ClassName, ...
    ]  # root models that refer to later classes, rebuilt at the end
    exports: tuple[str, ...]
    methods: tuple[Method, ...]
    error_codes: tuple[ErrorCode, ...]
    files: tuple[OutputFile, ...]
    renamed: tuple[
        tuple[str, ClassName], ...
    ] = ()  # definitions whose class is not their name
    json_kind: bool = (
        # some union picks its branch by JSON type: models.py defines ``_json_kind``
        False
    )
    # some pattern needs Python's ``re``: the models use ``regex_engine="python-re"``
    python_re: bool = False
    dispatches: tuple[
        Dispatch, ...
    ] = ()  # unions picked by a pinned property: models.py defines ``_Dispatch``
    extension_id: str = ""
    """The identifier of the Tasks extension the package declares ("" when the
    revision is not an extension): the one the schema names, or the target's."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Status:
    """A task status value and its class: ``active``, ``input`` or ``terminal``."""

    value: str
    klass: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Transition:
    """The statuses a live status may move to."""

    source: str
    targets: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Variant:
    """The model that carries a task in one status."""

    status: str
    model: ClassName


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskField:
    """A wire field of the task model.

    For an optional field the runtime does not know (a key of ``TaskFields``), the
    annotation is the type without ``Annotated`` metadata (a ``TypedDict`` validates
    nothing), and what it names is listed so that the module defining ``TaskFields``
    imports it."""

    name: PyIdent
    wire_name: str
    annotation: Type
    typing: tuple[str, ...] = ()  # names from ``typing`` the annotation uses (``Any``)
    models: tuple[str, ...] = ()  # model classes the annotation names
    modules: tuple[
        str, ...
    ] = ()  # models modules it names classes through (``models_ext.Foo``)


@dataclass(frozen=True, slots=True, kw_only=True)
class Kwarg:
    """A keyword argument of a typed client method: one field of the request's
    params."""

    name: PyIdent
    wire_name: str
    annotation: Type
    required: bool
    default: str = ""  # the configured value, as a Python literal ("": none)


PARAM_ROLES: dict[str, str] = {
    "create": "CallToolParams",
    "get": "GetTaskParams",
    "cancel": "CancelTaskParams",
    "update": "UpdateTaskParams",
    "result": "TaskResultParams",
    "list": "ListTasksParams",
}
"""Role -> the ``TypedDict`` of the params of its request that the runtime does not
manage: the keyword arguments of the runtime's calls that send it (``create`` is
``tools/call``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestParam:
    """A param of a request the runtime sends that the runtime does not manage (the
    schema added it): a keyword argument of the calls that send the request."""

    role: str  # a key of PARAM_ROLES
    method: str = ""  # the request's method (one revision's)
    field: TaskField  # its name, wire name and TypedDict annotation
    required: bool  # a required keyword (the schema requires it and no value is set)
    default: str = ""  # the configured value, as a Python literal ("": none)
    value: object = None  # the configured value (when ``default`` is set)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProtocolMethod:
    """A method with its role in the runtime (``custom`` when the runtime has none)."""

    name: str
    role: str
    sender: str  # "client" or "server"
    notification: bool
    message: ClassName
    params: Type
    params_model: str  # the params class ("" when params is not one object model)
    result: Type
    python_name: PyIdent
    kwargs: tuple[Kwarg, ...]

    @property
    def result_model(self) -> bool:
        """Whether the result is a generated model (not a plain object, not a
        notification)."""
        return self.result not in (tx.DICT_ANY, tx.NONE)


@dataclass(frozen=True, slots=True, kw_only=True)
class InputMethod:
    """A request the server sends the client for input (a member of the schema's
    input-request union, or one of the runtime's defaults where the schema has none).
    """

    name: str  # the method, e.g. "elicitation/create"
    capability: str  # the client capability that declares a handler for it
    request: str  # the request model ("" when the schema has none)
    params: Type  # the request's params (``dict[str, Any]``: no model)
    result: str  # the result model ("" when the schema has none)


@dataclass(frozen=True, slots=True, kw_only=True)
class Protocol:
    """The revision profile applied to the schema: the tables of the ``protocol``
    module."""

    package: PyIdent
    revision: str
    protocol_version: str
    extension_id: str
    stateless: bool  # the revision has no sessions
    status_enum: ClassName
    initial: str
    statuses: tuple[Status, ...]
    transitions: tuple[Transition, ...]
    variants: tuple[Variant, ...]
    variant_union: str
    snapshot: tuple[ClassName, ...]  # task shapes a client sees besides the variants
    # names the revision's modules: models_<suffix>, protocol_<suffix>, api_<suffix>
    suffix: str
    client_runtime: str  # the revision's client adapter module (dotted: client.rev_ext)
    server_runtime: str  # the revision's server adapter module
    model_imports: tuple[str, ...]  # model names the protocol module imports
    client_imports: tuple[str, ...]  # model names the typed client methods use
    server_imports: tuple[str, ...]  # model names the server's handler types use
    task_model: ClassName
    task_fields: tuple[TaskField, ...]
    task_extras: tuple[TaskField, ...]  # optional task fields the runtime does not know
    extra_typing: tuple[str, ...] = ()  # names from ``typing`` that ``TaskFields`` uses
    methods: tuple[ProtocolMethod, ...]
    meta_keys: tuple[tuple[str, str], ...]
    status_roles: tuple[
        tuple[str, str], ...
    ]  # constant name -> status the runtime names
    create_result: ClassName  # the result of a task-creating request
    check_rules: tuple[
        tuple[str, str], ...
    ] = ()  # checker rule -> Python literal (profile order)
    http_statuses: tuple[
        tuple[int, int], ...
    ] = ()  # error code -> HTTP status of its error response
    task_request_field: str = (
        ""  # create params field asking for a task ("": the server decides)
    )
    result_kind_field: str = (
        ""  # result field naming the kind of result ("": told by shape)
    )
    server_capabilities: tuple[
        tuple[str, tuple[str, ...]], ...
    ] = ()  # role -> capability path
    request_params: tuple[RequestParam, ...] = ()  # params the runtime does not manage
    params_models: tuple[
        tuple[str, str], ...
    ] = ()  # role -> its params model (where the schema has one)

    @property
    def params_typing(self) -> tuple[str, ...]:
        """The names from ``typing`` that the params ``TypedDict``s use."""
        return tuple(
            sorted({name for p in self.request_params for name in p.field.typing})
        )

    def params_of(self, role: str) -> tuple[RequestParam, ...]:
        """The request params of ``role`` (a key of ``PARAM_ROLES``)."""
        return tuple(p for p in self.request_params if p.role == role)

    inputs: tuple[InputMethod, ...] = ()  # the input requests the server may send

    @property
    def result_checks(self) -> tuple[ProtocolMethod, ...]:
        """Requests whose result model the checker validates: the client's, with a
        model result."""
        return tuple(m for m in self.client_requests if m.result_model)

    @property
    def notifications(self) -> tuple[ProtocolMethod, ...]:
        """Notifications the server sends."""
        return tuple(m for m in self.methods if m.notification and m.sender == "server")

    @property
    def input_any(self) -> bool:
        """Whether the ``InputHandlers`` table names ``Any`` (an input method without
        a params or a result model)."""
        return any(not i.result or "Any" in tx.names(i.params) for i in self.inputs)

    @property
    def schema_notifications(self) -> tuple[ProtocolMethod, ...]:
        """Notifications the server sends that the runtime has no role for: tool code
        sends them (``ToolContext.notify``), clients hand them to their callbacks."""
        return tuple(m for m in self.notifications if m.role == "custom")

    @property
    def active(self) -> tuple[str, ...]:
        """Live statuses in which the work goes on."""
        return tuple(s.value for s in self.statuses if s.klass == "active")

    @property
    def input(self) -> tuple[str, ...]:
        """Live statuses in which the task waits for input."""
        return tuple(s.value for s in self.statuses if s.klass == "input")

    @property
    def terminal(self) -> tuple[str, ...]:
        """Statuses a task never leaves."""
        return tuple(s.value for s in self.statuses if s.klass == "terminal")

    @property
    def client_requests(self) -> tuple[ProtocolMethod, ...]:
        """Requests a client sends: one typed client method each."""
        return tuple(
            m for m in self.methods if m.sender == "client" and not m.notification
        )

    @property
    def runtime_methods(self) -> tuple[str, ...]:
        """Methods the runtime serves or sends by its role."""
        return tuple(m.name for m in self.methods if m.role != "custom")

    @property
    def custom_requests(self) -> tuple[ProtocolMethod, ...]:
        """Client requests the runtime has no role for: served by registered
        handlers."""
        return tuple(m for m in self.client_requests if m.role == "custom")


@dataclass(frozen=True, slots=True, kw_only=True)
class Revision:
    """One revision of a package: its models IR and its protocol tables."""

    package: Package
    protocol: Protocol


@dataclass(frozen=True, slots=True, kw_only=True)
class Bundle:
    """A generated package: one revision, or several sharing one runtime.

    Each revision has its own ``models_<suffix>``, ``protocol_<suffix>`` and
    ``api_<suffix>`` modules; the package-level modules (``__init__``, ``protocol``,
    ``client``, ``server``) are rendered once from all of them.
    """

    name: PyIdent
    title: str
    schema_name: str
    schema_sha256: str  # the schema's, or for several, the sha256 of theirs joined
    generator_version: str
    regenerate: str
    revisions: tuple[Revision, ...]
    files: tuple[OutputFile, ...]

    @property
    def dual(self) -> bool:
        """Whether the package carries more than one revision."""
        return len(self.revisions) > 1

    @property
    def statuses(self) -> tuple[str, ...]:
        """Every status of every revision, in schema order, once."""
        return tuple(
            dict.fromkeys(s.value for r in self.revisions for s in r.protocol.statuses)
        )

    @property
    def task_extras(self) -> tuple[TaskField, ...]:
        """The optional task fields of every revision, once by name (annotations
        joined).

        Model classes are named through their revision's module (``models_ext.Foo``):
        two revisions may each have a class of one name."""
        merged: dict[str, TaskField] = {}
        for revision in self.revisions:
            module = f"models_{revision.protocol.suffix}"
            for extra in revision.protocol.task_extras:
                annotation = tx.qualify(extra.annotation, extra.models, module)
                modules = (module,) if extra.models else ()
                seen = merged.get(extra.name)
                if seen is not None:
                    parts = dict.fromkeys(
                        (*tx.members(seen.annotation), *tx.members(annotation))
                    )
                    annotation = tx.union(
                        [
                            *(p for p in parts if p != tx.NONE),
                            *([tx.NONE] if tx.NONE in parts else []),
                        ]
                    )
                    modules = tuple(sorted({*seen.modules, *modules}))
                merged[extra.name] = TaskField(
                    name=extra.name,
                    wire_name=seen.wire_name if seen else extra.wire_name,
                    annotation=annotation,
                    typing=tuple(
                        sorted({*(seen.typing if seen else ()), *extra.typing})
                    ),
                    modules=modules,
                )
        return tuple(merged.values())

    @property
    def task_extra_typing(self) -> tuple[str, ...]:
        """The names from ``typing`` that the package-level ``TaskFields`` uses."""
        return tuple(
            sorted({name for extra in self.task_extras for name in extra.typing})
        )

    @property
    def task_extra_modules(self) -> tuple[str, ...]:
        """The models modules that the package-level ``TaskFields`` names classes
        through."""
        return tuple(
            sorted({module for extra in self.task_extras for module in extra.modules})
        )

    @property
    def request_params(self) -> tuple[RequestParam, ...]:
        """The request params of every revision, once by role and name (annotations
        joined, models named through their revision's module); a keyword is required
        only where every revision that has it requires it."""
        merged: dict[tuple[str, str], RequestParam] = {}
        for revision in self.revisions:
            module = f"models_{revision.protocol.suffix}"
            for param in revision.protocol.request_params:
                extra = param.field
                annotation = tx.qualify(extra.annotation, extra.models, module)
                modules = (module,) if extra.models else ()
                seen = merged.get((param.role, extra.name))
                required = param.required
                if seen is not None:
                    parts = dict.fromkeys(
                        (*tx.members(seen.field.annotation), *tx.members(annotation))
                    )
                    annotation = tx.union(list(parts))
                    modules = tuple(sorted({*seen.field.modules, *modules}))
                    required = required and seen.required
                merged[(param.role, extra.name)] = RequestParam(
                    role=param.role,
                    field=TaskField(
                        name=extra.name,
                        wire_name=extra.wire_name,
                        annotation=annotation,
                        typing=tuple(
                            sorted(
                                {*(seen.field.typing if seen else ()), *extra.typing}
                            )
                        ),
                        modules=modules,
                    ),
                    required=required,
                )
        for revision in self.revisions:  # a revision without it: not required
            names = {(p.role, p.field.name) for p in revision.protocol.request_params}
            for key, param in list(merged.items()):
                if key not in names and param.required:
                    merged[key] = RequestParam(
                        role=param.role, field=param.field, required=False
                    )
        return tuple(merged.values())

    @property
    def params_typing(self) -> tuple[str, ...]:
        """The names from ``typing`` that the package-level params ``TypedDict``s
        use."""
        return tuple(
            sorted({name for p in self.request_params for name in p.field.typing})
        )

    def params_of(self, role: str) -> tuple[RequestParam, ...]:
        """The package-level request params of ``role``."""
        return tuple(p for p in self.request_params if p.role == role)

    @property
    def input_handlers(self) -> tuple[tuple[str, Type, Type], ...]:
        """The input methods of every revision, once each: (method, params type,
        result type), the models named through their revision's module and joined
        into unions where the revisions differ."""
        merged: dict[str, tuple[list[Type], list[Type]]] = {}
        for revision in self.revisions:
            module = f"models_{revision.protocol.suffix}"
            names = {m.name for m in revision.package.models}
            for method in revision.protocol.inputs:
                params = tx.qualify(
                    method.params, tx.names(method.params) & names, module
                )
                result = (
                    tx.Name(method.result, module) if method.result else tx.DICT_ANY
                )
                seen = merged.setdefault(method.name, ([], []))
                seen[0].extend(tx.members(params))
                seen[1].append(result)
        return tuple(
            (name, tx.union(params), tx.union(results))
            for name, (params, results) in merged.items()
        )

    @property
    def input_any(self) -> bool:
        """Whether the package-level ``InputHandlers`` names ``Any``."""
        return any(
            "Any" in tx.names(params) | tx.names(result)
            for _, params, result in self.input_handlers
        )

    @property
    def input_modules(self) -> tuple[str, ...]:
        """The models modules that the package-level ``InputHandlers`` names classes
        through."""
        return tuple(
            sorted(
                {
                    node.module
                    for _, params, result in self.input_handlers
                    for node in (*tx.walk(params), *tx.walk(result))
                    if isinstance(node, tx.Name) and node.module
                }
            )
        )

    @property
    def protocol_imports(self) -> tuple[str, ...]:
        """The modules of the package that its ``protocol`` module imports (several
        revisions): each revision's tables, and the models ``TaskFields`` and
        ``InputHandlers`` name."""
        return tuple(
            sorted(
                {
                    *self.task_extra_modules,
                    *(m for p in self.request_params for m in p.field.modules),
                    *self.input_modules,
                    *(f"protocol_{r.protocol.suffix}" for r in self.revisions),
                }
            )
        )
