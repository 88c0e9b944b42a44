"""The Tasks requests of a client: :class:`TaskRequests`, the part that sends the
methods the revision's tables name by role (``get``, ``cancel``, ``result``,
``update``, ``list``) and reads their answers; and :func:`paged`, the walk over a
paginated listing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from pydantic import BaseModel

from ..jsonrpc import json_object
from ..protocol import TaskState
from .codec import answer_to_wire, decode_as
from .errors import TasksClientError

if TYPE_CHECKING:
    from .core import ClientCore

__all__ = ["TaskRequests", "paged"]

R = TypeVar("R")
"""The revision's own form of a tool result (see ``ClientCore``)."""


async def paged(
    request: Callable[[str, Mapping[str, Any]], Awaitable[dict[str, Any]]],
    method: str,
    key: str,
    params: Callable[[dict[str, Any]], dict[str, Any]] = dict,
) -> AsyncIterator[object]:
    """The entries under ``key`` of every page of a paginated ``method`` sent with
    ``request``, following ``nextCursor``; ``params`` completes each page's params
    (the cursor) with the others of the request."""
    cursor: str | None = None
    while True:
        page = await request(
            method, params({"cursor": cursor} if cursor is not None else {})
        )
        listed = page.get(key)
        for entry in cast("list[object]", listed if isinstance(listed, list) else []):
            yield entry
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str):
            return


class TaskRequests(Generic[R]):
    """Sends one client's Tasks requests, each to the method that plays its role in
    the revision, through the client (its requests, decoding, capability checks and
    task ID store).

    Each request's params that the runtime does not manage (a schema adds them) are
    keyword arguments of the client's calls (``protocol.GetTaskParams``, ...), here
    ``given``; a value configured at generation (``--param``) is a keyword's default,
    and what the runtime sends when it sends the request on its own (the polling
    loop's ``tasks/get``, ...): see ``RevisionTables.request_params``."""

    def __init__(self, client: ClientCore[R]) -> None:
        """Send the Tasks requests of ``client``."""
        self.client = client
        self.tables = client.tables

    def _params(self, task_id: str) -> dict[str, Any]:
        return {self.tables.task_fields["task_id"]: task_id}

    async def get(
        self, task_id: str, given: Mapping[str, object] | None = None
    ) -> TaskState:
        """``tasks/get``: the task's current state (one class per status); ``given``:
        the request's other params (the configured values otherwise)."""
        wire = self.tables.request_params("get", given or {}, self._params(task_id))
        result = await self.client.request(self.tables.method("get"), wire)
        return self.client.decode(result)

    async def cancel(
        self, task_id: str, given: Mapping[str, object] | None = None
    ) -> TaskState | None:
        """``tasks/cancel`` (see ``ClientCore.cancel_task``)."""
        client = self.client
        client.require_declared("cancel")
        wire = self.tables.request_params("cancel", given or {}, self._params(task_id))
        result = await client.request(self.tables.method("cancel"), wire)
        state = client.cancelled(result)
        if not client.poll_after_cancel:
            await client.store.delete(task_id)
        return state

    async def payload(
        self, task_id: str, given: Mapping[str, object] | None = None
    ) -> dict[str, Any]:
        """``tasks/result`` (see ``ClientCore.get_task_payload``)."""
        if not self.tables.has_role("result"):
            raise TasksClientError("this revision's schema defines no tasks/result")
        wire = self.tables.request_params("result", given or {}, self._params(task_id))
        return await self.client.request(self.tables.method("result"), wire)

    async def update(
        self,
        task_id: str,
        input_responses: Mapping[str, Mapping[str, Any] | BaseModel],
        given: Mapping[str, object] | None = None,
    ) -> None:
        """``tasks/update`` (see ``ClientCore.update_task``)."""
        if not self.tables.has_role("update"):
            raise TasksClientError("this revision's schema defines no tasks/update")
        params = self._params(task_id)
        params["inputResponses"] = {
            k: answer_to_wire(v) for k, v in input_responses.items()
        }
        wire = self.tables.request_params("update", given or {}, params)
        await self.client.request(self.tables.method("update"), wire)

    async def list(self, given: Mapping[str, object] | None = None) -> list[TaskState]:
        """``tasks/list`` (see ``ClientCore.list_tasks``)."""
        tables = self.tables
        if not tables.has_role("list"):
            raise TasksClientError("this revision's schema defines no tasks/list")
        self.client.require_declared("list")
        tasks: list[TaskState] = []
        values = dict(given or {})

        def page_params(cursor: dict[str, Any]) -> dict[str, Any]:
            return tables.request_params("list", values, cursor)

        method = tables.method("list")
        async for entry in paged(self.client.request, method, "tasks", page_params):
            raw = json_object(entry) or {}
            task = decode_as(tables.task_model, raw, tables)
            tasks.append(cast(TaskState, task))
        return tasks
