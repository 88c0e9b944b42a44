"""Shared test set-up: the golden packages are importable, ../shared is located once,
the tests that need the official schema files are reported together when those files
are missing, and a run of whole folders is spread over two worker processes.

The tiers (``tests/unit``, ``tests/integration``, ``tests/interop``) are described in
CONTRIBUTING.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))

OFFICIAL_SCHEMAS = "official_schemas"
"""The marker of the tests that read ``../shared`` (the official schema files and the
spec's wire examples): without those files they do not run, and the run says so in one
line at its end; under ``CI=true`` they run and fail."""

_NOT_RUN = pytest.StashKey[int]()
_current: list[pytest.Item] = []


def _shared_base() -> Path:
    return Path(os.environ.get("MCPTASKS_SHARED", ROOT.parent / "shared"))


def official_schemas_present() -> bool:
    """Whether ``$MCPTASKS_SHARED`` (default ``../shared``) holds ``schemas/``."""
    return (_shared_base() / "schemas").is_dir()


def shared_dir() -> Path:
    """The read-only reference folder (official schemas, wire examples), or
    skip/fail.

    Only tests marked ``official_schemas`` may call it: they are the ones the run
    leaves out, and counts, when the folder is missing.
    """
    if _current and _current[-1].get_closest_marker(OFFICIAL_SCHEMAS) is None:
        pytest.fail(
            f"{_current[-1].nodeid} reads ../shared but is not marked"
            f" @pytest.mark.{OFFICIAL_SCHEMAS}"
        )
    base = _shared_base()
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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """Remember the running test (for the marker check of :func:`shared_dir`)."""
    _current.append(item)
    try:
        return (yield)
    finally:
        _current.pop()


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Leave out the ``official_schemas`` tests when the files are missing (not under
    ``CI=true``, where they run and fail)."""
    if official_schemas_present() or os.environ.get("CI") == "true":
        return
    needing = [item for item in items if item.get_closest_marker(OFFICIAL_SCHEMAS)]
    if not needing:
        return
    items[:] = [item for item in items if not item.get_closest_marker(OFFICIAL_SCHEMAS)]
    config.hook.pytest_deselected(items=needing)
    config.stash[_NOT_RUN] = len(needing)
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints the line
        workeroutput[OFFICIAL_SCHEMAS] = len(needing)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """xdist's controller: take the count of a worker (they all collect the same)."""
    count = getattr(node, "workeroutput", {}).get(OFFICIAL_SCHEMAS, 0)
    config: pytest.Config = node.config  # type: ignore[attr-defined]
    config.stash[_NOT_RUN] = max(config.stash.get(_NOT_RUN, 0), count)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """One closing line for the tests left out for want of the official schemas."""
    count = config.stash.get(_NOT_RUN, 0)
    if count and not hasattr(config, "workeroutput"):
        terminalreporter.write_line(
            f"{count} tests need the official schema files and did not run: set"
            " MCPTASKS_SHARED to the folder that holds schemas/ (see CONTRIBUTING.md)",
            yellow=True,
        )


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (in pyproject's addopts): one worker more than the CPUs when the
    run names folders (or nothing: the whole suite, whose tests wait on servers and
    peers as much as they compute; 3 on 2 CPUs took 7:20 where 2 took 9:22), none (the
    tests run in this process) when it names files or single tests, or on one CPU;
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` overrides both."""
    configured = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if configured:
        return int(configured)
    if any(
        "::" in arg or not Path(arg).is_dir()
        for arg in config.args
        if not arg.startswith("-")
    ):
        return 0
    from mcptasks_gen.fmt import usable_cpus  # affinity, capped by a cgroup quota

    cpus = usable_cpus()
    return cpus + 1 if cpus >= 2 else 0
