"""What ``to_wire()`` runs: pydantic-core's serializer, no Python of ours or pydantic's.

``to_wire()`` is the serialisation every server reply and client request goes through,
and ``benchmarks/validate.py`` times it against datamodel-code-generator's
``model_dump``. Its output is pinned elsewhere
(``tests/unit/test_examples_roundtrip.py``,
``tests/integration/client/test_roundtrip_generated.py``); here, that it stays inside
pydantic-core: no ``model_dump`` frame, no ``_Dispatch`` picker (a value is serialised
by its own class), and the same output as the wrapper's own ``model_dump``. No timing
here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import pydantic
import pytest

from tests.unit.test_model_constants import RESULTS

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "generated" / "mcp_tasks_ext" / "models_ext.py"
URL = {
    "method": "elicitation/create",
    "params": {
        "mode": "url",
        "message": "Sign in",
        "url": "https://a.example/x",
        "elicitationId": "e1",
    },
}
TITLED = {
    "method": "elicitation/create",
    "params": {
        "message": "Size?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "size": {
                    "type": "string",
                    "oneOf": [
                        {"const": "s", "title": "Small"},
                        {"const": "l", "title": "Large"},
                    ],
                }
            },
        },
    },
}


@pytest.fixture(scope="module")
def ext() -> ModuleType:
    spec = importlib.util.spec_from_file_location("golden_wire_ext", GOLDEN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _results() -> list[dict[str, Any]]:
    extra = dict(RESULTS[1], inputRequests={"u": URL, "t": TITLED})
    return [*RESULTS, extra]


def _python_calls(run: Any) -> tuple[list[str], Any]:
    """Every Python function that runs while ``run()`` runs, as ``file:function``, and
    what it returned."""
    calls: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            calls.append(
                f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}"
            )

    sys.setprofile(profile)
    try:
        returned = run()
    finally:
        sys.setprofile(None)
    return calls, returned


def test_to_wire_runs_no_python_but_itself(ext: ModuleType) -> None:
    """A ``tasks/get`` result of every status, with form (plain, enum and titled-enum
    fields), URL, sampling and roots requests: ``to_wire()`` of the wrapper and of the
    variant it wraps call nothing in Python but ``to_wire`` itself, bar the standard
    library's ``Enum.value`` that pydantic-core reads for a sampling message's role and
    ``_json_kind``, which picks between one content block and a list of them (about 0.5%
    of an ``input_required`` result's serialisation, left as it is)."""
    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ext.GetTaskResult)
    for result in _results():
        wrapper = adapter.validate_python(result)
        for model in (wrapper, wrapper.root):
            model.to_wire()  # pydantic builds a class's serializer at its first use
            calls, wire = _python_calls(model.to_wire)
            allowed = ("models_ext.py:to_wire", "models_ext.py:_json_kind")
            others = [
                c for c in calls if c not in allowed and not c.startswith("enum.py:")
            ]
            assert calls[0] == "models_ext.py:to_wire"
            assert others == [], (result["status"], others)
            assert wire == result


def test_to_wire_is_the_wrappers_model_dump(ext: ModuleType) -> None:
    """Serialising the wrapped model with its own serializer gives what the wrapper's
    ``model_dump`` gives (the union it declares picks the same model), for model roots;
    other roots (a map of input requests) go through the wrapper."""
    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ext.GetTaskResult)
    for result in _results():
        wrapper = adapter.validate_python(result)
        dumped = wrapper.model_dump(mode="json", exclude_unset=True)
        assert wrapper.to_wire() == dumped == result
        assert list(wrapper.to_wire()) == list(
            dumped
        )  # the same keys in the same order
    requests = {"a": URL, "b": {"method": "roots/list"}}
    wrapped = ext.InputRequests.model_validate(requests)
    assert wrapped.to_wire() == requests


TIMES = {"createdAt": "2026-07-28T10:00:00Z", "lastUpdatedAt": "2026-07-28T10:00:05Z"}


def test_an_optional_field_left_at_none_is_not_sent(ext: ModuleType) -> None:
    """``None`` in an optional field whose schema does not admit null stands for
    absent: the field is left out even when ``None`` was set on purpose (null there is
    not valid on the wire), while a required field that admits null (``ttlMs``) is
    sent as null. Such a model keeps no record of what was set for ``to_wire()``."""
    working = ext.GetTaskResultWorking(
        task_id="t1",
        created_at=TIMES["createdAt"],
        last_updated_at=TIMES["lastUpdatedAt"],
        ttl_ms=None,
        status_message=None,
        poll_interval_ms=None,
        meta=None,
    )
    wire = {
        "resultType": "complete",
        "taskId": "t1",
        "status": "working",
        **TIMES,
        "ttlMs": None,
    }
    assert working.to_wire() == wire
    assert ext.GetTaskResult(working).to_wire() == wire
    assert working.model_dump(mode="json") == wire
    assert not ext.GetTaskResultWorking.wire_set_only


def test_a_null_the_schema_admits_is_sent_only_when_set(ext: ModuleType) -> None:
    """A JSON-RPC error's ``data`` is untyped, so null is one of its values: a failed
    result sends ``"data": null`` when it came with it or it was set, and no ``data``
    when it was left out. The error, and what holds it, send only the fields that were
    set."""
    failed = {
        "resultType": "complete",
        "status": "failed",
        "taskId": "t1",
        **TIMES,
        "ttlMs": 60000,
        "error": {"code": -32603, "message": "boom", "data": None},
    }
    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ext.GetTaskResult)
    assert adapter.validate_python(failed).to_wire() == failed
    absent = {**failed, "error": {"code": -32603, "message": "boom"}}
    assert adapter.validate_python(absent).to_wire() == absent
    error = ext.Error(code=-32603, message="boom", data=None)
    assert error.to_wire() == failed["error"]
    assert ext.Error(code=-32603, message="boom").to_wire() == absent["error"]
    assert ext.Error.wire_set_only and ext.GetTaskResultFailed.wire_set_only
    assert ext.GetTaskResult.wire_set_only  # a union holding a failed result


def test_a_schema_naming_null_keeps_a_null_set_at_any_depth(tmp_path: Path) -> None:
    """An optional property typed ``["string", "null"]`` sends null when it was set and
    nothing when it was left out, in its own model and in the models and root models
    that hold it; an optional field that does not admit null set to ``None`` is still
    left out there. A model holding none of them leaves out every ``None``."""
    from tests.unit.test_model_validation_keywords import _models_with

    models = _models_with(
        tmp_path,
        "nullable_pkg",
        {
            "NoteTask": {
                "type": "object",
                "properties": {
                    "note": {"type": ["string", "null"]},
                    "size": {"type": "integer"},
                },
            },
            "NotesTask": {"type": "array", "items": {"$ref": "#/$defs/NoteTask"}},
            "HolderTask": {
                "type": "object",
                "properties": {
                    "notes": {"$ref": "#/$defs/NotesTask"},
                    "label": {"type": "string"},
                },
            },
            "PlainTask": {
                "type": "object",
                "properties": {"label": {"type": "string"}},
            },
        },
    )
    assert [
        getattr(models, name).wire_set_only
        for name in ("NoteTask", "NotesTask", "HolderTask", "PlainTask")
    ] == [True, True, True, False]
    notes = [{"note": None}, {}, {"note": "n", "size": 2}]
    assert models.NoteTask.model_validate({"note": None}).to_wire() == {"note": None}
    assert models.NoteTask.model_validate({}).to_wire() == {}
    assert models.NoteTask(size=None).to_wire() == {}
    assert models.NotesTask.model_validate(notes).to_wire() == notes
    holder = {"notes": notes, "label": "x"}
    assert models.HolderTask.model_validate(holder).to_wire() == holder
    assert models.HolderTask(notes=None, label=None).to_wire() == {}
    assert models.PlainTask(label=None).to_wire() == {}
