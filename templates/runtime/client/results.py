"""How a client reads what a server answered: :class:`ResultReader`, the part that
tells a result's kind, checks that a result is one the request allows, decodes a task
state and turns an error response into its typed error, as the revision's tables
say."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from ..jsonrpc import INVALID_PARAMS, JsonRpcError, json_object
from ..protocol import TaskState
from ..revision import RevisionTables
from .codec import decode_state
from .errors import ERRORS_BY_NAME, InvalidResponse

__all__ = ["ResultReader"]

_ACKNOWLEDGED = ("update", "cancel")


class ResultReader:
    """Reads one revision's results and error responses.

    ``errors`` maps an error code to its typed error (besides those of
    :data:`~.errors.ERRORS_BY_NAME` whose codes the schema's ``ErrorCode`` lists);
    ``not_found`` a method role to the typed error of ``-32602`` (unknown task) on it.
    """

    def __init__(
        self,
        tables: RevisionTables,
        *,
        errors: Mapping[int, type[JsonRpcError]],
        not_found: Mapping[str, type[JsonRpcError]],
    ) -> None:
        """Read the results of the revision of ``tables``."""
        self.tables = tables
        self.not_found = dict(not_found)
        codes = getattr(tables.models, "ErrorCode", ())
        self.error_types: dict[int, type[JsonRpcError]] = {
            **{
                int(c): ERRORS_BY_NAME[c.name]
                for c in codes
                if c.name in ERRORS_BY_NAME
            },
            **errors,
        }
        """Error code -> the typed error raised for it."""

    def kind(self, result: Mapping[str, Any]) -> str:
        """What a result is: ``complete``, ``task`` or ``input_required``, by the
        schema's result kind field (missing: ``complete``), else by the create
        result's shape."""
        tables = self.tables
        if tables.results_say_their_kind:
            value = result.get(tables.result_kind_field)
            return value if isinstance(value, str) else "complete"
        if "task" in tables.create_result.model_fields:
            return "task" if json_object(result.get("task")) is not None else "complete"
        return "task" if tables.task_fields["task_id"] in result else "complete"

    def state(self, raw: Mapping[str, Any]) -> TaskState:
        """Decode a ``tasks/get`` result (or a status notification) by its status."""
        if self.tables.results_say_their_kind and self.kind(raw) != "complete":
            kind = self.tables.result_kind_field
            raise InvalidResponse(f"a task state must have {kind} 'complete'")
        return cast(TaskState, decode_state(raw, self.tables))

    def check(
        self, method: str, result: dict[str, Any], *, tasks_declared: bool
    ) -> dict[str, Any]:
        """Check a result's kind before it is returned (raise :class:`InvalidResponse`):
        a task only for ``tools/call`` with Tasks declared (``tasks_declared``: the
        client declares the Tasks extension, where Tasks are one), and a cancel or
        update acknowledged as ``complete``."""
        tables = self.tables
        if not tables.results_say_their_kind:
            return result
        kind = self.kind(result)
        declared = tasks_declared or not tables.is_extension
        if kind == "task" and (method != "tools/call" or not declared):
            raise InvalidResponse(f"a task was returned for {method} unasked")
        spec = tables.methods.get(method)
        if spec is not None and spec.role in _ACKNOWLEDGED and kind != "complete":
            field = tables.result_kind_field
            raise InvalidResponse(f"an acknowledgement must have {field} 'complete'")
        return result

    def error(self, method: str, error: JsonRpcError) -> JsonRpcError:
        """Return the typed form of an error response to ``method``."""
        spec = self.tables.methods.get(method)
        kind = self.not_found.get(spec.role) if spec is not None else None
        if error.code != INVALID_PARAMS or kind is None:
            kind = self.error_types.get(error.code)
        return kind(error.code, error.message, error.data) if kind else error
