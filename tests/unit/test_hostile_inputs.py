"""Odd and hostile schemas: exit 0 with a package that imports and type-checks, or
exit 2 with one line naming the file and the JSON pointer; never a traceback, never
exit 1 (issue 9, items 11-13)."""

from __future__ import annotations

import json
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
    second_line = text.count("\n", 0, second) + 1
    second_column = second - text.rfind("\n", 0, second)
    expected = (
        f"{tmp_path / 'schema.json'}:{second_line}:{second_column}:"
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
