"""Unit tests, one group per pipeline stage: small inputs in, exact outputs out."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mcptasks_gen import ir, render, write
from mcptasks_gen import typeexpr as tx
from mcptasks_gen.config import Target
from mcptasks_gen.detect import detect, scan
from mcptasks_gen.errors import GenError, Location
from mcptasks_gen.extract import extract
from mcptasks_gen.load import load, walk
from mcptasks_gen.naming import (
    ClassName,
    PyIdent,
    class_name,
    enum_member,
    field_ident,
    pascal,
    snake,
)
from mcptasks_gen.normalize import normalize
from mcptasks_gen.revisions import CORE_2025_11_25, EXTENSION

ROOT = Path(__file__).resolve().parents[2]


def _schema(tmp_path: Path, defs: dict[str, Any]) -> Path:
    path = tmp_path / "schema.json"
    path.write_text(
        json.dumps(
            {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                # what an extension schema's package declares
                "description": "Extension Identifier: io.modelcontextprotocol/tasks",
                "$defs": defs,
            }
        )
    )
    return path


def _package(tmp_path: Path, defs: dict[str, Any]) -> ir.Package:
    path = _schema(tmp_path, defs)
    doc = load(path, "s.json")
    target = Target(
        schema=path,
        schema_label="s.json",
        output=tmp_path,
        package="p",
        revision=None,
        templates=None,
        regenerate="x",
    )
    found = scan(doc)
    return normalize(extract(found, detect(found)), target, ())


def _model(package: ir.Package, name: str) -> ir.Model:
    return next(m for m in package.models if m.name == name)


TASK_GET = {
    "type": "object",
    "properties": {
        "method": {"const": "tasks/update", "type": "string"},
        "id": {"type": "integer"},
        "params": {
            "type": "object",
            "properties": {"taskId": {"type": "string"}},
            "required": ["taskId"],
        },
    },
    "required": ["method", "id", "params"],
}


# -- naming ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "ident"),
    [
        ("taskId", "task_id"),
        ("_meta", "meta"),
        ("lastUpdatedAt", "last_updated_at"),
        ("io.modelcontextprotocol/serverInfo", "server_info"),
        ("class", "class_"),
        ("schema", "schema_"),
        ("model_hint", "model_hint_"),
        ("2fa", "f_2fa"),
        ("URLMode", "url_mode"),
    ],
)
def test_field_ident(wire: str, ident: str) -> None:
    assert field_ident(wire) == ident


def test_case_conversion_and_validation() -> None:
    assert snake("pollIntervalMs") == "poll_interval_ms"
    assert (
        pascal("input_required") == "InputRequired"
        and pascal("tasks/get") == "TasksGet"
    )
    assert enum_member("input_required") == "INPUT_REQUIRED"
    assert class_name("GetTaskRequest", "params") == "GetTaskRequestParams"
    for bad in ("1x", "a-b", "class", ""):
        with pytest.raises(ValueError):
            PyIdent(bad)
    with pytest.raises(ValueError):
        ClassName("lower")


# -- load -----------------------------------------------------------------------------


def test_load_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{\n  "$defs": {\n    "A": [1,]\n  }\n}\n')
    with pytest.raises(GenError) as info:
        load(path, "s.json")
    assert str(info.value.loc) == "s.json:3:13"


def test_walk_tells_keywords_from_property_names() -> None:
    """A property called ``type`` or ``$ref`` is a name, not a keyword, and its value
    is a schema."""
    node = {
        "type": "object",
        "properties": {
            "type": {"type": "string"},
            "$ref": {"const": {"type": "tuple"}},
        },
    }
    pointers = [loc.pointer for _, loc in walk(node, Location(file="f", pointer=""))]
    assert pointers == ["", "/properties/type", "/properties/$ref"]


def test_subschemas_visit_what_walk_visits_in_the_same_order() -> None:
    """``subschemas`` (no locations) is ``walk`` without the locations, on the
    official schemas and on every kind of keyword, including the draft-07 tuple form
    of ``items``."""
    from mcptasks_gen.load import subschemas

    node = {
        "allOf": [{"items": [{"type": "string"}, {"not": {"type": "null"}}]}, 3],
        "properties": {"a": {"anyOf": [{"$ref": "#/x"}]}, "b": True},
        "additionalProperties": {
            "prefixItems": [{}, {"if": {}, "then": {}, "else": {}}]
        },
        "$defs": {
            "d": {"dependentSchemas": {"e": {}}, "patternProperties": {"^x": {}}}
        },
    }
    docs = [
        node,
        *(load(p).raw for p in sorted((ROOT / "schema").glob("*/schema.json"))),
    ]
    for doc in docs:
        assert [id(n) for n in subschemas(doc)] == [
            id(n) for n, _ in walk(doc, Location(file="f", pointer=""))
        ]


def test_const_data_is_not_checked_as_schema(tmp_path: Path) -> None:
    """``const``/``enum`` values are data: a ``type`` inside them is not a schema
    type."""
    load(_schema(tmp_path, {"A": {"const": {"type": "tuple"}}}), "s.json")


# -- detect and extract ---------------------------------------------------------------


def test_detect_and_extract_the_project_schemas() -> None:
    for revision, count in ((CORE_2025_11_25, 65), (EXTENSION, 76)):
        doc = load(ROOT / "schema" / revision.id / "schema.json")
        found = scan(doc)
        assert detect(found) is revision
        surface = extract(found, revision)
        assert len(surface.defs) == count and list(surface.defs) == sorted(surface.defs)
        assert all(
            m.startswith(("tasks/", "notifications/tasks"))
            for m in surface.methods.values()
        )


def test_extract_leaves_unrelated_definitions_out(tmp_path: Path) -> None:
    doc = load(
        _schema(
            tmp_path, {"UpdateTaskRequest": TASK_GET, "Unrelated": {"type": "string"}}
        ),
        "s.json",
    )
    found = scan(doc)
    assert list(extract(found, detect(found)).defs) == ["UpdateTaskRequest"]


# -- normalize ------------------------------------------------------------------------


def test_inline_params_get_a_place_name_and_constants_default(tmp_path: Path) -> None:
    package = _package(tmp_path, {"UpdateTaskRequest": TASK_GET})
    request = _model(package, "UpdateTaskRequest")
    assert isinstance(request, ir.ObjectModel)
    method = next(f for f in request.fields if f.wire_name == "method")
    assert (method.annotation.render(), method.default, method.constant) == (
        'Literal["tasks/update"]',
        '"tasks/update"',
        True,
    )
    assert (
        next(f for f in request.fields if f.wire_name == "params").annotation.render()
        == "UpdateTaskRequestParams"
    )
    params = _model(package, "UpdateTaskRequestParams")
    assert (
        isinstance(params, ir.ObjectModel)
        and params.fields[0].name == "task_id"
        and params.fields[0].required
    )
    assert [m.name for m in package.methods] == ["tasks/update"] and package.methods[
        0
    ].result == tx.DICT_ANY


def test_all_of_with_any_of_becomes_a_discriminated_union(tmp_path: Path) -> None:
    def variant(s: str) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "status": {"const": s, "type": "string"},
                "taskId": {"type": "string"},
            },
            "required": ["status", "taskId"],
        }

    defs = {
        "UpdateTaskRequest": TASK_GET,
        "Result": {
            "type": "object",
            "properties": {"_meta": {"type": "object"}},
            "additionalProperties": {},
        },
        "WorkingTask": variant("working"),
        "DoneTask": variant("done"),
        "GetTaskResult": {
            "allOf": [
                {"$ref": "#/$defs/Result"},
                {"anyOf": [variant("working"), variant("done")]},
            ]
        },
        "DetailedTask": {"anyOf": [variant("working"), variant("done")]},
    }
    package = _package(tmp_path, defs)
    result = _model(package, "GetTaskResult")
    assert isinstance(result, ir.RootModel) and result.discriminator == "status"
    # the variants sort after the union, so its base refers to them forward (quoted,
    # rebuilt)
    assert result.annotation.render() == repr(
        "Annotated[GetTaskResultWorking | GetTaskResultDone,"
        ' Field(discriminator="status")]'
    )
    assert "GetTaskResult" in package.rebuild
    merged = _model(package, "GetTaskResultWorking")
    assert isinstance(merged, ir.ObjectModel) and [
        f.wire_name for f in merged.fields
    ] == ["_meta", "status", "taskId"]
    detailed = _model(package, "DetailedTask")
    assert isinstance(detailed, ir.RootModel)
    assert detailed.annotation.render() == repr(
        'Annotated[WorkingTask | DoneTask, Field(discriminator="status")]'
    )  # inline copies are the definitions


def test_plain_look_alike_objects_are_not_merged(tmp_path: Path) -> None:
    """``{"taskId": string}`` params stay their own class even if a definition looks
    the same."""
    defs = {
        "UpdateTaskRequest": TASK_GET,
        "RelatedTaskMetadata": {
            "type": "object",
            "properties": {"taskId": {"type": "string"}},
            "required": ["taskId"],
        },
    }
    request = _model(_package(tmp_path, defs), "UpdateTaskRequest")
    assert isinstance(request, ir.ObjectModel)
    assert (
        next(f for f in request.fields if f.wire_name == "params").annotation.render()
        == "UpdateTaskRequestParams"
    )


def test_enums_open_and_closed_objects_and_optional_fields(tmp_path: Path) -> None:
    defs = {
        "UpdateTaskRequest": TASK_GET,
        "TaskStatus": {
            "anyOf": [
                {"type": "string", "const": "working"},
                {"type": "string", "const": "done"},
            ]
        },
        "TasksExtensionCapability": {
            "type": "object",
            "additionalProperties": {"not": {}},
        },
        "Task": {
            "type": "object",
            "properties": {
                "status": {"$ref": "#/$defs/TaskStatus"},
                "ttl": {"type": ["integer", "null"]},
                "note": {"type": "string"},
            },
            "required": ["status", "ttl"],
        },
    }
    package = _package(tmp_path, defs)
    status = _model(package, "TaskStatus")
    assert isinstance(status, ir.EnumModel) and [
        (m.name, m.raw) for m in status.members
    ] == [("WORKING", "working"), ("DONE", "done")]
    capability = _model(package, "TasksExtensionCapability")
    assert (
        isinstance(capability, ir.ObjectModel)
        and capability.closed
        and not capability.fields
    )
    task = _model(package, "Task")
    assert isinstance(task, ir.ObjectModel) and not task.closed
    assert [
        (f.name, f.annotation.render(), f.required, f.default) for f in task.fields
    ] == [
        ("status", "TaskStatus", True, ""),
        ("ttl", "int | None", True, ""),
        ("note", "str | None", False, "None"),
    ]


def test_model_order_does_not_follow_defs_order(tmp_path: Path) -> None:
    defs = {
        "UpdateTaskRequest": TASK_GET,
        "ZTask": {"type": "object", "properties": {"a": {"type": "string"}}},
        "ATask": {"type": "object", "properties": {"z": {"$ref": "#/$defs/ZTask"}}},
    }
    forward = [m.name for m in _package(tmp_path, defs).models]
    (tmp_path / "b").mkdir()
    backward = [
        m.name
        for m in _package(tmp_path / "b", dict(reversed(list(defs.items())))).models
    ]
    assert forward == backward == sorted(forward)


# -- render ---------------------------------------------------------------------------


def test_field_macro_on_a_hand_built_node() -> None:
    env = render.environment(None)
    field = ir.Field(
        name=PyIdent("task_id"),
        wire_name="taskId",
        annotation=tx.STR,
        required=True,
        constant=False,
        doc="The id.",
        loc=Location(file="f"),
    )
    text = env.from_string('{% import "_macros.jinja" as m %}{{ m.field(f) }}').render(
        f=field
    )
    assert (
        text == 'task_id: str = Field(validation_alias="taskId",'
        ' serialization_alias="taskId")\n"""The id."""\n'
    )


def test_compiled_templates_are_kept_and_a_changed_template_is_compiled_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compiled templates go to the cache folder (also with the formatted-file cache
    off) and are loaded from there; a template whose text changed is compiled again,
    never served from the old code; nothing is written under PYTHONDONTWRITEBYTECODE."""
    import jinja2

    monkeypatch.setenv("MCPTASKS_GEN_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("sys.dont_write_bytecode", True)
    override = tmp_path / "templates"
    (override / "package").mkdir(parents=True)
    template = override / "package" / "note.txt.jinja"
    template.write_text("first {{ pkg }}\n")
    assert (
        render.environment(override)
        .get_template("package/note.txt.jinja")
        .render(pkg="p")
        == "first p\n"
    )
    assert not (tmp_path / "cache").exists()

    monkeypatch.setattr("sys.dont_write_bytecode", False)
    env = render.environment(override)
    folder = env.bytecode_cache.folder  # type: ignore[union-attr]
    assert folder.parent == tmp_path / "cache" / "mcptasks-gen" / "jinja"
    env.get_template("package/note.txt.jinja")
    env.get_template("package/models.py.jinja")
    env.get_template("_macros.jinja")
    assert len(list(folder.iterdir())) == 3

    compile_ = jinja2.Environment.compile

    def no_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError("a kept template was compiled again")

    monkeypatch.setattr(jinja2.Environment, "compile", no_compile)
    warm = render.environment(override)
    assert warm.get_template("package/note.txt.jinja").render(pkg="p") == "first p\n"
    warm.get_template("package/models.py.jinja")
    warm.get_template("_macros.jinja")

    template.write_text("second {{ pkg }}\n")
    monkeypatch.setattr(jinja2.Environment, "compile", compile_)
    assert (
        render.environment(override)
        .get_template("package/note.txt.jinja")
        .render(pkg="p")
        == "second p\n"
    )
    monkeypatch.setattr(jinja2.Environment, "compile", no_compile)
    assert (
        render.environment(override)
        .get_template("package/note.txt.jinja")
        .render(pkg="p")
        == "second p\n"
    )

    other = jinja2.Environment(trim_blocks=False)
    assert render._compile_settings(other) != folder.name

    monkeypatch.setattr(jinja2.Environment, "compile", compile_)
    for (
        kept
    ) in (
        folder.iterdir()
    ):  # damaged files (cut short after Jinja's header) are compiled again
        kept.write_bytes(kept.read_bytes()[: len(jinja2.bccache.bc_magic) + 2])
    assert (
        render.environment(override)
        .get_template("package/note.txt.jinja")
        .render(pkg="p")
        == "second p\n"
    )


# -- write ----------------------------------------------------------------------------


def test_write_is_all_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure while writing leaves the previous tree untouched and no temporary
    folders."""
    folder = tmp_path / "pkg"
    write.write(folder, {"a.py": write.HEADER_PREFIX + " v1\n"}, force=False)
    real = Path.write_text
    calls = {"n": 0}

    def flaky(self: Path, *args: Any, **kwargs: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", flaky)
    with pytest.raises(GenError, match="cannot write"):
        write.write(
            folder,
            {
                "a.py": write.HEADER_PREFIX + " v2\n",
                "b.py": write.HEADER_PREFIX + " v2\n",
            },
            force=False,
        )
    monkeypatch.undo()
    assert (folder / "a.py").read_text() == write.HEADER_PREFIX + " v1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pkg"]


def test_write_reports_only_changed_files(tmp_path: Path) -> None:
    folder = tmp_path / "pkg"
    files = {"a.py": write.HEADER_PREFIX + "\n", "b.py": write.HEADER_PREFIX + "\n"}
    assert write.write(folder, files, force=False).written == ("a.py", "b.py")
    assert write.write(folder, files, force=False).written == ()
    assert [
        d.path
        for d in write.check(folder, {**files, "b.py": write.HEADER_PREFIX + " x\n"})
    ] == ["b.py"]


# -- fmt: how many black workers -------------------------------------------------------


def test_black_workers_follow_the_cpus_the_process_may_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pinned to one CPU (taskset, a container's cpuset), formatting forks no second
    worker."""
    from mcptasks_gen import fmt

    monkeypatch.setattr(fmt.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.setattr(fmt.os, "cpu_count", lambda: 64)
    assert fmt.usable_cpus() == 1
    monkeypatch.setattr(
        fmt.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False
    )
    assert fmt.usable_cpus() in (
        1,
        2,
        3,
    )  # a cgroup quota on this machine may cap it further

    import concurrent.futures

    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("a worker pool was started on one usable CPU")

    monkeypatch.setattr(fmt.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    monkeypatch.setenv("MCPTASKS_GEN_CACHE", "off")
    monkeypatch.setattr(
        fmt, "_PARALLEL_MIN_CHARS", 0
    )  # small files would not be parallel anyway
    files = {f"m{i}.py": f"x{i} = [  {i},{i}  ]\n" for i in range(4)}
    assert fmt.format_files(files, "p") == {
        f"m{i}.py": f"x{i} = [{i}, {i}]\n" for i in range(4)
    }


def test_cached_files_are_whole_or_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both caches (formatted files, compiled templates) write through
    ``write_cached``: a finished write is the whole file, a failed one leaves nothing
    behind (the formatted-file cache used to leave its temporary file when the write
    itself failed)."""
    from mcptasks_gen import config, fmt

    target = tmp_path / "cache" / "ab" / "abcdef"
    config.write_cached(target, b"formatted")
    assert target.read_bytes() == b"formatted" and sorted(
        p.name for p in target.parent.iterdir()
    ) == ["abcdef"]

    def broken(fd: int, *args: Any, **kwargs: Any) -> Any:
        os.close(fd)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(config.os, "fdopen", broken)
    fmt._remember(tmp_path / "other", "cdef01", "text")  # type: ignore[attr-defined]
    assert [p for p in (tmp_path / "other").rglob("*") if p.is_file()] == []
