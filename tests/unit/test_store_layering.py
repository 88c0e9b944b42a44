"""The task stores know nothing of the server or the client: their modules import only
each other, the package's ``protocol`` and ``jsonrpc``, and the standard library (or
the optional ``redis``), so a store can be used, tested and vendored on its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "templates" / "runtime"

ALLOWED = ("stores", "protocol", "jsonrpc")
"""The package's modules (and subpackages) a store module may import."""

STORE_FILES = sorted(
    [*(RUNTIME / "stores").glob("*.py"), RUNTIME / "redis_store.py"],
    key=lambda path: path.as_posix(),
)


def _package_imports(path: Path) -> list[str]:
    """The package modules ``path`` imports, relative to the package root
    (``stores.base``, ``jsonrpc``), including imports under ``TYPE_CHECKING``."""
    here = list(path.relative_to(RUNTIME).parts[:-1])  # the module's package
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            base = here[: len(here) - (node.level - 1)]
            if node.module:
                found.append(".".join([*base, node.module]))
            else:
                found += [".".join([*base, alias.name]) for alias in node.names]
    return found


@pytest.mark.parametrize(
    "path", STORE_FILES, ids=lambda path: path.relative_to(RUNTIME).as_posix()
)
def test_a_store_module_imports_no_server_or_client(path: Path) -> None:
    imported = _package_imports(path)
    assert imported, "expected the store module to import from the package"
    outside = [name for name in imported if name.split(".")[0] not in ALLOWED]
    assert not outside, f"{path.name} imports {outside}"
