"""What the checker reads of a revision: the tool kinds, the ``Rules`` where the
revisions' servers behave differently, and the ``SchemaCheck``s the schema decides
(both rendered into the generated ``checks_<revision>`` modules)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

__all__ = ["KINDS", "Rules", "SchemaCheck"]

KINDS = ("completes", "fails", "input", "long")
"""The tool kinds a user names (``--tool KIND=NAME``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Rules:
    """Where the revisions' servers behave differently (from the revision profile)."""

    create_wrapper: str
    """The key of the task in a task-creating result and request ("": flat,
    unrequested)."""
    create_status_initial: bool
    """A new task must be in the initial status."""
    cancel_returns_task: bool
    """``tasks/cancel`` answers with the task (else an acknowledgement)."""
    cancel_cooperative: bool
    """A cancelled task may still end in another terminal status (the server only
    promises to try); else it must end ``cancelled``."""
    cancel_terminal_error: int
    """The error for cancelling a terminal task (0: unspecified)."""
    tool_error_fails: bool
    """A tool result with ``isError`` makes the task ``failed`` (else ``completed``)."""
    task_required_errors: tuple[int, ...]
    """The errors for a tools/call whose task mode is wrong."""
    role_capabilities: tuple[tuple[str, tuple[str, ...]], ...]
    """Method role -> path below the server's ``tasks`` capability that must declare
    it."""
    routing_headers: bool
    """Requests carry ``Mcp-Method``/``Mcp-Name``, which the server must check."""
    header_mismatch_error: int
    missing_capability_error: int
    meta_required: bool
    """Every request must carry the per-request ``_meta`` (else ``-32602``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaCheck:
    """One check the schema decides (rendered into ``checks_<revision>``)."""

    id: str
    kind: Literal["method", "create", "result", "notification", "status"]
    title: str
    method: str = ""
    role: str = ""
    status: str = ""
    params: tuple[str, ...] = ()
    model: type[BaseModel] | None = None
