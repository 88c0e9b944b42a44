"""Schema edits that add statuses server code must be able to enter.

* ``rejected`` classified terminal: the tool ends its task in it with
  ``ctx.finish("rejected", "not allowed")``; the client's wait raises ``TaskEnded``.
* ``awaiting_approval`` classified input: the tool asks for input in it
  (``ctx.elicit(..., status="awaiting_approval")``); the client's snapshot shows it
  and its answer goes through.
* ``queued`` as the initial status (``--initial-status queued``): a new task is
  ``queued``, then ``working`` once the tool starts, then ``completed``.
* a package of both revisions with ``rejected`` and ``queued`` in the extension's
  schema only, classified and made initial with ``ext:``.
* refused: a terminal status whose variant requires a field the runtime cannot fill,
  a classification or an initial status naming no status of its schema, an initial
  status that is not active.

Each edit is made on both embedded schemas where it applies to both (``<name>`` for
the extension, ``<name>_2025`` for 2025-11-25).
"""

from __future__ import annotations

from collections.abc import Callable

from tests.spec_edits import STATUSES, Case, Revision, Schema, add_status


def _add_2025(status: str) -> Callable[[Schema], Schema]:
    """``status`` in 2025-11-25's ``TaskStatus`` enumeration (one ``Task`` model
    carries every status there)."""

    def edit(raw: Schema) -> Schema:
        raw["$defs"]["TaskStatus"]["enum"].append(status)
        return raw

    edit.__doc__ = f"{status} added to TaskStatus"
    return edit


def _add_ext(status: str, like: str) -> Callable[[Schema], Schema]:
    """``status`` in the extension's status enumeration, with a variant copied from
    ``like``'s."""

    def edit(raw: Schema) -> Schema:
        return add_status(raw, status, like)

    edit.__doc__ = f"{status} added like {like}"
    return edit


def _two_ext(
    first: tuple[str, str], second: tuple[str, str]
) -> Callable[[Schema], Schema]:
    """Two statuses added to the extension's schema, each like another."""

    def edit(raw: Schema) -> Schema:
        raw = add_status(raw, *first)
        return add_status(raw, *second, listed=(*STATUSES, first[0]))

    return edit


def _unchanged(raw: Schema) -> Schema:
    return raw


def _pair(
    name: str,
    ext: Callable[[Schema], Schema],
    v2025: Callable[[Schema], Schema],
    *,
    args: tuple[str, ...],
    user_code: str,
    tools: str,
) -> tuple[Case, Case]:
    """The case on the extension's schema and on 2025-11-25's."""
    editions: list[Case] = []
    both: tuple[tuple[str, Revision, Callable[[Schema], Schema]], ...] = (
        ("", "ext", ext),
        ("_2025", "2025", v2025),
    )
    for suffix, revision, edit in both:
        package = f"p_{name}{suffix}"
        alias = "".join(p.title() for p in f"{name}{suffix}".split("_"))
        editions.append(
            Case(
                f"{name}{suffix}",
                {revision: edit},
                args=args,
                user_code=user_code.format(pkg=package, alias=alias),
                tools=tools,
            )
        )
    return editions[0], editions[1]


_REJECTED_CODE = """\
from {pkg}.client import TaskEnded as {alias}Ended
from {pkg}.protocol import TERMINAL_STATUSES as {alias}Terminal
from {pkg}.server import ToolContext as {alias}Context


async def reject_{alias}(ctx: {alias}Context) -> None:
    assert "rejected" in {alias}Terminal
    await ctx.finish("rejected", "not allowed")


def ended_status_{alias}(error: {alias}Ended) -> str:
    return error.status
"""

_REJECTED_TOOLS = """
@server.tool(task_support="required")
async def rejecting(ctx: ToolContext, arguments: dict) -> str:
    await ctx.finish("rejected", "not allowed")
    if arguments.get("then") == "raise":
        raise RuntimeError("after finishing")
    return "ignored after finishing"
"""

_APPROVAL_CODE = """\
from typing import Any

from {pkg}.protocol import INPUT_STATUSES as {alias}Input
from {pkg}.server import ToolContext as {alias}Context


async def approve_{alias}(ctx: {alias}Context) -> dict[str, Any]:
    assert "awaiting_approval" in {alias}Input
    schema: dict[str, Any] = {{"type": "object", "properties": {{}}}}
    first = await ctx.elicit("Approve?", schema, status="awaiting_approval")
    second = await ctx.request_input(
        "elicitation/create",
        {{"mode": "form", "message": "Sure?", "requestedSchema": schema}},
        status="awaiting_approval",
    )
    return {{**first, **second}}
"""

_APPROVAL_TOOLS = """
@server.tool(task_support="required")
async def approving(ctx: ToolContext, arguments: dict) -> str:
    answer = await ctx.elicit(
        "Approve?",
        {{"type": "object", "properties": {{"ok": {{"type": "boolean"}}}}}},
        status="awaiting_approval",
    )
    return f"approved: {{answer.get('action')}} {{answer.get('content')}}"
"""

_QUEUED_CODE = """\
from {pkg}.protocol import INITIAL_STATUS as {alias}Initial, StatusName as {alias}Status

first_{alias}: {alias}Status = {alias}Initial
"""

_QUEUED_TOOLS = """
@server.tool(task_support="required")
async def waiting(ctx: ToolContext, arguments: dict) -> str:
    await gate.wait()
    return "went through the queue"
"""

_DUAL_CODE = """\
from p_s_dual.protocol_ext import INITIAL_STATUS as DualExtInitial
from p_s_dual.protocol_2025 import INITIAL_STATUS as Dual2025Initial
from p_s_dual.server import ToolContext as DualContext


async def reject_dual(ctx: DualContext) -> None:
    assert (DualExtInitial, Dual2025Initial) == ("queued", "working")
    await ctx.finish("rejected", "not allowed here")
"""

_DUAL_TOOLS = """
@server.tool(task_support="required")
async def rejecting(ctx: ToolContext, arguments: dict) -> str:
    await gate.wait()
    await ctx.finish("rejected", "not allowed")
    return "ignored after finishing"
"""

CASES: tuple[Case, ...] = (
    *_pair(
        "s_rejected",
        _add_ext("rejected", "cancelled"),
        _add_2025("rejected"),
        args=("--status", "rejected=terminal"),
        user_code=_REJECTED_CODE,
        tools=_REJECTED_TOOLS,
    ),
    *_pair(
        "s_approval",
        _add_ext("awaiting_approval", "input_required"),
        _add_2025("awaiting_approval"),
        args=("--status", "awaiting_approval=input"),
        user_code=_APPROVAL_CODE,
        tools=_APPROVAL_TOOLS,
    ),
    *_pair(
        "s_queued",
        _add_ext("queued", "working"),
        _add_2025("queued"),
        args=("--status", "queued=active", "--initial-status", "queued"),
        user_code=_QUEUED_CODE,
        tools=_QUEUED_TOOLS,
    ),
    Case(
        "s_dual",
        {
            "2025": _unchanged,
            "ext": _two_ext(("rejected", "cancelled"), ("queued", "working")),
        },
        args=(
            "--status",
            "ext:rejected=terminal",
            "--status",
            "ext:queued=active",
            "--initial-status",
            "ext:queued",
        ),
        user_code=_DUAL_CODE,
        tools=_DUAL_TOOLS,
    ),
    Case(
        "s_rejected_needs_error",
        {"ext": _add_ext("rejected", "failed")},
        args=("--status", "rejected=terminal"),
        refused='status "rejected" (terminal) could never be entered',
    ),
    Case(
        "s_classified_missing",
        {"ext": _unchanged},
        args=("--status", "rejected=terminal"),
        refused='classifies status "rejected", which no schema',
    ),
    Case(
        "s_dual_unqualified_initial",
        {"2025": _unchanged, "ext": _add_ext("queued", "working")},
        args=("--status", "ext:queued=active", "--initial-status", "queued"),
        refused='initial status "queued" is not a status of the 2025-11-25 schema',
    ),
    Case(
        "s_initial_terminal",
        {"2025": _add_2025("rejected")},
        args=("--status", "rejected=terminal", "--initial-status", "rejected"),
        refused='initial status "rejected" is terminal',
    ),
    Case(
        "s_unknown_qualifier",
        {"ext": _add_ext("rejected", "cancelled")},
        args=("--status", "nope:rejected=terminal"),
        refused='"nope" is not a revision',
    ),
)
