"""A missing optional dependency names what to install (issue 9, item 23).

``httpx`` (``HttpTransport``), ``uvicorn`` (``asgi.serve``) and ``redis``
(``RedisTaskStore``) are imported lazily so that the packages import without them. When
one is absent, building or first using the piece that needs it raises
``ModuleNotFoundError`` whose message says ``pip install ...``, rather than a bare
``No module named ...`` at the first request. ``sys.modules[name] = None`` makes the
import fail as if the package were not installed.
"""

from __future__ import annotations

import asyncio
import importlib
import sys

import pytest

PACKAGES = ["mcp_tasks_2025_11_25", "mcp_tasks_ext"]


def hide(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make ``import name`` (and its submodules) fail as if it were not installed."""
    for name in list(sys.modules):
        if any(name == hidden or name.startswith(hidden + ".") for hidden in names):
            monkeypatch.delitem(sys.modules, name)
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("package", PACKAGES)
def test_http_transport_without_httpx_says_pip_install_httpx(
    package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    transport = importlib.import_module(f"{package}.transport")
    hide(monkeypatch, "httpx")
    with pytest.raises(ModuleNotFoundError, match=r"pip install httpx") as caught:
        transport.HttpTransport("http://127.0.0.1:9/mcp")
    assert caught.value.name == "httpx"
    assert "HttpTransport" in str(caught.value)


@pytest.mark.parametrize("package", PACKAGES)
def test_serve_without_uvicorn_says_pip_install_uvicorn(
    package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asgi = importlib.import_module(f"{package}.asgi")
    server = importlib.import_module(f"{package}.server")
    hide(monkeypatch, "uvicorn")
    with pytest.raises(ModuleNotFoundError, match=r"pip install uvicorn") as caught:
        asgi.serve(server.TasksServer("no-uvicorn"), port=9)
    assert caught.value.name == "uvicorn"


@pytest.mark.parametrize("package", PACKAGES)
def test_redis_store_without_redis_says_pip_install_redis(
    package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    redis_store = importlib.import_module(f"{package}.redis_store")
    hide(monkeypatch, "redis")
    store = redis_store.RedisTaskStore("redis://127.0.0.1:9/0")
    with pytest.raises(ModuleNotFoundError, match=r"pip install redis") as caught:
        asyncio.run(store.open())
    assert caught.value.name == "redis"
    assert "RedisTaskStore" in str(caught.value)
