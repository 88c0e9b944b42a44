"""The HTTP transport in a fresh interpreter: building one notes an absent ``sniffio``
so that httpcore stops searching ``sys.path`` for it on every lock.

The transport's other tests run in process, in
``tests/unit/client/test_http_transport.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def test_an_absent_sniffio_is_noted_so_httpcore_stops_searching_for_it() -> None:
    """httpcore imports ``sniffio`` on every lock it sets up; without the package
    installed (anyio no longer brings it) each import searched all of ``sys.path``.
    Building a transport notes it absent: the import then fails at once."""
    probe = (
        "import importlib.util, sys\n"
        "if importlib.util.find_spec('sniffio') is not None:\n"
        "    print('installed'); raise SystemExit\n"
        "import mcp_tasks_ext.transport as t\n"
        "t.HttpTransport('http://127.0.0.1:9/mcp')\n"
        "print('noted' if sys.modules.get('sniffio', 0) is None else 'searched')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    if done.stdout.strip() == "installed":
        pytest.skip("sniffio is installed here: httpcore finds it at once")
    assert done.stdout.strip() == "noted", done.stdout + done.stderr
