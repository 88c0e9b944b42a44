"""Drift check between the project's own Tasks schemas and the official MCP schemas.

The files in ``schema/<revision>/schema.json`` are written by this project: they hold
the Tasks surface of each revision (the transitive ``$ref`` closure of a fixed set of
root definitions) with our own descriptions. Their structure must stay identical to the
official schemas, which live outside the repository in ``../shared/schemas/`` (or in the
folder named by ``$MCPTASKS_SHARED``). These tests fail with the definition name and the
JSON pointer of the first difference when either side changes.

When the official schemas are missing the comparison tests are skipped, except under
``CI=true`` where a missing reference is an error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
DEFS_PREFIX = "#/$defs/"

# Keywords whose value maps names to subschemas (so the names are data, not keywords).
SCHEMA_MAP_KEYWORDS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
# Keywords whose value is a list of subschemas.
SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
# Keywords whose value is one subschema (``items`` may also be a list in older drafts).
SCHEMA_KEYWORDS = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "propertyNames",
        "contains",
        "not",
        "if",
        "then",
        "else",
    }
)
# Keywords that may differ between our files and the official ones.
IGNORED_KEYWORDS = frozenset({"description", "$schema"})

ROOTS_2025_11_25 = (
    "GetTaskRequest",
    "GetTaskResult",
    "GetTaskPayloadRequest",
    "GetTaskPayloadResult",
    "ListTasksRequest",
    "ListTasksResult",
    "CancelTaskRequest",
    "CancelTaskResult",
    "TaskStatusNotification",
    "TaskStatusNotificationParams",
    "CreateTaskResult",
    "Task",
    "TaskStatus",
    "TaskMetadata",
    "RelatedTaskMetadata",
    "TaskAugmentedRequestParams",
    "ToolExecution",
    "ClientCapabilities",
    "ServerCapabilities",
    "CallToolRequest",
    "CallToolResult",
    "ElicitRequest",
    "ElicitResult",
    "CreateMessageRequest",
    "CreateMessageResult",
    "Error",
    "Tool",
)


def _fixed_roots(names: tuple[str, ...]) -> Callable[[Mapping[str, Any]], list[str]]:
    """Return a root selector that always yields ``names``."""
    return lambda defs: list(names)


def _task_named_roots(defs: Mapping[str, Any]) -> list[str]:
    """Select every definition whose name mentions ``Task``."""
    return [name for name in defs if "Task" in name]


@dataclass(frozen=True)
class Revision:
    """One schema revision: our file, the official file and how to pick the roots."""

    name: str
    official_file: str
    roots: Callable[[Mapping[str, Any]], list[str]]

    @property
    def ours(self) -> Path:
        """Path of the project's own schema for this revision."""
        return REPO_ROOT / "schema" / self.name / "schema.json"


REVISIONS = (
    Revision(
        "2025-11-25", "mcp-2025-11-25.schema.json", _fixed_roots(ROOTS_2025_11_25)
    ),
    Revision("ext-2026-07-28", "ext-tasks-draft.schema.json", _task_named_roots),
)

by_revision = pytest.mark.parametrize("revision", REVISIONS, ids=lambda r: r.name)


# --- helpers -------------------------------------------------------------------


def shared_schemas_dir() -> Path:
    """Folder holding the official schemas.

    ``$MCPTASKS_SHARED`` may name either the shared folder (which has a ``schemas/``
    subfolder) or the schemas folder itself; by default it is ``../shared`` next to the
    repository.
    """
    env = os.environ.get("MCPTASKS_SHARED")
    if env:
        base = Path(env)
        return base / "schemas" if (base / "schemas").is_dir() else base
    return REPO_ROOT.parent / "shared" / "schemas"


def load_json(path: Path) -> Any:
    """Parse one JSON file."""
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def load_ours(revision: Revision) -> dict[str, Any]:
    """Load the project's schema for ``revision``."""
    doc = load_json(revision.ours)
    assert isinstance(doc, dict)
    return doc


def load_official(revision: Revision) -> dict[str, Any]:
    """Load the official schema, skipping (or failing under CI) when it is absent."""
    path = shared_schemas_dir() / revision.official_file
    if not path.is_file():
        reason = (
            f"official schema {path} not found; set MCPTASKS_SHARED to the folder "
            "that holds schemas/"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (required when CI=true)")
        pytest.skip(reason)
    doc = load_json(path)
    assert isinstance(doc, dict)
    return doc


def escape_pointer(token: str) -> str:
    """Escape one JSON pointer reference token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def iter_refs(node: Any) -> Iterator[str]:
    """Yield every ``$ref`` string found anywhere in ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from iter_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from iter_refs(item)


def ref_closure(defs: Mapping[str, Any], roots: list[str]) -> set[str]:
    """Names of ``roots`` plus every definition they reach through local ``$ref``s."""
    seen: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        assert name in defs, f"$ref to unknown definition {name!r}"
        seen.add(name)
        for ref in iter_refs(defs[name]):
            assert ref.startswith(DEFS_PREFIX), f"unsupported $ref {ref!r} in {name}"
            pending.append(ref[len(DEFS_PREFIX) :])
    return seen


def structure(schema: Any) -> Any:
    """Copy of ``schema`` without annotation keywords (``description``, ``$schema``).

    Only keys in keyword position are dropped: a property *named* ``description`` or
    ``$schema`` stays, and so does anything inside data keywords such as ``const``,
    ``enum`` or ``default``.
    """
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in IGNORED_KEYWORDS:
            continue
        if key in SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            out[key] = {name: structure(sub) for name, sub in value.items()}
        elif key in SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            out[key] = [structure(sub) for sub in value]
        elif key in SCHEMA_KEYWORDS:
            if isinstance(value, list):
                out[key] = [structure(sub) for sub in value]
            else:
                out[key] = structure(value)
        else:
            out[key] = value
    return out


def _short(value: Any, limit: int = 120) -> str:
    """Compact repr for assertion messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_difference(
    ours: Any, official: Any, pointer: str = ""
) -> tuple[str, str] | None:
    """JSON pointer and explanation of the first place where two JSON values differ."""
    if type(ours) is not type(official):
        return pointer, f"ours is {ours!r}, official is {official!r}"
    if isinstance(ours, dict):
        for key in sorted(set(ours) | set(official)):
            where = f"{pointer}/{escape_pointer(key)}"
            if key not in ours:
                return where, f"missing in ours (official has {official[key]!r})"
            if key not in official:
                return where, f"not in the official schema (ours has {ours[key]!r})"
            found = first_difference(ours[key], official[key], where)
            if found:
                return found
        return None
    if isinstance(ours, list):
        for index, (mine, theirs) in enumerate(zip(ours, official, strict=False)):
            found = first_difference(mine, theirs, f"{pointer}/{index}")
            if found:
                return found
        if len(ours) != len(official):
            return (
                pointer,
                (
                    f"ours has {len(ours)} items, official has {len(official)}: "
                    f"{_short(ours)} vs {_short(official)}"
                ),
            )
        return None
    if ours != official:
        return pointer, f"ours is {ours!r}, official is {official!r}"
    return None


@dataclass(frozen=True)
class SchemaNode:
    """A subschema found while walking a definition."""

    pointer: str
    node: Any
    kind: str  # "definition", "property" or "other"


def walk_schema(node: Any, pointer: str, kind: str) -> Iterator[SchemaNode]:
    """Yield ``node`` and all of its subschemas, keyword by keyword."""
    yield SchemaNode(pointer, node, kind)
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        where = f"{pointer}/{escape_pointer(key)}"
        if key in SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            child_kind = "property" if key == "properties" else "other"
            for name, sub in value.items():
                yield from walk_schema(
                    sub, f"{where}/{escape_pointer(name)}", child_kind
                )
        elif key in SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            for index, sub in enumerate(value):
                yield from walk_schema(sub, f"{where}/{index}", "other")
        elif key in SCHEMA_KEYWORDS:
            subs = value if isinstance(value, list) else [value]
            for index, sub in enumerate(subs):
                suffix = f"/{index}" if isinstance(value, list) else ""
                yield from walk_schema(sub, f"{where}{suffix}", "other")


def walk_definitions(doc: Mapping[str, Any]) -> Iterator[SchemaNode]:
    """Walk every definition in ``doc['$defs']``."""
    for name, schema in doc.get("$defs", {}).items():
        yield from walk_schema(schema, f"#/$defs/{escape_pointer(name)}", "definition")


def normalized(text: str) -> str:
    """Description text with case and whitespace differences removed."""
    return " ".join(text.lower().split())


# --- tests against the official schemas -----------------------------------------


@pytest.mark.official_schemas
@by_revision
def test_definitions_are_the_tasks_closure(revision: Revision) -> None:
    """Our ``$defs`` hold exactly the ``$ref`` closure of the Tasks roots."""
    official_defs = load_official(revision)["$defs"]
    expected = ref_closure(official_defs, revision.roots(official_defs))
    actual = set(load_ours(revision)["$defs"])
    missing = sorted(expected - actual)
    extra = sorted(actual - expected)
    assert not missing and not extra, (
        f"{revision.name}: $defs differ from the official Tasks closure; "
        f"missing: {missing or 'none'}; not in the closure: {extra or 'none'}"
    )


@pytest.mark.official_schemas
@by_revision
def test_definitions_match_official_structure(revision: Revision) -> None:
    """Each definition equals the official one once descriptions are set aside."""
    official_defs = load_official(revision)["$defs"]
    ours = load_ours(revision)["$defs"]
    problems = []
    for name in sorted(set(ours) & set(official_defs)):
        found = first_difference(structure(ours[name]), structure(official_defs[name]))
        if found:
            pointer, detail = found
            problems.append(
                f"definition {name}: first difference at "
                f"#/$defs/{escape_pointer(name)}{pointer}: {detail}"
            )
    assert (
        not problems
    ), f"{revision.name} drifted from {revision.official_file}:\n" + "\n".join(problems)


@pytest.mark.official_schemas
@by_revision
def test_descriptions_are_our_own(revision: Revision) -> None:
    """No description of ours repeats any description of the official schema."""
    upstream = {
        normalized(found.node["description"])
        for found in walk_definitions(load_official(revision))
        if isinstance(found.node, dict)
        and isinstance(found.node.get("description"), str)
    }
    copied = [
        found.pointer
        for found in walk_definitions(load_ours(revision))
        if isinstance(found.node, dict)
        and isinstance(found.node.get("description"), str)
        and normalized(found.node["description"]) in upstream
    ]
    assert (
        not copied
    ), f"{revision.name}: descriptions copied from upstream at: {copied}"


# --- tests of our files alone ---------------------------------------------------------


@by_revision
def test_every_definition_and_property_is_described(revision: Revision) -> None:
    """Every definition and every property carries a non-empty description."""
    undocumented = [
        found.pointer
        for found in walk_definitions(load_ours(revision))
        if found.kind in ("definition", "property")
        and not (
            isinstance(found.node, dict)
            and isinstance(found.node.get("description"), str)
            and found.node["description"].strip()
        )
    ]
    assert not undocumented, f"{revision.name}: missing descriptions at: {undocumented}"


@by_revision
def test_document_header_and_layout(revision: Revision) -> None:
    """Top-level keywords are set, definitions are sorted and the file is canonical
    JSON."""
    doc = load_ours(revision)
    assert doc.get("$schema") == DRAFT_2020_12
    assert doc.get("$id") == f"urn:mcptasks-gen:schema:{revision.name}"
    assert isinstance(doc.get("title"), str) and doc["title"].strip()
    assert isinstance(doc.get("description"), str) and doc["description"].strip()
    names = list(doc["$defs"])
    assert names == sorted(names), f"{revision.name}: $defs are not sorted by name"
    nested = [
        found.pointer
        for found in walk_definitions(doc)
        if isinstance(found.node, dict) and "$schema" in found.node
    ]
    assert not nested, f"{revision.name}: nested $schema keywords at: {nested}"
    text = revision.ours.read_text(encoding="utf-8")
    canonical = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    assert (
        text == canonical
    ), f"{revision.name}: {revision.ours} is not 2-space JSON with a final newline"


@by_revision
def test_every_ref_resolves(revision: Revision) -> None:
    """Every ``$ref`` points at a definition present in the same file."""
    defs = load_ours(revision)["$defs"]
    dangling = sorted(
        {
            ref
            for ref in iter_refs(defs)
            if not ref.startswith(DEFS_PREFIX) or ref[len(DEFS_PREFIX) :] not in defs
        }
    )
    assert not dangling, f"{revision.name}: unresolved $ref values: {dangling}"


def test_structure_keeps_keyword_named_properties() -> None:
    """Stripping annotations never removes properties that happen to share their
    names."""
    schema = {
        "description": "dropped",
        "$schema": DRAFT_2020_12,
        "properties": {
            "description": {"type": "string", "description": "dropped"},
            "$schema": {"type": "string"},
            "title": {"type": "string"},
        },
        "const": {"description": "kept, this is data"},
    }
    assert structure(schema) == {
        "properties": {
            "description": {"type": "string"},
            "$schema": {"type": "string"},
            "title": {"type": "string"},
        },
        "const": {"description": "kept, this is data"},
    }


def test_first_difference_reports_a_pointer() -> None:
    """The difference finder names the escaped pointer of the first mismatch."""
    ours = {"properties": {"a/b": {"type": "string"}, "z": {"type": "integer"}}}
    official = {"properties": {"a/b": {"type": "integer"}, "z": {"type": "integer"}}}
    assert first_difference(ours, official) == (
        "/properties/a~1b/type",
        "ours is 'string', official is 'integer'",
    )
    assert first_difference({"required": ["a"]}, {"required": ["a", "b"]}) == (
        "/required",
        "ours has 1 items, official has 2: ['a'] vs ['a', 'b']",
    )
    assert first_difference({"minimum": 1}, {"minimum": True}) is not None
