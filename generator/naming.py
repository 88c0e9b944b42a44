"""Validated Python identifiers and case conversion.

Input: names from the schema (wire names, ``$defs`` keys, constant values).
Output: ``PyIdent`` and ``ClassName`` strings that are guaranteed to be valid.
"""

from __future__ import annotations

import functools
import keyword
import re
import unicodedata

# Attribute names a pydantic model field must not take (they would shadow BaseModel
# API).
_RESERVED_FIELDS = frozenset(
    {
        "construct",
        "copy",
        "dict",
        "json",
        "parse_file",
        "parse_obj",
        "parse_raw",
        "schema",
        "schema_json",
        "update_forward_refs",
        "validate",
        "to_wire",
        "from_orm",
        "wire_constants",
        "wire_keys",
        "wire_set_only",
        # Builtins the generated annotations use: a field of that name would shadow the
        # type for the fields after it (pydantic evaluates annotations in the class
        # namespace).
        "bool",
        "float",
        "frozenset",
        "int",
        "list",
        "str",
    }
)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class PyIdent(str):
    """A valid, non-keyword Python identifier."""

    __slots__ = ()

    def __new__(cls, value: str) -> PyIdent:
        if not _IDENT.match(value) or keyword.iskeyword(value):
            raise ValueError(f"not a valid Python identifier: {value!r}")
        return super().__new__(cls, value)


class ClassName(PyIdent):
    """A valid Python identifier that starts with an upper-case letter."""

    __slots__ = ()

    def __new__(cls, value: str) -> ClassName:
        if not value[:1].isupper():
            raise ValueError(f"not a class name: {value!r}")
        return super().__new__(cls, value)  # type: ignore[return-value]


_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")
_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM_WORD = re.compile(r"([A-Z]+)([A-Z][a-z])")


@functools.lru_cache(maxsize=4096)
def _words(name: str) -> tuple[str, ...]:
    """Split camelCase, PascalCase, snake_case, kebab-case and dotted names into words.

    Cached: a schema names the same properties (``taskId``, ``_meta``, ...) in many
    objects.
    """
    name = _SEPARATORS.sub(" ", name)
    name = _LOWER_UPPER.sub(r"\1 \2", name)
    name = _ACRONYM_WORD.sub(r"\1 \2", name)
    return tuple(name.split())


def snake(name: str) -> str:
    """``lastUpdatedAt`` -> ``last_updated_at``; ``_meta`` -> ``meta``."""
    return "_".join(w.lower() for w in _words(name))


def pascal(name: str) -> str:
    """``input_required`` -> ``InputRequired``; ``tasks/get`` -> ``TasksGet``."""
    return "".join(w[:1].upper() + w[1:] for w in _words(name))


@functools.lru_cache(maxsize=4096)
def field_ident(wire_name: str) -> PyIdent:
    """The attribute name for a wire property (namespaced ``_meta`` keys use their
    last segment)."""
    base = snake(wire_name.rsplit("/", 1)[-1]) or "value"
    if base[0].isdigit():
        base = "f_" + base
    if keyword.iskeyword(base) or base in _RESERVED_FIELDS or base.startswith("model_"):
        base += "_"
    return PyIdent(base)


def enum_member(value: str) -> PyIdent:
    """The member name for a string enum value: ``input_required`` ->
    ``INPUT_REQUIRED``."""
    base = "_".join(w.upper() for w in _words(value)) or "EMPTY"
    if base[0].isdigit():
        base = "V_" + base
    return PyIdent(base)


def _ascii(name: str) -> str:
    """``Tâche`` -> ``Tache``: accents dropped, other non-ASCII letters left for
    ``_words``."""
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")


def definition_class(name: str) -> ClassName:
    """The class name for any ``$defs`` key, before clashes are resolved.

    A name that is already a valid, capitalised, ASCII identifier is kept (``Task``);
    any other is folded to ASCII words and joined in PascalCase (``task-status`` ->
    ``TaskStatus``, ``Tâche`` -> ``Tache``), prefixed when it would start with a digit
    (``1Task`` -> ``Def1Task``), suffixed when it is a keyword (``True`` -> ``True_``),
    and ``Definition`` when nothing is left (``_``).
    """
    if _IDENT.match(name) and name[:1].isupper() and not keyword.iskeyword(name):
        return ClassName(name)
    base = pascal(_ascii(name)) or "Definition"
    if base[0].isdigit():
        base = "Def" + base
    if keyword.iskeyword(base):
        base += "_"
    return ClassName(base)


def class_name(*parts: str) -> ClassName:
    """Join name parts into a class name: ``("GetTaskRequest", "params")`` ->
    ``GetTaskRequestParams``."""
    joined = "".join(
        p if p[:1].isupper() and _IDENT.match(p) else pascal(p) for p in parts
    )
    return ClassName(joined)


def py_str(value: object) -> str:
    """A Python literal for ``value`` in black's preferred form: ``repr``, but a
    string in double quotes unless that needs more escapes than single quotes
    (black's rule), so black has nothing to change."""
    text = repr(value)
    if not isinstance(value, str) or not text.startswith("'"):
        return text
    if value.count('"') > value.count("'"):
        return text
    return '"' + "".join(_double_quoted(c) for c in value) + '"'


def _double_quoted(char: str) -> str:
    if char == "'":
        return char
    if char == '"':
        return '\\"'
    return repr(char)[1:-1]
