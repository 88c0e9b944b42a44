"""The golden packages are type-clean under mypy --strict and pyright strict, and
black-clean."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcptasks_gen import fmt

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
PACKAGES = sorted(p.name for p in GENERATED.iterdir() if (p / "__init__.py").is_file())
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        found = shutil.which(name)
        if found is None:
            pytest.fail(f"{name} is not installed (pip install -e '.[dev]')")
        return found
    return str(path)


def test_mypy_strict() -> None:
    """0 errors from ``mypy --strict`` on every golden package."""
    args = [_tool("mypy"), "--strict", "--no-incremental", "--python-version", "3.10"]
    for package in PACKAGES:
        args += ["-p", package]
    proc = subprocess.run(
        args, cwd=GENERATED, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


USER_CODE = """\
from {pkg}.client import InputContext, TaskFailed, TaskHandle, TasksClient, status_name
from {pkg}.server import Limits, TasksServer, ToolContext, ToolError


def describe(error: TaskFailed, handle: TaskHandle[object] | None) -> str:
    return status_name(error.code) + str(handle is None)


async def tool(ctx: ToolContext, arguments: dict[str, object]) -> str:
    await ctx.report("working")
    raise ToolError("no")


def build() -> tuple[type[TasksClient], type[TasksServer], Limits, type[InputContext]]:
    return TasksClient, TasksServer, Limits(), InputContext
"""


@pytest.mark.parametrize("package", PACKAGES)
def test_user_code_imports_the_public_names_type_clean(
    package: str, tmp_path: Path
) -> None:
    """What a user imports from ``client`` and ``server`` (errors, handles, contexts,
    limits: names the runtime modules define) is visible to ``mypy --strict``."""
    user = tmp_path / "user_code.py"
    user.write_text(USER_CODE.format(pkg=package))
    proc = subprocess.run(
        [_tool("mypy"), "--strict", "--no-incremental", str(user)],
        cwd=GENERATED,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "MYPYPATH": str(GENERATED)},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pyright_strict(tmp_path: Path) -> None:
    """0 errors from pyright in strict mode on every golden package."""
    config = tmp_path / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "typeCheckingMode": "strict",
                "pythonVersion": "3.10",
                "extraPaths": [str(GENERATED)],
            }
        )
    )
    proc = subprocess.run(
        [
            _tool("pyright"),
            "--project",
            str(config),
            "--pythonpath",
            sys.executable,
            "--outputjson",
            *(str(GENERATED / p) for p in PACKAGES),
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
    assert report["summary"]["filesAnalyzed"] >= 2 * len(PACKAGES)


def test_black_clean() -> None:
    """``black --check`` with default settings accepts every golden file."""
    proc = subprocess.run(
        [_tool("black"), "--check", "--quiet", *PACKAGES],
        cwd=GENERATED,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr


def test_black_pin_matches_cache_key() -> None:
    """The formatter cache is keyed by the pinned black version; keep the two in
    step."""
    import black

    assert black.__version__ == fmt.BLACK_VERSION


@pytest.mark.parametrize("package", PACKAGES)
def test_no_numbered_class_names(package: str) -> None:
    """No class is named with a collision number (``GetTaskResult1``)."""
    import importlib
    import inspect
    import re

    modules = sorted(p.stem for p in (GENERATED / package).glob("models_*.py"))
    assert modules
    for module in modules:
        models = importlib.import_module(f"{package}.{module}")
        names = [
            n
            for n, v in vars(models).items()
            if inspect.isclass(v) and v.__module__ == models.__name__
        ]
        assert not [n for n in names if re.search(r"\d+$", n)]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_definition_is_a_public_class(package: str) -> None:
    """Each ``$defs`` name of the package's schema is a class of that name, exported."""
    import importlib

    revisions = {"2025": "2025-11-25", "ext": "ext-2026-07-28"}
    pkg = importlib.import_module(package)
    for suffix, schema in revisions.items():
        if not (GENERATED / package / f"models_{suffix}.py").is_file():
            continue
        models = importlib.import_module(f"{package}.models_{suffix}")
        public = pkg if len(pkg.SPEC_REVISIONS) == 1 else models
        defs = json.loads((ROOT / "schema" / schema / "schema.json").read_text())[
            "$defs"
        ]
        for name in defs:
            assert isinstance(getattr(models, name), type), name
            assert isinstance(getattr(public, name), type), name
            if public is pkg:
                assert name in pkg.__all__


def test_status_unions_are_discriminated() -> None:
    """The four status unions of the extension carry a discriminator on ``status``."""
    from mcp_tasks_ext import models

    for name in ("DetailedTask", "GetTaskResult", "TaskStatusNotificationParams"):
        schema = getattr(models, name).model_json_schema()
        assert schema.get("discriminator", {}).get("propertyName") == "status", name
    params = models.TaskStatusNotification.model_json_schema()["properties"]["params"]
    assert params.get("discriminator", {}).get("propertyName") == "status"


def test_generator_itself_is_mypy_strict(tmp_path: Path) -> None:
    """The generator's own code passes ``mypy --strict`` too."""
    (tmp_path / "mcptasks_gen").symlink_to(ROOT / "generator", target_is_directory=True)
    proc = subprocess.run(
        [_tool("mypy"), "--strict", "--no-incremental", "-p", "mcptasks_gen"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_runtime_files_are_black_clean_in_the_repository() -> None:
    """The runtime is copied into packages without black, so it must already be
    black's."""
    runtime = ROOT / "templates" / "runtime"
    proc = subprocess.run(
        [_tool("black"), "--check", "--quiet", str(runtime)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (
        proc.returncode == 0
    ), "templates/runtime is not black-clean: run black templates/runtime"


@pytest.mark.parametrize(
    "schema",
    [
        "2025-11-25",
        "ext-2026-07-28",
        "official:mcp-2025-11-25.schema.json",
        "official:ext-tasks-draft.schema.json",
    ],
)
def test_runtime_templates_render_black_stable(schema: str) -> None:
    """Every rendered file (models, protocol tables, client, server, ``__init__``) comes
    out of its template already in black's form, for the project's and the official
    schemas.

    Black then makes one pass over each instead of two (half the formatting time), and
    the templates read like the code they produce.
    """
    from mcptasks_gen import pipeline, render
    from mcptasks_gen.config import Target
    from tests.conftest import shared_dir

    path = (
        shared_dir() / "schemas" / schema.partition(":")[2]
        if schema.startswith("official:")
        else ROOT / "schema" / schema / "schema.json"
    )
    target = Target(
        schema=path,
        schema_label="s",
        output=ROOT,
        package="p",
        revision=None,
        templates=None,
        regenerate="x",
    )
    package = pipeline.build(target)
    rendered = render.render(
        package, pipeline.protocol(package, target), render.environment(None)
    )
    unstable = []
    for name, text in sorted(rendered.items()):
        if name.endswith(".py"):
            body = fmt._split_header(text)[1]
            if fmt._format(body) != body:
                unstable.append(name)
    assert not unstable, (
        f"templates of {unstable} render code black would change; keep them"
        " black-formatted"
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_depends_on_pydantic_only(package: str) -> None:
    """Module-level imports are the standard library, pydantic and the package itself;
    optional dependencies (httpx, uvicorn, redis, the MCP SDKs) are imported lazily."""
    import ast

    allowed = set(sys.stdlib_module_names) | {"pydantic", "__future__"}
    found: dict[str, str] = {}
    for path in sorted((GENERATED / package).glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                if name.split(".")[0] not in allowed:
                    found[f"{path.name}:{node.lineno}"] = name
    assert not found, found
