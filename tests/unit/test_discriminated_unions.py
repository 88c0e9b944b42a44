"""Every union whose object members share a required constant is discriminated on it
(issue 12).

pydantic validates a plain union by trying each member ("smart" mode): a bad value in
one content block is reported once per member, and every member is tried for a good one.
A discriminated union reads the constant and validates one member: one error for one bad
value, and no wasted work. These tests check the normalize stage on small schemas with
each way a schema pins a union member's constant (inline, behind ``$ref``, behind
``allOf``, as an ``enum`` of one, beside branches that are not objects), and walk the
compiled validators of the golden packages and of packages generated from the official
schemas for any union left undiscriminated. No timing here: ``benchmarks/validate.py``
shows the speed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import pydantic
import pytest

from mcptasks_gen import ir, pipeline
from mcptasks_gen.config import Target
from mcptasks_gen.detect import detect, scan
from mcptasks_gen.extract import extract
from mcptasks_gen.load import load
from mcptasks_gen.normalize import normalize
from mcptasks_gen.render import environment, render

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = {
    "2025": ROOT / "generated" / "mcp_tasks_2025_11_25" / "models_2025.py",
    "ext": ROOT / "generated" / "mcp_tasks_ext" / "models_ext.py",
}
OFFICIAL = ("mcp-2025-11-25.schema.json", "ext-tasks-draft.schema.json")

REQUEST = {
    "type": "object",
    "properties": {
        "method": {"const": "tasks/update", "type": "string"},
        "id": {"type": "integer"},
        "params": {
            "type": "object",
            "properties": {"taskId": {"type": "string"}},
            "required": ["taskId"],
        },
    },
    "required": ["method", "id", "params"],
}


def _package(tmp_path: Path, defs: dict[str, Any]) -> ir.Package:
    path = tmp_path / "schema.json"
    path.write_text(
        json.dumps(
            {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "description": "Extension Identifier: io.modelcontextprotocol/tasks",
                "$defs": {"UpdateTaskRequest": REQUEST, **defs},
            }
        )
    )
    doc = load(path, "s.json")
    target = Target(
        schema=path,
        schema_label="s.json",
        output=tmp_path,
        package="p",
        revision=None,
        templates=None,
        regenerate="x",
    )
    found = scan(doc)
    return normalize(extract(found, detect(found)), target, ())


def _annotation(package: ir.Package, cls: str, wire: str | None = None) -> str:
    model = next(m for m in package.models if m.name == cls)
    if wire is None:
        assert isinstance(model, ir.RootModel)
        return model.annotation.render().strip("'\"")
    assert isinstance(model, ir.ObjectModel)
    return next(f.annotation.render() for f in model.fields if f.wire_name == wire)


def _block(kind: str, **props: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"type": {"type": "string", "const": kind}, **props},
        "required": ["type", *props],
    }


# -- normalize: each way a schema pins the constant ------------------------------------


def test_objects_beside_a_list_are_discriminated(tmp_path: Path) -> None:
    """``content``: one block or a list of blocks; the blocks are a union of their
    own."""
    defs = {
        "TextContent": _block("text", text={"type": "string"}),
        "ImageContent": _block("image", data={"type": "string"}),
        "TaskMessage": {
            "type": "object",
            "properties": {
                "content": {
                    "anyOf": [
                        {"$ref": "#/$defs/TextContent"},
                        {"$ref": "#/$defs/ImageContent"},
                        {"type": "array", "items": {"$ref": "#/$defs/TextContent"}},
                    ]
                }
            },
            "required": ["content"],
        },
    }
    annotation = _annotation(_package(tmp_path, defs), "TaskMessage", "content")
    blocks = 'Annotated[TextContent | ImageContent, Field(discriminator="type")]'
    assert (
        annotation == f'Annotated[Annotated[{blocks}, Tag("object")] |'
        ' Annotated[list[TextContent], Tag("array")], Discriminator(_json_kind)]'
    )


def test_refs_to_all_of_definitions_are_discriminated(tmp_path: Path) -> None:
    """Input requests: each a ``$ref`` to an ``allOf`` of a base and the branch's
    ``method``."""
    base = {"type": "object", "properties": {"params": {"type": "object"}}}

    def pinned(m: str) -> dict[str, Any]:
        return {
            "allOf": [
                {"$ref": "#/$defs/TaskBase"},
                {
                    "type": "object",
                    "properties": {"method": {"const": m}},
                    "required": ["method"],
                },
            ]
        }

    defs = {
        "TaskBase": base,
        "ElicitTaskRequest": pinned("elicitation/create"),
        "RootsTaskRequest": pinned("roots/list"),
        "InputTaskRequest": {
            "anyOf": [
                {"$ref": "#/$defs/ElicitTaskRequest"},
                {"$ref": "#/$defs/RootsTaskRequest"},
            ]
        },
    }
    package = _package(tmp_path, defs)
    assert (
        _annotation(package, "InputTaskRequest")
        == "Annotated[ElicitTaskRequest | RootsTaskRequest,"
        ' Field(discriminator="method")]'
    )


def test_constants_behind_a_ref_or_as_an_enum_of_one_are_discriminators(
    tmp_path: Path,
) -> None:
    defs = {
        "Working": {"type": "string", "const": "working"},
        "WorkingTask": {
            "type": "object",
            "properties": {"status": {"$ref": "#/$defs/Working"}},
            "required": ["status"],
        },
        "DoneTask": {
            "type": "object",
            "properties": {"status": {"type": "string", "enum": ["done"]}},
            "required": ["status"],
        },
        "AnyTask": {
            "anyOf": [{"$ref": "#/$defs/WorkingTask"}, {"$ref": "#/$defs/DoneTask"}]
        },
    }
    package = _package(tmp_path, defs)
    assert (
        _annotation(package, "AnyTask")
        == 'Annotated[WorkingTask | DoneTask, Field(discriminator="status")]'
    )
    done = next(m for m in package.models if m.name == "DoneTask")
    assert (
        isinstance(done, ir.ObjectModel)
        and done.constants == ("status",)
        and done.fields[0].default == '"done"'
    )


def test_union_inside_all_of_over_refs_to_all_of_definitions(tmp_path: Path) -> None:
    """``allOf: [Result, {anyOf: [$ref, $ref]}]`` where each ``$ref`` is itself an
    ``allOf``."""

    def variant(s: str) -> dict[str, Any]:
        return {
            "allOf": [
                {"$ref": "#/$defs/TaskCore"},
                {
                    "type": "object",
                    "properties": {"status": {"const": s}},
                    "required": ["status"],
                },
            ]
        }

    defs = {
        "Result": {"type": "object", "properties": {"_meta": {"type": "object"}}},
        "TaskCore": {
            "type": "object",
            "properties": {"taskId": {"type": "string"}},
            "required": ["taskId"],
        },
        "WorkingTask": variant("working"),
        "DoneTask": variant("done"),
        "GetTaskResult": {
            "allOf": [
                {"$ref": "#/$defs/Result"},
                {
                    "anyOf": [
                        {"$ref": "#/$defs/WorkingTask"},
                        {"$ref": "#/$defs/DoneTask"},
                    ]
                },
            ]
        },
    }
    package = _package(tmp_path, defs)
    assert (
        _annotation(package, "GetTaskResult")
        == "Annotated[GetTaskResultWorking | GetTaskResultDone,"
        ' Field(discriminator="status")]'
    )
    working = next(m for m in package.models if m.name == "GetTaskResultWorking")
    assert isinstance(working, ir.ObjectModel) and [
        f.wire_name for f in working.fields
    ] == ["_meta", "taskId", "status"]


def test_members_without_distinct_constants_stay_a_plain_union(tmp_path: Path) -> None:
    defs = {
        "TextContent": _block("text", text={"type": "string"}),
        "OtherText": _block("text", body={"type": "string"}),
        "Loose": {"type": "object", "properties": {"type": {"type": "string"}}},
        "EitherTask": {
            "anyOf": [{"$ref": "#/$defs/TextContent"}, {"$ref": "#/$defs/OtherText"}]
        },
        "MaybeTask": {
            "anyOf": [{"$ref": "#/$defs/TextContent"}, {"$ref": "#/$defs/Loose"}]
        },
    }
    package = _package(tmp_path, defs)
    assert _annotation(package, "EitherTask") == "TextContent | OtherText"
    assert _annotation(package, "MaybeTask") == "TextContent | Loose"


def _field(kind: str | list[str], **props: Any) -> dict[str, Any]:
    pinned = (
        {"type": "string", "const": kind}
        if isinstance(kind, str)
        else {"type": "string", "enum": kind}
    )
    return {
        "type": "object",
        "properties": {"type": pinned, **props},
        "required": ["type", *props],
    }


def test_members_that_share_a_value_are_dispatched(tmp_path: Path) -> None:
    """Form fields: ``type`` picks the members; of those sharing ``"string"``, the
    required properties present pick further; a value is validated by the members that
    could take it.
    """
    defs = {
        "StringField": {
            **_field("string"),
            "properties": {
                **_field("string")["properties"],
                "minLength": {"type": "integer"},
            },
        },
        "EnumField": _field(
            "string", enum={"type": "array", "items": {"type": "string"}}
        ),
        "NumberField": _field(["integer", "number"]),
        "FieldTaskSchema": {
            "anyOf": [
                {"$ref": "#/$defs/StringField"},
                {"$ref": "#/$defs/EnumField"},
                {"$ref": "#/$defs/NumberField"},
            ]
        },
    }
    package = _package(tmp_path, defs)
    assert (
        _annotation(package, "FieldTaskSchema")
        == "Annotated[StringField | EnumField | NumberField, _PICK_FIELD_TASK_SCHEMA]"
    )
    (dispatch,) = package.dispatches
    assert (dispatch.name, dispatch.names) == ("_PICK_FIELD_TASK_SCHEMA", ("type",))
    assert dispatch.cases == (
        '"integer": ((), ("NumberField",))',
        '"number": ((), ("NumberField",))',
        '"string": ((("enum",),), ("StringField", "StringField | EnumField"))',
    )


def test_an_optional_constant_is_dispatched_with_its_absence(tmp_path: Path) -> None:
    """Elicitation params: a form's ``mode`` may be left out, a URL request's may
    not."""
    defs = {
        "FormParams": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "const": "form"},
                "message": {"type": "string"},
            },
            "required": ["message"],
        },
        "UrlParams": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "const": "url"},
                "url": {"type": "string"},
            },
            "required": ["mode", "url"],
        },
        "ElicitTaskParams": {
            "anyOf": [{"$ref": "#/$defs/FormParams"}, {"$ref": "#/$defs/UrlParams"}]
        },
    }
    package = _package(tmp_path, defs)
    assert (
        _annotation(package, "ElicitTaskParams")
        == "Annotated[FormParams | UrlParams, _PICK_ELICIT_TASK_PARAMS]"
    )
    assert package.dispatches[0].cases == (
        'None: ((), ("FormParams",))',
        '"form": ((), ("FormParams",))',
        '"url": ((), ("UrlParams",))',
    )


# -- the generated packages ------------------------------------------------------------


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _official(shared: Path, name: str, tmp_path: Path) -> ModuleType:
    """``models.py`` generated from an official schema (unformatted: black is not
    needed)."""
    target = Target(
        schema=shared / "schemas" / name,
        schema_label=name,
        output=tmp_path,
        package="official",
        revision=None,
        templates=None,
        regenerate="x",
    )
    package = pipeline.build(target)
    text = render(package, pipeline.protocol(package, target), environment(None))[
        f"models_{pipeline.protocol(package, target).suffix}.py"
    ]
    path = tmp_path / f"{name.split('.')[0].replace('-', '_')}_models.py"
    path.write_text(text)
    return _load(path, f"official_{path.stem}")


def _unions(
    schema: Any, defs: dict[str, Any], seen: set[str], found: list[dict[str, Any]]
) -> None:
    """Every plain ``union`` core schema reachable from ``schema``."""
    pending = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        if node.get("type") == "definitions":
            defs.update({d["ref"]: d for d in node["definitions"]})
        if node.get("type") == "definition-ref":
            ref = node["schema_ref"]
            if ref not in seen and ref in defs:
                seen.add(ref)
                pending.append(defs[ref])
            continue
        if node.get("type") == "union":
            found.append(node)
        pending.extend(
            v for k, v in node.items() if k not in ("metadata", "ref", "cls")
        )


def _model_class(choice: Any, defs: dict[str, Any]) -> type[pydantic.BaseModel] | None:
    node = choice[0] if isinstance(choice, tuple) else choice
    while isinstance(node, dict):
        if node.get("type") == "definition-ref":
            node = defs.get(node["schema_ref"])
        elif node.get("type") == "model":
            cls: type[pydantic.BaseModel] = node["cls"]
            return cls
        else:
            return None
    return None


def _pinned(member: type[pydantic.BaseModel], name: str) -> frozenset[Any] | None:
    """The values a field of a model allows when its type is a ``Literal`` (optional
    or not)."""
    field = member.model_fields.get(name)
    if field is None:
        return None
    values: set[Any] = set()
    for arg in (
        typing.get_args(field.annotation)
        if typing.get_origin(field.annotation) is not typing.Literal
        else (field.annotation,)
    ):
        if arg is type(None):
            continue
        if typing.get_origin(arg) is not typing.Literal:
            return None
        values.update(typing.get_args(arg))
    return frozenset(values)


def _undiscriminated(models: ModuleType) -> set[str]:
    """Plain unions with two or more model members that pin a common field to constants
    that tell some of them apart (shared required constants of distinct values
    included).
    """
    bad: set[str] = set()
    for name in sorted(vars(models)):
        cls = getattr(models, name)
        if not (
            isinstance(cls, type)
            and issubclass(cls, pydantic.BaseModel)
            and cls.__module__ == models.__name__
        ):
            continue
        defs: dict[str, Any] = {}
        unions: list[dict[str, Any]] = []
        _unions(cls.__pydantic_core_schema__, defs, set(), unions)
        for union in unions:
            members = [
                m
                for m in (_model_class(c, defs) for c in union["choices"])
                if m is not None
            ]
            if len(members) < 2:
                continue
            shared = set.intersection(
                *(set(getattr(m, "wire_constants", ())) for m in members)
            )
            for field in sorted(shared):
                values = [repr(m.model_fields[field].default) for m in members]
                if len(set(values)) == len(values):
                    bad.add(" | ".join(m.__name__ for m in members) + f" (on {field})")
            for field in sorted(
                set.intersection(*(set(m.model_fields) for m in members))
            ):
                pins = [_pinned(m, field) for m in members]
                if all(p is not None for p in pins) and len(set(pins)) > 1:
                    bad.add(
                        " | ".join(m.__name__ for m in members) + f" (pinned {field})"
                    )
    return bad


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_golden_unions_with_a_shared_constant_are_discriminated(key: str) -> None:
    assert _undiscriminated(_load(GOLDEN[key], f"golden_union_{key}")) == set()


@pytest.mark.official_schemas
@pytest.mark.parametrize("name", OFFICIAL)
def test_official_schema_unions_with_a_shared_constant_are_discriminated(
    shared: Path, name: str, tmp_path: Path
) -> None:
    assert _undiscriminated(_official(shared, name, tmp_path)) == set()


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_one_error_for_one_bad_value(key: str) -> None:
    """A sampling message whose one text block has a number for its text: one error,
    at that value."""
    models = _load(GOLDEN[key], f"golden_errors_{key}")
    for content in (
        {"type": "text", "text": 5},
        [{"type": "text", "text": "ok"}, {"type": "text", "text": 5}],
    ):
        with pytest.raises(pydantic.ValidationError) as info:
            models.SamplingMessage.model_validate({"role": "user", "content": content})
        errors = info.value.errors()
        assert len(errors) == 1, errors
        assert errors[0]["loc"][-1] == "text" and errors[0]["loc"][-2] == "text"


_FORM_FIELDS = (
    # a bad value in each kind of form field: one error, at that value, through the
    # member it is for (pydantic-core picks by ``type`` and names the value; of the
    # members sharing "string", the Python picker names the class)
    ({"type": "boolean", "default": "maybe"}, ("boolean", "default")),
    ({"type": "string", "minLength": "x"}, ("string", "StringSchema", "minLength")),
    ({"type": "integer", "maximum": 10, "title": 5}, ("integer", "title")),
    ({"type": "strin"}, ()),
)


def _form(field: dict[str, Any]) -> dict[str, Any]:
    return {
        "message": "Your details?",
        "requestedSchema": {"type": "object", "properties": {"f": field}},
    }


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_one_error_for_one_bad_value_in_a_nested_union(key: str) -> None:
    """Form field schemas share ``type`` values ("string" for plain, enum and titled
    enum fields), and a form's ``mode`` may be absent: each union is still picked by
    the property, so a bad value is one error, not one per member (issue 12)."""
    models = _load(GOLDEN[key], f"golden_nested_{key}")
    cases = [
        (
            _form(field),
            ("ElicitRequestFormParams", "requestedSchema", "properties", "f", *tail),
        )
        for field, tail in _FORM_FIELDS
    ]
    cases.append(
        (
            {"mode": "url", "message": "Sign in", "elicitationId": "e1"},
            ("ElicitRequestURLParams", "url"),
        )
    )
    for params, loc in cases:
        with pytest.raises(pydantic.ValidationError) as info:
            models.ElicitRequestParams.model_validate(params)
        errors = info.value.errors()
        assert len(errors) == 1, errors
        assert errors[0]["loc"] == loc
    if key == "ext":
        # the same, inside the input requests of a tasks/get result
        task = {
            "resultType": "complete",
            "taskId": "t1",
            "status": "input_required",
            "createdAt": "2026-07-28T10:00:00Z",
            "lastUpdatedAt": "2026-07-28T10:00:00Z",
            "ttlMs": None,
        }
        request = {
            "method": "elicitation/create",
            "params": _form({"type": "boolean", "default": "maybe"}),
        }
        with pytest.raises(pydantic.ValidationError) as info:
            models.GetTaskResult.model_validate(
                {**task, "inputRequests": {"r1": request}}
            )
        assert [e["loc"][-2:] for e in info.value.errors()] == [("boolean", "default")]


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_dispatched_unions_take_what_the_plain_union_takes(key: str) -> None:
    """For good values the dispatched form-field union picks the member the plain union
    picks, and keeps every key (unknown ones included) in ``to_wire()``."""
    models = _load(GOLDEN[key], f"golden_plain_{key}")
    members = [
        models.StringSchema,
        models.NumberSchema,
        models.BooleanSchema,
        models.UntitledSingleSelectEnumSchema,
        models.TitledSingleSelectEnumSchema,
        models.UntitledMultiSelectEnumSchema,
        models.TitledMultiSelectEnumSchema,
        models.LegacyTitledEnumSchema,
    ]
    plain: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(
        typing.Union[tuple(members)]  # noqa: UP007 - `|` cannot join a runtime list
    )
    values = [
        {"type": "string", "title": "Name", "minLength": 1, "x-hint": "given name"},
        {"type": "string", "enum": ["a", "b"]},
        {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
        {"type": "string", "enum": "not a list"},
        {"type": "string", "oneOf": [{"const": "s", "title": "Small"}]},
        {"type": "string", "one_of": [{"const": "s", "title": "Small"}]},
        {"type": "number", "minimum": 0.5},
        {"type": "integer", "maximum": 3},
        {"type": "boolean", "default": True},
        {"type": "array", "items": {"type": "string", "enum": ["a"]}},
        {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
    ]
    for value in values:
        ours = models.PrimitiveSchemaDefinition.model_validate(value).root
        theirs = plain.validate_python(value)
        assert type(ours) is type(theirs), value
        assert ours.to_wire() == theirs.to_wire()
    instance = models.TitledSingleSelectEnumSchema(one_of=[])
    assert models.PrimitiveSchemaDefinition.model_validate(instance).root is instance
    assert (
        type(
            models.ElicitRequestParams.model_validate(
                {
                    "message": "m",
                    "requestedSchema": {"type": "object", "properties": {}},
                }
            ).root
        )
        is models.ElicitRequestFormParams
    )


def _tagged_unions(schema: Any) -> list[dict[str, Any]]:
    """Every ``tagged-union`` core schema reachable from ``schema``."""
    defs: dict[str, Any] = {d["ref"]: d for d in schema.get("definitions", ())}
    found: list[dict[str, Any]] = []
    pending, seen = [schema], set()
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        if node.get("type") == "definitions":
            defs.update({d["ref"]: d for d in node["definitions"]})
        if node.get("type") == "definition-ref":
            ref = node["schema_ref"]
            if ref not in seen and ref in defs:
                seen.add(ref)
                pending.append(defs[ref])
            continue
        if node.get("type") == "tagged-union":
            found.append(node)
            pending.extend(node["choices"].values())
            continue
        pending.extend(
            v for k, v in node.items() if k not in ("metadata", "ref", "cls")
        )
    return found


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_a_pinned_property_always_present_is_read_by_pydantic_core(key: str) -> None:
    """Form field schemas are picked by ``type`` in pydantic-core (a string
    discriminator, no Python call per field); only the value several members share
    ("string") goes on to a Python picker, which looks at the other properties. A
    form's ``mode`` may be absent, which only a callable can tell, so that union
    keeps one."""
    models = _load(GOLDEN[key], f"golden_native_{key}")
    unions = _tagged_unions(
        pydantic.TypeAdapter(models.ElicitRequestFormParamsRequestedSchema).core_schema
    )
    by_type = [u for u in unions if u["discriminator"] == "type"]
    assert len(by_type) == 1, unions
    assert sorted(by_type[0]["choices"]) == [
        "array",
        "boolean",
        "integer",
        "number",
        "string",
    ]
    choices = by_type[0]["choices"]
    for value in ("boolean", "integer", "number"):
        assert choices[value]["type"] in ("model", "definition-ref"), choices[value]
    assert (
        choices["array"]["type"] == "union"
    )  # plain and titled multi-select: both tried, as the plain union does
    (string,) = [u for u in unions if callable(u["discriminator"])]
    assert string is choices["string"]
    params = _tagged_unions(
        pydantic.TypeAdapter(models.ElicitRequestParams).core_schema
    )
    assert any(
        callable(u["discriminator"]) and "ElicitRequestURLParams" in u["choices"]
        for u in params
    )
