"""What a revision's runtime needs that a JSON Schema cannot say, and the check of a
schema against it.

Input: ``ir.Package`` (models and methods), the ``Revision`` and the target's status
classification. Output: ``ir.Protocol``, the tables the generated ``protocol`` module
holds, or ``GenError`` (exit 2) with the JSON pointer of the first mismatch.

A profile is small and hand-written: which statuses are terminal, which mean "input
needed" and which are active; the allowed transitions; each method's role and sender;
the task fields the runtime reads and writes; the ``_meta`` keys; and the runtime files
(the revision's adapters) that go into the package. Each revision's profile is part of
its one record in the registry (``revisions.REGISTRY``); this module has the class and
the check. The check runs both ways: every status, method and field the schema has is
either known to the profile, classified by the user, or served generically; every one
the runtime needs is in the schema.
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from mcptasks_gen import ir
from mcptasks_gen import typeexpr as tx
from mcptasks_gen.errors import GenError, Location, fail
from mcptasks_gen.naming import ClassName, PyIdent, snake

if TYPE_CHECKING:
    from mcptasks_gen.config import RequestParamValue

StatusClass = str  # one of config.STATUS_CLASSES: "active", "input" or "terminal"


@dataclass(frozen=True, slots=True, kw_only=True)
class MethodRole:
    """A method the runtime implements: its role, who sends it, and whether it must
    exist."""

    method: str
    role: str  # create, get, update, cancel, list, result, notify, subscribe
    sender: str  # "client" or "server"
    required: bool
    message: str = ""
    """The definition of the request or notification in the revision's schema
    (``GetTaskRequest``): where a missing method is looked for first."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """The runtime's view of one revision."""

    revision: str
    protocol_version: str
    extension_id: str  # "" when the revision is not an extension
    stateless: bool
    """Whether the revision has no sessions: every request stands alone (the
    extension), rather than belonging to a session ``initialize`` opened."""
    status_enum: str  # the definition holding the status values
    initial: str
    statuses: Mapping[str, StatusClass]
    transitions: Mapping[str, tuple[str, ...]]
    task_model: str  # the definition whose fields are the task's wire fields
    task_fields: tuple[
        str, ...
    ]  # wire fields of ``task_model`` the runtime reads and writes
    variant_union: (
        str  # union with one class per status ("" when one class has every status)
    )
    snapshot_models: tuple[
        str, ...
    ]  # other task shapes a client sees (the flat CreateTaskResult)
    methods: tuple[MethodRole, ...]
    status_roles: Mapping[
        str, str
    ]  # role constant -> status: WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED
    meta_keys: Mapping[str, str]
    required_models: tuple[str, ...]  # definitions the adapters import by name
    suffix: (
        str  # names the revision's modules: models_<suffix>.py, client_<suffix>.py, ...
    )
    runtime: tuple[str, ...]
    """Adapter files copied into the package: the client adapter first (its module is
    the typed client's base), the server adapter second, then the thin modules that
    re-export them."""
    create_result: str = "CreateTaskResult"  # the result of a task-creating request
    variant_fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Status -> wire fields of its variant class that the runtime reads or writes."""
    params_fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Role -> wire fields of its method's params that the runtime sends or reads."""
    model_fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Definition -> wire fields that the runtime reads or writes, checked where the
    schema has the definition (those the runtime cannot do without are in
    ``required_models``)."""
    check_rules: Mapping[str, object] = field(default_factory=dict)
    """What the generated checker expects where the revisions behave differently (see
    ``check.Rules`` in the runtime): each value a Python literal."""
    http_statuses: Mapping[str, int] = field(default_factory=dict)
    """Error code name (of the revision's ``ErrorCode``, or ``LIMIT_EXCEEDED``: the
    runtime's default code for a refused limit) -> HTTP status of an error response
    with that code over Streamable HTTP; a code not listed is answered with 200."""
    task_request: tuple[str, str] = ("", "")
    """(definition, wire field) of the create request's params by which a client asks
    for a task; where the schema lacks it, the server alone decides whether a call
    runs as one."""
    result_kind: tuple[str, str] = ("", "")
    """(definition, wire field) of the result field naming what a request's result is
    (``complete``, ``task``, ``input_required``); where the schema lacks it, a task
    result is told apart by the create result's shape."""
    server_capabilities: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Role -> path in the server's capabilities that declares it: a server declares
    it when it serves the role; a client uses the role only where it is declared."""
    input_union: str = ""
    """The definition of the union of input requests a task may list (its members'
    ``method`` constants are the input methods, each answered by the ``<X>Result`` of
    its ``<X>Request``); "" where the schema has none: the runtime's default input
    methods (``DEFAULT_INPUTS``), with the models the schema has for them."""


DEFAULT_INPUTS: Mapping[str, tuple[str, str, str]] = {
    "elicitation/create": ("elicitation", "ElicitRequest", "ElicitResult"),
    "sampling/createMessage": (
        "sampling",
        "CreateMessageRequest",
        "CreateMessageResult",
    ),
    "roots/list": ("roots", "ListRootsRequest", "ListRootsResult"),
}
"""The input methods the runtime knows (the runtime's ``revision.INPUT_CAPABILITIES``):
method -> (client capability, request definition, result definition)."""


WIRE_TYPES: Mapping[str, str] = {
    "taskId": "str",
    "statusMessage": "str",
    "createdAt": "str",
    "lastUpdatedAt": "str",
    "ttl": "int",
    "ttlMs": "int",
    "pollInterval": "int",
    "pollIntervalMs": "int",
    "code": "int",
    "message": "str",
    "data": "Any",
    "resultType": "str",
    "cursor": "str",
    "nextCursor": "str",
    "progressToken": "str | int",
    "taskSupport": "str",
    "taskIds": "list[str]",
    "tasks": "list",
    "inputRequests": "dict",
    "inputResponses": "dict",
    "result": "dict",
    "error": "model",
    "task": "model",
    "requestedSchema": "model",
}
"""The Python type the runtime expects of each wire field it uses (``model``: a
generated class; ``list``/``dict``: of any items; ``str`` also takes a ``Literal`` of
strings)."""

READ_ALWAYS = frozenset(
    {
        "taskId",
        "createdAt",
        "lastUpdatedAt",
        "inputRequests",
        "result",
        "error",
        "Error.code",
        "Error.message",
    }
)
"""Fields the runtime reads as always present (any model's, or ``Model.field``), so the
schema must require them."""

LIMIT_EXCEEDED = -32000
"""The runtime's default code for a refused limit (``server_core.LIMIT_EXCEEDED``),
which ``Profile.http_statuses`` may name besides the revision's error codes."""

MAY_OMIT = frozenset({"statusMessage", "data", "cursor", "nextCursor", "progressToken"})
"""Fields the runtime leaves out when it has no value, so the schema must not require
them."""


def _object(package: ir.Package, name: str) -> ir.ObjectModel | None:
    model = next((m for m in package.models if m.name == name), None)
    return model if isinstance(model, ir.ObjectModel) else None


def _members(annotation: tx.Type) -> list[str]:
    """The names in a union annotation (``Annotated[A | B, Field(...)]``)."""
    if isinstance(annotation, tx.Forward):
        annotation = annotation.inner
    if isinstance(annotation, tx.Annotated):
        annotation = annotation.inner
    return [
        m.name
        for m in tx.members(annotation)
        if isinstance(m, tx.Name) and not m.module
    ]


def _status_values(
    package: ir.Package, profile: Profile, schema: Location
) -> tuple[ir.EnumModel, tuple[str, ...]]:
    enum = next((m for m in package.models if m.name == profile.status_enum), None)
    if not isinstance(enum, ir.EnumModel):
        raise fail(
            f'the runtime needs the status enumeration "{profile.status_enum}" (a'
            " string enum), which the schema does not define",
            schema.child("$defs", profile.status_enum),
        )
    return enum, tuple(member.raw for member in enum.members)


def _classify(
    values: tuple[str, ...],
    profile: Profile,
    extra: Mapping[str, str],
    enum: ir.EnumModel,
) -> dict[str, str]:
    """Each status value's class: the profile's, or the target configuration's."""
    classes: dict[str, str] = {}
    for value in values:
        known = profile.statuses.get(value)
        if known is not None and value in extra:
            raise fail(
                f'status "{value}" is the {profile.revision} runtime\'s own ({known});'
                " it cannot be classified again: drop its classification",
                enum.loc,
            )
        known = known or extra.get(value)
        if known is None:
            raise fail(
                f'status "{value}" is unknown to the {profile.revision} runtime;'
                f" classify it in the target configuration (statuses = {{ {value} ="
                ' "active" }, or "input" or "terminal")',
                enum.loc,
            )
        classes[value] = known
    for value, needed in profile.statuses.items():
        if value not in classes:
            raise fail(
                f'the runtime needs status "{value}" ({needed}), which the schema\'s'
                f" {profile.status_enum} does not list",
                enum.loc,
            )
    return classes


def _initial(
    chosen: str | None,
    profile: Profile,
    classes: Mapping[str, str],
    enum: ir.EnumModel,
) -> str:
    """The status of a new task: the configured one (an active status of the schema),
    else the profile's."""
    if chosen is None:
        return profile.initial
    if chosen not in classes:
        raise fail(
            f'initial status "{chosen}" is not a status of the {profile.revision}'
            f" schema's {profile.status_enum} (add it there, or qualify the option with"
            " the revision whose schema has it: --initial-status REVISION:"
            f"{chosen})",
            enum.loc,
        )
    if classes[chosen] != "active":
        raise fail(
            f'initial status "{chosen}" is {classes[chosen]}: a new task starts in an'
            f' active status (classify it: statuses = {{ {chosen} = "active" }})',
            enum.loc,
        )
    return chosen


def _transitions(
    classes: Mapping[str, str], profile: Profile
) -> tuple[ir.Transition, ...]:
    """The profile's transitions, widened for the statuses the user classified.

    A classified active or input status can be entered from every live status and left
    for every other status; a classified terminal status can be entered from every live
    status.
    """
    live = [s for s, c in classes.items() if c != "terminal"]
    table: dict[str, set[str]] = {s: set(profile.transitions.get(s, ())) for s in live}
    for status, cls in classes.items():
        if status in profile.statuses:
            continue
        for source in live:
            if source != status:
                table[source].add(status)
        if cls != "terminal":
            table[status] = {s for s in classes if s != status}
    return tuple(
        ir.Transition(source=s, targets=tuple(sorted(table[s]))) for s in sorted(table)
    )


def _variants(
    package: ir.Package, profile: Profile, values: tuple[str, ...], schema: Location
) -> tuple[ir.Variant, ...]:
    """The class that carries each status (one class for every status when there is
    no union)."""
    if not profile.variant_union:
        return tuple(
            ir.Variant(status=v, model=ClassName(profile.task_model)) for v in values
        )
    union = next((m for m in package.models if m.name == profile.variant_union), None)
    if not isinstance(union, ir.RootModel) or union.discriminator != "status":
        raise fail(
            f'the runtime needs "{profile.variant_union}", a union discriminated on'
            " status",
            schema.child("$defs", profile.variant_union),
        )
    by_status: dict[str, str] = {}
    for member in _members(union.annotation):
        model = _object(package, member)
        status = next(
            (
                f
                for f in (model.fields if model else ())
                if f.wire_name == "status" and f.constant
            ),
            None,
        )
        if status is not None and isinstance(status.const_value, str):
            by_status[status.const_value] = member
    stray = sorted(set(by_status) - set(values))
    if stray:
        raise fail(
            f'status "{stray[0]}" has a variant in "{profile.variant_union}" but is not'
            f' a value of "{profile.status_enum}"',
            union.loc.child("anyOf"),
        )
    missing = [v for v in values if v not in by_status]
    if missing:
        raise fail(
            f'status "{missing[0]}" has no variant in "{profile.variant_union}" (add'
            f' one whose status is "{missing[0]}")',
            union.loc.child("anyOf"),
        )
    return tuple(ir.Variant(status=v, model=ClassName(by_status[v])) for v in values)


_EXPECTED: Mapping[str, tx.Type] = {
    "str": tx.STR,
    "int": tx.INT,
    "str | int": tx.Union((tx.STR, tx.INT)),
    "list[str]": tx.Generic("list", (tx.STR,)),
}
"""The types of ``WIRE_TYPES`` that a field's type must equal (the others are kinds:
``model``, ``list``, ``dict``, ``Any``)."""


def _fits(annotation: tx.Type, expected: str) -> bool:
    """Whether a field typed ``annotation`` is what the runtime expects
    (``WIRE_TYPES``)."""
    base = tx.base(annotation)
    if expected in ("list", "dict"):
        return isinstance(base, tx.Generic) and base.base == expected
    if expected == "model":
        return tx.is_class_name(base)
    if expected == "str" and isinstance(base, tx.Literal):
        return all(isinstance(v, str) for v in base.values)
    return expected == "Any" or base == _EXPECTED.get(expected)


def _needs(model: ir.ObjectModel, wires: tuple[str, ...]) -> dict[str, ir.Field]:
    """``model``'s fields by wire name, once every one of ``wires`` is among them
    with the type the runtime expects."""
    by_wire = {f.wire_name: f for f in model.fields}
    for wire in wires:
        found = by_wire.get(wire)
        if found is None:
            near = [
                w
                for w in by_wire
                if w.lower().startswith(wire.lower().removesuffix("ms"))
                and w not in wires
            ]
            hint = (
                f' (the schema has "{near[0]}": a renamed field needs a new runtime'
                " profile)"
                if near
                else ""
            )
            raise fail(
                f'the runtime needs field "{wire}" of "{model.name}"{hint}',
                model.loc.child("properties", wire),
            )
        if not found.required and (
            wire in READ_ALWAYS or f"{model.name}.{wire}" in READ_ALWAYS
        ):
            raise fail(
                f'the runtime reads field "{wire}" of "{model.name}" as always present;'
                " the schema makes it optional",
                model.loc.child("properties", wire),
            )
        if wire in MAY_OMIT and found.required:
            raise fail(
                f'the runtime leaves out field "{wire}" of "{model.name}" when it has'
                " no value; the schema makes it required",
                model.loc.child("properties", wire),
            )
        expected = WIRE_TYPES.get(wire, "Any")
        if not _fits(found.annotation, expected):
            kind = {
                "model": "an object",
                "list": "an array",
                "dict": "an object map",
            }.get(expected, expected)
            raise fail(
                f'the runtime needs field "{wire}" of "{model.name}" to be {kind}, not'
                f" {tx.base(found.annotation).render()} (a changed type needs a new"
                " runtime"
                " profile)",
                model.loc.child("properties", wire),
            )
    return by_wire


def _task_fields(
    package: ir.Package, profile: Profile, schema: Location
) -> tuple[tuple[ir.TaskField, ...], tuple[ir.TaskField, ...]]:
    """The task fields the runtime uses (checked) and the optional ones it does not
    know."""
    task = _object(package, profile.task_model)
    if task is None:
        raise fail(
            f'the runtime needs the object "{profile.task_model}"',
            schema.child("$defs", profile.task_model),
        )
    by_wire = _needs(task, profile.task_fields)
    _fillable(task, profile.task_fields)
    known = tuple(
        ir.TaskField(
            name=by_wire[w].name, wire_name=w, annotation=by_wire[w].annotation
        )
        for w in profile.task_fields
    )
    models: set[str] = {m.name for m in package.models}
    extra = tuple(
        _typed_dict_field(f, models)
        for f in task.fields
        if f.wire_name not in profile.task_fields and not f.required
    )
    return known, extra


_TYPING_NAMES = frozenset({"Any", "Literal", "Optional", "Union"})
_BUILTIN_TYPES = frozenset(
    {
        "bool",
        "bytes",
        "dict",
        "float",
        "frozenset",
        "int",
        "list",
        "object",
        "set",
        "str",
        "tuple",
        "type",
    }
)


def _typed_dict_field(model_field: ir.Field, models: set[str]) -> ir.TaskField:
    """An optional task field as a key of ``TaskFields``: its type without the
    ``Annotated`` metadata of the model's field (constraints and discriminators that
    validate, naming helpers only the models module has; a ``TypedDict`` validates
    nothing), with the ``typing`` names and model classes it uses. A name of any other
    kind (none is known) makes it ``Any``, so that the module always imports."""
    annotation = model_field.annotation
    if isinstance(annotation, tx.Forward):
        annotation = annotation.inner
    tree = tx.without_metadata(annotation)
    names = tx.names(tree) - {"None"}
    typing = names & _TYPING_NAMES
    used = names & models
    if names - typing - used - _BUILTIN_TYPES:
        return ir.TaskField(
            name=model_field.name,
            wire_name=model_field.wire_name,
            annotation=tx.ANY,
            typing=("Any",),
        )
    return ir.TaskField(
        name=model_field.name,
        wire_name=model_field.wire_name,
        annotation=tree,
        typing=tuple(sorted(typing)),
        models=tuple(sorted(used)),
    )


def _fillable(model: ir.ObjectModel, known: tuple[str, ...]) -> None:
    """Fail on a required field of a task shape that the runtime cannot fill (a constant
    fills itself)."""
    for f in model.fields:
        if f.required and not f.constant and f.wire_name not in known:
            raise fail(
                f'the runtime cannot fill required field "{f.wire_name}" of'
                f' "{model.name}": make it optional (the runtime then carries it, see'
                " protocol.TaskFields) or give the runtime a profile that knows it",
                model.loc.child("properties", f.wire_name),
            )


def _enterable(
    package: ir.Package, profile: Profile, variant: ir.Variant, klass: str
) -> None:
    """Fail on a classified status that server code could never enter: its variant
    requires a field the runtime cannot fill (``ToolContext.finish`` fills the task
    fields and the status message; ``request_input`` the input requests too)."""
    model = _object(package, variant.model)
    if model is None:
        return
    known = set(profile.task_fields)
    if klass == "input":
        known.update(
            profile.variant_fields.get(profile.status_roles["INPUT_REQUIRED"], ())
        )
    for f in model.fields:
        if f.required and not f.constant and f.wire_name not in known:
            enter = {
                "terminal": "ctx.finish",
                "input": "ctx.request_input",
                "active": "ctx.set_status",
            }[klass]
            raise fail(
                f'status "{variant.status}" ({klass}) could never be entered: the'
                f' runtime cannot fill required field "{f.wire_name}" of'
                f' "{model.name}" ({enter} fills only the fields the runtime'
                " manages); make it optional (tool code then sets it with"
                " ctx.set_fields) or drop it",
                model.loc.child("properties", f.wire_name),
            )


def _wire_fields(
    package: ir.Package,
    profile: Profile,
    classes: Mapping[str, str],
    variants: tuple[ir.Variant, ...],
    methods: tuple[ir.ProtocolMethod, ...],
    schema: Location,
) -> None:
    """Check the other wire fields the runtime reads or writes: of status variants, of
    the params of the methods it serves or sends, and of other definitions.

    A status the user classified as ``input`` has the fields of ``input_required``'s
    variant (the runtime fills them for every input status); one classified
    ``active`` or ``terminal`` has none. A model several statuses share (2025-11-25's
    ``Task``) is checked once."""
    as_input = profile.status_roles["INPUT_REQUIRED"]
    fields: dict[str, tuple[str, ...]] = {}
    for variant in variants:
        status = variant.status
        if status not in profile.statuses:
            _enterable(package, profile, variant, classes[status])
        if status not in profile.statuses and classes[status] == "input":
            status = as_input
        fields[variant.model] = (
            *fields.get(variant.model, ()),
            *profile.variant_fields.get(status, ()),
        )
    for name, wires in fields.items():
        model = _object(package, name)
        if model is not None:
            _needs(model, wires)
            _fillable(model, (*profile.task_fields, *wires))
    for method in methods:
        wires = (
            profile.params_fields.get(method.role, ())
            if method.role != "custom"
            else ()
        )
        params = _object(package, method.params_model)
        if wires and params is None:
            raise fail(
                f'the runtime needs params of "{method.name}" with field "{wires[0]}"',
                schema.child("$defs", method.message),
            )
        if params is not None:
            _needs(params, wires)
    for name, wires in profile.model_fields.items():
        model = _object(package, name)
        if model is not None:
            _needs(model, wires)


def _methods(
    package: ir.Package, profile: Profile, schema: Location
) -> tuple[ir.ProtocolMethod, ...]:
    roles = {r.method: r for r in profile.methods}
    out = []
    for method in package.methods:
        known = roles.get(method.name)
        params = tx.without_none(method.params)
        params_model = (
            _object(package, params.name)
            if isinstance(params, tx.Name) and not params.module
            else None
        )
        kwargs = tuple(
            ir.Kwarg(
                name=f.name,
                wire_name=f.wire_name,
                annotation=f.annotation if f.required else _optional(f.annotation),
                required=f.required,
            )
            for f in (params_model.fields if params_model else ())
            if f.wire_name != "_meta"
        )
        out.append(
            ir.ProtocolMethod(
                name=method.name,
                role=known.role if known else "custom",
                sender=(
                    known.sender
                    if known
                    else ("server" if method.notification else "client")
                ),
                notification=method.notification,
                message=method.message,
                params=method.params,
                params_model=params_model.name if params_model else "",
                result=method.result,
                python_name=_python_name(method.name),
                kwargs=kwargs,
            )
        )
    return tuple(out)


def _params_annotation(annotation: tx.Type) -> tx.Type:
    """The type of a request's ``params`` without ``| None`` and ``Annotated``
    metadata (a union's dispatcher): what an input handler's context holds."""
    return tx.without_metadata(tx.base(annotation))


def _inputs(
    package: ir.Package, profile: Profile, schema: Location
) -> tuple[ir.InputMethod, ...]:
    """The input requests the server may send: the members of the schema's
    input-request union (``profile.input_union``), or the runtime's defaults."""
    objects: dict[str, ir.ObjectModel] = {
        m.name: m for m in package.models if isinstance(m, ir.ObjectModel)
    }
    union = next(
        (
            m
            for m in package.models
            if m.name == profile.input_union and isinstance(m, ir.RootModel)
        ),
        None,
    )
    if union is None:
        defaults: list[ir.InputMethod] = []
        for method, (capability, request, result) in DEFAULT_INPUTS.items():
            model = objects.get(request)
            params = _field(model, "params") if model is not None else None
            defaults.append(
                ir.InputMethod(
                    name=method,
                    capability=capability,
                    request=request if model is not None else "",
                    params=(
                        _params_annotation(params.annotation)
                        if params is not None
                        else tx.DICT_ANY
                    ),
                    result=result if result in objects else "",
                )
            )
        return tuple(defaults)
    out: list[ir.InputMethod] = []
    for member_type in tx.members(_params_annotation(union.annotation)):
        name = _class_of(member_type)
        member = objects.get(name)
        method_field = _field(member, "method") if member is not None else None
        if member is None or method_field is None or not method_field.constant:
            continue
        method = json.loads(method_field.default)
        params = _field(member, "params")
        result = name.removesuffix("Request") + "Result"
        if not name.endswith("Request") or result not in objects:
            raise fail(
                f'input request "{method}" ({name}) has no result definition: the'
                f' client\'s answer to it must be "{result}" (hint: name the answer'
                f' "{result}" and list it in the responses\' union)',
                schema.child("$defs", name),
            )
        out.append(
            ir.InputMethod(
                name=method,
                capability=DEFAULT_INPUTS.get(method, (method.split("/")[0],))[0],
                request=name,
                params=(
                    _params_annotation(params.annotation)
                    if params is not None
                    else tx.DICT_ANY
                ),
                result=result,
            )
        )
    return tuple(out)


def _field(model: ir.ObjectModel, wire: str) -> ir.Field | None:
    """The field of ``model`` with wire name ``wire``, if any."""
    return next((f for f in model.fields if f.wire_name == wire), None)


def _renamed(
    package: ir.Package, profile: Profile, role: MethodRole
) -> ir.Method | None:
    """The method of the schema that is likely ``role``'s method renamed: one the
    profile does not know, of the same kind (request or notification), found as
    ``diff`` finds a renamed method. The first of these that holds for exactly one
    method decides: its definition is the role's (only the method constant changed);
    one name is a path prefix of the other; it is in the same namespace and its params
    carry every field the runtime sends for the role."""
    known = {r.method for r in profile.methods}
    notification = role.role == "notify"
    unknown = [
        m
        for m in package.methods
        if m.name not in known and m.notification == notification
    ]
    wires = set(profile.params_fields.get(role.role, ()))

    def carries(method: ir.Method) -> bool:
        params = _object(package, _class_of(tx.without_none(method.params)))
        return params is not None and wires <= {f.wire_name for f in params.fields}

    namespace = role.method.rpartition("/")[0]
    tiers = (
        [m for m in unknown if role.message and m.message == role.message],
        [
            m
            for m in unknown
            if m.name.startswith(role.method + "/")
            or role.method.startswith(m.name + "/")
        ],
        [
            m
            for m in unknown
            if m.name.rpartition("/")[0] == namespace and wires and carries(m)
        ],
    )
    for tier in tiers:
        if tier:
            return tier[0] if len(tier) == 1 else None
    return None


def _missing_method(
    package: ir.Package, profile: Profile, role: MethodRole, schema: Location
) -> GenError:
    """The error for a method the runtime needs and the schema lacks: at the
    definition that had it (its method constant when that changed), naming the
    likely new method."""
    kind = "notification" if role.role == "notify" else "request"
    needs = (
        f'the {profile.revision} runtime needs method "{role.method}" ({role.role}),'
        " which the schema does not define"
    )
    keep = (
        f'; the runtime calls it by that name: keep "{role.method}" (a renamed method'
        " needs a new runtime profile)"
    )
    found = _renamed(package, profile, role)
    if found is not None:
        model = _object(package, found.message)
        method = next(
            (f for f in (model.fields if model else ()) if f.wire_name == "method"),
            None,
        )
        where = (
            method.loc
            if method is not None
            else (model.loc if model else schema.child("$defs", found.message))
        )
        was = (
            f'its definition "{found.message}" now has method'
            if found.message == role.message
            else f'"{found.message}" has method'
        )
        return fail(f'{needs}: {was} "{found.name}", likely its new name{keep}', where)
    if role.message and not any(m.name == role.message for m in package.models):
        return fail(
            f'{needs}: its definition "{role.message}" is gone and no other {kind}'
            " looks like it",
            schema.child("$defs", role.message),
        )
    return fail(f"{needs} (no other {kind} looks like it)", schema.child("$defs"))


SENT_ON_ITS_OWN: Mapping[str, str] = {
    "create": "the checker's probes call tools",
    "get": "the polling loop sends it",
    "cancel": "a wait that is abandoned or interrupted sends it",
    "update": "answering a task's input sends it",
    "result": "waiting for a task's input or outcome sends it",
}
"""Roles whose request the runtime also sends on its own, and when: a required param
of one needs a configured value."""

CREATE_METHOD = "tools/call"
CREATE_PARAMS = "CallToolRequestParams"
_CREATE_OWN = ("name", "arguments", "inputResponses", "requestState")


def _configured_value(
    entry: RequestParamValue, model_field: ir.Field, where: Location
) -> object:
    """The configured value of a param, typed and checked by the param's schema."""
    base_type = tx.base(model_field.annotation)
    base = base_type.render()
    literal: tuple[object, ...] | None = None
    if isinstance(base_type, tx.Literal):
        literal = tuple(base_type.values)
    value = entry.value
    if (
        entry.text
        and base != "str"
        and not all(isinstance(v, str) for v in literal or (0,))
    ):
        try:
            value = json.loads(str(value))
        except ValueError:
            raise fail(
                f'request param "{entry.key}": "{value}" is not a JSON value of type'
                f" {base}",
                entry.loc,
            ) from None
    fits = {
        "str": isinstance(value, str),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "float": isinstance(value, (int, float)) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
    }.get(base)
    if literal is not None:
        fits = value in literal and type(value) in {type(v) for v in literal}
    if fits is None:
        raise fail(
            f'request param "{entry.key}" is of type {base}; only a string, number,'
            " boolean or Literal param can be given a value",
            where,
        )
    if not fits:
        raise fail(
            f'request param "{entry.key}": {_literal(value)} is not of type {base}',
            entry.loc,
        )
    return value


def _request_params(
    package: ir.Package,
    profile: Profile,
    methods: tuple[ir.ProtocolMethod, ...],
    configured: Sequence[RequestParamValue],
    schema: Location,
) -> tuple[
    tuple[ir.RequestParam, ...],
    tuple[tuple[str, str], ...],
    tuple[ir.ProtocolMethod, ...],
]:
    """The params of the requests the runtime sends that it does not manage (the
    keyword arguments of the calls that send them), with their configured values;
    the params models by role; the methods with the configured values as their typed
    keywords' defaults.

    A required param of a request the runtime also sends on its own needs a value
    (exit 2 naming the param, the option and the param's pointer); a value for a
    param or method the runtime does not send is refused.
    """
    senders: dict[str, tuple[str, ir.ObjectModel, tuple[str, ...]]] = {}
    for method in methods:
        if method.role in ir.PARAM_ROLES and method.role != "create":
            model = _object(package, method.params_model)
            if model is not None:
                own = (*profile.params_fields.get(method.role, ()), "_meta")
                senders[method.name] = (method.role, model, own)
    create = _object(package, CREATE_PARAMS)
    if create is not None:
        own = (*_CREATE_OWN, profile.task_request[1], "_meta")
        senders[CREATE_METHOD] = ("create", create, own)
    values: dict[tuple[str, str], object] = {}
    for entry in configured:
        found = senders.get(entry.method)
        if found is None:
            if not entry.revision:
                continue  # another revision's (checked once every revision is)
            raise fail(
                f'request param "{entry.key}": the {profile.revision} runtime sends no'
                f' "{entry.method}" with params of its own (a method the schema adds'
                " gets a typed client method that takes its params)",
                entry.loc,
            )
        role, model, own = found
        model_field = next(
            (f for f in model.fields if f.wire_name == entry.param), None
        )
        if model_field is None or entry.param in own:
            if model_field is None and not entry.revision:
                continue
            why = (
                "is the runtime's own"
                if model_field is not None
                else f'is not a param of "{entry.method}" in this schema'
            )
            raise fail(f'request param "{entry.key}" {why}', entry.loc)
        values[(entry.method, entry.param)] = _configured_value(
            entry, model_field, model.loc.child("properties", entry.param)
        )
    models: set[str] = {m.name for m in package.models}
    out: list[ir.RequestParam] = []
    for name, (role, model, own) in senders.items():
        for model_field in model.fields:
            if model_field.wire_name in own:
                continue
            key = (name, model_field.wire_name)
            configured_value = values.get(key)
            has_value = key in values
            if model_field.required and not has_value and role in SENT_ON_ITS_OWN:
                option = f"{name}.{model_field.wire_name}"
                raise fail(
                    f'param "{model_field.wire_name}" of "{name}" is required and the'
                    f" runtime sends {name} on its own ({SENT_ON_ITS_OWN[role]}):"
                    f' give its value with --param {option}=VALUE or params = {{ "'
                    f'{option}" = ... }} in the target',
                    model.loc.child("properties", model_field.wire_name),
                )
            typed = _typed_dict_field(model_field, models)
            out.append(
                ir.RequestParam(
                    role=role,
                    method=name,
                    field=typed,
                    required=model_field.required and not has_value,
                    default=_literal(configured_value) if has_value else "",
                    value=configured_value,
                )
            )
    defaults = {(p.method, p.field.wire_name): p.default for p in out if p.default}
    methods = tuple(
        replace(
            m,
            kwargs=tuple(
                replace(k, default=defaults.get((m.name, k.wire_name), ""))
                for k in m.kwargs
            ),
        )
        for m in methods
    )
    params_models = tuple((role, model.name) for role, model, _ in senders.values())
    return tuple(out), params_models, methods


def _class_of(t: tx.Type) -> str:
    """The name ``t`` is, when it is a plain name ("" otherwise)."""
    return t.name if isinstance(t, tx.Name) and not t.module else ""


def _python_name(method: str) -> PyIdent:
    """``tasks/get`` -> ``tasks_get``: the typed client method of a request."""
    name = re.sub(r"\W+", "_", snake(method.replace("/", "_"))).strip("_") or "method"
    if not name.isidentifier() or keyword.iskeyword(name) or name[0].isdigit():
        name = f"call_{name}"
    return PyIdent(name)


def _literal(value: object) -> str:
    """A Python literal as black writes it (double-quoted strings, one-tuples with a
    comma)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple):
        items = [_literal(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return repr(value)


def _optional(annotation: tx.Type) -> tx.Type:
    return (
        annotation
        if tx.ends_with_none(annotation) or annotation == tx.ANY
        else tx.optional(annotation)
    )


def _present(package: ir.Package, where: tuple[str, str]) -> str:
    """The wire field ``where`` names, when the schema's definition has it (""
    otherwise)."""
    model = _object(package, where[0])
    return (
        where[1]
        if model is not None and any(f.wire_name == where[1] for f in model.fields)
        else ""
    )


def _http_statuses(
    package: ir.Package, profile: Profile, schema: Location
) -> tuple[tuple[int, int], ...]:
    """``Profile.http_statuses`` by code: each name is one of the revision's error
    codes."""
    codes = {str(c.name): c.code for c in package.error_codes}
    codes.setdefault("LIMIT_EXCEEDED", LIMIT_EXCEEDED)
    out = []
    for name, status in profile.http_statuses.items():
        if name not in codes:
            raise fail(
                f'the {profile.revision} profile gives error code "{name}" an HTTP'
                " status, but the revision has no such error code",
                schema,
            )
        out.append((codes[name], status))
    return tuple(out)


def check(
    package: ir.Package,
    profile: Profile,
    statuses: Mapping[str, str],
    schema: Location,
    *,
    initial: str | None = None,
    params: Sequence[RequestParamValue] = (),
) -> ir.Protocol:
    """Check ``package`` against ``profile`` both ways; return the protocol tables.

    ``statuses`` classifies statuses the profile does not know (already checked by
    ``config.check_statuses``); ``initial`` is the configured status of a new task
    (None: the profile's); ``params`` are the configured request param values
    (for this revision, or for every revision)."""
    present = {m.name for m in package.methods}
    for role in profile.methods:
        if role.required and role.method not in present:
            raise _missing_method(package, profile, role, schema)
    for name in profile.required_models:
        if not any(m.name == name for m in package.models):
            raise fail(
                f'the {profile.revision} runtime needs the definition "{name}", which'
                " the schema does not have",
                schema.child("$defs", name),
            )
    enum, values = _status_values(package, profile, schema)
    classes = _classify(values, profile, statuses, enum)
    first = _initial(initial, profile, classes, enum)
    known, extra = _task_fields(package, profile, schema)
    variants = _variants(package, profile, values, schema)
    methods = _methods(package, profile, schema)
    inputs = _inputs(package, profile, schema)
    _wire_fields(package, profile, classes, variants, methods, schema)
    request_params, params_models, methods = _request_params(
        package, profile, methods, params, schema
    )
    names = {m.name for m in package.models}
    http_statuses = _http_statuses(package, profile, schema)
    snapshot = tuple(ClassName(n) for n in profile.snapshot_models if n in names)
    variant_names = sorted({v.model for v in variants} | set(snapshot))
    client_names: set[str] = set()
    server_names: set[str] = set()
    for method in methods:
        result = _class_of(method.result)
        used = {
            method.params_model,
            result,
            *(w for k in method.kwargs for w in tx.names(k.annotation)),
        }
        if method.sender == "client" and not method.notification:
            client_names.update(n for n in used if n in names)
        if (
            method.role == "custom"
            and not method.notification
            and method.sender == "client"
        ):
            server_names.update(n for n in (method.params_model, result) if n in names)
    extra_names = {name for f in extra for name in f.models}
    extra_names |= {name for p in request_params for name in p.field.models}
    input_names = {
        n
        for i in inputs
        for n in (i.request, i.result, *tx.names(i.params))
        if n in names
    }
    return ir.Protocol(
        package=package.name,
        revision=profile.revision,
        protocol_version=profile.protocol_version,
        extension_id=package.extension_id,
        stateless=profile.stateless,
        status_enum=ClassName(profile.status_enum),
        initial=first,
        statuses=tuple(ir.Status(value=v, klass=classes[v]) for v in values),
        transitions=_transitions(classes, profile),
        variants=variants,
        variant_union=profile.variant_union,
        suffix=profile.suffix,
        client_runtime=profile.runtime[0].removesuffix(".py").replace("/", "."),
        server_runtime=profile.runtime[1].removesuffix(".py").replace("/", "."),
        snapshot=snapshot,
        model_imports=tuple(
            sorted(
                set(variant_names)
                | extra_names
                | input_names
                | {m.message for m in methods}
            )
        ),
        client_imports=tuple(sorted(client_names)),
        server_imports=tuple(sorted(server_names)),
        task_model=ClassName(profile.task_model),
        task_fields=known,
        task_extras=extra,
        extra_typing=tuple(sorted({name for f in extra for name in f.typing})),
        methods=methods,
        meta_keys=tuple(sorted(profile.meta_keys.items())),
        status_roles=tuple(profile.status_roles.items()),
        create_result=(
            ClassName(profile.create_result)
            if profile.create_result in names
            else ClassName(profile.task_model)
        ),
        check_rules=tuple(
            (key, _literal(value)) for key, value in profile.check_rules.items()
        ),
        http_statuses=http_statuses,
        task_request_field=_present(package, profile.task_request),
        result_kind_field=_present(package, profile.result_kind),
        server_capabilities=tuple(profile.server_capabilities.items()),
        request_params=request_params,
        params_models=params_models,
        inputs=inputs,
    )
