"""The generated client and server follow a schema edit, or generation stops with exit
2.

Each edit of ``spec_edits.py`` is applied to the Tasks extension schema (the embedded
``schema/ext-2026-07-28``, the official one's structure), generated with the CLI into a
temporary folder,
type-checked with ``mypy --strict`` and pyright strict together with a little user code,
and then run: a server process built on the generated package serves real HTTP, and the
generated client talks to it from this process.

a) ``paused``, classified ``active``: a tool pauses its task, the client keeps polling
   through ``paused`` (and reports it), the tool resumes and the client returns the
   result.
b) ``progress``: the tool sets it with the typed ``TaskFields``; the client reads it on
a
   snapshot.
c) ``pollIntervalMs`` renamed: generation stops with exit 2 and the JSON pointer of the
   field the runtime needs; nothing is written.
d) ``tasks/list``: ``client.tasks_list(...)`` is typed, and the server answers it with
the
   runtime's built-in list role (pages of the caller's tasks behind opaque cursors,
   built through the schema's ``ListTasksResult``) once ``enable_list`` is on; off,
   -32601. A method with a runtime role gets no ``on_<method>`` registration: the
   runtime serves it.
e) ``tasks/update`` removed: the revision is still detected, neither side has the method
   (the server answers -32601) and a tool asking for input fails its task clearly.
f) ``tasks/update`` removed and ``tasks/result`` added: the server's built-in result
role
   blocks until the task ends and carries the tool's input request on its stream as a
   server-to-client request (the mechanism the schema's roles select), then returns the
   outcome.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.spec_edits import EDITS, Case, Schema, all_cases
from tests.support import spec_cases

ROOT = Path(__file__).resolve().parents[2]
EXT_SCHEMA = ROOT / "schema" / "ext-2026-07-28" / "schema.json"
BIN = Path(sys.executable).parent
CASES = all_cases()

pytestmark = pytest.mark.anyio


def _generate(out: Path, name: str) -> subprocess.CompletedProcess[str]:
    return spec_cases.generate(out, CASES[name])


@pytest.fixture
def packages(spec_packages: tuple[Path, dict[str, Case]]) -> Path:
    """Every case that generates, generated into one folder on ``sys.path``."""
    return spec_packages[0]


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


@pytest.mark.timeout(
    600
)  # generates every case's package (fixture), then mypy --strict
def test_edited_packages_pass_mypy_strict(
    spec_packages: tuple[Path, dict[str, Case]],
) -> None:
    """Every generated case and the cases' user code, in one ``mypy --strict`` run."""
    packages, cases = spec_packages
    args = [
        str(BIN / "mypy"),
        "--strict",
        "--no-incremental",
        "--python-version",
        "3.10",
        "user_code.py",
    ]
    args += [case.package for case in cases.values()]
    proc = subprocess.run(
        args, cwd=packages, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _body(path: Path) -> list[str]:
    """A generated file's lines after its header comment (which names the package's
    schema and command, so it differs in every package)."""
    lines = path.read_text().splitlines()
    start = 0
    while start < len(lines) and lines[start].startswith("#"):
        start += 1
    return lines[start:]


def _changed_files(packages: Path, cases: dict[str, Case]) -> list[Path]:
    """Every file of every case's package that its edit changed: files whose text
    (after the header) differs from, or is missing in, the package generated from the
    same unedited schema(s) (without the case's options, which may need the edit, so
    what they change counts as changed). The runtime's files are copied the same into
    every package, so this is the schema-dependent surface each edit moved.
    """
    changed: list[Path] = []
    twins: dict[tuple[str, ...], Path] = {}
    for case in cases.values():
        key = tuple(sorted(case.edits))
        if key not in twins:
            unedited = Case(
                f"unedited_{len(twins)}",
                {revision: _unchanged for revision in case.edits},
            )
            proc = spec_cases.generate(packages, unedited)
            assert proc.returncode == 0, proc.stderr
            twins[key] = packages / unedited.package
        base = twins[key]
        for path in sorted((packages / case.package).rglob("*.py")):
            twin = base / path.relative_to(packages / case.package)
            if not twin.exists() or _body(twin) != _body(path):
                changed.append(path)
    return changed


def _unchanged(schema: Schema) -> Schema:
    return schema


@pytest.mark.timeout(600)  # generates each case's unedited twin, then pyright strict
def test_edited_packages_pass_pyright_strict(
    spec_packages: tuple[Path, dict[str, Case]],
) -> None:
    """Every file a case's edit changed, and the cases' user code, in one pyright
    strict run.

    ``mypy --strict`` (the test above) checks every case's whole package, including
    the runtime's use of the edited models; pyright checks the unedited packages whole
    (``test_quality.py``) and here the surface each edit changed: twenty whole packages
    took pyright two minutes, most of it on twenty copies of the same runtime.
    """
    packages, cases = spec_packages
    changed = _changed_files(packages, cases)
    # every case's edit reaches at least its models: an empty list would check nothing
    assert {path.relative_to(packages).parts[0] for path in changed} == {
        case.package for case in cases.values()
    }
    config = packages / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "typeCheckingMode": "strict",
                "pythonVersion": "3.10",
                "extraPaths": [str(packages)],
            }
        )
    )
    targets = [str(path) for path in changed] + [str(packages / "user_code.py")]
    proc = subprocess.run(
        [
            str(BIN / "pyright"),
            "--project",
            str(config),
            "--pythonpath",
            sys.executable,
            "--outputjson",
            *targets,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(proc.stdout)
    problems = [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert not problems, "\n".join(problems[:40])
    assert report["summary"]["filesAnalyzed"] >= len(targets)


def test_renamed_runtime_field_stops_generation(tmp_path: Path) -> None:
    """c) The runtime reads ``pollIntervalMs``: a schema that renamed it cannot be
    served."""
    proc = _generate(tmp_path, "c_rename")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith(
        f"{tmp_path / 'c_rename.ext.schema.json'}"
        "#/$defs/Task/properties/pollIntervalMs: error:"
    )
    assert '"pollIntervalMs"' in line and '"pollInterval"' in line
    assert not (tmp_path / "p_c_rename").exists()


@pytest.mark.parametrize(
    "name", sorted(name for name, case in CASES.items() if case.refused is not None)
)
def test_a_refused_edit_stops_generation_with_one_line(
    tmp_path: Path, name: str
) -> None:
    """An edit the runtime cannot follow stops generation: exit 2, one line naming
    what is wrong, no traceback, nothing written."""
    case = CASES[name]
    proc = spec_cases.generate(tmp_path, case)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and "Traceback" not in line, line
    assert case.refused is not None and case.refused in line, line
    assert not (tmp_path / case.package).exists()


def test_unclassified_status_stops_generation(tmp_path: Path) -> None:
    """a) without a classification, ``paused`` stops generation with its pointer."""
    raw = EDITS["a_paused"](json.loads(EXT_SCHEMA.read_text()))
    schema = tmp_path / "paused.json"
    schema.write_text(json.dumps(raw))
    proc = subprocess.run(
        [
            str(BIN / "mcptasks-gen"),
            "generate",
            str(schema),
            "-o",
            str(tmp_path),
            "--package",
            "p",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        f'{schema}#/$defs/TaskStatus: error: status "paused" is unknown'
    )
    assert 'paused = "active"' in proc.stderr
    assert not (tmp_path / "p").exists()


@pytest.fixture
def served(
    packages: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[ModuleType, str]]:
    """The edit's server in its own process; yields the generated client module and
    the URL."""
    case = CASES[request.param]
    with spec_cases.serve(packages, case) as url:
        yield _module(f"{case.package}.client"), url


def _client(client_module: ModuleType, url: str) -> Any:
    transport_module = _module(client_module.__name__.rsplit(".", 1)[0] + ".transport")
    ids = _module(client_module.__name__.rsplit(".", 1)[0] + ".task_ids")
    return client_module.TasksClient(
        transport_module.HttpTransport(url),
        store=ids.MemoryTaskIdStore(),
        default_poll_interval=0.02,
    )


@pytest.mark.parametrize("served", ["a_paused"], indirect=True)
async def test_a_client_keeps_polling_through_an_added_active_status(
    served: tuple[ModuleType, str],
) -> None:
    client_module, url = served
    seen: list[str] = []
    async with _client(client_module, url) as client:
        handle = await client.start_tool("pausing", {})
        async for snapshot in handle.snapshots(timeout=60):
            seen.append(client_module.status_name(snapshot.status))
            if seen[-1] == "paused" and seen.count("paused") == 1:
                assert snapshot.status_message == "waiting for the gate"
                assert type(snapshot).__name__ == "PausedTask"
                await client.call_tool("open_gate", {})
        result = await handle.result()
    assert "paused" in seen and seen[-1] == "completed", seen
    assert "done after pause" in json.dumps(result.raw)


@pytest.mark.parametrize("served", ["b_progress"], indirect=True)
async def test_b_tool_sets_an_added_field_and_the_client_reads_it(
    served: tuple[ModuleType, str],
) -> None:
    client_module, url = served
    progress: list[float | None] = []
    async with _client(client_module, url) as client:
        handle = await client.start_tool("counting", {})
        async for snapshot in handle.snapshots(timeout=60):
            progress.append(snapshot.progress)
            if snapshot.progress == 0.5 and progress.count(0.5) == 1:
                await client.call_tool("open_gate", {})
        result = await handle.result()
    assert 0.5 in progress, progress
    assert "counted" in json.dumps(result.raw)


@pytest.mark.parametrize("served", ["d_list"], indirect=True)
async def test_d_added_method_is_a_typed_client_method_served_by_the_built_in_list(
    served: tuple[ModuleType, str],
) -> None:
    client_module, url = served
    models = _module(client_module.__name__.rsplit(".", 1)[0] + ".models")
    transport = _module(client_module.__name__.rsplit(".", 1)[0] + ".transport")
    async with _client(client_module, url) as client:
        for _ in range(3):
            assert "quick" in json.dumps((await client.call_tool("quick", {})).raw)
        first = await client.tasks_list()
        assert isinstance(first, models.ListTasksResult)
        assert len(first.tasks) == 2 and first.next_cursor is not None
        second = await client.tasks_list(cursor=first.next_cursor)
        listed = await client.list_tasks()  # the runtime's list role: every page
        with pytest.raises(transport.JsonRpcError, match="Invalid cursor"):
            await client.tasks_list(cursor="page-2")
    assert len(second.tasks) == 1 and second.next_cursor is None
    assert all(t.status == "completed" for t in [*first.tasks, *second.tasks])
    assert len({t.task_id for t in [*first.tasks, *second.tasks]}) == 3
    assert sorted(t.task_id for t in listed) == sorted(
        t.task_id for t in [*first.tasks, *second.tasks]
    )
    assert all(type(t) is models.Task for t in listed)


async def test_d_the_added_method_is_method_not_found_until_the_list_is_enabled(
    packages: Path,
) -> None:
    server_module = _module("p_d_list.server")
    stores = _module("p_d_list.stores")
    server = server_module.TasksServer("edits", store=stores.InMemoryTaskStore())
    assert "tasks/list" not in server.HANDLER_METHODS and not hasattr(
        server, "on_tasks_list"
    )
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    }
    ask = {"jsonrpc": "2.0", "id": 1, "method": "tasks/list", "params": {"_meta": meta}}
    answer = await server.handle(ask)
    assert answer is not None and answer["error"]["code"] == -32601, answer
    listing = server_module.TasksServer(
        "edits", store=stores.InMemoryTaskStore(), enable_list=True
    )
    answer = await listing.handle(ask)
    assert (
        answer is not None
        and answer["result"]["tasks"] == []
        and answer["result"]["resultType"] == "complete"
    ), answer
    assert "nextCursor" not in answer["result"]


@pytest.mark.parametrize("served", ["e_no_update"], indirect=True)
async def test_e_removed_method_is_gone_from_both_sides(
    served: tuple[ModuleType, str],
) -> None:
    client_module, url = served
    protocol = _module(client_module.__name__.rsplit(".", 1)[0] + ".protocol")
    assert protocol.REVISION == "ext-2026-07-28"
    assert "tasks/update" not in protocol.METHODS and not protocol.has_role("update")
    assert not hasattr(client_module.TasksClient, "tasks_update")

    async def elicit(context: Any) -> dict[str, Any]:
        raise AssertionError(
            "no input request can reach the client without tasks/update"
        )

    async with _client(client_module, url) as client:
        client.handlers["elicitation/create"] = elicit
        with pytest.raises(client_module.MethodNotFound):
            await client.request("tasks/update", {"taskId": "x", "inputResponses": {}})
        with pytest.raises(
            client_module.TaskFailed, match="neither an update nor a result method"
        ):
            await client.call_tool("asking", {})


def test_a_schema_change_rewrites_only_the_schema_dependent_files(
    tmp_path: Path,
) -> None:
    """Regenerating after a small schema change leaves the copied runtime files
    alone."""
    proc = _generate(tmp_path, "b_progress")
    assert proc.returncode == 0, proc.stderr
    package = tmp_path / "p_b_progress"
    before = _files(package)
    raw = json.loads((tmp_path / "b_progress.ext.schema.json").read_text())
    raw["$defs"]["Task"]["properties"]["progress"]["description"] = "Changed."
    raw["$defs"]["Task"]["properties"]["note"] = {"type": "string"}
    (tmp_path / "b_progress.ext.schema.json").write_text(json.dumps(raw))
    command = [
        str(BIN / "mcptasks-gen"),
        "generate",
        str(tmp_path / "b_progress.ext.schema.json"),
        "-o",
        str(tmp_path),
        "--package",
        "p_b_progress",
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    after = _files(package)
    changed = sorted(name for name in after if after[name] != before.get(name))
    assert changed == [
        "__init__.py",
        "api_ext.py",
        "checks_ext.py",
        "client/__init__.py",
        "models.py",
        "models_ext.py",
        "protocol.py",
        "protocol_ext.py",
        "server/__init__.py",
    ], changed
    runtime_dir = ROOT / "templates" / "runtime"
    runtime = sorted(
        p.relative_to(runtime_dir).as_posix() for p in runtime_dir.rglob("*.py")
    )
    assert not set(changed) & set(runtime)
    assert f"wrote {len(changed)} of {len(after)} files" in proc.stdout, proc.stdout


def _files(package: Path) -> dict[str, bytes]:
    """The package's files by path relative to it (subpackages too)."""
    return {
        p.relative_to(package).as_posix(): p.read_bytes()
        for p in package.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


async def test_f_added_result_method_carries_the_input_request_on_its_stream(
    packages: Path,
) -> None:
    server_module = _module("p_f_result.server")
    protocol = _module("p_f_result.protocol")
    assert protocol.ROLES.get("result") == "tasks/result" and not protocol.has_role(
        "update"
    )
    server = server_module.TasksServer(
        "edits", store=_module("p_f_result.stores").InMemoryTaskStore()
    )

    @server.tool(task_support="required")
    async def asking(ctx: Any, arguments: dict[str, Any]) -> str:
        answer = await ctx.elicit("Go on?", {"type": "object", "properties": {}})
        return f"answered {answer['action']}"

    capabilities = {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {},
    }
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    sent: list[dict[str, Any]] = []
    answers: list[Any] = []

    async def emit(
        message: dict[str, Any],
    ) -> None:  # the client: answer the elicitation
        sent.append(message)
        reply = {
            "jsonrpc": "2.0",
            "id": message["id"],
            "result": {"action": "accept", "content": {}},
        }
        answers.append(asyncio.get_running_loop().create_task(server.handle(reply)))

    async with server:
        call = {"name": "asking", "arguments": {}, "_meta": meta}
        created = await server.handle(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
        )
        assert created is not None and "result" in created, created
        task_id = created["result"]["taskId"]
        ask = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tasks/result",
            "params": {"taskId": task_id, "_meta": meta},
        }
        outcome = await asyncio.wait_for(server.handle(ask, emit=emit), 30)
        foreign = await server.handle(
            {**ask, "params": {"taskId": "nope", "_meta": meta}}
        )
    assert [m["method"] for m in sent] == ["elicitation/create"], sent
    assert (
        outcome is not None and outcome["result"]["resultType"] == "complete"
    ), outcome
    assert "answered accept" in json.dumps(outcome["result"]["content"])
    assert foreign is not None and "error" in foreign
