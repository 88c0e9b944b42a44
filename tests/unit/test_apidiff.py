"""``mcptasks-gen diff``: the comparison rules, the 2025-11-25 -> extension report, the
CLI.

The goldens ``tests/golden/diff-2025-11-25-to-ext.{md,json}`` are the CLI's own output,
run from the repository root; refresh them with ``python -m tests.unit.test_apidiff``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcptasks_gen import apidiff, ir, pipeline, report
from mcptasks_gen.cli import main
from mcptasks_gen.config import Target
from mcptasks_gen.naming import ClassName, PyIdent
from tests.support.typetext import parse

ROOT = Path(__file__).resolve().parents[2]
CORE = Path("schema/2025-11-25/schema.json")
EXT = Path("schema/ext-2026-07-28/schema.json")
GOLDEN = ROOT / "tests" / "golden"
GOLDEN_CASES = {"md": "markdown", "json": "json"}
ERRORS = GOLDEN / "errors"


def build(schema: Path) -> ir.Package:
    """The IR of a schema (paths relative to the repository root)."""
    path = schema if schema.is_absolute() else ROOT / schema
    return pipeline.build(
        Target(
            schema=path,
            schema_label=str(schema),
            output=Path("."),
            package="mcp_tasks",
            revision=None,
            templates=None,
            regenerate="",
        )
    )


@pytest.fixture(scope="module")
def core() -> ir.Package:
    return build(CORE)


@pytest.fixture(scope="module")
def ext() -> ir.Package:
    return build(EXT)


@pytest.fixture(scope="module")
def forward(core: ir.Package, ext: ir.Package) -> apidiff.Diff:
    """2025-11-25 -> extension."""
    return apidiff.compare(core, ext)


def invoke(*args: str) -> tuple[int, str, str]:
    """Run the CLI in-process from the repository root; exit code, stdout, stderr."""
    old = Path.cwd()
    os.chdir(ROOT)
    try:
        result = CliRunner().invoke(main, list(args))
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def find(diff: apidiff.Diff, kind: str, subject: str) -> apidiff.Change:
    """The one change of ``kind`` on ``subject``."""
    hits = [c for c in diff.changes if c.kind == kind and c.subject == subject]
    assert (
        len(hits) == 1
    ), f"{kind} {subject}: {hits or [(c.kind, c.subject) for c in diff.changes]}"
    return hits[0]


def verdicts(change: apidiff.Change) -> tuple[str, str]:
    return change.client, change.server


# -- helpers that edit a built package, for rule tests ---------------------------------


def edit_model(pkg: ir.Package, name: str, **changes: object) -> ir.Package:
    models = tuple(
        dataclasses.replace(m, **changes) if m.name == name else m  # type: ignore[arg-type]
        for m in pkg.models
    )
    return dataclasses.replace(pkg, models=models)


def edit_field(pkg: ir.Package, model: str, wire: str, **changes: object) -> ir.Package:
    target = next(m for m in pkg.models if m.name == model)
    assert isinstance(target, ir.ObjectModel)
    fields = tuple(
        dataclasses.replace(f, **changes) if f.wire_name == wire else f  # type: ignore[arg-type]
        for f in target.fields
    )
    return edit_model(pkg, model, fields=fields)


def add_field(pkg: ir.Package, model: str, field: ir.Field) -> ir.Package:
    target = next(m for m in pkg.models if m.name == model)
    assert isinstance(target, ir.ObjectModel)
    return edit_model(pkg, model, fields=(*target.fields, field))


def drop_field(pkg: ir.Package, model: str, wire: str) -> ir.Package:
    target = next(m for m in pkg.models if m.name == model)
    assert isinstance(target, ir.ObjectModel)
    return edit_model(
        pkg, model, fields=tuple(f for f in target.fields if f.wire_name != wire)
    )


def new_field(
    wire: str, annotation: str, *, required: bool = False, name: str | None = None
) -> ir.Field:
    from mcptasks_gen.errors import Location

    return ir.Field(
        name=PyIdent(name or wire.lower()),
        wire_name=wire,
        annotation=parse(annotation if required else annotation + " | None"),
        required=required,
        constant=False,
        doc="",
        loc=Location(file="test"),
    )


# -- the 2025-11-25 -> extension report (the issue's list) -----------------------------


def test_forward_reports_the_issue_list(forward: apidiff.Diff) -> None:
    """tasks/result and tasks/list removed, tasks/update added, renames,
    CreateTaskResult flattened."""
    assert verdicts(find(forward, "method-removed", "tasks/result")) == (
        "breaking",
        "compatible",
    )
    assert verdicts(find(forward, "method-removed", "tasks/list")) == (
        "breaking",
        "compatible",
    )
    assert verdicts(find(forward, "method-added", "tasks/update")) == (
        "compatible",
        "breaking",
    )
    renamed = find(forward, "method-renamed", "notifications/tasks/status")
    assert (renamed.old, renamed.new) == (
        "notifications/tasks/status",
        "notifications/tasks",
    )
    ttl = find(forward, "field-renamed", "Task.ttl")
    assert (ttl.old, ttl.new, ttl.flow) == ("ttl", "ttlMs", "server->client")
    poll = find(forward, "field-renamed", "Task.pollInterval")
    assert (poll.old, poll.new) == ("pollInterval", "pollIntervalMs")
    inlined = find(forward, "field-inlined", "CreateTaskResult.task")
    assert verdicts(inlined) == ("breaking", "breaking")
    assert (
        "ttlMs (was ttl)" in inlined.detail
        and "pollIntervalMs (was pollInterval)" in inlined.detail
    )
    # the moved fields are folded into that one change, not listed again
    assert not [
        c
        for c in forward.changes
        if c.subject in ("CreateTaskResult.taskId", "CreateTaskResult.ttlMs")
    ]
    assert find(forward, "type-kind-changed", "GetTaskResult").new == "root"
    assert len(find(forward, "error-code-added", "ErrorCode.HEADER_MISMATCH").new) > 0
    assert forward.breaking


def test_forward_ignores_order_and_prose(forward: apidiff.Diff) -> None:
    """TaskStatus lists its values in another order and with other prose: not a
    change."""
    assert not [
        c
        for c in forward.changes
        if c.subject == "TaskStatus" or c.subject.startswith("TaskStatus.")
    ]
    assert not [
        c for c in forward.changes if c.subject == "ElicitRequest.params"
    ]  # union members reordered


def test_backward_reports_nesting(ext: ir.Package, core: ir.Package) -> None:
    """The reverse direction: the fields move back into ``task``, tasks/update goes
    away."""
    back = apidiff.compare(ext, core)
    nested = find(back, "field-nested", "CreateTaskResult.task")
    assert "ttlMs (now ttl)" in nested.detail
    assert verdicts(find(back, "method-removed", "tasks/update")) == (
        "breaking",
        "compatible",
    )
    assert verdicts(find(back, "error-code-removed", "ErrorCode.HEADER_MISMATCH")) == (
        "breaking",
        "breaking",
    )


def test_same_schema_has_no_changes(ext: ir.Package) -> None:
    diff = apidiff.compare(ext, ext)
    assert diff.changes == () and not diff.breaking
    assert report.summary_line(diff) == "no API changes"


@pytest.mark.official_schemas
def test_official_core_schema_matches_the_project_one(
    core: ir.Package, shared: Path
) -> None:
    """Any mix of inputs: the official 2025-11-25 schema has the same Tasks API as
    ours."""
    official = build(shared / "schemas" / "mcp-2025-11-25.schema.json")
    assert apidiff.compare(core, official).changes == ()


# -- the rules, one by one, on edited copies of the extension's IR ---------------------


def test_added_status_value_breaks_clients_only(ext: ir.Package) -> None:
    status = next(m for m in ext.models if m.name == "TaskStatus")
    assert isinstance(status, ir.EnumModel)
    member = ir.EnumMember(name=PyIdent("PAUSED"), value="'paused'", raw="paused")
    diff = apidiff.compare(
        ext, edit_model(ext, "TaskStatus", members=(*status.members, member))
    )
    change = find(diff, "value-added", "TaskStatus")
    assert (change.new, change.flow) == ("paused", "server->client")
    assert verdicts(change) == ("breaking", "compatible")
    back = find(
        apidiff.compare(
            edit_model(ext, "TaskStatus", members=(*status.members, member)), ext
        ),
        "value-removed",
        "TaskStatus",
    )
    assert verdicts(back) == ("compatible", "breaking")


def test_added_literal_value_in_a_request_breaks_servers_only(ext: ir.Package) -> None:
    """ElicitResult travels client->server (inside tasks/update): the server reads
    it."""
    changed = edit_field(
        ext,
        "ElicitResult",
        "action",
        annotation=parse("Literal['accept', 'cancel', 'decline', 'defer']"),
    )
    change = find(apidiff.compare(ext, changed), "value-added", "ElicitResult.action")
    assert (change.new, change.flow) == ('"defer"', "client->server")
    assert verdicts(change) == ("compatible", "breaking")


def test_added_optional_field_is_compatible_for_both(ext: ir.Package) -> None:
    diff = apidiff.compare(
        ext,
        add_field(ext, "Task", new_field("progressNote", "str", name="progress_note")),
    )
    assert [(c.kind, verdicts(c)) for c in diff.changes] == [
        ("field-added", ("compatible", "compatible"))
    ]
    assert not diff.breaking


def test_added_required_field_breaks_the_producer(ext: ir.Package) -> None:
    to_server = find(
        apidiff.compare(
            ext,
            add_field(
                ext, "GetTaskRequestParams", new_field("scope", "str", required=True)
            ),
        ),
        "field-added",
        "GetTaskRequestParams.scope",
    )
    assert verdicts(to_server) == ("breaking", "compatible")
    to_client = find(
        apidiff.compare(
            ext,
            add_field(
                ext, "GetTaskResultWorking", new_field("owner", "str", required=True)
            ),
        ),
        "field-added",
        "GetTaskResultWorking.owner",
    )
    assert verdicts(to_client) == ("compatible", "breaking")


def test_optional_to_required_and_back(ext: ir.Package) -> None:
    made_required = edit_field(
        ext,
        "GetTaskResultWorking",
        "statusMessage",
        required=True,
        annotation=parse("str"),
    )
    assert verdicts(
        find(
            apidiff.compare(ext, made_required),
            "field-required",
            "GetTaskResultWorking.statusMessage",
        )
    ) == ("compatible", "breaking")
    assert verdicts(
        find(
            apidiff.compare(made_required, ext),
            "field-optional",
            "GetTaskResultWorking.statusMessage",
        )
    ) == ("breaking", "compatible")
    diff = apidiff.compare(ext, made_required)
    assert [c.kind for c in diff.changes] == [
        "field-required"
    ], "the None every optional field allows is not a type change"


def test_removed_field_breaks_both(ext: ir.Package) -> None:
    change = find(
        apidiff.compare(ext, drop_field(ext, "Task", "statusMessage")),
        "field-removed",
        "Task.statusMessage",
    )
    assert verdicts(change) == ("breaking", "breaking")


def test_wire_rename_keeping_the_attribute(ext: ir.Package) -> None:
    """``taskId`` -> ``task_id`` keeps attribute ``task_id``: one rename, not a
    remove and an add."""
    diff = apidiff.compare(ext, edit_field(ext, "Task", "taskId", wire_name="task_id"))
    change = find(diff, "field-renamed", "Task.taskId")
    assert "attribute task_id unchanged" in change.detail
    assert len(diff.changes) == 1


def test_unrelated_remove_and_add_is_not_a_rename(ext: ir.Package) -> None:
    changed = add_field(
        drop_field(ext, "Task", "statusMessage"),
        "Task",
        new_field("statusNote", "str", name="status_note"),
    )
    kinds = sorted(c.kind for c in apidiff.compare(ext, changed).changes)
    assert kinds == ["field-added", "field-removed"]


def test_retyped_field_wider_narrower_other(ext: ir.Package) -> None:
    working = "GetTaskResultWorking"
    wider = find(
        apidiff.compare(
            ext, edit_field(ext, working, "createdAt", annotation=parse("str | int"))
        ),
        "field-retyped",
        f"{working}.createdAt",
    )
    assert (
        verdicts(wider) == ("breaking", "compatible") and "now also int" in wider.detail
    )  # clients read it
    narrower = find(
        apidiff.compare(
            edit_field(ext, working, "createdAt", annotation=parse("str | int")), ext
        ),
        "field-retyped",
        f"{working}.createdAt",
    )
    assert verdicts(narrower) == ("compatible", "breaking")
    other = find(
        apidiff.compare(
            ext, edit_field(ext, working, "createdAt", annotation=parse("int"))
        ),
        "field-retyped",
        f"{working}.createdAt",
    )
    assert verdicts(other) == ("breaking", "breaking")


def test_union_variant_added(ext: ir.Package) -> None:
    union = next(m for m in ext.models if m.name == "GetTaskResult")
    assert isinstance(union, ir.RootModel)
    grown = parse(
        union.annotation.render().replace(
            "GetTaskResultCancelled", "GetTaskResultCancelled | WorkingTask2", 1
        )
    )
    change = find(
        apidiff.compare(ext, edit_model(ext, "GetTaskResult", annotation=grown)),
        "root-retyped",
        "GetTaskResult",
    )
    assert (
        verdicts(change) == ("breaking", "compatible")
        and "WorkingTask2" in change.detail
    )


def test_closed_object(ext: ir.Package) -> None:
    change = find(
        apidiff.compare(ext, edit_model(ext, "GetTaskRequestParams", closed=True)),
        "type-closed",
        "GetTaskRequestParams",
    )
    assert verdicts(change) == ("breaking", "compatible")


def test_error_codes(ext: ir.Package) -> None:
    codes = ext.error_codes
    renumbered = tuple(
        dataclasses.replace(c, code=-32099) if c.name == "HEADER_MISMATCH" else c
        for c in codes
    )
    change = find(
        apidiff.compare(ext, dataclasses.replace(ext, error_codes=renumbered)),
        "error-code-changed",
        "ErrorCode.HEADER_MISMATCH",
    )
    assert (change.old, change.new, verdicts(change)) == (
        "-32020",
        "-32099",
        ("breaking", "breaking"),
    )


def test_method_kinds(ext: ir.Package) -> None:
    update = next(m for m in ext.methods if m.name == "tasks/update")
    frob = dataclasses.replace(
        update, name="tasks/frobnicate", message=ClassName("FrobnicateTaskRequest")
    )
    note = dataclasses.replace(
        update,
        name="notifications/tasks/frobnicated",
        notification=True,
        message=ClassName("FrobnicatedNotification"),
        result="None",
    )
    diff = apidiff.compare(
        ext, dataclasses.replace(ext, methods=(*ext.methods, frob, note))
    )
    assert verdicts(find(diff, "method-added", "tasks/frobnicate")) == (
        "compatible",
        "breaking",
    )
    assert verdicts(find(diff, "method-added", "notifications/tasks/frobnicated")) == (
        "compatible",
        "compatible",
    )
    as_notification = dataclasses.replace(
        ext,
        methods=tuple(
            (
                dataclasses.replace(m, notification=True, result="None")
                if m.name == "tasks/update"
                else m
            )
            for m in ext.methods
        ),
    )
    assert verdicts(
        find(
            apidiff.compare(ext, as_notification), "method-kind-changed", "tasks/update"
        )
    ) == ("breaking", "breaking")


def test_change_records_are_frozen(forward: apidiff.Diff) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        forward.changes[0].kind = "x"  # type: ignore[misc]


# -- reports ---------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", sorted(GOLDEN_CASES))
def test_golden_report(suffix: str) -> None:
    """The CLI's 2025-11-25 -> extension report equals the committed golden."""
    code, out, err = invoke(
        "diff", str(CORE), str(EXT), "--format", GOLDEN_CASES[suffix]
    )
    assert (code, err) == (1, "")
    golden = GOLDEN / f"diff-2025-11-25-to-ext.{suffix}"
    assert out == golden.read_text(
        encoding="utf-8"
    ), "refresh with: python -m tests.unit.test_apidiff"


def test_json_keys_are_stable(forward: apidiff.Diff) -> None:
    doc = json.loads(report.to_json(forward))
    assert list(doc) == ["format", "old", "new", "breaking", "summary", "changes"]
    assert doc["format"] == "mcptasks-gen-diff/1"
    assert list(doc["old"]) == ["schema", "revision", "sha256"]
    assert list(doc["summary"]) == [
        "changes",
        "breaking",
        "breaking_for_client",
        "breaking_for_server",
        "compatible",
    ]
    assert {tuple(c) for c in doc["changes"]} == {
        (
            "kind",
            "category",
            "subject",
            "client",
            "server",
            "flow",
            "old",
            "new",
            "detail",
        )
    }
    assert {c["category"] for c in doc["changes"]} <= {
        "extension",
        "methods",
        "errors",
        "types",
        "fields",
        "values",
    }
    s = doc["summary"]
    assert s["changes"] == len(doc["changes"]) == s["breaking"] + s["compatible"]


def test_text_report_and_colour(forward: apidiff.Diff) -> None:
    plain = report.to_text(forward)
    assert "\x1b[" not in plain
    assert (
        plain.splitlines()[0]
        == "API diff 2025-11-25 (schema/2025-11-25/schema.json) -> ext-2026-07-28"
        " (schema/ext-2026-07-28/schema.json)"
    )
    assert "Methods and notifications (5)" in plain and plain.endswith(
        "result: breaking\n"
    )
    coloured = report.to_text(forward, color=True)
    assert "\x1b[31m" in coloured and "\x1b[32m" in coloured


def test_markdown_escapes_pipes(forward: apidiff.Diff) -> None:
    md = report.to_markdown(forward)
    rows = [
        line for line in md.splitlines() if line.startswith("| ") and "---" not in line
    ]
    assert rows and all(line.replace("\\|", "").count("|") == 6 for line in rows)


# -- the command line ------------------------------------------------------------------


def test_exit_zero_when_nothing_breaks(tmp_path: Path) -> None:
    """Descriptions only: no API change, exit 0."""
    raw = json.loads((ROOT / EXT).read_text(encoding="utf-8"))
    raw["$defs"]["Task"]["description"] = "Edited prose."
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(raw), encoding="utf-8")
    code, out, err = invoke("diff", str(EXT), str(edited))
    assert (code, err) == (0, "") and "no API changes" in out


def test_exit_zero_for_compatible_changes(tmp_path: Path) -> None:
    raw = json.loads((ROOT / EXT).read_text(encoding="utf-8"))
    raw["$defs"]["Task"]["properties"]["progressNote"] = {"type": "string"}
    grown = tmp_path / "grown.json"
    grown.write_text(json.dumps(raw), encoding="utf-8")
    code, out, _ = invoke("diff", str(EXT), str(grown), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and not doc["breaking"] and doc["summary"]["compatible"] >= 1


@pytest.mark.parametrize("case", sorted(ERRORS.glob("*.json")), ids=lambda p: p.stem)
def test_bad_input_reuses_the_loader_errors(case: Path) -> None:
    """Each bad schema, as OLD or as NEW: exit 2 and the same one line ``generate``
    prints."""
    expected = case.with_suffix(".stderr").read_text(encoding="utf-8")
    rel = str(case.relative_to(ROOT))
    for args in ((rel, str(EXT)), (str(EXT), rel)):
        code, out, err = invoke("diff", *args)
        assert (code, out, err) == (2, "", expected)


def test_bad_input_missing_file_and_revision(tmp_path: Path) -> None:
    code, _, err = invoke("diff", str(tmp_path / "nope.json"), str(EXT))
    assert (code, err) == (2, f"{tmp_path / 'nope.json'}: error: no such file\n")
    code, _, err = invoke("diff", str(CORE), str(EXT), "--revision-old", "1999")
    assert (
        code == 2
        and err.startswith('--revision-old: error: unknown revision "1999"')
        and err.count("\n") == 1
    )
    code, _, err = invoke("diff", str(EXT), str(EXT), "--revision-new", "2025-11-25")
    assert (
        code == 2
        and err == f"{EXT}#/: error: schema is revision ext-2026-07-28 (it has"
        " notifications/tasks), not 2025-11-25\n"
    )
    code, _, err = invoke("diff", str(EXT))
    assert code == 2 and "Missing argument 'NEW'" in err


def test_forced_revisions_are_accepted() -> None:
    code, out, _ = invoke(
        "diff",
        str(CORE),
        str(EXT),
        "--revision-old",
        "2025",
        "--revision-new",
        "extension",
        "--format",
        "json",
    )
    doc = json.loads(out)
    assert code == 1 and (doc["old"]["revision"], doc["new"]["revision"]) == (
        "2025-11-25",
        "ext-2026-07-28",
    )


def test_help_has_examples_and_exit_codes() -> None:
    code, out, _ = invoke("diff", "--help")
    assert code == 0
    assert "Examples:" in out and "--format markdown" in out and "bad input" in out


def regen() -> None:
    """Rewrite the diff goldens with the CLI, from the repository root."""
    for suffix, fmt in GOLDEN_CASES.items():
        code, out, err = invoke("diff", str(CORE), str(EXT), "--format", fmt)
        if code not in (0, 1):
            sys.exit(err)
        (GOLDEN / f"diff-2025-11-25-to-ext.{suffix}").write_text(out, encoding="utf-8")
        print(f"diff-2025-11-25-to-ext.{suffix}: {len(out.splitlines())} lines")


if __name__ == "__main__":
    regen()


# -- the mutations of test_mutations, seen by the diff ---------------------------------

EXPECTED_FOR_MUTATION = {
    # mutation: {(kind, subject, client, server)} for the 2025 schema / the extension
    "reorder_defs": (set(), set()),
    "edit_descriptions": (set(), set()),
    "add_status_value": (
        {("value-added", "TaskStatus", "breaking", "compatible")},
        {
            # the extension carries a variant per status: PausedTask joins the status
            # unions
            ("value-added", "TaskStatus", "breaking", "compatible"),
            *{
                ("type-added", name, "compatible", "compatible")
                for name in (
                    "PausedTask",
                    "GetTaskResultPaused",
                    "TaskStatusNotificationParamsPaused",
                )
            },
            ("root-retyped", "DetailedTask", "breaking", "breaking"),
            ("root-retyped", "GetTaskResult", "breaking", "compatible"),
            ("root-retyped", "TaskStatusNotificationParams", "breaking", "breaking"),
            (
                "field-retyped",
                "TaskStatusNotification.params",
                "breaking",
                "compatible",
            ),
            ("method-params-changed", "notifications/tasks", "breaking", "compatible"),
        },
    ),
    "add_optional_field": (
        {
            ("field-added", f"{m}.progressNote", "compatible", "compatible")
            for m in (
                "Task",
                "GetTaskResult",
                "CancelTaskResult",
                "TaskStatusNotificationParams",
            )
        },
        {("field-added", "Task.progressNote", "compatible", "compatible")},
    ),
    "add_method": (
        {
            ("method-added", "tasks/frobnicate", "compatible", "breaking"),
            *{
                ("type-added", f"FrobnicateTask{s}", "compatible", "compatible")
                for s in ("Request", "RequestParams", "Result")
            },
        },
        {
            ("method-added", "tasks/frobnicate", "compatible", "breaking"),
            *{
                ("type-added", f"FrobnicateTask{s}", "compatible", "compatible")
                for s in ("Request", "RequestParams", "Result")
            },
        },
    ),
    "drop_field": (
        {("field-removed", "Tool.title", "breaking", "breaking")},
        {("field-removed", "Tool.title", "breaking", "breaking")},
    ),
}


@pytest.mark.parametrize("mutation", sorted(EXPECTED_FOR_MUTATION))
@pytest.mark.parametrize("schema", [CORE, EXT], ids=["2025", "ext"])
def test_diff_of_each_mutation(schema: Path, mutation: str, tmp_path: Path) -> None:
    """The same mutated schemas the stability tests generate: exactly the expected
    changes."""
    from tests.integration.test_mutations import MUTATIONS

    raw = json.loads((ROOT / schema).read_text(encoding="utf-8"))
    mutated, _ = MUTATIONS[mutation](raw)
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(mutated), encoding="utf-8")
    diff = apidiff.compare(build(schema), build(path))
    expected = EXPECTED_FOR_MUTATION[mutation][0 if schema == CORE else 1]
    assert {(c.kind, c.subject, c.client, c.server) for c in diff.changes} == expected


def test_pre_commit_hook_runs_the_check() -> None:
    """``.pre-commit-hooks.yaml`` exposes ``generate --check`` with options the CLI
    accepts."""
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load(
        (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    )
    (hook,) = [h for h in hooks if h["id"] == "mcptasks-gen-check"]
    assert hook["entry"] == "mcptasks-gen generate --check"
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    code, out, _ = invoke(*hook["entry"].split()[1:], "--help")
    assert code == 0 and "--check" in out


def test_annotation_terms_and_relations() -> None:
    """Union members are compared as sets: order, ``Annotated`` and quoting do not
    matter."""

    def terms(text: str) -> frozenset[str]:
        return frozenset(t.render() for t in apidiff.terms(parse(text)))

    assert terms("Literal['a|b', 'c'] | None") == {
        'Literal["a|b"]',
        'Literal["c"]',
        "None",
    }
    assert apidiff.terms(parse("Literal['c']")) == apidiff.terms(
        parse('Literal["c"]')
    )  # one value, either spelling
    assert terms('Annotated[B | A, Field(discriminator="status")]') == {"A", "B"}
    assert apidiff.terms(parse("'list[B | A]'")) == apidiff.terms(
        parse("list[A | B]")
    ) and terms("list[A | B]") == {"list[A | B]"}
    assert terms("Literal[1] | Literal[True]") == {"Literal[1]", "Literal[True]"}

    def relation(old: str, new: str) -> str:
        return apidiff.relation(apidiff.terms(parse(old)), apidiff.terms(parse(new)))

    assert relation("list[A]", "list[A | B]") == "wider"
    assert relation("dict[str, A | B]", "dict[str, A]") == "narrower"
    assert relation("A | list[B]", "C | list[B | D]") == "different"
    assert relation("dict[str, Any]", "Any") == "wider"


def test_notification_params_are_judged_from_the_sender(ext: ir.Package) -> None:
    """A notification's params flow from its sender (the server), the same way as the
    message's ``params`` field: the method verdict and the field verdict agree (issue 9,
    item 18).
    """
    method = next(m for m in ext.methods if m.notification)
    message = next(m for m in ext.models if m.name == method.message)
    assert isinstance(message, ir.ObjectModel)
    wider = parse(method.params.render() + " | dict[str, Any]")
    new = edit_field(ext, message.name, "params", annotation=wider)
    new = dataclasses.replace(
        new,
        methods=tuple(
            dataclasses.replace(m, params=wider) if m.name == method.name else m
            for m in new.methods
        ),
    )
    diff = apidiff.compare(ext, new)
    field = find(diff, "field-retyped", f"{message.name}.params")
    params = find(diff, "method-params-changed", method.name)
    assert (
        verdicts(field) == verdicts(params) == ("breaking", "compatible")
    )  # readers (clients) see new values
