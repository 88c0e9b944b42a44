"""How a client calls a tool: :class:`ToolCalls`, the part that sends ``tools/call``
(asking for a task where the schema's call params can, else reading the result's kind),
answers the input a result asks for and retries, and follows the task the call
created."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from pydantic import BaseModel

from ..jsonrpc import INVALID_REQUEST, METHOD_NOT_FOUND, JsonRpcError, json_object
from ..protocol import TaskSnapshot
from .codec import decode_as, wire_value
from .errors import (
    CapabilityNotDeclared,
    InvalidResponse,
    TaskAugmentationRequired,
    TaskRequired,
    TasksClientError,
)
from .handle import TaskHandle
from .notifications import ProgressCallback
from .tasks import paged

if TYPE_CHECKING:
    from .core import ClientCore

__all__ = ["ToolCalls"]

R = TypeVar("R")
"""The revision's own form of a tool result (see ``ClientCore``)."""

_RETRY_KEYS = ("inputResponses", "requestState")
_TASK_NEEDED = (INVALID_REQUEST, METHOD_NOT_FOUND)


class ToolCalls(Generic[R]):
    """The ``tools/call`` exchanges of one client, and the tools it has seen.

    It sends through the client (its requests, options, capability checks, input
    handlers and task ID store).
    """

    def __init__(self, client: ClientCore[R]) -> None:
        """Call tools through ``client``."""
        self.client = client
        self.tables = client.tables
        self.tools: dict[str, dict[str, Any]] = {}
        """The tools seen in ``tools/list``, by name."""

    async def start(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        task: bool | None,
        ttl: int | None,
        on_progress: ProgressCallback | None,
        given: Mapping[str, object] | None = None,
    ) -> TaskHandle[Any]:
        """Send ``tools/call`` and return a handle (see ``ClientCore.start_tool``);
        ``given``: the call's params that the schema adds."""
        client = self.client
        call: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        params = self.tables.request_params("create", given or {}, call)
        asked = await self._task_request(name, task, ttl)
        token = client.notifications.track_progress(on_progress)
        if token is not None:
            params["_meta"] = {"progressToken": token}
        try:
            for _ in range(client.max_input_rounds):
                result = await self._call(params, asked)
                kind = client.result_kind(result)
                if kind == "task":
                    forget = functools.partial(
                        client.notifications.forget_progress, token
                    )
                    return await self.adopt(result, name, on_finish=forget)
                if kind == "complete":
                    client.notifications.forget_progress(token)
                    outcome = client.outcome(result)
                    return TaskHandle(client, None, result=outcome, tool=name)
                if kind != "input_required":
                    raise InvalidResponse(
                        f"unknown result kind {kind!r} for tools/call"
                    )
                params = await self._retry_params(params, result)
            raise InvalidResponse(
                f"tools/call still needs input after {client.max_input_rounds} rounds"
            )
        except BaseException as error:
            client.notifications.forget_progress(token)
            if isinstance(error, ValueError):
                message = "tools/call returned neither a task nor a tool result"
                raise InvalidResponse(message) from None
            raise

    async def _task_request(
        self, name: str, task: bool | None, ttl: int | None
    ) -> dict[str, Any] | None:
        """The ``params.task`` to send with a call of tool ``name`` (``None``: a call
        without one); raise when ``task`` or ``ttl`` cannot be honoured."""
        client = self.client
        if not self.tables.client_asks_for_tasks:
            if task is not None or ttl is not None:
                raise TasksClientError(
                    "the server decides whether a call runs as a task:"
                    " task= and ttl= cannot be sent"
                )
            return None
        # "ttl": the TaskMetadata field the profile checks
        asked = {"ttl": ttl} if ttl is not None else {}
        if not client.supports_task_tools():
            if task:
                client.require_declared("create")
            return None
        support = await self.task_support(name)
        if support == "required":
            if task is False:
                raise TaskRequired(f"tool {name!r} must run as a task")
            return asked
        if support == "optional":
            return asked if (client.prefer_tasks if task is None else task) else None
        if task:
            raise CapabilityNotDeclared(f"tool {name!r} does not support tasks")
        return None

    async def task_support(self, name: str) -> str:
        """The tool's ``execution.taskSupport`` (``"forbidden"`` when absent or
        unknown)."""
        if name not in self.tools:
            await self.list_tools()
        execution = json_object(self.tools.get(name, {}).get("execution")) or {}
        support = execution.get("taskSupport")
        return support if isinstance(support, str) else "forbidden"

    async def _call(
        self, params: dict[str, Any], asked: dict[str, Any] | None
    ) -> dict[str, Any]:
        """Send ``tools/call``, asking for a task when ``asked`` is set. A call
        without one that the server refuses because the tool needs a task is retried
        as a task with ``retry_with_task``, else raised as
        :class:`TaskAugmentationRequired`."""
        client, tables = self.client, self.tables
        if asked is None and tables.client_asks_for_tasks:
            try:
                return await client.request("tools/call", self._call_params(params))
            except JsonRpcError as error:
                if error.code not in _TASK_NEEDED:
                    raise
                if not (client.retry_with_task and client.supports_task_tools()):
                    raise TaskAugmentationRequired(
                        error.code, error.message, error.data
                    ) from None
                asked = {}
        if asked is not None:
            params = {**params, tables.task_request_field: asked}
        return await client.request("tools/call", self._call_params(params))

    def _call_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """``tools/call`` params through the schema's ``CallToolRequestParams``,
        where it has one (a malformed value fails here, before anything is sent)."""
        model = getattr(self.tables.models, "CallToolRequestParams", None)
        if not isinstance(model, type) or not issubclass(model, BaseModel):
            return params
        return model.model_validate(params).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )

    async def _retry_params(
        self, params: dict[str, Any], result: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The params of the retry after an ``input_required`` result: the answers to
        its ``inputRequests`` and its ``requestState``."""
        retry = {k: v for k, v in params.items() if k not in _RETRY_KEYS}
        requests = json_object(result.get("inputRequests")) or {}
        responses = await self.client.inputs.answer_all(requests)
        if responses:
            retry["inputResponses"] = responses
        state = result.get("requestState")
        if isinstance(state, str):
            retry["requestState"] = state
        return retry

    async def adopt(
        self,
        result: Mapping[str, Any],
        name: str,
        *,
        on_finish: Callable[[], object] | None = None,
    ) -> TaskHandle[Any]:
        """Follow the task a ``tools/call`` created (see ``ClientCore.adopt``)."""
        client, tables, data = self.client, self.tables, dict(result)
        nested = "task" in tables.create_result.model_fields
        if nested:
            inner = json_object(data.get("task")) or {}
            data["task"] = decode_as(tables.task_model, inner, tables)
        created = decode_as(tables.create_result, data, tables)
        task = cast(TaskSnapshot, getattr(created, "task") if nested else created)
        key = tables.meta_keys.get("MODEL_IMMEDIATE_RESPONSE")
        meta = json_object(wire_value(created, "_meta")) or {}
        immediate = meta.get(key) if key is not None else None
        context = {"method": "tools/call", "name": name, **client.call_context()}
        return await client.created(
            task,
            context,
            model_immediate_response=immediate if isinstance(immediate, str) else None,
            on_finish=on_finish,
        )

    async def list_tools(self) -> list[dict[str, Any]]:
        """``tools/list``: every tool, following ``nextCursor``; also kept in
        :attr:`tools`."""
        tools: list[dict[str, Any]] = []
        async for entry in paged(self.client.request, "tools/list", "tools"):
            tool = json_object(entry)
            if tool is not None:
                tools.append(tool)
                self.tools[str(tool.get("name"))] = tool
        return tools
