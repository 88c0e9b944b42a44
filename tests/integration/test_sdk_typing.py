"""The SDK seams (``sdk``) and the HTTP transport type-check where the SDK and httpx
are not installed, and a user's app on them stays typed.

Three environments, each an interpreter that mypy (``--python-executable``) and
pyright (``--pythonpath``) take their installed packages from:

- pydantic alone (no ``mcp``, no ``httpx``): a virtualenv made once per module with
  ``python -m venv --without-pip`` whose site-packages holds links to pydantic and
  its dependencies from this interpreter; the user file uses stand-ins shaped like
  ``MCPServer``, ``FastMCP`` and ``Client``;
- ``mcp==1.30.0`` with ``httpx`` (peer ``venv-mcp1``): a real ``FastMCP`` app, and an
  ``httpx.AsyncClient`` given to ``HttpTransport``;
- ``mcp==2.3.0`` with ``httpx2`` and without ``httpx`` (peer ``venv-fastmcp``): a real
  ``MCPServer`` app and ``mcp.client.Client``.

In each, ``@tasks.task_tool()`` above ``@app.tool()`` keeps the function's type (an
untyped decorator would make it ``Any``; the user files call the tools with a wrong
argument under ``# type: ignore``, which ``--strict`` reports as unused if the tool
became ``Any``), the seam keeps the app's own type, and the extension objects are
accepted where the SDK wants its ``Extension``/``ClientExtension``.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import peers

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "generated"
PACKAGES = ("mcp_tasks", "mcp_tasks_2025_11_25", "mcp_tasks_ext")
BIN = Path(sys.executable).parent

NEED_OTHER_PACKAGES = (
    "stores/redis.py",
    "stores/redis_link.py",
    "stores/redis_jobs.py",
    "server/serve.py",
)
"""Modules that need another optional package to type-check (``redis``,
``uvicorn``): not part of this check, which is about the SDK seams and httpx."""

PYDANTIC_ONLY = (
    "pydantic",
    "pydantic_core",
    "typing_extensions",
    "annotated_types",
    "typing_inspection",
)
"""The modules of the pydantic-only environment: pydantic and what it imports."""


@pytest.fixture(scope="module")
def pydantic_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An interpreter that has pydantic and nothing else installed (made in ~0.1 s:
    a virtualenv without pip, with links to this interpreter's pydantic)."""
    venv = tmp_path_factory.mktemp("pydantic-only") / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        check=True,
        timeout=60,
    )
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import site; print(site.getsitepackages()[0])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    for name in PYDANTIC_ONLY:
        module = importlib.import_module(name)
        origin = Path(module.__file__ or "")
        source = origin.parent if origin.name == "__init__.py" else origin
        (Path(site) / source.name).symlink_to(source)
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util as u, pydantic;"
            " print([m for m in ('mcp', 'httpx', 'httpx2') if u.find_spec(m)])",
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout.strip() == "[]", probe.stdout
    return python


def _mypy(python: Path, user_file: Path, *packages: str) -> list[str]:
    """``mypy --strict`` (no cache) over ``packages`` and ``user_file`` with the
    installed packages of ``python``; the error lines."""
    args = [str(BIN / "mypy"), "--strict", "--no-incremental", "--python-version"]
    args += ["3.10", "--python-executable", str(python)]
    for package in packages:
        args += ["-p", package]
    path = os.pathsep.join([str(GENERATED), str(user_file.parent)])
    proc = subprocess.run(
        [*args, "-m", user_file.stem],
        cwd=GENERATED,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MYPYPATH": path},
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), output  # 2: mypy itself failed
    return [line for line in output.splitlines() if ": error:" in line]


def _pyright(python: Path, tmp_path: Path, *paths: Path) -> list[str]:
    """pyright in strict mode over ``paths`` with the installed packages of
    ``python``; the errors (the user files make unnecessary ``# type: ignore``
    comments errors too)."""
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
            str(BIN / "pyright"),
            "--project",
            str(config),
            "--pythonpath",
            str(python),
            "--outputjson",
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(proc.stdout)
    return [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]


def _user_file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return path


def _seam_files(package: str) -> list[Path]:
    """The modules this change types: the SDK seams and what imports httpx."""
    root = GENERATED / package
    return [root / "sdk", root / "client" / "http.py", root / "check" / "session.py"]


# --- pydantic only ----------------------------------------------------------------

STAND_INS = '''\
"""A user's apps on the seams, with stand-ins shaped like mcp's classes."""

# pyright: reportUnnecessaryTypeIgnoreComment=true

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from typing_extensions import assert_type

from mcp_tasks_2025_11_25.sdk import FastMCPSeam, fastmcp_tasks, mount
from mcp_tasks_2025_11_25.server import TasksServer as TasksServer2025
from mcp_tasks_ext.client import TasksClient
from mcp_tasks_ext.sdk import (
    SdkToolResult,
    TasksClientExtension,
    TasksServerExtension,
    client_extension,
    server_extension,
    task_context,
)
from mcp_tasks_ext.server import TasksServer
from mcp_tasks_ext.transport import HttpTransport

F = TypeVar("F", bound=Callable[..., Any])


class Extension:
    """Like mcp.server.extension.Extension."""


class MCPServer:
    """Like mcp.server.mcpserver.MCPServer: typed tool decorator, nominal extensions."""

    def __init__(self, name: str, extensions: list[Extension]) -> None:
        self.name = name

    def tool(self) -> Callable[[F], F]:
        return lambda function: function


class LowlevelServer:
    """Like mcp.server.lowlevel.Server of mcp 1.x."""

    def __init__(self) -> None:
        self.request_handlers: dict[type, Callable[..., Any]] = {}

    @property
    def request_context(self) -> object:
        return None

    def get_capabilities(
        self, notification_options: object, experimental_capabilities: dict[str, Any]
    ) -> object:
        return None


class FastMCP:
    """Like mcp.server.fastmcp.FastMCP."""

    def __init__(self, name: str) -> None:
        self._mcp_server = LowlevelServer()

    def tool(self) -> Callable[[F], F]:
        return lambda function: function

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> list[Any]:
        return []


class ClientExtension:
    """Like mcp.client.extension.ClientExtension."""


class ClientSession:
    async def send_request(self, request: object, result_type: object) -> Any:
        return None

    async def dispatch_input_request(self, ctx: object, request: object) -> Any:
        return None


class Client:
    """Like mcp.client.Client."""

    def __init__(self, url: str, extensions: list[ClientExtension]) -> None:
        self.session = ClientSession()


tasks = server_extension(TasksServer("demo"))
mcp = MCPServer("demo", extensions=[tasks])
assert_type(tasks, TasksServerExtension)


@tasks.task_tool(task_support="optional")
@mcp.tool()
async def publish(title: str) -> str:
    if (ctx := task_context()) is not None:
        await ctx.report("building")
    return f"published {title}"


app = FastMCP("demo")
seam = fastmcp_tasks(app, TasksServer2025("demo"))
assert_type(seam, FastMCPSeam[FastMCP])
assert_type(seam.app, FastMCP)
any_seam: FastMCPSeam = seam


mount(TasksServer2025("lowlevel"), LowlevelServer())


@seam.task_tool(task_support="required")
@seam.app.tool()
async def compute(seconds: float) -> float:
    return seconds


extension = client_extension()
assert_type(extension, TasksClientExtension)
client = Client("http://127.0.0.1:1/mcp", extensions=[extension])


async def main() -> None:
    title: str = await publish("notes")
    await publish(1)  # type: ignore[arg-type]
    twice: float = await compute(2.0) * 2
    await compute("2")  # type: ignore[arg-type]
    for task_id in await extension.pending():
        result = await extension.resume(client, task_id, timeout=5.0)
        assert_type(result, SdkToolResult)
        flag: bool = result.is_error
        print(title, twice, flag, result.model_dump(mode="json", by_alias=True))
    print(extension.handles, await extension.resume(client.session, "t"))
    async with TasksClient(HttpTransport("http://127.0.0.1:1/mcp")) as tasks_client:
        print(tasks_client)
'''


@pytest.mark.timeout(120)  # mypy --strict over three packages, no cache: ~10 s
def test_mypy_strict_with_pydantic_alone(pydantic_python: Path, tmp_path: Path) -> None:
    """``mypy --strict`` passes on the packages (but for the modules that need
    ``redis`` or ``uvicorn``) and on an app using every seam, with neither ``mcp`` nor
    ``httpx`` installed."""
    user = _user_file(tmp_path, "stand_ins", STAND_INS)
    errors = _mypy(pydantic_python, user, *PACKAGES)
    unexpected = [e for e in errors if not any(m in e for m in NEED_OTHER_PACKAGES)]
    assert not unexpected, "\n".join(errors)


@pytest.mark.timeout(120)  # pyright strict over the seams of a package: ~10 s
def test_pyright_strict_with_pydantic_alone(
    pydantic_python: Path, tmp_path: Path
) -> None:
    """pyright strict passes on the seams, the HTTP transport and the app, with
    neither ``mcp`` nor ``httpx`` installed."""
    user = _user_file(tmp_path, "stand_ins", STAND_INS)
    errors = _pyright(pydantic_python, tmp_path, user, *_seam_files("mcp_tasks"))
    assert not errors, "\n".join(errors)


# --- mcp 1.x ----------------------------------------------------------------------

MCP1_APP = '''\
"""A user's FastMCP app (mcp 1.x) with the FastMCP seam, and httpx's client."""

# pyright: reportUnnecessaryTypeIgnoreComment=true

from __future__ import annotations

import httpx
from mcp.server.fastmcp import FastMCP
from mcp.server.lowlevel import Server
from typing_extensions import assert_type

from mcp_tasks_2025_11_25.client import TasksClient
from mcp_tasks_2025_11_25.sdk import FastMCPSeam, fastmcp_tasks, mount, task_context
from mcp_tasks_2025_11_25.server import TasksServer
from mcp_tasks_2025_11_25.transport import HttpTransport

app = FastMCP("demo")
tasks = fastmcp_tasks(app, TasksServer("demo"))
assert_type(tasks, FastMCPSeam[FastMCP])
assert_type(tasks.app, FastMCP)
mount(TasksServer("lowlevel"), Server("lowlevel"))


@tasks.task_tool(task_support="required")
@app.tool()
async def slow_compute(seconds: float) -> str:
    ctx = task_context()
    assert ctx is not None
    await ctx.report(f"computing for {seconds}s")
    return "done"


def describe(count: int) -> str:
    return str(count)


async def main() -> None:
    # mcp 1.x's own @app.tool() gives Callable[..., Any]: the seam keeps just that
    done: str = await slow_compute(1.0)
    text: str = tasks.task_tool()(describe)(3)
    tasks.task_tool()(describe)("3")  # type: ignore[arg-type]
    http = httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=None))
    transport = HttpTransport("http://127.0.0.1:1/mcp", http_client=http)
    async with TasksClient(transport) as client:
        print(done, text, client)
'''


@pytest.mark.timeout(180)  # mypy and pyright over one package and mcp 1.30: ~20 s
def test_typed_with_mcp1_and_httpx(tmp_path: Path) -> None:
    """With ``mcp`` 1.x and ``httpx`` installed: a ``FastMCP`` app's tools stay typed
    under the seam, and ``httpx.AsyncClient`` is an ``AsyncHttpClient``."""
    peers.require("mcp1")
    python = peers.mcp1_python()
    user = _user_file(tmp_path, "mcp1_app", MCP1_APP)
    errors = _mypy(python, user, "mcp_tasks_2025_11_25.sdk")
    assert not errors, "\n".join(errors)
    errors = _pyright(python, tmp_path, user, *_seam_files("mcp_tasks_2025_11_25"))
    assert not errors, "\n".join(errors)


# --- mcp 2.x ----------------------------------------------------------------------

MCP2_APP = '''\
"""A user's MCPServer app and Client (mcp 2.x, httpx2 and no httpx) with the Tasks
extension seams."""

# pyright: reportUnnecessaryTypeIgnoreComment=true

from __future__ import annotations

from mcp.client import Client
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from typing_extensions import assert_type

from mcp_tasks_ext.sdk import (
    SdkToolResult,
    TasksClientExtension,
    TasksServerExtension,
    client_extension,
    mount,
    server_extension,
    task_context,
)
from mcp_tasks_ext.server import TasksServer

tasks = server_extension(TasksServer("demo"))
assert_type(tasks, TasksServerExtension)
mcp = MCPServer("demo", extensions=[tasks])
mount(TasksServer("lowlevel"), Server("lowlevel"))


@tasks.task_tool()
@mcp.tool()
async def publish(title: str) -> str:
    if (ctx := task_context()) is not None:
        await ctx.report("building")
    return f"published {title}"


extension = client_extension()
assert_type(extension, TasksClientExtension)


async def main() -> None:
    done: str = await publish("notes")
    await publish(1)  # type: ignore[arg-type]
    async with Client("http://127.0.0.1:1/mcp", extensions=[extension]) as client:
        result = await extension.resume(client, "task-1")
        assert_type(result, SdkToolResult)
        again = await extension.resume(client.session, "task-2")
        called: SdkToolResult = await client.call_tool("publish", {"title": "x"})
        if isinstance(result, CallToolResult):
            print(result.structured_content)
        print(done, again.is_error, called.content)
'''


@pytest.mark.timeout(180)  # mypy and pyright over one package and mcp 2.3: ~25 s
def test_typed_with_mcp2_without_httpx(tmp_path: Path) -> None:
    """With ``mcp`` 2.x installed (its ``httpx2``, no ``httpx``): an ``MCPServer``
    app's tools stay typed under ``@tasks.task_tool()``, the extensions are accepted
    by ``MCPServer`` and ``Client``, and ``Client`` is an ``SdkClient``."""
    peers.require("fastmcp")
    python = peers.fastmcp_python()
    user = _user_file(tmp_path, "mcp2_app", MCP2_APP)
    errors = _mypy(python, user, "mcp_tasks_ext.sdk", "mcp_tasks_ext.client")
    assert not errors, "\n".join(errors)
    errors = _pyright(python, tmp_path, user, *_seam_files("mcp_tasks_ext"))
    assert not errors, "\n".join(errors)
