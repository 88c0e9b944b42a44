"""Task fields that one revision of a package of both revisions has and the other has
not (the tests are in ``tests/integration/test_spec_edits_fields.py``).

i) ``progress`` added to the extension's task shapes only: one tool serves both
   revisions and sets it; a task of the 2025-11-25 revision, which has no such field,
   still completes (it used to fail with ``not a task field of this schema``), and
   ``ctx.revision`` tells the tool which revision its call runs under.
"""

from __future__ import annotations

from tests.spec_edits import Case, Schema, add_progress_field


def _identity(raw: Schema) -> Schema:
    return raw


_FIELDS_CODE = """\
from p_i_progress_ext_only import protocol_ext as fields_protocol_ext
from p_i_progress_ext_only.protocol import TaskFields as DualTaskFields
from p_i_progress_ext_only.server import ToolContext as FieldsContext


async def set_either(ctx: FieldsContext) -> str:
    await ctx.set_fields(DualTaskFields(progress=0.5))
    if ctx.revision == fields_protocol_ext.REVISION:
        await ctx.set_fields(
            fields_protocol_ext.TaskFields(progress=0.75),
            revision=fields_protocol_ext.REVISION,
        )
    return ctx.revision
"""

_FIELDS_TOOLS = """
from {pkg} import protocol_ext
from {pkg}.protocol import TaskFields

@server.tool(task_support="required")
async def counting(ctx: ToolContext, arguments: dict) -> str:
    await ctx.set_fields(TaskFields(progress=0.5))
    await gate.wait()
    return "counted"

@server.tool(task_support="optional")
async def which_revision(ctx: ToolContext, arguments: dict) -> str:
    return f"called under {{ctx.revision}}"

@server.tool(task_support="required")
async def counting_checked(ctx: ToolContext, arguments: dict) -> str:
    try:
        await ctx.set_fields(
            protocol_ext.TaskFields(progress=0.75), revision=protocol_ext.REVISION
        )
    except ValueError as error:
        return f"refused under {{ctx.revision}}: {{error}}"
    return f"checked under {{ctx.revision}}"
"""

CASES: tuple[Case, ...] = (
    Case(
        "i_progress_ext_only",
        {"2025": _identity, "ext": add_progress_field},
        user_code=_FIELDS_CODE,
        tools=_FIELDS_TOOLS,
    ),
)
