"""The unit tier's own check (``tests/unit/conftest.py``): a unit test that opens a
socket or starts a process fails, even when it catches the error or does it in a
fixture; one that stays in process passes. The cases run in one pytest session in this
process (pytester), guarded like the unit tier."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

CASES = """
import asyncio, json, os, socket, subprocess, sys
import pytest

def test_connect():
    with socket.socket() as s:
        s.connect(("127.0.0.1", 9))

def test_bind():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))

def test_subprocess():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_system():
    os.system("true")

def test_caught():
    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1)
    except Exception:
        pass

@pytest.fixture(scope="module")
def listening():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s

def test_fixture(listening):
    pass

def test_in_process(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps({"a": 1}))
    a, b = socket.socketpair()
    a.close()
    b.close()
    assert asyncio.run(asyncio.sleep(0, "ok")) == "ok"
    pid = os.fork()  # the generator's formatter forks workers: allowed
    if pid == 0:
        os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
"""


def test_sockets_and_processes_fail_a_unit_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeconftest("from tests.support.unit_guard import *  # noqa: F403\n")
    pytester.makepyfile(test_inner=CASES)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=5, errors=1)
    recorder = result.reprec  # type: ignore[attr-defined]
    failures = {
        (report.head_line, report.when): str(report.longrepr)
        for report in recorder.getreports("pytest_runtest_logreport")
        if report.failed
    }
    expected = {
        ("test_connect", "call"): "a unit test connected a socket",
        ("test_bind", "call"): "a unit test bound a socket",
        ("test_subprocess", "call"): "a unit test started a process",
        ("test_system", "call"): "a unit test ran a shell command",
        ("test_caught", "call"): "test_caught (call) connected a socket",
        ("test_fixture", "setup"): "a unit test bound a socket",
    }
    assert set(failures) == set(expected)
    for key, phrase in expected.items():
        assert "UnitTierViolation" in failures[key], failures[key]
        assert phrase in failures[key] and "tests/integration/" in failures[key]
