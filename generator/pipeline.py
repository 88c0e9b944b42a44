"""Run the stages in order for one target; nothing else.

Input: ``Target``. Output: the formatted files of the package, ``{relative path:
text}``. A target with several schemas (one per revision) gives one package carrying
every revision on one runtime.
"""

from __future__ import annotations

from mcptasks_gen import ir
from mcptasks_gen.config import Target
from mcptasks_gen.detect import detect, scan
from mcptasks_gen.errors import Location, fail
from mcptasks_gen.extract import extract
from mcptasks_gen.fmt import format_files
from mcptasks_gen.load import load
from mcptasks_gen.normalize import normalize
from mcptasks_gen.profile import check
from mcptasks_gen.render import bundle, environment, output_files, render_bundle
from mcptasks_gen.revisions import REGISTRY


def build(target: Target) -> ir.Package:
    """Load, detect, extract and normalize: the package IR of a target's (first)
    schema."""
    doc = load(target.schema, target.schema_label)
    found = scan(doc)
    revision = detect(found, target.revision)
    surface = extract(found, revision)
    return normalize(surface, target, ())


def protocol(package: ir.Package, target: Target) -> ir.Protocol:
    """Check the package IR against its revision's profile: the protocol tables."""
    return check(
        package,
        REGISTRY[package.revision].profile,
        target.statuses_for(package.revision),
        Location(file=target.schema_label),
        target.initial_for(package.revision),
    )


def package(target: Target) -> ir.Bundle:
    """Every schema of the target checked against its profile, as one package."""
    revisions: dict[str, ir.Revision] = {}
    for source in target.sources:
        models = build(source)
        if models.revision in revisions:
            raise fail(
                f"two schemas of revision {models.revision}:"
                f" {revisions[models.revision].package.schema_name} and"
                f" {source.schema_label} (one schema per revision)",
                Location(file=source.schema_label),
            )
        revisions[models.revision] = ir.Revision(
            package=models, protocol=protocol(models, source)
        )
    ordered = tuple(revisions[r] for r in REGISTRY if r in revisions)
    if target.extension_id and not any(r.package.is_extension for r in ordered):
        raise fail(
            f'an extension identifier is configured ("{target.extension_id}"), but no'
            " schema of the target is the Tasks extension (only its package declares"
            " one)",
            Location(file=target.schema_label),
        )
    _check_shared(ordered, target)
    _check_configured(ordered, target)
    files = output_files(
        target.templates, tuple(REGISTRY[r.package.revision] for r in ordered)
    )
    return bundle(ordered, files)


def _check_shared(revisions: tuple[ir.Revision, ...], target: Target) -> None:
    """Revisions sharing one runtime and store must agree on what each status means."""
    meaning: dict[str, tuple[str, str]] = {}
    for revision in revisions:
        for status in revision.protocol.statuses:
            seen = meaning.setdefault(
                status.value, (status.klass, revision.package.revision)
            )
            if seen[0] != status.klass:
                raise fail(
                    f'status "{status.value}" is {seen[0]} in {seen[1]} but'
                    f" {status.klass} in {revision.package.revision}; one package needs"
                    " one meaning per status",
                    Location(file=target.schema_label),
                )


def _check_configured(revisions: tuple[ir.Revision, ...], target: Target) -> None:
    """Every status classification and initial status names a status of the
    schema(s) it applies to: none is silently ignored."""
    present = {
        r.package.revision: {s.value for s in r.protocol.statuses} for r in revisions
    }
    for name, klass in target.statuses:
        revision, _, status = name.rpartition(":")
        option = Location(file="--status")
        if revision and revision not in present:
            raise fail(
                f'"{name}={klass}" classifies a status of revision {revision}, which'
                f" this package does not have (its revisions: {', '.join(present)})",
                option,
            )
        where = [revision] if revision else list(present)
        if not any(status in present[r] for r in where):
            raise fail(
                f'"{name}={klass}" classifies status "{status}", which no schema of'
                f" {' or '.join(where)} lists: drop it, or add the status to the"
                " schema's TaskStatus",
                option,
            )
    for revision, status in target.initial:
        if revision and revision not in present:
            raise fail(
                f'"{revision}:{status}" sets the initial status of revision'
                f" {revision}, which this package does not have (its revisions:"
                f" {', '.join(present)})",
                Location(file="--initial-status"),
            )


def generate(target: Target) -> dict[str, str]:
    """The complete, formatted files of a target's package.

    Copied runtime files are black-clean in the repository (a test keeps them so), so
    only the rendered files go through black.
    """
    built = package(target)
    files = render_bundle(built, environment(target.templates))
    verbatim = {f.path for f in built.files if f.verbatim}
    formatted = format_files(
        {p: t for p, t in files.items() if p not in verbatim}, built.name
    )
    return {p: formatted.get(p, t) for p, t in sorted(files.items())}
