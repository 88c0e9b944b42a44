"""Schema-edit cases of the extension identifier and of renamed methods.

The extension identifier is read from the schema's top-level title and description:
``io.modelcontextprotocol/tasks-v2`` there is what the package declares (one revision,
and a package of both revisions); two identifiers there, or none, stop generation
unless the target gives one (``--extension-id``). A method the runtime needs, renamed
in its definition's method constant, stops generation at that constant with the likely
new name: every required method of both revisions.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.spec_edits import Case, Revision, Schema, nodes

OLD_ID = "io.modelcontextprotocol/tasks"
V2_ID = "io.modelcontextprotocol/tasks-v2"
GIVEN_ID = "com.example/tasks"


def _top_level(edit: Callable[[str], str]) -> Callable[[Schema], Schema]:
    """An edit of the schema's title and description."""

    def apply(raw: Schema) -> Schema:
        for key in ("title", "description"):
            raw[key] = edit(raw[key])
        return raw

    return apply


def _to_v2(text: str) -> str:
    return text.replace(OLD_ID, V2_ID)


def _named_nowhere(text: str) -> str:
    return text.replace(f"identifier {OLD_ID}", "").replace(f" {OLD_ID}", "")


def _identity(raw: Schema) -> Schema:
    return raw


to_v2 = _top_level(_to_v2)
"""``io.modelcontextprotocol/tasks-v2`` in the title and the description."""


def several(raw: Schema) -> Schema:
    """The title names the old identifier, the description the new one."""
    raw["description"] = _to_v2(raw["description"])
    return raw


no_id = _top_level(_named_nowhere)
"""Neither the title nor the description names an identifier."""


def rename_method(old: str, new: str) -> Callable[[Schema], Schema]:
    """The method constant ``old`` becomes ``new`` wherever the schema has it."""

    def apply(raw: Schema) -> Schema:
        for node in nodes(raw):
            if node.get("const") == old:
                node["const"] = new
        return raw

    return apply


_V2_CODE = """\
from p_extid_v2.protocol import EXTENSION_ID as EXTID_V2_ID
from p_extid_given.protocol import EXTENSION_ID as EXTID_GIVEN_ID

EXTID_IDS: tuple[str, str] = (EXTID_V2_ID, EXTID_GIVEN_ID)
"""

_TASK_TOOLS = """
@server.tool(task_support="required")
async def slow(ctx: ToolContext, arguments: dict) -> str:
    await gate.wait()
    return "slow done"


@server.tool(task_support="optional")
async def either(ctx: ToolContext, arguments: dict) -> str:
    return "either done"
"""

RENAMES: tuple[tuple[Revision, str, str, str], ...] = (
    ("ext", "tasks/get", "tasks/status", "GetTaskRequest"),
    ("ext", "tasks/cancel", "tasks/abort", "CancelTaskRequest"),
    ("2025", "tasks/get", "tasks/status", "GetTaskRequest"),
    ("2025", "tasks/result", "tasks/outcome", "GetTaskPayloadRequest"),
    ("2025", "tasks/list", "tasks/enumerate", "ListTasksRequest"),
    ("2025", "tasks/cancel", "tasks/abort", "CancelTaskRequest"),
)
"""(schema, required method, new name, its definition): every method a revision's
runtime needs."""


def rename_case_name(revision: str, method: str) -> str:
    return f"extid_renamed_{revision}_{method.rsplit('/', 1)[1]}"


CASES: tuple[Case, ...] = (
    Case("extid_v2", {"ext": to_v2}, user_code=_V2_CODE, tools=_TASK_TOOLS),
    Case("extid_v2_dual", {"2025": _identity, "ext": to_v2}, tools=_TASK_TOOLS),
    Case("extid_several", {"ext": several}, refused="name 2 extension identifiers"),
    Case("extid_none", {"ext": no_id}, refused="name no extension identifier"),
    Case(
        "extid_given",
        {"ext": no_id},
        args=("--extension-id", GIVEN_ID),
        tools=_TASK_TOOLS,
    ),
    Case(
        "extid_not_named",
        {"ext": to_v2},
        args=("--extension-id", GIVEN_ID),
        refused=f'"{GIVEN_ID}" is not one the schema',
    ),
    Case(
        "extid_core_only",
        {"2025": _identity},
        args=("--extension-id", GIVEN_ID),
        refused="no schema of the target is the Tasks extension",
    ),
    *(
        Case(
            rename_case_name(revision, method),
            {revision: rename_method(method, new)},
            refused=f'"{definition}" now has method "{new}", likely its new name',
        )
        for revision, method, new, definition in RENAMES
    ),
)
