"""``TasksServer.mount`` picks the SDK hosting by the object it gets, and refuses a
mismatch.

The hosting itself runs against the real SDKs in ``test_interop_sdk_mount.py``; these
checks need no SDK: a server of one revision handed the other SDK's low-level server
(told apart by ``middleware`` on ``mcp`` 2.x and ``request_handlers`` on ``mcp`` 1.x)
stops with one clear line and leaves the SDK object untouched.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_tasks_2025_11_25.server import TasksServer as Server2025
from mcp_tasks_2025_11_25.stores import InMemoryTaskStore as Store2025
from mcp_tasks_ext.server import TasksServer as ServerExt
from mcp_tasks_ext.stores import InMemoryTaskStore as StoreExt


class _Sdk2Server:
    """The shape of an ``mcp`` 2.x low-level ``Server`` that mounting looks at."""

    def __init__(self) -> None:
        self.middleware: list[Any] = []
        self.extensions: dict[str, Any] = {}


class _Sdk1Server:
    """The shape of an ``mcp`` 1.x low-level ``Server`` that mounting looks at."""

    def __init__(self) -> None:
        self.request_handlers: dict[Any, Any] = {}


def test_a_2025_server_refuses_an_mcp2_server() -> None:
    sdk = _Sdk2Server()
    with pytest.raises(RuntimeError, match="2025-11-25 an mcp 1.x Server"):
        Server2025("t", store=Store2025()).mount(sdk)
    assert sdk.middleware == [] and sdk.extensions == {}


def test_an_extension_server_refuses_an_mcp1_server() -> None:
    sdk = _Sdk1Server()
    with pytest.raises(
        RuntimeError, match="the Tasks extension needs an mcp 2.x Server"
    ):
        ServerExt("t", store=StoreExt()).mount(sdk)
    assert sdk.request_handlers == {}
