"""The golden packages are type-clean under mypy --strict and pyright strict, and
black-clean."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcptasks_gen import fmt

ROOT = Path(__file__).resolve().parents[2]
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


@dataclass(frozen=True)
class MypyRun:
    """One ``mypy --strict`` run over the golden packages and the user code files."""

    output: str
    returncode: int
    user_code: dict[str, Path]
    """The user code file of each package."""

    def errors_in(self, path: str) -> list[str]:
        """The error lines about the files under ``path``."""
        return [
            line
            for line in self.output.splitlines()
            if line.startswith(path) and ": error:" in line
        ]


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory: pytest.TempPathFactory) -> MypyRun:
    """``mypy --strict`` once for the goldens and the three user code files (a run
    each would load pydantic's stubs and check the packages four times)."""
    users = tmp_path_factory.mktemp("user_code")
    user_code = {}
    for package in PACKAGES:
        user_code[package] = users / f"user_code_{package}.py"
        user_code[package].write_text((USER_CODE + TYPED_TOOLS).format(pkg=package))
    args = [_tool("mypy"), "--strict", "--no-incremental", "--python-version", "3.10"]
    for package in PACKAGES:
        args += ["-p", package]
    for path in user_code.values():
        args += ["-m", path.stem]
    proc = subprocess.run(
        args,
        cwd=GENERATED,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "MYPYPATH": os.pathsep.join([str(GENERATED), str(users)])},
    )
    return MypyRun(proc.stdout + proc.stderr, proc.returncode, user_code)


@pytest.mark.timeout(300)  # mypy --strict over three packages and user code, no cache
def test_mypy_strict(mypy_run: MypyRun) -> None:
    """0 errors from ``mypy --strict`` on every golden package."""
    assert mypy_run.returncode in (0, 1), mypy_run.output  # 2: mypy itself failed
    for package in PACKAGES:
        assert not mypy_run.errors_in(f"{package}/"), mypy_run.output


USER_CODE = """\
from typing import Any

from pydantic import BaseModel
from typing_extensions import assert_type

from {pkg}.client import InputContext, TaskFailed, TaskHandle, TasksClient, status_name
from {pkg}.client import SyncTasksClient
from {pkg}.client import ToolResult
from {pkg}.server import Limits, TasksServer, ToolContext, ToolError


def describe(error: TaskFailed, handle: TaskHandle[object] | None) -> str:
    return status_name(error.code) + str(handle is None)


async def tool(ctx: ToolContext, arguments: dict[str, object]) -> str:
    await ctx.report("working")
    raise ToolError("no")


def build() -> tuple[type[TasksClient], type[TasksServer], Limits, type[InputContext]]:
    return TasksClient, TasksServer, Limits(), InputContext


def misspelt() -> TasksClient:
    # a misspelt option is a type error: without one, --strict reports the ignore
    url = "http://127.0.0.1:1/mcp"
    return TasksClient(url, elicitation_handlr=None)  # type: ignore[call-arg]


def answer(context: InputContext) -> dict[str, object]:
    return {{"action": "decline", "message": context.params.get("message")}}


async def answer_later(context: InputContext) -> dict[str, object]:
    return {{"action": "cancel"}}


def use_sync(url: str) -> str:
    with TasksClient.sync(
        url, elicitation_handler=answer, default_poll_interval=0.5
    ) as client:
        result = client.call_tool("greet", {{"name": "x"}}, timeout=5.0)
        handle = client.start_tool("slow", {{"seconds": 1}})
        statuses = [status_name(s.status) for s in handle.snapshots(timeout=1.0)]
        handle.cancel()
        count = len(client.pending_tasks()) + len(client.list_tools())
        return f"{{result}} {{statuses}} {{count}} {{handle.task_id}}"


def sync_client(url: str) -> SyncTasksClient:
    return SyncTasksClient(url, input_handlers={{"elicitation/create": answer_later}})


def sync_misspelt() -> SyncTasksClient:
    # the sync client's options are typed as the async client's
    url = "http://127.0.0.1:1/mcp"
    return SyncTasksClient(url, elicitation_handlr=None)  # type: ignore[call-arg]


def misspelt_server() -> TasksServer:
    # the same for a server option (the dual server's options are a TypedDict)
    return TasksServer("x", limts=Limits())  # type: ignore[call-arg]


class Bill(BaseModel):
    total: float


async def typed_results(client: TasksClient) -> float:
    receipt = await client.call_tool("brew", {{"size": "M"}}, result_type=Bill)
    assert_type(receipt, ToolResult[Bill])
    plain = await client.call_tool("brew")
    assert_type(plain.structured, dict[str, Any] | None)
    assert_type(plain.raw, dict[str, Any])
    handle = await client.start_tool("brew", result_type=Bill)
    assert_type((await handle.result()).structured, Bill)
    resumed = await client.resume("task-1", result_type=Bill)
    return receipt.structured.total + resumed.structured.total


def sync_typed_results(client: SyncTasksClient) -> float:
    # the sync client's twins infer the same ToolResult types
    receipt = client.call_tool("brew", {{"size": "M"}}, result_type=Bill)
    assert_type(receipt, ToolResult[Bill])
    plain = client.call_tool("brew")
    assert_type(plain, ToolResult[dict[str, Any] | None])
    assert_type(plain.text, str)
    handle = client.start_tool("brew", result_type=Bill)
    assert_type(handle.result(), ToolResult[Bill])
    assert_type(client.task("task-1").result().structured, dict[str, Any] | None)
    resumed = client.resume("task-1", result_type=Bill)
    assert_type(resumed.structured, Bill)
    return receipt.structured.total + resumed.structured.total




"""

TYPED_TOOLS = """\
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from typing_extensions import assert_type

from {pkg}.protocol import TaskFields
from {pkg}.server import ElicitAnswer, TasksServer, ToolContext


class Receipt(BaseModel):
    size: str


class Sugars(BaseModel):
    sugars: int = Field(ge=0, le=5, description="Spoons of sugar.")


def typed_tools(server: TasksServer) -> None:
    # both tool styles register, and the decorator keeps each function's own type
    @server.tool()
    async def brew(
        ctx: ToolContext,
        size: Literal["S", "M"],
        sugars: Annotated[int, Field(ge=0)] = 0,
    ) -> Receipt:
        return Receipt(size=size)

    @server.tool(task_support="required")
    async def plain(ctx: ToolContext, arguments: dict[str, object]) -> str:
        return "x"

    @server.tool()
    async def ask(ctx: ToolContext, cups: int = 1) -> Receipt:
        # a typed elicitation: the answer's content is the model (or None)
        answer = await ctx.elicit("How many sugars?", Sugars)
        assert_type(answer, ElicitAnswer[Sugars])
        assert_type(answer.action, Literal["accept", "decline", "cancel"])
        assert_type(answer.content, Sugars | None)
        form = await ctx.elicit("Anything else?", {{"type": "object"}})
        assert_type(form, dict[str, Any])
        assert_type(ctx.revision, str)
        await ctx.set_fields(TaskFields())
        return Receipt(size="S" if answer.content is None else "M")

    kept: Callable[[ToolContext, Literal["S", "M"], int], Awaitable[Receipt]] = brew
    also: Callable[[ToolContext, dict[str, object]], Awaitable[str]] = plain
    asked: Callable[[ToolContext, int], Awaitable[Receipt]] = ask
    print(kept, also, asked)
"""
"""User code with a typed and a dict tool (checked by mypy and pyright)."""


@pytest.mark.timeout(300)  # the first one waits for the shared mypy run
@pytest.mark.parametrize("package", PACKAGES)
def test_user_code_imports_the_public_names_type_clean(
    package: str, mypy_run: MypyRun
) -> None:
    """What a user imports from ``client`` and ``server`` (errors, handles, contexts,
    limits: names the runtime modules define) is visible to ``mypy --strict``."""
    assert mypy_run.returncode in (0, 1), mypy_run.output
    assert not mypy_run.errors_in(str(mypy_run.user_code[package])), mypy_run.output


@pytest.mark.timeout(300)  # pyright strict over three packages: 30-70 s, more if loaded
def test_pyright_strict(tmp_path: Path) -> None:
    """0 errors from pyright in strict mode on every golden package, on the user code
    of each (``USER_CODE``) and on a typed and a dict tool (``TYPED_TOOLS``)."""
    user_code = []
    for package in PACKAGES:
        path = tmp_path / f"user_code_{package}.py"
        path.write_text(USER_CODE.format(pkg=package))
        user_code.append(str(path))
        tools = tmp_path / f"typed_tools_{package}.py"
        tools.write_text(TYPED_TOOLS.format(pkg=package))
        user_code.append(str(tools))
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
            *user_code,
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
        pytest.param(
            "official:mcp-2025-11-25.schema.json", marks=pytest.mark.official_schemas
        ),
        pytest.param(
            "official:ext-tasks-draft.schema.json", marks=pytest.mark.official_schemas
        ),
    ],
)
def test_one_black_pass_gives_black_stable_files(schema: str) -> None:
    """The templates leave layout to black, and ``fmt`` runs black's first pass only
    (``black.format_str`` runs a second one over every file the first changed): every
    rendered file (models, protocol tables, client, server, ``__init__``) comes out of
    that one pass in black's final form, for the project's and the official schemas.
    """
    import black

    from mcptasks_gen import pipeline, render
    from mcptasks_gen.config import Target
    from mcptasks_gen.revisions import REGISTRY
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
    # the copied runtime is black-clean as written (the test above): only what the
    # templates render can come out of the one pass in another form
    copied = {
        file.path
        for file in render.output_files(None, (REGISTRY[package.revision],))
        if file.verbatim
    }
    assert copied and not copied >= set(rendered)
    unstable = []
    for name, text in sorted(rendered.items()):
        if name.endswith(".py") and name not in copied:
            once = fmt._format(fmt._split_header(text)[1])
            if black.format_str(once, mode=fmt._mode()) != once:
                unstable.append(name)
    assert not unstable, (
        f"black's second pass changes {unstable} after the formatter's one pass;"
        " fmt._format must run black.format_str"
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
