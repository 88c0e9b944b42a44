"""Input the server asks the client for: the handler types (:class:`InputContext`,
:data:`InputHandler`) and :class:`InputAnswerer`, the part of a client that holds the
registered handlers and answers input requests with them, whether they come listed in a
result or a task (``inputRequests``) or as server-to-client requests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from pydantic import BaseModel

from ..jsonrpc import INTERNAL_ERROR, METHOD_NOT_FOUND, JsonRpcError, json_object
from ..revision import INPUT_CAPABILITIES, RevisionTables
from .codec import answer_to_wire, to_wire

__all__ = ["InputAnswerer", "InputContext", "InputHandler"]


@dataclass(frozen=True)
class InputContext:
    """One request from the server for input, handed to a registered input handler.

    Attributes:
        method: ``"elicitation/create"``, ``"sampling/createMessage"`` or
            ``"roots/list"``.
        params: The request's ``params`` exactly as received (wire names).
        task_id: The task the request belongs to, when it is tied to one.
        key: The ``inputRequests`` key the request was listed under, when it came
            that way.
    """

    method: str
    params: dict[str, Any]
    task_id: str | None = None
    key: str | None = None


InputHandler: TypeAlias = Callable[
    [InputContext], Awaitable[Mapping[str, Any] | BaseModel | None]
]
"""Answers one input request; returns the result object (``ElicitResult``, ...), or
``None`` to leave the request unanswered for now."""


class InputAnswerer:
    """The registered input handlers of one client, and the answers they give.

    ``handlers`` maps an input request method (``elicitation/create``, ...) to its
    handler; each one is declared in the client capabilities. A request whose method
    has no handler is left unanswered (listed) or refused (``-32601``, sent).
    """

    def __init__(
        self, tables: RevisionTables, handlers: Mapping[str, InputHandler]
    ) -> None:
        """Hold ``handlers`` for the revision of ``tables``."""
        self.tables = tables
        self.handlers: dict[str, InputHandler] = dict(handlers)
        """Input request method -> its handler (mutable: a handler may be added)."""

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities the handlers declare: one entry per handler."""
        return {
            name: {}
            for method, name in INPUT_CAPABILITIES.items()
            if method in self.handlers
        }

    async def answer(
        self, method: str, params: dict[str, Any], task_id: str | None, key: str | None
    ) -> dict[str, Any] | None:
        """Run the handler registered for one input request; ``None`` leaves it
        unanswered."""
        handler = self.handlers.get(method)
        if handler is None:
            return None
        answer = await handler(InputContext(method, params, task_id, key))
        return answer_to_wire(answer) if answer is not None else None

    async def answer_all(
        self, requests: Mapping[str, object], task_id: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """Answer an ``inputRequests`` map (key -> request, a model or its wire form)
        with the registered handlers: the answers by key, unanswered keys left out."""
        responses: dict[str, dict[str, Any]] = {}
        for key, request in requests.items():
            wire = to_wire(request) if isinstance(request, BaseModel) else request
            entry = json_object(wire) or {}
            params = json_object(entry.get("params")) or {}
            method = str(entry.get("method"))
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
        if method not in self.handlers:
            raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        key = self.tables.meta_keys.get("RELATED_TASK")
        meta = json_object(params.get("_meta")) or {}
        related = json_object(meta.get(key)) if key is not None else None
        task_id = related.get(self.tables.task_fields["task_id"]) if related else None
        answer = await self.answer(
            method, params, task_id if isinstance(task_id, str) else None, None
        )
        if answer is None:
            raise JsonRpcError(INTERNAL_ERROR, f"no answer to {method}")
        if key is not None and related is not None:
            result_meta = json_object(answer.get("_meta")) or {}
            answer["_meta"] = {**result_meta, key: related}
        return answer
