"""A field the runtime reads or writes, renamed by a schema, stops generation with exit 2.

Renaming one property everywhere in an official schema (the key under ``properties`` and in
``required``) must either give a package that still works or stop generation, naming the field
and its JSON pointer. For the fields below the hand-written runtime sends or reads the wire
name, or an attribute of the generated model: before the revision profiles listed them, each
rename generated a package that failed its own ``mypy --strict`` (``code``, ``data``,
``error``, ``result``, ``inputRequests``, ``task``, ``progressToken``) or silently sent and
read the old name (``inputResponses``, ``resultType``, ``taskIds``, ``tasks``, ``nextCursor``,
``cursor``, ``taskSupport``, ``requestedSchema``).

A rename of a field the runtime does not use (``title`` here) still generates.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcptasks_gen import pipeline
from mcptasks_gen.config import Target
from mcptasks_gen.errors import GenError

SCHEMAS = {"ext": "ext-tasks-draft.schema.json", "2025": "mcp-2025-11-25.schema.json"}

RENAMES = [
    ("ext", "code", "Error"),
    ("ext", "data", "Error"),
    ("ext", "error", "FailedTask"),
    ("ext", "result", "CompletedTask"),
    ("ext", "inputRequests", "InputRequiredTask"),
    ("ext", "inputResponses", "UpdateTaskRequestParams"),
    ("ext", "resultType", "Result"),
    ("ext", "taskIds", "TaskSubscriptionAcknowledgedNotifications"),
    ("ext", "requestedSchema", "ElicitRequestFormParams"),
    ("2025", "task", "CallToolRequestParams"),
    ("2025", "progressToken", "CallToolRequestParamsMeta"),
    ("2025", "tasks", "ListTasksResult"),
    ("2025", "nextCursor", "ListTasksResult"),
    ("2025", "cursor", "PaginatedRequestParams"),
    ("2025", "taskSupport", "ToolExecution"),
    ("2025", "code", "Error"),
]


def _rename(node: Any, old: str, new: str) -> None:
    """Rename property ``old`` to ``new`` in every object schema inside ``node``."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict) and old in properties:
            node["properties"] = {(new if k == old else k): v for k, v in properties.items()}
        required = node.get("required")
        if isinstance(required, list):
            node["required"] = [new if r == old else r for r in required]
        for value in node.values():
            _rename(value, old, new)
    elif isinstance(node, list):
        for value in node:
            _rename(value, old, new)


def _target(tmp_path: Path, shared: Path, revision: str, old: str) -> Target:
    raw = json.loads((shared / "schemas" / SCHEMAS[revision]).read_text())
    _rename(raw, old, old + "Renamed")
    schema = tmp_path / "edited.schema.json"
    schema.write_text(json.dumps(raw))
    return Target(schema=schema, schema_label="edited.schema.json", output=tmp_path, package="p", revision=None, templates=None, regenerate="mcptasks-gen generate")


@pytest.mark.parametrize(("revision", "field", "model"), RENAMES, ids=[f"{r}-{f}" for r, f, _ in RENAMES])
def test_renaming_a_field_the_runtime_uses_stops_generation(tmp_path: Path, shared: Path, revision: str, field: str, model: str) -> None:
    with pytest.raises(GenError) as raised:
        pipeline.package(_target(tmp_path, shared, revision, field))
    message = str(raised.value)
    assert f'the runtime needs field "{field}" of "{model}"' in message, message
    assert f'(the schema has "{field}Renamed"' in message, message
    assert f"/properties/{field}:" in message, message


def test_renaming_a_field_the_runtime_does_not_use_still_generates(tmp_path: Path, shared: Path) -> None:
    for revision in SCHEMAS:
        bundle = pipeline.package(_target(tmp_path, shared, revision, "title"))
        assert bundle.revisions
