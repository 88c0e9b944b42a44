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
