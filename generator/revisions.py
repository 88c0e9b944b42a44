"""What each supported Tasks revision is: facts the schema itself does not carry.

Input: nothing (constants). Output: ``Revision`` records used by detect, extract and
normalize.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorCodeSpec:
    """A JSON-RPC error code and when the revision uses it."""

    name: str
    code: int
    doc: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Revision:
    """A Tasks revision the generator knows."""

    id: str
    title: str
    is_extension: bool
    marker_methods: frozenset[str]  # methods only this revision has
    extra_roots: tuple[str, ...]  # non-Task definitions that belong to its surface
    error_codes: tuple[ErrorCodeSpec, ...]


_COMMON_CODES = (
    ErrorCodeSpec(
        name="PARSE_ERROR", code=-32700, doc="The message is not valid JSON."
    ),
    ErrorCodeSpec(
        name="INVALID_REQUEST", code=-32600, doc="The message is not a valid request."
    ),
    ErrorCodeSpec(
        name="METHOD_NOT_FOUND",
        code=-32601,
        doc="The method does not exist or is not available.",
    ),
    ErrorCodeSpec(
        name="INVALID_PARAMS",
        code=-32602,
        doc="Invalid parameters; also an unknown, expired or foreign task ID.",
    ),
    ErrorCodeSpec(
        name="INTERNAL_ERROR", code=-32603, doc="The receiver failed internally."
    ),
)

CORE_2025_11_25 = Revision(
    id="2025-11-25",
    title="MCP 2025-11-25 experimental Tasks",
    is_extension=False,
    marker_methods=frozenset({"tasks/result", "notifications/tasks/status"}),
    extra_roots=(
        "CallToolRequest",
        "CallToolResult",
        "ClientCapabilities",
        "CreateMessageRequest",
        "CreateMessageResult",
        "ElicitRequest",
        "ElicitResult",
        "Error",
        "ServerCapabilities",
        "Tool",
        "ToolExecution",
    ),
    error_codes=_COMMON_CODES,
)

EXTENSION = Revision(
    id="ext-2026-07-28",
    title="MCP Tasks extension io.modelcontextprotocol/tasks (with core 2026-07-28)",
    is_extension=True,
    marker_methods=frozenset({"tasks/update", "notifications/tasks"}),
    extra_roots=("InputRequests", "InputResponses"),
    error_codes=(
        *_COMMON_CODES,
        ErrorCodeSpec(
            name="HEADER_MISMATCH",
            code=-32020,
            doc="Mcp-Method or Mcp-Name is missing or does not match the body.",
        ),
        ErrorCodeSpec(
            name="MISSING_REQUIRED_CLIENT_CAPABILITY",
            code=-32021,
            doc=(
                "The request did not declare a capability the server needs (e.g. the"
                " Tasks extension)."
            ),
        ),
        ErrorCodeSpec(
            name="UNSUPPORTED_PROTOCOL_VERSION",
            code=-32022,
            doc="The server does not speak the requested protocol version.",
        ),
    ),
)

REVISIONS = {r.id: r for r in (CORE_2025_11_25, EXTENSION)}
ALIASES = {
    "2025": CORE_2025_11_25.id,
    "extension": EXTENSION.id,
    "ext": EXTENSION.id,
    "2026-07-28": EXTENSION.id,
}
DEFAULT_SCHEMA = (
    EXTENSION.id
)  # the embedded schema ``embedded_schema()`` names by default
DEFAULT_SCHEMAS = (CORE_2025_11_25.id, EXTENSION.id)
"""The embedded schemas generated when none is given: one package speaking both
revisions."""
