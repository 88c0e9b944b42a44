"""Shared test set-up: the golden packages are importable, and ../shared is located
once."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))


def shared_dir() -> Path:
    """The read-only reference folder (official schemas, wire examples), or
    skip/fail."""
    base = Path(os.environ.get("MCPTASKS_SHARED", ROOT.parent / "shared"))
    if (base / "schemas").is_dir():
        return base
    reason = (
        f"reference data not found at {base} (set MCPTASKS_SHARED to the shared/"
        " folder)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def shared() -> Path:
    """The ``shared/`` reference folder."""
    return shared_dir()


@pytest.fixture
def anyio_backend() -> str:
    """Run the async tests (anyio's pytest plugin) on asyncio only."""
    return "asyncio"
