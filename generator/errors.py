"""The one error type of the generator, and where in the input it happened.

Input: a message and a location. Output: ``GenError``, caught only at the CLI boundary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Characters that would break the one line of a message, or the stream printing it: C0
# and C1 controls, line and paragraph separators, and lone surrogates (from JSON
# "\ud800").
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _escaped(text: str) -> str:
    """``text`` with every character of ``_UNPRINTABLE`` as its Python escape."""
    return _UNPRINTABLE.sub(lambda m: repr(m.group())[1:-1], text)


@dataclass(frozen=True, slots=True, kw_only=True)
class Location:
    """A place in an input file: line/column (JSON syntax) or a JSON pointer (schema
    content)."""

    file: str
    pointer: str | None = None
    line: int | None = None
    column: int | None = None

    def child(self, *parts: str | int) -> Location:
        """Return the location of a node below this one."""
        pointer = self.pointer or ""
        for part in parts:
            pointer += "/" + str(part).replace("~", "~0").replace("/", "~1")
        return Location(file=self.file, pointer=pointer)

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.file}:{self.line}:{self.column or 1}"
        if self.pointer is not None:
            return f"{self.file}#{self.pointer or '/'}"
        return self.file


class GenError(Exception):
    """A problem with the user's input: printed as one line, exit status 2."""

    def __init__(self, message: str, loc: Location | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc

    def __str__(self) -> str:
        """One line: control characters in a name or value of the input are escaped."""
        line = (
            f"{self.loc}: error: {self.message}"
            if self.loc
            else f"error: {self.message}"
        )
        return _escaped(line)


def fail(message: str, loc: Location | None = None) -> GenError:
    """Build the error for ``raise fail(...)``; the one place errors are made."""
    return GenError(message, loc)
