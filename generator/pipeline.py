"""Run the stages in order for one target; nothing else.

Input: ``Target``. Output: the formatted files of the package, ``{relative path: text}``.
"""

from __future__ import annotations

from mcptasks_gen import ir
from mcptasks_gen.config import Target
from mcptasks_gen.detect import detect
from mcptasks_gen.extract import extract
from mcptasks_gen.fmt import format_files
from mcptasks_gen.load import load
from mcptasks_gen.normalize import normalize
from mcptasks_gen.render import environment, output_files, render


def build(target: Target) -> ir.Package:
    """Load, detect, extract and normalize: the package IR of a target."""
    doc = load(target.schema, target.schema_label)
    revision = detect(doc, target.revision)
    surface = extract(doc, revision)
    return normalize(surface, target, output_files(target.templates))


def generate(target: Target) -> dict[str, str]:
    """The complete, formatted files of a target's package."""
    package = build(target)
    return format_files(render(package, environment(target.templates)), package.name)
