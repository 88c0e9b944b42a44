"""Format generated Python with black, in memory.

Input: ``{path: text}``. Output: ``{path: text}`` with every ``.py`` file
black-formatted. Black's defaults apply except that the target versions are named (the
generated code needs Python 3.10+), which spares black from inferring them file by file.
Results are kept in a small content-addressed cache (see ``cache_dir``), so an unchanged
file is not formatted twice, and ``--check`` on a current tree does not need black at
all. Misses are formatted in parallel worker processes where the platform forks cheaply
and the files besides the largest are large enough to pay for them.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mcptasks_gen.config import CACHE_OFF, cache_root, write_cached
from mcptasks_gen.errors import Location, fail

if TYPE_CHECKING:
    import black

BLACK_VERSION = "26.10.1"  # pinned in pyproject.toml; part of every cache key
_TARGETS = ("PY310", "PY311", "PY312", "PY313")
_PARALLEL_MIN_CHARS = 100_000  # below this, starting workers costs more than it saves


def cache_dir() -> Path | None:
    """Where formatted files are cached: ``$MCPTASKS_GEN_CACHE`` ("off" disables it),
    else ``$XDG_CACHE_HOME/mcptasks-gen`` or ``~/.cache/mcptasks-gen``."""
    setting = os.environ.get("MCPTASKS_GEN_CACHE")
    if setting is not None and setting.lower() in CACHE_OFF:
        return None
    return cache_root()


def _key(text: str) -> str:
    return hashlib.sha256(
        f"black {BLACK_VERSION} {_TARGETS}\n{text}".encode()
    ).hexdigest()


def _mode() -> black.Mode:
    import black

    return black.Mode(
        target_versions={getattr(black.mode.TargetVersion, t) for t in _TARGETS}
    )


def _format(text: str) -> str:
    """Format one file; a parse failure comes back as its message behind a NUL
    marker.

    One pass of black's formatter, not ``black.format_str``: that runs a second pass
    over every file the first pass changed, for the rare layouts where a trailing comma
    the first pass added changes how optional parentheses split. The renderer leaves
    all layout to black, so every rendered file would pay for it twice; on the code the
    templates make the second pass changes nothing (a test checks it on the goldens,
    and ``black --check`` on them in the quality tests)."""
    import black

    once = getattr(black, "_format_str_once", None)
    try:
        if once is None:  # not the pinned black
            return black.format_str(text, mode=_mode())
        result: str = once(text, mode=_mode())
        return result
    except black.parsing.InvalidInput as exc:
        return "\0" + str(exc).splitlines()[0]


def _cached(folder: Path | None, key: str) -> str | None:
    if folder is None:
        return None
    try:
        return (folder / key[:2] / key).read_text(encoding="utf-8")
    except OSError:
        return None


def _remember(folder: Path | None, key: str, text: str) -> None:
    """Store a formatted file; a cache that cannot be written is simply not used."""
    if folder is not None:
        write_cached(folder / key[:2] / key, text.encode("utf-8"))


def _split_header(text: str) -> tuple[str, str]:
    """Leading comment lines (the generated-file header) and the code after them.

    Black leaves leading comments as they are, so the header is set aside while the body
    is formatted: the cache key then depends on the code only, and a module whose code
    does not depend on the schema is formatted once, whatever schema it was generated
    from.
    """
    end = 0
    while text.startswith("#", end):
        newline = text.find("\n", end)
        if newline < 0:
            break
        end = newline + 1
    return text[:end], text[end:]


def format_files(files: dict[str, str], package: str) -> dict[str, str]:
    """Run black over the Python files; anything else passes through unchanged."""
    headers: dict[str, str] = {}
    bodies: dict[str, str] = {}
    for path, text in files.items():
        if path.endswith(".py"):
            headers[path], bodies[path] = _split_header(text)
    formatted = _format_bodies(bodies, package)
    return {
        path: headers[path] + formatted[path] if path in formatted else text
        for path, text in files.items()
    }


def usable_cpus() -> int:
    """How many CPUs this process may run on: its affinity mask, capped by a cgroup v2
    CPU quota (a container's ``--cpus``); ``os.cpu_count()`` counts the whole machine.
    """
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        count = os.cpu_count() or 1
    try:
        quota, period = (
            Path("/sys/fs/cgroup/cpu.max").read_text(encoding="ascii").split()[:2]
        )
        if quota != "max":
            count = min(count, max(1, int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    return max(1, count)


def _format_bodies(files: dict[str, str], package: str) -> dict[str, str]:
    """Format each text, through the cache."""
    folder = cache_dir()
    keys = {p: _key(t) for p, t in files.items()}
    formatted: dict[str, str] = {}
    todo: list[str] = []
    for path, key in keys.items():
        hit = _cached(folder, key)
        if hit is None:
            todo.append(path)
        else:
            formatted[path] = hit
    todo.sort(key=lambda p: -len(files[p]))
    workers = min(len(todo), usable_cpus())
    # Workers can shorten the run by the files besides the largest at most (that one
    # takes its own time anyway), and forking them costs CPU time: only when those come
    # to enough. In a package that is one large models.py beside small modules, they do
    # not.
    rest = sum(len(files[p]) for p in todo[1:])
    if workers > 1 and rest >= _PARALLEL_MIN_CHARS and sys.platform == "linux":
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        import black  # noqa: F401  (imported once here, inherited by the forked workers)

        with ProcessPoolExecutor(
            max_workers=workers, mp_context=get_context("fork")
        ) as pool:
            results = list(pool.map(_format, [files[p] for p in todo]))
    else:
        results = [_format(files[p]) for p in todo]
    for path, result in zip(todo, results, strict=True):
        if result.startswith("\0"):
            raise fail(
                f"rendered code is not valid Python ({result[1:]})",
                Location(file=f"{package}/{path}"),
            )
        formatted[path] = result
        _remember(folder, keys[path], result)
    return formatted
