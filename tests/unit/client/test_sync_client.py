"""The synchronous client (``client.sync``, ``client.dual_sync``): every public async
method of the async clients and handles has a sync twin with the same parameters, and
the loop thread a sync client runs its calls in.

The twins are compared by ``inspect.signature`` (without ``self``): parameter names,
kinds, defaults and annotations, and the return annotation with the async types named
by their sync twins (``TaskHandle`` -> ``SyncTaskHandle``, ``AsyncIterator`` ->
``Iterator``). A new async method without a twin, or a twin whose signature drifted
(a parameter added to ``call_tool``, a new return type), fails here.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import re
import threading
from collections.abc import Callable
from typing import Any

import pytest

from mcp_tasks import api_2025, api_ext
from mcp_tasks.client import InputContext, core, dual, dual_sync, sync
from mcp_tasks.client.sync import LoopThread, SyncClientOptions

PACKAGES = ("mcp_tasks", "mcp_tasks_2025_11_25", "mcp_tasks_ext")

PAIRS: list[tuple[str, str, str]] = [
    *((f"{package}.client", "TasksClient", "SyncTasksClient") for package in PACKAGES),
    ("mcp_tasks.api_2025", "TasksClient", "SyncTasksClient"),
    ("mcp_tasks.api_ext", "TasksClient", "SyncTasksClient"),
    ("mcp_tasks.client", "TaskHandle", "SyncTaskHandle"),
    ("mcp_tasks.client", "DualHandle", "SyncDualHandle"),
    *((f"{package}.client", "TaskHandle", "SyncTaskHandle") for package in PACKAGES),
]
"""(module, async class, its sync twin) of every package."""

RENAMED = {"aclose": "close"}
"""Async method -> the name of its twin, where they differ."""

SYNC_NAMES = {
    "TaskHandle": "SyncTaskHandle",
    "DualHandle": "SyncDualHandle",
    "AsyncIterator": "Iterator",
}
"""Async types in a return annotation -> what the twin returns instead."""

ASYNC_RETURN = re.compile(r"\b(" + "|".join(SYNC_NAMES) + r")\b")


def _async_members(cls: type) -> dict[str, Callable[..., Any]]:
    """The public methods of ``cls`` that need a twin: coroutine and async generator
    functions, and plain ones that return a handle or an async iterator."""
    found: dict[str, Callable[..., Any]] = {}
    for name in dir(cls):
        if name.startswith("_"):
            continue
        static = inspect.getattr_static(cls, name)
        if isinstance(static, (property, classmethod, staticmethod)):
            continue
        member = getattr(cls, name)
        if not inspect.isfunction(member):
            continue
        returns = str(inspect.signature(member).return_annotation)
        if (
            inspect.iscoroutinefunction(member)
            or inspect.isasyncgenfunction(member)
            or ASYNC_RETURN.search(returns)
        ):
            found[name] = member
    return found


def _parameters(function: Callable[..., Any]) -> list[tuple[str, str, object, str]]:
    """(name, kind, default, annotation) of each parameter but ``self``."""
    params = list(inspect.signature(function).parameters.values())[1:]
    return [(p.name, p.kind.name, p.default, str(p.annotation)) for p in params]


def _sync_return(function: Callable[..., Any]) -> str:
    """The return annotation a twin of ``function`` has."""
    returns = str(inspect.signature(function).return_annotation)
    return ASYNC_RETURN.sub(lambda m: SYNC_NAMES[m.group(1)], returns)


@pytest.mark.parametrize(("module", "async_name", "sync_name"), PAIRS)
def test_every_async_method_has_a_sync_twin_with_its_signature(
    module: str, async_name: str, sync_name: str
) -> None:
    loaded = importlib.import_module(module)
    async_class, sync_class = getattr(loaded, async_name), getattr(loaded, sync_name)
    methods = _async_members(async_class)
    assert {"result", "cancel"} <= set(methods) or {
        "call_tool",
        "start_tool",
        "get_task",
        "cancel_task",
        "list_tools",
        "resume",
        "pending_tasks",
        "open",
        "aclose",
        "task",
    } <= set(methods), sorted(methods)
    problems: list[str] = []
    for name, method in sorted(methods.items()):
        twin_name = RENAMED.get(name, name)
        twin = inspect.getattr_static(sync_class, twin_name, None)
        if not inspect.isfunction(twin):
            problems.append(f"{sync_name} has no method {twin_name} (for {name})")
            continue
        if inspect.iscoroutinefunction(twin) or inspect.isasyncgenfunction(twin):
            problems.append(f"{sync_name}.{twin_name} is async")
        twin = getattr(sync_class, twin_name)
        if _parameters(twin) != _parameters(method):
            problems.append(
                f"{sync_name}.{twin_name}{inspect.signature(twin)} differs from"
                f" {async_name}.{name}{inspect.signature(method)}"
            )
        returns = str(inspect.signature(twin).return_annotation)
        if returns != _sync_return(method):
            problems.append(
                f"{sync_name}.{twin_name} returns {returns}, expected"
                f" {_sync_return(method)}"
            )
        if not (twin.__doc__ or "").strip():
            problems.append(f"{sync_name}.{twin_name} has no docstring")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "module", [*(f"{p}.client" for p in PACKAGES), "mcp_tasks.api_2025"]
)
def test_sync_takes_the_options_of_the_sync_client(module: str) -> None:
    """``TasksClient.sync(...)`` has the parameters of ``SyncTasksClient(...)`` and
    returns it."""
    loaded = importlib.import_module(module)
    factory = loaded.TasksClient.sync
    assert _parameters(loaded.SyncTasksClient.__init__) == [
        (p.name, p.kind.name, p.default, str(p.annotation))
        for p in inspect.signature(factory).parameters.values()
    ]
    assert str(inspect.signature(factory).return_annotation) == "SyncTasksClient"
    assert loaded.SyncTasksClient.client_class is loaded.TasksClient


def _option_types(typed_dict: type) -> dict[str, str]:
    return {
        name: getattr(value, "__forward_arg__", str(value))
        for name, value in typed_dict.__annotations__.items()
    }


def test_the_sync_options_are_those_of_the_async_clients() -> None:
    """``SyncClientOptions`` has the keys of ``ClientOptions`` with the same types,
    but input handlers that may be plain functions; the sync constructors name the
    other options of the async ones."""
    async_options = _option_types(core.ClientOptions)
    sync_options = _option_types(SyncClientOptions)
    assert sync_options == {
        name: kind.replace("InputHandler", "SyncInputHandler")
        for name, kind in async_options.items()
    }
    explicit = {"input_handlers", "on_notification"}
    core_names = list(inspect.signature(core.ClientCore.__init__).parameters)[2:]
    assert set(core_names) == explicit | set(sync_options)
    sync_core = [p[0] for p in _parameters(sync.SyncClientCore.__init__)]
    assert sync_core == ["transport", *sorted(explicit), "options"]
    dual_names = [p[0] for p in _parameters(dual.DualClient.__init__)]
    assert [p[0] for p in _parameters(dual_sync.SyncDualClient.__init__)] == dual_names


def test_typed_request_methods_have_twins_in_the_api_modules() -> None:
    """The typed methods of the schema's requests (``tasks_get``, ...) are among the
    twins compared above."""
    assert "tasks_get" in _async_members(api_2025.TasksClient)
    assert "tasks_update" in _async_members(api_ext.TasksClient)
    assert inspect.isfunction(api_ext.SyncTasksClient.tasks_update)


# -- the loop thread ---------------------------------------------------------------


class Boom(Exception):
    pass


def test_run_returns_the_result_and_raises_the_same_exception() -> None:
    runner = LoopThread()
    try:

        async def answer() -> str:
            assert runner.in_loop_thread()
            return "ok"

        error = Boom("no")

        async def fail() -> None:
            raise error

        assert runner.run(answer()) == "ok"
        with pytest.raises(Boom) as caught:
            runner.run(fail())
        assert caught.value is error
    finally:
        runner.close()


def test_a_call_from_the_loop_thread_raises_instead_of_deadlocking() -> None:
    runner = LoopThread()
    try:

        async def inner() -> int:
            return 1

        async def outer() -> str:
            try:
                runner.run(inner())
            except RuntimeError as error:
                return str(error)
            return "no error"

        assert "its own event loop thread" in runner.run(outer())
    finally:
        runner.close()


def test_calls_from_a_running_loop_and_from_other_threads_work() -> None:
    """A thread running an event loop of its own (as Jupyter's) may call: it waits
    for the client's loop, which does not need it; so may several threads at once."""
    runner = LoopThread()
    try:

        async def double(value: int) -> int:
            await asyncio.sleep(0)
            return value * 2

        async def in_other_loop() -> list[int]:
            direct = runner.run(double(1))
            threaded = await asyncio.gather(
                *(asyncio.to_thread(runner.run, double(n)) for n in range(2, 6))
            )
            return [direct, *threaded]

        assert asyncio.run(in_other_loop()) == [2, 4, 6, 8, 10]
    finally:
        runner.close()


def test_close_ends_the_loop_thread_and_the_worker_threads() -> None:
    runner = LoopThread()
    started = threading.Event()

    def plain(context: object) -> dict[str, Any]:
        started.set()
        return {"action": "accept", "thread": threading.current_thread().name}

    handler = runner.threaded(plain)

    async def ask() -> Any:
        return await handler(InputContext("elicitation/create", {}))

    answer = runner.run(ask())
    assert started.is_set()
    assert answer["thread"].startswith(f"{runner.name}-handler")
    runner.close()
    runner.close()  # idempotent
    assert not runner.thread.is_alive()
    assert runner.loop.is_closed()
    left = [t.name for t in threading.enumerate() if t.name.startswith(runner.name)]
    assert left == []

    async def late() -> None:
        pass

    with pytest.raises(RuntimeError, match="closed"):
        runner.run(late())


def test_close_cancels_what_still_runs_in_the_loop() -> None:
    runner = LoopThread()
    ended: list[str] = []

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise

    async def start() -> None:
        asyncio.ensure_future(forever())
        await asyncio.sleep(0)

    runner.run(start())
    runner.close()
    assert ended == ["cancelled"]


def test_a_plain_handler_runs_in_a_worker_an_async_one_in_the_loop() -> None:
    """A plain handler blocking (as on ``input()``) leaves the loop free: another
    call runs while it waits."""
    runner = LoopThread()
    try:
        release = threading.Event()
        entered = threading.Event()

        def blocking(context: object) -> dict[str, Any]:
            entered.set()
            assert release.wait(30)
            return {"action": "decline"}

        async def in_loop(context: object) -> dict[str, Any]:
            assert runner.in_loop_thread()
            return {"action": "cancel"}

        plain, native = runner.threaded(blocking), runner.threaded(in_loop)
        assert native is in_loop
        context = InputContext("elicitation/create", {})

        async def ask() -> Any:
            return await plain(context)

        outcome: list[Any] = []
        waiter = threading.Thread(target=lambda: outcome.append(runner.run(ask())))
        waiter.start()
        assert entered.wait(30)

        async def other() -> Any:
            return await native(context)

        assert runner.run(other()) == {"action": "cancel"}  # the loop is not stalled
        release.set()
        waiter.join(30)
        assert outcome == [{"action": "decline"}]
    finally:
        runner.close()
