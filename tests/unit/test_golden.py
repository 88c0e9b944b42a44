"""The committed packages under ``generated/`` are exactly what the generator makes now.

Refresh them with ``mcptasks-gen generate`` from the repository root (it runs the
targets of ``[tool.mcptasks-gen]`` in pyproject.toml) and review the diff like any code
change.
"""

from __future__ import annotations

import dataclasses
import difflib
from pathlib import Path

import pytest

from mcptasks_gen import pipeline, write
from mcptasks_gen.config import Target, targets_from_pyproject

ROOT = Path(__file__).resolve().parents[2]
REFRESH = "mcptasks-gen generate   (from the repository root)"


def _targets() -> tuple[Target, ...]:
    return targets_from_pyproject(ROOT / "pyproject.toml", ROOT)


@pytest.fixture(scope="session")
def rendered() -> dict[str, dict[str, str]]:
    """Every target's files, generated once for the session."""
    return {t.package: pipeline.generate(t) for t in _targets()}


@pytest.mark.parametrize("target", _targets(), ids=lambda t: t.package)
def test_golden_tree_is_current(
    target: Target, rendered: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    """Regenerate into a temporary folder and compare the whole tree byte for byte."""
    moved = dataclasses.replace(target, output=tmp_path)
    write.write(moved.package_dir, rendered[target.package], force=False)
    fresh = {
        p.relative_to(moved.package_dir).as_posix(): p.read_bytes()
        for p in moved.package_dir.rglob("*")
        if p.is_file()
    }
    golden = {
        p.relative_to(target.package_dir).as_posix(): p.read_bytes()
        for p in target.package_dir.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    missing, extra = sorted(set(fresh) - set(golden)), sorted(set(golden) - set(fresh))
    assert (
        not missing and not extra
    ), f"golden files missing: {missing}, unexpected: {extra}; refresh with: {REFRESH}"
    for name in sorted(fresh):
        if fresh[name] != golden[name]:
            diff = "".join(
                difflib.unified_diff(
                    golden[name].decode().splitlines(True),
                    fresh[name].decode().splitlines(True),
                    f"golden/{name}",
                    f"fresh/{name}",
                )
            )
            lines = diff.splitlines(True)
            shown = "".join(lines[:80]) + (
                f"... ({len(lines) - 80} more diff lines)\n" if len(lines) > 80 else ""
            )
            pytest.fail(
                f"{target.package}/{name} is stale; refresh with: {REFRESH}\n{shown}"
            )


def test_generation_is_deterministic(rendered: dict[str, dict[str, str]]) -> None:
    """A second run in the same process gives byte-identical output."""
    for target in _targets():
        assert pipeline.generate(target) == rendered[target.package]


def test_compiled_templates_give_the_same_files(
    rendered: dict[str, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Templates compiled in this run, and the same templates loaded compiled from
    the cache folder in the next, render the golden files byte for byte."""
    import jinja2

    monkeypatch.setenv("MCPTASKS_GEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("sys.dont_write_bytecode", False)
    for target in _targets():
        assert pipeline.generate(target) == rendered[target.package]

    def no_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError(
            "a template was compiled although its compiled code is kept"
        )

    monkeypatch.setattr(jinja2.Environment, "compile", no_compile)
    for target in _targets():
        assert pipeline.generate(target) == rendered[target.package]


RUNTIME = ROOT / "templates" / "runtime"


def test_a_subpackage_main_module_is_copied(
    rendered: dict[str, dict[str, str]],
) -> None:
    """``python -m <package>.check`` runs the runtime's ``check/__main__.py``: every
    package gets it (while other runtime names starting with ``_`` stay out)."""
    for package, files in rendered.items():
        assert "check/__main__.py" in files, package
        assert "check/__init__.py" in files, package
        assert not [
            n
            for n in files
            if n.rpartition("/")[2].startswith("_")
            and n.rpartition("/")[2] not in ("__init__.py", "__main__.py")
        ]


def test_every_file_carries_the_header(rendered: dict[str, dict[str, str]]) -> None:
    """Each generated file starts with the header and the regenerate command; only
    the files rendered from the schema carry its hash, the copied runtime files do
    not."""
    for package, files in rendered.items():
        for name, text in files.items():
            assert text.startswith(write.HEADER_PREFIX), f"{package}/{name}"
            fields = write.header_fields(text)
            if (RUNTIME / name).is_file():
                assert (
                    fields == {} and "sha256" not in text.split("\n", 2)[0]
                ), f"{package}/{name}"
                assert (
                    text.split("\n", 2)[2] == (RUNTIME / name).read_text()
                ), f"{package}/{name} is not a verbatim copy"
            else:
                assert (
                    fields["schema"].startswith("schema/")
                    and len(fields["sha256"]) == 64
                ), fields
            assert "regenerate with: mcptasks-gen generate" in text.split("\n", 2)[1]
        assert "timestamp" not in files["__init__.py"].lower()


@pytest.mark.official_schemas
@pytest.mark.parametrize(
    "target", [t for t in _targets() if not t.also], ids=lambda t: t.package
)
def test_official_schema_gives_the_same_api(target: Target, shared: Path) -> None:
    """The official schema file of the revision yields the same classes, fields and
    types."""
    official = {
        "mcp_tasks_2025_11_25": "mcp-2025-11-25.schema.json",
        "mcp_tasks_ext": "ext-tasks-draft.schema.json",
    }[target.package]
    ours = pipeline.build(target)
    theirs = pipeline.build(
        dataclasses.replace(
            target, schema=shared / "schemas" / official, schema_label=official
        )
    )
    assert theirs.revision == ours.revision

    def api(package: object) -> dict[str, object]:
        out: dict[str, object] = {}
        for model in package.models:  # type: ignore[attr-defined]
            if model.kind == "object":
                out[model.name] = sorted(
                    (f.name, f.wire_name, f.annotation, f.required, f.default)
                    for f in model.fields
                )
            elif model.kind == "enum":
                out[model.name] = sorted(m.raw for m in model.members)
            else:
                out[model.name] = model.annotation
        out["<methods>"] = [
            (m.name, m.message, m.params, m.result)
            for m in package.methods  # type: ignore[attr-defined]
        ]
        return out

    assert api(theirs) == api(ours)


@pytest.mark.official_schemas
def test_core_2026_07_28_is_refused_with_one_line(shared: Path) -> None:
    """The 2026-07-28 core schema has no Tasks: a one-line explanation, nothing
    generated."""
    from click.testing import CliRunner

    from mcptasks_gen.cli import main

    result = CliRunner().invoke(
        main,
        [
            "generate",
            str(shared / "schemas" / "mcp-2026-07-28.schema.json"),
            "-o",
            "unused",
        ],
    )
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert (
        "no Tasks definitions found" in result.stderr and "extension" in result.stderr
    )


def test_rendered_files_are_stable_under_black(
    rendered: dict[str, dict[str, str]],
) -> None:
    """The formatter runs black's first pass only (``fmt._format``); black's second pass
    (what ``black.format_str`` and ``black --check`` do) finds nothing to change in any
    rendered file."""
    import black

    from mcptasks_gen import fmt

    for package, files in rendered.items():
        for name, text in files.items():
            if not name.endswith(".py") or (RUNTIME / name).is_file():
                continue
            body = fmt._split_header(text)[1]
            assert black.format_str(body, mode=fmt._mode()) == body, f"{package}/{name}"
