"""Schema-edit cases of new input requests and new notifications.

``g_confirm``: ``confirmation/create`` (params ``question``, answered by
``ConfirmationResult`` with ``confirmed``) joins the extension's input-request union
and its answers' union: the server asks for it with ``ctx.request_input`` (params
validated by the generated model) and the client answers it with the handler given in
``input_handlers``, typed by the generated params and result models.

``g_confirm_no_result``: the same request without a ``ConfirmationResult``: the client
could not check its answer, so generation stops (exit 2).

``h_progress``: ``notifications/tasks/progress`` with ``{taskId, progress}`` in both
embedded schemas (one package of both revisions): tool code sends it with
``ctx.notify``, the client hands it to ``on_notification`` and to
``handle.notifications()``.
"""

from __future__ import annotations

from tests.spec_edits import Case, Schema


def _confirmation(raw: Schema, *, with_result: bool = True) -> Schema:
    defs = raw["$defs"]
    defs["ConfirmationRequest"] = {
        "description": "Input request asking the user to confirm an action.",
        "type": "object",
        "properties": {
            "method": {
                "description": 'Method name; always "confirmation/create".',
                "const": "confirmation/create",
                "type": "string",
            },
            "params": {
                "description": "What to confirm.",
                "$ref": "#/$defs/ConfirmationRequestParams",
            },
        },
        "required": ["method", "params"],
    }
    defs["ConfirmationRequestParams"] = {
        "description": "Params of confirmation/create.",
        "type": "object",
        "properties": {
            "question": {"description": "The question shown.", "type": "string"}
        },
        "required": ["question"],
    }
    defs["InputRequest"]["anyOf"].append({"$ref": "#/$defs/ConfirmationRequest"})
    if with_result:
        defs["ConfirmationResult"] = {
            "description": "The client's answer to confirmation/create.",
            "type": "object",
            "properties": {
                "confirmed": {
                    "description": "Whether it was confirmed.",
                    "type": "boolean",
                }
            },
            "required": ["confirmed"],
        }
        defs["InputResponse"]["anyOf"].append({"$ref": "#/$defs/ConfirmationResult"})
    return raw


def add_confirmation(raw: Schema) -> Schema:
    """``confirmation/create`` in the input-request union, its result in the
    answers'."""
    return _confirmation(raw)


def add_confirmation_without_result(raw: Schema) -> Schema:
    """``confirmation/create`` in the input-request union, with no result
    definition."""
    return _confirmation(raw, with_result=False)


def add_progress_notification(raw: Schema) -> Schema:
    """``notifications/tasks/progress`` with params ``{taskId, progress}``."""
    defs = raw["$defs"]
    defs["TaskProgressNotification"] = {
        "description": "How far a task's work is.",
        "type": "object",
        "properties": {
            "jsonrpc": {"const": "2.0", "type": "string"},
            "method": {"const": "notifications/tasks/progress", "type": "string"},
            "params": {"$ref": "#/$defs/TaskProgressNotificationParams"},
        },
        "required": ["jsonrpc", "method", "params"],
    }
    defs["TaskProgressNotificationParams"] = {
        "description": "Params of notifications/tasks/progress.",
        "type": "object",
        "properties": {
            "_meta": {"type": "object", "additionalProperties": {}},
            "taskId": {"description": "The task.", "type": "string"},
            "progress": {"description": "Steps done.", "type": "number"},
        },
        "required": ["taskId", "progress"],
    }
    return raw


_CONFIRM_CODE = """\
from p_g_confirm.client import TasksClient as ConfirmClient
from p_g_confirm.client import TypedInputContext as ConfirmContext
from p_g_confirm.models import ConfirmationRequestParams, ConfirmationResult
from p_g_confirm.server import ToolContext as ConfirmToolContext


async def confirm(
    ctx: ConfirmContext[ConfirmationRequestParams],
) -> ConfirmationResult:
    return ConfirmationResult(confirmed=ctx.request.question.endswith("?"))


def confirming_client(url: str) -> ConfirmClient:
    return ConfirmClient(url, input_handlers={"confirmation/create": confirm})


async def ask_confirmation(ctx: ConfirmToolContext) -> bool:
    answer = await ctx.request_input("confirmation/create", {"question": "Go?"})
    return bool(answer["confirmed"])
"""

_CONFIRM_TOOLS = """
@server.tool(task_support="required")
async def confirming(ctx: ToolContext, arguments: dict) -> str:
    answer = await ctx.request_input("confirmation/create", {{"question": "Deploy?"}})
    return f"confirmed={{answer['confirmed']}}"


@server.tool(task_support="required")
async def asking_badly(ctx: ToolContext, arguments: dict) -> str:
    await ctx.request_input("confirmation/create", {{"prompt": "no question"}})
    return "not reached"
"""

_PROGRESS_CODE = """\
from p_h_progress.client import TasksClient as ProgressNoteClient
from p_h_progress.protocol import SchemaNotification as ProgressNote
from p_h_progress.server import ToolContext as ProgressNoteContext


async def send_progress(ctx: ProgressNoteContext) -> None:
    await ctx.notify("notifications/tasks/progress", {"progress": 0.5})


def on_progress_note(note: ProgressNote) -> float:
    return note.params.progress


async def follow_progress(url: str) -> list[float]:
    async with ProgressNoteClient(url, on_notification=on_progress_note) as client:
        handle = await client.start_tool("progressing")
        return [note.params.progress async for note in handle.notifications()]
"""

_PROGRESS_TOOLS = """
@server.tool(task_support="required")
async def progressing(ctx: ToolContext, arguments: dict) -> str:
    step = 0
    while not gate.is_set():  # until the client saw some (it may subscribe late)
        step += 1
        await ctx.notify("notifications/tasks/progress", {{"progress": step}})
        try:
            await asyncio.wait_for(gate.wait(), 0.05)
        except asyncio.TimeoutError:
            pass
    return "progressed"


@server.tool(task_support="required")
async def notifying_badly(ctx: ToolContext, arguments: dict) -> str:
    await ctx.notify("notifications/tasks/progress", {{"progress": "half"}})
    return "not reached"
"""

CASES: tuple[Case, ...] = (
    Case(
        "g_confirm",
        {"ext": add_confirmation},
        user_code=_CONFIRM_CODE,
        tools=_CONFIRM_TOOLS,
    ),
    Case(
        "g_confirm_no_result",
        {"ext": add_confirmation_without_result},
        refused='"ConfirmationResult"',
    ),
    Case(
        "h_progress",
        {"2025": add_progress_notification, "ext": add_progress_notification},
        user_code=_PROGRESS_CODE,
        tools=_PROGRESS_TOOLS,
    ),
)
