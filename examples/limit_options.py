"""Command-line options for every field of ``Limits``, shared by the example servers.

One option per field of the ``Limits`` dataclass, named after it (``max_active_tasks``
gives ``--max-active-tasks N``), built from the dataclass's fields so that a new limit
gets its option without a change here. A field that may be None (no limit) also takes
``none``. ``add_limit_options`` adds them to a parser and ``limits_from`` builds the
``Limits`` back from the parsed options.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

L = TypeVar("L")

ALIASES: Mapping[str, Sequence[str]] = {"lease_s": ("--lease-seconds",)}
"""Older spellings still accepted, by field."""


def _parser(annotation: Any) -> tuple[Callable[[str], Any], bool]:
    """How to parse an option of this type, and whether ``none`` is allowed."""
    args = typing.get_args(annotation)
    optional = typing.get_origin(annotation) in (typing.Union, types.UnionType) and (
        type(None) in args
    )
    base = next((arg for arg in args if arg is not type(None)), annotation)
    if base not in (int, float):
        raise TypeError(f"no command-line form for a Limits field of type {base!r}")
    return base, optional


def _value(parse: Callable[[str], Any], optional: bool) -> Callable[[str], Any]:
    """The argparse ``type`` for a field: a number, or ``none`` where allowed."""

    def convert(text: str) -> Any:
        if optional and text.strip().lower() == "none":
            return None
        try:
            return parse(text)
        except ValueError:
            expected = "a number" + (" or 'none'" if optional else "")
            raise argparse.ArgumentTypeError(f"{text!r} is not {expected}") from None

    return convert


def add_limit_options(
    parser: argparse.ArgumentParser, limits_class: type[Any], defaults: Any
) -> None:
    """Add ``--<field>`` for every field of ``limits_class`` (a ``Limits``), with the
    value of ``defaults`` (an instance) as default."""
    group = parser.add_argument_group(
        "limits",
        "the fields of Limits (see its documentation); 'none' where a limit may be off",
    )
    hints = typing.get_type_hints(limits_class)
    for field in dataclasses.fields(limits_class):
        parse, optional = _parser(hints[field.name])
        default = getattr(defaults, field.name)
        group.add_argument(
            "--" + field.name.replace("_", "-"),
            *ALIASES.get(field.name, ()),
            dest=field.name,
            type=_value(parse, optional),
            default=default,
            metavar="N|none" if optional else "N",
            help=f"Limits.{field.name} (default: {default})",
        )


def limits_from(options: argparse.Namespace, limits_class: Callable[..., L]) -> L:
    """The ``Limits`` the parsed ``options`` give (see ``add_limit_options``)."""
    shape: Any = limits_class  # the Limits dataclass of any package
    names = [field.name for field in dataclasses.fields(shape)]
    return limits_class(**{name: getattr(options, name) for name in names})
