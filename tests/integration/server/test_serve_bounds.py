"""``asgi.serve()`` against slow and numerous clients, over real sockets.

A server process (``tests/support/bounded_server.py``: ``serve()`` of the extension
package with small bounds) is driven with raw sockets that send a request head or
body slowly, or never, and with more connections than it allows:

- a body announced larger than it arrives is answered 408 within the body deadline and
  its connection closed; so is a request head that never completes (also on a
  keep-alive connection after a first response);
- connections beyond ``max_connections`` are answered 503 at once and closed, the
  server answers again once the slow ones are gone, and the overload is logged once
  (not per connection), without a traceback;
- when the process runs out of file descriptors, the failed ``accept()`` calls are
  counted into that one log line instead of a traceback each, and the server
  recovers.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.support.procs import ServerHandle, free_port, run_server
from tests.support.servers import ext_message, headers_for
from tests.support.waiting import until_sync

ROOT = Path(__file__).resolve().parents[3]

SERVER = Path(__file__).resolve().parents[2] / "support" / "bounded_server.py"

WAIT_S = 15.0
"""How long a socket read waits before the test fails (well above every deadline)."""


@contextmanager
def bounded_server(
    max_connections: str, header_s: str, body_s: str, *nofile: str
) -> Iterator[ServerHandle]:
    """``serve()`` with the given bounds (``none``: off) in its own process."""
    port = free_port()
    cmd = [sys.executable, str(SERVER), str(port), max_connections, header_s, body_s]
    with run_server([*cmd, *nofile], port, url_path="/mcp", timeout=30) as handle:
        yield handle


def connect(server: ServerHandle) -> socket.socket:
    """A raw TCP connection to ``server`` whose reads wait at most ``WAIT_S``."""
    sock = socket.create_connection((server.host, server.port), timeout=WAIT_S)
    sock.settimeout(WAIT_S)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def request_bytes(message: dict[str, object]) -> bytes:
    """A complete HTTP/1.1 POST of ``message`` with a conforming client's headers."""
    body = json.dumps(message).encode()
    head = [
        "POST /mcp HTTP/1.1",
        "host: 127.0.0.1",
        "content-type: application/json",
        f"content-length: {len(body)}",
        *(f"{name}: {value}" for name, value in headers_for(message).items()),
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def read_response(sock: socket.socket) -> bytes:
    """One chunked response (what the app sends) on a connection that stays open."""
    received = b""
    while not received.endswith(b"\r\n0\r\n\r\n"):
        chunk = sock.recv(65536)
        assert chunk, f"connection closed after {received!r}"
        received += chunk
    return received


def settle(server: ServerHandle) -> None:
    """One request on a connection the server closes after answering: once it is
    answered, the connections opened before (the start-up probe) are gone too."""
    sock = connect(server)
    sock.sendall(
        request_bytes(ext_message("server/discover")).replace(
            b"\r\n\r\n", b"\r\nconnection: close\r\n\r\n", 1
        )
    )
    answer = read_until_closed(sock)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 200 "), answer


def discover(server: ServerHandle) -> httpx.Response:
    """``server/discover``, the way a client asks whether the server is there."""
    message = ext_message("server/discover")
    return httpx.post(server.url, json=message, headers=headers_for(message), timeout=5)


def answers(server: ServerHandle) -> bool:
    """Whether the server answers ``server/discover`` (not 503, not a dead socket)."""
    try:
        return discover(server).status_code == 200
    except httpx.HTTPError:
        return False


def test_a_body_that_never_arrives_gets_408_and_the_connection_closes() -> None:
    """1 MB announced, 5 bytes sent: 408 after the 1 s body deadline, then closed
    (before, the connection was held as long as the client liked)."""
    with bounded_server("20", "1", "1") as server:
        sock = connect(server)
        start = time.monotonic()
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json"
            b"\r\ncontent-length: 1000000\r\n\r\nhello"
        )
        answer = read_until_closed(sock)
        elapsed = time.monotonic() - start
        sock.close()
        log = server.log_tail(200)
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b"Request body not received within 1.0s" in answer
    assert 0.9 <= elapsed < WAIT_S - 5, elapsed
    assert "Traceback" not in log, log


def test_a_head_that_never_completes_gets_408_and_the_connection_closes() -> None:
    """A request head cut short is answered 408 after the 1 s head deadline, on a new
    connection and on a kept-alive one after its first response."""
    with bounded_server("20", "1", "1") as server:
        fresh = connect(server)
        start = time.monotonic()
        fresh.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        first = read_until_closed(fresh)
        elapsed = time.monotonic() - start
        fresh.close()

        kept = connect(server)
        kept.sendall(request_bytes(ext_message("server/discover")))
        served = read_response(kept)
        kept.sendall(b"POST /mcp HTTP/1.1\r\nhost: 12")
        second = read_until_closed(kept)
        kept.close()
        log = server.log_tail(200)
    assert first.startswith(b"HTTP/1.1 408 "), first
    assert 0.9 <= elapsed < WAIT_S - 5, elapsed
    assert served.startswith(b"HTTP/1.1 200 ") and b"supportedVersions" in served
    assert second.startswith(b"HTTP/1.1 408 "), second
    assert "Traceback" not in log, log


def test_connections_beyond_the_limit_are_refused_and_logged_once() -> None:
    """20 slow connections fill the limit (the head deadline is long); 30 more are
    answered 503 and closed at once, one warning is logged for all of them; once the
    slow ones go, the server answers again."""
    with bounded_server("20", "60", "60") as server:
        settle(server)
        held = [connect(server) for _ in range(20)]
        for sock in held:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        # the server accepts in order: the 20 held ones first, then these
        refused = [read_until_closed(connect(server)) for _ in range(30)]
        still_open = []
        for sock in held:
            sock.setblocking(False)
            try:
                still_open.append(sock.recv(100) != b"")
            except BlockingIOError:  # nothing sent, not closed: still waiting
                still_open.append(True)
            sock.close()
        until_sync(lambda: answers(server), timeout=WAIT_S, what="answers again")
        log = server.log_tail(400)
    assert all(answer.startswith(b"HTTP/1.1 503 ") for answer in refused), refused
    assert all(still_open)
    warnings = [line for line in log.splitlines() if "server overloaded" in line]
    assert len(warnings) == 1, log
    assert "connection limit 20" in warnings[0]
    assert "connections refused: 1" in warnings[0]  # the first; the rest are counted
    assert "Traceback" not in log, log


def test_running_out_of_descriptors_is_logged_once_and_the_server_recovers() -> None:
    """No connection limit and 64 descriptors for the process: 150 connections make
    ``accept()`` fail. The loop reports each failure (thousands a second, each with a
    traceback, before); now they are counted into one warning, and the server serves
    again once the connections are gone."""
    with bounded_server("none", "2", "2", "64") as server:
        opened = [connect(server) for _ in range(150)]
        for sock in opened:
            sock.sendall(b"POST /mcp HTTP/1.1\r\n")
        until_sync(
            lambda: "out of file descriptors" in server.log_tail(400),
            timeout=WAIT_S,
            what="accept() ran out of descriptors",
        )
        for sock in opened:
            sock.close()
        until_sync(lambda: answers(server), timeout=WAIT_S, what="answers again")
        log = server.log_tail(400)
    warnings = [line for line in log.splitlines() if "server overloaded" in line]
    assert len(warnings) == 1, log
    assert "accept() failed, out of file descriptors" in warnings[0]
    assert "Traceback" not in log, log
    assert "socket.accept() out of system resource" not in log, log


def test_the_example_servers_say_where_they_listen() -> None:
    """``serve`` prints one line on standard error once it listens: the URL a client
    uses (the example servers start through it)."""
    for example in ("server.py", "server_ext.py", "server_2025.py"):
        port = free_port()
        command = [
            sys.executable,
            str(ROOT / "examples" / example),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--memory",
        ]
        with run_server(command, port, url_path="/mcp") as handle:
            wanted = f"listening on http://127.0.0.1:{port}/mcp"
            until_sync(lambda h=handle, w=wanted: w in h.log_tail(2000), timeout=10)
