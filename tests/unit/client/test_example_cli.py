"""``examples/client.py`` without a server or a process: the answers typed at its
prompts are checked against the property schema of the question.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support import example_cli as interop

ROOT = Path(__file__).resolve().parents[3]


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_client", interop.EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCHEMA_CASES: list[tuple[dict[str, Any], bool, str, Any]] = [
    ({"type": "boolean"}, True, "Yes", True),
    ({"type": "boolean"}, True, "no", False),
    ({"type": "boolean"}, True, "perhaps", ValueError),
    ({"type": "boolean", "default": True}, True, "", True),
    ({"type": "integer", "minimum": 1, "maximum": 5}, True, "3", 3),
    ({"type": "integer", "minimum": 1, "maximum": 5}, True, "7", ValueError),
    ({"type": "integer"}, True, "2.5", ValueError),
    ({"type": "number", "exclusiveMinimum": 0}, True, "0", ValueError),
    ({"type": "number"}, True, "nan", ValueError),
    ({"type": "number"}, True, "0.25", 0.25),
    ({"type": "string", "minLength": 2}, True, "a", ValueError),
    ({"type": "string", "maxLength": 3}, True, "abcd", ValueError),
    ({"type": "string"}, False, "", "MISSING"),
    ({"type": "string"}, True, "", ValueError),
    (
        {"type": "string", "format": "email"},
        True,
        "luca@example.org",
        "luca@example.org",
    ),
    ({"type": "string", "format": "email"}, True, "luca", ValueError),
    ({"type": "string", "format": "uri"}, True, "example.org", ValueError),
    ({"type": "string", "format": "date"}, True, "2026-02-30", ValueError),
    (
        {"type": "string", "format": "date-time"},
        True,
        "2026-01-02T03:04:05Z",
        "2026-01-02T03:04:05Z",
    ),
    ({"type": "string", "enum": ["red", "green"]}, True, "green", "green"),
    ({"type": "string", "enum": ["red", "green"]}, True, "blue", ValueError),
    (
        {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
        True,
        "b",
        ValueError,
    ),
    (
        {
            "type": "array",
            "items": {"type": "string", "enum": ["x", "y"]},
            "maxItems": 1,
        },
        True,
        "x",
        ["x"],
    ),
    (
        {
            "type": "array",
            "items": {"type": "string", "enum": ["x", "y"]},
            "maxItems": 1,
        },
        True,
        "x, y",
        ValueError,
    ),
    (
        {"type": "array", "items": {"anyOf": [{"const": "x"}, {"const": "y"}]}},
        True,
        "z",
        ValueError,
    ),
]


@pytest.mark.parametrize(("schema", "required", "text", "expected"), SCHEMA_CASES)
def test_answers_are_checked_against_the_property_schema(
    schema: dict[str, Any], required: bool, text: str, expected: Any
) -> None:
    example = load_example()
    if expected is ValueError:
        with pytest.raises(ValueError):
            example.parse_answer(text, schema, required)
        return
    value = example.parse_answer(text, schema, required)
    if expected == "MISSING":
        assert value is example.MISSING
    else:
        assert value == expected and type(value) is type(expected)
