"""The intermediate model: what the templates render, already decided in full.

Tree::

    Package
      models: Model...         one per generated class, in output order
        ObjectModel            fields: Field...
        EnumModel              members: EnumMember...
        RootModel              a union, list, map or scalar wrapper
      methods: Method...       the revision's Tasks methods and notifications
      error_codes: ErrorCode...
      files: OutputFile...     which files the package has and which template renders each

No I/O and no jinja here; every value is final (identifiers validated, annotations and
literals rendered as Python source, tuples sorted where order is not meaningful).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mcptasks_gen.errors import Location
from mcptasks_gen.naming import ClassName, PyIdent


@dataclass(frozen=True, slots=True, kw_only=True)
class Field:
    """One attribute of an object model."""

    name: PyIdent
    wire_name: str
    annotation: str
    required: bool
    default: str  # Python source of the default value ("None" for optional fields)
    constant: bool  # a required ``const``: defaulted to its value and always sent
    doc: str
    loc: Location

    @property
    def wire_literal(self) -> str:
        """The wire name as a Python string literal."""
        return repr(self.wire_name)

    @property
    def aliased(self) -> bool:
        """Whether the wire name differs from the attribute name."""
        return self.wire_name != self.name


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectModel:
    """A JSON object type: a pydantic model with fields."""

    kind: Literal["object"] = "object"
    name: ClassName
    doc: str
    fields: tuple[Field, ...]
    closed: bool  # unknown fields are rejected instead of kept
    loc: Location

    @property
    def constants(self) -> tuple[PyIdent, ...]:
        """Attributes holding required constants."""
        return tuple(f.name for f in self.fields if f.constant)


@dataclass(frozen=True, slots=True, kw_only=True)
class EnumMember:
    """One value of a string enumeration."""

    name: PyIdent
    value: str  # Python literal
    raw: str


@dataclass(frozen=True, slots=True, kw_only=True)
class EnumModel:
    """A closed set of strings: a ``str`` enum, so members compare equal to their values."""

    kind: Literal["enum"] = "enum"
    name: ClassName
    doc: str
    members: tuple[EnumMember, ...]
    loc: Location


@dataclass(frozen=True, slots=True, kw_only=True)
class RootModel:
    """Any other named type (union, list, map, scalar): a pydantic ``RootModel``."""

    kind: Literal["root"] = "root"
    name: ClassName
    doc: str
    annotation: str
    discriminator: str  # the property a union is discriminated on, "" when none
    loc: Location


Model = ObjectModel | EnumModel | RootModel


@dataclass(frozen=True, slots=True, kw_only=True)
class Method:
    """A JSON-RPC method or notification of the Tasks surface."""

    name: str  # wire name, e.g. "tasks/get"
    literal: str  # the wire name as a Python literal
    notification: bool
    message: ClassName  # the whole request/notification model
    params: str  # annotation of ``params``
    result: str  # annotation of the result ("None" for notifications)


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorCode:
    """A JSON-RPC error code the revision uses."""

    name: PyIdent
    code: int
    doc: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputFile:
    """A file of the generated package and the template that renders it ("" for none)."""

    path: str
    template: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Package:
    """Everything one generated package consists of."""

    name: PyIdent
    revision: str
    is_extension: bool
    title: str
    schema_name: str
    schema_sha256: str
    generator_version: str
    regenerate: str  # the command that regenerates this package
    typing_imports: tuple[str, ...]
    pydantic_imports: tuple[str, ...]
    models: tuple[Model, ...]
    rebuild: tuple[ClassName, ...]  # root models that refer to later classes, rebuilt at the end
    exports: tuple[str, ...]
    methods: tuple[Method, ...]
    error_codes: tuple[ErrorCode, ...]
    files: tuple[OutputFile, ...]
