"""The probe of the checker's own options: the named tools against the server's
``tools/list`` and their input schemas (``tool_problems``)."""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from typing import Any, cast

from ..jsonrpc import json_object

__all__ = ["tool_problems"]

# -- the checker's options against the server's tools ---------------------------------


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def _plain_problem(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str:
    """Without ``jsonschema``: a required property missing, or a property whose value is
    not of its schema's primitive ``type`` ("" when neither)."""
    required = schema.get("required")
    for name in cast("list[object]", required if isinstance(required, list) else []):
        if isinstance(name, str) and name not in arguments:
            return f"{name!r} is a required property"
    properties = json_object(schema.get("properties")) or {}
    for name, value in arguments.items():
        kind = (json_object(properties.get(name)) or {}).get("type")
        kinds = cast("list[object]", kind if isinstance(kind, list) else [kind])
        known = [k for k in kinds if isinstance(k, str) and k in _JSON_TYPES]
        if not known:
            continue
        fits = any(
            isinstance(value, _JSON_TYPES[k])
            and not (isinstance(value, bool) and k in ("integer", "number"))
            for k in known
        )
        if not fits:
            return f"{name}: {value!r} is not of type {' or '.join(known)}"
    return ""


def _schema_problem(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str:
    """Why ``arguments`` do not fit the input ``schema`` ("" when they do), checked with
    ``jsonschema`` when it is importable, else as ``_plain_problem`` does; the answer
    says which."""
    try:
        jsonschema: Any = importlib.import_module("jsonschema")
    except ImportError:
        jsonschema = None
    if jsonschema is not None:
        try:
            validator = jsonschema.validators.validator_for(schema)(schema)
            best = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
        except Exception:  # a schema jsonschema cannot read: fall back
            best = None
        else:
            if best is None:
                return ""
            where = ".".join(str(p) for p in best.absolute_path)
            return (
                f"{where + ': ' if where else ''}{best.message} (checked with"
                " jsonschema)"
            )
    problem = _plain_problem(schema, arguments)
    if problem:
        why = "not installed" if jsonschema is None else "unable to read the schema"
        problem += (
            f" (jsonschema {why}: checked required properties and primitive types only)"
        )
    return problem


def tool_problems(
    tools: Mapping[str, tuple[str, dict[str, Any]]],
    listed: Mapping[str, Mapping[str, Any]],
) -> list[str]:
    """One line per named tool the server does not list, or whose arguments its
    ``inputSchema`` rejects, naming the option."""
    problems: list[str] = []
    for kind, (name, arguments) in tools.items():
        option = f"--tool {kind}={name}" + (
            f":{json.dumps(arguments)}" if arguments else ""
        )
        tool = listed.get(name)
        if tool is None:
            names = ", ".join(sorted(listed)) or "none"
            problems.append(
                f"{option}: the server lists no tool {name!r} (tools/list: {names})"
            )
            continue
        schema = json_object(tool.get("inputSchema"))
        problem = _schema_problem(schema, arguments) if schema is not None else ""
        if problem:
            problems.append(
                f"{option}: the arguments do not fit the tool's inputSchema: {problem}"
            )
    return problems
