"""The generated models keep the schema's validation keywords (issue 9, item 17),
checked with ``hypothesis`` against ``jsonschema``'s Draft 2020-12 validator as the
oracle.

For every definition of the project's two schemas that the generated package has a class
for, instances the schema accepts validate with the model and come back byte for byte
(compact JSON, keys sorted) from ``to_wire()`` as the package sends them; instances
mutated so that the schema rejects them are rejected by the model. The strategies are
built here from the schema nodes (``hypothesis-jsonschema`` cannot resolve the recursive
``JSONValue`` and fails with current ``hypothesis``).

Deliberate exceptions (not generated, or tolerated with a check that it is this case):
- pydantic's lax mode converts some scalars: ``"5"`` or ``5.0`` for an integer,
  ``1``/``"true"`` for a boolean. The model then holds the converted value; mutations
  never produce them.
- ``null`` for an optional property that does not allow null is accepted (``None`` means
  absent on the Python side); mutations never produce it.
- a missing required constant (``jsonrpc``, ``method``, a variant's ``status``) is
  filled in from its default, by design (``wire_constants``): tolerated when the model's
  output equals the instance with the constant put back and the schema accepts that
  output. A union picked by that constant (the status variants;
  ``PrimitiveSchemaDefinition`` by ``type``) rejects an instance without it instead.
- an unknown property spelled like a field's attribute name (``task_id`` beside
  ``taskId``) is read as that field, since models also accept attribute names; extra
  keys are generated with an ``x-`` prefix that no attribute name has.
- ``format`` is an annotation in Draft 2020-12 and is not checked by either side.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pydantic
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mcptasks_gen import pipeline, write
from mcptasks_gen.config import Target

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = {
    "2025": "schema/2025-11-25/schema.json",
    "ext": "schema/ext-2026-07-28/schema.json",
}
SETTINGS = settings(
    max_examples=8,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)

Json = Any
_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
_KEYS = st.text(alphabet="abcdefghij", min_size=1, max_size=4).map(lambda k: "x-" + k)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-1000, 1000)
    | st.floats(-1e6, 1e6, allow_nan=False)
    | _TEXT
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=2)
    | st.dictionaries(_KEYS, inner, max_size=2),
    max_leaves=4,
)


@pytest.fixture(scope="module", params=sorted(SCHEMAS))
def generated(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Json], Any]:
    """The raw schema and the freshly generated models module for it."""
    key = request.param
    schema = ROOT / SCHEMAS[key]
    package = f"hyp_{key}"
    out = tmp_path_factory.mktemp("hyp")
    target = Target(
        schema=schema,
        schema_label=SCHEMAS[key],
        output=out,
        package=package,
        revision=None,
        templates=None,
        regenerate="x",
    )
    write.write(target.package_dir, pipeline.generate(target), force=False)
    sys.path.insert(0, str(out))
    try:
        models = importlib.import_module(f"{package}.models")
    finally:
        sys.path.remove(str(out))
    return json.loads(schema.read_text(encoding="utf-8")), models


class Strategies:
    """Instances of schema nodes, built from the nodes themselves."""

    def __init__(self, root: dict[str, Json]) -> None:
        self.root = root

    def resolve(self, node: Json) -> Json:
        while isinstance(node, dict) and "$ref" in node:
            target: Json = self.root
            for part in node["$ref"][2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    def merge(self, node: dict[str, Json]) -> Json:
        """``allOf`` as one node (objects merged; a nested ``anyOf`` distributed)."""
        merged: dict[str, Json] = {"type": "object", "properties": {}, "required": []}
        variants = None
        for part in node["allOf"]:
            part = self.resolve(part)
            if "allOf" in part:
                part = self.merge(part)
            if "anyOf" in part:
                variants = part["anyOf"]
                continue
            merged["properties"].update(part.get("properties", {}))
            merged["required"] += part.get("required", [])
            if "additionalProperties" in part:
                merged["additionalProperties"] = part["additionalProperties"]
        merged["properties"].update(node.get("properties", {}))
        merged["required"] += node.get("required", [])
        if variants is None:
            return merged
        out = []
        for variant in variants:
            v = self.resolve(variant)
            out.append(
                {
                    **merged,
                    "properties": {**merged["properties"], **v.get("properties", {})},
                    "required": merged["required"] + v.get("required", []),
                }
            )
        return {"anyOf": out}

    def of(self, node: Json, depth: int) -> st.SearchStrategy[Json]:
        node = self.resolve(node)
        if (
            node is True
            or node == {}
            or (isinstance(node, dict) and not set(node) - {"description", "title"})
        ):
            return _JSON
        if "allOf" in node:
            return self.of(self.merge(node), depth)
        if "const" in node:
            return st.just(node["const"])
        if "enum" in node:
            return st.sampled_from(node["enum"])
        branches = node.get("anyOf") or node.get("oneOf")
        if branches:
            if depth < 0:
                flat = [
                    b
                    for b in branches
                    if self.resolve(b).get("type") not in ("array", "object")
                ]
                branches = flat or branches[:1]
            return st.one_of([self.of(b, depth - 1) for b in branches])
        types = node.get("type")
        if isinstance(types, list):
            return st.one_of([self.of({**node, "type": t}, depth) for t in types])
        if types == "object" or "properties" in node:
            return self.object(node, depth)
        if types == "array":
            low = node.get("minItems", 0)
            high = min(node.get("maxItems", low + 2), low + 2)
            if depth < 0:
                high = low
            return st.lists(
                self.of(node.get("items", {}), depth - 1), min_size=low, max_size=high
            )
        if types == "string":
            return st.text(
                alphabet=st.characters(blacklist_categories=("Cs",)),
                min_size=node.get("minLength", 0),
                max_size=node.get("maxLength", 6),
            )
        if types in ("integer", "number"):
            low, high = node.get("minimum", -(10**6)), node.get("maximum", 10**6)
            ints = st.integers(int(-(-low // 1)), int(high // 1))
            if types == "integer":
                return ints
            return ints | st.floats(low, high, allow_nan=False, allow_infinity=False)
        if types == "boolean":
            return st.booleans()
        if types == "null":
            return st.none()
        return _JSON

    def object(self, node: dict[str, Json], depth: int) -> st.SearchStrategy[Json]:
        props = node.get("properties", {})
        required = [p for p in props if p in node.get("required", [])]
        optional = (
            {}
            if depth < 0
            else {
                p: self.of(s, depth - 1) for p, s in props.items() if p not in required
            }
        )
        base = st.fixed_dictionaries(
            {p: self.of(props[p], depth - 1) for p in required}, optional=optional
        )
        extra = node.get("additionalProperties", True)
        if extra is False or extra == {"not": {}} or depth < 0:
            return base
        values = _JSON if extra is True or extra == {} else self.of(extra, depth - 1)
        return st.tuples(base, st.dictionaries(_KEYS, values, max_size=1)).map(
            lambda pair: {**pair[1], **pair[0]}
        )


def _definitions(key: str) -> list[str]:
    raw = json.loads((ROOT / SCHEMAS[key]).read_text(encoding="utf-8"))
    return sorted(raw["$defs"])


def _validator(root: dict[str, Json], name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({**root, "$ref": f"#/$defs/{name}"})


def _canonical(value: Json) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _classes(root: dict[str, Json], models: Any) -> dict[str, Any]:
    """Definitions of the schema that the generated package has a class for (the
    Tasks surface)."""
    return {
        name: getattr(models, name)
        for name in sorted(root["$defs"])
        if isinstance(getattr(models, name, None), type)
        and issubclass(getattr(models, name), pydantic.BaseModel)
    }


def _paths(value: Json, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _drop(value: Json, path: tuple[Any, ...]) -> Json:
    """A copy of ``value`` without the member at ``path`` (which must be in an
    object)."""
    return _mutate(value, path, "drop") if _has(value, path) else value


def _has(value: Json, path: tuple[Any, ...]) -> bool:
    for part in path:
        if (
            isinstance(value, dict)
            and part in value
            or isinstance(value, list)
            and isinstance(part, int)
            and part < len(value)
        ):
            value = value[part]
        else:
            return False
    return True


def _mutate(value: Json, path: tuple[Any, ...], how: str) -> Json:
    """A copy of ``value`` with one change at ``path``."""
    if not path:
        if how == "retype":
            return [] if isinstance(value, dict) else {}
        if how == "bad-string":
            return "zz-not-a-valid-value"
        if how == "too-big":
            return 10**20 if not isinstance(value, float) else 1e300
        if how == "too-small":
            return -(10**20)
        if how == "fraction":
            return 0.5
        if how == "extra" and isinstance(value, dict):
            return {**value, "x-unexpected": 1}
        return value
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        if how == "drop" and not rest:
            del copy[head]
            return copy
        copy[head] = _mutate(value[head], rest, how)
        return copy
    copy_list = list(value)
    copy_list[head] = _mutate(value[head], rest, how)
    return copy_list


def test_accepted_instances_validate_and_round_trip(
    generated: tuple[dict[str, Json], Any],
) -> None:
    root, models = generated
    strategies = Strategies(root)
    classes = _classes(root, models)
    assert len(classes) > 30
    for name, cls in classes.items():
        validator = _validator(root, name)
        check = _round_trip(cls, validator)
        given(strategies.of(root["$defs"][name], 2))(SETTINGS(check))()


def _round_trip(
    cls: Any, validator: jsonschema.Draft202012Validator
) -> Callable[[Json], None]:
    def check(instance: Json) -> None:
        assume(validator.is_valid(instance))
        model = cls.model_validate(instance)
        assert _canonical(model.to_wire()) == _canonical(instance), cls.__name__
        again = cls.model_validate_json(json.dumps(instance))
        assert _canonical(again.to_wire()) == _canonical(instance), cls.__name__

    return check


def test_rejected_instances_are_rejected(
    generated: tuple[dict[str, Json], Any],
) -> None:
    root, models = generated
    strategies = Strategies(root)
    for name, cls in _classes(root, models).items():
        validator = _validator(root, name)
        check = _rejects(cls, validator)
        given(strategies.of(root["$defs"][name], 2), st.data())(SETTINGS(check))()


def _rejects(
    cls: Any, validator: jsonschema.Draft202012Validator
) -> Callable[[Json, st.DataObject], None]:
    def check(instance: Json, data: st.DataObject) -> None:
        assume(validator.is_valid(instance))
        path = data.draw(st.sampled_from(_paths(instance)))
        how = data.draw(
            st.sampled_from(
                [
                    "retype",
                    "bad-string",
                    "too-big",
                    "too-small",
                    "fraction",
                    "extra",
                    "drop",
                ]
            )
        )
        if how == "drop":
            assume(len(path) > 0)
        mutated = _mutate(instance, path, how)
        assume(not validator.is_valid(mutated))
        try:
            model = cls.model_validate(mutated)
        except pydantic.ValidationError:
            return
        out = model.to_wire()
        # The tolerated acceptance: a dropped required constant, filled in from its
        # default (by the member it belonged to, or, in an undiscriminated union, by
        # another member).
        refilled = (
            how == "drop"
            and validator.is_valid(out)
            and _canonical(_drop(out, path)) == _canonical(mutated)
        )
        assert refilled, f"{cls.__name__} accepted {how} at {list(path)}: {mutated!r}"

    return check


def test_model_preferences_bounds(generated: tuple[dict[str, Json], Any]) -> None:
    """The issue's example: costPriority is a number from 0 to 1, and keeps its
    spelling."""
    _, models = generated
    with pytest.raises(pydantic.ValidationError):
        models.ModelPreferences.model_validate({"costPriority": 7.5})
    assert models.ModelPreferences.model_validate({"costPriority": 1}).to_wire() == {
        "costPriority": 1
    }
    assert models.ModelPreferences.model_validate({"costPriority": 0.5}).to_wire() == {
        "costPriority": 0.5
    }


def _models_with(tmp_path: Path, package: str, defs: dict[str, Json]) -> Any:
    """The models module of a package generated from the extension schema plus
    ``defs``."""
    raw = json.loads((ROOT / SCHEMAS["ext"]).read_text(encoding="utf-8"))
    raw["$defs"].update(defs)
    schema = tmp_path / f"{package}.json"
    schema.write_text(json.dumps(raw))
    target = Target(
        schema=schema,
        schema_label=schema.name,
        output=tmp_path,
        package=package,
        revision=None,
        templates=None,
        regenerate="x",
    )
    write.write(target.package_dir, pipeline.generate(target), force=False)
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(f"{package}.models")
    finally:
        sys.path.remove(str(tmp_path))


def _accepts_like_the_schema(
    model: Any,
    node: Json,
    values: list[Json],
    wrap: Callable[[Json], Json] = lambda v: v,
) -> None:
    """``model`` accepts exactly the values of ``values`` that ``node`` accepts
    (``jsonschema`` as the oracle); each value is validated as ``wrap(value)``."""
    oracle = jsonschema.Draft202012Validator(node)
    for value in values:
        try:
            model.model_validate(wrap(value))
            accepted = True
        except pydantic.ValidationError:
            accepted = False
        assert accepted == oracle.is_valid(value), (node, value)


BOUNDS = {
    "ge": {"type": "integer", "minimum": 1.5},
    "le": {"type": "integer", "maximum": 7.5},
    "gt": {"type": "integer", "exclusiveMinimum": 2.5},
    "lt": {"type": "integer", "exclusiveMaximum": 9.5},
    "whole": {"type": "integer", "minimum": 3.0, "exclusiveMaximum": 1e1},
    "huge": {"type": "integer", "maximum": 1e20},
    "step": {"type": "integer", "multipleOf": 1.5},
    "step_whole": {"type": "integer", "multipleOf": 4.0},
}


def test_integer_bounds_given_as_fractions_keep_their_meaning(tmp_path: Path) -> None:
    """An integer's ``minimum: 1.5`` or ``maximum: 1e20`` (JSON numbers that are not
    written as integers) used to give ``Field(ge=1.5)``, and the package failed at
    import ("'ge' must be coercible to an integer"; found by fuzzing). Each field now
    accepts exactly the integers the schema accepts (``jsonschema`` as the oracle),
    from -20 to 40 (and around 1e20, where ``jsonschema``'s float division is still
    exact enough to be the oracle)."""
    model = _models_with(
        tmp_path, "bounds_pkg", {"BoundsTask": {"type": "object", "properties": BOUNDS}}
    ).BoundsTask
    for name, node in BOUNDS.items():
        values: list[Json] = [
            *range(-20, 41),
            *([10**20, 10**20 + 1] if name == "huge" else []),
        ]
        _accepts_like_the_schema(
            model, node, values, lambda value, name=name: {name: value}
        )


def test_patterns_with_lookarounds_are_checked(tmp_path: Path) -> None:
    """``^(?=x)`` and ``(?<!q)`` are valid JSON Schema patterns that pydantic's default
    Rust engine cannot compile: the package used to fail at import (found by fuzzing).
    The models of such a package use Python's ``re``; the official schemas have no
    pattern and keep Rust's.
    """
    models = _models_with(
        tmp_path,
        "patterns_pkg",
        {
            "PatternTask": {
                "type": "object",
                "properties": {"a": {"type": "string", "pattern": "^(?=x)x+$"}},
            },
            "PatternListTask": {
                "type": "array",
                "items": {"type": "string", "pattern": "(?<!q)z"},
            },
        },
    )
    assert models.PatternTask.model_validate({"a": "xx"}).to_wire() == {"a": "xx"}
    assert models.PatternListTask.model_validate(["az"]).to_wire() == ["az"]
    for bad in ({"a": "yx"},):
        with pytest.raises(pydantic.ValidationError):
            models.PatternTask.model_validate(bad)
    with pytest.raises(pydantic.ValidationError):
        models.PatternListTask.model_validate(["qz"])
    assert (
        "python-re"
        not in (ROOT / "generated" / "mcp_tasks_ext" / "models_ext.py").read_text()
    )


ALL_OF_VALUES = {
    "StringsTask": {"allOf": [{"type": "string"}, {"maxLength": 2}]},
    "ArrayTask": {"allOf": [{"type": "array", "items": {"type": "integer"}}]},
    "NullableTask": {
        "allOf": [{"type": ["array", "null"]}, {"type": ["null", "string", "array"]}]
    },
    "EitherTask": {
        "oneOf": [
            {"allOf": [{"type": "string"}]},
            {"allOf": [{"type": "integer", "minimum": 0}]},
        ]
    },
    "ListOrNullTask": {
        "anyOf": [
            {"allOf": [{"type": "array", "items": {"type": "integer"}}]},
            {"type": "null"},
        ]
    },
}


def test_all_of_over_values_that_are_not_objects(tmp_path: Path) -> None:
    """``allOf`` of strings, arrays or nulls used to be merged as if every part were an
    object: a definition became an empty object model, and a union branch a reference to
    its own union (``class EitherTask(McpRootModel["EitherTask"])``, which fails on
    every value with a recursion error; found by fuzzing). Each now accepts what
    ``jsonschema`` accepts.
    """
    models = _models_with(tmp_path, "all_of_pkg", ALL_OF_VALUES)
    samples: list[Json] = [
        "",
        "ab",
        "abc",
        0,
        5,
        -1,
        1.5,
        None,
        [],
        [1, 2],
        ["x"],
        {},
        {"a": 1},
    ]  # no booleans: lax mode converts them
    for name, node in ALL_OF_VALUES.items():
        _accepts_like_the_schema(getattr(models, name), node, samples)


def test_a_string_constant_that_reads_as_python_in_a_union(tmp_path: Path) -> None:
    """``Literal["class"]`` inside a root model's union: the pass that decides which
    models count constants read the string as a forward reference and stopped with a
    SyntaxError traceback (found by fuzzing)."""
    node: Json = {
        "oneOf": [{"type": "string", "const": "class"}, {"type": ["integer", "null"]}]
    }
    model = _models_with(tmp_path, "keyword_pkg", {"KeywordTask": node}).KeywordTask
    _accepts_like_the_schema(model, node, ["class", "x", 3, None, [], {}])


LITERALS = {
    "MixedTask": {"enum": [True, 1, None, "x", "x"]},
    "NullTask": {"const": None},
    "OnlyNullTask": {"enum": [None]},
}


def test_enum_and_const_values_of_every_literal_kind(tmp_path: Path) -> None:
    """``enum: [null]`` used to render ``Literal[] | None`` (no valid Python);
    ``True`` and ``1`` are different values to JSON Schema and stay apart in the
    ``Literal``."""
    models = _models_with(tmp_path, "literals_pkg", LITERALS)
    for name, node in LITERALS.items():
        _accepts_like_the_schema(
            getattr(models, name), node, [True, False, 1, 2, None, "x", "y"]
        )


BOOLEANS = {
    "AnythingTask": True,
    "BranchTask": {"anyOf": [True, {"type": "string"}]},
    "ItemsTask": {"type": "array", "items": True},
    "PropsTask": {
        "type": "object",
        "properties": {"a": True, "b": {"type": "integer"}},
    },
}


def test_boolean_schemas_anywhere_a_schema_goes(tmp_path: Path) -> None:
    """``true`` as a definition or a union branch used to stop generation with an
    AttributeError traceback (found by fuzzing); each is now the schema ``{}``."""
    models = _models_with(tmp_path, "booleans_pkg", BOOLEANS)
    for name, node in BOOLEANS.items():
        _accepts_like_the_schema(
            getattr(models, name),
            node,
            ["x", 3, None, [1, "a"], {"a": [1]}, {"b": "no"}],
        )
