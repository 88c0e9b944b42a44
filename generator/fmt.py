"""Format generated Python with black, in memory.

Input: ``{path: text}``. Output: ``{path: text}`` with every ``.py`` file black-formatted.
"""

from __future__ import annotations

import black

from mcptasks_gen.errors import Location, fail

_MODE = black.Mode()


def format_files(files: dict[str, str], package: str) -> dict[str, str]:
    """Run black over the Python files; anything else passes through unchanged."""
    out: dict[str, str] = {}
    for path, text in files.items():
        if path.endswith(".py"):
            try:
                text = black.format_str(text, mode=_MODE)
            except black.parsing.InvalidInput as exc:
                raise fail(f"rendered code is not valid Python ({str(exc).splitlines()[0]})", Location(file=f"{package}/{path}")) from None
        out[path] = text
    return out
