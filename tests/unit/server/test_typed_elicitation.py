"""Typed elicitation: ``elicitation_schema(Model)`` makes the spec's restricted form
schema from a pydantic model (every field one ``PrimitiveSchemaDefinition`` of each
revision's generated models), refuses a model outside it with a ``TypeError`` naming
the model and the field, and ``ElicitAnswer.of`` validates a client's answer into the
model (``ElicitContentError`` naming the field).

The end-to-end cases (a real server over HTTP, the generated client answering) are in
``tests/integration/server/test_typed_elicitation.py``.
"""

from __future__ import annotations

import datetime
import enum
from typing import Annotated, Any, Literal

import pytest
from pydantic import AnyUrl, BaseModel, ConfigDict, Field


class Size(str, enum.Enum):
    SMALL = "S"
    LARGE = "L"


class Order(BaseModel):
    """Every kind of form field the spec allows."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    name: str = Field(min_length=1, max_length=20, description="Who it is for")
    sugars: int = Field(default=0, ge=0, le=5)
    """How many sugars"""
    strength: float = 1.0
    milk: bool = False
    cup: Literal["mug", "glass"] = "mug"
    size: Size = Size.SMALL
    extras: list[Literal["cream", "cinnamon"]] = Field(
        default_factory=list, max_length=2
    )
    toppings: list[Size] = Field(default_factory=lambda: [Size.LARGE], min_length=1)
    when: datetime.date
    site: AnyUrl | None = None
    note: str | None = None
    label: Annotated[
        str,
        Field(
            json_schema_extra={
                "oneOf": [
                    {"const": "hot", "title": "Hot"},
                    {"const": "iced", "title": "Iced"},
                ]
            }
        ),
    ] = "hot"
    count: int = Field(default=1, gt=0, lt=10)
    code: str = Field(default="ab", pattern="^[a-z]+$")


class Sugars(BaseModel):
    sugars: int = Field(ge=0, le=5)
    sweetener: Literal["sugar", "honey"] = "sugar"


class Inner(BaseModel):
    x: int


class Nested(BaseModel):
    inner: Inner


class ListOfModels(BaseModel):
    items: list[Inner]


class Mapping_(BaseModel):
    table: dict[str, int]


class Mixed(BaseModel):
    value: int | str | None = None


class NumberChoices(BaseModel):
    level: Literal[1, 2, 3]


class FreeList(BaseModel):
    tags: list[str]


class Anything(BaseModel):
    value: Any


def _server_names() -> Any:
    import mcp_tasks.server as server

    return server


def test_schema_of_every_allowed_kind() -> None:
    server = _server_names()
    schema = server.elicitation_schema(Order)
    assert schema["type"] == "object"
    assert schema["required"] == ["name", "when"]
    fields = schema["properties"]
    assert fields["name"] == {
        "title": "Name",
        "description": "Who it is for",
        "type": "string",
        "minLength": 1,
        "maxLength": 20,
    }
    assert fields["sugars"] == {
        "title": "Sugars",
        "description": "How many sugars",
        "type": "integer",
        "minimum": 0,
        "maximum": 5,
        "default": 0,
    }
    assert fields["strength"] == {"title": "Strength", "type": "number", "default": 1.0}
    assert fields["milk"] == {"title": "Milk", "type": "boolean", "default": False}
    assert fields["cup"] == {
        "title": "Cup",
        "type": "string",
        "enum": ["mug", "glass"],
        "default": "mug",
    }
    assert fields["size"] == {"type": "string", "enum": ["S", "L"], "default": "S"}
    assert fields["extras"] == {
        "title": "Extras",
        "type": "array",
        "items": {"type": "string", "enum": ["cream", "cinnamon"]},
        "maxItems": 2,
    }
    assert fields["toppings"]["items"] == {"type": "string", "enum": ["S", "L"]}
    assert fields["toppings"]["minItems"] == 1
    assert fields["when"] == {"title": "When", "type": "string", "format": "date"}
    assert fields["site"] == {
        "title": "Site",
        "type": "string",
        "minLength": 1,
        "format": "uri",
    }
    assert fields["note"] == {"title": "Note", "type": "string"}
    assert fields["label"] == {
        "title": "Label",
        "type": "string",
        "oneOf": [
            {"const": "hot", "title": "Hot"},
            {"const": "iced", "title": "Iced"},
        ],
        "default": "hot",
    }
    # an integer's exclusive bounds become inclusive ones; a pattern is left out
    assert fields["count"] == {
        "title": "Count",
        "type": "integer",
        "minimum": 1,
        "maximum": 9,
        "default": 1,
    }
    assert fields["code"] == {"title": "Code", "type": "string", "default": "ab"}


@pytest.mark.parametrize(
    "package", ["mcp_tasks", "mcp_tasks_2025_11_25", "mcp_tasks_ext"]
)
def test_schema_is_a_requested_schema_of_every_revision(package: str) -> None:
    """The form validates as ``ElicitRequestFormParams.requestedSchema`` of each
    revision's generated models, field by field as a ``PrimitiveSchemaDefinition``
    (no field falls back to an unknown shape)."""
    import importlib

    server = importlib.import_module(f"{package}.server")
    protocol = importlib.import_module(f"{package}.protocol")
    schema = server.elicitation_schema(Order)
    for tables in protocol.REVISIONS.values():
        models = tables.models
        checked = models.ElicitRequestFormParamsRequestedSchema.model_validate(schema)
        for name, field in checked.properties.items():
            assert type(field).__name__ in {
                "StringSchema",
                "NumberSchema",
                "BooleanSchema",
                "UntitledSingleSelectEnumSchema",
                "TitledSingleSelectEnumSchema",
                "UntitledMultiSelectEnumSchema",
                "TitledMultiSelectEnumSchema",
            }, (name, type(field))
            assert field.model_dump(mode="json", by_alias=True, exclude_none=True) == (
                schema["properties"][name]
            ), name


@pytest.mark.parametrize(
    ("model", "field", "words"),
    [
        (Nested, "inner", "nested model"),
        (ListOfModels, "items", "multiple choice of strings"),
        (Mapping_, "table", "nested model or dict"),
        (Mixed, "value", "union of several types"),
        (NumberChoices, "level", "choices of an elicitation form field are strings"),
        (FreeList, "tags", "multiple choice of strings"),
        (Anything, "value", "any type"),
    ],
)
def test_model_outside_the_subset_is_a_type_error_naming_the_field(
    model: type[BaseModel], field: str, words: str
) -> None:
    server = _server_names()
    with pytest.raises(TypeError) as raised:
        server.elicitation_schema(model)
    assert f"{model.__name__}.{field}:" in str(raised.value)
    assert words in str(raised.value)


def test_not_a_model_is_a_type_error() -> None:
    server = _server_names()
    with pytest.raises(TypeError, match="pydantic model class"):
        server.elicitation_schema(dict)  # type: ignore[arg-type]


def test_schema_is_made_once_and_handed_out_as_a_copy() -> None:
    server = _server_names()
    first = server.elicitation_schema(Sugars)
    first["properties"].clear()
    assert server.elicitation_schema(Sugars)["properties"]["sugars"]["maximum"] == 5


def test_answer_accepted_is_the_model_declined_is_none() -> None:
    server = _server_names()
    accepted = server.ElicitAnswer.of(
        Sugars, {"action": "accept", "content": {"sugars": 2}}
    )
    assert accepted.action == "accept"
    assert accepted.content == Sugars(sugars=2, sweetener="sugar")
    for action in ("decline", "cancel"):
        answer = server.ElicitAnswer.of(Sugars, {"action": action})
        assert (answer.action, answer.content) == (action, None)
        assert answer.raw == {"action": action}


def test_accepted_content_the_model_refuses_names_the_field() -> None:
    server = _server_names()
    with pytest.raises(server.ElicitContentError) as raised:
        server.ElicitAnswer.of(Sugars, {"action": "accept", "content": {"sugars": 9}})
    error = raised.value
    assert isinstance(error, ValueError) and isinstance(error, server.ToolError)
    assert error.model is Sugars and error.fields == ("sugars",)
    assert "Sugars" in str(error) and "sugars" in str(error)
    with pytest.raises(server.ElicitContentError) as missing:
        server.ElicitAnswer.of(Sugars, {"action": "accept"})
    assert missing.value.fields == ("sugars",)
    with pytest.raises(ValueError, match="not an elicitation action"):
        server.ElicitAnswer.of(Sugars, {"action": "maybe"})
