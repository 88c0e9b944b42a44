"""The checker's ``Session``: its connection to one server in one revision, every
exchange it recorded, and the task runs (one per tool kind) the checks judge."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, cast

from ..client.http import new_http_client
from ..client_core import ClientCore, InputContext
from ..jsonrpc import JsonRpcError, json_object
from ..revision import RevisionTables
from ..task_ids import MemoryTaskIdStore
from ..transport import (
    HttpTransport,
    NotificationHandler,
    RequestHandler,
    RequestId,
    TransportError,
)
from .results import CheckFailed, CheckSkipped, Exchange, code_text
from .rules import Rules, SchemaCheck

__all__ = ["NOT_DURABLE", "Session", "TaskRun", "input_answer"]

# -- talking to the server -------------------------------------------------------------


class _Recorder:
    """A transport that records every exchange of the one it wraps, numbered in the
    order the answers and messages arrived; ``seen`` hears of each message received."""

    def __init__(
        self,
        inner: HttpTransport,
        log: list[Exchange],
        via: str,
        arrivals: itertools.count[int],
        seen: Callable[[Exchange], None],
    ) -> None:
        self.inner = inner
        self.log = log
        self.via = via
        self.arrivals = arrivals
        self.seen = seen

    def _received(self, method: str, params: dict[str, Any]) -> Exchange:
        exchange = Exchange(method, params, incoming=True, via=self.via)
        exchange.seq = next(self.arrivals)
        self.log.append(exchange)
        self.seen(exchange)
        return exchange

    def set_handlers(
        self, on_notification: NotificationHandler, on_request: RequestHandler
    ) -> None:
        async def notified(method: str, params: dict[str, Any]) -> None:
            self._received(method, params)
            await on_notification(method, params)

        async def requested(method: str, params: dict[str, Any]) -> dict[str, Any]:
            self._received(method, params)
            return await on_request(method, params)

        self.inner.set_handlers(notified, requested)

    async def request(
        self, request_id: RequestId, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        exchange = Exchange(method, params, via=self.via)
        exchange.sent = next(self.arrivals)
        self.log.append(exchange)
        try:
            exchange.result = await self.inner.request(request_id, method, params)
        except JsonRpcError as error:
            exchange.error = error.to_wire()
            raise
        finally:
            exchange.seq = next(self.arrivals)
            self.seen(exchange)
        return exchange.result

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.inner.notify(method, params)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _fill(schema: object) -> dict[str, Any]:
    """An answer that fits a requested object schema (each property a plain value)."""
    values: dict[str, Any] = {}
    properties = json_object((json_object(schema) or {}).get("properties")) or {}
    for name, spec in properties.items():
        kind = (json_object(spec) or {}).get("type")
        values[name] = {"boolean": True, "number": 1, "integer": 1}.get(
            str(kind), "mcptasks-check"
        )
    return values


def input_answer(method: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The checker's answer to an input request (accept, with values that fit)."""
    if method == "elicitation/create":
        return {"action": "accept", "content": _fill(params.get("requestedSchema"))}
    if method == "sampling/createMessage":
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "mcptasks-check"},
            "model": "mcptasks-check",
        }
    return {"roots": []}


@dataclass(slots=True)
class TaskRun:
    """What one tool call that became a task showed."""

    kind: str
    tool: str
    create: Exchange
    task_id: str
    snapshots: list[tuple[dict[str, Any], Exchange]] = field(default_factory=lambda: [])
    terminal: tuple[dict[str, Any], Exchange] | None = None
    after: list[tuple[dict[str, Any], Exchange]] = field(default_factory=lambda: [])
    payload: Exchange | None = None
    input_seen: list[Exchange] = field(default_factory=lambda: [])
    input_left: bool = False
    answered: set[str] = field(default_factory=lambda: set())
    cancel: Exchange | None = None
    terminal_cancel: Exchange | None = None
    """The ``tasks/cancel`` sent once the task was terminal (``after`` follows it)."""
    notes: list[str] = field(default_factory=lambda: [])


NOT_DURABLE = (
    "create.durable failed (a task was not readable right after its create reply),"
    " so the checks that follow a task cannot judge it"
)
"""Why the checks that need a task are skipped when ``create.durable`` failed."""


class Session:
    """The checker's connection to one server in one revision, and what it saw."""

    def __init__(
        self,
        url: str,
        module: ModuleType,
        tools: Mapping[str, tuple[str, dict[str, Any]]],
        *,
        headers: Mapping[str, str],
        other_headers: Mapping[str, str] | None,
        timeout: float,
    ) -> None:
        self.url = url
        self.module = module
        self.tables = cast(RevisionTables, module.TABLES)
        self.rules = cast(Rules, module.RULES)
        self.schema_checks = cast("tuple[SchemaCheck, ...]", module.CHECKS)
        self.tools = dict(tools)
        self.headers = dict(headers)
        self.other_headers = dict(other_headers) if other_headers else None
        self.timeout = timeout
        self.log: list[Exchange] = []
        self.fields = list(self.tables.task_fields.values())
        self.capabilities: dict[str, Any] = {}
        self.tool_list: dict[str, dict[str, Any]] = {}
        self._runs: dict[str, TaskRun] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._clients: dict[str, ClientCore[Any]] = {}
        self._http: list[Any] = []
        self._arrivals = itertools.count(1)
        self._changed = asyncio.Event()
        self._background: set[asyncio.Future[None]] = set()
        self.confirmations: list[tuple[Exchange, Exchange]] = []
        """(status notification, the ``tasks/get`` sent as it arrived)."""
        self.not_durable: CheckFailed | None = None
        """Set when a task was not readable right after its create reply."""
        self.durable: list[str] = []
        """The tasks that were readable right after their create reply."""
        self.input_status = asyncio.Event()
        self.answers_held: asyncio.Future[None] | None = None
        """Set while a client of the checker holds its input answer back on purpose."""
        """Set once a poll saw a task in an input status."""
        self.client = self.new_client(self.headers, via="main")
        self.transport = cast(_Recorder, self.client.transport).inner

    # -- plumbing ----------------------------------------------------------------------

    def field(self, index: int) -> str:
        """The wire name of a task field the runtime knows, by the profile's order
        (0 id, 1 status, 2 message, 3 created, 4 updated, 5 TTL, 6 poll interval)."""
        return self.fields[index]

    def new_client(
        self,
        headers: Mapping[str, str],
        *,
        declare: bool = True,
        via: str = "",
        handler: Callable[[InputContext], Awaitable[dict[str, Any]]] | None = None,
        on_request: Callable[[Any], Awaitable[None]] | None = None,
    ) -> ClientCore[Any]:
        """A client of the revision on a recorded transport of its own, labelled ``via``
        in the log. ``handler`` answers the server's input requests (by default: once a
        poll saw the input status); ``on_request`` is awaited before each HTTP request
        it sends goes out (an ``httpx`` request hook)."""
        http: Any = None
        if on_request is not None:
            http = new_http_client(30.0, on_request=on_request)
            self._http.append(http)
        inner = HttpTransport(self.url, headers=headers, http_client=http)
        if self.tables.stateless:
            inner.use_stateless(self.tables.protocol_version)

        async def answer(request: InputContext) -> dict[str, Any]:
            # let a poll see the input status first (it is checked too)
            with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
                await asyncio.wait_for(self.input_status.wait(), 2.0)
            if self.answers_held is not None:
                # A server may deliver a task's request on every session of its
                # principal: while another client of the checker's principal holds its
                # answer back on purpose, this one does not answer in its place.
                await asyncio.shield(self.answers_held)
            return input_answer(request.method, request.params)

        via = via or f"client{len(self._clients) + 1}"
        seen = functools.partial(self._seen, confirm=declare and via != "other")
        client_class = cast("type[ClientCore[Any]]", self.module.CLIENT)
        client = client_class(
            _Recorder(inner, self.log, via, self._arrivals, seen),
            store=MemoryTaskIdStore(),
            elicitation_handler=handler or answer,
            sampling_handler=handler or answer,
            declare_tasks=declare,
            subscribe=True,  # the extension's subscriptions/listen: its notifications
        )
        self._clients[via] = client
        return client

    def _seen(self, exchange: Exchange, *, confirm: bool) -> None:
        """Wake the waits on the log; a status notification to an owner's client gets a
        ``tasks/get`` at once (``notifications.status`` compares the two)."""
        self._changed.set()
        if not (confirm and exchange.incoming):
            return
        task_id = exchange.params.get(self.field(0))
        if exchange.method == self.tables.roles.get("notify") and isinstance(
            task_id, str
        ):
            client = self._clients[exchange.via]
            future = asyncio.ensure_future(self._confirm(exchange, task_id, client))
            self._background.add(future)
            future.add_done_callback(self._background.discard)

    async def _confirm(
        self, notification: Exchange, task_id: str, client: ClientCore[Any]
    ) -> None:
        method = self.tables.roles["get"]
        with contextlib.suppress(TransportError):
            get = await self.send(method, self.task_params(task_id), client=client)
            self.confirmations.append((notification, get))

    async def settle(self, timeout: float) -> None:
        """Wait (at most ``timeout``) for the ``tasks/get`` of each notification."""
        if self._background:
            await asyncio.wait(set(self._background), timeout=timeout)

    async def wait_until(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``ready()`` (checked whenever something arrives), at most
        ``timeout`` seconds; return whether it became true."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            self._changed.clear()
            if ready():
                return True
            left = deadline - loop.time()
            if left <= 0:
                return False
            with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)

    async def open(self, client: ClientCore[Any] | None = None) -> dict[str, Any]:
        """Start a connection: ``initialize`` (sessions) or ``server/discover``."""
        client = client or self.client
        if not self.tables.stateless:
            connect = cast(
                "Callable[[], Awaitable[dict[str, Any]]]", getattr(client, "connect")
            )
            result = await connect()
        else:
            result = await self.call("server/discover", {}, client=client)
        if client is self.client:
            self.capabilities = json_object(result.get("capabilities")) or {}
        return result

    async def close(self) -> None:
        """Close every connection the checker opened."""
        for future in list(self._background):
            future.cancel()
        for client in self._clients.values():
            with contextlib.suppress(TransportError, OSError):
                await client.aclose()
        for http in self._http:
            await http.aclose()

    async def send(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        client: ClientCore[Any] | None = None,
        raw: bool = False,
        request_id: RequestId | None = None,
    ) -> Exchange:
        """Send one request (with the revision's ``_meta`` unless ``raw``); return its
        recorded exchange, with the result or the error the server answered."""
        client = client or self.client
        sent = dict(params) if raw else client.prepare(method, dict(params))
        request_id = client.next_request_id() if request_id is None else request_id
        with contextlib.suppress(JsonRpcError):
            await client.transport.request(request_id, method, sent)
        return next(e for e in reversed(self.log) if e.params is sent)

    async def call(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        client: ClientCore[Any] | None = None,
        raw: bool = False,
    ) -> dict[str, Any]:
        """``send``, returning the result or raising ``JsonRpcError`` as answered."""
        exchange = await self.send(method, params, client=client, raw=raw)
        if exchange.error is not None:
            raise JsonRpcError.from_wire(exchange.error)
        return exchange.result or {}

    def last(self, method: str) -> Exchange:
        """The latest recorded exchange of ``method``."""
        return next(e for e in reversed(self.log) if e.method == method)

    async def error_of(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        client: ClientCore[Any] | None = None,
        raw: bool = False,
    ) -> tuple[int | None, Exchange]:
        """Send one request that should fail; return its error code (None: it
        succeeded)."""
        exchange = await self.send(method, params, client=client, raw=raw)
        if exchange.error is None:
            return None, exchange
        return JsonRpcError.from_wire(exchange.error).code, exchange

    def tool(self, kind: str) -> tuple[str, dict[str, Any]]:
        """The tool named for ``kind`` and its arguments (skip the check when none)."""
        if kind not in self.tools:
            option = f"--tool {kind}=NAME"
            raise CheckSkipped(f"no {kind!r} tool named ({option})", option)
        return self.tools[kind]

    def declared(self, role: str) -> bool:
        """Whether the server's capabilities allow the method of ``role``."""
        for name, path in self.rules.role_capabilities:
            if name == role:
                node: dict[str, Any] | None = json_object(
                    self.capabilities.get("tasks")
                )
                for step in path:
                    node = json_object(node.get(step)) if node is not None else None
                return node is not None
        return True

    def method_of(self, role: str) -> str:
        """The method of ``role`` (skip the check when the revision has none)."""
        if role not in self.tables.roles:
            raise CheckSkipped(f"the revision has no {role} method")
        return self.tables.roles[role]

    def task_params(self, task_id: str) -> dict[str, Any]:
        """The params of a request about one task."""
        return {self.field(0): task_id}

    # -- scenarios ---------------------------------------------------------------------

    async def run(self, kind: str) -> TaskRun:
        """Call the tool of ``kind`` as a task and follow it (once per session)."""
        lock = self._locks.setdefault(kind, asyncio.Lock())
        async with lock:
            if kind not in self._runs:
                self._runs[kind] = await asyncio.wait_for(
                    self._follow(kind), self.timeout
                )
            return self._runs[kind]

    async def create(self, kind: str, client: ClientCore[Any] | None = None) -> TaskRun:
        """Send the ``tools/call`` of ``kind`` and read the task it created at once
        (``create.durable``: skip every task check once a task was not readable)."""
        name, arguments = self.tool(kind)
        if self.not_durable is not None:
            raise CheckSkipped(NOT_DURABLE)
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if self.rules.create_wrapper:
            params[self.rules.create_wrapper] = {}
        exchange = await self.send("tools/call", params, client=client)
        if exchange.error is not None:
            raise CheckFailed(f"tools/call of {name!r} ({kind}) failed", exchange)
        task = self.task_of(exchange.result or {})
        task_id = task.get(self.field(0)) if task is not None else None
        if task is None or not isinstance(task_id, str):
            raise CheckFailed(
                f"tools/call of {name!r} ({kind}) did not create a task", exchange
            )
        run = TaskRun(kind=kind, tool=name, create=exchange, task_id=task_id)
        await self._readable(run, client)
        return run

    async def _readable(self, run: TaskRun, client: ClientCore[Any] | None) -> None:
        """A ``tasks/get`` sent as soon as the create reply arrived must find the task
        (D.2.5; on 2025-11-25 a live task must be found too, D.1.6)."""
        method = self.tables.roles["get"]
        first = await self.send(method, self.task_params(run.task_id), client=client)
        if first.error is None:
            self.durable.append(run.task_id)
            return
        later = "still not found 1 s later"
        started = time.monotonic()
        for _ in range(10):
            await asyncio.sleep(0.1)
            again = await self.send(
                method, self.task_params(run.task_id), client=client
            )
            if again.error is None:
                later = f"found {time.monotonic() - started:.1f} s later"
                break
        self.not_durable = CheckFailed(
            f"{method} sent right after the create reply of {run.tool!r} got"
            f" {code_text(JsonRpcError.from_wire(first.error).code)} ({later}): the"
            " reply came before the task was stored",
            first,
        )
        raise CheckSkipped(NOT_DURABLE)

    def task_of(self, result: Mapping[str, Any]) -> dict[str, Any] | None:
        """The task of a task-creating result (None when the result is no task)."""
        if self.rules.create_wrapper:
            return json_object(result.get(self.rules.create_wrapper))
        return dict(result) if result.get("resultType") == "task" else None

    async def get(
        self, run: TaskRun, client: ClientCore[Any] | None = None
    ) -> tuple[dict[str, Any], Exchange]:
        """One ``tasks/get`` of the run's task."""
        method = self.tables.roles["get"]
        exchange = await self.send(method, self.task_params(run.task_id), client=client)
        if exchange.result is None:
            raise CheckFailed(f"{method} of a live task failed", exchange)
        return exchange.result, exchange

    def pause(self, task: Mapping[str, Any]) -> float:
        """How long to wait before the next poll: the server's hint, kept short."""
        hint = task.get(self.field(6))
        seconds = hint / 1000 if isinstance(hint, (int, float)) else 0.2
        return min(max(seconds, 0.05), 0.5)

    async def _follow(self, kind: str) -> TaskRun:
        run = await self.create(kind)
        payload: asyncio.Task[None] | None = None
        if "result" in self.tables.roles:
            payload = asyncio.ensure_future(self._payload(run))
        try:
            created = self.task_of(run.create.result or {}) or {}
            pause = self.pause(created)
            if kind == "long":
                await self._cancel(run)
            while run.terminal is None:
                task, exchange = await self.get(run)
                run.snapshots.append((task, exchange))
                status = task.get(self.field(1))
                if status in self.tables.terminal:
                    run.terminal = (task, exchange)
                elif status in self.tables.input:
                    self.input_status.set()
                    await self._answer(run, task, exchange)
                elif run.input_seen:
                    run.input_left = True
                # follow the hint of each reply: a server may lengthen it as the task
                # ages, and the polls after a terminal status use the terminal one's
                pause = self.pause(task)
                await asyncio.sleep(pause)
            if "cancel" in self.tables.roles and self.declared("cancel"):
                # a terminal status never changes, whatever is asked (D.1.7, D.2.12)
                method = self.tables.roles["cancel"]
                params = self.task_params(run.task_id)
                run.terminal_cancel = await self.send(method, params)
            for _ in range(3):
                await asyncio.sleep(0.3 if kind == "long" else pause)
                run.after.append(await self.get(run))
            if payload is not None:
                await asyncio.wait_for(payload, self.timeout)
        finally:
            if payload is not None and not payload.done():
                payload.cancel()
        return run

    async def _payload(self, run: TaskRun) -> None:
        method = self.tables.roles["result"]
        run.payload = await self.send(method, self.task_params(run.task_id))
        self._collect_input(run)

    def _collect_input(self, run: TaskRun) -> None:
        """Note the input requests received for ``run``'s task: those whose
        related-task ``_meta`` names it, and those that name no task (a server that
        omits the ``_meta`` fails ``input.requested``). A request that names another
        task (one still waiting, delivered again on a new stream) is that task's."""
        key = self.tables.meta_keys.get("RELATED_TASK", "")
        for exchange in self.log:
            if not exchange.incoming or exchange.method not in _INPUT_METHODS:
                continue
            meta = json_object(exchange.params.get("_meta")) or {}
            related = json_object(meta.get(key)) or {}
            named = related.get(self.field(0))
            if named not in (None, run.task_id) or exchange in run.input_seen:
                continue
            run.input_seen.append(exchange)

    async def _answer(
        self, run: TaskRun, task: Mapping[str, Any], polled: Exchange
    ) -> None:
        """Answer the task's outstanding input requests (the extension's way); sessions
        answer on their stream, through the client's handler."""
        if not self.tables.stateless:
            self._collect_input(run)
            return
        requests = json_object(task.get("inputRequests")) or {}
        if not requests or "update" not in self.tables.roles:
            return
        if len(run.input_seen) < 2:
            run.input_seen.append(polled)
        if len(run.input_seen) < 2:
            return  # read once more first: the keys must be stable
        answers: dict[str, Any] = {}
        for key, entry in requests.items():
            if key in run.answered:
                continue
            request = json_object(entry) or {}
            params = json_object(request.get("params")) or {}
            answers[key] = input_answer(str(request.get("method")), params)
        if not answers:
            return
        method = self.tables.roles["update"]
        params = self.task_params(run.task_id)
        if not run.answered:
            unknown = {"mcptasks-check-" + secrets.token_hex(4): input_answer("", {})}
            await self.call(method, {**params, "inputResponses": unknown})
            still, _ = await self.get(run)
            run.notes.append(f"after-unknown:{still.get(self.field(1))}")
        await self.call(method, {**params, "inputResponses": answers})
        run.answered.update(answers)

    async def _cancel(self, run: TaskRun) -> None:
        method = self.method_of("cancel")
        if not self.declared("cancel"):
            raise CheckSkipped("the server does not declare tasks/cancel")
        run.cancel = await self.send(method, self.task_params(run.task_id))


_INPUT_METHODS = frozenset(
    {"elicitation/create", "sampling/createMessage", "roots/list"}
)
