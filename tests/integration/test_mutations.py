"""Stable output: a small schema change makes a small, local change in the generated
tree.

(Whether the generated client and server then *follow* the change is tested end to end
in ``test_spec_edits.py``.) In the integration tier although it runs in process: it
generates and formats whole packages over and over (about 20 s), a third of what the
unit tier would take.

Each test builds a mutated copy of one of the project's schemas in a temporary folder
(add a status value, add an optional field, add a method, drop a field, reorder
``$defs``, change only descriptions), generates the original and the mutant in-process,
and checks the line diff of every generated file:

- every changed hunk either is the schema's sha256 (the header line, ``SCHEMA_SHA256``)
  or mentions the mutation's marker (the new value, field or method), and every other
  line in it is blank, part of a docstring, or the same line moved/re-wrapped within the
  hunk;
- only-descriptions changes touch docstrings only; a reorder of ``$defs`` touches
  nothing;
- no class or function is renamed: the original's names are all still there, and the
  only new ones belong to the mutation.

Both sides render from one snapshot of ``templates/`` (passed as the template override),
so a template edited while the tests run cannot show up as a difference.

Speed: the two originals go through ``pipeline.generate`` unchanged. Mutants share
black's work with them: the schema's sha256 (a comment and a string of fixed length) is
masked before formatting, so a file whose text is otherwise unchanged is not formatted
again; the rest goes through ``fmt.format_files`` as usual.
"""

from __future__ import annotations

import ast
import copy
import difflib
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcptasks_gen import fmt, pipeline
from mcptasks_gen.config import Target
from mcptasks_gen.render import environment, render
from tests.spec_edits import add_paused_status

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = {
    "2025": "schema/2025-11-25/schema.json",
    "ext": "schema/ext-2026-07-28/schema.json",
}
STATUSES = {"working", "input_required", "completed", "failed", "cancelled"}
_SHA = re.compile(r"[0-9a-f]{64}")
_MASK = "0" * 64
Schema = dict[str, Any]


# -- mutations (each returns the mutated schema and the strings that mark its lines) ---


def _walk(node: Any) -> Any:
    """Every dict inside a JSON value."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def add_status_value(raw: Schema) -> tuple[Schema, tuple[str, ...]]:
    """``paused`` joins every copy of the status enumeration (``enum`` or ``anyOf`` of
    consts); where the schema has a variant per status (the extension), a ``PausedTask``
    joins them.
    """
    if "WorkingTask" in raw["$defs"]:
        return add_paused_status(raw), ("paused", "PAUSED", "Paused")
    hits = 0
    for node in _walk(raw):
        if isinstance(node.get("enum"), list) and set(node["enum"]) == STATUSES:
            node["enum"].append("paused")
            hits += 1
        branches = node.get("anyOf")
        if (
            isinstance(branches, list)
            and all(isinstance(b, dict) and "const" in b for b in branches)
            and {b["const"] for b in branches} == STATUSES
        ):
            branches.append({"const": "paused", "type": "string"})
            hits += 1
    assert hits, "no status enumeration found"
    return raw, ("paused", "PAUSED")


def add_optional_field(raw: Schema) -> tuple[Schema, tuple[str, ...]]:
    """``Task`` gains an optional ``progressNote``."""
    raw["$defs"]["Task"]["properties"]["progressNote"] = {
        "description": "Frobnication progress note.",
        "type": "string",
    }
    return raw, ("progressNote", "progress_note", "Frobnication progress note")


def add_method(raw: Schema) -> tuple[Schema, tuple[str, ...]]:
    """A new request/result pair, ``tasks/frobnicate``, modelled on ``tasks/get``."""
    defs = raw["$defs"]
    request = json.loads(
        json.dumps(defs["GetTaskRequest"]).replace("tasks/get", "tasks/frobnicate")
    )
    result = copy.deepcopy(
        defs["CancelTaskResult"]
        if "UpdateTaskRequest" in defs
        else defs["GetTaskPayloadResult"]
    )
    result["description"] = "Answer to a frobnicate request."
    defs["FrobnicateTaskRequest"] = request
    defs["FrobnicateTaskResult"] = result
    return raw, ("frobnicate", "Frobnicate")


def drop_field(raw: Schema) -> tuple[Schema, tuple[str, ...]]:
    """``Tool`` loses ``title`` (optional and unused by the runtime, so nothing else has
    to change; dropping a task field the runtime needs stops generation, see
    test_spec_edits).
    """
    tool = raw["$defs"]["Tool"]
    del tool["properties"]["title"]
    assert "title" not in tool.get("required", [])
    return raw, ("title",)


def reorder_defs(raw: Schema) -> tuple[Schema, tuple[str, ...]]:
    """``$defs`` in reverse order."""
    raw["$defs"] = dict(reversed(list(raw["$defs"].items())))
    return raw, ()


def edit_descriptions(raw: Schema) -> tuple[Schema, tuple[str, ...]]:
    """Every description gets a sentence more."""
    for node in _walk(raw):
        if isinstance(node.get("description"), str) and node["description"]:
            node["description"] += " Edited."
    return raw, ("Edited.",)


MUTATIONS: dict[str, Callable[[Schema], tuple[Schema, tuple[str, ...]]]] = {
    "add_status_value": add_status_value,
    "add_optional_field": add_optional_field,
    "add_method": add_method,
    "drop_field": drop_field,
    "reorder_defs": reorder_defs,
    "edit_descriptions": edit_descriptions,
}


# -- generation ------------------------------------------------------------------------


_TEMPLATES: list[Path] = []  # a snapshot of templates/, taken once per test module


def target(schema: Path, label: str) -> Target:
    """Original and mutant share the label, so only the sha256 differs in the headers.

    Both render from one snapshot of the templates, so a template edited while the tests
    run cannot show up as a difference.
    """
    templates = _TEMPLATES[0] if _TEMPLATES else None
    return Target(
        schema=schema,
        schema_label=label,
        output=Path("."),
        package="mcp_tasks",
        revision=None,
        templates=templates,
        regenerate="mcptasks-gen generate",
        # the mutation that adds ``paused`` classifies it; a classification naming no
        # status of the schema is refused
        statuses=((("paused", "active"),) if '"paused"' in schema.read_text() else ()),
    )


@dataclass
class Generator:
    """Generates packages, reusing black's output for files that differ only in the
    sha256."""

    memo: dict[tuple[str, str], str]

    def original(self, t: Target) -> dict[str, str]:
        files = pipeline.generate(t)
        package = pipeline.build(t)
        raw = render(package, pipeline.protocol(package, t), environment(t.templates))
        for path, text in raw.items():
            self.memo[(path, _SHA.sub(_MASK, text))] = _SHA.sub(_MASK, files[path])
        return files

    def mutant(self, t: Target) -> dict[str, str]:
        package = pipeline.build(t)
        raw = render(package, pipeline.protocol(package, t), environment(t.templates))
        sha = package.schema_sha256
        out: dict[str, str] = {}
        misses: dict[str, str] = {}
        for path, text in raw.items():
            hit = self.memo.get((path, _SHA.sub(_MASK, text)))
            if hit is not None and _SHA.findall(text) == [sha] * len(
                _SHA.findall(text)
            ):
                out[path] = hit.replace(_MASK, sha)
            else:
                misses[path] = text
        out.update(fmt.format_files(misses, package.name) if misses else {})
        return {path: out[path] for path in raw}


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generator]:
    snapshot = tmp_path_factory.mktemp("templates") / "templates"
    shutil.copytree(
        ROOT / "templates", snapshot, ignore=shutil.ignore_patterns("__pycache__")
    )
    _TEMPLATES[:] = [snapshot]
    yield Generator(memo={})
    _TEMPLATES.clear()


@pytest.fixture(scope="module")
def originals(gen: Generator) -> dict[str, dict[str, str]]:
    """The generated tree of each project schema, straight from
    ``pipeline.generate``."""
    return {
        key: gen.original(target(ROOT / path, path)) for key, path in SCHEMAS.items()
    }


def mutate(
    gen: Generator, tmp_path: Path, key: str, mutation: str
) -> tuple[dict[str, str], tuple[str, ...]]:
    raw = json.loads((ROOT / SCHEMAS[key]).read_text(encoding="utf-8"))
    mutated, markers = MUTATIONS[mutation](raw)
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(mutated, indent=2) + "\n", encoding="utf-8")
    return gen.mutant(target(path, SCHEMAS[key])), markers


# -- what counts as belonging to the change --------------------------------------------


def docstring_lines(text: str) -> set[int]:
    """1-based numbers of the lines inside string-literal statements (docstrings)."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def names(text: str) -> set[str]:
    """Every class and function name defined in a module (at any depth)."""
    return {
        n.name
        for n in ast.walk(ast.parse(text))
        if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    }


@dataclass
class Hunk:
    path: str
    removed: list[tuple[int, str]]  # (1-based line in the original, text)
    added: list[tuple[int, str]]  # (1-based line in the mutant, text)

    def show(self) -> str:
        return f"{self.path}:\n" + "\n".join(
            [f"-{n}: {t}" for n, t in self.removed]
            + [f"+{n}: {t}" for n, t in self.added]
        )


def hunks(before: dict[str, str], after: dict[str, str]) -> list[Hunk]:
    """Changed line groups of every file (both trees have the same files)."""
    assert sorted(before) == sorted(after), "the set of generated files changed"
    out = []
    for path in sorted(before):
        a, b = before[path].splitlines(), after[path].splitlines()
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
            None, a, b, autojunk=False
        ).get_opcodes():
            if tag != "equal":
                out.append(
                    Hunk(
                        path,
                        [(i + 1, a[i]) for i in range(i1, i2)],
                        [(j + 1, b[j]) for j in range(j1, j2)],
                    )
                )
    return out


def is_sha_only(h: Hunk) -> bool:
    """The header line (or ``SCHEMA_SHA256``) with a new sha256, nothing else."""
    return len(h.removed) == len(h.added) and all(
        _SHA.sub("", r) == _SHA.sub("", a) and _SHA.search(r)
        for (_, r), (_, a) in zip(h.removed, h.added, strict=True)
    )


_COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.Match,
)


def marked_lines(text: str, markers: tuple[str, ...]) -> set[int]:
    """Lines of a class/function whose name carries a marker, or of a simple
    statement that does."""
    lines = text.splitlines()
    found: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(m in node.name for m in markers):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                found.update(range(first, (node.end_lineno or node.lineno) + 1))
        elif isinstance(node, ast.stmt) and not isinstance(node, _COMPOUND):
            end = node.end_lineno or node.lineno
            if any(m in "\n".join(lines[node.lineno - 1 : end]) for m in markers):
                found.update(range(node.lineno, end + 1))
    return found


def unexplained(
    h: Hunk,
    markers: tuple[str, ...],
    before: dict[str, str],
    after: dict[str, str],
    cache: dict[tuple[str, str, str], set[int]],
) -> list[str]:
    """Lines of a hunk that neither belong to the change nor are blanks, docstrings or
    moves.

    A line belongs to the change when it mentions a marker, lies in a statement that
    does, or lies in a class or function named after it. A docstring line is accepted in
    a hunk that also has such a line (the docstring of a field that was added or
    dropped).
    """
    if is_sha_only(h):
        return []

    def facts(side: str, kind: str) -> set[int]:
        key = (side, kind, h.path)
        if key not in cache:
            text = (before if side == "-" else after)[h.path]
            cache[key] = (
                set()
                if not h.path.endswith(".py")
                else (
                    docstring_lines(text)
                    if kind == "doc"
                    else marked_lines(text, markers)
                )
            )
        return cache[key]

    lines = [("-", n, t) for n, t in h.removed] + [("+", n, t) for n, t in h.added]
    belongs = {
        (s, n)
        for s, n, t in lines
        if any(m in t for m in markers) or n in facts(s, "marked")
    }
    removed_text = {t.strip().rstrip(",") for _, t in h.removed}
    added_text = {t.strip().rstrip(",") for _, t in h.added}
    bad = []
    for side, n, text in lines:
        core = text.strip().rstrip(",")
        if not core or core in "()[]{}" or (side, n) in belongs:
            continue
        if belongs and n in facts(side, "doc"):
            continue
        if core in (added_text if side == "-" else removed_text):  # moved or re-wrapped
            continue
        if side == "-" and _grown(
            core, added_text, markers
        ):  # the same line with the new name in it
            continue
        bad.append(f"{side}{n}: {text}")
    return bad


def _grown(core: str, added: set[str], markers: tuple[str, ...]) -> bool:
    """Whether an added line is ``core`` with the mutation's names added to it: an empty
    literal that now holds them (``{}`` -> ``{``), or a union that gained a member."""
    if core[-2:] in ("{}", "()", "[]") and core[:-1] in added:
        return True
    if not markers:
        return False
    names = re.compile(
        r"\s*[|,]?\s*\b\w*(?:" + "|".join(re.escape(m) for m in markers) + r")\w*\b",
        re.I,
    )
    squeeze = re.compile(r"\s+")
    return any(
        squeeze.sub("", names.sub("", line)) == squeeze.sub("", core)
        for line in added
        if names.search(line)
    )


def check_local(
    before: dict[str, str], after: dict[str, str], markers: tuple[str, ...]
) -> list[Hunk]:
    """Assert every hunk belongs to the change; return the hunks that are not
    sha-only."""
    cache: dict[tuple[str, str, str], set[int]] = {}
    problems = []
    for h in hunks(before, after):
        bad = unexplained(h, markers, before, after, cache)
        if bad:
            problems.append(f"{h.path}: " + " | ".join(bad[:6]))
    assert (
        not problems
    ), "lines changed that do not belong to the mutation:\n" + "\n".join(problems[:20])
    return [h for h in hunks(before, after) if not is_sha_only(h)]


def check_names(
    before: dict[str, str], after: dict[str, str], markers: tuple[str, ...]
) -> None:
    """No class or function renamed: old names all kept, new names only the
    mutation's."""
    for path in before:
        if not path.endswith(".py"):
            continue
        old, new = names(before[path]), names(after[path])
        assert old <= new, f"{path}: names gone: {sorted(old - new)}"
        extra = sorted(
            n for n in new - old if not any(m.lower() in n.lower() for m in markers)
        )
        assert not extra, f"{path}: unexpected new names {extra}"


# -- the tests -------------------------------------------------------------------------

KEYS = sorted(SCHEMAS)


@pytest.mark.parametrize("key", KEYS)
def test_reorder_defs_changes_only_the_sha(
    key: str, gen: Generator, originals: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    after, _ = mutate(gen, tmp_path, key, "reorder_defs")
    changed = [h for h in hunks(originals[key], after) if not is_sha_only(h)]
    assert not changed, "\n".join(h.show() for h in changed[:5])


@pytest.mark.parametrize("key", KEYS)
def test_descriptions_change_only_docstrings(
    key: str, gen: Generator, originals: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    before = originals[key]
    after, markers = mutate(gen, tmp_path, key, "edit_descriptions")
    bad = []
    old_docs = {
        p: docstring_lines(t) if p.endswith(".py") else set() for p, t in before.items()
    }
    new_docs = {
        p: docstring_lines(t) if p.endswith(".py") else set() for p, t in after.items()
    }
    changed = [h for h in hunks(before, after) if not is_sha_only(h)]
    assert changed, "descriptions are expected to reach docstrings"
    for h in changed:
        old_lines, new_lines = old_docs[h.path], new_docs[h.path]
        bad += [
            f"{h.path} -{n}: {t}"
            for n, t in h.removed
            if n not in old_lines and t.strip()
        ]
        bad += [
            f"{h.path} +{n}: {t}"
            for n, t in h.added
            if n not in new_lines and t.strip()
        ]
    assert not bad, "non-docstring lines changed:\n" + "\n".join(bad[:20])
    check_names(before, after, markers)


@pytest.mark.parametrize("key", KEYS)
def test_added_status_value(
    key: str, gen: Generator, originals: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    before = originals[key]
    after, markers = mutate(gen, tmp_path, key, "add_status_value")
    changed = check_local(before, after, markers)
    # the status reaches the runtime through the protocol tables; the runtime files stay
    # as they are
    assert changed and {h.path for h in changed} <= {
        "__init__.py",
        "models.py",
        f"models_{key}.py",
        "protocol.py",
        f"protocol_{key}.py",
        f"checks_{key}.py",
    }, sorted({h.path for h in changed})
    check_names(before, after, markers)
    assert 'PAUSED = "paused"' in after[f"models_{key}.py"]
    assert (
        '"paused"'
        in after[f"protocol_{key}.py"].split("ACTIVE_STATUSES")[1].split(")")[0]
    )


@pytest.mark.parametrize("key", KEYS)
def test_added_optional_field(
    key: str, gen: Generator, originals: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    before = originals[key]
    after, markers = mutate(gen, tmp_path, key, "add_optional_field")
    changed = check_local(before, after, markers)
    added = {t.strip().rstrip(",") for h in changed for _, t in h.added}
    assert changed and all(
        not t.strip() or _grown(t.strip().rstrip(","), added, markers)
        for h in changed
        for _, t in h.removed
    ), "an added field only adds lines"
    check_names(before, after, markers)


@pytest.mark.parametrize("key", KEYS)
def test_added_method(
    key: str, gen: Generator, originals: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    before = originals[key]
    after, markers = mutate(gen, tmp_path, key, "add_method")
    check_local(before, after, markers)
    check_names(before, after, markers)
    models = after[f"models_{key}.py"]
    assert (
        "class FrobnicateTaskRequest(" in models
        and "class FrobnicateTaskResult(" in models
    )
    assert '"tasks/frobnicate"' in models


@pytest.mark.parametrize("key", KEYS)
def test_dropped_field(
    key: str, gen: Generator, originals: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    before = originals[key]
    after, markers = mutate(gen, tmp_path, key, "drop_field")
    changed = check_local(before, after, markers)
    assert changed and all(
        not h.added or all(not t.strip() for _, t in h.added) for h in changed
    ), "a dropped field only removes lines"
    check_names(before, after, markers)


def test_memoised_formatting_matches_the_pipeline(
    gen: Generator, originals: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    """The speed-up above is sound: a mutant made through it equals
    ``pipeline.generate``."""
    after, _ = mutate(gen, tmp_path, "ext", "reorder_defs")
    t = target(tmp_path / "schema.json", SCHEMAS["ext"])
    package = pipeline.build(t)
    raw = render(package, pipeline.protocol(package, t), environment(t.templates))
    wanted = {p: raw[p] for p in ("__init__.py", "models_ext.py")}
    assert fmt.format_files(wanted, package.name) == {p: after[p] for p in wanted}
