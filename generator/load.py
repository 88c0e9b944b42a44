"""Read a schema file and check that it is a self-contained JSON Schema.

Input: a path (``-``: standard input). Output: ``Document`` (parsed JSON, its sha256,
its display name). Checks: the input is at most ``MAX_BYTES`` long (no more is ever
read, so a device or a pipe that never ends is refused too), it is JSON (errors carry
line:column) with no key twice in one object, it looks like a JSON Schema (draft 2020-12
or 07), every ``$ref`` is local and resolves (read as a URI fragment: percent-decoded,
then a JSON pointer), every ``type`` is a JSON type, every keyword the generator reads
has a value of the right JSON type, and nothing is nested deeper than ``MAX_DEPTH``
arrays and objects (checked without recursion before parsing, so later stages, pydantic
and black never meet a structure deep enough to exhaust Python's stack). Nothing is ever
fetched: a remote ``$ref`` is an error. Boolean subschemas are written as the objects
they stand for, so later stages see only objects.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from mcptasks_gen.config import STDIN, STDIN_NAME
from mcptasks_gen.errors import GenError, Location, fail

MAX_DEPTH = 64
"""Deepest nesting of JSON arrays and objects accepted (the official schemas reach 16).

A schema nests two levels per level of ``properties`` or ``items``, so this allows
about 30 levels of inline objects or arrays, which generated code, pydantic and mypy
all handle."""

MAX_BYTES = 64 * 2**20
"""Largest schema accepted, in bytes (64 MiB; the official schemas are under 200 KB).

A longer input is refused without being read to its end: a regular file by its size,
a device, a pipe or standard input after ``MAX_BYTES + 1`` bytes (``/dev/zero`` never
ends)."""

JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
_DRAFTS = (
    "https://json-schema.org/draft/2020-12/schema",
    "http://json-schema.org/draft-07/schema",
)
# Keywords whose value is a subschema, a map of subschemas, or a list of subschemas.
_SCHEMA_KEYS = (
    "additionalItems",
    "additionalProperties",
    "contains",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
)
_SCHEMA_MAP_KEYS = (
    "$defs",
    "definitions",
    "dependentSchemas",
    "patternProperties",
    "properties",
)
_SCHEMA_LIST_KEYS = ("allOf", "anyOf", "oneOf", "prefixItems")
_STRING_KEYS = (
    "$anchor",
    "$comment",
    "$id",
    "contentEncoding",
    "contentMediaType",
    "description",
    "format",
    "pattern",
    "title",
)
_NUMBER_KEYS = (
    "exclusiveMaximum",
    "exclusiveMinimum",
    "maximum",
    "minimum",
    "multipleOf",
)
_COUNT_KEYS = (
    "maxContains",
    "maxItems",
    "maxLength",
    "maxProperties",
    "minContains",
    "minItems",
    "minLength",
    "minProperties",
)
_BOOLEAN_KEYS = ("deprecated", "readOnly", "uniqueItems", "writeOnly")


@dataclass(frozen=True, slots=True, kw_only=True)
class Document:
    """A parsed, checked schema file."""

    name: str  # how the file is named in messages and in generated headers
    raw: dict[str, Any]
    sha256: str
    loc: Location

    @property
    def defs(self) -> dict[str, Any]:
        """The named definitions (``$defs``, or draft-07 ``definitions``)."""
        defs = self.raw.get("$defs", self.raw.get("definitions", {}))
        return defs if isinstance(defs, dict) else {}

    @property
    def defs_key(self) -> str:
        """The keyword holding the definitions."""
        return (
            "definitions"
            if "definitions" in self.raw and "$defs" not in self.raw
            else "$defs"
        )


def load(path: Path, name: str | None = None) -> Document:
    """Read, parse and check the schema at ``path`` (``-``: standard input)."""
    display = name or (STDIN_NAME if str(path) == STDIN else str(path))
    loc = Location(file=display)
    data = _read(path, loc)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise fail("not UTF-8 text, expected a JSON Schema file", loc) from None
    too_deep = _too_deep(text)
    if too_deep is not None:
        raise fail(
            f"nested deeper than {MAX_DEPTH} arrays and objects (the generator's"
            " limit)",
            loc.child(*too_deep),
        )
    try:
        raw = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        at = Location(file=display, line=exc.lineno, column=exc.colno)
        raise fail(f"invalid JSON: {exc.msg.lower()}", at) from None
    except _DuplicateKey:
        raise _duplicate_key_error(text, display) from None
    doc = Document(
        name=display,
        raw=_check_root(raw, loc),
        sha256=canonical_sha256(raw),
        loc=Location(file=display, pointer=""),
    )
    _check_nodes(doc)
    return doc


def canonical_sha256(raw: Any) -> str:
    """The sha256 of the schema's canonical form: keys sorted, no insignificant
    whitespace, non-ASCII kept as UTF-8. A pure reorder of ``$defs`` or a reformat of
    the file keeps the hash, so ``--check`` calls such a package up to date."""
    text = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # A lone surrogate (``"\ud800"`` in the JSON) is kept as its own bytes.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _too_large() -> str:
    """The message for an input longer than ``MAX_BYTES``."""
    size = (
        f"{MAX_BYTES // 2**20} MiB" if MAX_BYTES % 2**20 == 0 else f"{MAX_BYTES} bytes"
    )
    return f"larger than {size} (the generator's limit)"


def _read(path: Path, loc: Location) -> bytes:
    """The bytes of the input, at most ``MAX_BYTES`` of them (more is an error)."""
    try:
        if str(path) == STDIN:
            stream = getattr(sys.stdin, "buffer", None)
            if stream is None:
                raise fail("no standard input to read the schema from", loc)
            data: bytes = stream.read(MAX_BYTES + 1)
        else:
            with path.open("rb") as fh:
                info = os.fstat(fh.fileno())
                if stat.S_ISDIR(info.st_mode):
                    raise IsADirectoryError
                if stat.S_ISREG(info.st_mode) and info.st_size > MAX_BYTES:
                    raise fail(_too_large(), loc)
                data = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise fail("no such file", loc) from None
    except IsADirectoryError:
        raise fail("is a directory, expected a JSON Schema file", loc) from None
    except OSError as exc:
        raise fail(f"cannot read file ({exc.strerror})", loc) from None
    if len(data) > MAX_BYTES:
        raise fail(_too_large(), loc)
    return data


class _DuplicateKey(Exception):
    """Raised while parsing: some object has a key twice (``_duplicate_key`` finds
    where)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members as a dict; a key given twice is an error, not the last one
    winning."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset``, counted as ``json`` counts them."""
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def _duplicate_key_error(text: str, display: str) -> GenError:
    """The error for the first key given twice in one object (in text order)."""
    found = _duplicate_key(text)
    if found is None:  # not reached: the parser saw one
        return fail(
            "a key appears twice in one object (JSON Schema needs unique keys)",
            Location(file=display),
        )
    parts, offset, first = found
    line, column = _line_column(text, offset)
    first_line, first_column = _line_column(text, first)
    pointer = Location(file=display, pointer="").child(*parts).pointer
    return fail(
        f"duplicate key {json.dumps(parts[-1])} at #{pointer} (first at"
        f" {first_line}:{first_column}; the keys of an object must be unique)",
        Location(file=display, line=line, column=column),
    )


# json's own string scanner (C-accelerated; typeshed does not list it).
_scanstring: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")
_STRUCTURE = re.compile(r'[{}\[\]",:]')


def _too_deep(text: str) -> tuple[str, ...] | None:
    """The JSON pointer parts of the first container nested deeper than ``MAX_DEPTH``.

    A scan over the structural characters with an explicit stack, never recursion; text
    that is not valid JSON is left for ``json.loads`` to report with its line and
    column.
    """
    path: list[str] = []  # per open container: the key or index of the current child
    is_object: list[bool] = []
    want_key = False
    pos = 0
    while True:
        match = _STRUCTURE.search(text, pos)
        if match is None:
            return None
        char, pos = match.group(), match.end()
        if char == '"':
            try:
                value, pos = _scanstring(text, pos)
            except json.JSONDecodeError:
                return None
            if want_key and is_object:
                path[-1] = value
        elif char in "{[":
            if len(path) >= MAX_DEPTH:
                return tuple(path)
            is_object.append(char == "{")
            path.append("" if char == "{" else "0")
            want_key = char == "{"
        elif char in "}]":
            if path:
                path.pop()
                is_object.pop()
            want_key = False
        elif char == ",":
            if is_object and is_object[-1]:
                want_key = True
            elif path and path[-1].isdigit():
                path[-1] = str(int(path[-1]) + 1)
        else:
            want_key = False


def _duplicate_key(text: str) -> tuple[tuple[str, ...], int, int] | None:
    """The JSON pointer parts of the first key that appears twice in one object (in text
    order), the offset of that key and of its first appearance; ``None`` when none does.

    The same scan as ``_too_deep``, with the keys seen in each open object; run only
    once the parser has found a duplicate, so a schema without one never pays for it.
    """
    path: list[str] = []
    is_object: list[bool] = []
    seen: list[dict[str, int]] = []
    want_key = False
    pos = 0
    while True:
        match = _STRUCTURE.search(text, pos)
        if match is None:
            return None
        char, pos = match.group(), match.end()
        if char == '"':
            start = pos - 1
            try:
                value, pos = _scanstring(text, pos)
            except json.JSONDecodeError:
                return None
            if want_key and is_object:
                first = seen[-1].setdefault(value, start)
                if first != start:
                    return (*path[:-1], value), start, first
                path[-1] = value
        elif char in "{[":
            is_object.append(char == "{")
            seen.append({})
            path.append("" if char == "{" else "0")
            want_key = char == "{"
        elif char in "}]":
            if path:
                path.pop()
                is_object.pop()
                seen.pop()
            want_key = False
        elif char == ",":
            if is_object and is_object[-1]:
                want_key = True
            elif path and path[-1].isdigit():
                path[-1] = str(int(path[-1]) + 1)
        else:
            want_key = False


def _check_root(raw: Any, loc: Location) -> dict[str, Any]:
    """Accept only an object that declares a known draft or holds definitions."""
    if not isinstance(raw, dict):
        kind = type(raw).__name__.replace("dict", "object").replace("list", "array")
        raise fail(f"not a JSON Schema (found a JSON {kind}, expected an object)", loc)
    dialect = raw.get("$schema")
    if dialect is not None and not (
        isinstance(dialect, str) and dialect.rstrip("#") in _DRAFTS
    ):
        raise fail(
            f'unsupported "$schema" {json.dumps(dialect)} (expected draft 2020-12 or'
            " draft-07)",
            loc,
        )
    if dialect is None and not any(
        k in raw for k in ("$defs", "definitions", "type", "properties")
    ):
        raise fail('not a JSON Schema (no "$schema", "$defs" or "type")', loc)
    return raw


def subschemas(node: Any) -> Iterator[dict[str, Any]]:
    """Every subschema below ``node`` (itself included), in the order of ``walk``,
    without their locations: a walk that only looks at the schemas (detecting the
    revision, finding the definitions a node refers to) need not build one
    ``Location`` a node."""
    stack = [node]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield node
        children: list[Any] = [node[key] for key in _SCHEMA_KEYS if key in node]
        for key in _SCHEMA_MAP_KEYS:
            values = node.get(key)
            if isinstance(values, dict):
                children.extend(values.values())
        for key in _SCHEMA_LIST_KEYS:
            values = node.get(key)
            if isinstance(values, list):
                children.extend(values)
        if isinstance(node.get("items"), list):  # draft-07 tuple form
            children.extend(node["items"])
        children.reverse()
        stack.extend(children)


def walk(node: Any, loc: Location) -> Iterator[tuple[dict[str, Any], Location]]:
    """Yield every subschema below ``node`` (itself included) with its location."""
    if not isinstance(node, dict):
        return
    yield node, loc
    for key in _SCHEMA_KEYS:
        if key in node:
            yield from walk(node[key], loc.child(key))
    for key in _SCHEMA_MAP_KEYS:
        children = node.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                yield from walk(child, loc.child(key, name))
    for key in _SCHEMA_LIST_KEYS:
        children = node.get(key)
        if isinstance(children, list):
            for i, child in enumerate(children):
                yield from walk(child, loc.child(key, i))
    if isinstance(node.get("items"), list):  # draft-07 tuple form
        for i, child in enumerate(node["items"]):
            yield from walk(child, loc.child("items", i))


@functools.cache
def pointer_parts(ref: str) -> tuple[str, ...] | None:
    """The reference tokens of a local ``$ref`` (``#/$defs/a~1b`` -> ``("$defs",
    "a/b")``), or ``None`` when its fragment is not a JSON pointer (``#name``, a
    plain-name anchor).

    As JSON Schema reads a ``$ref``: the fragment of a URI, so percent-decoded first
    (``#/$defs/sp%20ace`` names ``sp ace``), then a JSON pointer (RFC 6901: ``~1`` is
    ``/``, ``~0`` is ``~``). A percent-encoded ``/`` (``%2F``) separates tokens like
    ``/``.
    """
    fragment = ref[1:]
    if "%" in fragment:
        fragment = unquote(fragment)
    if not fragment:
        return ()
    if not fragment.startswith("/"):
        return None
    return tuple(
        part.replace("~1", "/").replace("~0", "~") for part in fragment[1:].split("/")
    )


def resolve_pointer(doc: Document, ref: str) -> Any:
    """The node a local ``#/...`` reference points at, or ``None`` when it dangles."""
    parts = pointer_parts(ref)
    if parts is None:
        return None
    node: Any = doc.raw
    for part in parts:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _kind(value: Any) -> str:
    """How JSON names the type of a parsed value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return (
        "array"
        if isinstance(value, list)
        else "object" if isinstance(value, dict) else type(value).__name__
    )


def _check_keywords(node: dict[str, Any], loc: Location) -> None:
    """Check that each keyword the generator reads has a value of the right JSON
    type."""

    def wrong(
        key: str, expected: str, at: Location | None = None, value: Any = None
    ) -> None:
        found = _kind(node[key] if at is None else value)
        raise fail(
            f'"{key}" must be {expected}, not a JSON {found}', at or loc.child(key)
        )

    def schema(value: Any) -> bool:
        return isinstance(value, (dict, bool))

    for key in _SCHEMA_KEYS:
        if (
            key in node
            and not schema(node[key])
            and not (key == "items" and isinstance(node[key], list))
        ):
            wrong(key, "a schema (an object or a boolean)")
    for key in _SCHEMA_MAP_KEYS:
        if key in node:
            children = node[key]
            if not isinstance(children, dict):
                wrong(key, "an object of schemas")
            for name, child in children.items():
                if not schema(child):
                    wrong(key, "an object of schemas", loc.child(key, name), child)
    for key in _SCHEMA_LIST_KEYS:
        if key in node:
            children = node[key]
            if not isinstance(children, list) or (
                key != "prefixItems" and not children
            ):
                wrong(key, "a non-empty array of schemas")
            for i, child in enumerate(children):
                if not schema(child):
                    wrong(key, "an array of schemas", loc.child(key, i), child)
    if isinstance(node.get("items"), list):
        for i, child in enumerate(node["items"]):
            if not schema(child):
                wrong(
                    "items",
                    "a schema or an array of schemas",
                    loc.child("items", i),
                    child,
                )
    if "required" in node:
        required = node["required"]
        if not isinstance(required, list):
            wrong("required", "an array of strings")
        for i, name in enumerate(required):
            if not isinstance(name, str):
                wrong("required", "an array of strings", loc.child("required", i), name)
    if "enum" in node and not (isinstance(node["enum"], list) and node["enum"]):
        wrong("enum", "a non-empty array (no value matches an empty one)")
    for key in _STRING_KEYS:
        if key in node and not isinstance(node[key], str):
            wrong(key, "a string")
    for key in _NUMBER_KEYS:
        if key in node and (
            isinstance(node[key], bool) or not isinstance(node[key], (int, float))
        ):
            wrong(key, "a number")
    for key in _COUNT_KEYS:
        value = node.get(key)
        if key in node and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            wrong(key, "a non-negative integer")
    for key in _BOOLEAN_KEYS:
        if key in node and not isinstance(node[key], bool):
            wrong(key, "a boolean")


def _as_object(schema: Any) -> Any:
    """A boolean schema as the object schema it stands for: ``true`` is ``{}``,
    ``false`` is ``{"not": {}}``; any other value unchanged."""
    if isinstance(schema, bool):
        return {} if schema else {"not": {}}
    return schema


def _objects_for_booleans(node: dict[str, Any]) -> None:
    """Write the boolean subschemas of ``node`` as objects, so later stages see only
    objects."""
    for key in _SCHEMA_KEYS:
        if key in node:
            node[key] = _as_object(node[key])
    for key in (*_SCHEMA_MAP_KEYS, *_SCHEMA_LIST_KEYS, "items"):
        children = node.get(key)
        if isinstance(children, dict) and key in _SCHEMA_MAP_KEYS:
            node[key] = {name: _as_object(child) for name, child in children.items()}
        elif isinstance(children, list):
            node[key] = [_as_object(child) for child in children]


def _check_nodes(doc: Document) -> None:
    """Check every ``$ref`` and ``type`` in the document, and the JSON type of every
    keyword the generator reads; write boolean subschemas as objects."""
    for node, loc in walk(doc.raw, doc.loc):
        _check_keywords(node, loc)
        _objects_for_booleans(node)
        if "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str):
                raise fail("$ref must be a string", loc.child("$ref"))
            if not ref.startswith("#"):
                raise fail(
                    f'remote $ref "{ref}" is not supported (only local "#/..."'
                    " references; nothing is fetched)",
                    loc.child("$ref"),
                )
            if pointer_parts(ref) is None:
                raise fail(
                    f'$ref "{ref}" names an anchor, which is not supported (only JSON'
                    ' pointer references "#/...")',
                    loc.child("$ref"),
                )
            if resolve_pointer(doc, ref) is None:
                raise fail(
                    f'dangling $ref "{ref}" (no such definition)', loc.child("$ref")
                )
        if "type" in node:
            types = node["type"]
            if types == []:
                raise fail('"type" must name at least one JSON type', loc.child("type"))
            for t in types if isinstance(types, list) else [types]:
                if t not in JSON_TYPES:
                    raise fail(
                        f"unsupported type {json.dumps(t)} (expected one of"
                        f" {', '.join(JSON_TYPES)})",
                        loc.child("type"),
                    )
