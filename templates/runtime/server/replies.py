"""Server-to-client requests waiting for their reply: ``PendingRequest`` and
``Replies``, the part of a server that sends them and settles them with the client's
checked answer."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, cast

from ..jsonrpc import INTERNAL_ERROR, JsonRpcError
from ..revision import InputMethod
from .answers import check_answer
from .info import Emit


@dataclass(slots=True, eq=False)
class PendingRequest:
    """A server-to-client request waiting for its reply.

    Only a reply from ``principal`` through one of ``sessions`` (the sessions the
    request was sent on; None stands for a caller without a session) settles it.
    """

    method: str
    params: dict[str, Any]
    principal: str | None
    reply: asyncio.Future[dict[str, Any]]
    sessions: set[str | None] = field(default_factory=set[str | None])


class Replies:
    """The server-to-client requests waiting for a reply, by request id.

    ``models`` is the revision's models module: a reply is checked against the result
    model of its request (``check_answer``).
    """

    def __init__(
        self, models: ModuleType, inputs: Mapping[str, InputMethod] | None = None
    ) -> None:
        self.models = models
        self.inputs = inputs
        """The revision's input table (``tables.inputs``): the result models."""
        self.pending: dict[str, PendingRequest] = {}
        """The requests waiting for their reply, by request id."""

    def get(self, request_id: Any) -> PendingRequest | None:
        """The waiting request with id ``request_id`` (None: unknown)."""
        return self.pending.get(request_id) if isinstance(request_id, str) else None

    def settle_reply(self, message: dict[str, Any]) -> None:
        """Resolve the request ``message`` answers, when the carrier already vouches for
        its sender (an SDK session the request was sent on); unknown IDs are ignored."""
        pending = self.get(message.get("id"))
        if pending is not None:
            self.settle(pending, message)

    def settle(self, pending: PendingRequest, message: dict[str, Any]) -> None:
        """Resolve a pending request with the client's reply (checked by the caller)."""
        future = pending.reply
        if future.done():
            return
        raw_error = message.get("error")
        if isinstance(raw_error, dict):
            error = cast(dict[str, Any], raw_error)
            future.set_exception(
                JsonRpcError(
                    int(error.get("code", INTERNAL_ERROR)),
                    str(error.get("message", "")),
                    error.get("data"),
                )
            )
        else:
            try:
                future.set_result(
                    check_answer(
                        pending.method,
                        pending.params,
                        message.get("result"),
                        self.models,
                        self.inputs,
                    )
                )
            except JsonRpcError as error:
                future.set_exception(error)

    def new_request(
        self, method: str, params: dict[str, Any], principal: str | None
    ) -> tuple[str, dict[str, Any], PendingRequest]:
        """A new server-to-client request to ``principal`` and its pending reply.

        Its id is random (not guessable), so only the client it is sent to knows it.
        """
        request_id = secrets.token_urlsafe(18)
        while request_id in self.pending:
            request_id = secrets.token_urlsafe(18)
        reply: asyncio.Future[dict[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )
        pending = PendingRequest(
            method=method, params=params, principal=principal, reply=reply
        )
        self.pending[request_id] = pending
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        return request_id, {**message, "params": params}, pending

    async def request_on_stream(
        self,
        emit: Emit,
        method: str,
        params: dict[str, Any],
        *,
        principal: str | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Send a request on a response stream and wait for the (checked) reply.

        Only ``principal`` answering through session ``session_id`` settles it.
        """
        request_id, message, pending = self.new_request(method, params, principal)
        pending.sessions.add(session_id)
        try:
            await emit(message)
            return await pending.reply
        finally:
            self.pending.pop(request_id, None)
