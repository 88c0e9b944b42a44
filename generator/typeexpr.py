"""Type expressions as data: what a generated annotation is, not how it is spelled.

``normalize`` builds these trees; ``profile``, ``apidiff`` and the constant pass of
``normalize`` compare and walk them; text is made only by ``render()``, which the
templates call (the ``py`` filter of ``render.environment``) and the diff report uses
for its sentences. No stage reads an annotation back from Python source.

Nodes (all frozen, hashable, compared by structure):

- ``Name``: a class, a builtin or a ``typing`` name (``str``, ``Any``, ``None``,
  ``Task``), optionally through a module (``models_ext.Task``);
- ``Union``: ``A | B | ...``, flat (no member is itself a ``Union``), in order;
- ``Generic``: ``list[T]``, ``dict[str, T]``;
- ``Literal``: ``Literal["a", 1, True]``; values compare by type and value, so
  ``Literal[1]`` and ``Literal[True]`` differ as their source does;
- ``Annotated``: a type with pydantic metadata (``Constraints``, ``Discriminated``,
  ``Tag``, ``PickedBy``, ``Dispatched``);
- ``Forward``: a type written as a string (a forward reference in a base class).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from mcptasks_gen.naming import py_str

LiteralValue = str | int | bool


@dataclass(frozen=True, slots=True)
class Name:
    """A name: ``str``, ``Any``, ``None``, ``Task``, or ``module.Task``."""

    name: str
    module: str = ""

    def render(self) -> str:
        """The name as Python source."""
        return f"{self.module}.{self.name}" if self.module else self.name


@dataclass(frozen=True, slots=True)
class Union:
    """``A | B | ...``: two or more members, none of them a ``Union``."""

    items: tuple[Type, ...]

    def render(self) -> str:
        return " | ".join(item.render() for item in self.items)


@dataclass(frozen=True, slots=True)
class Generic:
    """A builtin generic with its arguments: ``list[T]``, ``dict[str, T]``."""

    base: str
    args: tuple[Type, ...]

    def render(self) -> str:
        return f"{self.base}[{', '.join(arg.render() for arg in self.args)}]"


@dataclass(frozen=True, slots=True, eq=False)
class Literal:
    """``Literal[v, ...]``: strings, integers and booleans."""

    values: tuple[LiteralValue, ...]

    def _key(self) -> tuple[tuple[type, LiteralValue], ...]:
        return tuple((type(v), v) for v in self.values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Literal) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("Literal", self._key()))

    def render(self) -> str:
        return f"Literal[{', '.join(py_str(v) for v in self.values)}]"


@dataclass(frozen=True, slots=True)
class Constraints:
    """``Field(ge=0, pattern='...')``: validation keywords, values as ``repr`` writes
    them."""

    items: tuple[tuple[str, int | float | str], ...]

    def render(self) -> str:
        return f"Field({', '.join(f'{k}={v!r}' for k, v in self.items)})"


@dataclass(frozen=True, slots=True)
class Discriminated:
    """``Field(discriminator="prop")``: a union tagged by pydantic on an attribute."""

    attribute: str

    def render(self) -> str:
        return f'Field(discriminator="{self.attribute}")'


@dataclass(frozen=True, slots=True)
class Tag:
    """``Tag("object")``: a member of a union picked by a callable."""

    value: str

    def render(self) -> str:
        return f"Tag({py_str(self.value)})"


@dataclass(frozen=True, slots=True)
class PickedBy:
    """``Discriminator(function)``: a union whose ``Tag`` members a function picks."""

    function: str

    def render(self) -> str:
        return f"Discriminator({self.function})"


@dataclass(frozen=True, slots=True)
class Dispatched:
    """A module-level ``_Dispatch`` (``ir.Dispatch``) that picks a union's member."""

    name: str

    def render(self) -> str:
        return self.name


Metadata = Constraints | Discriminated | Tag | PickedBy | Dispatched


@dataclass(frozen=True, slots=True)
class Annotated:
    """``Annotated[T, metadata, ...]``."""

    inner: Type
    metadata: tuple[Metadata, ...]

    def render(self) -> str:
        meta = ", ".join(m.render() for m in self.metadata)
        return f"Annotated[{self.inner.render()}, {meta}]"


@dataclass(frozen=True, slots=True)
class Forward:
    """A type written as a string literal: a forward reference."""

    inner: Type

    def render(self) -> str:
        return py_str(self.inner.render())


Type = Name | Union | Generic | Literal | Annotated | Forward

NONE = Name("None")
ANY = Name("Any")
STR = Name("str")
INT = Name("int")
DICT_ANY = Generic("dict", (STR, ANY))


def union(items: Iterable[Type], *, dedupe: bool = True) -> Type:
    """``items`` joined with ``|`` (equal items once, when ``dedupe``): the item itself
    when there is one; a member that is a union brings its members."""
    parts = list(dict.fromkeys(items) if dedupe else items)
    if len(parts) == 1:
        return parts[0]
    flat: list[Type] = []
    for part in parts:
        flat.extend(part.items if isinstance(part, Union) else (part,))
    return Union(tuple(flat))


def members(t: Type) -> tuple[Type, ...]:
    """The members of a union, or the type itself."""
    return t.items if isinstance(t, Union) else (t,)


def optional(t: Type) -> Type:
    """``t | None``."""
    return union((t, NONE), dedupe=False)


def ends_with_none(t: Type) -> bool:
    """Whether ``t`` is a union whose last member is ``None``."""
    return isinstance(t, Union) and t.items[-1] == NONE


def without_none(t: Type) -> Type:
    """``t`` without the ``| None`` at its end (once)."""
    if not ends_with_none(t):
        return t
    assert isinstance(t, Union)
    return union(t.items[:-1], dedupe=False)


def nullable(t: Type) -> bool:
    """Whether ``t`` admits ``None``: ``Any``, ``None`` or ``... | None``."""
    return t in (ANY, NONE) or ends_with_none(t)


def admits_none(t: Type) -> bool:
    """Whether ``None`` is a value of ``t`` at its outer level: ``Any``, ``None``, or a
    union with such a member, through forward quotes and ``Annotated``."""
    if isinstance(t, (Forward, Annotated)):
        return admits_none(t.inner)
    if isinstance(t, Union):
        return any(admits_none(item) for item in t.items)
    return t in (ANY, NONE)


def base(t: Type) -> Type:
    """``t`` without its forward quotes, ``| None`` and ``Annotated`` metadata (outer
    layers only)."""
    if isinstance(t, Forward):
        t = t.inner
    while True:
        if ends_with_none(t):
            t = without_none(t)
        elif isinstance(t, Annotated):
            t = t.inner
        else:
            return t


def is_class_name(t: Type) -> bool:
    """Whether ``t`` is a plain capitalised name (a class, as far as a name can say)."""
    return (
        isinstance(t, Name)
        and not t.module
        and t.name[:1].isascii()
        and t.name[:1].isupper()
    )


def depth(t: Type) -> int:
    """How deeply ``t`` nests brackets (``list[dict[str, A]]``: 2)."""
    if isinstance(t, Name):
        return 0
    if isinstance(t, Literal):
        return 1
    if isinstance(t, Union):
        return max(depth(item) for item in t.items)
    if isinstance(t, Generic):
        return 1 + max((depth(arg) for arg in t.args), default=0)
    if isinstance(t, Annotated):
        return 1 + depth(t.inner)
    return depth(t.inner)


def walk(t: Type) -> Iterator[Type]:
    """``t`` and every type inside it, depth first (metadata is not a type)."""
    yield t
    if isinstance(t, Union):
        for item in t.items:
            yield from walk(item)
    elif isinstance(t, Generic):
        for arg in t.args:
            yield from walk(arg)
    elif isinstance(t, (Annotated, Forward)):
        yield from walk(t.inner)


def names(t: Type) -> set[str]:
    """Every name ``t`` uses: its ``Name`` nodes, generic bases (``list``), and
    ``Literal``/``Annotated`` (metadata left out)."""
    found: set[str] = set()
    for node in walk(t):
        if isinstance(node, Name):
            found.add(node.name)
        elif isinstance(node, Generic):
            found.add(node.base)
        elif isinstance(node, Literal):
            found.add("Literal")
        elif isinstance(node, Annotated):
            found.add("Annotated")
    return found


def transform(t: Type, change: Callable[[Type], Type | None]) -> Type:
    """``t`` rebuilt bottom-up, each node replaced by ``change(node)`` unless that is
    ``None``."""
    if isinstance(t, Union):
        rebuilt: Type = union([transform(i, change) for i in t.items], dedupe=False)
    elif isinstance(t, Generic):
        rebuilt = Generic(t.base, tuple(transform(a, change) for a in t.args))
    elif isinstance(t, Annotated):
        rebuilt = Annotated(transform(t.inner, change), t.metadata)
    elif isinstance(t, Forward):
        rebuilt = Forward(transform(t.inner, change))
    else:
        rebuilt = t
    replaced = change(rebuilt)
    return rebuilt if replaced is None else replaced


def without_metadata(t: Type) -> Type:
    """``t`` with every ``Annotated[T, ...]`` as ``T``, at any depth."""
    return transform(t, lambda n: n.inner if isinstance(n, Annotated) else None)


def qualify(t: Type, wanted: Iterable[str], module: str) -> Type:
    """``t`` with each of the names ``wanted`` written ``module.name``."""
    names_ = set(wanted)
    if not names_:
        return t
    return transform(
        t,
        lambda n: (
            Name(n.name, module)
            if isinstance(n, Name) and not n.module and n.name in names_
            else None
        ),
    )
