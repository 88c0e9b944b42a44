"""Run the stages in order for one target; nothing else.

Input: ``Target``. Output: the formatted files of the package, ``{relative path: text}``.
"""

from __future__ import annotations

from mcptasks_gen import ir
from mcptasks_gen.config import Target
from mcptasks_gen.detect import detect
from mcptasks_gen.errors import Location
from mcptasks_gen.extract import extract
from mcptasks_gen.fmt import format_files
from mcptasks_gen.load import load
from mcptasks_gen.normalize import normalize
from mcptasks_gen.profile import PROFILES, check
from mcptasks_gen.render import environment, output_files, render


def build(target: Target) -> ir.Package:
    """Load, detect, extract and normalize: the package IR of a target."""
    doc = load(target.schema, target.schema_label)
    revision = detect(doc, target.revision)
    surface = extract(doc, revision)
    return normalize(surface, target, output_files(target.templates, PROFILES[revision.id].runtime))


def protocol(package: ir.Package, target: Target) -> ir.Protocol:
    """Check the package IR against its revision's profile: the protocol tables."""
    return check(package, PROFILES[package.revision], dict(target.statuses), Location(file=target.schema_label))


def generate(target: Target) -> dict[str, str]:
    """The complete, formatted files of a target's package.

    Copied runtime files are black-clean in the repository (a test keeps them so), so
    only the rendered files go through black.
    """
    package = build(target)
    files = render(package, protocol(package, target), environment(target.templates))
    verbatim = {f.path for f in package.files if f.verbatim}
    formatted = format_files({p: t for p, t in files.items() if p not in verbatim}, package.name)
    return {p: formatted.get(p, t) for p, t in sorted(files.items())}
