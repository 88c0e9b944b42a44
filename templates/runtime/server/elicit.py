"""Typed form elicitation: the ``requestedSchema`` of a pydantic model
(``elicitation_schema``), and the client's answer validated into that model
(``ElicitAnswer``).

An elicitation form is a restricted JSON Schema (the spec's
``PrimitiveSchemaDefinition``, the same in every revision this runtime serves): a flat
object whose properties are each a string (``minLength``, ``maxLength``, ``format``:
``date``, ``date-time``, ``email``, ``uri``), a number or an integer (``minimum``,
``maximum``), a boolean, a single-select enum of strings (``enum``, or ``oneOf`` of
``{"const", "title"}`` for titled options) or a multi-select enum (an array of such
strings: ``items.enum`` or ``items.anyOf``, ``minItems``, ``maxItems``), with a
``title``, a ``description`` and a ``default``. A model field is one of those when its
type is ``str`` (or a type pydantic writes as a string: ``date``, ``datetime``,
``AnyUrl``, ``EmailStr``, ...), ``int``, ``float``, ``bool``, a ``Literal`` of strings
or a string ``Enum``, or a ``list`` of those literals or enums; ``X | None`` is ``X``,
not required. Anything else (a nested model, a list of models, a ``dict``, a union of
different types, a ``Literal`` of numbers) is a ``TypeError`` naming the model and the
field. Keywords the form cannot say (``pattern``, another ``format``, an exclusive bound
of a number, ``multipleOf``) are left out of the form, and still checked when the
answer is validated by the model.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, cast

from pydantic import BaseModel, ValidationError

from ..jsonrpc import validation_problems
from .tools import ToolError

__all__ = [
    "ElicitAction",
    "ElicitAnswer",
    "ElicitContentError",
    "elicitation_schema",
]

M = TypeVar("M", bound=BaseModel)
N = TypeVar("N", bound=BaseModel)

ElicitAction = Literal["accept", "decline", "cancel"]
"""What the user did: submitted the form, declined it, or dismissed it."""

_FORMATS = frozenset({"date", "date-time", "email", "uri"})
"""The string formats an elicitation form may ask for."""

_COMMON = ("title", "description")
"""Keywords every kind of form field may carry (``default`` is checked per kind)."""

_SCHEMAS: dict[type[BaseModel], dict[str, Any]] = {}
"""Model -> its elicitation schema (made once per model)."""


class ElicitContentError(ToolError, ValueError):
    """The content of an accepted elicitation does not validate against the model
    asked for; names the model and the fields.

    It is a ``ToolError``: unless the tool catches it, the call ends with an
    ``isError: true`` result saying so. The ``ValidationError`` is its
    ``__cause__``.
    """

    def __init__(self, model: type[BaseModel], error: ValidationError) -> None:
        self.model = model
        """The model the content failed."""
        problems = validation_problems(error, "(content)")
        self.fields = tuple(where for where, _ in problems)
        """The fields that failed (dotted paths), in the order of the errors."""
        said = "; ".join(f"{where}: {message}" for where, message in problems)
        super().__init__(f"The client's answer does not fit {model.__name__}: {said}")


@dataclass(frozen=True, slots=True)
class ElicitAnswer(Generic[M]):
    """The client's answer to a typed elicitation (``ctx.elicit(message, Model)``).

    ``content`` is the form's content validated into the model when ``action`` is
    ``"accept"``, else None; ``raw`` is the ``ElicitResult`` as the client sent it
    (wire names, ``_meta`` included).
    """

    action: ElicitAction
    content: M | None
    raw: dict[str, Any]

    @staticmethod
    def of(model: type[N], result: dict[str, Any]) -> ElicitAnswer[N]:
        """The ``ElicitResult`` ``result`` (wire form) as an answer typed by
        ``model``: for the answers of a preflight request
        (``ctx.input_responses[key]``) as for those ``ctx.elicit`` gets. Raises
        ``ElicitContentError`` when accepted content does not fit ``model`` and
        ``ValueError`` for an action that is none of the three."""
        action = result.get("action")
        if action not in ("accept", "decline", "cancel"):
            raise ValueError(f"not an elicitation action: {action!r}")
        if action != "accept":
            return ElicitAnswer(cast(ElicitAction, action), None, result)
        content: Any = result.get("content")
        try:
            value = model.model_validate(content if content is not None else {})
        except ValidationError as error:
            raise ElicitContentError(model, error) from error
        return ElicitAnswer("accept", value, result)


def elicitation_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The ``requestedSchema`` of an elicitation form asking for ``model``'s fields
    (see the module docstring for what may be asked).

    ``TypeError`` names the model and the first field the form cannot ask for. The
    schema is made once per model; call this at import or registration time to have
    a model checked before any tool runs (``ctx.elicit`` calls it when it first asks
    for the model). Returns a copy.
    """
    known = _SCHEMAS.get(model)
    if known is None:
        known = _SCHEMAS[model] = _make(model)
    return copy.deepcopy(known)


def _make(model: object) -> dict[str, Any]:
    """``elicitation_schema`` of ``model``, made."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(
            f"an elicitation asks for a pydantic model class, not {model!r}"
        )
    try:
        raw = model.model_json_schema()
    except Exception as error:  # an arbitrary type pydantic cannot write
        raise TypeError(
            f"{model.__name__} cannot be an elicitation form: {error}"
        ) from None
    defs = cast(dict[str, Any], raw.get("$defs", {}))
    by_alias = {(info.alias or name): name for name, info in model.model_fields.items()}
    properties: dict[str, Any] = {}
    for key, spec in cast(dict[str, Any], raw.get("properties", {})).items():
        where = f"{model.__name__}.{by_alias.get(key, key)}"
        properties[key] = _field(where, cast(dict[str, Any], spec), defs)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = raw.get("required")
    if required:
        schema["required"] = list(cast(list[str], required))
    return schema


def _resolve(spec: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with a local ``$ref`` replaced by its definition (the keywords next to
    the reference win; the definition's title, a class name, is dropped)."""
    ref = spec.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return spec
    target = dict(cast(dict[str, Any], defs.get(ref.removeprefix("#/$defs/"), {})))
    target.pop("title", None)
    siblings = {k: v for k, v in spec.items() if k != "$ref"}
    return {**_resolve(target, defs), **siblings}


def _field(where: str, spec: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """One model field's schema as a form field (``TypeError`` naming ``where``)."""
    spec = _resolve(spec, defs)
    branches = spec.get("anyOf")
    if isinstance(branches, list) and "type" not in spec:
        options = [
            _resolve(cast(dict[str, Any], branch), defs)
            for branch in cast(list[object], branches)
        ]
        kept = [o for o in options if o.get("type") != "null"]
        if len(kept) != 1:
            raise TypeError(
                f"{where}: a union of several types cannot be an elicitation form"
                " field (one primitive type, or that type | None)"
            )
        spec = {**kept[0], **{k: v for k, v in spec.items() if k != "anyOf"}}
        if spec.get("default", 0) is None:
            del spec["default"]
    kind = spec.get("type")
    out: dict[str, Any] = {k: spec[k] for k in _COMMON if isinstance(spec.get(k), str)}
    if kind == "string" or "enum" in spec or "const" in spec:
        out.update(_string(where, spec))
    elif kind in ("integer", "number"):
        out.update(_number(where, kind, spec))
    elif kind == "boolean":
        out["type"] = "boolean"
        if isinstance(spec.get("default"), bool):
            out["default"] = spec["default"]
    elif kind == "array":
        out.update(_multi(where, spec, defs))
    else:
        what = {"object": "a nested model or dict", None: "a value of any type"}.get(
            kind, f"type {kind!r}"
        )
        raise TypeError(
            f"{where}: {what} cannot be an elicitation form field (a string, number,"
            " integer, boolean, or a single or multiple choice of strings)"
        )
    return out


def _choices(where: str, spec: dict[str, Any]) -> list[str] | None:
    """The string values of an ``enum`` or ``const`` (None: neither)."""
    values: Any = spec.get("enum")
    if values is None and "const" in spec:
        values = [spec["const"]]
    if values is None:
        return None
    listed = cast(list[object], values)
    if not all(isinstance(v, str) for v in listed):
        raise TypeError(
            f"{where}: the choices of an elicitation form field are strings, not"
            f" {listed!r}"
        )
    return cast(list[str], listed)


def _titled(options: object) -> list[dict[str, str]] | None:
    """``[{"const": value, "title": label}, ...]`` when ``options`` is that."""
    if not isinstance(options, list) or not options:
        return None
    found: list[dict[str, str]] = []
    for option in cast(list[object], options):
        if not isinstance(option, dict):
            return None
        item = cast(dict[str, object], option)
        const, title = item.get("const"), item.get("title")
        if not isinstance(const, str) or not isinstance(title, str):
            return None
        found.append({"const": const, "title": title})
    return found


def _string(where: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A string, single-select enum or titled single-select enum field."""
    out: dict[str, Any] = {"type": "string"}
    titled = _titled(spec.get("oneOf"))
    choices = _choices(where, spec)
    if titled is not None:
        out["oneOf"] = titled
    elif choices is not None:
        out["enum"] = choices
    elif spec.get("type") != "string":
        raise TypeError(f"{where}: not a string field")
    else:
        for key in ("minLength", "maxLength"):
            if isinstance(spec.get(key), int):
                out[key] = spec[key]
        if spec.get("format") in _FORMATS:
            out["format"] = spec["format"]
    if isinstance(spec.get("default"), str):
        out["default"] = spec["default"]
    return out


def _number(where: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A number or integer field: inclusive bounds (an integer's exclusive bound
    becomes the inclusive one next to it)."""
    out: dict[str, Any] = {"type": kind}
    low, high = spec.get("minimum"), spec.get("maximum")
    if kind == "integer":
        above, below = spec.get("exclusiveMinimum"), spec.get("exclusiveMaximum")
        if isinstance(above, (int, float)):
            bound = math.floor(above) + 1
            low = bound if not isinstance(low, (int, float)) else max(low, bound)
        if isinstance(below, (int, float)):
            bound = math.ceil(below) - 1
            high = bound if not isinstance(high, (int, float)) else min(high, bound)
    if isinstance(low, (int, float)):
        out["minimum"] = low
    if isinstance(high, (int, float)):
        out["maximum"] = high
    default = spec.get("default")
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        out["default"] = default
    return out


def _multi(where: str, spec: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A multi-select field: an array of strings chosen from an ``enum`` (or titled
    ``anyOf`` options)."""
    items = _resolve(cast(dict[str, Any], spec.get("items", {})), defs)
    titled = _titled(items.get("anyOf")) or _titled(items.get("oneOf"))
    out: dict[str, Any] = {"type": "array"}
    if titled is not None:
        out["items"] = {"anyOf": titled}
    else:
        choices = _choices(where, items)
        if choices is None:
            raise TypeError(
                f"{where}: a list is an elicitation form field only as a multiple"
                " choice of strings (list[Literal[...]] or list[a string Enum])"
            )
        out["items"] = {"type": "string", "enum": choices}
    for key in ("minItems", "maxItems"):
        if isinstance(spec.get(key), int):
            out[key] = spec[key]
    default: Any = spec.get("default")
    if isinstance(default, list) and all(
        isinstance(v, str) for v in cast(list[object], default)
    ):
        out["default"] = list(cast(list[str], default))
    return out
