"""What a tool call gives back on every client: :class:`ToolResult`.

Every revision's client and the dual client return the same class from ``call_tool``,
``resume`` and a task handle's ``result()``: the wire object (``raw``), its content
blocks, whether the tool failed (``is_error``), its ``structuredContent`` (validated
into the caller's type when one is given: ``result_type=Receipt`` makes a
``ToolResult[Receipt]``) and the revision's generated ``CallToolResult`` model
(``model``, built on first use where the schema defines one)::

    result = await client.call_tool("brew", {"size": "M"}, result_type=Receipt)
    receipt: Receipt = result.structured
    print(result.text, result.is_error)
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, Generic, TypeAlias, cast, overload

from pydantic import BaseModel, TypeAdapter, ValidationError
from typing_extensions import TypeVar

from ..jsonrpc import validation_problems
from .errors import InvalidResponse

__all__ = ["InvalidStructuredContent", "Structured", "ToolResult"]

Structured: TypeAlias = dict[str, Any] | None
"""The type of ``ToolResult.structured`` when no ``result_type`` is given: the
``structuredContent`` object as received, or ``None`` when the result has none."""

S = TypeVar("S", default=dict[str, Any] | None)
"""The type of ``ToolResult.structured``: a caller's ``result_type``, else
:data:`Structured`."""
T = TypeVar("T")


class InvalidStructuredContent(InvalidResponse):
    """A tool result's ``structuredContent`` does not validate as the ``result_type``
    the caller asked for (or is missing from a result that is not an error).

    ``errors`` are pydantic's error details (each names its field under ``loc``);
    ``fields`` the dotted names of the failing fields; ``raw`` the wire result.
    """

    def __init__(
        self,
        message: str,
        *,
        raw: Mapping[str, Any],
        errors: list[dict[str, Any]] | None = None,
    ) -> None:
        """Record the message, the wire result and pydantic's error details."""
        super().__init__(message)
        self.raw = dict(raw)
        self.errors = list(errors or [])
        self.fields = [
            ".".join(str(part) for part in error.get("loc", ()))
            for error in self.errors
        ]


def _type_name(result_type: object) -> str:
    return str(getattr(result_type, "__name__", result_type))


class ToolResult(Generic[S]):
    """A tool's result, the same on every client.

    * ``raw``: the ``CallToolResult`` JSON object as received (what ``call_tool``
      returned before this class, on the extension and dual clients).
    * ``content``: its content blocks as JSON objects (``{"type": "text", "text":
      ...}``; plain dicts on every revision, so the same code type-checks against
      both; ``model.content`` has the typed blocks where the schema defines them).
    * ``is_error``: ``isError`` (``False`` when absent): the tool itself failed.
    * ``structured``: the ``structuredContent``: an instance of the call's
      ``result_type`` when one was given, else the object as received (``None``
      when absent).
    * ``text``: the text of its ``text`` blocks, joined with newlines.
    * ``model``: the revision's generated ``CallToolResult`` (``None`` where the
      schema defines none, as in the Tasks extension's), built on first use.
    """

    __slots__ = ("raw", "structured", "model_type", "_model")

    raw: dict[str, Any]
    structured: S
    model_type: type[BaseModel] | None

    def __init__(
        self,
        raw: Mapping[str, Any],
        structured: S,
        *,
        model_type: type[BaseModel] | None = None,
    ) -> None:
        """Wrap the wire result ``raw`` with its (already validated) ``structured``
        content; use :meth:`from_wire` to build one. ``model_type``: the revision's
        ``CallToolResult`` model, if it has one."""
        self.raw = dict(raw)
        self.structured = structured
        self.model_type = model_type
        self._model: BaseModel | None = None

    @overload
    @classmethod
    def from_wire(
        cls,
        raw: Mapping[str, Any],
        result_type: None = None,
        *,
        model_type: type[BaseModel] | None = None,
        tool: str | None = None,
    ) -> ToolResult[dict[str, Any] | None]: ...

    @overload
    @classmethod
    def from_wire(
        cls,
        raw: Mapping[str, Any],
        result_type: type[T],
        *,
        model_type: type[BaseModel] | None = None,
        tool: str | None = None,
    ) -> ToolResult[T]: ...

    @classmethod
    def from_wire(
        cls,
        raw: Mapping[str, Any],
        result_type: type[Any] | None = None,
        *,
        model_type: type[BaseModel] | None = None,
        tool: str | None = None,
    ) -> ToolResult[Any]:
        """A result from its wire object; ``structuredContent`` validated into
        ``result_type`` when given (a pydantic model, dataclass or any type pydantic
        validates), else kept as received.

        Raises :class:`InvalidStructuredContent` (naming ``tool`` and the failing
        fields) when it does not validate, or when a result that is not an error has
        none.
        """
        data = dict(raw)
        value = data.get("structuredContent")
        wire = cast("dict[str, Any] | None", value if isinstance(value, dict) else None)
        if result_type is None:
            return ToolResult(data, wire, model_type=model_type)
        where = f"tool {tool!r}" if tool else "the tool"
        name = _type_name(result_type)
        if wire is None:
            if data.get("isError") is True:
                return ToolResult(data, None, model_type=model_type)
            raise InvalidStructuredContent(
                f"{where} returned no structuredContent to validate as {name}",
                raw=data,
            )
        try:
            if inspect.isclass(result_type) and issubclass(result_type, BaseModel):
                typed: Any = result_type.model_validate(wire)
            else:
                typed = TypeAdapter(result_type).validate_python(wire)
        except ValidationError as error:
            details = cast("list[dict[str, Any]]", error.errors(include_url=False))
            problems = "; ".join(
                f"{path}: {message}"
                for path, message in validation_problems(error, "(root)")
            )
            raise InvalidStructuredContent(
                f"{where} returned structuredContent that is not a valid {name}:"
                f" {problems}",
                raw=data,
                errors=details,
            ) from None
        return ToolResult(data, typed, model_type=model_type)

    @overload
    def validated(
        self, result_type: None = None, *, tool: str | None = None
    ) -> ToolResult[dict[str, Any] | None]: ...

    @overload
    def validated(
        self, result_type: type[T], *, tool: str | None = None
    ) -> ToolResult[T]: ...

    def validated(
        self, result_type: type[Any] | None = None, *, tool: str | None = None
    ) -> ToolResult[Any]:
        """The same result with its ``structuredContent`` validated into
        ``result_type`` (see :meth:`from_wire`)."""
        typed = ToolResult.from_wire(
            self.raw, result_type, model_type=self.model_type, tool=tool
        )
        typed._model = self._model
        return typed

    @property
    def content(self) -> list[dict[str, Any]]:
        """The content blocks (JSON objects); anything else in the list is left
        out."""
        blocks = self.raw.get("content")
        if not isinstance(blocks, list):
            return []
        items = cast("list[object]", blocks)
        return [cast("dict[str, Any]", b) for b in items if isinstance(b, dict)]

    @property
    def is_error(self) -> bool:
        """Whether the tool reported a failure (``isError: true``)."""
        return self.raw.get("isError") is True

    @property
    def text(self) -> str:
        """The text of the ``text`` content blocks, joined with newlines."""
        return "\n".join(
            str(block.get("text", ""))
            for block in self.content
            if block.get("type") == "text"
        )

    @property
    def meta(self) -> dict[str, Any] | None:
        """The result's ``_meta``, if any."""
        meta = self.raw.get("_meta")
        return cast("dict[str, Any]", meta) if isinstance(meta, dict) else None

    @property
    def model(self) -> BaseModel | None:
        """The revision's generated ``CallToolResult`` validated from :attr:`raw`
        (``None`` where the schema defines none); built on first use.

        Raises pydantic's ``ValidationError`` when the result does not fit it."""
        if self._model is None and self.model_type is not None:
            self._model = self.model_type.model_validate(self.raw)
        return self._model

    def __repr__(self) -> str:
        return (
            f"ToolResult(is_error={self.is_error!r}, text={self.text!r},"
            f" structured={self.structured!r})"
        )
