"""Odd and hostile schemas whose packages must import and type-check: generated, then
imported by a fresh interpreter or checked with ``mypy --strict`` (issue 9, items
11-13). The one-line errors of the same family, in process, are in
``tests/unit/test_hostile_inputs.py``.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcptasks_gen.cli import main

ROOT = Path(__file__).resolve().parents[2]


EXT_SCHEMA = ROOT / "schema" / "ext-2026-07-28" / "schema.json"


def _ext_with(defs: dict[str, Any]) -> dict[str, Any]:
    """The extension schema with extra definitions (names with "Task" are surface
    roots)."""
    raw = json.loads(EXT_SCHEMA.read_text(encoding="utf-8"))
    raw["$defs"].update(defs)
    return raw


def _generate(tmp_path: Path, schema_text: str) -> tuple[int, str, str]:
    """Run ``generate`` in-process on a schema text; exit code, stdout, stderr."""
    schema = tmp_path / "schema.json"
    schema.write_text(schema_text, encoding="utf-8")
    result = CliRunner().invoke(
        main, ["generate", str(schema), "-o", str(tmp_path / "out"), "--package", "p"]
    )
    assert result.exc_info is None or result.exc_info[0] is SystemExit, "".join(
        __import__("traceback").format_exception(*result.exc_info)
    )
    return result.exit_code, result.stdout, result.stderr


HOSTILE_NAMES = [
    "True",
    "None",
    "_",
    "1Task",
    "Tâche",
    "ErrorCode",
    "Field",
    "Literal",
    "McpModel",
    "BaseModel",
    "Any",
    "RootModel",
    "TASK_METHODS",
]


@pytest.fixture(scope="module")
def hostile_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One package from a schema with every hostile name, colliding properties and
    chains just inside the limits."""
    tmp_path = tmp_path_factory.mktemp("hostile")
    obj = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
    defs: dict[str, Any] = {name: obj for name in HOSTILE_NAMES}
    defs["HoldTask"] = {
        "type": "object",
        "properties": {
            f"p{i}": {"$ref": f"#/$defs/{n}"} for i, n in enumerate(HOSTILE_NAMES)
        },
    }
    defs["CollideTask"] = {
        "type": "object",
        "properties": {
            "taskId": {"type": "string"},
            "task_id": {"type": "integer"},
            "_meta": {"type": "object"},
            "meta": {"type": "string"},
            "wire_constants": {"type": "string"},
            "wire_keys": {"type": "string"},
            "wire_set_only": {"type": "boolean"},
            "int": {"type": "integer"},
            "str": {"type": "string"},
        },
    }
    for i in range(31):
        ref = {"$ref": f"#/$defs/L{i + 1}"}
        defs[f"L{i}"] = (
            {"type": "object", "properties": {"next": ref}}
            if i % 2
            else {"type": "array", "items": ref}
        )
    defs["L31"] = {"type": "object", "properties": {"x": {"type": "string"}}}
    defs["LongTask"] = {"type": "object", "properties": {"l": {"$ref": "#/$defs/L0"}}}
    code, out, err = _generate(tmp_path, json.dumps(_ext_with(defs)))
    assert code == 0, err
    return tmp_path / "out"


def _run(out: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=out,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(out)},
    )


def test_hostile_names_import_and_map_deterministically(hostile_package: Path) -> None:
    models = (hostile_package / "p" / "models_ext.py").read_text(encoding="utf-8")
    expected = {
        "True": "True_",
        "None": "None_",
        "_": "Definition",
        "1Task": "Def1Task",
        "Tâche": "Tache",
        "ErrorCode": "ErrorCode_",
        "Field": "Field_",
        "Literal": "Literal_",
        "McpModel": "McpModel_",
        "BaseModel": "BaseModel_",
        "Any": "Any_",
        "RootModel": "RootModel_",
        "TASK_METHODS": "TASK_METHODS_",
    }
    for name, cls in expected.items():
        assert f"\nclass {cls}(McpModel):" in models, cls
        assert (
            f"{json.dumps(name)} is ``{cls}``" in models
        )  # the rename is recorded in the module docstring
    script = (
        "import p, p.models as m\nassert issubclass(m.ErrorCode, int) and"
        " m.ErrorCode.INVALID_PARAMS == -32602\nh = m.HoldTask.model_validate({'p0':"
        " {'x': 'a'}, 'p5': {'x': 'b'}})\nassert type(h.p0).__name__ == 'True_' and"
        " type(h.p5).__name__ == 'ErrorCode_'\nassert h.to_wire() == {'p0': {'x': 'a'},"
        " 'p5': {'x': 'b'}}\nl = m.LongTask.model_validate({'l': [{'next': [{'next':"
        " []}]}]})\nassert l.to_wire() == {'l': [{'next': [{'next': []}]}]}\n"
    )
    result = _run(hostile_package, script)
    assert result.returncode == 0, result.stderr


def test_colliding_property_names_validate_and_round_trip(
    hostile_package: Path,
) -> None:
    script = (
        "import json, p.models as m\nwire = {'taskId': 'a', 'task_id': 5, '_meta':"
        " {'k': 1}, 'meta': 'm', 'wire_constants': 'w', 'wire_keys': 'k',"
        " 'wire_set_only': True, 'int': 3, 'str': 's'}\nc ="
        " m.CollideTask.model_validate(wire)\nassert json.dumps(c.to_wire(),"
        " sort_keys=True) == json.dumps(wire, sort_keys=True), c.to_wire()\nassert"
        " m.CollideTask.model_validate_json(c.model_dump_json(exclude_unset=True)) =="
        " c\nassert m.CollideTask.wire_constants == frozenset()\nassert"
        " m.CollideTask.wire_keys == frozenset()\nassert m.CollideTask.wire_set_only"
        " is False and c.wire_set_only_ is True\n"
    )
    result = _run(hostile_package, script)
    assert result.returncode == 0, result.stderr


def test_hostile_package_type_checks(hostile_package: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "p/models_ext.py",
            "p/models.py",
            "p/__init__.py",
        ],
        cwd=hostile_package,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout


def test_ref_fragments_are_percent_decoded(tmp_path: Path) -> None:
    """A ``$ref`` is a URI fragment: percent-decoded, then a JSON pointer with
    ``~0``/``~1`` (``#/$defs/sp%20ace`` was reported dangling)."""
    defs = {
        "sp ace": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "a/b~c": {"type": "object", "properties": {"m": {"type": "string"}}},
        "100%": {"type": "string", "maxLength": 3},
        "PctTask": {
            "type": "object",
            "properties": {
                "s": {"$ref": "#/$defs/sp%20ace"},
                "t": {"$ref": "#/$defs/a~1b~0c"},
                "u": {"$ref": "#/$defs/a%7E1b%7E0c"},
                "v": {"$ref": "#/$defs/100%25"},
                "w": {"$ref": "#/%24defs/sp%20ace/properties/n"},
            },
        },
    }
    code, _, err = _generate(tmp_path, json.dumps(_ext_with(defs)))
    assert code == 0, err
    script = (
        "import p.models as m\nt = m.PctTask.model_validate({'s': {'n': 1}, 't': {'m':"
        " 'x'}, 'u': {'m': 'y'}, 'v': 'abc', 'w': 2})\nassert type(t.s).__name__ =="
        " 'SpAce' and type(t.t) is type(t.u) and t.u.m == 'y', t\nassert t.to_wire() =="
        " {'s': {'n': 1}, 't': {'m': 'x'}, 'u': {'m': 'y'}, 'v': 'abc', 'w': 2}\ntry:\n"
        "    m.PctTask.model_validate({'v': 'abcd'})\nexcept ValueError:\n   "
        " pass\nelse:\n    raise AssertionError('maxLength of 100% not applied')\n"
    )
    result = _run(tmp_path / "out", script)
    assert result.returncode == 0, result.stderr


CORE_SCHEMA = ROOT / "schema" / "2025-11-25" / "schema.json"


TASK_FIELD_SHAPES: dict[str, dict[str, Any]] = {
    "object": {"extra": {"type": "object"}},
    "array": {"extra": {"type": "array"}},
    "root": {"extra": {"$ref": "#"}},
    # Types whose model annotation carries Annotated metadata, Literal values or model
    # classes.
    "typed": {
        "label": {"type": "string", "maxLength": 5},
        "mode": {"enum": ["fast", "slow"]},
        "counts": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        "thing": {"$ref": "#/$defs/ExtraThing"},
        "kind": {"oneOf": [{"$ref": "#/$defs/KindA"}, {"$ref": "#/$defs/KindB"}]},
    },
}


EXTRA_DEFS: dict[str, Any] = {
    "ExtraThing": {"type": "object", "properties": {"n": {"type": "integer"}}},
    "KindA": {
        "type": "object",
        "properties": {"kind": {"const": "a"}},
        "required": ["kind"],
    },
    "KindB": {
        "type": "object",
        "properties": {"kind": {"const": "b"}, "b": {"type": "string"}},
        "required": ["kind"],
    },
}


EXPECTED_HINTS = {
    "object": {"extra": "dict[str, typing.Any] | None"},
    "array": {"extra": "list[typing.Any] | None"},
    "root": {"extra": "typing.Any"},
    "typed": {
        "label": "str | None",
        "mode": "typing.Optional[typing.Literal['fast', 'slow']]",
        "counts": "list[int] | None",
    },
}


def _expected_hints(shape: str, models: tuple[str, ...]) -> dict[str, str]:
    """What ``get_type_hints`` gives for the keys of ``TaskFields`` in a protocol module
    whose classes come from ``models`` (both revisions' for a package of both)."""
    hints = dict(EXPECTED_HINTS[shape])
    if shape == "typed":
        hints["thing"] = " | ".join(f"{m}.ExtraThing" for m in models) + " | None"
        hints["kind"] = " | ".join(f"{m}.KindA | {m}.KindB" for m in models) + " | None"
    return hints


def _with_task_properties(schema: Path, properties: dict[str, Any]) -> str:
    """An embedded schema whose ``Task`` has more optional properties (and
    ``EXTRA_DEFS``)."""
    raw = json.loads(schema.read_text(encoding="utf-8"))
    raw["$defs"].update(EXTRA_DEFS)
    raw["$defs"]["Task"]["properties"].update(properties)
    return json.dumps(raw)


@pytest.fixture(scope="module")
def task_field_packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """For each shape of ``TASK_FIELD_SHAPES``: a package of each revision
    (``<shape>_2025``, ``<shape>_ext``) and one of both (``<shape>_dual``), side by
    side in one folder."""
    out = tmp_path_factory.mktemp("task_fields")
    for shape, properties in TASK_FIELD_SHAPES.items():
        core, ext = out / f"{shape}-core.json", out / f"{shape}-ext.json"
        core.write_text(
            _with_task_properties(CORE_SCHEMA, properties), encoding="utf-8"
        )
        ext.write_text(_with_task_properties(EXT_SCHEMA, properties), encoding="utf-8")
        for package, schemas in (
            (f"{shape}_2025", [core]),
            (f"{shape}_ext", [ext]),
            (f"{shape}_dual", [core, ext]),
        ):
            result = CliRunner().invoke(
                main,
                ["generate", *map(str, schemas), "-o", str(out), "--package", package],
            )
            assert result.exit_code == 0, result.stderr
    return out


@pytest.mark.parametrize("shape", sorted(TASK_FIELD_SHAPES))
def test_task_fields_of_any_type_import_and_resolve(
    shape: str, task_field_packages: Path
) -> None:
    """An optional Task property of type object, array or ``{"$ref": "#"}`` (or one
    whose model type has constraints, Literal values or model classes) is a key of
    ``TaskFields`` that the protocol modules can resolve: ``typing.get_type_hints``
    works on every ``TaskFields`` (it raised NameError on ``Any``, which the modules did
    not import).
    """
    script = (
        "import importlib, json, sys, typing\nhints = {}\nfor module in sys.argv[1:]:\n"
        "    fields = importlib.import_module(module).TaskFields\n    hints[module] ="
        " {k: str(v) for k, v in"
        " typing.get_type_hints(fields).items()}\nprint(json.dumps(hints))\n"
    )
    modules = {
        f"{shape}_2025.protocol_2025": (f"{shape}_2025.models_2025",),
        f"{shape}_ext.protocol_ext": (f"{shape}_ext.models_ext",),
        f"{shape}_ext.protocol": (f"{shape}_ext.models_ext",),
        f"{shape}_dual.protocol_2025": (f"{shape}_dual.models_2025",),
        f"{shape}_dual.protocol_ext": (f"{shape}_dual.models_ext",),
        f"{shape}_dual.protocol": (
            f"{shape}_dual.models_2025",
            f"{shape}_dual.models_ext",
        ),
    }
    result = subprocess.run(
        [sys.executable, "-c", script, *modules],
        cwd=task_field_packages,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(task_field_packages)},
    )
    assert result.returncode == 0, result.stderr
    hints = json.loads(result.stdout)
    for module, models in modules.items():
        assert hints[module] == _expected_hints(shape, models), module


def test_task_fields_of_any_type_type_check(task_field_packages: Path) -> None:
    """The packages of ``task_field_packages`` pass ``mypy --strict`` (the object,
    array and ``{"$ref": "#"}`` shapes failed with "Name 'Any' is not defined"): each
    package of both revisions in full, and the protocol modules of the one-revision
    packages (the rest of those is the same runtime)."""
    targets: list[str] = []
    for shape in TASK_FIELD_SHAPES:
        targets += ["-p", f"{shape}_dual"]
        targets += [
            "-m",
            f"{shape}_2025.protocol",
            "-m",
            f"{shape}_2025.protocol_2025",
            "-m",
            f"{shape}_ext.protocol",
            "-m",
            f"{shape}_ext.protocol_ext",
        ]
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *targets],
        cwd=task_field_packages,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(task_field_packages)},
    )
    assert result.returncode == 0, result.stdout


def test_control_characters_in_descriptions_are_escaped(tmp_path: Path) -> None:
    """A NUL (and any other control character, invisible format character or lone
    surrogate) in a description goes into the docstrings as the text of its escape:
    the package imports (a raw NUL made every module importing the models fail with
    "source code string cannot contain null bytes"; a lone surrogate made the class
    fail in pydantic) and each docstring shows the description with the escapes."""
    odd = "\x00 \x01 \x1b \x7f \x9b \u202e \ufeff \ud800"
    shown = "\\x00 \\x01 \\x1b \\x7f \\x9b \\u202e \\ufeff \\ud800"
    raw = _ext_with(
        {
            "OddTask": {
                "type": "object",
                "description": f"Odd {odd} task.",
                "properties": {
                    "p": {"type": "string", "description": f"Odd {odd} field."}
                },
            }
        }
    )
    raw["$defs"]["TaskStatus"]["description"] = f"Statuses {odd}."
    code, _, err = _generate(tmp_path, json.dumps(raw))
    assert code == 0, err
    out = tmp_path / "out"
    source = (out / "p" / "models_ext.py").read_text(encoding="utf-8")
    assert "\x00" not in source and "\x1b" not in source and "\u202e" not in source
    result = _run(
        out,
        "import json, p.models as m\nprint(json.dumps([m.OddTask.__doc__,"
        " m.TaskStatus.__doc__]))\n",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [f"Odd {shown} task.", f"Statuses {shown}."]
    odd_task = next(
        n
        for n in ast.parse(source).body
        if isinstance(n, ast.ClassDef) and n.name == "OddTask"
    )
    field_docs = [
        n.value.value
        for n in odd_task.body
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
    ]
    assert f"Odd {shown} field." in field_docs  # the attribute docstring of ``p``
