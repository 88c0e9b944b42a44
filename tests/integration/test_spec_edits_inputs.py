"""New input requests and new notifications of an edited schema, end to end: a real
server process built on the edited package, the generated client over HTTP (cases in
``tests/spec_edit_cases/inputs.py``).

g) ``confirmation/create`` joins the extension's input-request union: the client
   answers it with its ``input_handlers`` entry, which gets the params as their
   generated model; without a handler the wait fails at once naming the method (it
   used to time out); the server refuses params its model refuses.
h) ``notifications/tasks/progress`` in both schemas (one package of both revisions):
   tool code sends it with ``ctx.notify``, and the client of either revision hands it,
   as the generated model, to ``on_notification`` and ``handle.notifications()``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pexpect
import pytest

from tests.spec_edits import Case, all_cases
from tests.support import example_cli, spec_cases
from tests.support.waiting import until

CASES = all_cases()

pytestmark = pytest.mark.anyio


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


@pytest.fixture
def served(
    spec_packages: tuple[Path, dict[str, Case]], request: pytest.FixtureRequest
) -> Iterator[tuple[str, str]]:
    """The case's server in its own process; yields the package name and the URL."""
    packages, _ = spec_packages
    case = CASES[request.param]
    with spec_cases.serve(packages, case) as url:
        yield case.package, url


def _client(package: str, url: str, **options: Any) -> Any:
    ids = _module(f"{package}.task_ids")
    return _module(f"{package}.client").TasksClient(
        url, store=ids.MemoryTaskIdStore(), default_poll_interval=0.02, **options
    )


@pytest.mark.parametrize("served", ["g_confirm"], indirect=True)
async def test_g_added_input_request_is_answered_by_its_typed_handler(
    served: tuple[str, str],
) -> None:
    package, url = served
    models = _module(f"{package}.models")
    asked: list[Any] = []

    async def confirm(ctx: Any) -> Any:
        asked.append(ctx)
        return models.ConfirmationResult(confirmed=True)

    async with _client(
        package, url, input_handlers={"confirmation/create": confirm}
    ) as client:
        assert client.client_capabilities()["confirmation"] == {}
        result = await client.call_tool("confirming", {}, timeout=60)
    assert "confirmed=True" in json.dumps(result.raw)
    assert [c.method for c in asked] == ["confirmation/create"]
    assert isinstance(asked[0].request, models.ConfirmationRequestParams)
    assert asked[0].request.question == "Deploy?"
    assert asked[0].task_id is not None and asked[0].key is not None


@pytest.mark.parametrize("served", ["g_confirm"], indirect=True)
async def test_g_added_input_request_without_a_handler_fails_the_wait_at_once(
    served: tuple[str, str],
) -> None:
    """It used to leave the request unanswered until the wait timed out."""
    package, url = served
    errors = _module(f"{package}.client")
    async with _client(package, url) as client:
        handle = await client.start_tool("confirming", {})
        started = time.monotonic()
        with pytest.raises(errors.InputNotHandled) as raised:
            await handle.result(timeout=30)
    assert time.monotonic() - started < 25  # not the wait's timeout
    assert raised.value.method == "confirmation/create"
    assert "confirmation/create" in str(raised.value)
    assert raised.value.task_id == handle.task_id


@pytest.mark.parametrize("served", ["g_confirm"], indirect=True)
async def test_g_server_refuses_input_params_the_generated_model_refuses(
    served: tuple[str, str],
) -> None:
    package, url = served
    client_module = _module(f"{package}.client")

    async def confirm(ctx: Any) -> dict[str, Any]:
        raise AssertionError("an invalid request must not reach the client")

    async with _client(
        package, url, input_handlers={"confirmation/create": confirm}
    ) as client:
        with pytest.raises(client_module.TaskFailed) as raised:
            await client.call_tool("asking_badly", {}, timeout=60)
    assert "ValueError" in str(raised.value)  # the tool's error (logged in full)


def test_g_naming_an_input_method_both_ways_is_a_type_error(
    spec_packages: tuple[Path, dict[str, Case]],
) -> None:
    package = CASES["g_confirm"].package

    async def answer(ctx: Any) -> dict[str, Any]:
        return {"action": "decline"}

    with pytest.raises(TypeError, match="elicitation/create"):
        _client(
            package,
            "http://127.0.0.1:9/mcp",
            input_handlers={"elicitation/create": answer},
            elicitation_handler=answer,
        )


@pytest.mark.parametrize("served", ["h_progress"], indirect=True)
@pytest.mark.parametrize("revision", ["2025-11-25", "ext-2026-07-28"])
async def test_h_added_notification_reaches_the_callback_and_the_handle(
    served: tuple[str, str], revision: str
) -> None:
    package, url = served
    models = _module(
        f"{package}.models_{'ext' if revision.startswith('ext') else '2025'}"
    )
    called: list[Any] = []
    iterated: list[Any] = []
    async with _client(
        package, url, revision=revision, on_notification=called.append
    ) as client:
        handle = await client.start_tool("progressing", {})

        async def collect() -> None:
            async for note in handle.notifications():
                iterated.append(note)

        collector = asyncio.ensure_future(collect())
        waiting = asyncio.ensure_future(handle.result(timeout=60))
        await until(lambda: len(iterated) >= 2, timeout=30, what="two notifications")
        await client.call_tool("open_gate", {})
        result = await waiting
        await asyncio.wait_for(collector, 30)  # ends with the wait
    assert client.revision == revision
    assert "progressed" in json.dumps(result.raw)
    for note in iterated:
        assert isinstance(note, models.TaskProgressNotification)
        assert note.params.task_id == handle.task_id
    steps = [note.params.progress for note in iterated]
    assert steps == sorted(steps) and steps[0] >= 1
    assert [n.params.progress for n in called][: len(iterated)] == steps[
        : len(called)
    ] or set(steps) <= {n.params.progress for n in called}


@pytest.mark.parametrize("served", ["h_progress"], indirect=True)
@pytest.mark.parametrize("revision", ["2025-11-25", "ext-2026-07-28"])
async def test_h_server_refuses_a_notification_its_model_refuses(
    served: tuple[str, str], revision: str
) -> None:
    package, url = served
    client_module = _module(f"{package}.client")
    async with _client(package, url, revision=revision) as client:
        with pytest.raises(client_module.TaskFailed) as raised:
            await client.call_tool("notifying_badly", {}, timeout=60)
    assert "ValueError" in str(raised.value)


_SAMPLING_TOOLS = """
@server.tool(task_support="required")
async def sampling(ctx: ToolContext, arguments: dict) -> str:
    answer = await ctx.request_input(
        "sampling/createMessage",
        {{
            "messages": [
                {{"role": "user", "content": {{"type": "text", "text": "Hi?"}}}}
            ],
            "maxTokens": 5,
        }},
    )
    return f"sampled {{answer['content']['text']}}"
"""


@pytest.mark.parametrize("revision", ["2025-11-25", "ext-2026-07-28"])
def test_terminal_client_prints_an_input_request_it_has_no_form_for_and_reads_json(
    spec_packages: tuple[Path, dict[str, Case]], tmp_path: Path, revision: str
) -> None:
    """``examples/client.py`` answers any input method of its package's tables: one
    without a form (here ``sampling/createMessage``) is printed as JSON and answered
    with a JSON object typed on the terminal (it used to be refused)."""
    packages, _ = spec_packages
    with spec_cases.serve(packages, CASES["h_progress"], _SAMPLING_TOOLS) as url:
        child = example_cli.spawn(url, revision, tmp_path / "ids.db", "sampling")
        child.expect("asks for input with sampling/createMessage")
        child.expect(r"Answer \(a JSON object\): ")
        child.sendline("[1]")
        child.expect("must be a JSON object")
        child.sendline(
            '{"role": "assistant", "model": "m",'
            ' "content": {"type": "text", "text": "hello"}}'
        )
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0, example_cli.output(child)
    assert "sampled hello" in example_cli.output(child)
    example_cli.assert_no_traceback(child)
