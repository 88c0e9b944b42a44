"""The extension identifier a schema names: what a Tasks-extension package declares.

Input: the schema's top-level ``title`` and ``description`` and the target's
``extension_id`` ("" when it gives none). Output: the one identifier, or ``GenError``
(exit 2) naming the field and the way out.

The official extension schema names its identifier in its description ("Extension
Identifier: io.modelcontextprotocol/tasks"), the embedded one in its title and its
description ("identifier io.modelcontextprotocol/tasks"). What is read is every
identifier of the form ``<reverse-dns>/<name>`` in those two texts (a URL's host and
path are not one: nothing of a URL is read); they must name exactly one. A target may
give the identifier (``extension_id = "..."``, ``--extension-id``): it decides where
the schema names several or none, and must be the one the schema names otherwise.
"""

from __future__ import annotations

import re
from typing import Any

from mcptasks_gen.errors import Location, fail

_LABEL = r"(?=[a-z0-9-]*[a-z])[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"  # not only digits
_NAME = r"[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?"
FORM = re.compile(rf"(?:{_LABEL}\.)+{_LABEL}/{_NAME}", re.IGNORECASE)
"""An extension identifier: a reverse domain name, a slash and a name."""
_IN_TEXT = re.compile(rf"(?<![\w.:/@-])({FORM.pattern})(?![\w/-]|\.\w)", re.IGNORECASE)
"""An identifier standing on its own in prose (not part of a URL, a path or a longer
word); a sentence's full stop after it is not part of it."""

EXAMPLE = "io.modelcontextprotocol/tasks"
OPTION = (
    'extension_id = "..." in the target, --extension-id of generate, or'
    " --extension-id-old/--extension-id-new of diff"
)
"""How a user gives the identifier, as messages name it."""


def check_form(value: object, loc: Location) -> str:
    """A configured identifier, checked for its form."""
    if not isinstance(value, str) or not FORM.fullmatch(value):
        raise fail(
            f"invalid extension identifier {value!r} (expected <reverse-dns>/<name>,"
            f" e.g. {EXAMPLE})",
            loc,
        )
    return value


def named(raw: dict[str, Any]) -> dict[str, str]:
    """The identifiers the schema's top-level title and description name, each with
    the first of the two that names it."""
    found: dict[str, str] = {}
    for key in ("title", "description"):
        text = raw.get(key)
        if isinstance(text, str):
            for match in _IN_TEXT.finditer(text):
                found.setdefault(match.group(1), key)
    return found


def extension_id(raw: dict[str, Any], configured: str, schema: Location) -> str:
    """The identifier of the extension the schema ``raw`` describes."""
    found = named(raw)
    where = schema.child(
        "description" if "description" in raw or "title" not in raw else "title"
    )
    if configured:
        if found and configured not in found:
            ids = ", ".join(found)
            raise fail(
                f'the configured extension identifier "{configured}" is not one the'
                f" schema's title or description names ({ids}); name it there, or"
                " configure one of those",
                where,
            )
        return configured
    if not found:
        raise fail(
            "the schema's title and description name no extension identifier"
            f' (<reverse-dns>/<name>, e.g. {EXAMPLE}); name it there ("Extension'
            f' Identifier: ...") or give it ({OPTION})',
            where,
        )
    if len(found) > 1:
        first = next(iter(found.values()))
        ids = ", ".join(found)
        raise fail(
            f"the schema's title and description name {len(found)} extension"
            f" identifiers ({ids}); keep one, or pick one ({OPTION})",
            schema.child(first) if len(set(found.values())) == 1 else where,
        )
    return next(iter(found))
