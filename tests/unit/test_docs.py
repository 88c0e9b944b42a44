"""The documentation site builds without a warning, and what its pages show is true.

``mkdocs build --strict`` runs with the venv's mkdocs, offline. The code blocks of
README.md, CONTRIBUTING.md and every page under docs/ are checked: Python blocks parse,
are black-formatted and import only names the generated packages have; TOML, YAML and
JSON blocks parse; the documented options, error messages, check ids and counts match
the code and the goldens they describe. (The quickstart itself is run by
``test_quickstart.py``.)
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import sys

import black
import pytest

from tests.support.docs import (
    DOCS,
    ROOT,
    Block,
    all_blocks,
    load_mkdocs_config,
    nav_pages,
    section,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

GOLDEN_REPORT = ROOT / "tests" / "golden" / "diff-2025-11-25-to-ext.md"
PYTHON_BLOCKS = list(all_blocks("python"))


def _ids(blocks: list[Block]) -> list[str]:
    return [block.where for block in blocks]


def _flat(text: str) -> str:
    """Markdown text with its line breaks as spaces (prose is wrapped anywhere)."""
    return re.sub(r"\s+", " ", text)


# -- the site ------------------------------------------------------------------------


def test_the_site_works_offline() -> None:
    """No plugin that fetches from the network (Material's privacy and social
    plugins), no web fonts."""
    config = load_mkdocs_config()
    plugins = [
        next(iter(p)) if isinstance(p, dict) else p for p in config.get("plugins", [])
    ]
    for plugin in plugins:
        assert plugin.split("/")[-1] not in ("privacy", "social"), plugin
    assert config["theme"].get("font") is False


def test_every_page_is_in_the_nav() -> None:
    pages = {str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md")}
    assert pages == set(nav_pages())


# -- code blocks ---------------------------------------------------------------------


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=_ids(PYTHON_BLOCKS))
def test_python_blocks_parse_and_are_black_formatted(block: Block) -> None:
    """A Python snippet is valid Python, formatted as black 26 formats the project's
    code (line length 88), so a later ruff/black pass over the docs changes nothing."""
    compile(
        block.code,
        block.where,
        "exec",
        flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
    )
    formatted = black.format_str(block.code, mode=black.Mode(line_length=88))
    assert (
        formatted == block.code
    ), f"{block.where} is not black-formatted; black makes it:\n{formatted}"


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=_ids(PYTHON_BLOCKS))
def test_python_blocks_import_what_the_packages_have(block: Block) -> None:
    """Every ``from mcp_tasks... import name`` of a snippet names a module of a
    generated package and a name it has (the goldens in generated/ stand for the
    generated code).
    """
    for node in ast.walk(ast.parse(block.code)):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.split(".")[0].startswith("mcp_tasks")
        ):
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(
                    module, alias.name
                ), f"{block.where}: {node.module} has no {alias.name}"


def test_toml_blocks_parse_and_use_known_target_keys() -> None:
    from mcptasks_gen import config

    seen = 0
    for block in all_blocks("toml"):
        data = tomllib.loads(block.code)
        for target in data.get("tool", {}).get("mcptasks-gen", {}).get("targets", []):
            unknown = set(target) - config._TARGET_KEYS
            assert not unknown, f"{block.where}: unknown target keys {unknown}"
            seen += 1
    assert seen >= 3


def test_yaml_blocks_parse() -> None:
    import yaml

    blocks = list(all_blocks(("yaml", "yml")))
    assert blocks
    for block in blocks:
        assert yaml.safe_load(block.code) is not None, block.where


def test_json_blocks_parse() -> None:
    blocks = list(all_blocks("json"))
    assert blocks
    for block in blocks:
        json.loads(block.code)


# -- what the pages state ------------------------------------------------------------


def _table_options(text: str) -> set[str]:
    """The options named in the first column of a Markdown table (``-o``,
    ``--check``)."""
    return {
        match
        for row in re.findall(r"^\| `([^`]+)`", text, re.M)
        for match in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", row)
    }


def test_generate_options_match_the_command() -> None:
    """The option table of the command-line page lists every option of ``generate``, and
    no other."""
    from mcptasks_gen.cli import generate

    documented = _table_options(
        section(DOCS / "usage.md", "## `mcptasks-gen generate`")
    )
    actual = {
        opt
        for param in generate.params
        for opt in param.opts
        if opt.startswith("-") and opt != "--output"
    }
    assert documented == actual


def test_check_ids_match_the_checker() -> None:
    """The table of behavioural checks has one row per check of the engine."""
    from mcp_tasks import check

    table = section(DOCS / "checker.md", "## The checks")
    documented = re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \|", table, re.M)
    assert documented == [entry.id for entry in check.REGISTRY]


def test_error_examples_match_the_error_goldens() -> None:
    """Each error line the command-line page shows is the message of an error golden."""
    goldens = {
        line.split(": error: ", 1)[1]
        for path in (ROOT / "tests" / "golden" / "errors").glob("*.stderr")
        for line in path.read_text(encoding="utf-8").splitlines()
        if ": error: " in line
    }
    block = next(
        b
        for b in all_blocks("text")
        if b.path == DOCS / "usage.md" and ": error: " in b.code
    )
    shown = [line.split(": error: ", 1)[1] for line in block.code.splitlines() if line]
    assert shown and set(shown) <= goldens, set(shown) - goldens
    assert len(shown) == len(goldens)


def _golden_counts() -> tuple[str, str, str, str]:
    golden = GOLDEN_REPORT.read_text(encoding="utf-8")
    counts = re.search(
        r"\*\*(\d+) changes: (\d+) breaking for clients, (\d+) breaking for servers,"
        r" (\d+) compatible for both\.\*\*",
        golden,
    )
    assert counts is not None
    n, client, server, compatible = counts.groups()
    return n, client, server, compatible


def test_migration_summary_matches_the_golden_report() -> None:
    """The migration page quotes the counts of the golden 2025 -> extension report."""
    golden = GOLDEN_REPORT.read_text(encoding="utf-8")
    n, client, server, compatible = _golden_counts()
    page = _flat((DOCS / "migrating.md").read_text(encoding="utf-8"))
    assert (
        f"{n} changes, {client} breaking for clients, {server} breaking for servers,"
        f" {compatible} compatible for both" in page
    )
    for method in (
        "tasks/result",
        "tasks/list",
        "tasks/update",
        "notifications/tasks/status",
    ):
        assert f"`{method}`" in page and method in golden


def test_diff_examples_match_the_golden_report() -> None:
    """The ``diff`` examples (text summary line and JSON summary) carry the golden
    counts."""
    n, client, server, compatible = _golden_counts()
    page = (DOCS / "spec-changes.md").read_text(encoding="utf-8")
    assert (
        f"{n} changes: {client} breaking for clients, {server} breaking for servers,"
        f" {compatible} compatible for both" in page
    )
    summary = json.loads(
        next(b.code for b in all_blocks("json") if b.path == DOCS / "spec-changes.md")
    )["summary"]
    golden = json.loads(
        (ROOT / "tests" / "golden" / "diff-2025-11-25-to-ext.json").read_text(
            encoding="utf-8"
        )
    )["summary"]
    assert summary == golden


def test_lists_follow_a_blank_line() -> None:
    """Python-Markdown (unlike GitHub) renders a list that directly follows a paragraph
    line as part of the paragraph: the pages leave a blank line before each list."""
    stray: list[str] = []
    for path in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        previous, fenced = "", False
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("```"):
                fenced = not fenced
            elif (
                not fenced
                and re.match(r"(- |\d+\. )", line)
                and previous.strip()
                and not re.match(r"(- |\d+\. | )", previous)
            ):
                stray.append(f"{path.relative_to(ROOT)}:{number}")
            previous = line
    assert not stray, f"lists right after a paragraph line: {stray}"


def test_the_documented_file_counts_are_the_goldens() -> None:
    """ "has N files" and "wrote N of N files" in the docs match the one-revision
    golden package's file count."""
    package = ROOT / "generated" / "mcp_tasks_ext"
    count = sum(
        1 for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )
    text = (DOCS / "package.md").read_text() + (DOCS / "spec-changes.md").read_text()
    claims = re.findall(r"has (\d+) files|wrote (\d+) of (\d+) files", text)
    assert claims
    for claim in claims:
        assert {int(n) for n in claim if n} == {count}, (claim, count)
