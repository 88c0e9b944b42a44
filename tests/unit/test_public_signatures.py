"""Every public constructor and method of the generated packages has an explicit, typed
signature: no ``*args: Any`` or ``**kwargs: Any`` (nor an unannotated or ``object``
one) in their public API, so that a misspelt option is a type error rather than a
``TypeError`` at run time. Options that many classes share are a ``TypedDict``
unpacked into ``**options`` (``ClientOptions``, ``ServerOptions``), kept equal here to
the keyword options of the class they are passed to."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

GENERATED = Path(__file__).resolve().parents[2] / "generated"
PACKAGES = sorted(p.name for p in GENERATED.iterdir() if (p / "__init__.py").is_file())

ALLOWED = {
    "McpModel.__init__",
    "McpModel.model_validate",
    "McpModel.model_validate_json",
    "McpModel.model_validate_strings",
    "McpModel.model_construct",
    "McpRootModel.model_validate",
    "McpRootModel.model_validate_json",
    "McpRootModel.model_validate_strings",
}
"""The justified exceptions (in the ``models*.py`` modules): the generated models' base
classes override pydantic's
``BaseModel`` API and keep its signatures (pydantic's own ``**data: Any`` and the
keyword options that vary with its version); the fields themselves are typed through
pydantic's ``dataclass_transform``."""


def _public(name: str) -> bool:
    return not name.startswith("_") or name in ("__init__", "__call__", "__new__")


def _untyped_variadics(path: Path) -> Iterator[str]:
    """``Class.method *name: Any`` for each public function of ``path`` whose ``*`` or
    ``**`` parameter is unannotated, ``Any`` or ``object``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

    def visit(node: ast.AST, prefix: str) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef) and _public(child.name):
                yield from visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not _public(child.name):
                    continue
                for stars, arg in (("*", child.args.vararg), ("**", child.args.kwarg)):
                    if arg is None:
                        continue
                    annotation = ast.unparse(arg.annotation) if arg.annotation else ""
                    if annotation in ("", "Any", "object", "typing.Any"):
                        yield f"{prefix}{child.name} {stars}{arg.arg}: {annotation}"

    yield from visit(tree, "")


def _modules(package: str) -> list[Path]:
    root = GENERATED / package
    return sorted(
        path
        for path in root.rglob("*.py")
        if not any(part.startswith("_") for part in path.relative_to(root).parts[:-1])
        and (not path.name.startswith("_") or path.name == "__init__.py")
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_no_public_untyped_args_or_kwargs(package: str) -> None:
    found = []
    for path in _modules(package):
        where = path.relative_to(GENERATED / package).as_posix()
        for item in _untyped_variadics(path):
            name = item.split(" ", 1)[0]
            if not (path.name.startswith("models") and name in ALLOWED):
                found.append(f"{where}: {item}")
    assert not found, "untyped *args/**kwargs in public API:\n" + "\n".join(found)


def test_the_exceptions_are_still_there() -> None:
    """Each listed exception exists (a stale entry would hide a new spot)."""
    seen = set()
    for package in PACKAGES:
        for path in _modules(package):
            if path.name.startswith("models"):
                seen.update(i.split(" ", 1)[0] for i in _untyped_variadics(path))
    assert seen >= ALLOWED, sorted(ALLOWED - seen)


def _keyword_options(function: object, *, leave_out: set[str]) -> set[str]:
    parameters = inspect.signature(function).parameters.values()  # type: ignore[arg-type]
    return {
        p.name
        for p in parameters
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in leave_out
    }


@pytest.mark.parametrize("package", PACKAGES)
def test_the_options_typeddicts_name_every_keyword_option(package: str) -> None:
    core = importlib.import_module(f"{package}.client.core")
    server_core = importlib.import_module(f"{package}.server.core")
    client_options = set(core.ClientOptions.__annotations__) | set(
        core.ClientSettings.__annotations__
    )
    assert client_options == _keyword_options(
        core.ClientCore.__init__, leave_out={"input_handlers", "on_notification"}
    )
    if not (GENERATED / package / "server" / "dual.py").is_file():
        return  # a package of one revision has no dual server
    dual = importlib.import_module(f"{package}.server.dual")
    assert set(dual.ServerOptions.__annotations__) == _keyword_options(
        server_core.TaskServerCore.__init__, leave_out={"store", "recover_orphans"}
    )
