"""Turn the extracted schema nodes into the intermediate model.

Input: ``Surface`` and ``Config``. Output: ``ir.Package``.

Decisions made here and nowhere else:
- every definition becomes a class with its own name: objects become models, string
  enums become ``str`` enums, everything else a root model;
- ``allOf`` is merged into one flat object (a base listed first, refinements after), and
  an ``allOf`` that holds an ``anyOf`` is distributed into a union of merged variants;
- an ``anyOf`` whose object branches all carry a distinct required ``const`` property is
  a discriminated union on that property; one whose object branches all pin a property
  to string constants otherwise (shared values, an optional ``const``) is picked by that
  property through a ``_Dispatch`` (``ir.Dispatch``);
- inline objects get names from their place (``GetTaskRequest`` + ``params``), and an
  inline node equal to a definition (descriptions aside) is that definition;
- ``const`` becomes ``Literal``; objects stay open unless ``additionalProperties``
  closes them;
- an object model with required constants counts them as set while it is validated (a
  ``model_post_init`` hook, ``ObjectModel.counts_constants``) only if some annotation
  uses it where the data may leave one out: not as a member of a union discriminated on
  it;
- models are ordered dependencies first, ties broken by name, so ``$defs`` order never
  matters.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from mcptasks_gen import __version__, extension, ir
from mcptasks_gen import typeexpr as tx
from mcptasks_gen.config import Target
from mcptasks_gen.errors import Location, fail
from mcptasks_gen.extract import Surface, ref_name
from mcptasks_gen.load import resolve_pointer
from mcptasks_gen.naming import (
    ClassName,
    PyIdent,
    class_name,
    definition_class,
    enum_member,
    field_ident,
    pascal,
    py_str,
    snake,
)

# A JSON number may be integral or not, and keeps its spelling through a round trip:
# pydantic would turn the ``1`` of a ``float`` field into ``1.0``, so ``int`` is tried
# first.
_PRIMITIVES: dict[str, tx.Type] = {
    "string": tx.STR,
    "integer": tx.INT,
    "number": tx.Union((tx.INT, tx.Name("float"))),
    "boolean": tx.Name("bool"),
    "null": tx.NONE,
}
_ANNOTATION_KEYS = (
    "description",
    "$schema",
    "$comment",
    "title",
    "examples",
    "deprecated",
)
_LINK = re.compile(r"\{@link\s+([^}|\s]+)(?:\s*\|\s*([^}]+))?\}")
# Names the generated modules define or import at module level besides the schema's
# classes (models.py.jinja and __init__.py.jinja); a definition or inline class never
# takes one of them, it gets a trailing underscore instead (recorded in
# ``Package.renamed``).
RESERVED_NAMES = frozenset(
    {
        "Annotated",
        "Any",
        "BaseModel",
        "Callable",
        "ClassVar",
        "ConfigDict",
        "CoreSchema",
        "Discriminator",
        "Enum",
        "ErrorCode",
        "Field",
        "GENERATOR_VERSION",
        "GetCoreSchemaHandler",
        "Generic",
        "IntEnum",
        "Literal",
        "McpModel",
        "McpRootModel",
        "RootModel",
        "SCHEMA_SHA256",
        "SPEC_REVISION",
        "TASK_METHODS",
        "TYPE_CHECKING",
        "Tag",
        "TypeVar",
        "Union",
    }
)
# Root models (lists, maps, unions, scalars) are spelled out where they are used; one
# whose annotation nests deeper than this is referred to by its class instead, so a
# chain of definitions cannot build an annotation too deep for black, pydantic or mypy.
_MAX_INLINE_DEPTH = 8
MAX_REF_DEPTH = 32
# required properties that tell apart the members of a dispatched union taking one value
_MAX_NARROWING = 4
"""Longest chain of definitions referring to one another (``A`` has a field of type
``B``, ``B`` one of type ``C``, ...). pydantic builds a model's schema by recursing
into models not yet complete, and fails at about 90 levels; the official schemas
reach 8."""
# JSON Schema validation keywords kept as pydantic constraints, per JSON type.
_CONSTRAINTS = {
    "number": (
        ("minimum", "ge"),
        ("maximum", "le"),
        ("exclusiveMinimum", "gt"),
        ("exclusiveMaximum", "lt"),
        ("multipleOf", "multiple_of"),
    ),
    "string": (
        ("minLength", "min_length"),
        ("maxLength", "max_length"),
        ("pattern", "pattern"),
    ),
    "array": (("minItems", "min_length"), ("maxItems", "max_length")),
    "object": (("minProperties", "min_length"), ("maxProperties", "max_length")),
}
_CONSTRAINTS["integer"] = _CONSTRAINTS["number"]
_NOTHING: dict[str, Any] = {
    "not": {}
}  # the schema ``false`` (``load`` writes every boolean schema as an object)
_Deref = Callable[
    [dict[str, Any], Location], tuple[dict[str, Any], Location, "str | None"]
]


def _regex_engine(pattern: str) -> tuple[str | None, str]:
    """The pydantic regex engine that can check ``pattern``: ``rust-regex`` (pydantic's
    default, fastest), else ``python-re`` (lookarounds and other constructs Rust's
    engine lacks), else None with the reason."""
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    problem = ""
    for engine in ("rust-regex", "python-re"):
        try:
            SchemaValidator(
                core_schema.str_schema(pattern=pattern, regex_engine=engine)
            )
        except SchemaError as exc:
            problem = str(exc).strip().splitlines()[-1].strip().removeprefix("error: ")
            continue
        return engine, ""
    return None, problem


def _integer_bound(name: str, value: float) -> tuple[str, int]:
    """An integer's bound or step given as a JSON number with a fraction or an exponent
    (``minimum: 1.5``, ``maximum: 1e20``), as the integer constraint that admits the
    same integers: pydantic takes only integers for them."""
    if (
        name == "multiple_of"
    ):  # integers that are multiples of p/q (lowest terms): multiples of p
        return name, abs(Fraction(repr(value)).numerator)
    if value.is_integer():
        return name, int(value)
    if name in ("ge", "gt"):  # the least integer allowed
        return "ge", math.ceil(value) if name == "ge" else math.floor(value) + 1
    return "le", math.floor(value) if name == "le" else math.ceil(value) - 1


def _strip_annotations(node: Any) -> Any:
    """A node without its prose (descriptions, titles, ``$schema``): for structural
    comparison."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _ANNOTATION_KEYS:
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {k: _strip_annotations(v) for k, v in value.items()}
            else:
                out[key] = _strip_annotations(value)
        return out
    if isinstance(node, list):
        return [_strip_annotations(v) for v in node]
    return node


def canonical(node: Any) -> str:
    """A stable text form of a node's structure, prose left out."""
    return json.dumps(_strip_annotations(node), sort_keys=True, separators=(",", ":"))


# Candidates for ``_escape_unprintable``: anything but printable ASCII, tab and newline.
_NOT_PLAIN = re.compile(r"[^\t\n\x20-\x7e]")
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})


def _escape_unprintable(match: re.Match[str]) -> str:
    """A control character (``Cc``: a NUL cannot even be in Python source), an invisible
    format character (``Cf``: bidirectional overrides make source read otherwise than
    it runs) or a lone surrogate (``Cs``: not UTF-8, and pydantic cannot take a class
    whose docstring has one) as the text of its Python escape, backslash doubled: the
    docstring shows ``\\x00`` where the description has a NUL. Any other character as
    it is."""
    char = match.group()
    if unicodedata.category(char) not in _ESCAPED_CATEGORIES:
        return char
    code = ord(char)
    return (
        f"\\\\x{code:02x}"
        if code < 0x100
        else f"\\\\u{code:04x}" if code < 0x10000 else f"\\\\U{code:08x}"
    )


def docstring(text: str) -> str:
    """Schema prose as docstring text: links unwrapped, whitespace tidied, quotes
    made safe, characters a docstring cannot hold as the text of their escapes
    (``\\x00``)."""
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), text or "")
    lines = [line.rstrip() for line in text.strip().splitlines()]
    text = "\n".join(lines).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    text = _NOT_PLAIN.sub(_escape_unprintable, text)
    return text + " " if text.endswith('"') else text


@dataclass(slots=True)
class _Context:
    """Mutable working state while normalizing one surface (never leaves this
    module)."""

    surface: Surface
    models: dict[ClassName, ir.Model] = field(default_factory=dict)
    deps: dict[ClassName, set[ClassName]] = field(default_factory=dict)
    by_shape: dict[str, str] = field(default_factory=dict)
    typing: set[str] = field(default_factory=set)
    pydantic: set[str] = field(default_factory=set)
    building: list[ClassName] = field(default_factory=list)
    json_kind: bool = False  # some union is picked by JSON type (``_json_kind``)
    python_re: bool = (
        False  # some pattern needs Python's ``re`` (``regex_engine="python-re"``)
    )
    dispatches: dict[str, ir.Dispatch] = field(
        default_factory=dict
    )  # by the name the annotations use


class _Normalizer:
    """Builds models for every definition of a surface."""

    def __init__(self, surface: Surface) -> None:
        self.cx = _Context(surface=surface)
        self.classes = _class_names(surface)
        self.order = _dependencies_first(surface.refs, surface)
        self.merged: dict[str, dict[str, Any]] = (
            {}
        )  # definition name -> its allOf, flattened
        self.merging: list[str] = []  # definitions whose allOf is being flattened
        self.merging_inline: list[int] = []  # ids of the allOf nodes being flattened
        for name, node in surface.defs.items():
            if _is_distinctive(node):
                self.cx.by_shape.setdefault(canonical(node), name)
        self.recursive = _recursive_defs(surface)

    # -- references --------------------------------------------------------------------

    def _deref(
        self, node: dict[str, Any], loc: Location
    ) -> tuple[dict[str, Any], Location, str | None]:
        """Follow ``$ref`` chains: the target node, its location and its definition
        name."""
        seen: set[str] = set()
        name: str | None = None
        while "$ref" in node:
            ref = node["$ref"]
            if ref in seen:
                raise fail(f'$ref cycle through "{ref}"', loc)
            seen.add(ref)
            target = ref_name(ref)
            if target is not None:
                name = target
                loc = self.cx.surface.loc(target)
                node = self.cx.surface.defs[target]
            else:
                resolved = resolve_pointer(self.cx.surface.doc, ref)
                if not isinstance(resolved, dict):
                    raise fail(f'$ref "{ref}" does not point at a schema object', loc)
                node = resolved
        return node, loc, name

    def _use(self, cls: ClassName) -> ClassName:
        """Refer to a class, and remember the dependency."""
        if self.cx.building:
            self.cx.deps.setdefault(self.cx.building[-1], set()).add(cls)
        return cls

    def _reference(self, name: str) -> tx.Type:
        """The annotation for a reference to a definition.

        Unions and scalars are spelled out in place (so a field holds the variant
        itself, and a ``RequestId`` field takes a plain ``str | int``); their classes
        still exist for standalone validation. Recursive definitions are referred to by
        class name.
        """
        cls = self.classes[name]
        if name not in self.recursive:
            self.define(name)
            model = self.cx.models[cls]
            if (
                isinstance(model, ir.RootModel)
                and tx.depth(model.annotation) <= _MAX_INLINE_DEPTH
            ):
                if self.cx.building:
                    self.cx.deps.setdefault(self.cx.building[-1], set()).update(
                        self.cx.deps.get(cls, ())
                    )
                return model.annotation
        return tx.Name(self._use(cls))

    # -- definitions -------------------------------------------------------------------

    def build(self) -> None:
        """Create a model for every definition, each after the definitions it refers to.

        Going dependencies first means a reference finds its target already built, so
        nothing recurses along a chain of definitions, however long.
        """
        for name in self.order:
            self.define(name)

    def define(self, name: str) -> None:
        """Create the model of one definition."""
        cls = self.classes[name]
        if cls in self.cx.models or cls in self.cx.building:
            return
        node = self.cx.surface.defs[name]
        loc = self.cx.surface.loc(name)
        doc = docstring(node.get("description", ""))
        self.cx.building.append(cls)
        try:
            shape = self._flatten(name, node, loc) if "allOf" in node else node
            enum = self._enum_values(shape)
            if enum is not None:
                model: ir.Model = self._enum_model(cls, doc, enum, loc)
            elif _is_object(shape) and ("properties" in shape or not _map_value(shape)):
                model = self._object_model(cls, doc, shape, loc)
            else:
                annotation = self.annotation(shape, loc, cls, top=True)
                model = ir.RootModel(
                    name=cls,
                    doc=doc,
                    annotation=annotation,
                    discriminator=self._discriminator_of(shape, loc) or "",
                    loc=loc,
                )
                self.cx.pydantic.add("RootModel")
        finally:
            self.cx.building.pop()
        self.cx.models[cls] = model

    def _enum_values(self, node: dict[str, Any]) -> list[str] | None:
        """The values of a string enumeration (``enum`` or ``anyOf`` of string
        constants)."""
        if (
            isinstance(node.get("enum"), list)
            and all(isinstance(v, str) for v in node["enum"])
            and node.get("type", "string") == "string"
        ):
            return list(node["enum"])
        branches = node.get("anyOf") or node.get("oneOf")
        if (
            isinstance(branches, list)
            and branches
            and all(
                isinstance(b, dict)
                and isinstance(b.get("const"), str)
                and set(b) <= {"const", "type", "description", "title"}
                for b in branches
            )
        ):
            return [b["const"] for b in branches]
        return None

    def _enum_model(
        self, cls: ClassName, doc: str, values: list[str], loc: Location
    ) -> ir.EnumModel:
        members: list[ir.EnumMember] = []
        seen: set[str] = set()
        for value in values:
            ident = enum_member(value)
            while ident in seen:
                ident = PyIdent(ident + "_")
            seen.add(ident)
            members.append(ir.EnumMember(name=ident, value=py_str(value), raw=value))
        return ir.EnumModel(name=cls, doc=doc, members=tuple(members), loc=loc)

    def _object_model(
        self, cls: ClassName, doc: str, node: dict[str, Any], loc: Location
    ) -> ir.ObjectModel:
        required = node.get("required", [])
        fields: list[ir.Field] = []
        properties = node.get("properties") or {}
        idents = _field_idents(list(properties))
        for wire, prop in properties.items():
            prop_loc = loc.child("properties", wire)
            if not isinstance(prop, dict) or prop == _NOTHING:
                prop = (
                    {}
                )  # ``false``: the property may not appear; typed Any, not checked
            ident = idents[wire]
            is_required = wire in required
            pinned = _const_value(prop, self._deref, prop_loc)
            constant = is_required and pinned is not None
            annotation = self.annotation(
                prop, prop_loc, class_name(cls, pascal(wire) or "Value")
            )
            # null admitted by the schema (named, or an untyped property): a null set
            # is a value of its own, which the wire must keep
            nullable = not is_required and tx.admits_none(annotation)
            if not is_required and not tx.nullable(annotation):
                annotation = tx.optional(annotation)
            fields.append(
                ir.Field(
                    name=ident,
                    wire_name=wire,
                    annotation=annotation,
                    required=is_required,
                    nullable=nullable,
                    constant=constant,
                    const_value=pinned[0] if constant and pinned is not None else None,
                    doc=docstring(prop.get("description", "")),
                    loc=prop_loc,
                )
            )
            if ident != wire or not is_required:
                self.cx.pydantic.add("Field")
        if any(f.constant for f in fields):
            self.cx.typing.add("ClassVar")
        return ir.ObjectModel(
            name=cls, doc=doc, fields=tuple(fields), closed=_closed(node), loc=loc
        )

    # -- annotations -------------------------------------------------------------------

    def annotation(
        self, node: Any, loc: Location, ctx: ClassName, *, top: bool = False
    ) -> tx.Type:
        """The Python type for a schema node; ``ctx`` names inline classes it needs."""
        if node is True or node == {}:
            self.cx.typing.add("Any")
            return tx.ANY
        if node is False or node == _NOTHING or not isinstance(node, dict):
            raise fail("a schema that matches nothing cannot be generated", loc)
        if "$ref" in node:
            target, _, name = self._deref(node, loc)
            if name is not None:
                return self._reference(name)
            return self.annotation(target, loc, ctx)
        if not top and _is_distinctive(node):
            known = self.cx.by_shape.get(canonical(node))
            if known is not None:
                return self._reference(known)
        if "const" in node or isinstance(node.get("enum"), list):
            return self._literal(node, loc)
        if "allOf" in node:
            merged = self._merge_all_of(node, loc)
            if _json_types(merged) - {"object"}:  # a value that is not an object
                return self.annotation(merged, loc, ctx, top=top)
            return self._inline_or_union(merged, loc, ctx, top)
        if "anyOf" in node or "oneOf" in node:
            values = self._enum_values(node)
            if values is not None:
                self.cx.typing.add("Literal")
                return tx.Literal(tuple(values))
            return self._union(node, loc, ctx)
        types = node.get("type")
        if isinstance(types, list):
            parts = [
                self.annotation({**node, "type": t}, loc, ctx, top=top) for t in types
            ]
            return tx.union(parts)
        if types == "array":
            items = node.get("items", {})
            item = self.annotation(items, loc.child("items"), class_name(ctx, "Item"))
            return self._constrained(tx.Generic("list", (item,)), node, "array", loc)
        if types == "object" or "properties" in node:
            annotation = self._inline_or_union(node, loc, ctx, top)
            first = tx.members(annotation)[0]
            return (
                self._constrained(annotation, node, "object", loc)
                if isinstance(first, tx.Generic) and first.base == "dict"
                else annotation
            )
        if types in _PRIMITIVES:
            return self._constrained(_PRIMITIVES[types], node, types, loc)
        self.cx.typing.add("Any")
        return tx.ANY

    def _literal(self, node: dict[str, Any], loc: Location) -> tx.Type:
        """``const`` or ``enum``: a ``Literal`` of the values (``| None`` for null)."""
        keyword = "const" if "const" in node else "enum"
        values = [node["const"]] if keyword == "const" else node["enum"]
        for i, value in enumerate(values):
            if not (value is None or isinstance(value, (str, int))) or isinstance(
                value, float
            ):
                at = loc.child(keyword) if keyword == "const" else loc.child(keyword, i)
                raise fail(
                    f"{keyword} value {json.dumps(value)} is not supported: only"
                    " strings, integers, booleans and null can be a Python Literal",
                    at,
                )
        named = tuple(
            v for _, v in dict.fromkeys((type(v), v) for v in values if v is not None)
        )
        if not named:
            return tx.NONE
        self.cx.typing.add("Literal")
        literal = tx.Literal(named)
        return tx.optional(literal) if None in values and keyword == "enum" else literal

    def _constrained(
        self, annotation: tx.Type, node: dict[str, Any], json_type: str, loc: Location
    ) -> tx.Type:
        """``annotation`` with the node's validation keywords for ``json_type`` as
        constraints.

        ``load`` has checked each keyword's JSON type (a string pattern, non-negative
        integer lengths, numeric bounds); what is left to check here is what a JSON type
        cannot say."""
        args: list[tuple[str, int | float | str]] = []
        for keyword, name in _CONSTRAINTS.get(json_type, ()):
            if keyword not in node:
                continue
            value = node[keyword]
            if keyword == "pattern":
                engine, problem = _regex_engine(value)
                if engine is None:
                    raise fail(
                        "pattern is not a regular expression the models can check:"
                        f" {problem}",
                        loc.child(keyword),
                    )
                self.cx.python_re |= engine == "python-re"
            elif name not in ("min_length", "max_length"):  # a bound or a step
                if value != value or value in (
                    float("inf"),
                    float("-inf"),
                ):  # json reads NaN, Infinity
                    raise fail(f"{keyword} must be a finite number", loc.child(keyword))
                if keyword == "multipleOf" and value <= 0:
                    raise fail("multipleOf must be greater than 0", loc.child(keyword))
                if json_type == "integer" and isinstance(value, float):
                    name, value = _integer_bound(name, value)
            args.append((name, value))
        if not args:
            return annotation
        self.cx.typing.add("Annotated")
        self.cx.pydantic.add("Field")
        return tx.Annotated(annotation, (tx.Constraints(tuple(args)),))

    def _inline_or_union(
        self, node: dict[str, Any], loc: Location, ctx: ClassName, top: bool
    ) -> tx.Type:
        """An object node: a named inline model, a map, or (after distribution) a
        union."""
        if "anyOf" in node or "oneOf" in node:
            return self._union(node, loc, ctx)
        value = _map_value(node)
        if "properties" not in node and value is not None:
            values = self.annotation(
                value, loc.child("additionalProperties"), class_name(ctx, "Value")
            )
            return tx.Generic("dict", (tx.STR, values))
        if "properties" not in node and not _closed(node):
            self.cx.typing.add("Any")
            return tx.DICT_ANY
        if top:
            raise AssertionError("top-level objects are models, not annotations")
        while ctx in RESERVED_NAMES:
            ctx = ClassName(ctx + "_")
        if ctx not in self.cx.models:
            self.cx.building.append(ctx)
            try:
                self.cx.models[ctx] = self._object_model(
                    ctx, docstring(node.get("description", "")), node, loc
                )
            finally:
                self.cx.building.pop()
        return tx.Name(self._use(ctx))

    def _union(self, node: dict[str, Any], loc: Location, ctx: ClassName) -> tx.Type:
        """``anyOf``/``oneOf``: a plain union, or a discriminated one when it can be.

        When only some branches are objects (a content block or a list of them), the
        objects form a discriminated union of their own, beside the other branches.
        """
        key = "anyOf" if "anyOf" in node else "oneOf"
        branches = node[key]
        discriminator = self._discriminator_of(node, loc)
        tagged: list[tx.Type] = []
        parts: list[tx.Type] = []
        for i, branch in enumerate(branches):
            branch_loc = loc.child(key, i)
            name = ctx
            target = (
                self._object_target(branch, branch_loc)
                if discriminator is not None
                else None
            )
            value = (
                _const_value(
                    target["properties"][discriminator], self._deref, branch_loc
                )
                if target is not None and discriminator is not None
                else None
            )
            if value is not None:
                name = class_name(ctx, pascal(str(value[0])))
            elif (
                _is_object(self._deref(branch, branch_loc)[0]) and "$ref" not in branch
            ):
                name = class_name(ctx, self._variant_name(branch, branches))
            annotation = self.annotation(branch, branch_loc, name)
            (tagged if value is not None else parts).append(annotation)
            variant = self.cx.models.get(name)
            if (
                value is not None
                and isinstance(variant, ir.ObjectModel)
                and not variant.doc
            ):
                self.cx.models[name] = replace(
                    variant,
                    doc=(
                        f"``{ctx}`` when ``{discriminator}`` is {json.dumps(value[0])}."
                    ),
                )
        if discriminator is None:
            return self._dispatched(node, key, loc, ctx, parts) or tx.union(parts)
        self.cx.typing.add("Annotated")
        self.cx.pydantic.add("Field")
        union = tx.Annotated(
            tx.union(tagged), (tx.Discriminated(field_ident(discriminator)),)
        )
        others = list(dict.fromkeys(parts))
        arrays = [
            i
            for i, b in enumerate(branches)
            if isinstance(b, dict)
            and self._deref(b, loc.child(key, i))[0].get("type") == "array"
        ]
        if len(others) == 1 and len(arrays) == 1:
            # One block or a list of blocks: pick the branch by the JSON type, so that a
            # bad block is reported once, not once more as "not a list".
            self.cx.pydantic.update(("Discriminator", "Tag"))
            self.cx.json_kind = True
            return tx.Annotated(
                tx.Union(
                    (
                        tx.Annotated(union, (tx.Tag("object"),)),
                        tx.Annotated(others[0], (tx.Tag("array"),)),
                    )
                ),
                (tx.PickedBy("_json_kind"),),
            )
        return tx.union([union, *others], dedupe=False)

    def _dispatched(
        self,
        node: dict[str, Any],
        key: str,
        loc: Location,
        ctx: ClassName,
        annotations: list[tx.Type],
    ) -> tx.Type | None:
        """A union of object members that all pin one property to string constants,
        which pydantic's own discriminator cannot pick (members share a value, or may
        leave the property out): the annotation with a ``_Dispatch``, or ``None``.

        The property's value (absent and null alike, where a member allows it) selects
        the members that take it; of those, a member whose other required properties are
        present while every other member misses one of its own is the only one tried.
        Either way a member left out could not have taken the value, so what validates
        is what the plain union would take; a value no member takes is one error.
        """
        branches = node[key]
        if (
            len(branches) < 2
            or len(set(annotations)) != len(annotations)
            or not all(isinstance(a, tx.Name) and not a.module for a in annotations)
        ):
            return None
        targets = [
            self._object_target(b, loc.child(key, i)) for i, b in enumerate(branches)
        ]
        members = [
            (a.name, t)
            for a, t in zip(annotations, targets, strict=True)
            if t is not None and isinstance(a, tx.Name)
        ]
        if len(members) != len(branches):
            return None
        best: tuple[int, str, dict[str | None, list[int]]] | None = None
        for prop in sorted(
            set.intersection(*(set(t["properties"]) for _, t in members))
        ):
            groups: dict[str | None, list[int]] = {}
            for i, (_, target) in enumerate(members):
                values = _pinned_values(target["properties"][prop], self._deref, loc)
                if values is None:
                    break
                for value in values:
                    groups.setdefault(value, []).append(i)
                if prop not in target.get("required", []):
                    groups.setdefault(None, []).append(i)
            else:
                largest = max(len(g) for g in groups.values())
                if any(len(g) < len(members) for g in groups.values()) and (
                    best is None or largest < best[0]
                ):
                    best = (largest, prop, groups)
        if best is None:
            return None
        _, prop, groups = best
        order = sorted(groups, key=lambda v: (v is not None, v or ""))
        cases: list[str] = []
        for pinned in order:
            properties, candidates = self._narrowing(
                prop, [members[i] for i in groups[pinned]]
            )
            tags = _py_tuple([py_str(" | ".join(names)) for names in candidates])
            cases.append(f"{py_str(pinned)}: ({properties}, {tags})")
        names = tuple(
            dict.fromkeys(
                [
                    prop,
                    *(_field_idents(list(t["properties"]))[prop] for _, t in members),
                ]
            )
        )
        dispatch = ir.Dispatch(
            name=PyIdent(f"_PICK_{snake(ctx).upper()}"),
            names=names,
            cases=tuple(cases),
            always_present=None not in groups,
        )
        for known in self.cx.dispatches.values():
            if (known.names, known.cases) == (dispatch.names, dispatch.cases):
                dispatch = known
                break
        while self.cx.dispatches.get(dispatch.name, dispatch) != dispatch:
            dispatch = replace(dispatch, name=PyIdent(dispatch.name + "_"))
        self.cx.dispatches[dispatch.name] = dispatch
        self.cx.typing.update(
            ("Annotated", "Callable", "TYPE_CHECKING", "Union", "cast", "get_args")
        )
        self.cx.pydantic.update(("Discriminator", "GetCoreSchemaHandler", "Tag"))
        return tx.Annotated(
            tx.union(annotations, dedupe=False), (tx.Dispatched(dispatch.name),)
        )

    def _narrowing(
        self, prop: str, group: list[tuple[str, dict[str, Any]]]
    ) -> tuple[str, list[tuple[str, ...]]]:
        """How the members that take one value of ``prop`` are told apart by the other
        properties they require: Python source of those properties (each as the names it
        may come under: wire name, attribute name), and for each combination of them
        present (bit ``i`` for property ``i``) the members that could take the object.
        None of them could: all of them, for their errors. With one member, or more than
        ``_MAX_NARROWING`` such properties, there is nothing to tell apart: one
        combination.
        """
        everyone = [tuple(a for a, _ in group)]
        if len(group) == 1:
            return "()", everyone
        required = [
            set(t.get("required", [])) & set(t["properties"]) - {prop} for _, t in group
        ]
        properties = sorted(set().union(*required))
        if not properties or len(properties) > _MAX_NARROWING:
            return "()", everyone
        candidates = []
        for mask in range(1 << len(properties)):
            present = {p for i, p in enumerate(properties) if mask >> i & 1}
            fits = tuple(
                a
                for (a, _), mine in zip(group, required, strict=True)
                if mine <= present
            )
            candidates.append(fits or everyone[0])
        if len(set(candidates)) == 1:
            return "()", candidates[:1]
        spellings = []
        for p in properties:
            names = [
                p,
                *(
                    _field_idents(list(t["properties"]))[p]
                    for _, t in group
                    if p in t["properties"]
                ),
            ]
            spellings.append(_py_tuple([py_str(n) for n in dict.fromkeys(names)]))
        return _py_tuple(spellings), candidates

    def _variant_name(self, branch: dict[str, Any], branches: list[Any]) -> str:
        """Name an undiscriminated inline object branch after a property only it
        requires."""
        others = [
            set(b.get("required", []))
            for b in branches
            if b is not branch and isinstance(b, dict)
        ]
        for prop in branch.get("required", []):
            if not any(prop in o for o in others):
                return "With" + pascal(prop)
        return "Object"

    def _object_target(self, branch: Any, loc: Location) -> dict[str, Any] | None:
        """The object a union branch stands for (``$ref`` followed, ``allOf``
        merged), or ``None``."""
        if not isinstance(branch, dict):
            return None
        target, target_loc, name = self._deref(branch, loc)
        if "allOf" in target:
            target = (
                self._flatten(name, target, target_loc)
                if name is not None and target is self.cx.surface.defs.get(name)
                else self._merge_all_of(target, target_loc)
            )
        if (
            _is_object(target)
            and isinstance(target.get("properties"), dict)
            and "anyOf" not in target
            and "oneOf" not in target
        ):
            return target
        return None

    def _discriminator_of(self, node: dict[str, Any], loc: Location) -> str | None:
        """The property the object branches of an ``anyOf`` are discriminated on, if
        any.

        Every object branch (behind ``$ref`` and ``allOf`` too) must require that
        property and pin it to a value of its own (``const``, or an ``enum`` of one
        value, also behind a ``$ref``); branches that are not objects (a list, a string)
        stay beside the union.
        """
        key = "anyOf" if "anyOf" in node else "oneOf" if "oneOf" in node else None
        if key is None:
            return None
        targets = [
            t
            for i, b in enumerate(node[key])
            if (t := self._object_target(b, loc.child(key, i))) is not None
        ]
        if len(targets) < 2:
            return None
        candidates: set[str] | None = None
        for t in targets:
            required = t.get("required", [])
            consts = {
                p
                for p, s in t["properties"].items()
                if p in required and _const_value(s, self._deref, loc) is not None
            }
            candidates = consts if candidates is None else candidates & consts
        for prop in sorted(candidates or ()):
            values = [
                _const_value(t["properties"][prop], self._deref, loc) for t in targets
            ]
            if len({repr(v) for v in values}) == len(values):
                return prop
        return None

    # -- allOf -------------------------------------------------------------------------

    def _flatten(
        self, name: str, node: dict[str, Any], loc: Location
    ) -> dict[str, Any]:
        """A definition's ``allOf`` flattened, once; a definition that includes
        itself fails."""
        if name in self.merged:
            return self.merged[name]
        if name in self.merging:
            cycle = " -> ".join([*self.merging[self.merging.index(name) :], name])
            raise fail(f"allOf cycle ({cycle})", loc.child("allOf"))
        self.merging.append(name)
        try:
            self.merged[name] = self._merge_all_of(node, loc)
        finally:
            self.merging.pop()
        return self.merged[name]

    def _merge_all_of(self, node: dict[str, Any], loc: Location) -> dict[str, Any]:
        """Flatten ``allOf`` into one object node; distribute over a nested
        ``anyOf``."""
        if id(node) in self.merging_inline:
            raise fail("allOf cycle (an allOf includes itself through a $ref)", loc)
        self.merging_inline.append(id(node))
        try:
            return self._merge_all_of_once(node, loc)
        finally:
            self.merging_inline.pop()

    def _merge_all_of_once(self, node: dict[str, Any], loc: Location) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        for i, member in enumerate(node["allOf"]):
            part, _, name = self._deref(member, loc.child("allOf", i))
            if "allOf" in part:
                if name is not None and part is self.cx.surface.defs.get(name):
                    part = self._flatten(name, part, self.cx.surface.loc(name))
                else:
                    part = self._merge_all_of(part, loc.child("allOf", i))
            parts.append(part)
        if any(_json_types(part) - {"object"} for part in parts):
            return _merge_values(node, parts, loc)
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        variants: list[Any] | None = None
        for i, part in enumerate(parts):
            if "anyOf" in part or "oneOf" in part:
                if variants is not None:
                    raise fail(
                        "allOf with more than one anyOf is not supported",
                        loc.child("allOf", i),
                    )
                variants = part.get("anyOf") or part.get("oneOf")
                continue
            _merge_into(merged, part)
        for key, value in node.items():
            if key not in ("allOf", "description"):
                if key == "properties":
                    merged["properties"].update(value)
                elif key == "required":
                    merged["required"] = list(
                        dict.fromkeys([*merged["required"], *value])
                    )
                else:
                    merged[key] = value
        if "description" in node:
            merged["description"] = node["description"]
        if variants is None:
            return merged
        distributed = []
        for variant in variants:
            target, target_loc, name = self._deref(variant, loc)
            if "allOf" in target:
                # a variant that is itself a merge (a base plus its constant) brings all
                # of it
                target = (
                    self._flatten(name, target, target_loc)
                    if name is not None and target is self.cx.surface.defs.get(name)
                    else self._merge_all_of(target, target_loc)
                )
            combined = {
                k: (
                    dict(v)
                    if isinstance(v, dict)
                    else list(v) if isinstance(v, list) else v
                )
                for k, v in merged.items()
                if k != "description"
            }
            _merge_into(combined, target)
            distributed.append(combined)
        return {
            "anyOf": distributed,
            **(
                {"description": merged["description"]}
                if "description" in merged
                else {}
            ),
        }

    # -- package -----------------------------------------------------------------------

    def ordered(self) -> tuple[tuple[ir.Model, ...], tuple[ClassName, ...]]:
        """Models in name order, and the root models that refer to classes defined
        later.

        Name order keeps a schema change from moving unrelated classes around. Object
        models refer to others through postponed annotations; a root model's base class
        is evaluated where it is defined, so a reference to a later class is quoted
        there and the model is rebuilt once the module has every class.
        """
        names = sorted(self.cx.models)
        position = {name: i for i, name in enumerate(names)}
        models: list[ir.Model] = []
        forward: list[ClassName] = []
        for name in names:
            model = self.cx.models[name]
            if isinstance(model, ir.RootModel) and any(
                position.get(d, -1) >= position[name]
                for d in self.cx.deps.get(name, ())
            ):
                model = replace(model, annotation=tx.Forward(model.annotation))
                forward.append(name)
            models.append(model)
        return tuple(models), tuple(forward)


def _class_names(surface: Surface) -> dict[str, ClassName]:
    """Each definition's class: its own name where valid and free, else a recorded
    rename.

    Names are taken in definition-name order, so the mapping depends on the set of names
    only; a clash with what the generated module itself defines (``RESERVED_NAMES``) or
    with an earlier definition's class is resolved with trailing underscores.
    """
    classes: dict[str, ClassName] = {}
    used: set[str] = set(RESERVED_NAMES)
    for name in sorted(surface.defs):
        cls = definition_class(name)
        while cls in used:
            cls = ClassName(cls + "_")
        used.add(cls)
        classes[name] = cls
    return classes


def _dependencies_first(
    refs: dict[str, frozenset[str]], surface: Surface | None = None
) -> list[str]:
    """Definition names, each after the ones it refers to (cycles broken by name order).

    An explicit stack instead of recursion: a reference chain may be thousands long.
    With ``surface``, a chain longer than ``MAX_REF_DEPTH`` is an error at its last
    definition.
    """
    order: list[str] = []
    state: dict[str, int] = {}  # 1 being visited, 2 done
    for start in sorted(refs):
        if start in state:
            continue
        stack: list[tuple[str, list[str]]] = [
            (start, sorted(refs[start], reverse=True))
        ]
        state[start] = 1
        while stack:
            name, pending = stack[-1]
            while pending and (pending[-1] in state or pending[-1] not in refs):
                pending.pop()
            if pending:
                child = pending.pop()
                if surface is not None and len(stack) >= MAX_REF_DEPTH:
                    chain = f"{stack[0][0]} -> {stack[1][0]} -> ... -> {child}"
                    raise fail(
                        f"definitions refer to each other more than {MAX_REF_DEPTH}"
                        f" deep ({chain}; the generator's limit)",
                        surface.loc(child),
                    )
                state[child] = 1
                stack.append((child, sorted(refs[child], reverse=True)))
            else:
                stack.pop()
                state[name] = 2
                order.append(name)
    return order


def _field_idents(wires: list[str]) -> dict[str, PyIdent]:
    """Attribute names for an object's wire names: distinct, and never another field's
    wire name.

    Models validate by attribute name as well as by wire name, so ``task_id`` as the
    attribute of ``taskId`` would also take the value of a ``task_id`` property: a wire
    name that is its own attribute name keeps it, the others step aside (``taskId`` ->
    ``task_id_``, ``_meta`` -> ``meta_`` next to ``meta``).
    """
    wire_set = set(wires)
    idents: dict[str, PyIdent] = {w: PyIdent(w) for w in wires if field_ident(w) == w}
    used: set[str] = set(idents.values())
    for wire in wires:
        if wire in idents:
            continue
        ident = field_ident(wire)
        while ident in used or ident in wire_set:
            ident = PyIdent(ident + "_")
        used.add(ident)
        idents[wire] = ident
    return {w: idents[w] for w in wires}


def _recursive_defs(surface: Surface) -> frozenset[str]:
    """Definitions that reach themselves through references."""
    recursive = set()
    for start, direct in surface.refs.items():
        seen: set[str] = set()
        pending = list(direct)
        while pending:
            current = pending.pop()
            if current == start:
                recursive.add(start)
                break
            if current not in seen:
                seen.add(current)
                pending.extend(surface.refs.get(current, ()))
    return frozenset(recursive)


def _is_object(node: Any) -> bool:
    return isinstance(node, dict) and (
        node.get("type") == "object" or "properties" in node
    )


def _is_distinctive(node: Any) -> bool:
    """Nodes whose shape identifies a definition: unions, and objects pinned by a
    constant.

    An inline copy of such a node is that definition (the extension schema repeats
    ``WorkingTask`` inline); a plain object that happens to look like another
    (``{"taskId": string}`` is both ``tasks/get`` params and ``RelatedTaskMetadata``) is
    not.
    """
    if not isinstance(node, dict):
        return False
    if "anyOf" in node or "oneOf" in node or "allOf" in node:
        return True
    props = node.get("properties")
    return isinstance(props, dict) and any(
        isinstance(p, dict) and "const" in p for p in props.values()
    )


def _const_value(node: Any, deref: _Deref, loc: Location) -> tuple[Any] | None:
    """The one value a property schema allows (``const``, or an ``enum`` of one), in
    a 1-tuple."""
    if not isinstance(node, dict):
        return None
    target, _, _ = deref(node, loc)
    if "const" in target:
        return (target["const"],)
    enum = target.get("enum")
    if isinstance(enum, list) and len(enum) == 1 and enum[0] is not None:
        return (enum[0],)
    return None


def _py_tuple(items: list[str]) -> str:
    """Python source of a tuple of the given sources."""
    if not items:
        return "()"
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _pinned_values(node: Any, deref: _Deref, loc: Location) -> tuple[str, ...] | None:
    """The string values a property schema allows, when it is a ``const`` or an
    ``enum`` of strings."""
    if not isinstance(node, dict):
        return None
    target, _, _ = deref(node, loc)
    if isinstance(target.get("const"), str):
        return (target["const"],)
    enum = target.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        return tuple(dict.fromkeys(enum))
    return None


def _map_value(node: dict[str, Any]) -> Any:
    """The value schema of a map-like object, or ``None``."""
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and extra and extra != _NOTHING:
        return extra
    return None


def _closed(node: dict[str, Any]) -> bool:
    extra = node.get("additionalProperties")
    return extra is False or extra == _NOTHING


def _json_types(node: dict[str, Any]) -> set[str]:
    """The JSON types a node names with ``type`` (none when it names no type)."""
    types = node.get("type")
    return (
        set(types)
        if isinstance(types, list)
        else {types} if isinstance(types, str) else set()
    )


def _merge_values(
    node: dict[str, Any], parts: list[dict[str, Any]], loc: Location
) -> dict[str, Any]:
    """``allOf`` over schemas of non-object values (a string, a number, an array, ...):
    one node with the types all parts allow and every part's keywords (a later part's
    win).
    """
    allowed: set[str] | None = None
    merged: dict[str, Any] = {}
    for i, part in enumerate(parts):
        if "anyOf" in part or "oneOf" in part or "properties" in part:
            raise fail(
                "allOf that combines a non-object schema with an object or a union is"
                " not supported",
                loc.child("allOf", i),
            )
        types = _json_types(part)
        if types:
            allowed = types if allowed is None else allowed & types
            if not allowed:
                raise fail(
                    "allOf of schemas with no JSON type in common matches nothing",
                    loc.child("allOf", i),
                )
        merged.update((k, v) for k, v in part.items() if k != "description")
    merged.update((k, v) for k, v in node.items() if k != "allOf")
    if allowed is not None:
        merged["type"] = next(iter(allowed)) if len(allowed) == 1 else sorted(allowed)
    return merged


def _merge_into(merged: dict[str, Any], part: dict[str, Any]) -> None:
    """Add an object node's properties and required names to ``merged`` (later wins)."""
    for wire, prop in (part.get("properties") or {}).items():
        merged["properties"][wire] = prop
    merged["required"] = list(
        dict.fromkeys([*merged.get("required", []), *part.get("required", [])])
    )
    if "additionalProperties" in part and (
        _closed(part) or "additionalProperties" not in merged
    ):
        merged["additionalProperties"] = part["additionalProperties"]


def _methods(
    normalizer: _Normalizer, models: dict[str, ir.Model]
) -> tuple[ir.Method, ...]:
    """The Tasks methods and notifications with their message, params and result
    types."""
    methods = []
    classes = normalizer.classes
    for def_name, method in normalizer.cx.surface.methods.items():
        message = models.get(classes[def_name]) if def_name in classes else None
        if not isinstance(message, ir.ObjectModel):
            continue
        params = next(
            (f.annotation for f in message.fields if f.wire_name == "params"), tx.NONE
        )
        notification = "id" not in {f.wire_name for f in message.fields}
        result: tx.Type = tx.NONE
        if not notification and def_name.endswith("Request"):
            result_name = def_name.removesuffix("Request") + "Result"
            result = (
                tx.Name(classes[result_name])
                if result_name in classes and classes[result_name] in models
                else tx.DICT_ANY
            )
        methods.append(
            ir.Method(
                name=method,
                literal=py_str(method),
                notification=notification,
                message=message.name,
                params=params,
                result=result,
            )
        )
    return tuple(sorted(methods, key=lambda m: m.name))


def _places(
    annotation: tx.Type, dispatches: dict[str, ir.Dispatch]
) -> list[tuple[str, frozenset[str], bool]]:
    """Where an annotation uses classes: each name, with the property a union it is a
    member of is discriminated on (its names; empty when none) and whether it is at
    the top of the annotation (the annotation itself, or a member of its outermost
    union)."""
    found: list[tuple[str, frozenset[str], bool]] = []

    def pinned(meta: tx.Metadata) -> frozenset[str] | None:
        """The property a union's ``Annotated`` metadata discriminates it on, if any."""
        if isinstance(meta, tx.Discriminated):
            return frozenset({meta.attribute})
        if isinstance(meta, tx.Dispatched) and meta.name in dispatches:
            dispatch = dispatches[meta.name]
            return frozenset(dispatch.names) if dispatch.always_present else frozenset()
        return None

    def walk(node: tx.Type, on: frozenset[str], top: bool) -> None:
        if isinstance(node, tx.Forward):
            walk(node.inner, on, top)
        elif isinstance(node, tx.Name):
            found.append((node.name, on, top))
        elif isinstance(node, tx.Union):
            for item in node.items:
                walk(item, on, top)
        elif isinstance(node, tx.Annotated):
            metas = node.metadata
            tags = [m for m in metas if isinstance(m, tx.Tag)]
            picks = [p for p in map(pinned, metas) if p is not None]
            if tags and len(tags) == len(metas):
                # a member of a union picked by a callable: still that member
                walk(node.inner, on, top)
            else:
                walk(node.inner, picks[0] if picks else frozenset(), top)
        elif isinstance(node, tx.Generic):
            for arg in node.args:
                walk(arg, frozenset(), False)

    walk(annotation, frozenset(), True)
    return found


def _count_constants(
    models: tuple[ir.Model, ...], dispatches: dict[str, ir.Dispatch]
) -> tuple[ir.Model, ...]:
    """Mark the object models whose validation must count missing constants as set.

    ``to_wire()`` sends the fields that were set, and a required constant must go out
    even when the data left it out. Building a model from Python values (the
    constructor, ``model_validate``, ...) and ``to_wire()`` itself count the model's own
    constants (in ``McpModel``), for free on the wire path. A model validated inside
    another one counts them only if it has the hook, which costs a Python call per
    instance: only models used somewhere their constants may be missing need it. A
    member of a union discriminated on its constant always has it (the union rejects the
    object otherwise); the members at the top of a root model that no annotation uses
    are counted by the root model's own ``model_validate`` and ``to_wire()``.
    """
    places: list[tuple[str, frozenset[str], bool, str]] = []
    for model in models:
        if isinstance(model, ir.ObjectModel):
            places.extend(
                (name, on, False, model.name)
                for f in model.fields
                for name, on, _ in _places(f.annotation, dispatches)
            )
        elif isinstance(model, ir.RootModel):
            places.extend(
                (name, on, top, model.name)
                for name, on, top in _places(model.annotation, dispatches)
            )
    used = {name for name, *_ in places}
    result: list[ir.Model] = []
    for model in models:
        if isinstance(model, ir.ObjectModel) and model.constants:
            constants = {
                f.name: {f.name, f.wire_name} for f in model.fields if f.constant
            }
            needed = any(
                any(not (spellings & on) for spellings in constants.values())
                for name, on, top, owner in places
                if name == model.name and not (top and owner not in used)
            )
            model = replace(model, counts_constants=needed)
        result.append(model)
    return tuple(result)


def _set_only(models: tuple[ir.Model, ...]) -> tuple[ir.Model, ...]:
    """Mark the models whose ``to_wire()`` must send only the fields that were set.

    ``to_wire()`` leaves out an optional field while it is ``None`` (``exclude_if`` on
    the field), which needs no record of what was set and costs pydantic-core next to
    nothing. Where the schema admits null for an optional field (it names null, or the
    property is untyped: a JSON-RPC error's ``data``), a null set differs from an
    absence: the model, and every model holding it (at any depth), sends only the
    fields that were set instead (``exclude_unset``: a copy of each model's
    ``__dict__``, about a quarter more time), as every model did before.
    """
    holds: dict[str, set[str]] = {}
    marked: set[str] = set()
    for model in models:
        if isinstance(model, ir.ObjectModel):
            holds[model.name] = set().union(
                *(tx.names(f.annotation) for f in model.fields)
            )
            if any(f.nullable for f in model.fields):
                marked.add(model.name)
        elif isinstance(model, ir.RootModel):
            holds[model.name] = tx.names(model.annotation)
    grown = True
    while grown:
        grown = False
        for name, held in holds.items():
            if name not in marked and held & marked:
                marked.add(name)
                grown = True
    return tuple(
        (
            replace(model, set_only=True)
            if isinstance(model, (ir.ObjectModel, ir.RootModel))
            and model.name in marked
            else model
        )
        for model in models
    )


def normalize(
    surface: Surface, target: Target, files: tuple[ir.OutputFile, ...]
) -> ir.Package:
    """Build the package IR for a surface and a target's settings."""
    normalizer = _Normalizer(surface)
    normalizer.build()
    models, forward = normalizer.ordered()
    models = _count_constants(models, normalizer.cx.dispatches)
    models = _set_only(models)
    by_name: dict[str, ir.Model] = {m.name: m for m in models}
    methods = _methods(normalizer, by_name)
    if methods and any(m.result == tx.DICT_ANY for m in methods):
        normalizer.cx.typing.add("Any")
    revision = surface.revision
    exports = sorted(
        {
            *(m.name for m in models),
            "ErrorCode",
            "McpModel",
            "McpRootModel",
            "TASK_METHODS",
        }
    )
    typing_imports = sorted(
        normalizer.cx.typing | {"Any", "ClassVar", "Generic", "TypeVar"}
    )
    pydantic_imports = sorted(
        normalizer.cx.pydantic | {"BaseModel", "ConfigDict", "RootModel"}
    )
    extension_id = (
        extension.extension_id(surface.doc.raw, target.extension_id, surface.doc.loc)
        if revision.is_extension
        else ""
    )
    return ir.Package(
        name=PyIdent(target.package),
        revision=revision.id,
        is_extension=revision.is_extension,
        title=(
            revision.title.replace(revision.profile.extension_id, extension_id)
            if extension_id
            else revision.title
        ),
        schema_name=target.schema_label,
        schema_sha256=surface.doc.sha256,
        generator_version=__version__,
        regenerate=target.regenerate,
        typing_imports=tuple(typing_imports),
        pydantic_imports=tuple(pydantic_imports),
        models=models,
        rebuild=forward,
        exports=tuple(exports),
        methods=methods,
        error_codes=tuple(
            ir.ErrorCode(name=PyIdent(c.name), code=c.code, doc=c.doc)
            for c in revision.error_codes
        ),
        files=files,
        renamed=tuple(
            (name, cls) for name, cls in normalizer.classes.items() if cls != name
        ),
        json_kind=normalizer.cx.json_kind,
        python_re=normalizer.cx.python_re,
        dispatches=tuple(
            sorted(normalizer.cx.dispatches.values(), key=lambda d: d.name)
        ),
        extension_id=extension_id,
    )
