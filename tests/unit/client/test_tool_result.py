"""``ToolResult``: the one tool result type of every client (2025-11-25, the
extension, the dual client), its wire object, typed ``structured`` content and the
revision's model."""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import pytest
from pydantic import BaseModel

from mcp_tasks.client import InvalidStructuredContent, ToolResult
from mcp_tasks.models_2025 import CallToolResult

WIRE: dict[str, Any] = {
    "content": [
        {"type": "text", "text": "Paris: 21.5 C"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "text", "text": "sunny"},
    ],
    "structuredContent": {"city": "Paris", "celsius": 21.5},
    "isError": False,
}


class Reading(BaseModel):
    city: str
    celsius: float


@dataclasses.dataclass
class ReadingRecord:
    city: str
    celsius: float


def test_from_wire_keeps_the_wire_object_and_reads_its_fields() -> None:
    result = ToolResult.from_wire(WIRE)
    assert result.raw == WIRE and result.raw is not WIRE
    assert result.content == WIRE["content"]
    assert result.is_error is False
    assert result.structured == {"city": "Paris", "celsius": 21.5}
    assert result.text == "Paris: 21.5 C\nsunny"
    assert result.meta is None
    assert result.model is None  # no model type given


def test_absent_fields_read_as_empty() -> None:
    result = ToolResult.from_wire({"content": [], "_meta": {"k": 1}})
    assert result.structured is None and result.is_error is False
    assert result.text == "" and result.content == [] and result.meta == {"k": 1}
    odd = ToolResult.from_wire({"content": "not a list", "isError": "yes"})
    assert odd.content == [] and odd.is_error is False


def test_result_type_validates_the_structured_content() -> None:
    typed = ToolResult.from_wire(WIRE, Reading, tool="weather")
    assert typed.structured == Reading(city="Paris", celsius=21.5)
    assert typed.raw == WIRE
    record = ToolResult.from_wire(WIRE, ReadingRecord).structured
    assert record == ReadingRecord(city="Paris", celsius=21.5)
    again = ToolResult.from_wire(WIRE).validated(Reading)
    assert isinstance(again.structured, Reading)


def test_bad_structured_content_names_the_tool_and_the_field() -> None:
    bad = {**WIRE, "structuredContent": {"city": "Paris", "celsius": "mild"}}
    with pytest.raises(InvalidStructuredContent) as caught:
        ToolResult.from_wire(bad, Reading, tool="weather")
    error = caught.value
    assert "'weather'" in str(error) and "celsius" in str(error)
    assert "Reading" in str(error)
    assert error.fields == ["celsius"] and error.raw == bad
    assert error.errors[0]["loc"] == ("celsius",)


def test_missing_structured_content_is_an_error_unless_the_tool_failed() -> None:
    text_only = {"content": [{"type": "text", "text": "hi"}], "isError": False}
    with pytest.raises(InvalidStructuredContent, match="no structuredContent"):
        ToolResult.from_wire(text_only, Reading)
    failed = {"content": [{"type": "text", "text": "boom"}], "isError": True}
    result = ToolResult.from_wire(failed, Reading)
    assert result.is_error is True and result.structured is None


def test_model_is_the_revision_call_tool_result_built_on_first_use() -> None:
    result = ToolResult.from_wire(WIRE, model_type=CallToolResult)
    model = result.model
    assert isinstance(model, CallToolResult)
    assert model.structured_content == WIRE["structuredContent"]
    assert result.model is model  # built once
    assert result.validated(Reading).model is model


@pytest.mark.parametrize(
    "package", ["mcp_tasks", "mcp_tasks_2025_11_25", "mcp_tasks_ext"]
)
def test_every_package_exports_one_tool_result_from_its_client(package: str) -> None:
    client = importlib.import_module(f"{package}.client")
    runtime = importlib.import_module(f"{package}.client.tool_result")
    assert client.ToolResult is runtime.ToolResult
    assert client.InvalidStructuredContent is runtime.InvalidStructuredContent
    assert issubclass(client.InvalidStructuredContent, client.InvalidResponse)
    assert "ToolResult" in client.__all__
