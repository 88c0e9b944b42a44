"""Params a schema adds to the requests the runtime sends, end to end: a real server
process built on the edited package (``tests/spec_edit_cases/params.py``) and the
generated clients of both revisions over HTTP.

* ``tasks/cancel`` with a required ``reason``: ``handle.cancel(reason=...)`` sends the
  caller's reason, an abandoned wait sends the configured one, and the tool reads what
  it got (``ctx.task_params``).
* ``tasks/get`` with a required ``view``: the polling loop sends each revision's
  configured value; the server refuses a ``tasks/get`` without it (-32602).
* ``tasks/update`` with a required ``origin``: answering input sends the configured one.
* ``tools/call`` with an added ``traceId``: it reaches the tool
  (``ctx.request_params``), as does any other key of the call's params that the runtime
  does not manage.
* ``tasks/list`` with a required ``owner`` (never sent on its own): a required keyword.
* A required param with no value stops generation with the pointer and the option.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.spec_edits import Case, all_cases
from tests.support import spec_cases
from tests.support.waiting import until

pytestmark = pytest.mark.anyio
CASES = all_cases()
REVISIONS = ("2025", "ext")


@pytest.fixture
def served(
    spec_packages: tuple[Path, dict[str, Case]], request: pytest.FixtureRequest
) -> Iterator[tuple[str, str]]:
    """The case's server in its own process; yields the package name and the URL."""
    case = CASES[request.param]
    with spec_cases.serve(spec_packages[0], case) as url:
        yield case.package, url


def _client(package: str, module: str, url: str, **options: Any) -> Any:
    api = importlib.import_module(f"{package}.{module}")
    transport = importlib.import_module(f"{package}.transport")
    ids = importlib.import_module(f"{package}.task_ids")
    return api.TasksClient(
        transport.HttpTransport(url),
        store=ids.MemoryTaskIdStore(),
        default_poll_interval=0.02,
        **options,
    )


def _text(result: Any) -> str:
    wire = result if isinstance(result, dict) else result.raw
    return str(wire["content"][0]["text"])


def _errors(package: str) -> ModuleType:
    return importlib.import_module(f"{package}.client")


@pytest.mark.parametrize("served", ["g_params"], indirect=True)
@pytest.mark.parametrize("revision", REVISIONS)
async def test_cancel_sends_the_given_reason_or_the_configured_one(
    served: tuple[str, str], revision: str
) -> None:
    package, url = served
    errors = _errors(package)
    async with _client(package, f"api_{revision}", url, cancel_on_abort=True) as client:
        handle = await client.start_tool("waiting", {})
        await handle.cancel(reason="the user pressed stop")
        with pytest.raises((errors.TaskCancelled, errors.TaskEnded)):
            await handle.result(timeout=30)

        abandoned = await client.start_tool("waiting", {})
        wait = asyncio.ensure_future(abandoned.result(timeout=30))
        await until(lambda: abandoned.polls >= 2, timeout=30, what="polling")
        wait.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await wait
        reasons = json.loads(_text(await client.call_tool("cancel_reasons", {})))
    assert reasons == [
        {"reason": "the user pressed stop"},
        {"reason": "cancelled by the client"},
    ]


@pytest.mark.parametrize("served", ["g_params"], indirect=True)
@pytest.mark.parametrize(("revision", "view"), [("2025", "brief"), ("ext", "full")])
async def test_the_polling_loop_sends_the_configured_get_param(
    served: tuple[str, str], revision: str, view: str
) -> None:
    package, url = served
    async with _client(package, f"api_{revision}", url) as client:
        handle = await client.start_tool("waiting", {})
        wait = asyncio.ensure_future(handle.result(timeout=30))
        await until(lambda: handle.polls >= 2, timeout=30, what="polling")
        await client.call_tool("open_gate", {})
        seen = json.loads(_text(await wait))
        assert seen["tasks/get"] == {"view": view}
        state = await client.get_task(handle.task_id, view="explicit")
        assert state.task_id == handle.task_id
        with pytest.raises(Exception) as refused:
            await client.request("tasks/get", {"taskId": handle.task_id})
    assert getattr(refused.value, "code", None) == -32602
    assert "view" in str(refused.value)


@pytest.mark.parametrize("served", ["g_params"], indirect=True)
async def test_answering_input_sends_the_configured_update_param(
    served: tuple[str, str],
) -> None:
    package, url = served

    async def accept(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {}}

    async with _client(package, "api_ext", url, elicitation_handler=accept) as client:
        result = await client.call_tool("asking", {}, timeout=30)
    seen = json.loads(_text(result))
    assert seen["tasks/update"] == {"origin": "the terminal"}


@pytest.mark.parametrize("served", ["g_params"], indirect=True)
async def test_an_added_call_param_reaches_the_tool(served: tuple[str, str]) -> None:
    package, url = served
    async with _client(package, "api_2025", url) as client:
        typed = await client.call_tool("echo", {}, trace_id="abc", timeout=30)
    assert json.loads(_text(typed)) == {"traceId": "abc"}
    async with _client(package, "api_ext", url) as client:
        raw = await client.request(
            "tools/call", {"name": "echo", "arguments": {}, "traceId": "xyz"}
        )
    assert json.loads(_text(raw)) == {"traceId": "xyz"}


@pytest.mark.parametrize("served", ["g_list_owner"], indirect=True)
async def test_a_required_list_param_is_a_required_keyword(
    served: tuple[str, str],
) -> None:
    package, url = served
    async with _client(package, "client", url) as client:
        await client.call_tool("quick", {}, timeout=30)
        assert await client.list_tasks(owner="me") is not None
        with pytest.raises(Exception) as refused:
            await client.request("tasks/list", {})
    assert getattr(refused.value, "code", None) == -32602
    assert "owner" in str(refused.value)


def test_a_required_param_without_a_value_names_its_pointer_and_the_option(
    tmp_path: Path,
) -> None:
    proc = spec_cases.generate(tmp_path, CASES["g_cancel_reason_unset"])
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert "\n" not in line
    assert "/properties/reason:" in line
    assert "--param tasks/cancel.reason=VALUE" in line
    assert 'params = { "tasks/cancel.reason"' in line
    assert not (tmp_path / CASES["g_cancel_reason_unset"].package).exists()
