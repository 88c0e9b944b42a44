"""The checks of a client's answer to an input request (``elicitation/create``,
``sampling/createMessage``, ...): its result model and, for an accepted form, the
``requestedSchema``; and the client capability each input request needs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import ModuleType
from typing import Any, cast

from ..jsonrpc import INVALID_PARAMS, JsonRpcError
from ..revision import INPUT_CAPABILITIES, INPUT_RESULTS, InputMethod
from .wire import short

_FORM_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
}
"""Python types of the primitive JSON types an elicitation form may ask for."""


def check_answer(
    method: str,
    params: Mapping[str, Any],
    answer: Any,
    models: ModuleType,
    inputs: Mapping[str, InputMethod] | None = None,
) -> dict[str, Any]:
    """The client's ``answer`` to the input request ``method(params)``, checked.

    It must validate against the result model of ``method`` in ``inputs`` (the
    revision's input table), else the one of ``models`` that ``INPUT_RESULTS`` names
    (``ElicitResult``, ...), and
    an accepted form elicitation's ``content`` must match the ``requestedSchema``:
    required fields present, each field of the primitive type (string, number,
    integer, boolean, or a list of strings) and value (``enum``, ``oneOf`` consts,
    bounds) asked for. Raises ``JsonRpcError`` (``-32602``) saying what is wrong.
    """
    what = f"The client's answer to {method}"
    if not isinstance(answer, dict):
        raise JsonRpcError(INVALID_PARAMS, f"{what} must be an object")
    checked = cast(dict[str, Any], answer)
    spec = inputs.get(method) if inputs is not None else None
    model: Any = (
        spec.result
        if spec is not None
        else getattr(models, INPUT_RESULTS.get(method, ""), None)
    )
    if model is not None:
        try:
            model.model_validate(checked)
        except ValueError as error:
            raise JsonRpcError(
                INVALID_PARAMS, f"{what} is invalid: {short(error)}"
            ) from None
    schema = params.get("requestedSchema")
    if (
        method == "elicitation/create"
        and checked.get("action") == "accept"
        and isinstance(schema, dict)
    ):
        _check_form(what, cast(dict[str, Any], schema), checked.get("content"))
    return checked


def _check_form(what: str, schema: dict[str, Any], content: Any) -> None:
    """Check an accepted elicitation's ``content`` against its ``requestedSchema``."""
    if content is None:
        content = {}
    if not isinstance(content, dict):
        raise JsonRpcError(INVALID_PARAMS, f"{what}: content must be an object")
    values = cast(dict[str, Any], content)
    raw_properties = schema.get("properties")
    properties = (
        cast(dict[str, Any], raw_properties) if isinstance(raw_properties, dict) else {}
    )
    required = schema.get("required")
    for name in cast("list[object]", required) if isinstance(required, list) else []:
        if name not in values:
            raise JsonRpcError(
                INVALID_PARAMS, f"{what}: required field {name!r} is missing"
            )
    for name, value in values.items():
        spec = properties.get(name)
        if isinstance(spec, dict):
            problem = _form_value_problem(cast(dict[str, Any], spec), value)
            if problem is not None:
                raise JsonRpcError(INVALID_PARAMS, f"{what}: field {name!r} {problem}")


def _allowed_values(spec: Mapping[str, Any]) -> list[Any] | None:
    """The values an ``enum`` or a ``oneOf``/``anyOf`` of consts allows (None: any)."""
    enum = spec.get("enum")
    if isinstance(enum, list):
        return list(cast("list[object]", enum))
    for key in ("oneOf", "anyOf"):
        options = spec.get(key)
        if isinstance(options, list):
            return [
                cast(dict[str, Any], option).get("const")
                for option in cast("list[object]", options)
                if isinstance(option, dict)
            ]
    return None


def _form_value_problem(spec: dict[str, Any], value: object) -> str | None:
    """What is wrong with one form value, or None."""
    kind = spec.get("type")
    if kind == "array":
        if not isinstance(value, list) or not all(
            isinstance(item, str) for item in cast("list[object]", value)
        ):
            return "must be a list of strings"
        items = spec.get("items")
        allowed = (
            _allowed_values(cast(dict[str, Any], items))
            if isinstance(items, dict)
            else None
        )
        chosen = cast("list[object]", value)
        if allowed is not None and any(item not in allowed for item in chosen):
            return "has a value that is not one of the choices"
        return None
    types = _FORM_TYPES.get(kind) if isinstance(kind, str) else None
    if types is None:
        return None  # a type the spec does not allow in forms: not checked here
    if not isinstance(value, types) or (kind != "boolean" and isinstance(value, bool)):
        return f"must be a {kind}"
    if isinstance(value, float) and not math.isfinite(value):
        return "must be a finite number"
    allowed = _allowed_values(spec)
    if allowed is not None and value not in allowed:
        return "is not one of the choices"
    if isinstance(value, str):
        low_key, high_key, measure = "minLength", "maxLength", float(len(value))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        low_key, high_key, measure = "minimum", "maximum", float(value)
    else:
        return None
    low, high = spec.get(low_key), spec.get(high_key)
    if isinstance(low, (int, float)) and measure < low:
        return f"is below {low_key} {low}"
    if isinstance(high, (int, float)) and measure > high:
        return f"is above {high_key} {high}"
    return None


def missing_capability(method: str, declared: Mapping[str, Any]) -> str | None:
    """The client capability an input request needs and ``declared`` lacks, if any."""
    capability = INPUT_CAPABILITIES.get(method)
    return capability if capability is not None and capability not in declared else None
