"""Every wire example of the spec validates with the golden models and dumps back
unchanged.

The table names, for each example file, which part of it is checked and with which
model: ``message`` is the whole JSON-RPC message, ``result``/``error`` its result or
error object, and other keys pick a fragment. Unknown fields must survive the round
trip.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.conftest import shared_dir

pytestmark = pytest.mark.official_schemas  # the examples are in ../shared

CASES_2025 = {
    "E_1_1": ("capabilities", "ServerCapabilities"),
    "E_1_2": ("capabilities", "ClientCapabilities"),
    "E_1_3": ("result.tools[]", "Tool"),
    "E_1_4": ("task", "TaskMetadata"),
    "E_1_5": ("message", "CallToolRequest"),
    "E_1_6": ("result", "CreateTaskResult"),
    "E_1_7": ("message", "GetTaskRequest"),
    "E_1_8": ("result", "GetTaskResult"),
    "E_1_9": ("message", "GetTaskPayloadRequest"),
    "E_1_10": ("result", "GetTaskPayloadResult"),
    "E_1_11": ("message", "TaskStatusNotification"),
    "E_1_12": ("message", "ListTasksRequest"),
    "E_1_13": ("result", "ListTasksResult"),
    "E_1_14": ("message", "CancelTaskRequest"),
    "E_1_15": ("result", "CancelTaskResult"),
    "E_1_16": ("io.modelcontextprotocol/related-task", "RelatedTaskMetadata"),
    "E_1_17": ("error", "Error"),
    "E_1_18": ("error", "Error"),
    "E_1_19": ("error", "Error"),
    "E_1_20": ("error", "Error"),
    "E_1_21": ("result", "GetTaskResult"),
}
CASES_EXT = {
    "E_2_7": ("result", "CreateTaskResult"),
    "E_2_8": ("error", "Error"),
    "E_2_9": ("message", "TaskStatusNotification"),
    "E_2_11": ("result", "CreateTaskResult"),
    "E_2_12": ("message", "GetTaskRequest"),
    "E_2_13": ("result", "GetTaskResult"),
    "E_2_14": ("message", "GetTaskRequest"),
    "E_2_15": ("result", "GetTaskResult"),
    "E_2_16": ("message", "GetTaskRequest"),
    "E_2_17": ("result", "GetTaskResult"),
    "E_2_18": ("message", "UpdateTaskRequest"),
    "E_2_19": ("result", "UpdateTaskResult"),
    "E_2_20": ("message", "GetTaskRequest"),
    "E_2_21": ("result", "GetTaskResult"),
    "E_2_22": ("message", "GetTaskRequest"),
    "E_2_23": ("result", "GetTaskResult"),
    "E_2_24": ("error", "Error"),
    "E_2_25": ("error", "Error"),
    "E_2_26": ("result", "GetTaskResult"),
    "E_2_27": ("result", "GetTaskResult"),
    "E_2_28": ("inputRequests", "InputRequests"),
}
# Examples with no model in their revision's Tasks surface, and why.
NOT_MODELLED = {
    "E_2_6": (
        "tools/call is a core 2026-07-28 request; the extension schema has no"
        " definition for it"
    ),
}
PACKAGES = {
    "2025-11-25": ("mcp_tasks_2025_11_25", CASES_2025),
    "extension": ("mcp_tasks_ext", CASES_EXT),
}


def _example_files(folder: str) -> dict[str, Path]:
    files = sorted((shared_dir() / "examples" / folder).glob("E_*.json"))
    return {"_".join(f.name.split("_")[:3]).split("-")[0]: f for f in files}


def _pick(data: Any, where: str) -> list[Any]:
    if where == "message":
        return [data]
    node = data
    for part in where.removesuffix("[]").split(".") if where not in data else [where]:
        node = node[part]
    return list(node) if where.endswith("[]") else [node]


def _params() -> list[Any]:
    out = []
    for folder, (package, cases) in PACKAGES.items():
        for example, (where, model) in cases.items():
            out.append(
                pytest.param(
                    folder, package, example, where, model, id=f"{example}-{model}"
                )
            )
    return out


@pytest.mark.parametrize(("folder", "package", "example", "where", "model"), _params())
def test_example_round_trips(
    folder: str, package: str, example: str, where: str, model: str
) -> None:
    """Validate the example and dump it back: equal JSON, unknown fields kept."""
    path = _example_files(folder)[example]
    models = importlib.import_module(f"{package}.models")
    for fragment in _pick(json.loads(path.read_text(encoding="utf-8")), where):
        parsed = getattr(models, model).model_validate(fragment)
        assert parsed.to_wire() == fragment, f"{path.name}: round trip changed the JSON"
        assert json.dumps(parsed.to_wire(), sort_keys=True) == json.dumps(
            fragment, sort_keys=True
        )


@pytest.mark.parametrize("folder", sorted(PACKAGES))
def test_every_example_is_covered(folder: str) -> None:
    """No example file is silently left out of the round-trip table."""
    _, cases = PACKAGES[folder]
    assert sorted(_example_files(folder)) == sorted(
        [
            *cases,
            *(
                k
                for k in NOT_MODELLED
                if k.startswith("E_2" if folder == "extension" else "E_1")
            ),
        ]
    )


def test_unknown_fields_survive() -> None:
    """An open object keeps a field the schema does not know, on the wire and as an
    attribute."""
    from mcp_tasks_ext.models import GetTaskResult

    raw = {
        "resultType": "complete",
        "taskId": "t",
        "status": "working",
        "createdAt": "a",
        "lastUpdatedAt": "b",
        "ttlMs": None,
        "x-vendor": {"k": 1},
    }
    parsed = GetTaskResult.model_validate(raw)
    assert parsed.to_wire() == raw
    assert parsed.root.model_extra == {"x-vendor": {"k": 1}}


@pytest.mark.parametrize(
    "model", ["GetTaskResult", "DetailedTask", "TaskStatusNotificationParams"]
)
def test_wrong_status_is_one_error_at_the_status(model: str) -> None:
    """A status outside the union gives one error that points at ``status``, not one
    per branch."""
    models = importlib.import_module("mcp_tasks_ext.models")
    raw = {
        "resultType": "complete",
        "taskId": "t",
        "status": "paused",
        "createdAt": "a",
        "lastUpdatedAt": "b",
        "ttlMs": None,
    }
    with pytest.raises(ValidationError) as info:
        getattr(models, model).model_validate(raw)
    errors = info.value.errors()
    assert len(errors) == 1, errors
    assert errors[0]["type"] == "union_tag_invalid"
    assert "'status'" in errors[0]["msg"] and "'paused'" in errors[0]["msg"]


def test_notification_params_union_is_discriminated() -> None:
    """The params inside ``TaskStatusNotification`` are the discriminated variant
    itself."""
    from mcp_tasks_ext.models import TaskStatusNotification

    raw = {
        "jsonrpc": "2.0",
        "method": "notifications/tasks",
        "params": {
            "taskId": "t",
            "status": "failed",
            "createdAt": "a",
            "lastUpdatedAt": "b",
            "ttlMs": 5,
            "error": {"code": -1, "message": "m"},
        },
    }
    note = TaskStatusNotification.model_validate(raw)
    assert type(note.params).__name__.endswith("Failed")
    assert note.params.status == "failed"


def test_status_compares_to_plain_strings() -> None:
    """``task.status == "working"`` holds for the enum-typed status of both
    revisions."""
    from mcp_tasks_2025_11_25.models import Task
    from mcp_tasks_ext.models import CreateTaskResult

    task = Task.model_validate(
        {
            "taskId": "t",
            "status": "working",
            "createdAt": "a",
            "lastUpdatedAt": "b",
            "ttl": None,
        }
    )
    assert task.status == "working" and str(task.status) == "working"
    created = CreateTaskResult(
        task_id="t",
        status="input_required",  # type: ignore[arg-type]
        created_at="a",
        last_updated_at="b",
        ttl_ms=None,
    )
    assert created.status == "input_required"
    assert created.to_wire() == {
        "resultType": "task",
        "taskId": "t",
        "status": "input_required",
        "createdAt": "a",
        "lastUpdatedAt": "b",
        "ttlMs": None,
    }
