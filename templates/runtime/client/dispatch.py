"""The routing of incoming messages that both transports share: notifications and
server-to-client requests go to the installed handlers, each request ID is answered
once; and the reading of a JSON-RPC response."""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from typing import Any, cast

from ..jsonrpc import JsonRpcError, json_object
from .transport import NotificationHandler, RequestHandler, TransportError

__all__ = ["Dispatcher", "json_objects", "response_outcome"]


def json_objects(value: object) -> list[dict[str, Any]]:
    """The JSON objects in a decoded message or batch (other items are skipped)."""
    items = cast("list[object]", value) if isinstance(value, list) else [value]
    return [
        item for item in (json_object(entry) for entry in items) if item is not None
    ]


async def _ignore_notification(method: str, params: dict[str, Any]) -> None:
    """Default notification handler: drop the message."""


async def _refuse_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Default request handler: answer ``-32601``."""
    raise JsonRpcError(-32601, f"Method not found: {method}")


def response_outcome(message: dict[str, Any]) -> dict[str, Any]:
    """Return the result of a JSON-RPC response or raise its error."""
    error = json_object(message.get("error"))
    if error is not None:
        raise JsonRpcError.from_wire(error)
    result = json_object(message.get("result"))
    if result is None:
        raise TransportError("response without a result object")
    return result


_ANSWERED_KEPT = 4096
"""How many server-to-client request IDs a transport remembers, so that a request the
server delivers again (on another stream, say) is answered once."""


class Dispatcher:
    """Routes incoming messages to the installed handlers; shared by both transports.

    Each server-to-client request ID is answered once, however often the request
    arrives (a server may send a pending request again on each new stream): the
    handler runs once, and a copy that arrives later is dropped, unless the reply
    could not be delivered, which is then sent again instead.
    """

    def __init__(
        self, send_reply: Callable[[dict[str, Any]], Coroutine[Any, Any, bool]]
    ) -> None:
        """``send_reply`` sends a response to the server; False: it was not
        delivered."""
        self.on_notification: NotificationHandler = _ignore_notification
        self.on_request: RequestHandler = _refuse_request
        self.background: set[asyncio.Task[None]] = set()
        self._send_reply = send_reply
        self._answered: OrderedDict[str, dict[str, Any] | None] = OrderedDict()
        """Request IDs seen (JSON text), latest last: None while the handler runs or
        once its reply was delivered, else the reply to send again."""

    async def route(self, incoming: dict[str, Any]) -> bool:
        """Handle ``incoming`` when it is a notification or a request; return whether it
        was one.

        A notification is handed to the handler before this returns (so order is kept);
        a request is answered in the background through the transport's reply function,
        once per request ID.
        """
        method = incoming.get("method")
        if not isinstance(method, str):
            return False
        if "id" in incoming:
            key = json.dumps(incoming["id"])
            if key not in self._answered:
                self._answered[key] = None
                if len(self._answered) > _ANSWERED_KEPT:
                    self._answered.popitem(last=False)
                self.spawn(self._respond(key, incoming))
            else:
                undelivered = self._answered[key]
                if undelivered is not None:
                    self._answered[key] = None
                    self.spawn(self._deliver(key, undelivered))
        else:
            await self.on_notification(
                method, json_object(incoming.get("params")) or {}
            )
        return True

    async def _respond(self, key: str, incoming: dict[str, Any]) -> None:
        """Answer a request seen for the first time."""
        await self._deliver(key, await self.answer(incoming))

    async def _deliver(self, key: str, reply: dict[str, Any]) -> None:
        """Send ``reply``; keep it to send again when it did not get through."""
        delivered = False
        try:
            delivered = await self._send_reply(reply)
        finally:
            if not delivered and key in self._answered:
                self._answered[key] = reply

    def spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        """Run ``coroutine`` in the background, keeping a reference until it ends."""
        task = asyncio.ensure_future(coroutine)
        self.background.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        """Forget a finished background task; an answer that could not be delivered (the
        connection closed, for example on Ctrl-C) is dropped instead of being
        reported as "Task exception was never retrieved"."""
        self.background.discard(task)
        if not task.cancelled():
            task.exception()

    async def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        """Run the request handler for ``message`` and build the JSON-RPC response."""
        params = json_object(message.get("params")) or {}
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message.get("id")}
        try:
            reply["result"] = await self.on_request(str(message["method"]), params)
        except JsonRpcError as error:
            reply["error"] = error.to_wire()
        except Exception as error:  # a handler bug must still produce a response
            reply["error"] = {
                "code": -32603,
                "message": f"Client handler failed: {error}",
            }
        return reply

    async def cancel_background(self) -> None:
        """Cancel and await every background task."""
        tasks = list(self.background)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
