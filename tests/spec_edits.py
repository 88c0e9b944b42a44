"""Edits of the official Tasks extension schema, as a newer draft might make them.

Each function takes the parsed schema, changes it in place and returns it. They are used
by ``test_spec_edits.py`` (the generated client and server follow the edit, or
generation stops with exit 2) and describe the edits of the issue "Client and server
that follow the schema":

a) a new status ``paused`` with a ``PausedTask`` variant (a copy of the ``working`` one)
in
   every status union;
b) a new optional number ``progress`` on every task shape; c) ``pollIntervalMs`` renamed
``pollInterval`` everywhere; d) a new request ``tasks/list`` (``params.cursor``; result
``tasks`` and ``nextCursor``); e) ``tasks/update`` removed; f) ``tasks/update`` removed
and a new request ``tasks/result`` (``params.taskId``; an open
   result) added.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Schema = dict[str, Any]
STATUSES = ("working", "input_required", "completed", "failed", "cancelled")


def nodes(node: Any) -> Iterator[dict[str, Any]]:
    """Every object inside a JSON value, depth first."""
    if isinstance(node, dict):
        yield node
        for value in list(node.values()):
            yield from nodes(value)
    elif isinstance(node, list):
        for value in list(node):
            yield from nodes(value)


def _status_const(node: Any) -> str | None:
    """The ``status`` constant of an inline task variant, if ``node`` is one."""
    if not isinstance(node, dict):
        return None
    status = (
        node.get("properties", {}).get("status")
        if isinstance(node.get("properties"), dict)
        else None
    )
    return status.get("const") if isinstance(status, dict) else None


def _camel(status: str) -> str:
    return "".join(part.title() for part in status.split("_"))


def _as_status(variant: dict[str, Any], status: str) -> dict[str, Any]:
    copied = copy.deepcopy(variant)
    copied["properties"]["status"]["const"] = status
    copied["description"] = f"Task state while the task is {status}."
    return copied


def add_status(
    raw: Schema, status: str, like: str, listed: tuple[str, ...] = STATUSES
) -> Schema:
    """``status`` in the status enumeration, and a ``<Status>Task`` variant (a copy of
    ``like``'s) in every union of task variants. ``listed``: the statuses the schema
    lists before the edit."""
    defs = raw["$defs"]
    source = f"#/$defs/{_camel(like)}Task"
    for node in nodes(raw):
        if isinstance(node.get("enum"), list) and set(node["enum"]) == set(listed):
            node["enum"].append(status)
        branches = node.get("anyOf")
        if not isinstance(branches, list):
            continue
        consts = [b.get("const") for b in branches if isinstance(b, dict)]
        if sorted(c for c in consts if c is not None) == sorted(listed):
            branches.append({"type": "string", "const": status})
        if {"$ref": source} in branches:
            branches.append({"$ref": f"#/$defs/{_camel(status)}Task"})
        inline = next((b for b in branches if _status_const(b) == like), None)
        if inline is not None:
            branches.append(_as_status(inline, status))
    defs[f"{_camel(status)}Task"] = _as_status(defs[f"{_camel(like)}Task"], status)
    return raw


def add_paused_status(raw: Schema) -> Schema:
    """a) ``paused`` in the status enumeration and a ``PausedTask`` variant in every
    union."""
    return add_status(raw, "paused", "working")


def add_progress_field(raw: Schema) -> Schema:
    """b) an optional number ``progress`` on every task shape (objects with taskId
    and status)."""
    for node in nodes(raw):
        properties = node.get("properties")
        if isinstance(properties, dict) and {"taskId", "status", "createdAt"} <= set(
            properties
        ):
            properties["progress"] = {
                "type": "number",
                "description": "How far the work is, from 0 to 1.",
            }
    return raw


def rename_poll_interval(raw: Schema) -> Schema:
    """c) ``pollIntervalMs`` renamed ``pollInterval`` everywhere."""
    for node in nodes(raw):
        properties = node.get("properties")
        if isinstance(properties, dict) and "pollIntervalMs" in properties:
            properties["pollInterval"] = properties.pop("pollIntervalMs")
        required = node.get("required")
        if isinstance(required, list) and "pollIntervalMs" in required:
            required[required.index("pollIntervalMs")] = "pollInterval"
    return raw


def add_tasks_list(raw: Schema) -> Schema:
    """d) ``tasks/list``: a request with an optional cursor and a page of tasks as
    result."""
    defs = raw["$defs"]
    request = copy.deepcopy(defs["GetTaskRequest"])
    body = request["allOf"][1]
    body["properties"]["method"]["const"] = "tasks/list"
    body["properties"]["params"] = {
        "type": "object",
        "properties": {
            "cursor": {
                "type": "string",
                "description": "Where the previous page ended.",
            }
        },
    }
    body["required"] = ["method"]
    request["description"] = "Lists the caller's tasks, a page at a time."
    defs["ListTasksRequest"] = request
    defs["ListTasksResult"] = {
        "description": "A page of the caller's tasks.",
        "allOf": [
            {"$ref": "#/$defs/Result"},
            {
                "type": "object",
                "properties": {
                    "tasks": {"type": "array", "items": {"$ref": "#/$defs/Task"}},
                    "nextCursor": {
                        "type": "string",
                        "description": "Pass as cursor for the next page.",
                    },
                },
                "required": ["tasks"],
            },
        ],
    }
    return raw


def remove_tasks_update(raw: Schema) -> Schema:
    """e) ``tasks/update`` and its result removed."""
    defs = raw["$defs"]
    for name in ("UpdateTaskRequest", "UpdateTaskResult"):
        del defs[name]
    for node in nodes(raw):
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                node[key] = [
                    b
                    for b in node[key]
                    if b.get("$ref")
                    not in ("#/$defs/UpdateTaskRequest", "#/$defs/UpdateTaskResult")
                ]
    return raw


def add_tasks_result(raw: Schema) -> Schema:
    """f) ``tasks/result`` added (params ``taskId``, an open result) and
    ``tasks/update`` removed: input can only travel as server-to-client requests on the
    result's stream.
    """
    raw = remove_tasks_update(raw)
    defs = raw["$defs"]
    request = copy.deepcopy(defs["GetTaskRequest"])
    request["allOf"][1]["properties"]["method"]["const"] = "tasks/result"
    request["description"] = "Waits for a task to end and returns its outcome."
    defs["GetTaskPayloadRequest"] = request
    defs["GetTaskPayloadResult"] = {
        "description": "The outcome of a task.",
        "allOf": [{"$ref": "#/$defs/Result"}],
    }
    return raw


EDITS: dict[str, Callable[[Schema], Schema]] = {
    "a_paused": add_paused_status,
    "b_progress": add_progress_field,
    "c_rename": rename_poll_interval,
    "d_list": add_tasks_list,
    "e_no_update": remove_tasks_update,
    "f_result": add_tasks_result,
}


# -- cases: an edit, how it is generated, and what user code and tools it comes with --

Revision = Literal["2025", "ext"]
"""Which embedded schema an edit starts from."""

SCHEMA_FILES: dict[Revision, str] = {
    "2025": "schema/2025-11-25/schema.json",
    "ext": "schema/ext-2026-07-28/schema.json",
}


@dataclass(frozen=True)
class Case:
    """One schema edit as a test case.

    ``edits`` maps the embedded schema(s) the package is generated from to the edit
    applied to each (one entry: a one-revision package; both: a package of both
    revisions). ``args`` are extra ``mcptasks-gen generate`` options. When
    ``refused`` is set, generation must stop with exit 2 and a one-line message
    containing it; otherwise the package ``p_<name>`` is generated with the others
    into one folder, type-checked together with ``user_code`` (a snippet of typed
    user code importing from ``p_<name>``: give its names unique aliases), and
    ``tools`` (server code registering tools on ``server``, formatted with
    ``{pkg}``) is served by a real server process for the case's end-to-end test.
    """

    name: str
    edits: Mapping[Revision, Callable[[Schema], Schema]]
    args: tuple[str, ...] = ()
    user_code: str = ""
    tools: str = ""
    refused: str | None = None

    @property
    def package(self) -> str:
        return f"p_{self.name}"


def _ext(
    edit: Callable[[Schema], Schema],
) -> dict[Revision, Callable[[Schema], Schema]]:
    return {"ext": edit}


_PAUSED_CODE = """\
from p_a_paused.protocol import ACTIVE_STATUSES, StatusName
from p_a_paused.server import ToolContext as PausedContext


async def pause(ctx: PausedContext) -> None:
    status: StatusName = "paused"
    assert status in ACTIVE_STATUSES
    await ctx.set_status(status)
"""

_PAUSED_TOOLS = """
@server.tool(task_support="required")
async def pausing(ctx: ToolContext, arguments: dict) -> str:
    await ctx.set_status("paused", "waiting for the gate")
    await gate.wait()
    await ctx.set_status("working", "going on")
    return "done after pause"
"""

_PROGRESS_CODE = """\
from p_b_progress.protocol import TaskFields
from p_b_progress.server import ToolContext as ProgressContext


async def report(ctx: ProgressContext) -> None:
    await ctx.set_fields(TaskFields(progress=0.5))
"""

_PROGRESS_TOOLS = """
from {pkg}.protocol import TaskFields

@server.tool(task_support="required")
async def counting(ctx: ToolContext, arguments: dict) -> str:
    await ctx.set_fields(TaskFields(progress=0.5))
    await gate.wait()
    return "counted"
"""

_LIST_CODE = """\
from p_d_list.client import TasksClient as ListClient
from p_d_list.models import ListTasksResult
from p_d_list.server import TasksServer as ListServer


async def page(client: ListClient) -> ListTasksResult:
    return await client.tasks_list(cursor="abc")


def serve() -> ListServer:
    return ListServer("listing", enable_list=True, page_size=10)
"""

_LIST_TOOLS = """
server.enable_list = True
server.page_size = 2

@server.tool(task_support="required")
async def quick(ctx: ToolContext, arguments: dict) -> str:
    return "quick"
"""

_ASKING_TOOLS = """
@server.tool(task_support="required")
async def asking(ctx: ToolContext, arguments: dict) -> str:
    answer = await ctx.elicit("Go on?", {{"type": "object", "properties": {{}}}})
    return f"answered {{answer}}"
"""

ROUND_1: tuple[Case, ...] = (
    Case(
        "a_paused",
        _ext(add_paused_status),
        args=("--status", "paused=active"),
        user_code=_PAUSED_CODE,
        tools=_PAUSED_TOOLS,
    ),
    Case(
        "b_progress",
        _ext(add_progress_field),
        user_code=_PROGRESS_CODE,
        tools=_PROGRESS_TOOLS,
    ),
    Case("c_rename", _ext(rename_poll_interval), refused='"pollIntervalMs"'),
    Case("d_list", _ext(add_tasks_list), user_code=_LIST_CODE, tools=_LIST_TOOLS),
    Case("e_no_update", _ext(remove_tasks_update), tools=_ASKING_TOOLS),
    Case("f_result", _ext(add_tasks_result)),
)
"""The first round's edits (their tests are in ``test_spec_edits.py``)."""

CASE_MODULES: tuple[str, ...] = (
    "tests.spec_edit_cases.extid",
    "tests.spec_edit_cases.inputs",
    "tests.spec_edit_cases.statuses",
    "tests.spec_edit_cases.params",
    "tests.spec_edit_cases.fields",
)
"""Modules with more cases (each has ``CASES: tuple[Case, ...]``), one a topic."""


def all_cases() -> dict[str, Case]:
    """Every case by name: the first round's and those of ``CASE_MODULES``."""
    cases = list(ROUND_1)
    for name in CASE_MODULES:
        cases += importlib.import_module(name).CASES
    found: dict[str, Case] = {}
    for case in cases:
        assert case.name not in found, f"two cases are named {case.name}"
        found[case.name] = case
    return found
