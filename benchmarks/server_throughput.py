"""Benchmark the generated Tasks servers: against the SDK peers, and dual against
single.

Side by side, on this machine:

- ``tasks/get`` over streamable HTTP (keep-alive connections, load generator in this
  process), at a fixed rate (``--rate`` requests per second on one connection, each sent
  at its scheduled time: the server CPU a request costs when the server is not busy) and
  saturated (as fast as replies come, concurrency 1 and 8: requests per second, and the
  server CPU per request over both), for our server with the memory
  store and with the SQLite store, the same tasks hosted in the official SDKs through
  ``sdk.py`` (``examples/sdk_server_ext.py``: an ``MCPServer`` of ``mcp==2.3.0`` with
  ``server_extension``, memory and SQLite store; ``examples/sdk_server_2025.py``: a
  ``FastMCP`` app of ``mcp==1.30.0`` with ``fastmcp_tasks``, memory store), the
  ``fastmcp[tasks]==4.1.4`` server (in-memory Docket) and the ``mcp==1.30.0`` server
  (its in-memory task store);
- ``tasks/get`` per second in process (``TasksServer.handle``, no transport) for ours;
- the server CPU per request of each peer over ours, at the fixed rate and saturated:
  the two differ (a saturated server spreads its event loop's fixed costs over more
  requests; the peers' more so), so both are printed; from the rows above (one pass per
  server), and from ours and the peers all running at once and loaded in turn in
  ``--rounds`` interleaved rounds (``--only peers``), the figures to quote;
- resident memory per stored task: every server creates ``--tasks`` finished tasks
  through real ``tools/call`` requests over HTTP and the growth of its RSS is divided
  by that count; ours is also measured with ``--rss-tasks`` (default 100,000) tasks
  created in process;
- the dual server (``examples/server.py``: both revisions on one endpoint, package
  ``mcp_tasks``) against the single-revision servers with the same tools and limits
  (``examples/server_ext.py``, ``examples/server_2025.py``), memory and SQLite store:
  ``tasks/get`` of the extension (stateless) and of 2025-11-25 (through a session),
  over HTTP (concurrency 1 and 8) and, for the extension, in process. Both servers of a
  pair run at once and are loaded in turn, in ``--rounds`` interleaved rounds whose
  order alternates (an even count, so that each goes first as often as the other: the
  one that runs second can gain or lose from the first, notably with SQLite); printed
  are each side's median and the median of the rounds' ratios dual/single (each round
  measures both sides within seconds, so its ratio is little affected by other load on
  the machine that comes and goes);
- ours (extension ``tasks/get``; ``examples/server_ext.py`` and the dual
  ``examples/server.py``, memory and SQLite store) against two floors under the same
  uvicorn settings (``benchmarks/floor_server.py``): a minimal ASGI app answering fixed
  bytes, and one doing ``json.loads`` of the body and ``json.dumps`` of a fixed
  task-shaped result. All six run at once, take the same load generator and requests in
  ``--rounds`` interleaved rounds (rotating order); printed are the server CPU per
  request (at the fixed rate and saturated) and the medians of the rounds' ratios
  ours / floor.

Every reply is checked (``replies.py``): a reply that is an error, or a
``tasks/get`` result whose status is not ``completed``, stops the run with exit status 1
and the reply.

Run from the repository root (peers from ``.ci/peers.sh``; missing ones are skipped)::

    .venv/bin/python benchmarks/server_throughput.py [--seconds 5] [--tasks 900]

``--quick`` (1 s load runs, 300 tasks over HTTP, 5,000 in process, 4 rounds of the dual
comparison) takes about four minutes; ``--smoke`` (0.2 s load runs, a few tasks, ours
with the memory store, against the peers that are installed, three of the floor
comparison's servers, the 2025-11-25 pair over HTTP and the extension pair in process,
2 rounds) checks that every part works, with no figures to keep; ``--only NAME``
(repeatable) measures the targets whose name contains NAME (``--only dual``: the dual
server's rows and the comparison with the single-revision servers; ``--only floors``:
ours against the floor apps; ``--only peers``: ours against the peers, interleaved).
The figures are printed as tables and as JSON (``--json``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "generated"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from replies import BadReply, message, result  # noqa: E402
from replies import run as run_checked  # noqa: E402

from tests.support import peers  # noqa: E402
from tests.support.procs import free_port, run_server  # noqa: E402

EXT = "io.modelcontextprotocol/tasks"
EXT_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}},
}
ACCEPT = {"accept": "application/json, text/event-stream"}
FINISH_DEADLINE_S = 30.0
"""How long a created task may take to finish before the run fails."""
PAUSES = {"warm_s": 0.5, "settle_s": 1.0}
"""Warm-up load before a measurement, and the wait before reading a server's RSS (half
of it before the count, all of it after); ``--smoke`` shortens both."""


def rss_kb(pid: int) -> int:
    """Resident set size of a process, in KiB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used so far (Linux ``/proc``): the scheduler's count of
    its running threads, in nanoseconds (a short fixed-rate run costs a server a few
    clock ticks, the resolution of ``/proc/PID/stat``), else user + system time in
    ticks."""
    try:
        return (
            sum(
                int((task / "schedstat").read_text().split()[0])
                for task in Path(f"/proc/{pid}/task").iterdir()
            )
            / 1e9
        )
    except (OSError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class RawConnection:
    """A minimal HTTP/1.1 keep-alive client, so the load generator costs little CPU."""

    def __init__(self, host: str, port: int, path: str) -> None:
        self.host, self.port, self.path = host, port, path
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, body: dict[str, Any], headers: dict[str, str]) -> bytes:
        """POST ``body``; return the response body (chunked or sized)."""
        if self.reader is None or self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(
                self.host, self.port
            )
        payload = json.dumps(body).encode()
        head = [
            f"POST {self.path} HTTP/1.1",
            f"host: {self.host}:{self.port}",
            "content-type: application/json",
            f"content-length: {len(payload)}",
        ]
        head += [f"{k}: {v}" for k, v in headers.items()]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        fields = {
            k.lower(): v.strip()
            for k, _, v in (line.partition(":") for line in lines[1:] if line)
        }
        if "content-length" in fields:
            return await self.reader.readexactly(int(fields["content-length"]))
        chunks = []
        while True:  # chunked transfer encoding
            size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
            chunk = await self.reader.readexactly(size + 2)
            if size == 0:
                return b"".join(chunks)
            chunks.append(chunk[:-2])

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None  # the next post connects again


def parse_response(response: httpx.Response, what: str) -> dict[str, Any]:
    """The JSON-RPC response in a JSON or SSE HTTP response (``BadReply`` if none)."""
    return message(response.content, what)


class Dialect:
    """How to talk to one server: create a task, then build ``tasks/get`` requests."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.headers = dict(ACCEPT)
        self._ids = 0

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    async def open(self, client: httpx.AsyncClient) -> None:
        """Prepare the connection (sessions)."""

    async def create_task(self, client: httpx.AsyncClient) -> str:
        """Create one task that finishes at once; return its ID."""
        raise NotImplementedError

    def get_request(self, task_id: str) -> tuple[dict[str, Any], dict[str, str]]:
        """Body and headers of one ``tasks/get``."""
        raise NotImplementedError

    async def wait_finished(self, client: httpx.AsyncClient, task_id: str) -> None:
        """Poll ``tasks/get`` until the task is ``completed`` (``BadReply`` if it is not
        within ``FINISH_DEADLINE_S``, or a reply is an error)."""
        deadline = time.perf_counter() + FINISH_DEADLINE_S
        while True:
            body, headers = self.get_request(task_id)
            response = await client.post(self.url, json=body, headers=headers)
            task = result(response.content, f"tasks/get {task_id} on {self.url}")
            status = task.get("status") if isinstance(task, dict) else None
            if status == "completed":
                return
            if time.perf_counter() > deadline:
                raise BadReply(f"task {task_id} on {self.url} still {status!r}")
            await asyncio.sleep(0.05)


class ExtDialect(Dialect):
    """Stateless 2026-07-28 with the Tasks extension declared per request."""

    async def open(self, client: httpx.AsyncClient) -> None:
        self.headers["mcp-protocol-version"] = "2026-07-28"

    async def create_task(self, client: httpx.AsyncClient) -> str:
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": "tools/call",
            "params": {
                "name": "slow_compute",
                "arguments": {"seconds": 0, "label": "bench"},
                "_meta": EXT_META,
            },
        }
        headers = {
            **self.headers,
            "mcp-method": "tools/call",
            "mcp-name": "slow_compute",
        }
        response = await client.post(self.url, json=body, headers=headers)
        task_id = result(response.content, f"tools/call on {self.url}", "taskId")
        if not isinstance(task_id, str):
            raise BadReply(f"tools/call on {self.url}: taskId {task_id!r}")
        return task_id

    def get_request(self, task_id: str) -> tuple[dict[str, Any], dict[str, str]]:
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": "tasks/get",
            "params": {"taskId": task_id, "_meta": EXT_META},
        }
        return body, {**self.headers, "mcp-method": "tasks/get", "mcp-name": task_id}


class Dialect2025(Dialect):
    """2025-11-25 with a session and task-augmented ``tools/call``."""

    async def open(self, client: httpx.AsyncClient) -> None:
        init = {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        }
        response = await client.post(self.url, json=init, headers=self.headers)
        result(response.content, f"initialize on {self.url}", "protocolVersion")
        session = response.headers.get("mcp-session-id")
        if not session:
            raise BadReply(f"initialize on {self.url}: no Mcp-Session-Id header")
        self.headers["mcp-session-id"] = session
        self.headers["mcp-protocol-version"] = "2025-11-25"
        response = await client.post(
            self.url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=self.headers,
        )
        if response.status_code not in (200, 202):
            raise BadReply(
                f"notifications/initialized on {self.url}: HTTP"
                f" {response.status_code} {response.text[:200]}"
            )

    async def create_task(self, client: httpx.AsyncClient) -> str:
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": "tools/call",
            "params": {
                "name": "slow_compute",
                "arguments": {"seconds": 0, "label": "bench"},
                "task": {"ttl": 3_600_000},
            },
        }
        response = await client.post(self.url, json=body, headers=self.headers)
        what = f"tools/call (task) on {self.url}"
        task_id = result(response.content, what, "task", "taskId")
        if not isinstance(task_id, str):
            raise BadReply(f"{what}: taskId {task_id!r}")
        return task_id

    def get_request(self, task_id: str) -> tuple[dict[str, Any], dict[str, str]]:
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": "tasks/get",
            "params": {"taskId": task_id},
        }
        return body, self.headers


class FloorDialect(ExtDialect):
    """The extension's ``tasks/get`` sent to a floor app, which keeps no tasks."""

    async def create_task(self, client: httpx.AsyncClient) -> str:
        return "48e43c02cf46b19d36aa4ae7ad7702fa"

    async def wait_finished(self, client: httpx.AsyncClient, task_id: str) -> None:
        """Nothing to wait for (every reply of the floor is a completed task)."""


@dataclass
class Target:
    """One server to measure."""

    name: str
    command: Callable[[int, Path], list[str]]
    path: str
    dialect: type[Dialect]
    peer: str | None = None


def example(script: str, store: str) -> Callable[[int, Path], list[str]]:
    """The command line of ``examples/<script>`` on ``port`` with a memory or SQLite
    store."""

    def command(port: int, tmp: Path) -> list[str]:
        where = (
            ["--memory"]
            if store == "memory"
            else ["--db", str(tmp / f"{script}.sqlite3")]
        )
        return [
            sys.executable,
            str(ROOT / "examples" / script),
            "--port",
            str(port),
            *where,
        ]

    return command


TARGETS = [
    Target(
        "ours (memory store)",
        lambda port, tmp: [
            sys.executable,
            str(ROOT / "examples/server_ext.py"),
            "--port",
            str(port),
            "--memory",
        ],
        "/mcp",
        ExtDialect,
    ),
    Target(
        "ours (SQLite store)",
        lambda port, tmp: [
            sys.executable,
            str(ROOT / "examples/server_ext.py"),
            "--port",
            str(port),
            "--db",
            str(tmp / "bench.sqlite3"),
        ],
        "/mcp",
        ExtDialect,
    ),
    Target(
        "ours, dual (memory store)", example("server.py", "memory"), "/mcp", ExtDialect
    ),
    Target(
        "ours, dual (SQLite store)", example("server.py", "sqlite"), "/mcp", ExtDialect
    ),
    Target(
        "ours in MCPServer, mcp 2.3.0 (memory store)",
        lambda port, tmp: [
            str(peers.fastmcp_python()),
            str(ROOT / "examples/sdk_server_ext.py"),
            "--port",
            str(port),
            "--memory",
        ],
        "/mcp",
        ExtDialect,
        "fastmcp",
    ),
    Target(
        "ours in MCPServer, mcp 2.3.0 (SQLite store)",
        lambda port, tmp: [
            str(peers.fastmcp_python()),
            str(ROOT / "examples/sdk_server_ext.py"),
            "--port",
            str(port),
            "--db",
            str(tmp / "bench.sqlite3"),
        ],
        "/mcp",
        ExtDialect,
        "fastmcp",
    ),
    Target(
        "ours in FastMCP, mcp 1.30.0, 2025-11-25 (memory store)",
        lambda port, tmp: [
            str(peers.mcp1_python()),
            str(ROOT / "examples/sdk_server_2025.py"),
            "--port",
            str(port),
            "--memory",
        ],
        "/mcp",
        Dialect2025,
        "mcp1",
    ),
    Target(
        "fastmcp[tasks] 4.1.4",
        lambda port, tmp: [
            str(peers.fastmcp_python()),
            str(peers.PEER_PROGRAMS / "fastmcp_server.py"),
            str(port),
        ],
        "/mcp",
        ExtDialect,
        "fastmcp",
    ),
    Target(
        "mcp 1.30.0",
        lambda port, tmp: [
            str(peers.mcp1_python()),
            str(peers.PEER_PROGRAMS / "mcp1_server.py"),
            str(port),
        ],
        "/mcp/",
        Dialect2025,
        "mcp1",
    ),
]


@dataclass
class Pair:
    """The dual server and a single-revision server, measured with the same load."""

    name: str
    single: Target
    dual: Target


COMPARISON = "dual against single"
"""The name ``--only`` matches to run the comparison of dual and single servers."""

PAIRS = [
    Pair(
        f"{load}, {store_name} store",
        Target(f"single {load} {store}", example(script, store), "/mcp", dialect),
        Target(f"dual {load} {store}", example("server.py", store), "/mcp", dialect),
    )
    for load, script, dialect in (
        ("extension", "server_ext.py", ExtDialect),
        ("2025-11-25", "server_2025.py", Dialect2025),
    )
    for store, store_name in (("memory", "memory"), ("sqlite", "SQLite"))
]


FLOOR_COMPARISON = "floors"
"""The name ``--only`` matches to run the comparison of ours with the floor apps."""

FLOOR_FIXED = "floor: fixed bytes"
FLOOR_JSON = "floor: JSON echo"


def floor(mode: str) -> Callable[[int, Path], list[str]]:
    """The command line of ``benchmarks/floor_server.py`` in ``mode``."""
    return lambda port, tmp: [
        sys.executable,
        str(ROOT / "benchmarks" / "floor_server.py"),
        mode,
        "--port",
        str(port),
    ]


FLOOR_TARGETS = [
    Target(FLOOR_FIXED, floor("fixed"), "/mcp", FloorDialect),
    Target(FLOOR_JSON, floor("json"), "/mcp", FloorDialect),
    Target(
        "ours (memory store)", example("server_ext.py", "memory"), "/mcp", ExtDialect
    ),
    Target(
        "ours (SQLite store)", example("server_ext.py", "sqlite"), "/mcp", ExtDialect
    ),
    Target(
        "ours, dual (memory store)", example("server.py", "memory"), "/mcp", ExtDialect
    ),
    Target(
        "ours, dual (SQLite store)", example("server.py", "sqlite"), "/mcp", ExtDialect
    ),
]
"""Ours (extension ``tasks/get`` of a finished task) beside the two floors."""


async def throughput(
    senders: list[Callable[[], Awaitable[None]]], seconds: float
) -> tuple[float, int]:
    """Requests per second (and count) with one loop per sender for ``seconds``."""
    done = 0
    deadline = time.perf_counter() + seconds

    async def loop(send: Callable[[], Awaitable[None]]) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await send()
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(loop(send) for send in senders))
    return done / (time.perf_counter() - start), done


async def paced(
    send: Callable[[], Awaitable[None]], rate: float, seconds: float
) -> tuple[float, int]:
    """``send`` at ``rate`` requests per second for ``seconds``, one at a time, each at
    its scheduled time (at once when the reply before it came late): the rate achieved
    (below ``rate`` only for a server slower than that) and the count."""
    interval = 1.0 / rate
    start = time.perf_counter()
    end = start + seconds
    done = 0
    while (due := start + done * interval) < end:
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        await send()
        done += 1
    return done / (time.perf_counter() - start), done


def checked_sender(
    connection: RawConnection, dialect: Dialect, task_id: str, what: str
) -> Callable[[], Awaitable[None]]:
    """One ``tasks/get`` of ``task_id`` on ``connection``, whose reply must be the
    completed task (else ``BadReply``)."""

    async def send() -> None:
        body, headers = dialect.get_request(task_id)
        reply = await connection.post(body, headers)
        result(reply, what, expect={"status": "completed"})

    return send


async def measure_http(
    target: Target, seconds: float, tasks: int, rate: float
) -> dict[str, Any]:
    """HTTP throughput, server CPU per request (at ``rate`` and saturated) and RSS per
    task of one server process."""
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        with run_server(
            target.command(port, Path(tmp)), port, url_path=target.path, timeout=60
        ) as handle:
            url = handle.url
            limits = httpx.Limits(max_connections=16, max_keepalive_connections=16)
            async with httpx.AsyncClient(timeout=30, limits=limits) as client:
                dialect = target.dialect(url)
                await dialect.open(client)
                task_id = await dialect.create_task(client)
                await dialect.wait_finished(client, task_id)  # we poll a completed task

                connections = [
                    RawConnection(handle.host, handle.port, target.path)
                    for _ in range(8)
                ]
                what = f"tasks/get on {target.name}"
                senders = [
                    checked_sender(c, dialect, task_id, what) for c in connections
                ]
                pid = handle.proc.pid
                await throughput(senders[:1], PAUSES["warm_s"])
                cpu = cpu_seconds(pid)
                fixed, nf = await paced(senders[0], rate, seconds)
                cpu_fixed = (cpu_seconds(pid) - cpu) * 1000 / nf
                cpu = cpu_seconds(pid)
                c1, n1 = await throughput(senders[:1], seconds)
                c8, n8 = await throughput(senders, seconds)
                cpu_ms = (cpu_seconds(pid) - cpu) * 1000 / (n1 + n8)
                for connection in connections:
                    connection.close()
                await asyncio.sleep(PAUSES["settle_s"] / 2)
                before = rss_kb(handle.proc.pid)
                for _ in range(tasks):
                    await dialect.create_task(client)
                await asyncio.sleep(PAUSES["settle_s"])
                after = rss_kb(handle.proc.pid)
    return {
        "req_per_s_fixed": round(fixed, 1),
        "server_cpu_ms_per_req_fixed": round(cpu_fixed, 3),
        "req_per_s_c1": round(c1),
        "req_per_s_c8": round(c8),
        "server_cpu_ms_per_req": round(cpu_ms, 3),
        "rss_before_kib": before,
        "rss_after_kib": after,
        "bytes_per_task_http": round((after - before) * 1024 / tasks),
    }


def load_example(script: str = "server_ext.py") -> Any:
    """``examples/<script>`` as a module (``server_ext.py``, or ``server.py``: dual)."""
    spec = importlib.util.spec_from_file_location(
        f"bench_example_{script.removesuffix('.py')}", ROOT / "examples" / script
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ext_request(method: str, params: dict[str, Any], request_id: int) -> dict[str, Any]:
    """An extension request with the per-request ``_meta``."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**params, "_meta": EXT_META},
    }


async def in_process_sender(server: Any) -> Callable[[], Awaitable[None]]:
    """Create a finished task on a started ``server``; return a ``tasks/get`` sender."""
    created = await server.handle(
        ext_request(
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 0}},
            1,
        )
    )
    task_id = result(created or {}, "tools/call (in process)", "taskId")
    request = ext_request("tasks/get", {"taskId": task_id}, 2)
    what = f"tasks/get {task_id} (in process)"
    deadline = time.perf_counter() + FINISH_DEADLINE_S
    while result(await server.handle(request) or {}, what, "status") != "completed":
        if time.perf_counter() > deadline:
            raise BadReply(f"{what}: not completed in {FINISH_DEADLINE_S:g} s")
        await asyncio.sleep(0.01)

    async def send() -> None:
        reply = await server.handle(request)
        result(reply or {}, what, expect={"status": "completed"})

    return send


async def measure_in_process(store: str, seconds: float) -> float:
    """``tasks/get`` per second through ``TasksServer.handle``."""
    with tempfile.TemporaryDirectory() as tmp:
        server = load_example().build_server(
            None if store == "memory" else str(Path(tmp) / "b.sqlite3")
        )
        async with server:
            send = await in_process_sender(server)
            await throughput([send], 0.3)
            return (await throughput([send], seconds))[0]


async def measure_pair_in_process(
    store: str, seconds: float, rounds: int
) -> dict[str, Any]:
    """Extension ``tasks/get`` per second through ``handle`` of the single-revision
    server and of the dual one (``DualServer.handle``), both in this process, loaded in
    turn for ``rounds`` interleaved rounds."""
    with tempfile.TemporaryDirectory() as tmp:
        servers = {
            side: (
                load_example(script).build_server(
                    None if store == "memory" else str(Path(tmp) / f"{side}.sqlite3")
                )
            )
            for side, script in (("single", "server_ext.py"), ("dual", "server.py"))
        }
        async with servers["single"], servers["dual"]:
            senders = {side: await in_process_sender(s) for side, s in servers.items()}
            for send in senders.values():
                await throughput([send], 0.3)
            samples: dict[str, list[float]] = {"single": [], "dual": []}
            for index in range(rounds):
                for side in (
                    ("single", "dual") if index % 2 == 0 else ("dual", "single")
                ):
                    samples[side].append(
                        (await throughput([senders[side]], seconds))[0]
                    )
    single, dual = statistics.median(samples["single"]), statistics.median(
        samples["dual"]
    )
    ratio = statistics.median(
        d / s for s, d in zip(samples["single"], samples["dual"], strict=True)
    )
    return {
        "single_in_process": round(single),
        "dual_in_process": round(dual),
        "ratio_in_process": round(ratio, 3),
        "rounds_in_process": samples,
    }


async def measure_group(
    targets: dict[str, Target], seconds: float, rounds: int, rate: float
) -> dict[str, dict[str, list[float]]]:
    """HTTP ``tasks/get`` server CPU per request at ``rate`` (``cpu_ms_fixed``),
    throughput (c=1, c=8) and server CPU per request saturated (``cpu_ms``) of several
    servers, all running at once and loaded in turn for ``rounds`` interleaved rounds
    (round ``i`` starts with the ``i``-th side, in a rotating order); every round's
    figures of every side, by side name."""
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        sides = {}
        for side, target in targets.items():
            port = free_port()
            handle = stack.enter_context(
                run_server(
                    target.command(port, Path(tmp)),
                    port,
                    url_path=target.path,
                    timeout=60,
                )
            )
            sides[side] = (target, handle)
        limits = httpx.Limits(max_connections=16, max_keepalive_connections=16)
        async with httpx.AsyncClient(timeout=30, limits=limits) as client:
            loads: dict[str, tuple[int, list[Callable[[], Awaitable[None]]]]] = {}
            own_connections: dict[str, list[RawConnection]] = {}
            for side, (target, handle) in sides.items():
                dialect = target.dialect(handle.url)
                await dialect.open(client)
                task_id = await dialect.create_task(client)
                await dialect.wait_finished(client, task_id)  # we poll completed tasks
                own = [
                    RawConnection(handle.host, handle.port, target.path)
                    for _ in range(8)
                ]
                own_connections[side] = own
                what = f"tasks/get on {side}"
                loads[side] = (
                    handle.proc.pid,
                    [checked_sender(c, dialect, task_id, what) for c in own],
                )
            for _pid, senders in loads.values():
                await throughput(senders[:1], PAUSES["warm_s"])
                await throughput(senders, PAUSES["warm_s"])
            samples: dict[str, dict[str, list[float]]] = {
                side: {"cpu_ms_fixed": [], "c1": [], "c8": [], "cpu_ms": []}
                for side in loads
            }
            names = list(loads)
            for index in range(rounds):
                start = index % len(names)
                for side in names[start:] + names[:start]:
                    pid, senders = loads[side]
                    for connection in own_connections[side]:
                        # uvicorn drops connections idle for 5 s: connect anew
                        connection.close()
                    cpu = cpu_seconds(pid)
                    _, nf = await paced(senders[0], rate, seconds)
                    samples[side]["cpu_ms_fixed"].append(
                        (cpu_seconds(pid) - cpu) * 1000 / nf
                    )
                    cpu = cpu_seconds(pid)
                    c1, n1 = await throughput(senders[:1], seconds)
                    for connection in own_connections[side][1:]:
                        connection.close()
                    c8, n8 = await throughput(senders, seconds)
                    samples[side]["c1"].append(c1)
                    samples[side]["c8"].append(c8)
                    samples[side]["cpu_ms"].append(
                        (cpu_seconds(pid) - cpu) * 1000 / (n1 + n8)
                    )
            for own in own_connections.values():
                for connection in own:
                    connection.close()
    return samples


async def measure_pair(
    pair: Pair, seconds: float, rounds: int, rate: float
) -> dict[str, Any]:
    """HTTP ``tasks/get`` throughput and server CPU per request of the single-revision
    server and the dual one, both running, loaded in turn for ``rounds`` interleaved
    rounds (the order alternates); each side's medians and the medians of the rounds'
    ratios dual/single."""
    samples = await measure_group(
        {"single": pair.single, "dual": pair.dual}, seconds, rounds, rate
    )
    figures: dict[str, Any] = {"rounds": samples}
    for key in ("cpu_ms_fixed", "c1", "c8", "cpu_ms"):
        single = statistics.median(samples["single"][key])
        dual = statistics.median(samples["dual"][key])
        digits = 3 if key.startswith("cpu_ms") else 0
        figures[f"single_{key}"] = round(single, digits) if digits else round(single)
        figures[f"dual_{key}"] = round(dual, digits) if digits else round(dual)
        ratios = [
            d / s
            for s, d in zip(samples["single"][key], samples["dual"][key], strict=True)
        ]
        figures[f"ratio_{key}"] = round(statistics.median(ratios), 3)
    return figures


async def measure_floors(
    targets: list[Target], seconds: float, rounds: int, rate: float
) -> dict[str, dict[str, Any]]:
    """Ours (extension ``tasks/get``, single-revision and dual, memory and SQLite)
    against the two floor apps, all loaded in interleaved rounds; each side's medians
    and the medians of the rounds' ratios to each floor (server CPU per request, at
    ``rate`` and saturated)."""
    samples = await measure_group(
        {target.name: target for target in targets}, seconds, rounds, rate
    )
    figures: dict[str, dict[str, Any]] = {}
    for name, rows in samples.items():
        entry: dict[str, Any] = {"rounds": rows}
        entry["req_per_s_c1"] = round(statistics.median(rows["c1"]))
        entry["req_per_s_c8"] = round(statistics.median(rows["c8"]))
        entry["server_cpu_ms_per_req"] = round(statistics.median(rows["cpu_ms"]), 3)
        entry["server_cpu_ms_per_req_fixed"] = round(
            statistics.median(rows["cpu_ms_fixed"]), 3
        )
        for floor, key in ((FLOOR_JSON, "json"), (FLOOR_FIXED, "fixed")):
            for cpu, suffix in (("cpu_ms", ""), ("cpu_ms_fixed", "_fixed")):
                ratios = [
                    ours / base
                    for ours, base in zip(rows[cpu], samples[floor][cpu], strict=True)
                ]
                entry[f"cpu{suffix}_ratio_to_{key}_floor"] = round(
                    statistics.median(ratios), 3
                )
        figures[name] = entry
    return figures


async def child_rss(store: str, count: int) -> dict[str, Any]:
    """In this (fresh) process: create ``count`` finished tasks in process, each read
    twice once finished (as a polling client reads its result); report RSS, also at
    every checkpoint of ``RSS_CHECKPOINTS`` below ``count``.

    The limits let one principal keep every task (``max_finished_tasks``,
    ``max_stored_bytes``); a refused call stops the run.
    """
    from mcp_tasks_ext.server import Limits
    from mcp_tasks_ext.stores import SQLiteTaskStore

    checkpoints: dict[int, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        server = load_example().build_server(None)
        # every task belongs to one principal: allow it all of them, finished ones too
        server.limits = Limits(
            max_active_tasks=count + 1,
            max_finished_tasks=count + 1,
            max_stored_bytes=2**62,
            max_tasks=None,
            poll_interval_ms=200,
            default_ttl_ms=3_600_000,
        )
        if store == "sqlite":
            # population speed only: commits are not fsynced here
            server.store = SQLiteTaskStore(
                str(Path(tmp) / "rss.sqlite3"), synchronous="OFF"
            )
        async with server:
            before = rss_kb(os.getpid())
            batch: list[str] = []
            for index in range(count):
                reply = await server.handle(
                    ext_request(
                        "tools/call",
                        {"name": "slow_compute", "arguments": {"seconds": 0}},
                        index,
                    )
                )
                task_id = result(
                    reply or {}, f"tools/call {index} (in process, RSS)", "taskId"
                )
                batch.append(task_id)
                if len(batch) == 500 or index == count - 1:
                    while (
                        server.lifecycle.workers
                    ):  # let the workers finish, as a real load would
                        await asyncio.sleep(0.001)
                    for _ in range(2):
                        for task_id in batch:
                            got = await server.handle(
                                ext_request("tasks/get", {"taskId": task_id}, index)
                            )
                            assert got is not None and "result" in got, got
                    batch = []
                if index + 1 in RSS_CHECKPOINTS and index + 1 < count:
                    checkpoints[index + 1] = rss_kb(os.getpid())
            await asyncio.sleep(0.5)
            after = rss_kb(os.getpid())
    checkpoints[count] = after
    return {
        "rss_before_kib": before,
        "rss_after_kib": after,
        "bytes_per_task": round((after - before) * 1024 / count),
        "bytes_per_task_at": {
            str(tasks): round((rss - before) * 1024 / tasks)
            for tasks, rss in checkpoints.items()
        },
    }


RSS_CHECKPOINTS = (10_000, 20_000, 50_000)
"""Task counts at which ``child_rss`` also reports the memory per task."""


def run_child_rss(store: str, count: int) -> dict[str, Any]:
    """Run :func:`child_rss` in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, __file__, "--child-rss", store, "--rss-tasks", str(count)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise BadReply(f"RSS child ({store}) failed: {done.stderr.strip()[-600:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


SMOKE_TARGETS = ("ours (memory store)",)
"""The server ``--smoke`` measures alone (the peers it measures against ours only)."""
PEERS = ("fastmcp[tasks] 4.1.4", "mcp 1.30.0")
OURS = ("ours (memory store)", "ours (SQLite store)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="duration of each load run"
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=200.0,
        help="requests per second of the fixed-rate runs (below every server's"
        " saturation; default 200)",
    )
    parser.add_argument(
        "--tasks",
        type=int,
        default=900,
        help="tasks created over HTTP for RSS (below Limits.max_finished_tasks, 1,000)",
    )
    parser.add_argument(
        "--rss-tasks",
        type=int,
        default=100_000,
        help="tasks created in process for RSS",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=6,
        help=(
            "interleaved rounds of the dual/single comparison, each --seconds long per"
            " load and side (even: each side goes first as often)"
        ),
    )
    parser.add_argument(
        "--json", action="store_true", help="also print the figures as JSON"
    )
    parser.add_argument(
        "--only", action="append", help="measure only targets whose name contains this"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="short runs: --seconds 1 --tasks 300 --rss-tasks 5000 --rounds 4",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a few seconds, to check every part works: 0.2 s runs at 50 req/s, 20"
        " tasks over HTTP, 200 in process, 2 rounds, fewer servers (see the docstring)",
    )
    parser.add_argument(
        "--child-rss", choices=["memory", "sqlite"], help=argparse.SUPPRESS
    )
    options = parser.parse_args()
    if options.quick:
        options.seconds, options.tasks, options.rss_tasks = 1.0, 300, 5000
        options.rounds = 4
    if options.smoke:
        options.seconds, options.tasks, options.rss_tasks = 0.2, 20, 200
        options.rounds, options.rate = 2, 50.0
        PAUSES.update(warm_s=0.1, settle_s=0.2)
    if options.child_rss:
        print(json.dumps(asyncio.run(child_rss(options.child_rss, options.rss_tasks))))
        return

    figures: dict[str, dict[str, Any]] = {}
    for target in TARGETS:
        if options.only and not any(part in target.name for part in options.only):
            continue
        if options.smoke and target.name not in SMOKE_TARGETS:
            continue
        if target.peer is not None and not peers.is_installed(target.peer):
            print(
                f"skipping {target.name}: peer not installed (.ci/peers.sh)",
                file=sys.stderr,
            )
            continue
        print(f"measuring {target.name} ...", file=sys.stderr)
        figures[target.name] = asyncio.run(
            measure_http(target, options.seconds, options.tasks, options.rate)
        )
        print(f"  {figures[target.name]}", file=sys.stderr)
    for store, name in (
        ("memory", "ours (memory store)"),
        ("sqlite", "ours (SQLite store)"),
    ):
        if options.only and not any(part in name for part in options.only):
            continue
        if options.smoke and name not in SMOKE_TARGETS:
            continue
        print(f"measuring {name} in process ...", file=sys.stderr)
        entry = figures.setdefault(name, {})
        entry["req_per_s_in_process"] = round(
            asyncio.run(measure_in_process(store, options.seconds))
        )
        child = run_child_rss(store, options.rss_tasks)
        entry[f"bytes_per_task_{options.rss_tasks}"] = child["bytes_per_task"]
        entry["bytes_per_task_at"] = child["bytes_per_task_at"]
        entry[f"rss_kib_with_{options.rss_tasks}"] = child["rss_after_kib"]
        print(f"  {entry}", file=sys.stderr)

    rate = f"{options.rate:g} req/s"
    columns = [
        ("server_cpu_ms_per_req_fixed", f"server CPU ms/req at {rate}"),
        ("req_per_s_c1", "HTTP c=1"),
        ("req_per_s_c8", "HTTP c=8"),
        ("server_cpu_ms_per_req", "server CPU ms/req saturated"),
        ("req_per_s_in_process", "in process"),
        ("bytes_per_task_http", f"B/task ({options.tasks} via HTTP)"),
        (
            f"bytes_per_task_{options.rss_tasks}",
            f"B/task ({options.rss_tasks} in proc)",
        ),
        (f"rss_kib_with_{options.rss_tasks}", f"RSS KiB ({options.rss_tasks})"),
    ]
    if figures:
        print(
            f"\ntasks/get throughput (req/s), server CPU per request and memory;"
            f" {os.cpu_count()} CPUs, load generator on the same machine"
        )
        print("| server | " + " | ".join(title for _, title in columns) + " |")
        print("|---" * (len(columns) + 1) + "|")
        for name, entry in figures.items():
            cells = [str(entry.get(key, "-")) for key, _ in columns]
            print(f"| {name} | " + " | ".join(cells) + " |")
        slow = [
            f"{name} ({entry['req_per_s_fixed']:g} req/s)"
            for name, entry in figures.items()
            if "req_per_s_fixed" in entry
            and entry["req_per_s_fixed"] < 0.95 * options.rate
        ]
        if slow:
            print(f"fixed rate not reached (saturated below {rate}): {', '.join(slow)}")
        print_peer_ratios(figures, rate)

    against_peers = compare_peers(options)
    floors = compare_floors(options)
    pairs = compare_dual(options)
    if options.json:
        print(
            json.dumps(
                {
                    "servers": figures,
                    "against_peers": against_peers,
                    "against_floors": floors,
                    "dual_against_single": pairs,
                },
                indent=2,
            )
        )


def print_peer_ratios(figures: dict[str, dict[str, Any]], rate: str) -> None:
    """Server CPU per request of each peer over ours, at the fixed rate and
    saturated."""
    ours = [name for name in OURS if "server_cpu_ms_per_req" in figures.get(name, {})]
    theirs = [name for name in PEERS if name in figures]
    if not ours or not theirs:
        return
    print(
        f"\nserver CPU per tasks/get, peer / ours (how many times less CPU ours"
        f" uses), at {rate} and saturated"
    )
    print(
        "| peer | "
        + " | ".join(f"/ {name}, {rate} | / {name}, saturated" for name in ours)
        + " |"
    )
    print("|---" * (2 * len(ours) + 1) + "|")
    for peer in theirs:
        cells = []
        for name in ours:
            for key in ("server_cpu_ms_per_req_fixed", "server_cpu_ms_per_req"):
                base = figures[name][key]
                cells.append(f"{figures[peer][key] / base:.2f}" if base else "-")
        print(f"| {peer} | " + " | ".join(cells) + " |")


PEER_COMPARISON = "peers"
"""The name ``--only`` matches to run ours against the peers in interleaved rounds."""


def compare_peers(options: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Ours (memory and SQLite store; memory only with ``--smoke``) and the installed
    peers, all running at once and loaded in turn in ``--rounds`` interleaved rounds:
    each one's median server CPU per request at the fixed rate and saturated, and each
    peer's median over the rounds of its CPU per request over ours."""
    if options.only and not any(part in PEER_COMPARISON for part in options.only):
        return {}
    ours = OURS[:1] if options.smoke else OURS
    theirs = [
        t
        for t in TARGETS
        if t.name in PEERS and t.peer is not None and peers.is_installed(t.peer)
    ]
    if not theirs:
        return {}
    targets = {t.name: t for t in TARGETS if t.name in ours} | {
        t.name: t for t in theirs
    }
    print("measuring ours against the peers, interleaved ...", file=sys.stderr)
    samples = asyncio.run(
        measure_group(targets, options.seconds, options.rounds, options.rate)
    )
    figures: dict[str, dict[str, Any]] = {}
    for name, rows in samples.items():
        entry: dict[str, Any] = {"rounds": rows}
        for key in ("cpu_ms_fixed", "cpu_ms"):
            entry[key] = round(statistics.median(rows[key]), 3)
        for base in ours:
            for key in ("cpu_ms_fixed", "cpu_ms"):
                pairs = zip(rows[key], samples[base][key], strict=True)
                entry[f"{key}_over_{base}"] = round(
                    statistics.median(peer / own for peer, own in pairs), 2
                )
        figures[name] = entry
    rate = f"{options.rate:g} req/s"
    print(
        f"\nserver CPU per tasks/get against the peers: medians of {options.rounds}"
        f" interleaved rounds of {options.seconds:g} s per load; ratio = median of the"
        " rounds' peer / ours (how many times less CPU ours uses)"
    )
    header = [f"CPU ms/req at {rate}", "CPU ms/req saturated"]
    for base in ours:
        header += [f"/ {base}, {rate}", f"/ {base}, saturated"]
    print("| server | " + " | ".join(header) + " |")
    print("|---" * (len(header) + 1) + "|")
    for name, entry in figures.items():
        cells = [f"{entry['cpu_ms_fixed']:.3f}", f"{entry['cpu_ms']:.3f}"]
        for base in ours:
            for key in ("cpu_ms_fixed", "cpu_ms"):
                cells.append(f"{entry[f'{key}_over_{base}']:.2f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    return figures


def compare_floors(options: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Ours against the floor apps (see the module docstring)."""
    if options.only and not any(part in FLOOR_COMPARISON for part in options.only):
        return {}
    targets = FLOOR_TARGETS[:3] if options.smoke else FLOOR_TARGETS
    print("measuring ours against the floors ...", file=sys.stderr)
    floors = asyncio.run(
        measure_floors(targets, options.seconds, options.rounds, options.rate)
    )
    for name, entry in floors.items():
        shown = {k: v for k, v in entry.items() if k != "rounds"}
        print(f"  {name}: {shown}", file=sys.stderr)
    print(
        "\nextension tasks/get against the floors (benchmarks/floor_server.py, same"
        f" uvicorn settings): medians of {options.rounds} interleaved rounds of"
        f" {options.seconds:g} s per load; ratio = median of the rounds' ours / floor"
        f" (server CPU per request, at {options.rate:g} req/s and saturated)"
    )
    print(
        f"| server | server CPU ms/req at {options.rate:g} req/s | ratio to JSON-echo"
        " floor | ratio to fixed-bytes floor | HTTP c=1 | HTTP c=8 | server CPU"
        " ms/req saturated | ratio to JSON-echo floor | ratio to fixed-bytes floor |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, entry in floors.items():
        cells = [
            f"{entry['server_cpu_ms_per_req_fixed']:.3f}",
            f"{entry['cpu_fixed_ratio_to_json_floor']:.2f}",
            f"{entry['cpu_fixed_ratio_to_fixed_floor']:.2f}",
            str(entry["req_per_s_c1"]),
            str(entry["req_per_s_c8"]),
            f"{entry['server_cpu_ms_per_req']:.3f}",
            f"{entry['cpu_ratio_to_json_floor']:.2f}",
            f"{entry['cpu_ratio_to_fixed_floor']:.2f}",
        ]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return floors


def compare_dual(options: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The dual server against the single-revision ones (see the module docstring)."""
    pairs: dict[str, dict[str, Any]] = {}
    if options.only and not any(part in COMPARISON for part in options.only):
        return pairs
    for pair in PAIRS:
        if options.smoke and "memory" not in pair.name:
            continue
        print(f"measuring dual against single, {pair.name} ...", file=sys.stderr)
        pairs[pair.name] = {}
        # --smoke: the extension pair in process only (its HTTP path is the 2025 one's)
        if not options.smoke or pair.single.dialect is not ExtDialect:
            pairs[pair.name] = asyncio.run(
                measure_pair(pair, options.seconds, options.rounds, options.rate)
            )
        if pair.single.dialect is ExtDialect:
            store = "memory" if "memory" in pair.name else "sqlite"
            pairs[pair.name].update(
                asyncio.run(
                    measure_pair_in_process(store, options.seconds, options.rounds)
                )
            )
        shown = {
            k: v for k, v in pairs[pair.name].items() if not k.startswith("rounds")
        }
        print(f"  {shown}", file=sys.stderr)
    print(
        "\ndual server (examples/server.py) against the single-revision servers: "
        f"tasks/get, medians of {options.rounds} interleaved rounds of "
        f"{options.seconds:g} s per load; ratio = median of the rounds' dual / single"
    )
    print(
        f"| load, store | server CPU ms/req at {options.rate:g} req/s single / dual"
        " (ratio) | HTTP c=1 single / dual (ratio) | HTTP c=8 single / dual (ratio)"
        " | server CPU ms/req saturated single / dual (ratio) | in process single /"
        " dual (ratio) |"
    )
    print("|---|---|---|---|---|---|")
    for name, entry in pairs.items():
        cells = [
            (
                f"{entry[f'single_{key}']} / {entry[f'dual_{key}']}"
                f" ({entry[f'ratio_{key}']:.2f})"
                if f"ratio_{key}" in entry
                else "-"
            )
            for key in ("cpu_ms_fixed", "c1", "c8", "cpu_ms")
        ]
        if "ratio_in_process" in entry:
            cells.append(
                f"{entry['single_in_process']} / {entry['dual_in_process']}"
                f" ({entry['ratio_in_process']:.2f})"
            )
        else:
            cells.append("-")
        print(f"| {name} | " + " | ".join(cells) + " |")
    return pairs


if __name__ == "__main__":
    run_checked(main)
