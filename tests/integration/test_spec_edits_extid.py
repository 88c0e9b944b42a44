"""The extension identifier follows the schema, and a renamed method the runtime needs
stops generation where the method changed, naming the likely new one.

``io.modelcontextprotocol/tasks-v2`` in the extension schema's title and description:
the generated server advertises it (``server/discover``) and asks for it, the generated
client declares it and runs tasks; a client declaring the old identifier does not see
tasks (a task-only tool is refused with -32021 naming the new identifier, an optional
one runs without a task). The same in a package of both revisions. Two identifiers, or
none, stop generation (exit 2, one line, the pointer of the description) unless the
target gives one (``--extension-id`` or ``extension_id`` in ``[tool.mcptasks-gen]``).
``mcptasks-gen diff`` reports the change as breaking for both sides. Every method a
revision's runtime needs, renamed in its definition's method constant, is refused at
that constant, naming the new method.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.spec_edit_cases.extid import (
    GIVEN_ID,
    OLD_ID,
    RENAMES,
    V2_ID,
    no_id,
    rename_case_name,
    to_v2,
)
from tests.spec_edits import SCHEMA_FILES, Case, all_cases
from tests.support import spec_cases
from tests.support.servers import ext_message, headers_for

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CASES = all_cases()

pytestmark = pytest.mark.anyio


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


@pytest.fixture
def served(
    spec_packages: tuple[Path, dict[str, Case]], request: pytest.FixtureRequest
) -> Iterator[tuple[str, str]]:
    """The case's server in its own process; yields the package name and the URL."""
    case = CASES[request.param]
    with spec_cases.serve(spec_packages[0], case) as url:
        yield case.package, url


def _client(package: str, url: str) -> Any:
    client = _module(f"{package}.client")
    transport = _module(f"{package}.transport")
    ids = _module(f"{package}.task_ids")
    return client.TasksClient(
        transport.HttpTransport(url),
        store=ids.MemoryTaskIdStore(),
        default_poll_interval=0.02,
    )


async def _post(url: str, message: dict[str, Any]) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(url, json=message, headers=headers_for(message))
    answer: dict[str, Any] = response.json()
    return answer


async def _discovered_extensions(url: str) -> dict[str, Any]:
    answer = await _post(url, ext_message("server/discover", declare=False))
    extensions: dict[str, Any] = answer["result"]["capabilities"]["extensions"]
    return extensions


@pytest.mark.parametrize("served", ["extid_v2", "extid_v2_dual"], indirect=True)
async def test_the_schemas_new_identifier_is_negotiated_on_the_wire(
    served: tuple[str, str],
) -> None:
    package, url = served
    assert _module(f"{package}.protocol_ext").EXTENSION_ID == V2_ID
    assert await _discovered_extensions(url) == {V2_ID: {}}
    async with _client(package, url) as client:
        handle = await client.start_tool("slow", {})
        assert handle.task_id
        await client.call_tool("open_gate", {})
        result = await handle.result()
    assert "slow done" in json.dumps(result.raw)


@pytest.mark.parametrize("served", ["extid_v2"], indirect=True)
async def test_a_client_declaring_the_old_identifier_sees_no_tasks(
    served: tuple[str, str],
) -> None:
    package, url = served
    old = {"extensions": {OLD_ID: {}}}
    refused = await _post(
        url, ext_message("tools/call", {"name": "slow"}, capabilities=old)
    )
    assert refused["error"]["code"] == -32021, refused
    assert refused["error"]["data"] == {
        "requiredCapabilities": {"extensions": {V2_ID: {}}}
    }
    inline = await _post(
        url, ext_message("tools/call", {"name": "either"}, capabilities=old)
    )
    assert inline["result"]["resultType"] == "complete", inline
    assert "either done" in json.dumps(inline["result"]["content"])
    # the generated package of the unedited schema: the old identifier's client
    old_client = _module("mcp_tasks_ext.client")
    old_transport = _module("mcp_tasks_ext.transport")
    async with old_client.TasksClient(old_transport.HttpTransport(url)) as client:
        assert not client.server_supports_tasks(await client.discover())
        with pytest.raises(old_client.MissingRequiredClientCapability):
            await client.start_tool("slow", {})
    async with _client(package, url) as client:
        assert client.server_supports_tasks(await client.discover())


@pytest.mark.parametrize("served", ["extid_given"], indirect=True)
async def test_an_identifier_the_schema_does_not_name_comes_from_the_target(
    served: tuple[str, str],
) -> None:
    package, url = served
    assert await _discovered_extensions(url) == {GIVEN_ID: {}}
    async with _client(package, url) as client:
        handle = await client.start_tool("slow", {})
        await client.call_tool("open_gate", {})
        assert "slow done" in json.dumps((await handle.result()).raw)


def _write(tmp_path: Path, name: str, raw: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(raw))
    return path


def _ext_schema() -> dict[str, Any]:
    raw: dict[str, Any] = json.loads((ROOT / SCHEMA_FILES["ext"]).read_text())
    return raw


def test_the_identifier_comes_from_the_pyproject_target(tmp_path: Path) -> None:
    _write(tmp_path, "schema.json", no_id(_ext_schema()))
    (tmp_path / "pyproject.toml").write_text(
        "[[tool.mcptasks-gen.targets]]\n"
        'schema = "schema.json"\n'
        'output = "out"\n'
        'package = "given"\n'
        f'extension_id = "{GIVEN_ID}"\n'
    )
    command = [str(BIN / "mcptasks-gen"), "generate"]
    proc = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    tables = (tmp_path / "out" / "given" / "protocol_ext.py").read_text()
    assert f'EXTENSION_ID = "{GIVEN_ID}"' in tables
    pyproject = (tmp_path / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(pyproject.replace(GIVEN_ID, "not-an-id"))
    proc = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        "pyproject.toml#/tool/mcptasks-gen/targets/0/extension_id: error: invalid"
        " extension identifier 'not-an-id'"
    ), proc.stderr


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("extid_several", f"name 2 extension identifiers ({OLD_ID}, {V2_ID})"),
        ("extid_none", "name no extension identifier"),
        ("extid_not_named", f'"{GIVEN_ID}" is not one the schema'),
    ],
)
def test_several_or_no_identifiers_stop_at_the_description(
    tmp_path: Path, name: str, message: str
) -> None:
    proc = spec_cases.generate(tmp_path, CASES[name])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line, line
    assert line.startswith(
        f"{tmp_path / f'{name}.ext.schema.json'}#/description: error: the"
    ), line
    assert message in line, line
    if name != "extid_not_named":
        assert "--extension-id" in line, line


def test_diff_reports_a_changed_identifier_as_breaking_for_both_sides(
    tmp_path: Path,
) -> None:
    new = _write(tmp_path, "v2.json", to_v2(_ext_schema()))
    proc = subprocess.run(
        [
            str(BIN / "mcptasks-gen"),
            "diff",
            str(ROOT / SCHEMA_FILES["ext"]),
            str(new),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert [
        (c["kind"], c["category"], c["client"], c["server"], c["old"], c["new"])
        for c in report["changes"]
    ] == [
        (
            "extension-changed",
            "extension",
            "breaking",
            "breaking",
            OLD_ID,
            V2_ID,
        )
    ]


@pytest.mark.parametrize(
    ("revision", "method", "new", "definition"),
    RENAMES,
    ids=[rename_case_name(r, m) for r, m, _, _ in RENAMES],
)
def test_a_renamed_required_method_stops_at_its_method_constant(
    tmp_path: Path, revision: str, method: str, new: str, definition: str
) -> None:
    name = rename_case_name(revision, method)
    proc = spec_cases.generate(tmp_path, CASES[name])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and "Traceback" not in line, line
    schema = tmp_path / f"{name}.{revision}.schema.json"
    assert line.startswith(
        f"{schema}#/$defs/{definition}/properties/method: error:"
    ), line
    assert f'needs method "{method}"' in line and f'"{new}"' in line, line
    assert not (tmp_path / CASES[name].package).exists()
