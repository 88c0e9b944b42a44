"""The command line: options, exit codes, one-line errors, safe writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcptasks_gen.cli import main
from tests.golden.regen import ERRORS, run_case

ROOT = Path(__file__).resolve().parents[2]
EXT_SCHEMA = ROOT / "schema" / "ext-2026-07-28" / "schema.json"


@pytest.fixture(scope="module")
def generated_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One package generated from the embedded default schema, shared by several
    tests."""
    out = tmp_path_factory.mktemp("once")
    result = CliRunner().invoke(main, ["generate", "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def invoke(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """Run the CLI in-process (from ``cwd``); exit code, stdout, stderr."""
    old = Path.cwd()
    os.chdir(cwd or ROOT)
    try:
        result = CliRunner().invoke(main, list(args))
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("case", sorted(ERRORS.glob("*.json")), ids=lambda p: p.stem)
def test_bad_schema_error_golden(case: Path, tmp_path: Path) -> None:
    """Each bad schema: exit 2, the exact one-line message of its golden, nothing
    written."""
    old = Path.cwd()
    os.chdir(ROOT)
    try:
        code, stderr = run_case(case, tmp_path / "out")
    finally:
        os.chdir(old)
    assert code == 2
    assert stderr == case.with_suffix(".stderr").read_text(
        encoding="utf-8"
    ), "refresh with: python -m tests.golden.regen"
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    assert not (tmp_path / "out").exists()


def test_missing_file(tmp_path: Path) -> None:
    code, _, err = invoke("generate", str(tmp_path / "nope.json"), "-o", str(tmp_path))
    assert code == 2 and err == f"{tmp_path / 'nope.json'}: error: no such file\n"


def test_unknown_revision(tmp_path: Path) -> None:
    code, _, err = invoke("generate", "--revision", "2024-01-01", "-o", str(tmp_path))
    assert (
        code == 2
        and err.startswith('--revision: error: unknown revision "2024-01-01"')
        and err.count("\n") == 1
    )


def test_revision_that_contradicts_the_schema(tmp_path: Path) -> None:
    code, _, err = invoke(
        "generate", str(EXT_SCHEMA), "--revision", "2025-11-25", "-o", str(tmp_path)
    )
    assert (
        code == 2
        and "is revision ext-2026-07-28 (it has notifications/tasks), not 2025-11-25"
        in err
    )


def test_invalid_package_name(tmp_path: Path) -> None:
    code, _, err = invoke("generate", "--package", "acme-tasks", "-o", str(tmp_path))
    assert code == 2 and 'invalid package name "acme-tasks"' in err


def test_output_path_is_a_file(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("mine\n")
    code, _, err = invoke("generate", "-o", str(target))
    assert (
        code == 2 and err == f"{target}: error: output path is a file, not a folder\n"
    )
    assert target.read_text() == "mine\n"


def test_default_schema_into_cwd(generated_once: Path) -> None:
    """No SCHEMA and no pyproject table: both embedded schemas go to ./mcp_tasks, one
    package."""
    package = generated_once / "mcp_tasks"
    assert {p.name for p in package.iterdir()} >= {
        "__init__.py",
        "models_2025.py",
        "models_ext.py",
        "py.typed",
    }
    init = (package / "__init__.py").read_text()
    assert (
        'SPEC_REVISIONS = (\n    "2025-11-25",\n    "ext-2026-07-28",\n)' in init
    ), init


def test_embedded_revision_choice(tmp_path: Path) -> None:
    code, out, _ = invoke(
        "generate",
        "--revision",
        "2025-11-25",
        "-o",
        str(tmp_path),
        "--package",
        "legacy",
    )
    assert code == 0, out
    assert (
        'SPEC_REVISION = "2025-11-25"'
        in (tmp_path / "legacy" / "__init__.py").read_text()
    )


def test_refuses_to_overwrite_a_users_file(
    generated_once: Path, tmp_path: Path
) -> None:
    """A file without the generated header is never replaced or removed without
    --force."""
    out = tmp_path / "o"
    assert invoke("generate", "-o", str(out))[0] == 0
    mine = out / "mcp_tasks" / "models_ext.py"
    mine.write_text("# hand-written\n")
    code, _, err = invoke("generate", "-o", str(out))
    assert code == 2 and "no generated-file header" in err and "--force" in err
    assert mine.read_text() == "# hand-written\n"
    extra = out / "mcp_tasks" / "notes.py"
    mine.write_text((generated_once / "mcp_tasks" / "models_ext.py").read_text())
    extra.write_text("x = 1\n")
    assert invoke("generate", "-o", str(out))[0] == 0 and extra.exists()
    code, _, _ = invoke("generate", "-o", str(out), "--force")
    assert (
        code == 0 and extra.read_text() == "x = 1\n"
    )  # --force never removes a user's file


def test_check_reports_stale_then_current(tmp_path: Path) -> None:
    """--check writes nothing; exit 1 with a diff when stale, 0 when current."""
    code, out, _ = invoke("generate", "-o", str(tmp_path), "--check")
    assert (
        code == 1
        and "missing: models_ext.py" in out
        and not (tmp_path / "mcp_tasks").exists()
    )
    assert invoke("generate", "-o", str(tmp_path))[0] == 0
    code, out, _ = invoke("generate", "-o", str(tmp_path), "--check")
    assert code == 0 and "up to date" in out
    models = tmp_path / "mcp_tasks" / "models_ext.py"
    models.write_text(
        models.read_text().replace(
            "class Task(McpModel):", "class Task(McpModel):  # edited"
        )
    )
    code, out, _ = invoke("generate", "-o", str(tmp_path), "--check")
    assert code == 1
    assert "-class Task(McpModel):  # edited" in out and "+class Task(McpModel):" in out
    assert (
        "changed: models_ext.py" in out
        and "the files were edited, or templates changed" in out
    )


def test_check_names_the_changed_schema(tmp_path: Path) -> None:
    """When the schema changed, --check says so (its sha256 is in the header)."""
    schema = tmp_path / "schema.json"
    schema.write_text(EXT_SCHEMA.read_text())
    assert invoke("generate", str(schema), "-o", str(tmp_path / "o"))[0] == 0
    raw = json.loads(EXT_SCHEMA.read_text())
    raw["description"] = str(raw.get("description", "")) + " Edited."
    schema.write_text(json.dumps(raw))
    code, out, _ = invoke("generate", str(schema), "-o", str(tmp_path / "o"), "--check")
    assert code == 1 and "reason: schema changed (sha256" in out


def test_check_says_when_only_the_schema_path_changed(tmp_path: Path) -> None:
    """The same schema under another path: --check is stale (the headers name the
    path) and says that only the path changed, not that files were edited."""
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(EXT_SCHEMA.read_text())
    second.write_text(EXT_SCHEMA.read_text())
    assert invoke("generate", str(first), "-o", str(tmp_path / "o"))[0] == 0
    code, out, _ = invoke("generate", str(second), "-o", str(tmp_path / "o"), "--check")
    assert code == 1
    assert "only the schema's path in the headers changed" in out, out
    assert "the files were edited" not in out


def test_check_ignores_a_reorder_or_reformat_of_the_schema(tmp_path: Path) -> None:
    """The sha256 in the headers is of the schema's canonical form (sorted keys, no
    insignificant whitespace): a pure reorder of ``$defs`` and a reformat of the file
    change no output, so --check calls the package up to date."""
    schema = tmp_path / "schema.json"
    schema.write_text(EXT_SCHEMA.read_text())
    assert invoke("generate", str(schema), "-o", str(tmp_path / "o"))[0] == 0
    raw = json.loads(EXT_SCHEMA.read_text())
    raw["$defs"] = dict(reversed(list(raw["$defs"].items())))
    schema.write_text(json.dumps(raw, indent=4))
    code, out, _ = invoke("generate", str(schema), "-o", str(tmp_path / "o"), "--check")
    assert code == 0, out


def test_template_override_by_name(tmp_path: Path) -> None:
    """A template in --templates replaces the built-in one of the same name."""
    override = tmp_path / "tpl" / "package"
    override.mkdir(parents=True)
    (override / "py.typed.jinja").write_text(
        '{% import "_macros.jinja" as m %}\n{{ m.header(pkg) }}\npartial\n'
    )
    code, out, err = invoke(
        "generate", "-o", str(tmp_path / "o"), "--templates", str(tmp_path / "tpl")
    )
    assert code == 0, err
    assert (tmp_path / "o" / "mcp_tasks" / "py.typed").read_text().endswith("partial\n")


def test_templates_folder_missing(tmp_path: Path) -> None:
    code, _, err = invoke(
        "generate", "-o", str(tmp_path), "--templates", str(tmp_path / "none")
    )
    assert (
        code == 2 and err == f"{tmp_path / 'none'}: error: templates folder not found\n"
    )


def test_pyproject_targets_and_their_errors(tmp_path: Path) -> None:
    """[tool.mcptasks-gen]: unknown keys, missing schemas and overlapping outputs are
    one-line errors."""
    (tmp_path / "s.json").write_text(EXT_SCHEMA.read_text())

    def target(schema: str = "s.json") -> str:
        return (
            "[[tool.mcptasks-gen.targets]]\n"
            f'schema = "{schema}"\noutput = "g"\npackage = "a"\n'
        )

    cases = {
        "bogus = 1\n" + target(): 'unknown key "bogus"',
        target("nope.json"): 'schema "nope.json" not found',
        target() + 'colour = "red"\n': 'unknown key "colour"',
        target() + target(): "writes into the folder of target 0",
    }
    for body, expected in cases.items():
        (tmp_path / "pyproject.toml").write_text(
            "[tool.mcptasks-gen]\n" + body
            if not body.startswith("bogus")
            else "[tool.mcptasks-gen]\n" + body
        )
        code, _, err = invoke("generate", cwd=tmp_path)
        assert code == 2 and expected in err and err.count("\n") == 1, err
    (tmp_path / "pyproject.toml").write_text(
        '[[tool.mcptasks-gen.targets]]\nschema = "s.json"\noutput = "g"\npackage ='
        ' "a"\n'
    )
    code, out, _ = invoke("generate", cwd=tmp_path)
    assert code == 0 and (tmp_path / "g" / "a" / "models.py").exists()
    code, out, _ = invoke("generate", "--check", cwd=tmp_path)
    assert code == 0 and "up to date" in out


@pytest.mark.parametrize("args", [[], ["generate"]])
def test_help_has_examples(args: list[str]) -> None:
    code, out, _ = invoke(*args, "--help")
    assert code == 0 and "Examples:" in out and "mcptasks-gen generate" in out


@pytest.mark.parametrize("command", ["generate", "diff"])
def test_help_lists_exit_codes(command: str) -> None:
    code, out, _ = invoke(command, "--help")
    assert code == 0 and "Exit status:" in out
    lines = out[out.index("Exit status:") :].splitlines()
    assert any(line.strip().startswith("0 ") for line in lines) and any(
        line.strip().startswith("1 ") for line in lines
    )
    assert any(line.strip().startswith("2 ") and "bad input" in line for line in lines)


def test_generate_leaves_the_garbage_collector_as_it_found_it(tmp_path: Path) -> None:
    """``generate`` turns the cyclic collector off while it runs and back on only if
    it was on: the console entry point keeps it off to the end of the process."""
    import gc

    assert gc.isenabled()
    gc.disable()
    try:
        assert invoke("generate", "-o", str(tmp_path / "a"))[0] == 0
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert invoke("generate", "-o", str(tmp_path / "b"))[0] == 0
    assert gc.isenabled()


def test_schema_from_standard_input(tmp_path: Path) -> None:
    """SCHEMA "-" reads standard input (it was "no such file"): the package is the
    one the file gives, named <stdin> in its header, and errors are located in
    <stdin>."""
    result = CliRunner().invoke(
        main,
        ["generate", "-", "-o", str(tmp_path / "piped"), "--package", "p"],
        input=EXT_SCHEMA.read_bytes(),
    )
    assert result.exit_code == 0, result.stderr
    assert (
        invoke(
            "generate", str(EXT_SCHEMA), "-o", str(tmp_path / "file"), "--package", "p"
        )[0]
        == 0
    )
    piped, from_file = tmp_path / "piped" / "p", tmp_path / "file" / "p"
    assert sorted(p.name for p in piped.iterdir()) == sorted(
        p.name for p in from_file.iterdir()
    )
    header = (piped / "models_ext.py").read_text().splitlines()[:2]
    assert header[0].endswith(" from <stdin>; do not edit.") and header[1].endswith(
        f"regenerate with: mcptasks-gen generate - -o {tmp_path / 'piped'} --package p"
    )
    assert (piped / "models_ext.py").read_text().split("\n", 2)[2] == (
        from_file / "models_ext.py"
    ).read_text().split("\n", 2)[2]
    result = CliRunner().invoke(
        main,
        ["generate", "-", "-o", str(tmp_path / "bad")],
        input=b'{\n  "$defs": {,}\n}\n',
    )
    assert (
        result.exit_code == 2
        and result.stderr
        == "<stdin>:2:13: error: invalid JSON: expecting property name enclosed in"
        " double quotes\n"
    )
    result = CliRunner().invoke(
        main, ["generate", "-", "-", "-o", str(tmp_path / "twice")], input=b"{}"
    )
    assert (
        result.exit_code == 2
        and result.stderr
        == '<stdin>: error: standard input ("-") given as more than one schema; it can'
        " be read only once\n"
    )
    result = CliRunner().invoke(main, ["diff", "-", "-"], input=b"{}")
    assert (
        result.exit_code == 2
        and result.stderr.count("\n") == 1
        and "can be read only once" in result.stderr
    )
    assert not (tmp_path / "bad").exists() and not (tmp_path / "twice").exists()
    code, out, _ = invoke("generate", "--help")
    assert (
        code == 0
        and 'SCHEMA "-" reads the schema from standard input' in " ".join(out.split())
        and "64 MiB" in out
    )


def test_standard_input_has_the_size_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Standard input is read up to the same limit as a file (lowered here to 1 KiB)."""
    from mcptasks_gen import load

    monkeypatch.setattr(load, "MAX_BYTES", 1024)
    result = CliRunner().invoke(
        main, ["generate", "-", "-o", str(tmp_path)], input=b" " * 1025
    )
    assert (
        result.exit_code == 2
        and result.stderr
        == "<stdin>: error: larger than 1024 bytes (the generator's limit)\n"
    )


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (
            b"x = 1\ndef f(:\n    pass\n",
            ":2:7",
            "runtime override is not valid Python (invalid syntax)",
        ),
        (
            b"x = 1\x00\n",
            "",
            (
                "runtime override is not valid Python (source code string cannot"
                " contain null bytes)"
            ),
        ),
        (
            b'x = "\xff"\n',
            "",
            "not UTF-8 text (byte 0xff at offset 5), expected a Python module",
        ),
    ],
    ids=["syntax", "nul", "not-utf8"],
)
def test_runtime_override_that_is_not_python(
    text: bytes, where: str, message: str, tmp_path: Path
) -> None:
    """A file under --templates DIR/runtime/ is copied as it is: one that Python cannot
    read is refused with its file and line (it was written, exit 0; a non-UTF-8 one
    ended in a traceback), and nothing is written. Rendered templates are checked by
    black."""
    runtime = tmp_path / "tpl" / "runtime"
    runtime.mkdir(parents=True)
    (runtime / "stores.py").write_bytes(text)
    code, _, err = invoke(
        "generate", "-o", str(tmp_path / "o"), "--templates", str(tmp_path / "tpl")
    )
    assert code == 2 and err == f"{runtime / 'stores.py'}{where}: error: {message}\n"
    assert not (tmp_path / "o").exists()
    (runtime / "stores.py").unlink()
    (runtime / "extra.py").write_text("VALUE = 1\n")
    code, _, err = invoke(
        "generate", "-o", str(tmp_path / "o"), "--templates", str(tmp_path / "tpl")
    )
    assert code == 0, err
    assert (
        (tmp_path / "o" / "mcp_tasks" / "extra.py").read_text().endswith("VALUE = 1\n")
    )


def test_template_that_is_not_utf8(tmp_path: Path) -> None:
    """A template (or a template it imports) that is not UTF-8 is one line naming it
    (it was a traceback)."""
    templates = tmp_path / "tpl"
    (templates / "package").mkdir(parents=True)
    (templates / "package" / "extra.py.jinja").write_text(
        '{% import "_mine.jinja" as mine %}\nVALUE = 1\n'
    )
    (templates / "_mine.jinja").write_bytes(b"\xfe{% macro x() %}{% endmacro %}")
    code, _, err = invoke(
        "generate", "-o", str(tmp_path / "o"), "--templates", str(templates)
    )
    assert (
        code == 2
        and err
        == f"{templates / '_mine.jinja'}: error: not UTF-8 text (byte 0xfe at offset"
        " 0), expected a template\n"
    )


def test_diff_takes_the_extension_id_of_a_schema_that_names_none(
    tmp_path: Path,
) -> None:
    """A schema whose title and description name no extension identifier stops
    ``diff`` with exit 2 and a message naming diff's own options; with
    ``--extension-id-new`` the comparison runs."""
    raw = json.loads(EXT_SCHEMA.read_text())
    raw.pop("description", None)
    raw["title"] = "Tasks"
    unnamed = tmp_path / "unnamed.json"
    unnamed.write_text(json.dumps(raw))
    code, _, err = invoke("diff", str(EXT_SCHEMA), str(unnamed))
    assert code == 2 and "--extension-id-old/--extension-id-new of diff" in err, err
    code, out, err = invoke(
        "diff",
        str(EXT_SCHEMA),
        str(unnamed),
        "--extension-id-new",
        "io.modelcontextprotocol/tasks",
    )
    assert code == 0, err
    assert "nothing breaking" in out
    code, _, err = invoke(
        "diff", str(EXT_SCHEMA), str(unnamed), "--extension-id-new", "not an id"
    )
    assert code == 2 and "--extension-id-new" in err, err
