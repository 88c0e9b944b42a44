"""The one error type of the generator, and where in the input it happened.

Input: a message and a location. Output: ``GenError``, caught only at the CLI boundary.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Location:
    """A place in an input file: line/column (JSON syntax) or a JSON pointer (schema content)."""

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
        return f"{self.loc}: error: {self.message}" if self.loc else f"error: {self.message}"


def fail(message: str, loc: Location | None = None) -> GenError:
    """Build the error for ``raise fail(...)``; the one place errors are made."""
    return GenError(message, loc)
