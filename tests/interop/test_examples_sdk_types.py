"""The examples built on an official SDK type-check with that SDK installed:
``mypy --strict`` and pyright strict, with the peer's interpreter supplying ``mcp``
(1.x for the 2025-11-25 examples, 2.x for the extension's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.peers import fastmcp_python, mcp1_python, require
from tests.support.servers import EXAMPLES
from tests.support.typecheck import mypy_errors, pyright_errors

BY_PEER = {
    "mcp1": ["sdk_server_2025.py", "server_2025_mcp1.py"],
    "fastmcp": ["sdk_client_ext.py", "sdk_server_ext.py", "server_ext_mcp2.py"],
}
"""The SDK examples by the peer whose interpreter has their SDK (mcp 1.30; mcp 2.x
in the fastmcp peer's)."""


def _python(peer: str) -> str:
    require(peer)
    return str(mcp1_python() if peer == "mcp1" else fastmcp_python())


@pytest.mark.timeout(300)
@pytest.mark.parametrize("peer", sorted(BY_PEER))
def test_the_sdk_examples_pass_mypy_strict(peer: str, tmp_path: Path) -> None:
    files = [EXAMPLES / name for name in BY_PEER[peer]]
    assert mypy_errors(files, _python(peer), tmp_path / "cache") == []


@pytest.mark.timeout(300)
@pytest.mark.parametrize("peer", sorted(BY_PEER))
def test_the_sdk_examples_pass_pyright_strict(peer: str, tmp_path: Path) -> None:
    files = [EXAMPLES / name for name in BY_PEER[peer]]
    assert pyright_errors(files, _python(peer), tmp_path) == []
