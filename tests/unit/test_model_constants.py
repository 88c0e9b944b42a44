"""Required constants on the wire, and what validation pays for them (issue 12).

``to_wire()`` sends the fields that were set, and a required constant (``jsonrpc``,
``method``, ``type``, a variant's ``status``) must go out even when the values a model
was built from left it out. The models count constants as set where a model is built
from Python values and in ``to_wire()``; inside other models, only the classes used
where the data may leave one out pay a Python hook per instance. Wire data validated
through a union that is discriminated on the constant runs no hook. No timing here:
``benchmarks/validate.py`` shows the speed.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import partial
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import pydantic
import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = {
    "2025": ROOT / "generated" / "mcp_tasks_2025_11_25" / "models_2025.py",
    "ext": ROOT / "generated" / "mcp_tasks_ext" / "models_ext.py",
}

TASK = {
    "taskId": "t1",
    "createdAt": "2026-07-28T10:00:00Z",
    "lastUpdatedAt": "2026-07-28T10:00:05Z",
    "ttlMs": None,
}
FORM = {
    "method": "elicitation/create",
    "params": {
        "message": "Your details?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "minLength": 1},
                "age": {"type": "integer", "minimum": 0},
                "ok": {"type": "boolean", "default": False},
                "colour": {"type": "string", "enum": ["red", "blue"]},
                "tags": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["a", "b"]},
                },
            },
            "required": ["name"],
        },
    },
}
SAMPLING = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
        "maxTokens": 10,
    },
}
RESULTS = [
    {
        "resultType": "complete",
        "status": "working",
        **TASK,
        "_meta": {
            "io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"},
            "x/y": 1,
        },
    },
    {
        "resultType": "complete",
        "status": "input_required",
        **TASK,
        "inputRequests": {"a": FORM, "b": SAMPLING, "c": {"method": "roots/list"}},
    },
    {
        "resultType": "complete",
        "status": "completed",
        **TASK,
        "result": {"content": [{"type": "text", "text": "done"}]},
    },
    {
        "resultType": "complete",
        "status": "failed",
        **TASK,
        "error": {"code": -32603, "message": "crashed"},
    },
    {"resultType": "complete", "status": "cancelled", **TASK, "statusMessage": "stop"},
]


def _load(key: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"golden_constants_{key}", GOLDEN[key]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ext() -> ModuleType:
    return _load("ext")


def _python_calls(module: ModuleType, run: Any) -> list[str]:
    """The functions of ``module`` that run while ``run()`` runs (``Class.method``
    for methods)."""
    calls: list[str] = []
    path = module.__file__

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename == path:
            owner = frame.f_locals.get("self")
            calls.append(
                frame.f_code.co_name
                if owner is None
                else f"{type(owner).__name__}.{frame.f_code.co_name}"
            )

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return calls


# constants that are no discriminator: a form schema's "type": "object", a
# multi-select's items' "type"
_HOOKED = {
    "ElicitRequestFormParamsRequestedSchema.model_post_init",
    "UntitledMultiSelectEnumSchemaItems.model_post_init",
}


def test_wire_results_run_no_per_instance_hook(ext: ModuleType) -> None:
    """``tasks/get`` results of every status, with input requests, validate without a
    call to ``model_post_init`` from a class whose constants are discriminators
    (``status``, ``method``, a form field's ``type``) or at the top of
    ``GetTaskResult``, which counts them itself: only the form schema and a
    multi-select's items run theirs."""
    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ext.GetTaskResult)
    for result in RESULTS:
        raw = pydantic.TypeAdapter(Any).dump_json(result)
        for run in (
            partial(adapter.validate_python, result),
            partial(adapter.validate_json, raw),
        ):
            hooks = {
                c for c in _python_calls(ext, run) if c.endswith("model_post_init")
            }
            assert hooks <= _HOOKED, (result["status"], hooks)
            assert (hooks == _HOOKED) is (result["status"] == "input_required")
        assert adapter.validate_python(result).to_wire() == result


def test_hooks_only_where_a_constant_may_be_missing(ext: ModuleType) -> None:
    """The form schema's ``type: "object"`` is no discriminator: it keeps its hook."""
    assert "model_post_init" in vars(ext.ElicitRequestFormParamsRequestedSchema)
    for cls in (
        ext.GetTaskResultWorking,
        ext.GetTaskResultInputRequired,
        ext.ElicitRequest,
        ext.CreateMessageRequest,
        ext.TextContent,
        ext.StringSchema,
    ):
        assert cls.wire_constants, cls
        assert "model_post_init" not in vars(cls), cls


_WITHOUT = {k: v for k, v in RESULTS[0].items() if k not in ("resultType", "status")}


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_every_way_of_building_a_model_sends_its_constants(key: str) -> None:
    models = _load(key)
    assert models.TextContent(text="hi").to_wire() == {"type": "text", "text": "hi"}
    assert models.TextContent.model_validate({"text": "hi"}).model_fields_set == {
        "type",
        "text",
    }
    assert models.TextContent.model_validate_json('{"text": "hi"}').to_wire() == {
        "type": "text",
        "text": "hi",
    }
    assert models.TextContent.model_validate_strings({"text": "hi"}).to_wire() == {
        "type": "text",
        "text": "hi",
    }
    assert models.TextContent.model_construct(text="hi").to_wire() == {
        "type": "text",
        "text": "hi",
    }
    assert pydantic.TypeAdapter(models.TextContent).validate_python(
        {"text": "hi"}
    ).to_wire() == {"type": "text", "text": "hi"}
    # nested: a form schema without its "type": "object", inside a model built from
    # values
    params = models.ElicitRequestFormParams(
        message="m", requested_schema={"properties": {}}
    )
    assert params.to_wire() == {
        "message": "m",
        "requestedSchema": {"type": "object", "properties": {}},
    }
    # a request built by the constructor keeps its method when it is nested afterwards
    ids = (
        {"id": 1} if key == "2025" else {}
    )  # a JSON-RPC request there, an input request here
    request = models.ElicitRequest(params=params, **ids)
    assert request.to_wire() == {
        "method": "elicitation/create",
        "params": params.to_wire(),
        **ids,
        **({"jsonrpc": "2.0"} if ids else {}),
    }
    assert request.to_wire()["method"] == "elicitation/create"
    if key == "ext":
        # the runtime builds a status variant from values without its constants
        variant = models.GetTaskResultWorking.model_validate(_WITHOUT)
        assert variant.to_wire() == RESULTS[0]
        result = models.GetTaskResultInputRequired(
            **{**TASK, "input_requests": {"r": request}}
        )
        assert result.to_wire()["inputRequests"]["r"]["method"] == "elicitation/create"
        assert result.to_wire()["status"] == "input_required"
        assert result.to_wire()["resultType"] == "complete"
        # a root model counts the constants of the model it wraps
        wrapped = models.GetTaskResult.model_validate({**_WITHOUT, "status": "working"})
        assert wrapped.to_wire() == RESULTS[0]
        assert (
            pydantic.TypeAdapter(models.GetTaskResult)
            .validate_python({**_WITHOUT, "status": "working"})
            .to_wire()
            == RESULTS[0]
        )


def test_validation_does_not_go_through_the_python_constructor(ext: ModuleType) -> None:
    """``McpModel.__init__`` counts constants for Python callers only: pydantic
    validates nested models without calling it (no ``custom_init``)."""
    assert ext.McpModel.__pydantic_custom_init__ is False
    assert ext.GetTaskResultWorking.__pydantic_custom_init__ is False
    calls = _python_calls(ext, lambda: ext.GetTaskResult.model_validate(RESULTS[1]))
    assert "__init__" not in calls


# -- normalize: which classes count their constants while validating -------------------


def _hooked(tmp_path: Path, defs: dict[str, Any]) -> dict[str, bool]:
    import json

    from mcptasks_gen import ir
    from mcptasks_gen.config import Target
    from mcptasks_gen.detect import detect, scan
    from mcptasks_gen.extract import extract
    from mcptasks_gen.load import load
    from mcptasks_gen.normalize import normalize

    path = tmp_path / "schema.json"
    request = {
        "type": "object",
        "properties": {
            "method": {"const": "tasks/update", "type": "string"},
            "id": {"type": "integer"},
            "params": {"$ref": "#/$defs/TaskMessage"},
        },
        "required": ["method", "id", "params"],
    }
    path.write_text(
        json.dumps(
            {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "description": "Extension Identifier: io.modelcontextprotocol/tasks",
                "$defs": {"UpdateTaskRequest": request, **defs},
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
    package = normalize(extract(found, detect(found)), target, ())
    return {
        m.name: m.counts_constants
        for m in package.models
        if isinstance(m, ir.ObjectModel) and m.constants
    }


def _block(kind: str, version: bool = True) -> dict[str, Any]:
    """An object pinned by ``type``, and by a ``v`` that every such object shares if
    ``version``."""
    pins = {
        "type": {"type": "string", "const": kind},
        **({"v": {"type": "string", "const": "1"}} if version else {}),
    }
    return {"type": "object", "properties": pins, "required": list(pins)}


def test_constants_count_where_they_may_be_missing(tmp_path: Path) -> None:
    """A class only ever picked by its constant needs no hook for it, one used as a
    plain field does; a second constant that is no discriminator needs one too, unless
    the class is at the top of a root model nothing else uses (its ``model_validate``
    counts them).
    """
    defs = {
        "TextTaskContent": _block("text"),
        "ImageTaskContent": _block("image"),
        "AudioTaskContent": _block("audio"),
        "TaskContent": {
            "anyOf": [
                {"$ref": "#/$defs/TextTaskContent"},
                {"$ref": "#/$defs/ImageTaskContent"},
            ]
        },
        "TaskMessage": {
            "type": "object",
            "properties": {
                "content": {"$ref": "#/$defs/TaskContent"},
                "audio": {"$ref": "#/$defs/AudioTaskContent"},
            },
            "required": ["content"],
        },
        "TopTaskResult": {"anyOf": [_block("x"), _block("y")]},
    }
    hooked = _hooked(tmp_path, defs)
    # "v" is no discriminator: text and image content may lack it inside a message
    assert (
        hooked["TextTaskContent"]
        and hooked["ImageTaskContent"]
        and hooked["AudioTaskContent"]
    )
    assert hooked["TopTaskResultX"] is False and hooked["TopTaskResultY"] is False
    used = {
        **defs,
        "TaskMessage": {
            **defs["TaskMessage"],
            "properties": {
                **defs["TaskMessage"]["properties"],
                "r": {"$ref": "#/$defs/TopTaskResult"},
            },
        },
    }
    hooked = _hooked(tmp_path, used)
    assert (
        hooked["TopTaskResultX"] and hooked["TopTaskResultY"]
    )  # now nested: "v" may be missing
    one = {
        **defs,
        "TextTaskContent": _block("text", False),
        "ImageTaskContent": _block("image", False),
        "AudioTaskContent": _block("audio", False),
    }
    hooked = _hooked(tmp_path, one)
    assert hooked["TextTaskContent"] is False and hooked["ImageTaskContent"] is False
    assert hooked["AudioTaskContent"]  # a plain field: its "type" may be missing
