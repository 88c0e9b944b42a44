"""The ``mcptasks-gen`` command line.

Input: arguments. Output: files (through ``write``), messages, and the exit status: 0
success, 1 ``--check`` found stale files (or ``diff`` found breaking changes), 2 bad
input (one line on stderr naming the file and, where it applies, the JSON pointer).
"""

from __future__ import annotations

import gc
import os
import shlex
import sys
from pathlib import Path

import click

from mcptasks_gen import __version__
from mcptasks_gen.config import (
    STDIN,
    STDIN_NAME,
    Target,
    check_initial,
    check_package_name,
    check_params,
    check_revision,
    check_statuses,
    embedded_schema,
    find_pyproject,
    targets_from_pyproject,
)
from mcptasks_gen.errors import GenError, Location, fail
from mcptasks_gen.extension import check_form
from mcptasks_gen.revisions import DEFAULT_SCHEMAS, REGISTRY

GENERATE_HELP = """Generate a typed Python package for MCP Tasks from a JSON Schema.

SCHEMA is an official MCP schema (core 2025-11-25, or the Tasks extension) or one of
the project's own; the Tasks revision is detected from its content. Without SCHEMA and
options, every target in [tool.mcptasks-gen] of the nearest pyproject.toml is
generated; without that table, both embedded schemas (2025-11-25 and the Tasks
extension) go to one package of both revisions, ./mcp_tasks/.

SCHEMA "-" reads the schema from standard input (named <stdin> in messages and in the
generated headers). A schema is at most 64 MiB long: a longer file, or a device or pipe
that gives more, is refused.

\b
Examples:
  mcptasks-gen generate
  mcptasks-gen generate schema.json -o vendor/ --package acme_tasks
  mcptasks-gen generate --revision 2025-11-25 -o src/
  curl -s https://example.com/schema.json | mcptasks-gen generate - -o vendor/
  mcptasks-gen generate --check            # exit 1 and a diff when stale

Only the files the generator makes are written; other files and folders in the package
folder are left alone. Created folders and files follow the umask.

\b
Exit status:
  0  generated (or, with --check, up to date)
  1  --check only: the output is stale (a diff and the reason are printed)
  2  bad input or options, or the output cannot be written (one line on stderr:
     the file, and the JSON pointer where it applies)
"""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mcptasks-gen")
def main() -> None:
    """Generate typed Python packages (models, async client, server skeleton) for MCP
    Tasks.

    \b
    Examples:
      # targets from pyproject.toml, or the default
      mcptasks-gen generate
      mcptasks-gen generate schema.json -o vendor/ --package acme_tasks
      # CI / pre-commit: is the output current?
      mcptasks-gen generate --check
      mcptasks-gen diff old.json new.json       # what changed in the generated API
    """


def run() -> None:
    """The console entry point (``mcptasks-gen``, ``python -m mcptasks_gen``): ``main``,
    then the process ends without tearing the interpreter down.

    By the time a command returns, every file it writes is closed and in place; what the
    interpreter would still do is free every object of the run one by one and make a
    last pass of the cyclic collector over them all (black's syntax trees above all),
    about a twentieth of a ``generate`` run's CPU time for nothing. So the output
    streams are flushed and the process exits at once, with the command's status (atexit
    handlers do not run; the command registers none). Tests call ``main`` in-process and
    keep the ordinary exit.

    The cyclic garbage collector stays off for the whole process, not only while
    ``generate`` runs: re-enabled at its end, its first pass would walk everything the
    run made (about 4 ms) just before the exit frees it all at once.
    """
    gc.disable()
    try:
        main()
    except SystemExit as exc:
        status = exc.code
        if status is not None and not isinstance(status, int):
            raise  # a message to print: the ordinary exit prints it
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            # a closed or broken stream: let the interpreter report it
            raise exc from None
        os._exit(status or 0)


@main.command(help=GENERATE_HELP)
@click.argument("schemas", nargs=-1, type=click.Path(dir_okay=True, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Folder that receives the package folder (default: .).",
)
@click.option(
    "--package", help="Import name of the generated package (default: mcp_tasks)."
)
@click.option(
    "--revision",
    help=(
        f"Force the Tasks revision ({', '.join(REGISTRY)}); without SCHEMA, picks the"
        " embedded schema."
    ),
)
@click.option(
    "--templates",
    type=click.Path(path_type=Path),
    help="Folder of template overrides, searched before the built-in templates.",
)
@click.option(
    "--status",
    "statuses",
    multiple=True,
    metavar="STATUS=CLASS",
    help=(
        "Classify a task status the runtime does not know: active, input or terminal"
        " (repeatable); REVISION:STATUS=CLASS (ext:rejected=terminal) classifies it in"
        " that revision's schema only."
    ),
)
@click.option(
    "--initial-status",
    "initial",
    multiple=True,
    metavar="[REVISION:]STATUS",
    help=(
        "The status of a new task, an active one (default: working), e.g. queued; the"
        " task moves to working when its tool starts. REVISION:STATUS (ext:queued)"
        " sets it for that revision only (repeatable)."
    ),
)
@click.option(
    "--extension-id",
    metavar="ID",
    help=(
        "The Tasks extension's identifier (<reverse-dns>/<name>), where the schema's"
        " title and description name none or several."
    ),
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="[REVISION:]METHOD.PARAM=VALUE",
    help=(
        "The value of a request param the runtime sends on its own, e.g."
        " tasks/cancel.reason=stop (repeatable; REVISION: for one revision of a"
        " package of several, e.g. ext:tasks/cancel.reason=stop)."
    ),
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 with a unified diff when the output is stale.",
)
@click.option(
    "--force",
    is_flag=True,
    help=(
        "Also replace files the generator makes that lack its header (each is listed);"
        " nothing else is ever touched."
    ),
)
def generate(
    schemas: tuple[Path, ...],
    output: Path | None,
    package: str | None,
    revision: str | None,
    templates: Path | None,
    statuses: tuple[str, ...],
    extension_id: str | None,
    initial: tuple[str, ...],
    params: tuple[str, ...],
    check: bool,
    force: bool,
) -> None:
    # A short run that keeps almost everything it makes until it ends: the cyclic
    # garbage collector would walk the growing heap (black's syntax trees above all)
    # again and again for next to nothing, about a tenth of the run's CPU time. It is
    # off while the command runs (and stays off when it was off: see ``run``); what a
    # package leaves behind is collected before the next one.
    enabled = gc.isenabled()
    gc.disable()
    try:
        _generate(
            schemas,
            output,
            package,
            revision,
            templates,
            statuses,
            check,
            force,
            extension_id=extension_id,
            initial=initial,
            params=params,
        )
    finally:
        if enabled:
            gc.enable()


def _generate(
    schemas: tuple[Path, ...],
    output: Path | None,
    package: str | None,
    revision: str | None,
    templates: Path | None,
    statuses: tuple[str, ...],
    check: bool,
    force: bool,
    *,
    extension_id: str | None = None,
    initial: tuple[str, ...] = (),
    params: tuple[str, ...] = (),
) -> None:
    from mcptasks_gen import pipeline, write

    try:
        targets = _targets(
            schemas,
            output,
            package,
            revision,
            templates,
            statuses,
            extension_id=extension_id,
            initial=initial,
            params=params,
        )
        stale = 0
        for i, target in enumerate(targets):
            if i:
                gc.collect()
            files = pipeline.generate(target)
            if check:
                differences = write.check(target.package_dir, files)
                stale += len(differences)
                _report_check(target, files, differences)
            else:
                done = write.write(target.package_dir, files, force=force)
                state = (
                    f"wrote {len(done.written)} of {len(files)} files"
                    if done.written
                    else "up to date"
                )
                if done.removed:
                    state += (
                        f", removed {len(done.removed)} generated"
                        f" file{'s' if len(done.removed) != 1 else ''} no longer made"
                    )
                click.echo(f"{target.package_dir}: {state}")
                for rel in done.replaced:
                    click.echo(f"  replaced (had no generated-file header): {rel}")
    except GenError as exc:
        click.echo(str(exc), err=True)
        sys.exit(2)
    if stale:
        sys.exit(1)


def _targets(
    schemas: tuple[Path, ...] | Path | None,
    output: Path | None,
    package: str | None,
    revision: str | None,
    templates: Path | None,
    statuses: tuple[str, ...] = (),
    *,
    extension_id: str | None = None,
    initial: tuple[str, ...] = (),
    params: tuple[str, ...] = (),
) -> tuple[Target, ...]:
    """Resolve what to generate: explicit options, else pyproject targets, else the
    default."""
    if isinstance(schemas, Path):
        schemas = (schemas,)
    schemas = tuple(schemas or ())
    cwd = Path.cwd()
    forced = check_revision(revision, Location(file="--revision"))
    explicit = (
        bool(schemas)
        or any(v is not None for v in (output, package, revision, templates))
        or bool(statuses)
        or extension_id is not None
        or bool(initial)
        or bool(params)
    )
    classified = check_statuses(list(statuses), Location(file="--status"))
    first = check_initial(list(initial), Location(file="--initial-status"))
    if extension_id is not None:
        check_form(extension_id, Location(file="--extension-id"))
    configured = check_params(list(params), Location(file="--param"))
    if not explicit:
        config = find_pyproject(cwd)
        if config is not None:
            return targets_from_pyproject(config, cwd)
    if package is not None:
        check_package_name(package, Location(file="--package"))
    if forced is not None and len(schemas) > 1:
        raise fail(
            f"forces the revision of one schema; with {len(schemas)} schemas each is"
            " detected",
            Location(file="--revision"),
        )
    if schemas:
        sources = [(schema, _schema_label(schema)) for schema in _read_once(schemas)]
    elif forced is not None:
        sources = [(embedded_schema(forced), f"embedded schema {forced}")]
    else:
        sources = [
            (embedded_schema(r), f"embedded schema {r}") for r in DEFAULT_SCHEMAS
        ]
    command = ["mcptasks-gen generate", *(str(schema) for schema in schemas)]
    if output is not None:
        command.append(f"-o {output}")
    if package is not None:
        command.append(f"--package {package}")
    if revision is not None:
        command.append(f"--revision {revision}")
    if templates is not None:
        command.append(f"--templates {templates}")
    command.extend(f"--status {status}={klass}" for status, klass in classified)
    if extension_id is not None:
        command.append(f"--extension-id {extension_id}")
    command.extend(
        f"--initial-status {f'{rev}:' if rev else ''}{status}" for rev, status in first
    )
    command.extend(f"--param {shlex.quote(p)}" for p in params)
    return (
        Target(
            schema=sources[0][0],
            schema_label=sources[0][1],
            output=output if output is not None else Path("."),
            package=package or "mcp_tasks",
            revision=forced,
            templates=templates,
            regenerate=" ".join(command),
            statuses=classified,
            also=tuple(sources[1:]),
            extension_id=extension_id or "",
            initial=first,
            params=configured,
        ),
    )


def _schema_label(schema: Path) -> str:
    """How a schema argument is named in messages and headers (``-`` is standard
    input)."""
    return STDIN_NAME if str(schema) == STDIN else str(schema)


def _read_once(schemas: tuple[Path, ...]) -> tuple[Path, ...]:
    """The schema arguments, refusing ``-`` twice: standard input can be read only
    once."""
    if sum(str(schema) == STDIN for schema in schemas) > 1:
        raise fail(
            'standard input ("-") given as more than one schema; it can be read only'
            " once",
            Location(file=STDIN_NAME),
        )
    return schemas


def _report_check(target: Target, files: dict[str, str], differences: list) -> None:  # type: ignore[type-arg]
    """Print what ``--check`` found for one target."""
    if not differences:
        click.echo(f"{target.package_dir}: up to date")
        return
    for difference in differences:
        if difference.diff:
            click.echo(difference.diff, nl=False)
    click.echo(f"{target.package_dir}: stale ({len(differences)} files)")
    for difference in differences:
        click.echo(f"  {difference.status}: {difference.path}")
    found = next((d for d in differences if d.header), None)
    wanted = (
        "\n".join(files[found.path].split("\n", 2)[:2])
        if found is not None and found.path in files
        else ""
    )
    for reason in _why_stale(found.header if found is not None else "", wanted):
        click.echo(f"  reason: {reason}")
    click.echo(f"  refresh with: {target.regenerate}")


def _why_stale(found: str, wanted: str) -> list[str]:
    """Which recorded input changed: the schema's sha256, the generator version, or
    neither."""
    from mcptasks_gen.write import header_fields

    old, new = header_fields(found), header_fields(wanted)
    reasons = []
    if old and new:
        if old.get("sha256") != new.get("sha256"):
            reasons.append(
                f"schema changed (sha256 {old.get('sha256', '?')[:12]} ->"
                f" {new.get('sha256', '?')[:12]})"
            )
        if old.get("version") != new.get("version"):
            reasons.append(
                f"generator version changed ({old.get('version')} ->"
                f" {new.get('version')})"
            )
        if not reasons and old.get("schema") != new.get("schema"):
            reasons.append(
                f"only the schema's path in the headers changed ({old.get('schema')} ->"
                f" {new.get('schema')}); the schema itself is the same"
            )
        if not reasons:
            reasons.append(
                "same schema and generator version: the files were edited, or templates"
                " changed"
            )
    return reasons


DIFF_HELP = """Compare the generated API of two schemas; judge each change for clients
and servers.

OLD and NEW are schema files (official MCP schemas or the project's own, in any mix);
both are read through the same stages as `generate`, so the comparison is of the
generated classes, fields, enum and Literal values, methods, notifications and error
codes, never of the schema text. Descriptions and ordering never count as changes.

Every change is classified twice: breaking or compatible for client code, and for
server code (e.g. an added status value breaks a client's exhaustive handling but no
server; a new required field breaks whoever builds the object). Renames (`ttl` ->
`ttlMs`, `notifications/tasks/status` -> `notifications/tasks`) and a nested object
moved to the top level are reported as such. The rules are listed in the docstring of
mcptasks_gen.apidiff.

\b
Exit status:
  0  nothing breaks a client or a server
  1  something breaks a client or a server
  2  bad input (one line on stderr: the file, and the JSON pointer where it applies)

\b
Examples:
  mcptasks-gen diff schema/2025-11-25/schema.json schema/ext-2026-07-28/schema.json
  mcptasks-gen diff old.json new.json --format markdown > api-changes.md
  mcptasks-gen diff old.json new.json --format json \\
      | jq '.changes[] | select(.client == "breaking")'
  git show main:schema.json > /tmp/old.json
  mcptasks-gen diff /tmp/old.json schema.json
"""


@main.command(help=DIFF_HELP)
@click.argument("old", type=click.Path(dir_okay=True, path_type=Path))
@click.argument("new", type=click.Path(dir_okay=True, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="Report format; text is coloured only on a terminal.",
)
@click.option(
    "--revision-old",
    metavar="R",
    help=(
        f"Force the Tasks revision of OLD ({', '.join(REGISTRY)}) instead of"
        " detecting it."
    ),
)
@click.option(
    "--revision-new",
    metavar="R",
    help=(
        f"Force the Tasks revision of NEW ({', '.join(REGISTRY)}) instead of"
        " detecting it."
    ),
)
@click.option(
    "--extension-id-old",
    metavar="ID",
    help="The extension identifier of OLD, where its title and description name none"
    " or several.",
)
@click.option(
    "--extension-id-new",
    metavar="ID",
    help="The extension identifier of NEW, where its title and description name none"
    " or several.",
)
def diff(
    old: Path,
    new: Path,
    fmt: str,
    revision_old: str | None,
    revision_new: str | None,
    extension_id_old: str | None,
    extension_id_new: str | None,
) -> None:
    import os

    from mcptasks_gen import apidiff, pipeline, report

    try:
        packages = []
        _read_once((old, new))
        for schema, revision, option, extension_id in (
            (old, revision_old, "--revision-old", extension_id_old),
            (new, revision_new, "--revision-new", extension_id_new),
        ):
            forced = check_revision(revision, Location(file=option))
            if extension_id is not None:
                check_form(
                    extension_id,
                    Location(file=option.replace("revision", "extension-id")),
                )
            target = Target(
                schema=schema,
                schema_label=_schema_label(schema),
                output=Path("."),
                package="mcp_tasks",
                revision=forced,
                templates=None,
                regenerate="",
                extension_id=extension_id or "",
            )
            packages.append(pipeline.build(target))
        result = apidiff.compare(packages[0], packages[1])
    except GenError as exc:
        click.echo(str(exc), err=True)
        sys.exit(2)
    color = fmt == "text" and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    click.echo(report.render(result, fmt, color=color), nl=False, color=color)
    sys.exit(1 if result.breaking else 0)
