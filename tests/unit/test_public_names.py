"""Every public name a generated package's modules offered stays importable there.

``public_names.json`` lists, module by module, the names of the three golden packages
as they were before the runtime was split into subpackages: the classes, functions
and constants each module defined or re-exported from the package (not what it
imported from the standard library or pydantic). A module that gives way to a
subpackage stays as a thin module re-exporting them, so a user's imports keep
working. New names may appear; none may go.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

NAMES: dict[str, list[str]] = json.loads(
    (Path(__file__).with_name("public_names.json")).read_text(encoding="utf-8")
)


@pytest.mark.parametrize("module", sorted(NAMES))
def test_module_keeps_its_public_names(module: str) -> None:
    """``from <module> import <name>`` works for each name it offered before."""
    loaded = importlib.import_module(module)
    missing = [name for name in NAMES[module] if not hasattr(loaded, name)]
    assert not missing, f"{module} lost {missing}"


def test_the_snapshot_covers_every_package() -> None:
    """The list is not empty by accident: each package has its client, server and
    stores modules in it."""
    for package in ("mcp_tasks", "mcp_tasks_2025_11_25", "mcp_tasks_ext"):
        for module in ("client", "server", "stores", "server_core", "client_core"):
            assert NAMES.get(f"{package}.{module}"), f"{package}.{module}"
    assert sum(map(len, NAMES.values())) > 1500
