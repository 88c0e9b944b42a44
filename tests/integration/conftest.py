"""Fixtures of the integration tier."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.spec_edits import Case
from tests.support import spec_cases


@pytest.fixture(scope="session")
def spec_packages(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, dict[str, Case]]]:
    """Every schema-edit case that must generate, generated into one folder (put on
    ``sys.path``), with ``user_code.py``; yields the folder and the cases by name."""
    out = tmp_path_factory.mktemp("edits")
    cases = {case.name: case for case in spec_cases.generate_all(out)}
    sys.path.insert(0, str(out))
    try:
        yield out, cases
    finally:
        sys.path.remove(str(out))
        for name in list(sys.modules):
            if name.split(".")[0] in {case.package for case in cases.values()}:
                del sys.modules[name]
