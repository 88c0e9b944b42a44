"""A field the runtime reads or writes, renamed by a schema, stops generation with exit
2.

Renaming one property everywhere in a schema (the key under ``properties`` and in
``required``; the embedded schemas, which have the official ones' structure) must
either give a package that still works or stop generation, naming the field and its
JSON pointer. For the fields below the hand-written runtime sends or
reads the wire name, or an attribute of the generated model: before the revision
profiles listed them, each rename generated a package that failed its own ``mypy
--strict`` (``code``, ``data``, ``error``, ``result``, ``inputRequests``, ``task``,
``progressToken``) or silently sent and read the old name (``inputResponses``,
``resultType``, ``taskIds``, ``tasks``, ``nextCursor``, ``cursor``, ``taskSupport``,
``requestedSchema``).

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
from tests.spec_edits import add_status

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = {
    "ext": ROOT / "schema" / "ext-2026-07-28" / "schema.json",
    "2025": ROOT / "schema" / "2025-11-25" / "schema.json",
}
"""The embedded schemas: the official ones' structure (``test_schema_drift``)."""

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
            node["properties"] = {
                (new if k == old else k): v for k, v in properties.items()
            }
        required = node.get("required")
        if isinstance(required, list):
            node["required"] = [new if r == old else r for r in required]
        for value in node.values():
            _rename(value, old, new)
    elif isinstance(node, list):
        for value in node:
            _rename(value, old, new)


def _edited(
    tmp_path: Path, raw: dict[str, Any], statuses: tuple[tuple[str, str], ...] = ()
) -> Target:
    """A target for the edited schema ``raw`` (written into ``tmp_path``)."""
    schema = tmp_path / "edited.schema.json"
    schema.write_text(json.dumps(raw))
    return Target(
        schema=schema,
        schema_label="edited.schema.json",
        output=tmp_path,
        package="p",
        revision=None,
        templates=None,
        regenerate="mcptasks-gen generate",
        statuses=statuses,
    )


def _target(tmp_path: Path, revision: str, old: str) -> Target:
    raw = json.loads(SCHEMAS[revision].read_text())
    _rename(raw, old, old + "Renamed")
    return _edited(tmp_path, raw)


@pytest.mark.parametrize(
    ("revision", "field", "model"), RENAMES, ids=[f"{r}-{f}" for r, f, _ in RENAMES]
)
def test_renaming_a_field_the_runtime_uses_stops_generation(
    tmp_path: Path, revision: str, field: str, model: str
) -> None:
    with pytest.raises(GenError) as raised:
        pipeline.package(_target(tmp_path, revision, field))
    message = str(raised.value)
    assert f'the runtime needs field "{field}" of "{model}"' in message, message
    assert f'(the schema has "{field}Renamed"' in message, message
    assert f"/properties/{field}:" in message, message


def test_renaming_a_field_the_runtime_does_not_use_still_generates(
    tmp_path: Path,
) -> None:
    for revision in SCHEMAS:
        bundle = pipeline.package(_target(tmp_path, revision, "title"))
        assert bundle.revisions


def _edit(node: Any, field: str, change: str) -> None:
    """Retype ``field``, or make it required or optional, in every object schema
    inside ``node``."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict) and field in properties:
            required = node.get("required", [])
            if change == "boolean":
                properties[field] = {"type": "boolean"}
            elif change == "required" and field not in required:
                node["required"] = [*required, field]
            elif change == "optional":
                node["required"] = [r for r in required if r != field]
        for value in node.values():
            _edit(value, field, change)
    elif isinstance(node, list):
        for value in node:
            _edit(value, field, change)


CHANGES = [
    # A changed type: the runtime would pass or read values of the old one.
    ("ext", "ttlMs", "boolean", 'field "ttlMs" of "Task" to be int, not bool'),
    (
        "ext",
        "inputRequests",
        "boolean",
        'field "inputRequests" of "InputRequiredTask" to be an object map, not bool',
    ),
    ("2025", "taskId", "boolean", 'field "taskId" of "Task" to be str, not bool'),
    # A field the runtime reads unconditionally, made optional.
    (
        "ext",
        "error",
        "optional",
        'reads field "error" of "FailedTask" as always present',
    ),
    (
        "ext",
        "createdAt",
        "optional",
        'reads field "createdAt" of "Task" as always present',
    ),
    ("2025", "code", "optional", 'reads field "code" of "Error" as always present'),
    # A field the runtime leaves out when it has no value, made required.
    (
        "ext",
        "statusMessage",
        "required",
        'leaves out field "statusMessage" of "Task" when it has no value',
    ),
    (
        "2025",
        "statusMessage",
        "required",
        'leaves out field "statusMessage" of "Task" when it has no value',
    ),
]


@pytest.mark.parametrize(
    ("revision", "field", "change", "expected"),
    CHANGES,
    ids=[f"{r}-{f}-{c}" for r, f, c, _ in CHANGES],
)
def test_changing_a_field_the_runtime_uses_stops_generation(
    tmp_path: Path, revision: str, field: str, change: str, expected: str
) -> None:
    raw = json.loads(SCHEMAS[revision].read_text())
    _edit(raw, field, change)
    target = _edited(tmp_path, raw)
    with pytest.raises(GenError) as raised:
        pipeline.package(target)
    assert expected in str(raised.value), str(raised.value)
    assert f"/properties/{field}:" in str(raised.value)


@pytest.mark.parametrize("revision", list(SCHEMAS))
def test_a_new_required_task_field_stops_generation(
    tmp_path: Path, revision: str
) -> None:
    """The runtime builds every task message; it has no value for a required field it
    does not know (an optional one it carries: ``protocol.TaskFields``)."""
    raw = json.loads(SCHEMAS[revision].read_text())
    task = raw["$defs"]["Task"]
    task["properties"]["progress"] = {"type": "number"}
    task["required"] = [*task.get("required", []), "progress"]
    target = _edited(tmp_path, raw)
    with pytest.raises(
        GenError, match='cannot fill required field "progress" of "Task"'
    ):
        pipeline.package(target)


def test_a_field_the_runtime_only_writes_may_become_optional(tmp_path: Path) -> None:
    raw = json.loads(SCHEMAS["ext"].read_text())
    _edit(raw["$defs"]["ElicitRequestFormParams"], "message", "optional")
    target = _edited(tmp_path, raw)
    assert pipeline.package(target).revisions


@pytest.mark.parametrize(
    ("status", "klass", "like", "generates"),
    [
        ("auth_required", "input", "input_required", True),
        ("expired", "terminal", "cancelled", True),
        ("expired", "terminal", "failed", False),
    ],
)
def test_a_classified_status_variant_is_checked_like_its_class(
    tmp_path: Path, status: str, klass: str, like: str, generates: bool
) -> None:
    """An ``input`` status's variant carries ``inputRequests`` (the runtime fills it
    for every input status); a ``terminal`` one copied from ``failed`` requires an
    ``error`` that the runtime gives only to ``failed``."""
    raw = add_status(json.loads(SCHEMAS["ext"].read_text()), status, like)
    target = _edited(tmp_path, raw, ((status, klass),))
    if generates:
        assert pipeline.package(target).revisions
    else:
        with pytest.raises(
            GenError,
            match=f'cannot fill required field "error" of "{status.title()}Task"',
        ):
            pipeline.package(target)


def test_an_http_status_for_an_error_code_the_revision_lacks_stops_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The profile gives HTTP statuses to error codes by name; a name the revision's
    ``ErrorCode`` does not have (a typo, a code a revision dropped) is refused."""
    from dataclasses import replace

    from mcptasks_gen import revisions

    raw = json.loads(SCHEMAS["2025"].read_text())
    record = revisions.CORE_2025_11_25
    wrong = replace(
        record, profile=replace(record.profile, http_statuses={"HEADER_MISMATCH": 400})
    )
    monkeypatch.setitem(revisions.REGISTRY, wrong.id, wrong)
    with pytest.raises(GenError) as raised:
        pipeline.package(_edited(tmp_path, raw))
    assert 'gives error code "HEADER_MISMATCH" an HTTP status' in str(raised.value)


def test_the_profiles_limit_code_is_the_runtimes() -> None:
    """``LIMIT_EXCEEDED`` in ``Profile.http_statuses`` means the runtime's default
    limit code."""
    from mcp_tasks.server_core import LIMIT_EXCEEDED
    from mcptasks_gen import profile

    assert profile.LIMIT_EXCEEDED == LIMIT_EXCEEDED
