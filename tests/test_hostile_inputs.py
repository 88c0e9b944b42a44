"""Odd and hostile schemas: exit 0 with a package that imports and type-checks, or
exit 2 with one line naming the file and the JSON pointer; never a traceback, never
exit 1 (issue 9, items 11-13)."""

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

ROOT = Path(__file__).resolve().parents[1]
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


def _one_line_error(tmp_path: Path, stderr: str, pointer: str) -> None:
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert stderr.startswith(f"{tmp_path / 'schema.json'}#{pointer}"), stderr
    assert ": error: " in stderr


def _nest(leaf: dict[str, Any], depth: int, wrap: Any) -> dict[str, Any]:
    node = leaf
    for _ in range(depth):
        node = wrap(node)
    return node


@pytest.mark.parametrize(
    ("case", "text", "pointer"),
    [
        ("json-array-100000", "[" * 100_000 + "]" * 100_000, "/0/0/0"),
        (
            "json-object-100000",
            '{"$defs": {"A": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}}",
            "/$defs/A/a/a",
        ),
        (
            "properties-400",
            json.dumps(
                _ext_with(
                    {
                        "DeepTask": _nest(
                            {"type": "string"},
                            400,
                            lambda n: {"type": "object", "properties": {"a": n}},
                        )
                    }
                )
            ),
            "/$defs/DeepTask/properties/a/properties/a",
        ),
        (
            "items-199",
            json.dumps(
                _ext_with(
                    {
                        "ItemsTask": {
                            "type": "object",
                            "properties": {
                                "a": _nest(
                                    {"type": "string"},
                                    199,
                                    lambda n: {"type": "array", "items": n},
                                )
                            },
                        }
                    }
                )
            ),
            "/$defs/ItemsTask/properties/a/items/items",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 40 else "",
)
def test_deep_nesting_is_a_one_line_error(
    case: str, text: str, pointer: str, tmp_path: Path
) -> None:
    code, _, err = _generate(tmp_path, text)
    assert code == 2, err
    _one_line_error(tmp_path, err, pointer)
    assert "nested deeper than 64" in err


@pytest.mark.parametrize(
    ("defs", "pointer", "cycle"),
    [
        (
            {
                "ATask": {"allOf": [{"$ref": "#/$defs/BTask"}]},
                "BTask": {"allOf": [{"$ref": "#/$defs/ATask"}]},
            },
            "/$defs/",
            "ATask",
        ),
        (
            {"ATask": {"allOf": [{"$ref": "#/$defs/ATask"}]}},
            "/$defs/ATask/allOf",
            "ATask -> ATask",
        ),
    ],
    ids=["two", "self"],
)
def test_all_of_cycle(
    defs: dict[str, Any], pointer: str, cycle: str, tmp_path: Path
) -> None:
    code, _, err = _generate(tmp_path, json.dumps(_ext_with(defs)))
    assert code == 2, err
    _one_line_error(tmp_path, err, pointer)
    assert "allOf cycle" in err and cycle in err


def _chain(kind: str, length: int) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for i in range(length):
        ref = {"$ref": f"#/$defs/C{i + 1}"}
        defs[f"C{i}"] = {
            "alias": ref,
            "object": {"type": "object", "properties": {"next": ref}},
            "array": {"type": "array", "items": ref},
            "allOf": {
                "allOf": [
                    ref,
                    {"type": "object", "properties": {f"p{i}": {"type": "string"}}},
                ]
            },
        }[kind]
    defs[f"C{length}"] = {"type": "object", "properties": {"x": {"type": "string"}}}
    defs["ChainTask"] = {"type": "object", "properties": {"c": {"$ref": "#/$defs/C0"}}}
    return defs


@pytest.mark.parametrize("kind", ["alias", "object", "array", "allOf"])
def test_ref_chain_10000_long(kind: str, tmp_path: Path) -> None:
    """A 10,000-long chain of definitions: a one-line error at the documented limit."""
    code, _, err = _generate(tmp_path, json.dumps(_ext_with(_chain(kind, 10_000))))
    assert code == 2, err
    _one_line_error(tmp_path, err, "/$defs/C32")
    assert "more than 32 deep" in err


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
        " {'k': 1}, 'meta': 'm', 'wire_constants': 'w', 'int': 3, 'str': 's'}\nc ="
        " m.CollideTask.model_validate(wire)\nassert json.dumps(c.to_wire(),"
        " sort_keys=True) == json.dumps(wire, sort_keys=True), c.to_wire()\nassert"
        " m.CollideTask.model_validate_json(c.model_dump_json(exclude_unset=True)) =="
        " c\nassert m.CollideTask.wire_constants == frozenset()\n"
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


def test_reserved_names_cover_what_models_define() -> None:
    """Every module-level name the generated models.py binds, other than the schema's
    classes, is reserved, so a definition can never take it."""
    import ast

    from mcptasks_gen.normalize import RESERVED_NAMES

    for package, suffix in (("mcp_tasks_2025_11_25", "2025"), ("mcp_tasks_ext", "ext")):
        tree = ast.parse(
            (ROOT / "generated" / package / f"models_{suffix}.py").read_text(
                encoding="utf-8"
            )
        )
        schema_classes = {
            n.name
            for n in tree.body
            if isinstance(n, ast.ClassDef)
            and n.name not in ("McpModel", "McpRootModel", "ErrorCode")
        }
        bound: set[str] = set()
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.ClassDef):
                bound.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = (
                    node.targets if isinstance(node, ast.Assign) else [node.target]
                )
                bound |= {t.id for t in targets if isinstance(t, ast.Name)}
        helpers = {n for n in bound - schema_classes if n[:1].isupper()}
        assert helpers <= RESERVED_NAMES, helpers - RESERVED_NAMES


def _task_def(**keywords: Any) -> dict[str, Any]:
    """A surface definition (its name has "Task") made of ``keywords``."""
    return {"OddTask": {"type": "object", **keywords}}


@pytest.mark.parametrize(
    ("defs", "pointer"),
    [
        ({"NothingTask": False}, "/$defs/NothingTask"),
        (
            {"NothingTask": {"type": "array", "items": False}},
            "/$defs/NothingTask/items",
        ),
    ],
)
def test_a_schema_that_matches_nothing_is_a_one_line_error(
    defs: dict[str, Any], pointer: str, tmp_path: Path
) -> None:
    """``false`` where a value must be typed (a definition, an array's items): one
    line, exit 2 (a ``false`` definition used to end in a traceback)."""
    code, _, stderr = _generate(tmp_path, json.dumps(_ext_with(defs)))
    assert code == 2, stderr
    _one_line_error(tmp_path, stderr, pointer)
    assert stderr.rstrip("\n").endswith(
        "error: a schema that matches nothing cannot be generated"
    ), stderr


@pytest.mark.parametrize(
    ("keywords", "pointer", "message"),
    [
        (
            {"properties": "a"},
            "/$defs/OddTask/properties",
            '"properties" must be an object of schemas, not a JSON string',
        ),
        (
            {"properties": {"a": "string"}},
            "/$defs/OddTask/properties/a",
            '"properties" must be an object of schemas, not a JSON string',
        ),
        (
            {"allOf": {"$ref": "#/$defs/Task"}},
            "/$defs/OddTask/allOf",
            '"allOf" must be a non-empty array of schemas, not a JSON object',
        ),
        (
            {"anyOf": []},
            "/$defs/OddTask/anyOf",
            '"anyOf" must be a non-empty array of schemas, not a JSON array',
        ),
        (
            {"anyOf": ["x"]},
            "/$defs/OddTask/anyOf/0",
            '"anyOf" must be an array of schemas, not a JSON string',
        ),
        (
            {"required": None},
            "/$defs/OddTask/required",
            '"required" must be an array of strings, not a JSON null',
        ),
        (
            {"required": ["a", 1]},
            "/$defs/OddTask/required/1",
            '"required" must be an array of strings, not a JSON number',
        ),
        (
            {"description": {"en": "x"}},
            "/$defs/OddTask/description",
            '"description" must be a string, not a JSON object',
        ),
        (
            {"properties": {"a": {"type": "string", "maxLength": -1}}},
            "/$defs/OddTask/properties/a/maxLength",
            '"maxLength" must be a non-negative integer, not a JSON number',
        ),
        (
            {"properties": {"a": {"type": "number", "minimum": "0"}}},
            "/$defs/OddTask/properties/a/minimum",
            '"minimum" must be a number, not a JSON string',
        ),
        (
            {"properties": {"a": {"type": "array", "items": "string"}}},
            "/$defs/OddTask/properties/a/items",
            '"items" must be a schema (an object or a boolean), not a JSON string',
        ),
        (
            {"additionalProperties": 1},
            "/$defs/OddTask/additionalProperties",
            (
                '"additionalProperties" must be a schema (an object or a boolean), not'
                " a JSON number"
            ),
        ),
        (
            {"enum": "a"},
            "/$defs/OddTask/enum",
            (
                '"enum" must be a non-empty array (no value matches an empty one), not'
                " a JSON string"
            ),
        ),
        (
            {"properties": {"a": {"type": "string", "enum": []}}},
            "/$defs/OddTask/properties/a/enum",
            (
                '"enum" must be a non-empty array (no value matches an empty one), not'
                " a JSON array"
            ),
        ),
        (
            {"properties": {"a": {"type": "array", "uniqueItems": "yes"}}},
            "/$defs/OddTask/properties/a/uniqueItems",
            '"uniqueItems" must be a boolean, not a JSON string',
        ),
        (
            {"properties": {"a": {"type": "string", "pattern": "[a-"}}},
            "/$defs/OddTask/properties/a/pattern",
            (
                "pattern is not a regular expression the models can check: unterminated"
                " character set at position 0"
            ),
        ),
        (
            {"properties": {"a": {"allOf": [{"type": "string"}, {"type": "integer"}]}}},
            "/$defs/OddTask/properties/a/allOf/1",
            "allOf of schemas with no JSON type in common matches nothing",
        ),
        (
            {
                "properties": {
                    "a": {"allOf": [{"type": "string"}, {"properties": {"b": {}}}]}
                }
            },
            "/$defs/OddTask/properties/a/allOf/1",
            (
                "allOf that combines a non-object schema with an object or a union is"
                " not supported"
            ),
        ),
        (
            {"properties": {"a": {"enum": ["x", {"a": 1}]}}},
            "/$defs/OddTask/properties/a/enum/1",
            (
                'enum value {"a": 1} is not supported: only strings, integers, booleans'
                " and null can be a Python Literal"
            ),
        ),
        (
            {"properties": {"a": {"const": 1.5}}},
            "/$defs/OddTask/properties/a/const",
            (
                "const value 1.5 is not supported: only strings, integers, booleans and"
                " null can be a Python Literal"
            ),
        ),
        (
            {"properties": {"a": {"type": []}}},
            "/$defs/OddTask/properties/a/type",
            '"type" must name at least one JSON type',
        ),
        (
            {"properties": {"a": {"type": "number", "minimum": float("nan")}}},
            "/$defs/OddTask/properties/a/minimum",
            "minimum must be a finite number",
        ),
        (
            {"properties": {"a": {"$ref": None}}},
            "/$defs/OddTask/properties/a/$ref",
            "$ref must be a string",
        ),
        (
            {"properties": {"a": {"type": None}}},
            "/$defs/OddTask/properties/a/type",
            (
                "unsupported type null (expected one of array, boolean, integer, null,"
                " number, object, string)"
            ),
        ),
    ],
)
def test_keyword_of_the_wrong_json_type_is_a_one_line_error(
    keywords: dict[str, Any], pointer: str, message: str, tmp_path: Path
) -> None:
    """A keyword whose value has the wrong JSON type is named with its pointer. Found by
    fuzzing the official schemas: before the check, three of these cases ended in a
    traceback (exit 1), eight generated a package from the invalid schema, and three
    were refused by later stages with less precise messages."""
    code, _, stderr = _generate(tmp_path, json.dumps(_ext_with(_task_def(**keywords))))
    assert code == 2, stderr
    _one_line_error(tmp_path, stderr, pointer)
    assert stderr.rstrip("\n").endswith(f"error: {message}"), stderr
    assert not (tmp_path / "out").exists()


def test_control_characters_in_a_message_are_escaped(tmp_path: Path) -> None:
    """A name or value of the input quoted in a message keeps the message on one line:
    its control characters are written as escapes (a newline in a ``$ref`` split the
    line).
    """
    code, _, err = _generate(
        tmp_path,
        json.dumps(
            _ext_with(
                {
                    "RefTask": {
                        "type": "object",
                        "properties": {"r\n": {"$ref": "#/$defs/a\nb\x00"}},
                    }
                }
            )
        ),
    )
    assert code == 2, err
    _one_line_error(tmp_path, err, "/$defs/RefTask/properties/r\\n/$ref")
    assert err.rstrip("\n").endswith(
        'error: dangling $ref "#/$defs/a\\nb\\x00" (no such definition)'
    ), err


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


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("#/$defs/sp%20aces", 'dangling $ref "#/$defs/sp%20aces" (no such definition)'),
        (
            "#anchor",
            (
                '$ref "#anchor" names an anchor, which is not supported (only JSON'
                ' pointer references "#/...")'
            ),
        ),
    ],
)
def test_unresolvable_ref_fragments(ref: str, message: str, tmp_path: Path) -> None:
    """A fragment that names nothing once decoded dangles; a plain-name (anchor)
    fragment, which was read as the whole document, is refused."""
    code, _, err = _generate(
        tmp_path,
        json.dumps(
            _ext_with(
                {
                    "sp ace": {"type": "string"},
                    "RefTask": {"type": "object", "properties": {"r": {"$ref": ref}}},
                }
            )
        ),
    )
    assert code == 2, err
    _one_line_error(tmp_path, err, "/$defs/RefTask/properties/r/$ref")
    assert err.rstrip("\n").endswith(f"error: {message}"), err


def test_duplicate_keys_are_refused_with_pointer_and_position(tmp_path: Path) -> None:
    """A key given twice in one object (JSON parsers keep the last one silently) is
    one line at the line:column of the second, naming its JSON pointer and where the
    first is."""
    text = EXT_SCHEMA.read_text(encoding="utf-8")
    anchor = '"Task": {'
    at = text.index(anchor) + len(anchor)
    text = text[:at] + '"description": "first",' + text[at:]
    line = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    second = text.index('"description"', at + 5)
    code, _, err = _generate(tmp_path, text)
    assert code == 2, err
    expected = (
        f"{tmp_path / 'schema.json'}:{text.count(chr(10), 0, second) + 1}:{second - text.rfind(chr(10), 0, second)}:"
        ' error: duplicate key "description" at #/$defs/Task/description (first at'
        f" {line}:{column}; the keys of an object must be unique)\n"
    )
    assert err == expected
    assert not (tmp_path / "out").exists()


def _generate_path(tmp_path: Path, schema: str) -> tuple[int, str]:
    """Run ``generate`` in-process on a schema path; exit code and stderr."""
    result = CliRunner().invoke(
        main, ["generate", schema, "-o", str(tmp_path / "out"), "--package", "p"]
    )
    assert result.exc_info is None or result.exc_info[0] is SystemExit, result.exc_info
    return result.exit_code, result.stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_endless_input_is_refused_at_the_size_limit(tmp_path: Path) -> None:
    """``/dev/zero`` as the schema: no more than 64 MiB is read, then one line (it
    hung)."""
    code, err = _generate_path(tmp_path, "/dev/zero")
    assert (
        code == 2
        and err == "/dev/zero: error: larger than 64 MiB (the generator's limit)\n"
    )
    assert not (tmp_path / "out").exists()


def test_oversized_file_is_refused_by_its_size(tmp_path: Path) -> None:
    """A regular file over the limit is refused by its size, before it is read (a sparse
    file here: reading it would take 64 MiB of memory)."""
    from mcptasks_gen.load import MAX_BYTES

    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(MAX_BYTES + 1)
    code, err = _generate_path(tmp_path, str(big))
    assert (
        code == 2
        and err == f"{big}: error: larger than 64 MiB (the generator's limit)\n"
    )


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
