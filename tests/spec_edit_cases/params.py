"""Schema-edit cases: params a schema adds to the requests the runtime sends.

A param of a request the runtime also sends on its own (``tasks/get`` from the polling
loop, ``tasks/cancel`` from an abandoned wait, ``tasks/update`` when answering input)
needs a value in the target configuration (``--param``) when it is required; every call
that sends the request takes it as a typed keyword argument (the configured value as
default). A required param of ``tasks/list`` (never sent on its own) is a required
keyword. The server hands what it does not manage to the tool.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from tests.spec_edits import Case, Schema, nodes


def _params_node(raw: Schema, method: str, inline: bool) -> dict[str, Any]:
    """The params object of ``method``'s request; a shared definition it refers to
    is copied inline first when ``inline`` (so that only this request changes)."""
    for node in nodes(raw):
        properties = node.get("properties")
        if not isinstance(properties, dict):
            continue
        named = properties.get("method")
        if not (isinstance(named, dict) and named.get("const") == method):
            continue
        params = properties["params"]
        ref = params.get("$ref")
        if ref is None:
            return params
        target = raw["$defs"][ref.rsplit("/", 1)[1]]
        if not inline:
            return target
        copied = copy.deepcopy(target)
        copied["description"] = params.get("description", "")
        properties["params"] = copied
        return copied
    raise AssertionError(f"no request {method}")


def add_param(
    method: str,
    name: str,
    schema: dict[str, Any],
    *,
    required: bool = True,
    inline: bool = True,
) -> Callable[[Schema], Schema]:
    """An edit adding param ``name`` (``schema``) to ``method``'s params."""

    def edit(raw: Schema) -> Schema:
        params = _params_node(raw, method, inline)
        params.setdefault("properties", {})[name] = dict(schema)
        if required:
            params.setdefault("required", []).append(name)
        return raw

    return edit


def edits(*changes: Callable[[Schema], Schema]) -> Callable[[Schema], Schema]:
    """Several edits, in order."""

    def edit(raw: Schema) -> Schema:
        for change in changes:
            raw = change(raw)
        return raw

    return edit


REASON = {"type": "string", "description": "Why the client cancels the task."}
VIEW = {"type": "string", "description": "How much of the task to report."}
ORIGIN = {"type": "string", "description": "Who answered the input."}
TRACE = {"type": "string", "description": "A trace id the tool logs."}
OWNER = {"type": "string", "description": "Whose tasks to list."}

cancel_reason = add_param("tasks/cancel", "reason", REASON)
get_view = add_param("tasks/get", "view", VIEW)

_BOTH_EXT = edits(cancel_reason, get_view, add_param("tasks/update", "origin", ORIGIN))
_BOTH_2025 = edits(
    cancel_reason,
    get_view,
    add_param("tools/call", "traceId", TRACE, required=False, inline=False),
)

_PARAMS_CODE = """\
from p_g_params.api_2025 import TasksClient as ParamsClient2025
from p_g_params.api_ext import TasksClient as ParamsClientExt
from p_g_params.client import TasksClient as ParamsDualClient
from p_g_params.protocol_2025 import PARAM_DEFAULTS as PARAMS_DEFAULTS
from p_g_params.server import ToolContext as ParamsContext


async def cancel_with_reasons(client: ParamsClient2025, task_id: str) -> None:
    handle = client.task(task_id)
    await handle.cancel(reason="the user pressed stop")
    await handle.cancel()
    await client.cancel_task(task_id, reason="no longer needed")
    await client.get_task(task_id, view="full")
    await client.tasks_cancel(task_id=task_id)
    await client.tasks_cancel(task_id=task_id, reason="typed")
    await client.call_tool("echo", {}, trace_id="abc")
    await client.start_tool("echo", trace_id="abc")
    assert PARAMS_DEFAULTS["cancel"]["reason"] == "cancelled by the client"


async def cancel_ext(client: ParamsClientExt, dual: ParamsDualClient) -> None:
    await client.cancel_task("t", reason="done")
    await client.update_task("t", {}, origin="the user")
    await client.tasks_get(task_id="t")
    await dual.cancel_task("t", reason="done")
    await dual.get_task("t", view="brief")
    await dual.task("t").cancel(reason="stop")


def seen(ctx: ParamsContext) -> str:
    reason: object = ctx.task_params.get("tasks/cancel", {}).get("reason")
    trace: object = ctx.request_params.get("traceId")
    return f"{reason} {trace}"
"""

_PARAMS_TOOLS = """
import json

@server.tool(task_support="required")
async def waiting(ctx: ToolContext, arguments: dict) -> str:
    try:
        await gate.wait()
    except asyncio.CancelledError:
        cancelled.append(dict(ctx.task_params.get("tasks/cancel", {{}})))
        raise
    return json.dumps(ctx.task_params)

@server.tool(task_support="forbidden")
async def cancel_reasons(ctx: ToolContext, arguments: dict) -> str:
    return json.dumps(cancelled)

@server.tool(task_support="required")
async def asking(ctx: ToolContext, arguments: dict) -> str:
    await ctx.elicit("Go on?", {{"type": "object", "properties": {{}}}})
    return json.dumps(ctx.task_params)

@server.tool(task_support="forbidden")
async def echo(ctx: ToolContext, arguments: dict) -> str:
    return json.dumps(ctx.request_params)

cancelled: list = []
"""

_LIST_CODE = """\
from p_g_list_owner.client import TasksClient as OwnerClient


async def owned(client: OwnerClient) -> None:
    await client.list_tasks(owner="me")
    await client.list_tasks()  # type: ignore[call-arg]
"""

_LIST_TOOLS = """
server.enable_list = True

@server.tool(task_support="optional")
async def quick(ctx: ToolContext, arguments: dict) -> str:
    return "quick"
"""

CASES: tuple[Case, ...] = (
    Case(
        "g_params",
        {"2025": _BOTH_2025, "ext": _BOTH_EXT},
        args=(
            "--param",
            "tasks/cancel.reason=cancelled by the client",
            "--param",
            "2025:tasks/get.view=brief",
            "--param",
            "ext:tasks/get.view=full",
            "--param",
            "ext:tasks/update.origin=the terminal",
        ),
        user_code=_PARAMS_CODE,
        tools=_PARAMS_TOOLS,
    ),
    Case(
        "g_cancel_reason_unset",
        {"ext": cancel_reason},
        refused="--param tasks/cancel.reason=VALUE",
    ),
    Case(
        "g_cancel_reason_unset_2025",
        {"2025": cancel_reason},
        refused='param "reason" of "tasks/cancel" is required',
    ),
    Case(
        "g_param_unknown",
        {"ext": cancel_reason},
        args=("--param", "tasks/cancel.reason=x", "--param", "tasks/cancel.why=x"),
        refused='request param "tasks/cancel.why"',
    ),
    Case(
        "g_list_owner",
        {"2025": add_param("tasks/list", "owner", OWNER)},
        user_code=_LIST_CODE,
        tools=_LIST_TOOLS,
    ),
)
