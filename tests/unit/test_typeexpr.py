"""The type-expression tree: what it renders, and that no stage reads types back from
text.

Types travel from ``normalize`` to the templates as ``typeexpr`` trees; ``render()``
makes the annotation text. Each tree the generator builds for the golden packages
renders to source that means that same tree again (``parse(t.render()) == t``).
"""

from __future__ import annotations

import ast
import copy
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcptasks_gen import ir, pipeline
from mcptasks_gen import typeexpr as tx
from mcptasks_gen.config import Target, targets_from_pyproject
from tests.support.typetext import parse

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "generator"


def _types(bundle: ir.Bundle) -> Iterator[tx.Type]:
    """Every type in a package's IR."""
    for revision in bundle.revisions:
        package, protocol = revision.package, revision.protocol
        for model in package.models:
            if isinstance(model, ir.ObjectModel):
                yield from (f.annotation for f in model.fields)
            elif isinstance(model, ir.RootModel):
                yield model.annotation
        for method in package.methods:
            yield from (method.params, method.result)
        for pm in protocol.methods:
            yield from (pm.params, pm.result, *(k.annotation for k in pm.kwargs))
        yield from (
            f.annotation for f in (*protocol.task_fields, *protocol.task_extras)
        )
    yield from (f.annotation for f in bundle.task_extras)


@pytest.fixture(scope="module")
def golden_types() -> list[tx.Type]:
    found: dict[tx.Type, None] = {}
    for target in targets_from_pyproject(ROOT / "pyproject.toml", ROOT):
        found.update(dict.fromkeys(_types(pipeline.package(target))))
    return list(found)


def test_every_golden_type_renders_to_source_of_the_same_tree(
    golden_types: list[tx.Type],
) -> None:
    kinds = {type(node) for t in golden_types for node in tx.walk(t)}
    assert kinds == {
        tx.Name,
        tx.Union,
        tx.Generic,
        tx.Literal,
        tx.Annotated,
        tx.Forward,
    }, kinds
    for t in golden_types:
        text = t.render()
        assert parse(text) == t, text
        assert parse(text).render() == text


@pytest.mark.parametrize(
    ("tree", "text"),
    [
        (tx.Literal(("class",)), 'Literal["class"]'),
        (
            tx.Literal(("def", "None", "import", "lambda", "True")),
            'Literal["def", "None", "import", "lambda", "True"]',
        ),
        (tx.Literal(("it's", 'say "hi"')), """Literal["it's", 'say "hi"']"""),
        (tx.Literal((1, True, "1")), 'Literal[1, True, "1"]'),
        (tx.optional(tx.Literal(("a", "b"))), 'Literal["a", "b"] | None'),
        (
            tx.Generic(
                "dict",
                (tx.STR, tx.Generic("list", (tx.Generic("dict", (tx.STR, tx.ANY)),))),
            ),
            "dict[str, list[dict[str, Any]]]",
        ),
        (tx.optional(tx.union([tx.Name("A"), tx.Name("B")])), "A | B | None"),
        (
            tx.Annotated(tx.INT, (tx.Constraints((("ge", 0), ("pattern", "^a'b$"))),)),
            """Annotated[int, Field(ge=0, pattern="^a'b$")]""",
        ),
        (
            tx.Annotated(
                tx.union([tx.Name("A"), tx.Name("B")]), (tx.Discriminated("kind"),)
            ),
            'Annotated[A | B, Field(discriminator="kind")]',
        ),
        (
            tx.Forward(
                tx.Annotated(tx.union([tx.Name("A"), tx.NONE]), (tx.Dispatched("_P"),))
            ),
            '"Annotated[A | None, _P]"',
        ),
        (tx.Name("Task", "models_ext"), "models_ext.Task"),
    ],
)
def test_render_and_round_trip(tree: tx.Type, text: str) -> None:
    """Keywords and quotes inside literals are values, never syntax: they render as
    strings and come back as the same tree."""
    assert tree.render() == text
    assert parse(tree.render()) == tree
    compile(f"x: {tree.render()}", "<annotation>", "exec", ast.PyCF_ONLY_AST)


def test_trees_compare_by_structure() -> None:
    """``Literal[1]`` and ``Literal[True]`` are different types, as their source is;
    unions are flat; ``base`` drops ``| None``, metadata and forward quotes."""
    assert tx.Literal((1,)) != tx.Literal((True,))
    assert len({tx.Literal((1,)), tx.Literal((True,)), tx.Literal((1,))}) == 2
    nested = tx.union([tx.union([tx.Name("A"), tx.Name("B")]), tx.Name("C")])
    assert nested == tx.Union((tx.Name("A"), tx.Name("B"), tx.Name("C")))
    assert tx.union([tx.Name("A"), tx.Name("A")]) == tx.Name("A")
    annotated = tx.Forward(
        tx.optional(tx.Annotated(tx.INT, (tx.Constraints((("ge", 1),)),)))
    )
    assert tx.base(annotated) == tx.INT
    assert tx.depth(parse("list[dict[str, Annotated[int, Field(ge=1)]]]")) == 3
    assert tx.nullable(parse("A | None")) and not tx.nullable(parse("None | A"))
    assert tx.without_metadata(parse("list[Annotated[A, Tag('x')]] | None")) == (
        parse("list[A] | None")
    )
    assert tx.qualify(parse("list[A] | B | None"), ("A",), "m") == parse(
        "list[m.A] | B | None"
    )
    assert tx.names(parse('Literal["Task"] | dict[str, Any]')) == {
        "Literal",
        "dict",
        "str",
        "Any",
    }


def test_keyword_literals_reach_the_generated_task_fields(tmp_path: Path) -> None:
    """An optional task field of keyword constants (``Literal["class", ...]``) goes
    through every stage, into the ``TaskFields`` of the protocol module, without any
    stage reading it back from text."""
    schema = json.loads(
        (ROOT / "schema" / "ext-2026-07-28" / "schema.json").read_text()
    )
    raw = copy.deepcopy(schema)
    raw["$defs"]["Task"]["properties"]["kind"] = {
        "type": "string",
        "enum": ["class", "def", "None", "lambda"],
    }
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(raw))
    target = Target(
        schema=path,
        schema_label="schema.json",
        output=tmp_path,
        package="mcp_tasks_kw",
        revision=None,
        templates=None,
        regenerate="x",
    )
    bundle = pipeline.package(target)
    (extra,) = (f for f in bundle.task_extras if f.wire_name == "kind")
    assert extra.annotation == tx.optional(
        tx.Literal(("class", "def", "None", "lambda"))
    )
    files = pipeline.generate(target)
    assert (
        '    kind: Literal["class", "def", "None", "lambda"] | None\n'
        in files["protocol_ext.py"]
    )


# -- no stage parses type text --------------------------------------------------------

PARSERS = ("parse", "literal_eval", "unparse")
"""``ast`` functions that read (or write) Python source."""

ALLOWED: dict[tuple[str, str], str] = {
    ("render.py", "compile"): (
        "_check_python: a --templates runtime override is copied verbatim; compiling"
        " it (to an AST only) refuses a file that is not Python. The file is the"
        " user's, not text another stage produced."
    ),
}
"""(module, call) -> why this use of Python's parser is not a stage reading types."""


def _parser_calls(path: Path) -> list[tuple[str, int]]:
    """The calls in a module that hand Python source to a parser: ``ast.parse``,
    ``ast.literal_eval``, ``ast.unparse`` (by any import spelling) and ``compile``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "ast":
            imported.update(a.asname or a.name for a in node.names if a.name in PARSERS)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in PARSERS
            and isinstance(func.value, ast.Name)
            and func.value.id == "ast"
        ):
            found.append((func.attr, node.lineno))
        elif isinstance(func, ast.Name) and (
            func.id in imported or func.id in ("compile", "eval", "exec")
        ):
            found.append((func.id, node.lineno))
    return found


def test_no_generator_module_parses_python_text() -> None:
    """Types are data from ``normalize`` to the templates: no module of the generator
    reads annotation text back with ``ast.parse``, ``literal_eval`` (or ``eval``,
    ``unparse``). Each remaining use of Python's parser is allowed by name, with why."""
    modules = sorted(GENERATOR.glob("*.py"))
    assert len(modules) > 10
    seen: set[tuple[str, str]] = set()
    for path in modules:
        for call, line in _parser_calls(path):
            key = (path.name, call)
            assert key in ALLOWED, (
                f"generator/{path.name}:{line} calls {call}(): a stage must not read"
                " Python text another stage produced (walk the typeexpr tree instead),"
                " or allow the site in ALLOWED with its reason"
            )
            seen.add(key)
    assert seen == set(ALLOWED), f"stale allow-list entries: {set(ALLOWED) - seen}"


def test_the_scan_finds_parser_calls(tmp_path: Path) -> None:
    """The scan sees each spelling a module could use."""
    module = tmp_path / "m.py"
    module.write_text(
        "import ast\nfrom ast import literal_eval as le\n"
        "ast.parse('x')\nle('1')\nast.unparse(None)\n"
    )
    assert [call for call, _ in _parser_calls(module)] == ["parse", "le", "unparse"]
