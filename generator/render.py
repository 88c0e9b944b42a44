"""Fill the Jinja templates from the package IR.

Input: ``ir.Package`` and the template folders. Output: ``{relative path: text}``.
Every template in ``package/`` renders the file of the same name without ``.jinja``;
a folder given with ``--templates`` is searched first, so a user overrides by name.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import jinja2

from mcptasks_gen import ir
from mcptasks_gen.errors import Location, fail

PACKAGE_DIR = "package"
SUFFIX = ".jinja"


def builtin_templates() -> Path:
    """The templates shipped with the generator."""
    return Path(str(resources.files("mcptasks_gen.templates")))


def _search_path(override: Path | None) -> list[str]:
    if override is not None and not override.is_dir():
        raise fail("templates folder not found", Location(file=str(override)))
    return [str(p) for p in (override, builtin_templates()) if p is not None]


def environment(override: Path | None) -> jinja2.Environment:
    """The one Jinja environment: strict, no autoescape, whitespace kept predictable."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_search_path(override)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["indent_doc"] = _indent_doc
    return env


def _indent_doc(text: str, width: int = 4) -> str:
    """Indent the continuation lines of a docstring (formatting only)."""
    pad = " " * width
    return "\n".join(line if not line or i == 0 else pad + line for i, line in enumerate(text.split("\n")))


def output_files(override: Path | None) -> tuple[ir.OutputFile, ...]:
    """The package's files: one per template in ``package/`` of any search folder."""
    names: set[str] = set()
    for folder in _search_path(override):
        base = Path(folder) / PACKAGE_DIR
        if base.is_dir():
            names.update(p.name for p in base.iterdir() if p.name.endswith(SUFFIX) and not p.name.startswith("_") or p.name == "__init__.py" + SUFFIX)
    return tuple(ir.OutputFile(path=name.removesuffix(SUFFIX), template=f"{PACKAGE_DIR}/{name}") for name in sorted(names))


def render(package: ir.Package, env: jinja2.Environment) -> dict[str, str]:
    """Render every file of the package."""
    out: dict[str, str] = {}
    for file in package.files:
        try:
            out[file.path] = env.get_template(file.template).render(pkg=package)
        except jinja2.TemplateSyntaxError as exc:
            raise fail(f"template syntax error: {exc.message}", Location(file=exc.filename or file.template, line=exc.lineno, column=1)) from None
        except jinja2.UndefinedError as exc:
            raise fail(f"template uses an undefined value: {exc.message}", Location(file=file.template)) from None
    return out
