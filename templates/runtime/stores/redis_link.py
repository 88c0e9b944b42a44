"""How ``RedisTaskStore`` reaches Redis: outages and the signal channel.

``Outage`` turns a failure to reach Redis into :class:`RedisUnavailable` and logs one
warning when an outage starts and one line when Redis answers again.
``SignalChannel`` carries signals between replicas over one Redis pub/sub channel,
listened to by one background connection that reconnects with backoff; after every
reconnection its handlers get ``{"kind": "resync"}`` (pub/sub delivers at most once).
See ``stores.redis`` for the whole store.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, cast

from ..jsonrpc import INTERNAL_ERROR, JsonRpcError
from .base import Signal, SignalHandler, StoreUnavailable
from .codec import text

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["Outage", "RedisUnavailable", "SignalChannel"]

_log = logging.getLogger(__name__)


class RedisUnavailable(JsonRpcError, StoreUnavailable):
    """Redis could not be reached (after the retries): the request fails cleanly.

    A JSON-RPC error, so the server answers with it as is (no traceback); the store
    has logged the cause once for the whole outage.
    """

    def __init__(self) -> None:
        super().__init__(
            INTERNAL_ERROR,
            "Task store unavailable: Redis cannot be reached; try again shortly",
        )


class Outage:
    """Whether Redis is unreachable, logged once per outage.

    ``where`` gives the Redis URL without credentials, for the log messages.
    """

    def __init__(self, where: Callable[[], str]) -> None:
        self._where = where
        self._down_since: float | None = None

    def note_down(self, cause: BaseException) -> None:
        """Log the start of an outage once (later failures of it only at debug
        level)."""
        if self._down_since is None:
            self._down_since = time.monotonic()
            _log.warning(
                "Redis at %s unreachable (%s): requests fail with 'Task store"
                " unavailable' until it answers again; commands are retried with"
                " backoff and the signal channel reconnects by itself",
                self._where(),
                str(cause) or type(cause).__name__,
            )
        else:
            _log.debug("Redis at %s still unreachable (%s)", self._where(), cause)

    def note_up(self) -> None:
        """Log the end of an outage."""
        if self._down_since is not None:
            outage = time.monotonic() - self._down_since
            self._down_since = None
            _log.info("Redis at %s answers again after %.1f s", self._where(), outage)

    @contextlib.contextmanager
    def reaching(self) -> Generator[None, None, None]:
        """Raise :class:`RedisUnavailable` for a failure to reach Redis in the block."""
        from redis.exceptions import ConnectionError, TimeoutError

        try:
            yield
        except (ConnectionError, TimeoutError, OSError) as exc:
            self.note_down(exc)
            raise RedisUnavailable() from None
        self.note_up()


class SignalChannel:
    """Signals between replicas on the pub/sub channel ``name``.

    ``client`` gives the store's Redis client (``RuntimeError`` when the store is not
    open); ``outage`` notes the listener's lost and regained connections.
    """

    def __init__(self, client: Callable[[], Redis], name: str, outage: Outage) -> None:
        self._client = client
        self.name = name
        self._outage = outage
        self._handlers: list[SignalHandler] = []
        self._listener: asyncio.Task[None] | None = None
        self._resyncs: set[asyncio.Task[None]] = set()

    async def publish(self, signal: Signal) -> None:
        """Send ``signal`` (a JSON object) to every subscribed replica."""
        client: Any = self._client()  # redis-py leaves ``publish`` partly untyped
        await client.publish(self.name, json.dumps(signal, separators=(",", ":")))

    async def subscribe(self, handler: SignalHandler) -> None:
        """Call ``handler`` for every signal from now on; returns once subscribed.

        The first call starts the background listener; a Redis that cannot be
        reached raises here.
        """
        self._handlers.append(handler)
        if self._listener is not None:
            return
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._listener = asyncio.create_task(
            self._listen(ready), name="redis-task-store-signals"
        )
        try:
            await ready
        except BaseException:
            self._listener = None
            raise

    async def close(self) -> None:
        """Stop listening and forget the handlers."""
        listener = self._listener
        if listener is not None:
            self._listener = None
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)
        for resync in list(self._resyncs):
            resync.cancel()
        self._handlers.clear()

    async def _listen(self, ready: asyncio.Future[None]) -> None:
        """Receive signals until cancelled, reconnecting with backoff."""
        from redis.exceptions import ConnectionError, TimeoutError

        delay = 0.05
        while True:
            client: Any = self._client()  # redis-py's PubSub is partly untyped
            pubsub: Any = client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.name)
                # redis-py may reconnect and resubscribe inside ``listen`` on its own
                pubsub.connection.register_connect_callback(self._reconnected)
                if not ready.done():
                    ready.set_result(None)
                else:  # reconnected: signals may have been missed
                    self._outage.note_up()
                    await self._hand_out({"kind": "resync"})
                delay = 0.05
                async for message in pubsub.listen():
                    await self._dispatch(cast(object, message))
            except (ConnectionError, TimeoutError, OSError) as exc:
                if not ready.done():
                    ready.set_exception(exc)
                    return
                self._outage.note_down(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def _reconnected(self, connection: object) -> None:
        """Connect callback of the pub/sub connection: tell the handlers to resync."""
        resync = asyncio.get_running_loop().create_task(
            self._hand_out({"kind": "resync"})
        )
        self._resyncs.add(resync)
        resync.add_done_callback(self._resyncs.discard)

    async def _dispatch(self, message: object) -> None:
        """Decode one pub/sub message and hand it to every handler."""
        if not isinstance(message, dict):
            return
        fields = cast(dict[str, Any], message)
        if fields.get("type") != "message":
            return
        try:
            signal: Any = json.loads(text(fields["data"]))
        except (ValueError, KeyError):
            _log.warning("ignoring a malformed signal")
            return
        if isinstance(signal, dict):
            await self._hand_out(cast(Signal, signal))

    async def _hand_out(self, signal: Signal) -> None:
        """Call every handler with ``signal``."""
        for handler in list(self._handlers):
            try:
                await handler(signal)
            except StoreUnavailable:  # logged once for the outage; resync will follow
                _log.debug("signal handler stopped by a store outage")
            except Exception:  # one failing handler must not stop the listener
                _log.exception("signal handler failed")
