"""The shape of the tree, checked: the runtime split by concern stays split.

No module of ``templates/runtime/`` is over 800 lines and no class in it over 500
(parts are composed, not one object's methods spread over files); there is one
``JsonRpcError``; stores and transports import nothing of the server or the client
core; and README.md stays a page a new user reads (under 15,000 bytes).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "templates" / "runtime"
MODULES = sorted(RUNTIME.rglob("*.py"))

MAX_MODULE_LINES = 800
MAX_CLASS_LINES = 500


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _name(path: Path) -> str:
    return path.relative_to(RUNTIME).as_posix()


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_runtime_module_is_at_most_800_lines(path: Path) -> None:
    """A runtime module holds one concern: at most 800 lines."""
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{_name(path)} has {lines} lines"


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_runtime_classes_are_at_most_500_lines(path: Path) -> None:
    """No class of the runtime is over 500 lines (its docstring included)."""
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.ClassDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES
    ]
    assert not long, f"{_name(path)}: {long}"


def test_one_json_rpc_error_class() -> None:
    """``JsonRpcError`` is defined once, in ``jsonrpc.py``; every other module
    imports it."""
    defined = [
        _name(path)
        for path in MODULES
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.ClassDef) and node.name == "JsonRpcError"
    ]
    assert defined == ["jsonrpc.py"]


def _imports(path: Path) -> set[str]:
    """The package-relative modules ``path`` imports (``from ..server import x`` in
    ``stores/redis.py`` -> ``server``), at run time (not under TYPE_CHECKING)."""
    package = path.relative_to(RUNTIME).parent.parts
    found: set[str] = set()
    tree = _tree(path)
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            guarded.update(id(child) for child in ast.walk(node))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level and id(node) not in guarded:
            base = list(package[: len(package) - (node.level - 1)])
            target = [*base, *(node.module.split(".") if node.module else [])]
            found.add(".".join(target) or ".")
    return found


@pytest.mark.parametrize(
    "layer",
    [
        "jsonrpc.py",
        "revision.py",
        "task_ids.py",
        "stores",
        "client/transport.py",
        "client/http.py",
        "client/stdio.py",
        "client/dispatch.py",
    ],
)
def test_lower_layers_import_nothing_above_them(layer: str) -> None:
    """Stores, transports and the shared JSON-RPC and revision modules know nothing
    of the server, the client core, the SDK seams or the checker."""
    paths = (
        sorted((RUNTIME / layer).rglob("*.py"))
        if (RUNTIME / layer).is_dir()
        else [RUNTIME / layer]
    )
    above = ("server", "server_core", "client_core", "asgi", "sdk", "check")
    if layer.startswith("client/"):
        above += ("client.core", "client.dual", "client.handle", "client.wait")
    for path in paths:
        assert path.exists(), f"{layer} is not in the runtime"
        bad = sorted(
            m
            for m in _imports(path)
            if m.split(".")[0] in above or ".".join(m.split(".")[:2]) in above
        )
        assert not bad, f"{_name(path)} imports {bad}"


def test_readme_is_short() -> None:
    """README.md is the first page, not the manual: under 15,000 bytes."""
    assert len((ROOT / "README.md").read_bytes()) < 15_000
