"""What to generate: one ``Target`` per package, from the command line or
``pyproject.toml``.

Input: CLI options or the ``[tool.mcptasks-gen]`` table. Output: frozen ``Target``
records.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from mcptasks_gen.errors import Location, fail
from mcptasks_gen.extension import check_form
from mcptasks_gen.naming import PyIdent
from mcptasks_gen.revisions import DEFAULT_SCHEMA, names, resolve


def _tomllib() -> ModuleType:
    """The TOML parser, imported when a ``pyproject.toml`` is read (most runs read
    none)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    return tomllib


CONFIG_TABLE = "mcptasks-gen"
_TARGET_KEYS = frozenset(
    {
        "schema",
        "output",
        "package",
        "revision",
        "templates",
        "statuses",
        "extension_id",
        "initial",
    }
)
STATUS_CLASSES = ("active", "input", "terminal")
_TOP_KEYS = frozenset({"targets"})


STDIN = "-"
"""The schema path that stands for standard input."""

STDIN_NAME = "<stdin>"
"""How standard input is named in messages and generated headers."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """One generated package: where its schema is and where it goes."""

    schema: Path  # "" path means the embedded default schema
    schema_label: str  # how the schema is named in headers and messages
    output: Path  # the folder that receives the package folder
    package: str
    revision: str | None  # forced revision id, or None to detect it
    templates: Path | None  # override folder searched before the built-in templates
    regenerate: str  # the command that regenerates this package
    statuses: tuple[
        tuple[str, str], ...
    ] = ()  # (status, class) for statuses the runtime does not know
    also: tuple[
        tuple[Path, str], ...
    ] = ()  # more schemas (path, label), one per other revision
    extension_id: str = ""
    """The Tasks extension's identifier, when the target gives it ("": the one the
    extension schema's title or description names)."""
    initial: tuple[
        tuple[str, str], ...
    ] = ()  # (revision id or "" for every revision, status): the status of a new task

    def statuses_for(self, revision: str) -> dict[str, str]:
        """The classifications that apply to ``revision`` (an id): the unqualified
        ones and those qualified with it (``ext-2026-07-28:rejected``)."""
        found: dict[str, str] = {}
        for status, klass in self.statuses:
            qualifier, _, name = status.rpartition(":")
            if qualifier in ("", revision):
                found[name] = klass
        return found

    def initial_for(self, revision: str) -> str | None:
        """The configured initial status of ``revision`` (qualified beats
        unqualified), or None for the profile's."""
        chosen = dict(self.initial)
        return chosen.get(revision, chosen.get(""))

    @property
    def sources(self) -> tuple[Target, ...]:
        """One target per schema: this one, then one for each of ``also`` (detected)."""
        return (
            self,
            *(
                replace(self, schema=path, schema_label=label, revision=None, also=())
                for path, label in self.also
            ),
        )

    @property
    def package_dir(self) -> Path:
        """The folder of the generated package."""
        return self.output / self.package


def embedded_schema(revision: str = DEFAULT_SCHEMA) -> Path:
    """The path of a schema shipped inside the generator."""
    return package_folder("mcptasks_gen.schema") / revision / "schema.json"


CACHE_OFF = ("", "0", "off", "no", "false")
"""Values of ``MCPTASKS_GEN_CACHE`` that turn the cache of formatted files off."""


def cache_root() -> Path:
    """The folder the generator keeps what it caches in: ``$MCPTASKS_GEN_CACHE`` when
    it names a folder, else ``$XDG_CACHE_HOME/mcptasks-gen`` or
    ``~/.cache/mcptasks-gen`` (also when ``MCPTASKS_GEN_CACHE`` turns the
    formatted-file cache off: compiled templates still go there, as Python's bytecode
    would)."""
    setting = os.environ.get("MCPTASKS_GEN_CACHE")
    if setting is not None and setting.lower() not in CACHE_OFF:
        return Path(setting)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache"
    )
    return Path(base) / "mcptasks-gen"


def write_cached(path: Path, data: bytes) -> None:
    """Put ``data`` at ``path`` in the cache folder: written to a temporary file
    beside it, then renamed, so a reader never sees half a file. A cache that cannot
    be written is simply not used; the temporary file is removed when writing it
    fails."""
    import tempfile  # only when something is cached

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        pass


def package_folder(name: str) -> Path:
    """The folder of a data package shipped with the generator (found without
    ``importlib.resources``, whose import costs more than a ``--check`` run's path
    handling).
    """
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations is not None
    return Path(next(iter(spec.submodule_search_locations)))


def check_package_name(name: str, loc: Location) -> str:
    """A package name must be a valid, dotless Python identifier."""
    try:
        PyIdent(name)
    except ValueError:
        raise fail(
            f'invalid package name "{name}" (expected a Python identifier such as'
            " mcp_tasks)",
            loc,
        ) from None
    return name


def check_revision(name: str | None, loc: Location) -> str | None:
    """Resolve a ``--revision`` value to a revision id (aliases allowed)."""
    if name is None:
        return None
    revision = resolve(name)
    if revision is None:
        known = ", ".join(names())
        raise fail(f'unknown revision "{name}" (expected one of {known})', loc)
    return revision.id


def _qualified(name: str, loc: Location) -> tuple[str, str]:
    """Split ``REVISION:NAME`` (``ext:rejected``) into the revision id and the name;
    ``("", name)`` without a qualifier."""
    qualifier, sep, rest = name.partition(":")
    if not sep:
        return "", name
    revision = resolve(qualifier)
    if revision is None or not rest:
        known = ", ".join(names())
        raise fail(
            f'"{name}": "{qualifier}" is not a revision (expected REVISION:STATUS with'
            f" one of {known})",
            loc,
        )
    return revision.id, rest


def check_statuses(value: object, loc: Location) -> tuple[tuple[str, str], ...]:
    """A status classification: a table (or ``STATUS=CLASS`` strings) mapping each
    status the runtime does not know to ``active``, ``input`` or ``terminal``.

    A status may be qualified with a revision (``ext:rejected=terminal``, or in a
    table a sub-table per revision: ``{ ext = { rejected = "terminal" } }``) to
    classify it in that revision's schema only; it is returned as
    ``<revision id>:<status>``."""
    pairs: list[tuple[str, object]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, dict):
                revision, _ = _qualified(f"{k}:_", loc.child(str(k)))
                pairs += [(f"{revision}:{s}", c) for s, c in v.items()]
            else:
                pairs.append((str(k), v))
    elif isinstance(value, (list, tuple)):
        for item in value:
            status, sep, text = str(item).partition("=")
            if not sep or not status:
                raise fail(
                    f'invalid status classification "{item}" (expected STATUS=CLASS,'
                    " e.g. paused=active, or REVISION:STATUS=CLASS)",
                    loc,
                )
            revision, status = _qualified(status, loc)
            pairs.append((f"{revision}:{status}" if revision else status, text))
    else:
        raise fail("expected a table of status = class", loc)
    for status, klass in pairs:
        if klass not in STATUS_CLASSES:
            raise fail(
                f'status "{status}": class "{klass}" is not one of'
                f' {", ".join(STATUS_CLASSES)}',
                loc.child(status),
            )
    return tuple(sorted((status, str(klass)) for status, klass in pairs))


def check_initial(value: object, loc: Location) -> tuple[tuple[str, str], ...]:
    """The status of a new task: a status (``queued``), ``REVISION:STATUS`` strings
    (``ext:queued``), or in a target a table of revision = status. Returns
    ``(revision id or "", status)`` pairs."""
    pairs: list[tuple[str, str]] = []
    if isinstance(value, str):
        value = [value]
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(v, str) or not v:
                raise fail("expected a status name", loc.child(str(k)))
            revision, _ = _qualified(f"{k}:{v}", loc.child(str(k)))
            pairs.append((revision, v))
    elif isinstance(value, (list, tuple)):
        for item in value:
            pairs.append(_qualified(str(item), loc))
    else:
        raise fail("expected a status, or a table of revision = status", loc)
    chosen: dict[str, str] = {}
    for revision, status in pairs:
        if not status or chosen.get(revision, status) != status:
            raise fail(
                f'two initial statuses for {revision or "every revision"}:'
                f' "{chosen.get(revision)}" and "{status}"',
                loc,
            )
        chosen[revision] = status
    return tuple(sorted(chosen.items()))


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` that has our table."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            tomllib = _tomllib()
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError):
                raise fail("invalid TOML", Location(file=str(candidate))) from None
            if CONFIG_TABLE in data.get("tool", {}):
                return candidate
            return None
    return None


def targets_from_pyproject(path: Path, cwd: Path) -> tuple[Target, ...]:
    """Read every target of ``[tool.mcptasks-gen]``; paths are relative to the file's
    folder."""
    data: Any = _tomllib().loads(path.read_text(encoding="utf-8"))["tool"][CONFIG_TABLE]
    shown = _shown(path, cwd)
    loc = Location(file=shown, pointer=f"/tool/{CONFIG_TABLE}")
    if not isinstance(data, dict):
        raise fail("expected a table", loc)
    for key in sorted(set(data) - _TOP_KEYS):
        raise fail(f'unknown key "{key}" (expected: targets)', loc)
    entries = data.get("targets")
    if not isinstance(entries, list) or not entries:
        raise fail(
            "no targets (add one or more [[tool.mcptasks-gen.targets]] tables)", loc
        )
    base = path.parent
    targets = []
    for i, entry in enumerate(entries):
        here = loc.child("targets", i)
        if not isinstance(entry, dict):
            raise fail("expected a table", here)
        for key in sorted(set(entry) - _TARGET_KEYS):
            raise fail(
                f'unknown key "{key}" (expected one of'
                f' {", ".join(sorted(_TARGET_KEYS))})',
                here,
            )
        for key in ("output", "package"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise fail(f'"{key}" is required and must be a string', here)
        names = entry.get("schema")
        names = [names] if isinstance(names, str) else names
        if (
            not isinstance(names, list)
            or not names
            or not all(isinstance(n, str) and n for n in names)
        ):
            raise fail(
                '"schema" is required: a schema path, or a list of them (one per'
                " revision)",
                here,
            )
        if len(names) > 1 and entry.get("revision") is not None:
            raise fail(
                '"revision" forces the revision of one schema; with several, each is'
                " detected",
                here.child("revision"),
            )
        schemas = [base / name for name in names]
        for k, (schema, name) in enumerate(zip(schemas, names, strict=True)):
            if not schema.is_file():
                raise fail(
                    f'schema "{name}" not found',
                    here.child("schema", k) if len(names) > 1 else here.child("schema"),
                )
        templates = entry.get("templates")
        statuses = check_statuses(entry.get("statuses", {}), here.child("statuses"))
        initial = check_initial(entry.get("initial", ()), here.child("initial"))
        targets.append(
            Target(
                schema=schemas[0],
                schema_label=names[0],
                output=base / entry["output"],
                package=check_package_name(entry["package"], here.child("package")),
                revision=check_revision(entry.get("revision"), here.child("revision")),
                templates=base / templates if isinstance(templates, str) else None,
                regenerate="mcptasks-gen generate",
                statuses=statuses,
                also=tuple(zip(schemas[1:], names[1:], strict=True)),
                extension_id=(
                    check_form(entry["extension_id"], here.child("extension_id"))
                    if "extension_id" in entry
                    else ""
                ),
                initial=initial,
            )
        )
    seen: dict[Path, int] = {}
    for i, target in enumerate(targets):
        out = target.package_dir.resolve()
        for other, j in seen.items():
            if out == other or out in other.parents or other in out.parents:
                raise fail(
                    f"target {i} writes into the folder of target {j}"
                    f" ({targets[j].package})",
                    loc.child("targets", i),
                )
        seen[out] = i
    return tuple(targets)


def _shown(path: Path, cwd: Path) -> str:
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)
