"""Input the server asks the client for: the handler types (:class:`InputContext`,
:data:`InputHandler`) and :class:`InputAnswerer`, the part of a client that holds the
registered handlers and answers input requests with them, whether they come listed in a
result or a task (``inputRequests``) or as server-to-client requests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from ..input_types import InputContext, InputHandler, TypedInputContext
from ..jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    JsonRpcError,
    json_object,
)
from ..revision import INPUT_CAPABILITIES, RevisionTables
from .codec import answer_to_wire, to_wire
from .errors import InputNotHandled

__all__ = [
    "InputAnswerer",
    "InputContext",
    "InputHandler",
    "InputNotHandled",
    "TypedInputContext",
]


class InputAnswerer:
    """The registered input handlers of one client, and the answers they give.

    ``handlers`` maps an input request method (``elicitation/create``, ...: the
    revision's ``tables.inputs``) to its handler; each one is declared in the client
    capabilities. A listed request whose method has no handler raises
    :class:`InputNotHandled` naming it; a sent one is refused (``-32601``) and
    ``unhandled`` is told, so that the wait on its task ends at once.
    """

    def __init__(
        self, tables: RevisionTables, handlers: Mapping[str, InputHandler]
    ) -> None:
        """Hold ``handlers`` for the revision of ``tables``."""
        self.tables = tables
        self.handlers: dict[str, InputHandler] = dict(handlers)
        """Input request method -> its handler (mutable: a handler may be added)."""
        self.unhandled: Callable[[InputNotHandled], None] | None = None
        """Told of a server-to-client request refused for want of a handler."""

    @classmethod
    def of(
        cls,
        tables: RevisionTables,
        handlers: Mapping[str, InputHandler],
        shorthands: tuple[InputHandler | None, ...],
    ) -> InputAnswerer:
        """The answerer of ``handlers`` plus the shorthand handlers of the methods of
        ``INPUT_CAPABILITIES``, in order (``elicitation_handler``, ...); a method
        given both ways is a ``TypeError``."""
        merged = dict(handlers)
        for method, handler in zip(INPUT_CAPABILITIES, shorthands, strict=True):
            if handler is None:
                continue
            if method in merged:
                name = f"{INPUT_CAPABILITIES[method]}_handler"
                raise TypeError(
                    f"{method} has a handler in input_handlers and in {name}: give"
                    " it one"
                )
            merged[method] = handler
        return cls(tables, merged)

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities the handlers declare: one entry per handler (the
        capability of its method in the revision's input table)."""
        return {
            self.tables.input_method(method).capability: {} for method in self.handlers
        }

    async def answer(
        self, method: str, params: dict[str, Any], task_id: str | None, key: str | None
    ) -> dict[str, Any] | None:
        """Run the handler registered for one input request; ``None`` leaves it
        unanswered. The handler gets the params validated by the generated model
        (``JsonRpcError`` -32602 when they are invalid); without a handler,
        :class:`InputNotHandled`."""
        handler = self.handlers.get(method)
        if handler is None:
            raise InputNotHandled(method, task_id)
        try:
            request = self.tables.input_method(method).parse_params(params)
        except ValueError as error:
            raise JsonRpcError(
                INVALID_PARAMS, f"invalid params of {method}: {error}"
            ) from None
        context = TypedInputContext(method, params, task_id, key, request=request)
        answer = await handler(context)
        return answer_to_wire(answer) if answer is not None else None

    async def answer_all(
        self, requests: Mapping[str, object], task_id: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """Answer an ``inputRequests`` map (key -> request, a model or its wire form)
        with the registered handlers: the answers by key, keys left unanswered by
        their handler left out. A request whose method has no handler raises
        :class:`InputNotHandled` (before any handler runs)."""
        entries: dict[str, tuple[str, dict[str, Any]]] = {}
        for key, request in requests.items():
            wire = to_wire(request) if isinstance(request, BaseModel) else request
            entry = json_object(wire) or {}
            method = str(entry.get("method"))
            if method not in self.handlers:
                raise InputNotHandled(method, task_id)
            entries[key] = (method, json_object(entry.get("params")) or {})
        responses: dict[str, dict[str, Any]] = {}
        for key, (method, params) in entries.items():
            answer = await self.answer(method, params, task_id, key)
            if answer is not None:
                responses[key] = answer
        return responses

    async def on_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Answer a server-to-client request: ``ping``, or an input request with its
        registered handler, echoing the related-task ``_meta`` when the schema has
        that key (how a ``tasks/result`` stream carries a task's input requests)."""
        if method == "ping":
            return {}
        key = self.tables.meta_keys.get("RELATED_TASK")
        meta = json_object(params.get("_meta")) or {}
        related = json_object(meta.get(key)) if key is not None else None
        task_id = related.get(self.tables.task_fields["task_id"]) if related else None
        if method not in self.handlers:
            if self.unhandled is not None:
                self.unhandled(
                    InputNotHandled(
                        method, task_id if isinstance(task_id, str) else None
                    )
                )
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        answer = await self.answer(
            method, params, task_id if isinstance(task_id, str) else None, None
        )
        if answer is None:
            raise JsonRpcError(INTERNAL_ERROR, f"no answer to {method}")
        if key is not None and related is not None:
            result_meta = json_object(answer.get("_meta")) or {}
            answer["_meta"] = {**result_meta, key: related}
        return answer
