"""Generating, type-checking and serving the schema-edit cases of ``tests/spec_edits``.

``generate(out, case)`` runs the CLI on the case's edited schema(s);
``generate_all(out)`` generates every case that must generate into one folder and
writes ``user_code.py`` (the cases' typed user code, checked in one mypy and one
pyright run by ``test_spec_edits.py``); ``serve(out, case)`` runs a server process
built on the case's package with its ``tools`` and yields its URL.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.spec_edits import SCHEMA_FILES, Case, all_cases
from tests.support.procs import free_port, run_server

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

USER_CODE_HEADER = '''\
"""User code against the edited packages: the typed surface, checked by mypy and
pyright."""

from __future__ import annotations
'''


def generate(out: Path, case: Case) -> subprocess.CompletedProcess[str]:
    """Write the case's edited schema(s) into ``out`` and run ``mcptasks-gen
    generate`` on them (package ``p_<name>`` in ``out``)."""
    schemas: list[str] = []
    for revision, edit in case.edits.items():
        raw = edit(json.loads((ROOT / SCHEMA_FILES[revision]).read_text()))
        schema = out / f"{case.name}.{revision}.schema.json"
        schema.write_text(json.dumps(raw, indent=2))
        schemas.append(str(schema))
    command = [
        str(BIN / "mcptasks-gen"),
        "generate",
        *schemas,
        "-o",
        str(out),
        "--package",
        case.package,
        *case.args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=out)


def generate_all(out: Path) -> list[Case]:
    """Generate every case that must generate into ``out``; write ``user_code.py``.
    Returns those cases."""
    cases = [case for case in all_cases().values() if case.refused is None]
    for case in cases:
        proc = generate(out, case)
        assert proc.returncode == 0, f"{case.name}: {proc.stderr}"
    snippets = [case.user_code for case in cases if case.user_code]
    (out / "user_code.py").write_text("\n\n".join([USER_CODE_HEADER, *snippets]))
    return cases


SERVER = """\
import asyncio, sys
sys.path.insert(0, {out!r})
from {pkg}.asgi import serve
from {pkg}.server import Limits, TasksServer, ToolContext
from {pkg}.stores import InMemoryTaskStore

server = TasksServer(
    "edits", store=InMemoryTaskStore(), limits=Limits(poll_interval_ms=20)
)
gate = asyncio.Event()


@server.tool(task_support="forbidden")
async def open_gate(ctx: ToolContext, arguments: dict) -> str:
    gate.set()
    return "opened"

{tools}

serve(server, "127.0.0.1", {port})
"""
"""A server script for a case: ``open_gate`` (sets ``gate``, which the case's tools
may wait on) and the case's tools."""


@contextmanager
def serve(out: Path, case: Case, tools: str | None = None) -> Iterator[str]:
    """Run the case's server (its ``tools``, or ``tools``) in its own process on
    loopback; yield the URL."""
    port = free_port()
    script = out / f"server_{case.name}.py"
    body = (case.tools if tools is None else tools).format(pkg=case.package)
    script.write_text(
        SERVER.format(out=str(out), pkg=case.package, port=port, tools=body)
    )
    with run_server([sys.executable, str(script)], port, url_path="/mcp") as handle:
        yield handle.url
