"""A third revision comes from one record of the generator's revision registry.

The record here is a renamed copy of the Tasks extension's (``ext-2027-01-01``: suffix
``ext2``, its own extension identifier and protocol version, the marker method
``tasks/pause``, and runtime adapters ``client_ext2.py``/``server_ext2.py``, which a
templates folder supplies as copies of the extension's bound to ``protocol_ext2``). It
is registered only while these tests run. With nothing else changed, detection picks it
for its schema, ``--revision`` knows its names, the profile check runs with its profile,
a package of three revisions generates, and the dual client's choice follows.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mcptasks_gen import pipeline, revisions
from mcptasks_gen.config import Target, check_revision
from mcptasks_gen.detect import detect, scan
from mcptasks_gen.errors import GenError, Location
from mcptasks_gen.load import load
from tests.support.fakes import FakePeer, run

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_2025 = ROOT / "schema" / "2025-11-25" / "schema.json"
SCHEMA_EXT = ROOT / "schema" / "ext-2026-07-28" / "schema.json"
PACKAGE = "mcp_tasks_three"

EXT2 = replace(
    revisions.EXTENSION,
    title="MCP Tasks extension io.modelcontextprotocol/tasks-v2 (a synthetic copy)",
    marker_methods=frozenset({"tasks/pause"}),
    aliases=("ext2",),
    profile=replace(
        revisions.EXTENSION.profile,
        revision="ext-2027-01-01",
        protocol_version="2027-01-01",
        extension_id="io.modelcontextprotocol/tasks-v2",
        suffix="ext2",
        runtime=tuple(
            re.sub(r"ext\.py$", "ext2.py", name)
            for name in revisions.EXTENSION.profile.runtime
        ),
    ),
)
"""The one record that adds the third revision."""


def ext2_schema(folder: Path) -> Path:
    """The extension's schema with ``tasks/pause`` (a copy of ``tasks/get``), the
    third revision's marker, naming the third revision's extension identifier."""
    raw = json.loads(SCHEMA_EXT.read_text())
    for key in ("title", "description"):  # the identifier the package declares
        raw[key] = raw[key].replace(
            revisions.EXTENSION.profile.extension_id, EXT2.profile.extension_id
        )
    request = copy.deepcopy(raw["$defs"]["GetTaskRequest"])
    request["allOf"][1]["properties"]["method"]["const"] = "tasks/pause"
    request["description"] = "Pauses a task."
    raw["$defs"]["PauseTaskRequest"] = request
    path = folder / "ext2.schema.json"
    path.write_text(json.dumps(raw))
    return path


def ext2_adapters(folder: Path) -> Path:
    """A templates folder with the third revision's runtime adapters: the extension's
    own (whatever files its record names), bound to the ``_ext2`` modules."""
    runtime = folder / "templates" / "runtime"
    for name, copy_name in zip(
        revisions.EXTENSION.profile.runtime, EXT2.profile.runtime, strict=True
    ):
        text = (ROOT / "templates" / "runtime" / name).read_text()
        target = runtime / copy_name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            re.sub(r"\b(protocol|rev|client|server|models|api)_ext\b", r"\1_ext2", text)
        )
    return folder / "templates"


@pytest.fixture(scope="module")
def registered() -> Iterator[revisions.Revision]:
    """The registry with the third revision's record, restored afterwards."""
    saved = dict(revisions.REGISTRY)
    revisions.register(EXT2)
    try:
        yield EXT2
    finally:
        revisions.REGISTRY.clear()
        revisions.REGISTRY.update(saved)


@pytest.fixture(scope="module")
def three(
    registered: revisions.Revision, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[dict[str, str], ModuleType]]:
    """A package of the three revisions (its files, and the package imported)."""
    folder = tmp_path_factory.mktemp("three")
    target = Target(
        schema=SCHEMA_2025,
        schema_label="2025.schema.json",
        output=folder,
        package=PACKAGE,
        revision=None,
        templates=ext2_adapters(folder),
        regenerate="mcptasks-gen generate",
        also=(
            (SCHEMA_EXT, "ext.schema.json"),
            (ext2_schema(folder), "ext2.schema.json"),
        ),
    )
    files = pipeline.generate(target)
    for name, text in files.items():
        path = folder / PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    sys.path.insert(0, str(folder))
    try:
        client = __import__(f"{PACKAGE}.client", fromlist=["TasksClient"])
        yield files, client
    finally:
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def test_detection_picks_the_third_revision_for_its_schema(
    registered: revisions.Revision, tmp_path: Path
) -> None:
    found = scan(load(ext2_schema(tmp_path)))
    assert detect(found) is registered
    assert detect(scan(load(SCHEMA_EXT))) is revisions.EXTENSION
    assert detect(scan(load(SCHEMA_2025))) is revisions.CORE_2025_11_25
    assert check_revision("ext2", Location(file="--revision")) == registered.id


def test_without_the_record_its_schema_is_the_extension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record alone makes the difference: unregistered, the schema with
    ``tasks/pause`` still has the extension's markers."""
    monkeypatch.delitem(revisions.REGISTRY, EXT2.id, raising=False)
    assert revisions.resolve(EXT2.id) is None
    assert detect(scan(load(ext2_schema(tmp_path)))) is revisions.EXTENSION


def test_the_profile_check_runs_for_the_third_revision(
    registered: revisions.Revision, tmp_path: Path
) -> None:
    """Its schema passes its profile; the same schema without ``tasks/cancel``, which
    the profile needs, is refused in the third revision's name."""
    target = Target(
        schema=ext2_schema(tmp_path),
        schema_label="ext2.schema.json",
        output=tmp_path,
        package="p",
        revision=None,
        templates=None,
        regenerate="mcptasks-gen generate",
    )
    protocol = pipeline.protocol(pipeline.build(target), target)
    assert (protocol.revision, protocol.suffix) == (registered.id, "ext2")
    assert protocol.stateless and protocol.protocol_version == "2027-01-01"
    assert [m.role for m in protocol.methods if m.name == "tasks/pause"] == ["custom"]

    raw = json.loads(target.schema.read_text())
    cancel = raw["$defs"]["CancelTaskRequest"]["allOf"][1]["properties"]["method"]
    cancel["const"] = "tasks/stop"
    target.schema.write_text(json.dumps(raw))
    with pytest.raises(GenError) as refused:
        pipeline.protocol(pipeline.build(target), target)
    assert f'the {registered.id} runtime needs method "tasks/cancel"' in str(
        refused.value
    )


def test_a_package_of_three_revisions_generates(
    three: tuple[dict[str, str], ModuleType],
) -> None:
    files, client = three
    for suffix in ("2025", "ext", "ext2"):
        assert {f"protocol_{suffix}.py", f"api_{suffix}.py"} <= set(files)
    assert {*EXT2.profile.runtime, "client_dual.py"} <= set(files)
    assert "stateless=True," in files["protocol_ext2.py"]
    clients = client.TasksClient.revision_clients()
    assert list(clients) == ["2025-11-25", "ext-2026-07-28", "ext-2027-01-01"]
    assert {r: c.tables.revision for r, c in clients.items()} == {r: r for r in clients}
    tables = clients["ext-2027-01-01"].tables
    assert tables.stateless and tables.extension_id.endswith("tasks-v2")


def _discover(versions: list[str]) -> Any:
    async def server(method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert method == "server/discover"
        return {
            "supportedVersions": versions,
            "capabilities": {"extensions": {}},
            "resultType": "complete",
        }

    return server


def test_the_revision_choice_follows_the_protocol_version(
    three: tuple[dict[str, str], ModuleType],
) -> None:
    """``revision.choose_revision``, given a ``server/discover`` or ``initialize``
    answer, picks the revision of the version the server names."""
    _, client = three
    choose = sys.modules[f"{PACKAGE}.revision"].choose_revision
    tables = [c.tables for c in client.TasksClient.revision_clients().values()]
    for answer, stateless, expected in (
        ({"supportedVersions": ["2027-01-01"]}, True, "ext-2027-01-01"),
        ({"supportedVersions": ["2026-07-28"]}, True, "ext-2026-07-28"),
        ({"supportedVersions": ["2026-07-28", "2027-01-01"]}, True, "ext-2027-01-01"),
        ({"protocolVersion": "2025-11-25"}, False, "2025-11-25"),
    ):
        chosen = choose(tables, answer, stateless=stateless)
        assert chosen is not None and chosen.revision == expected
    assert choose(tables, {"supportedVersions": ["1999-01-01"]}, stateless=True) is None


def test_the_dual_client_picks_the_third_revision_for_its_protocol_version(
    three: tuple[dict[str, str], ModuleType],
) -> None:
    _, client = three
    task_ids = sys.modules[f"{PACKAGE}.task_ids"]
    dual = client.TasksClient(
        FakePeer(_discover(["2027-01-01"])), store=task_ids.MemoryTaskIdStore()
    )
    assert run(dual.detect()) == "ext-2027-01-01"
