"""The extension identifier read from a schema's title and description, and the hint
for a method the runtime needs that the schema renamed (in process, no files)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from mcptasks_gen import pipeline
from mcptasks_gen.config import Target
from mcptasks_gen.errors import GenError, Location
from mcptasks_gen.extension import check_form, extension_id, named

ROOT = Path(__file__).resolve().parents[2]
EXT = json.loads((ROOT / "schema" / "ext-2026-07-28" / "schema.json").read_text())
HERE = Location(file="s.json", pointer="")


def test_the_embedded_schema_names_its_identifier_in_title_and_description() -> None:
    assert named(EXT) == {"io.modelcontextprotocol/tasks": "title"}


def test_the_official_wording_names_it_once() -> None:
    raw = {
        "title": "MCP Tasks Extension",
        "description": "JSON Schema for MCP Tasks extension protocol messages."
        " Extension Identifier: io.modelcontextprotocol/tasks",
    }
    assert extension_id(raw, "", HERE) == "io.modelcontextprotocol/tasks"


@pytest.mark.official_schemas
def test_the_official_schema_names_the_identifier(shared: Path) -> None:
    official = json.loads(
        (shared / "schemas" / "ext-tasks-draft.schema.json").read_text()
    )
    assert extension_id(official, "", HERE) == "io.modelcontextprotocol/tasks"


def test_urls_paths_numbers_and_methods_are_not_identifiers() -> None:
    text = (
        "See https://modelcontextprotocol.io/ext-tasks/schema.json, the methods"
        " tasks/get and notifications/tasks, version 1.2/3, and com.example/tasks."
    )
    assert named({"description": text}) == {"com.example/tasks": "description"}


@pytest.mark.parametrize(
    ("description", "configured", "message"),
    [
        (
            "identifier a.b/x and c.d/y",
            "",
            "name 2 extension identifiers (a.b/x, c.d/y)",
        ),
        ("no identifier here", "", "name no extension identifier"),
        ("identifier a.b/x and c.d/y", "e.f/z", '"e.f/z" is not one the schema'),
    ],
)
def test_several_none_or_another_are_refused_at_the_description(
    description: str, configured: str, message: str
) -> None:
    with pytest.raises(GenError) as raised:
        extension_id({"description": description}, configured, HERE)
    assert message in raised.value.message
    assert raised.value.loc == HERE.child("description")


def test_a_configured_identifier_decides_where_the_schema_names_several_or_none() -> (
    None
):
    assert extension_id({"description": "a.b/x, c.d/y"}, "c.d/y", HERE) == "c.d/y"
    assert extension_id({"description": "none"}, "e.f/z", HERE) == "e.f/z"
    with pytest.raises(GenError, match="invalid extension identifier"):
        check_form("tasks", HERE)


def _refusal(tmp_path: Path, raw: dict[str, Any]) -> GenError:
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps(raw))
    target = Target(
        schema=schema,
        schema_label="s.json",
        output=tmp_path,
        package="p",
        revision=None,
        templates=None,
        regenerate="",
    )
    with pytest.raises(GenError) as raised:
        pipeline.package(target)
    return raised.value


def test_a_renamed_definition_and_method_is_found_by_namespace_and_params(
    tmp_path: Path,
) -> None:
    raw = copy.deepcopy(EXT)
    raw["$defs"]["TaskStatusRequest"] = raw["$defs"].pop("GetTaskRequest")
    text = json.dumps(raw).replace(
        '"#/$defs/GetTaskRequest"', '"#/$defs/TaskStatusRequest"'
    )
    text = text.replace('"const": "tasks/get"', '"const": "tasks/status"')
    error = _refusal(tmp_path, json.loads(text))
    assert str(error.loc) == "s.json#/$defs/TaskStatusRequest/properties/method"
    assert '"TaskStatusRequest" has method "tasks/status", likely its new name' in (
        error.message
    )


def test_a_definition_that_is_gone_is_pointed_at(tmp_path: Path) -> None:
    raw = copy.deepcopy(EXT)
    del raw["$defs"]["CancelTaskRequest"]
    text = json.dumps(raw).replace('{"$ref": "#/$defs/CancelTaskRequest"}, ', "")
    text = text.replace(', {"$ref": "#/$defs/CancelTaskRequest"}', "")
    error = _refusal(tmp_path, json.loads(text))
    assert str(error.loc) == "s.json#/$defs/CancelTaskRequest", error
    assert 'its definition "CancelTaskRequest" is gone' in error.message
