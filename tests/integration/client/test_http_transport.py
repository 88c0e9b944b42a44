"""The HTTP transport in a fresh interpreter: building one notes an absent ``sniffio``
so that httpcore stops searching ``sys.path`` for it on every lock.

And against a real socket: the transport's own client does not reuse a connection
idle for as long as servers keep one (their keep-alive timeout).

The transport's other tests run in process, in
``tests/unit/client/test_http_transport.py``.
"""

from __future__ import annotations

import asyncio
import json
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


# -- idle connections ------------------------------------------------------------------


class ClosingIdleServer:
    """An HTTP/1.1 server that answers every JSON-RPC request with an empty result and
    keeps connections alive, except that a request arriving on a connection idle for
    ``idle_s`` or more finds it closed unanswered: what a server whose keep-alive
    timeout (uvicorn's 5 s) runs out as the request arrives does."""

    def __init__(self, idle_s: float) -> None:
        self.idle_s = idle_s
        self.connections = 0
        self.closed_unanswered = 0
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/mcp"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    async def serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.connections += 1
        answered_at: float | None = None
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                length = 0
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                body = json.loads(await reader.readexactly(length))
                now = asyncio.get_running_loop().time()
                if answered_at is not None and now - answered_at >= self.idle_s:
                    self.closed_unanswered += 1
                    return
                reply = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": {}})
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    + f"content-length: {len(reply)}\r\n\r\n".encode()
                    + reply.encode()
                )
                await writer.drain()
                answered_at = asyncio.get_running_loop().time()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.mark.anyio
async def test_a_connection_idle_as_long_as_servers_keep_one_is_not_reused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The transport's own client drops an idle connection before the servers' usual
    keep-alive timeout runs out (``KEEPALIVE_EXPIRY_S``, 4 s against their 5 s); at
    httpx's default, 5 s as well, a request after about 5 s idle sometimes met the
    server closing the connection and failed with ``ReadError``. Here in small: the
    server closes connections idle 1.2 s, the client keeps them 1 s."""
    from mcp_tasks_ext.client import http

    monkeypatch.setattr(http, "KEEPALIVE_EXPIRY_S", 1.0)
    server = ClosingIdleServer(idle_s=1.2)
    async with server as url:
        transport = http.HttpTransport(url)
        try:
            assert await transport.request(1, "tasks/get", {"taskId": "t"}) == {}
            assert await transport.request(2, "tasks/get", {"taskId": "t"}) == {}
            assert server.connections == 1  # a connection in use is kept
            # the idle time is what is tested here: nothing to wait for instead
            await asyncio.sleep(1.3)
            assert await transport.request(3, "tasks/get", {"taskId": "t"}) == {}
        finally:
            await transport.aclose()
    assert server.closed_unanswered == 0
    assert server.connections == 2
