"""``TaskViews``: a stored task as the revision's wire shapes (its status variant, the
create result, the polling hint), with a cache of the latest wire forms."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

from ..jsonrpc import INTERNAL_ERROR
from ..protocol import TaskState
from ..stores import TaskRecord, kept_bytes
from .tools import Tool
from .wire import rfc3339, through

if TYPE_CHECKING:
    from .host import Host

WIRE_CACHE_SIZE = 1024
"""How many wire forms of tasks ``TaskViews.wire`` keeps (the latest made)."""

WIRE_CACHE_MAX_KEPT = 4096
"""The largest finished task (JSON bytes of its result and error) whose wire form
``TaskViews.wire`` keeps."""

_TOO_LARGE: dict[str, Any] = {}
"""The wire cache's mark for a finished task too large to keep."""


class TaskViews:
    """The wire shapes of tasks for one server (its revision's tables and limits)."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self._wire_cache: dict[tuple[str, float, str], dict[str, Any]] = {}
        self._poll_wire = list(host.tables.task_fields.values())[6]
        """The wire name of the task's poll interval field."""

    def complete(self, result: dict[str, Any]) -> dict[str, Any]:
        """Mark a result as final where results name their kind (the tables'
        ``result_kind_field``, ``resultType``)."""
        tables = self.host.tables
        if tables.results_say_their_kind:
            result[tables.result_kind_field] = "complete"
        return result

    def related(self, message: dict[str, Any], task_id: str) -> dict[str, Any]:
        """A copy of ``message`` (request params or a result) whose ``_meta`` names the
        task under the schema's related-task key (unchanged without one)."""
        key = self.host.tables.meta_keys.get("RELATED_TASK")
        if key is None:
            return dict(message)
        return {
            **message,
            "_meta": {**message.get("_meta", {}), key: {"taskId": task_id}},
        }

    def created(self, record: TaskRecord, tool: Tool) -> dict[str, Any]:
        """The create result of a new task, as the schema's model has it: the task
        under ``task`` or its fields inline, and the tool's ``immediate_response`` in
        ``_meta`` where the schema has that key. Its polling hint is a new task's
        (``Limits.first_poll_interval_ms``), however long the store took to write it.
        """
        tables = self.host.tables
        model = tables.create_result
        created: dict[str, Any] = (
            {"task": self.model(record, new=True)}
            if "task" in model.model_fields
            else self.values(record, new=True)
        )
        immediate = tables.meta_keys.get("MODEL_IMMEDIATE_RESPONSE")
        if immediate is not None and tool.immediate_response is not None:
            created["meta"] = {immediate: tool.immediate_response}
        return through(model, created)

    def status_payload(self, record: TaskRecord) -> dict[str, Any]:
        """Fields of the record's status variant beyond the common task fields: its
        ``inputRequests``, ``result`` or ``error``, as far as the variant's class has
        them (a required one is always filled in)."""
        fields = self.host.tables.task_by_status[record.status].model_fields
        payload: dict[str, Any] = {}
        if "input_requests" in fields:
            payload["input_requests"] = dict(record.input_requests)
        if "result" in fields and (record.result or fields["result"].is_required()):
            payload["result"] = record.result or {}
        if "error" in fields and (record.error or fields["error"].is_required()):
            fallback = {
                "code": INTERNAL_ERROR,
                "message": record.status_message or "Task failed",
            }
            payload["error"] = record.error or fallback
        return payload

    def model(self, record: TaskRecord, *, new: bool = False) -> TaskState:
        """The record as the generated model of its status (``TASK_BY_STATUS``);
        ``new``: with a new task's polling hint (``poll_hint``)."""
        values = self.values(record, new=new)
        values.update(self.status_payload(record))
        model = self.host.tables.task_by_status[record.status]
        return cast(TaskState, model.model_validate(values))

    def values(self, record: TaskRecord, *, new: bool = False) -> dict[str, Any]:
        """The task fields of a record by attribute name, for a generated task model.

        The fields the runtime manages, and the ``TaskFields`` tool code set
        (``record.extra``, by wire name, which the models accept as well); ``new``:
        with a new task's polling hint (``poll_hint``).
        """
        key, status, message, created, updated, ttl, poll = self.host.tables.task_fields
        values: dict[str, Any] = {
            key: record.task_id,
            status: record.status,
            created: rfc3339(record.created_at),
            updated: rfc3339(record.updated_at),
            ttl: record.ttl_ms,
        }
        if record.status_message is not None:
            values[message] = record.status_message
        if record.poll_interval_ms is not None:
            values[poll] = self.poll_hint(record, new=new)
        values.update(record.extra)
        return values

    def poll_hint(self, record: TaskRecord, *, new: bool = False) -> int | None:
        """The polling hint of the record now: ``Limits.poll_interval_at`` its age
        while it is live (``new``: age 0, the hint of the create result), the
        longest (stored) hint once it is terminal."""
        if record.is_terminal:
            return record.poll_interval_ms
        age_ms = 0.0 if new else (time.time() - record.created_at) * 1000
        return self.host.limits.poll_interval_at(age_ms, record.poll_interval_ms)

    def wire(self, record: TaskRecord) -> dict[str, Any]:
        """The wire form of ``model`` (a new dict; the nested values are shared).

        Every change of a task bumps its ``updated_at`` and a finished task never
        changes, so the wire form of one ``(task_id, updated_at, status)`` never
        changes: the last ones made (the tasks clients poll) are kept, except those of
        finished tasks whose result and error exceed ``WIRE_CACHE_MAX_KEPT`` bytes
        (only a mark is kept for those, so their size is measured once).
        """
        key = (record.task_id, record.updated_at, record.status)
        wire = self._wire_cache.get(key)
        if wire is None:
            wire = self.model(record).to_wire()
            large = record.is_terminal and kept_bytes(record) > WIRE_CACHE_MAX_KEPT
            self._wire_cache[key] = _TOO_LARGE if large else wire
            if len(self._wire_cache) > WIRE_CACHE_SIZE:
                self._wire_cache.pop(next(iter(self._wire_cache)))
        elif wire is _TOO_LARGE:
            return self.model(record).to_wire()
        wire = dict(wire)
        if not record.is_terminal and record.poll_interval_ms is not None:
            # a live task's hint grows with its age (``Limits.poll_interval_at``)
            wire[self._poll_wire] = self.poll_hint(record)
        return wire
