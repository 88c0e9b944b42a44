"""Newline-delimited JSON-RPC over a subprocess's stdin/stdout:
:class:`StdioTransport`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..jsonrpc import RequestId
from .dispatch import Dispatcher, json_objects, response_outcome
from .transport import NotificationHandler, RequestHandler, TransportError

__all__ = ["StdioTransport"]


class StdioTransport:
    """Newline-delimited JSON-RPC over the standard streams of a server subprocess."""

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """Remember how to start the server; it is started on the first message."""
        self.command = command
        self.args = list(args)
        self.env = dict(env) if env is not None else None
        self._process: asyncio.subprocess.Process | None = None
        self._pending: dict[RequestId, asyncio.Future[dict[str, Any]]] = {}
        self._dispatcher = Dispatcher(self._send_reply)
        self._reader: asyncio.Task[None] | None = None

    def set_handlers(
        self, on_notification: NotificationHandler, on_request: RequestHandler
    ) -> None:
        """Install the callbacks for server notifications and server-to-client
        requests."""
        self._dispatcher.on_notification = on_notification
        self._dispatcher.on_request = on_request

    async def _started(self) -> asyncio.subprocess.Process:
        if self._process is None:
            self._process = await asyncio.create_subprocess_exec(
                self.command,
                *self.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=self.env,
            )
            self._reader = asyncio.ensure_future(self._read(self._process))
        return self._process

    async def _write(self, message: Mapping[str, Any]) -> None:
        process = await self._started()
        if process.stdin is None:
            raise TransportError("the server's stdin is closed")
        process.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        await process.stdin.drain()

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        """Read messages from the server until its stdout closes."""
        assert process.stdout is not None
        while line := await process.stdout.readline():
            try:
                decoded = json.loads(line)
            except ValueError:
                continue
            for incoming in json_objects(decoded):
                if await self._dispatcher.route(incoming):
                    continue
                request_id = incoming.get("id")
                waiter = (
                    self._pending.pop(request_id, None)
                    if isinstance(request_id, (str, int))
                    else None
                )
                if waiter is not None and not waiter.done():
                    waiter.set_result(incoming)
        for waiter in self._pending.values():
            if not waiter.done():
                waiter.set_exception(TransportError("the server closed its stdout"))
        self._pending.clear()

    async def _send_reply(self, reply: dict[str, Any]) -> bool:
        """Write the response to a server-to-client request."""
        await self._write(reply)
        return True

    async def request(
        self, request_id: RequestId, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """Write a request and wait for the response with the same ID."""
        waiter: asyncio.Future[dict[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )
        self._pending[request_id] = waiter
        try:
            await self._write(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            return response_outcome(await waiter)
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Write a notification."""
        await self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def aclose(self) -> None:
        """Close the server's stdin, wait briefly for it to exit, then stop it."""
        await self._dispatcher.cancel_background()
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5.0)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
