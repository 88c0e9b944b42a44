"""``tools/list`` and ``tools/call``: a tool run inline, or as a task whose worker
runs in the background (``ToolCalls.work``); the MRTR preflight and the task request
of each revision."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, cast

from ..jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JsonRpcError
from ..stores import TaskRecord
from .limits import check_result, input_responses
from .tools import Tool, ToolContext, ToolError
from .wire import json_integer, text_result, tool_result, unmanaged_params

if TYPE_CHECKING:
    from .dispatch import Call
    from .host import Host

_log = logging.getLogger(__name__)


class ToolCalls:
    """Serves ``ping``, ``tools/list`` and ``tools/call`` for one server."""

    def __init__(self, host: Host) -> None:
        self.host = host
        tool_model = getattr(host.tables.models, "Tool", None)
        self.lists_output_schema = tool_model is not None and any(
            (info.serialization_alias or name) == "outputSchema"
            for name, info in tool_model.model_fields.items()
        )
        """Whether the revision's ``Tool`` has ``outputSchema`` (typed tools')."""

    async def ping(self, call: Call) -> dict[str, Any]:
        """``ping``: an empty result."""
        return self.host.views.complete({})

    async def tools_list(self, call: Call) -> dict[str, Any]:
        """The ``tools/list`` result (the revision's ``listing``)."""
        return self.host.listing([self.tool_wire(t) for t in self.host.registry.tools])

    async def call_tool(self, call: Call) -> dict[str, Any]:
        """Run a tool synchronously, or create a task and run it in the background."""
        tool, arguments = self.host.registry.called(call.params, self.host.limits)
        values = tool.handler_arguments(arguments)  # a typed tool's, before any task
        meta = call.params.get("_meta")
        token = (
            cast(dict[str, Any], meta).get("progressToken")
            if isinstance(meta, dict)
            else None
        )
        ctx = ToolContext(
            self.host,
            tool=tool,
            principal=call.principal,
            client_capabilities=call.capabilities,
            session=call.session,
            progress_token=token if isinstance(token, (str, int)) else None,
            emit=call.emit,
        )
        ctx.request_params = unmanaged_params(self.host.tables, "create", call.params)
        asked = await self.preflight(call, ctx, arguments)
        if asked is not None:
            return asked
        as_task, ttl = self.task_request(call, tool)
        if not as_task:
            try:
                result = tool_result(await tool.handler(ctx, values))
            except ToolError as error:
                result = text_result(str(error), is_error=True)
            check_result(self.host.limits, tool.name, result, stored=False)
            return self.host.views.complete(result)
        record = await self.host.lifecycle.new_task(tool, call.principal, ttl)
        ctx.task_id = record.task_id
        if ctx.session is not None:  # it gets the task's status notifications
            self.host.notifications.task_sessions[record.task_id] = ctx.session
        # in process by default (``Lifecycle.spawn`` of ``work``); see server.executor
        await self.host.executor.launch(self.host, record, ctx, arguments, values)
        within_ms = self.answer_within_ms(tool)
        if within_ms > 0:
            answer = await self.answer_inline(record, ctx, within_ms)
            if answer is not None:
                return answer
        return self.host.views.created(record, ctx.tool)

    def answer_within_ms(self, tool: Tool) -> int:
        """How long a call of ``tool`` that runs as a task may wait for its result to
        answer with it instead of the task: ``Tool.answer_within_ms``, else
        ``Limits.answer_within_ms``; 0 where the client asked for the task (the
        revision's ``task_request_field``: it must get one)."""
        if self.host.tables.client_asks_for_tasks:
            return 0
        if tool.answer_within_ms is not None:
            return tool.answer_within_ms
        return self.host.limits.answer_within_ms

    async def answer_inline(
        self, record: TaskRecord, ctx: ToolContext, within_ms: int
    ) -> dict[str, Any] | None:
        """The new task's outcome when its tool finishes within ``within_ms``: its
        result, or its JSON-RPC error raised; the task is then deleted (the client
        never learns of it). None when the tool is still running, asks for input or
        ended otherwise (cancelled, say): the call is answered with the task."""
        task_id = record.task_id
        worker = self.host.lifecycle.workers.get(task_id)
        if worker is None:
            return None
        settling = ctx.settling = asyncio.Event()
        worker.add_done_callback(lambda _: settling.set())
        try:
            await asyncio.wait_for(settling.wait(), within_ms / 1000)
        except asyncio.TimeoutError:
            return None
        finally:
            ctx.settling = None
        if not worker.done():  # it asks for input
            return None
        ended = await self.host.store.get(task_id)
        if ended is None:
            return None
        error = ended.error
        if ended.status == self.host.tables.completed and ended.result is not None:
            answer: dict[str, Any] | None = dict(ended.result)
        elif ended.status == self.host.tables.failed and error is not None:
            answer = None
        else:
            return None
        await self.host.store.delete([task_id])
        self.host.emit_audit("answered_inline", task_id, ended.owner)
        if answer is None:
            assert error is not None
            raise JsonRpcError(error["code"], error["message"], error.get("data"))
        return answer

    async def work(
        self, task_id: str, ctx: ToolContext, arguments: dict[str, Any]
    ) -> None:
        """Run a tool as a task and store its outcome.

        A result completes the task (or fails it, keeping the result, where the
        revision says an ``isError`` result does); a ``JsonRpcError`` or an unexpected
        exception fails it with that error.
        """
        try:
            try:
                try:
                    await self.started(task_id)
                    result = tool_result(await ctx.tool.handler(ctx, arguments))
                finally:  # from here on the worker stores the outcome (see _resync)
                    self.host.lifecycle.storing.add(task_id)
            except ToolError as error:
                result = text_result(str(error), is_error=True)
            except JsonRpcError as error:
                await self.host.lifecycle.finish(
                    task_id, self.host.tables.failed, error=error
                )
                return
            except Exception as exc:  # the tool's bug must not kill the server
                _log.exception("tool %s failed", ctx.tool.name)
                internal = JsonRpcError(
                    INTERNAL_ERROR,
                    f"Internal error in tool {ctx.tool.name!r}: {type(exc).__name__}",
                )
                await self.host.lifecycle.finish(
                    task_id, self.host.tables.failed, error=internal
                )
                return
            result = self.host.views.complete(result)
            try:
                check_result(self.host.limits, ctx.tool.name, result, stored=True)
            except JsonRpcError as error:
                await self.host.lifecycle.finish(
                    task_id, self.host.tables.failed, error=error
                )
                return
            if not self.host.failed_result(result):
                await self.host.lifecycle.finish(
                    task_id, self.host.tables.completed, result=result
                )
                return
            blocks: list[Any] = result.get("content", [])
            texts = [
                str(cast(dict[str, Any], block)["text"])
                for block in blocks
                if isinstance(block, dict) and "text" in block
            ]
            message = "Tool reported an error: " + (" ".join(texts) or "no details")
            await self.host.lifecycle.finish(
                task_id, self.host.tables.failed, result=result, status_message=message
            )
        finally:
            ctx.finished = True
            self.host.lifecycle.storing.discard(task_id)
            self.host.lifecycle.contexts.pop(task_id, None)
            self.host.inputs.task_ended(task_id)

    async def started(self, task_id: str) -> None:
        """The tool starts: a task created in another initial status than
        ``working`` (``queued``, configured) moves on to ``working``."""
        tables = self.host.tables
        if tables.initial != tables.working:

            def start(record: TaskRecord) -> dict[str, Any] | None:
                return (
                    {"status": tables.working}
                    if record.status == tables.initial
                    else None
                )

            await self.host.lifecycle.mutate(task_id, start)

    def tool_wire(self, tool: Tool) -> dict[str, Any]:
        """A ``Tool`` entry for ``tools/list``, with its ``execution.taskSupport`` where
        the client asks for a task (the tables' ``task_request_field``)."""
        wire: dict[str, Any] = {"name": tool.name, "inputSchema": tool.input_schema}
        if tool.title is not None:
            wire["title"] = tool.title
        if tool.description:
            wire["description"] = tool.description
        if tool.output_schema is not None and self.lists_output_schema:
            wire["outputSchema"] = tool.output_schema
        if self.host.tables.client_asks_for_tasks:
            wire["execution"] = {"taskSupport": tool.task_support}
        return wire

    async def preflight(
        self, call: Call, ctx: ToolContext, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        """A result that answers ``tools/call`` before any work, or None.

        Where results name their kind (multi-round-trip requests, MRTR), the call's
        ``inputResponses`` go to ``ctx.input_responses`` and the tool's preflight
        questions, if it asks any, are the ``input_required`` result.
        """
        tables = self.host.tables
        if not tables.results_say_their_kind:
            return None
        kind = tables.result_kind_field
        ctx.input_responses = input_responses(
            self.host.limits, call.params.get("inputResponses", {})
        )
        if ctx.tool.preflight is None:
            return None
        requests = await ctx.tool.preflight(ctx, arguments)
        if not requests:
            return None
        for request in requests.values():
            method = str(request.get("method"))
            self.host.inputs.require_capability(ctx, method)
        return {kind: "input_required", "inputRequests": requests}

    def task_request(self, call: Call, tool: Tool) -> tuple[bool, int | None]:
        """Whether ``tools/call`` runs as a task, and the TTL asked for.

        Where the client asks for a task (``params.<task_request_field>``, honoured
        only while the ``create`` capability is declared), the tool's ``taskSupport``
        must allow what it asked (else ``task_mismatch_code``). Elsewhere the server
        decides: a task whenever the request declared Tasks and the tool allows one;
        a task-only tool in a request that did not is ``tasks_not_declared``.
        """
        if not self.host.tables.client_asks_for_tasks:
            if call.tasks and tool.task_support != "forbidden":
                return True, None
            if tool.task_support == "required":
                raise self.host.tasks_not_declared(f"tool {tool.name!r}")
            return False, None
        field = self.host.tables.task_request_field
        task = call.params.get(field) if self.host.declares("create") else None
        if task is not None and tool.task_support == "forbidden":
            raise JsonRpcError(
                self.host.task_mismatch_code,
                f"Tool {tool.name!r} does not support task-augmented calls",
            )
        if task is None and tool.task_support == "required":
            raise JsonRpcError(
                self.host.task_mismatch_code,
                "Task augmentation required for tools/call requests to tool"
                f" {tool.name!r}",
            )
        if task is None:
            return False, None
        if not isinstance(task, dict):
            raise JsonRpcError(INVALID_PARAMS, f"params.{field} must be an object")
        ttl = cast(dict[str, Any], task).get("ttl")
        if ttl is None:
            return True, None
        return True, json_integer(ttl, f"params.{field}.ttl")
