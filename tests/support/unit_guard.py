"""The check that keeps the unit tier in process (used by ``tests/unit/conftest.py``).

One audit hook (``sys.addaudithook``, installed once) watches the events of sockets
and processes; while a guarded phase runs it records the event and raises
:class:`UnitTierViolation`. After the phase, a recorded event fails the test even if
the test caught the exception. Guards nest (a test that runs pytest in process guards
its inner tests separately), so each phase keeps its own record.
"""

from __future__ import annotations

import sys
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

REFUSED = {
    "socket.connect": "connected a socket",
    "socket.bind": "bound a socket",
    "socket.sendto": "sent on a socket",
    "subprocess.Popen": "started a process",
    "os.exec": "replaced the process (os.exec*)",
    "os.posix_spawn": "started a process (os.posix_spawn)",
    "os.spawn": "started a process (os.spawn*)",
    "os.system": "ran a shell command (os.system)",
    "os.forkpty": "started a process in a pty",
}
"""Audit events refused in the unit tier, and what they mean."""


class UnitTierViolation(RuntimeError):
    """A unit test opened a socket or started a process."""


_records: list[list[str]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _records or event not in REFUSED:
        return
    detail = repr(args[1]) if event.startswith("socket.") and len(args) > 1 else ""
    what = f"{REFUSED[event]} {detail}".strip()
    _records[-1].append(what)
    raise UnitTierViolation(
        f"a unit test {what}: the unit tier runs in process only; move the test to"
        " tests/integration/ (see CONTRIBUTING.md)"
    )


sys.addaudithook(_audit)  # once: this module is imported once per process


@contextmanager
def refusing_sockets_and_processes() -> Iterator[list[str]]:
    """Refuse sockets and processes in the ``with`` block; yields what was refused."""
    record: list[str] = []
    _records.append(record)
    try:
        yield record
    finally:
        _records.pop()


def _guarded(item: pytest.Item, phase: str) -> Generator[None, object, object]:
    with refusing_sockets_and_processes() as record:
        result = yield
    if record:
        raise UnitTierViolation(
            f"{item.nodeid} ({phase}) {record[0]}: the unit tier runs in process"
            " only; move the test to tests/integration/ (see CONTRIBUTING.md)"
        )
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    """Guard the set-up of a unit test (its fixtures included)."""
    return (yield from _guarded(item, "setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Guard the test itself."""
    return (yield from _guarded(item, "call"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    """Guard the teardown, except the last one of the run, which also ends the
    session-wide fixtures of the other tiers (a Redis, a server)."""
    if nextitem is None:
        return (yield)
    return (yield from _guarded(item, "teardown"))
