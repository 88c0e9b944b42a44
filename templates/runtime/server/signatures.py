"""Typed tools: a tool's ``inputSchema`` and ``outputSchema`` made from its function's
signature with pydantic, its arguments validated into Python values before it runs and
its result sent as ``structuredContent`` with a text block of the same JSON.

``tool_signature`` reads a function once, at registration: a dict tool (``async def
handler(ctx, arguments)``, the second parameter annotated ``dict[str, Any]`` or not
annotated) gets None and is served as it always was; any other signature is typed and
gets a ``ToolSignature``, or a ``TypeError`` naming the tool and the parameter when it
cannot be made a schema.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Annotated, Any, Union, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic import create_model as _create_model
from pydantic.fields import FieldInfo

from ..jsonrpc import INVALID_PARAMS, JsonRpcError, validation_problems
from .wire import ToolOutput, json_text, short

if TYPE_CHECKING:
    from .tools import ToolContext

__all__ = ["ToolSignature", "parameter_docs", "tool_signature"]

_EMPTY = inspect.Parameter.empty
_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params)\s*:\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?::.*)?$")
_DICT_NAMES = re.compile(
    r"^(typing\.)?(dict|Dict|Mapping|MutableMapping)"
    r"(\[\s*str\s*,\s*((typing\.)?Any|object)\s*\])?$"
)


def parameter_docs(doc: str | None) -> tuple[str, dict[str, str]]:
    """A docstring's text before its parameter section, and the description of each
    parameter it lists: Google style (``Args:`` then ``name (type): text``) or NumPy
    style (``Parameters`` underlined with dashes, then ``name : type`` and the text
    indented below)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    for index, line in enumerate(lines):
        numpy = (
            line.strip() == "Parameters"
            and index + 1 < len(lines)
            and set(lines[index + 1].strip()) == {"-"}
        )
        if numpy or _SECTION.match(line.strip()):
            summary = "\n".join(lines[:index]).strip()
            body = lines[index + 2 :] if numpy else lines[index + 1 :]
            return summary, _entries(body, numpy=numpy)
    return "\n".join(lines).strip(), {}


def _entries(body: list[str], *, numpy: bool) -> dict[str, str]:
    """The ``name -> description`` entries of a parameter section."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    entry_indent: int | None = None
    for position, line in enumerate(body):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        following = body[position + 1].strip() if position + 1 < len(body) else ""
        if numpy and following and set(following) == {"-"}:
            break  # the next section's header
        if entry_indent is None:
            entry_indent = indent
        if indent < entry_indent:
            break  # the section ended (Google style: "Returns:" and so on)
        if indent == entry_indent:
            match = (_NUMPY_ENTRY if numpy else _GOOGLE_ENTRY).match(line.strip())
            if match is None:
                break
            current = found.setdefault(match.group(1), [])
            if not numpy and match.group(2):
                current.append(match.group(2).strip())
        elif current is not None:
            current.append(line.strip())
    return {name: " ".join(words) for name, words in found.items() if words}


def _is_dict_annotation(annotation: object) -> bool:
    """Whether ``annotation`` is that of a dict tool's ``arguments``: not given,
    ``dict[str, Any]`` or ``dict[str, object]``, a bare ``dict``, or such a
    ``Mapping`` (as an object or as the text of a postponed annotation)."""
    if annotation is _EMPTY:
        return True
    if isinstance(annotation, str):
        return _DICT_NAMES.match(annotation.replace(" ", "")) is not None
    if any(annotation is kind for kind in (dict, Mapping, MutableMapping)):
        return True
    origin = get_origin(annotation)
    return origin in (dict, Mapping, MutableMapping) and get_args(annotation) in (
        (str, Any),
        (str, object),
    )


def _is_context(annotation: object) -> bool:
    """Whether a first parameter annotated so can be the tool's ``ToolContext``:
    unannotated, ``Any``, or a class or protocol named ``...Context``."""
    if annotation is _EMPTY or annotation is Any:
        return True
    if isinstance(annotation, str):
        return "Context" in annotation
    if get_origin(annotation) is Annotated:
        return _is_context(get_args(annotation)[0])
    return isinstance(annotation, type) and "Context" in annotation.__name__


_RAW_RESULTS: tuple[object, ...] = (
    _EMPTY,
    Any,
    object,
    str,
    dict,
    dict[str, Any],
    Union[str, dict[str, Any]],  # noqa: UP007 - ToolOutput
)
"""Return annotations of a typed tool served as today: text, or a complete
``CallToolResult`` object (``ToolOutput``), without an ``outputSchema``."""


def _reserved(name: str) -> bool:
    """Whether a parameter name cannot be a pydantic field name as it is."""
    return name.startswith("_") or hasattr(BaseModel, name)


def tool_signature(
    function: Callable[..., Awaitable[object]], tool_name: str
) -> ToolSignature | None:
    """The typed signature of tool ``tool_name``'s ``function``; None for a dict tool
    (``(ctx, arguments)``, ``arguments`` annotated ``dict[str, Any]`` or not at all).

    Raises ``TypeError`` naming the tool and the parameter for a signature that
    cannot be made a schema."""
    try:
        plain = inspect.signature(function)
    except (TypeError, ValueError) as error:
        raise TypeError(f"tool {tool_name!r}: no signature to read ({error})") from None
    parameters = list(plain.parameters.values())
    positional = (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )
    if (
        len(parameters) == 2
        and all(p.kind in positional for p in parameters)
        and _is_dict_annotation(parameters[1].annotation)
    ):
        return None
    return ToolSignature(function, tool_name)


class ToolSignature:
    """How a typed tool's arguments and result are read and written, built once at
    registration.

    ``arguments`` is the pydantic model of the parameters after the context (its JSON
    schema is the tool's ``input_schema``); ``output`` validates and dumps the result
    where the return annotation gives an ``output_schema`` (a pydantic model, a
    ``TypedDict``, a dataclass or ``dict[str, T]`` as an object; any other type
    wrapped as ``{"result": ...}``, ``wrapped``), None for a ``str``, ``ToolOutput`` or
    missing return annotation (the result is sent as the handler returns it).
    ``description`` is the function's docstring before its ``Args:`` section.
    """

    def __init__(
        self, function: Callable[..., Awaitable[object]], tool_name: str
    ) -> None:
        self.function = function
        self.tool_name = tool_name
        try:
            signature = inspect.signature(function, eval_str=True)
        except Exception as error:
            raise TypeError(
                f"tool {tool_name!r}: cannot resolve the annotations of its"
                f" signature ({type(error).__name__}: {error}); define the types they"
                " name where the function's module can see them"
            ) from None
        self.description, docs = parameter_docs(inspect.getdoc(function))
        parameters = list(signature.parameters.values())
        if not parameters or parameters[0].kind not in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            raise TypeError(
                f"tool {tool_name!r}: its first parameter must be the ToolContext"
                " (`async def tool(ctx: ToolContext, ...)`)"
            )
        if not _is_context(parameters[0].annotation):
            raise TypeError(
                f"tool {tool_name!r}: its first parameter {parameters[0].name!r} must"
                f" be the ToolContext, not {_shown(parameters[0].annotation)}"
            )
        fields: dict[str, Any] = {}
        self._positional: list[str] = []
        self._keyword: list[tuple[str, str]] = []
        for index, parameter in enumerate(parameters[1:], start=1):
            where = f"tool {tool_name!r}: parameter {parameter.name!r}"
            if parameter.kind in (
                inspect.Parameter.VAR_POSITIONAL,
                inspect.Parameter.VAR_KEYWORD,
            ):
                raise TypeError(f"{where}: *args and **kwargs cannot be a schema")
            if parameter.annotation is _EMPTY:
                raise TypeError(
                    f"{where} has no annotation (a typed tool annotates every"
                    " parameter after the context)"
                )
            field_name = (
                f"arg{index}_{parameter.name}"
                if _reserved(parameter.name)
                else parameter.name
            )
            annotation = parameter.annotation
            extra: dict[str, Any] = {}
            if field_name != parameter.name:
                extra["alias"] = parameter.name
            described = _has_description(annotation) or (
                isinstance(parameter.default, FieldInfo)
                and parameter.default.description is not None
            )
            if parameter.name in docs and not described:
                extra["description"] = docs[parameter.name]
            if extra:
                annotation = cast(Any, Annotated)[annotation, Field(**extra)]
            try:
                TypeAdapter(parameter.annotation).json_schema()
            except Exception as error:
                raise TypeError(
                    f"{where}: {_shown(parameter.annotation)} cannot be a JSON"
                    f" schema ({type(error).__name__}: {short(error)})"
                ) from None
            default = ... if parameter.default is _EMPTY else parameter.default
            fields[field_name] = (annotation, default)
            if parameter.kind == inspect.Parameter.POSITIONAL_ONLY:
                self._positional.append(field_name)
            else:
                self._keyword.append((field_name, parameter.name))
        model_name = re.sub(r"\W", "_", tool_name) + "Arguments"
        try:
            self.arguments: type[BaseModel] = _create_model(
                model_name,
                __config__=ConfigDict(protected_namespaces=()),
                **fields,
            )
            self.input_schema: dict[str, Any] = self.arguments.model_json_schema(
                by_alias=True
            )
        except Exception as error:
            raise TypeError(
                f"tool {tool_name!r}: its parameters cannot be a JSON schema"
                f" ({type(error).__name__}: {short(error)})"
            ) from None
        self.input_schema.pop("title", None)
        self.input_schema.setdefault("properties", {})
        self.output: TypeAdapter[Any] | None = None
        self.output_schema: dict[str, Any] | None = None
        self.wrapped = False
        returned = signature.return_annotation
        if any(returned == raw for raw in _RAW_RESULTS):
            return
        where = f"tool {tool_name!r}: return annotation {_shown(returned)}"
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(returned)
            schema = adapter.json_schema(by_alias=True)
            if schema.get("type") != "object":
                self.wrapped = True
                wrapper = _create_model(
                    re.sub(r"\W", "_", tool_name) + "Output", result=(returned, ...)
                )
                adapter = TypeAdapter(wrapper)
                schema = adapter.json_schema(by_alias=True)
        except Exception as error:
            raise TypeError(
                f"{where} cannot be a JSON schema ({type(error).__name__}:"
                f" {short(error)})"
            ) from None
        self.output = adapter
        self.output_schema = schema

    def parse(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The call's ``arguments`` validated into the tool's Python values (field ->
        value); ``-32602`` naming the field(s) that do not fit."""
        try:
            model = self.arguments.model_validate(arguments)
        except ValidationError as error:
            problems = [
                f"{where}: {message}"
                for where, message in validation_problems(error, "arguments")[:3]
            ]
            raise JsonRpcError(
                INVALID_PARAMS,
                short(
                    ValueError(
                        f"Invalid arguments for tool {self.tool_name!r}: "
                        + "; ".join(problems)
                    )
                ),
            ) from None
        return {name: getattr(model, name) for name in type(model).model_fields}

    async def run(self, ctx: ToolContext, values: dict[str, Any]) -> ToolOutput:
        """Call the function with the validated ``values`` (from ``parse``) and make
        its ``CallToolResult``: ``structuredContent`` with a text block of its JSON
        where there is an output schema, else what the function returned."""
        positional = [values[name] for name in self._positional]
        keyword = {param: values[name] for name, param in self._keyword}
        returned = await self.function(ctx, *positional, **keyword)
        if self.output is None:
            return cast(ToolOutput, returned)
        value = {"result": returned} if self.wrapped else returned
        structured = cast(
            dict[str, Any],
            self.output.dump_python(
                self.output.validate_python(value), mode="json", by_alias=True
            ),
        )
        text = json_text(structured["result"] if self.wrapped else structured)
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
            "isError": False,
        }


def _has_description(annotation: object) -> bool:
    """Whether an ``Annotated[..., Field(description=...)]`` annotation describes its
    parameter itself."""
    if get_origin(annotation) is not Annotated:
        return False
    return any(
        isinstance(meta, FieldInfo) and meta.description is not None
        for meta in cast(Any, annotation).__metadata__
    )


def _shown(annotation: object) -> str:
    """An annotation as a user wrote it, for messages."""
    if annotation is _EMPTY:
        return "no annotation"
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")
