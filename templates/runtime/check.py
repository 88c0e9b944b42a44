"""A conformance checker for Tasks servers: ``python -m <package>.check URL``.

It drives a running server through its revision's server checklist with the package's
own client (``HttpTransport``; ``initialize`` and a session for 2025-11-25, the
per-request ``_meta`` for the extension), records every exchange, validates every
message received with the generated models, and reports each check as ``pass``,
``fail`` (with the offending wire exchange) or ``skip`` (with why).

The checks the schema decides (methods, result shapes, notification shapes, one per
status) come from the generated ``checks_<revision>`` module; the behavioural ones are
here, once for every revision, read from the revision's tables and ``RULES``.

The server needs a few tools, named by kind: ``completes`` (ends normally), ``fails``
(ends with an error), ``input`` (asks the client for input mid-flight) and ``long``
(runs long enough to be cancelled). A check whose tool is not named is skipped::

    python -m mcp_tasks.check http://127.0.0.1:8000/mcp --tool completes=slow_compute \\
        --tool fails=failing_job --tool input=confirm_delete --tool long=long_report

In a test suite::

    report = await run_checks(url, tools={"completes": "slow_compute"})
    report.assert_ok()

The checks that probe a second principal (``errors.foreign_task``), the routing headers
and the notifications' contents live in ``check_probes``.

Exit status: 0 when every check passed (or, with ``--allow-skips``, none failed), 1 when
one failed, 2 for bad usage (including a ``--tool`` the server does not list or whose
arguments its input schema rejects), 3 when none failed but some did not run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib
import itertools
import json
import re
import secrets
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import ModuleType
from typing import Any, Literal, TypeAlias, cast
from xml.etree import ElementTree

from pydantic import BaseModel, ValidationError

from .client_core import ClientCore, InputContext
from .protocol import REVISIONS
from .revision import RevisionTables
from .task_ids import MemoryTaskIdStore
from .transport import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    HttpTransport,
    JsonRpcError,
    NotificationHandler,
    RequestHandler,
    RequestId,
    TransportError,
    json_object,
)

__all__ = [
    "CheckResult",
    "ConfigurationError",
    "KINDS",
    "Report",
    "Rules",
    "SchemaCheck",
    "main",
    "run_checks",
]

KINDS = ("completes", "fails", "input", "long")
"""The tool kinds a user names (``--tool KIND=NAME``)."""

Status: TypeAlias = Literal["pass", "fail", "skip"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rules:
    """Where the revisions' servers behave differently (from the revision profile)."""

    sessions: bool
    """The revision has sessions (``initialize``) rather than per-request ``_meta``."""
    create_wrapper: str
    """The key of the task in a task-creating result and request ("": flat,
    unrequested)."""
    create_status_initial: bool
    """A new task must be in the initial status."""
    cancel_returns_task: bool
    """``tasks/cancel`` answers with the task (else an acknowledgement)."""
    cancel_cooperative: bool
    """A cancelled task may still end in another terminal status (the server only
    promises to try); else it must end ``cancelled``."""
    cancel_terminal_error: int
    """The error for cancelling a terminal task (0: unspecified)."""
    tool_error_fails: bool
    """A tool result with ``isError`` makes the task ``failed`` (else ``completed``)."""
    task_required_errors: tuple[int, ...]
    """The errors for a tools/call whose task mode is wrong."""
    role_capabilities: tuple[tuple[str, tuple[str, ...]], ...]
    """Method role -> path below the server's ``tasks`` capability that must declare
    it."""
    routing_headers: bool
    """Requests carry ``Mcp-Method``/``Mcp-Name``, which the server must check."""
    header_mismatch_error: int
    missing_capability_error: int
    meta_required: bool
    """Every request must carry the per-request ``_meta`` (else ``-32602``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaCheck:
    """One check the schema decides (rendered into ``checks_<revision>``)."""

    id: str
    kind: Literal["method", "create", "result", "notification", "status"]
    title: str
    method: str = ""
    role: str = ""
    status: str = ""
    params: tuple[str, ...] = ()
    model: type[BaseModel] | None = None


# -- results ---------------------------------------------------------------------------


@dataclass(slots=True)
class Exchange:
    """One message the checker sent and what came back (or one message received)."""

    method: str
    params: dict[str, Any]
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    http_status: int | None = None
    incoming: bool = False
    """A notification or request the server sent."""
    seq: int = 0
    """When it arrived, among everything the checker received (0: no answer yet)."""
    via: str = ""
    """The client that sent or received it (``other``: the second principal's)."""

    def to_wire(self) -> dict[str, Any]:
        """The exchange as JSON: ``request`` (or ``received``) and ``response``."""
        message = {"method": self.method, "params": self.params}
        if self.incoming:
            return {"received": message}
        out: dict[str, Any] = {"request": message}
        if self.headers is not None:
            out["headers"] = self.headers
        response: dict[str, Any] = {}
        if self.http_status is not None:
            response["httpStatus"] = self.http_status
        if self.result is not None:
            response["result"] = self.result
        if self.error is not None:
            response["error"] = self.error
        out["response"] = response
        return out


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict of one check."""

    id: str
    title: str
    status: Status
    detail: str
    exchange: dict[str, Any] | None = None
    seconds: float = 0.0
    needs: str = ""
    """For a skip: the option that would run the check ("" when none would)."""

    def to_json(self) -> dict[str, Any]:
        """The check as one item of the JSON report's ``checks``."""
        item: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
        }
        if self.exchange is not None:
            item["exchange"] = self.exchange
        if self.needs:
            item["needs"] = self.needs
        return item


class CheckFailed(Exception):
    """Raised by a check: the server broke a rule."""

    def __init__(self, detail: str, exchange: Exchange | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.exchange = exchange


class CheckSkipped(Exception):
    """Raised by a check that cannot run (no tool of the kind, optional feature absent);
    ``needs`` is the option that would run it ("" when none would)."""

    def __init__(self, detail: str, needs: str = "") -> None:
        super().__init__(detail)
        self.needs = needs


class ConfigurationError(ValueError):
    """The checker's own configuration does not fit the server (a ``--tool`` it does not
    list, or arguments the tool's input schema rejects): a usage error, not a verdict.
    """


@dataclass(slots=True)
class Report:
    """Every check's verdict against one server and revision."""

    url: str
    revision: str
    results: list[CheckResult] = field(default_factory=lambda: [])

    @property
    def failed(self) -> list[CheckResult]:
        """The checks that failed."""
        return [r for r in self.results if r.status == "fail"]

    @property
    def ok(self) -> bool:
        """Whether no check failed."""
        return not self.failed

    @property
    def complete(self) -> bool:
        """Whether every check ran (none was skipped)."""
        return all(r.status != "skip" for r in self.results)

    def exit_code(self, allow_skips: bool = False) -> int:
        """The command line's exit status: 1 when a check failed, else 3 when one did
        not run (unless ``allow_skips``), else 0."""
        if not self.ok:
            return 1
        return 0 if self.complete or allow_skips else 3

    def incomplete(self) -> str:
        """How many checks did not run and which options would run them ("" when all
        ran)."""
        skipped = [r for r in self.results if r.status == "skip"]
        if not skipped:
            return ""
        needs: dict[str, int] = {}
        for r in skipped:
            needs[r.needs] = needs.get(r.needs, 0) + 1
        parts = [
            f"{n} need{'s' if n == 1 else ''} {option}"
            for option, n in needs.items()
            if option
        ]
        if "" in needs:
            parts.append(f"{needs['']} cannot run against this server")
        many = "checks" if len(skipped) > 1 else "check"
        return (
            f"{len(skipped)} {many} did not run ({'; '.join(parts)}): incomplete;"
            " --allow-skips accepts that"
        )

    def by_id(self) -> dict[str, CheckResult]:
        """The verdicts by check id."""
        return {r.id: r for r in self.results}

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` listing the failed checks (for test suites)."""
        if self.failed:
            raise AssertionError(
                "\n".join(f"{r.id}: {r.detail}" for r in self.failed)
                + "\n"
                + json.dumps([r.exchange for r in self.failed], indent=2)[:4000]
            )

    def counts(self) -> dict[str, int]:
        """How many checks passed, failed and were skipped."""
        return {s: sum(1 for r in self.results if r.status == s) for s in _STATUSES}

    def to_json(self) -> dict[str, Any]:
        """The whole report as one JSON object (``checks``: one item per check)."""
        return {
            "url": self.url,
            "revision": self.revision,
            "summary": self.counts(),
            "complete": self.complete,
            "checks": [r.to_json() for r in self.results],
        }

    def to_text(self) -> str:
        """One line per check and a summary line."""
        lines = [f"{self.url} ({self.revision})"]
        for r in self.results:
            lines.append(f"{r.status.upper():4} {r.id}: {r.detail or r.title}")
            if r.status == "fail" and r.exchange is not None:
                lines.append("     " + json.dumps(r.exchange)[:1000])
        c = self.counts()
        lines.append(f"{c['pass']} passed, {c['fail']} failed, {c['skip']} skipped")
        if not self.complete:
            lines.append(self.incomplete())
        return "\n".join(lines)

    def to_junit(self, suite: str = "mcp-tasks-check") -> str:
        """The report as JUnit XML (testsuites / testsuite / testcase)."""
        c = self.counts()
        total = f"{sum(r.seconds for r in self.results):.3f}"
        attrs = {
            "name": suite,
            "tests": str(len(self.results)),
            "failures": str(c["fail"]),
            "errors": "0",
            "skipped": str(c["skip"]),
            "time": total,
        }
        root = ElementTree.Element("testsuites", attrs)
        node = ElementTree.SubElement(
            root, "testsuite", {**attrs, "name": f"{suite} {self.revision}"}
        )
        for r in self.results:
            case = ElementTree.SubElement(
                node,
                "testcase",
                {
                    "classname": f"{suite}.{self.revision}",
                    "name": r.id,
                    "time": f"{r.seconds:.3f}",
                },
            )
            if r.status == "fail":
                failure = ElementTree.SubElement(
                    case, "failure", {"message": r.detail, "type": "fail"}
                )
                failure.text = json.dumps(r.exchange, indent=2) if r.exchange else ""
            elif r.status == "skip":
                ElementTree.SubElement(case, "skipped", {"message": r.detail})
        ElementTree.indent(root)
        return ElementTree.tostring(root, encoding="unicode", xml_declaration=True)


_STATUSES: tuple[Status, ...] = ("pass", "fail", "skip")


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
            import httpx

            http = httpx.AsyncClient(
                timeout=httpx.Timeout(30.0, read=None),
                event_hooks={"request": [on_request]},
            )
            self._http.append(http)
        inner = HttpTransport(self.url, headers=headers, http_client=http)
        if not self.rules.sessions:
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
        if self.rules.sessions:
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
            f" {_code(JsonRpcError.from_wire(first.error).code)} ({later}): the reply"
            " came before the task was stored",
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
        if self.rules.sessions:
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


# -- the behavioural checks ------------------------------------------------------------

CheckFunction: TypeAlias = Callable[[Session], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Check:
    """A behavioural check: returns its pass detail or raises
    ``CheckFailed``/``CheckSkipped``."""

    id: str
    title: str
    run: CheckFunction
    applies: Callable[[Rules, RevisionTables], bool] = lambda rules, tables: True


REGISTRY: list[Check] = []
"""The behavioural checks, in report order."""


def check(
    id: str,
    title: str,
    applies: Callable[[Rules, RevisionTables], bool] = lambda rules, tables: True,
) -> Callable[[CheckFunction], CheckFunction]:
    """Register a behavioural check."""

    def register(function: CheckFunction) -> CheckFunction:
        REGISTRY.append(Check(id, title, function, applies))
        return function

    return register


def _code(code: int | None) -> str:
    return "a result" if code is None else f"error {code}"


@check("capability.declared", "the server advertises Tasks support")
async def _capability_declared(s: Session) -> str:
    exchange = s.log[0] if s.log else None
    caps = s.capabilities
    if s.tables.extension_id:
        extensions = json_object(caps.get("extensions")) or {}
        if s.tables.extension_id not in extensions:
            raise CheckFailed(
                f"capabilities.extensions lacks {s.tables.extension_id!r}", exchange
            )
        if "tasks" in caps:
            raise CheckFailed("the legacy capabilities.tasks is declared", exchange)
        return f"capabilities.extensions[{s.tables.extension_id!r}]"
    tasks = json_object(caps.get("tasks"))
    node = json_object((json_object((tasks or {}).get("requests")) or {}).get("tools"))
    if node is None or json_object(node.get("call")) is None:
        raise CheckFailed("capabilities.tasks.requests.tools.call missing", exchange)
    missing = [role for role, _ in s.rules.role_capabilities if not s.declared(role)]
    if "cancel" in missing:
        raise CheckFailed("capabilities.tasks.cancel missing", exchange)
    return "capabilities.tasks.requests.tools.call" + (
        f" (not declared: {', '.join(missing)})" if missing else ""
    )


@check("capability.gating", "task mode and declarations are enforced")
async def _capability_gating(s: Session) -> str:
    if s.rules.sessions:
        checked: list[str] = []
        for name, tool in s.tool_list.items():
            execution = json_object(tool.get("execution")) or {}
            support = execution.get("taskSupport", "forbidden")
            if support == "forbidden" and "forbidden" not in checked:
                params: dict[str, Any] = {"name": name, "arguments": {}}
                params[s.rules.create_wrapper] = {}
                code, exchange = await s.error_of("tools/call", params)
                if code not in s.rules.task_required_errors:
                    raise CheckFailed(
                        f"a task for the task-forbidden tool {name!r} got"
                        f" {_code(code)}",
                        exchange,
                    )
                checked.append("forbidden")
            if support == "required" and "required" not in checked:
                code, exchange = await s.error_of(
                    "tools/call", {"name": name, "arguments": {}}
                )
                if code not in s.rules.task_required_errors:
                    raise CheckFailed(
                        f"a plain call of the task-required tool {name!r} got"
                        f" {_code(code)}",
                        exchange,
                    )
                checked.append("required")
        if not checked:
            raise CheckSkipped("no tool with taskSupport forbidden or required")
        return f"checked {' and '.join(checked)} tools"
    name, arguments = s.tool("completes")
    bare = s.new_client(s.headers, declare=False)
    try:
        result = await s.call(
            "tools/call", {"name": name, "arguments": arguments}, client=bare
        )
    except JsonRpcError as error:
        if error.code != s.rules.missing_capability_error:
            raise CheckFailed(
                f"a call without the extension got error {error.code}",
                s.last("tools/call"),
            ) from None
    else:
        if s.task_of(result) is not None:
            raise CheckFailed(
                "a task was created for a request that did not declare the extension",
                s.last("tools/call"),
            )
    run = await s.run("completes")
    code, exchange = await s.error_of(
        s.tables.roles["get"], s.task_params(run.task_id), client=bare
    )
    if code != s.rules.missing_capability_error:
        raise CheckFailed(
            f"tasks/get without the extension got {_code(code)}"
            f" (expected {s.rules.missing_capability_error})",
            exchange,
        )
    return "no task without the extension; tasks/get refused"


@check(
    "envelope.meta",
    "requests without the per-request _meta are refused",
    lambda rules, tables: rules.meta_required,
)
async def _envelope_meta(s: Session) -> str:
    run = await s.run("completes")
    method = s.tables.roles["get"]
    code, exchange = await s.error_of(method, s.task_params(run.task_id), raw=True)
    if code != INVALID_PARAMS:
        raise CheckFailed(
            f"{method} without _meta got {_code(code)} (expected {INVALID_PARAMS})",
            exchange,
        )
    return f"{method} without _meta: error {code}"


@check("create.durable", "a created task is readable right after the create reply")
async def _create_durable(s: Session) -> str:
    kind = next((k for k in ("completes", *KINDS) if k in s.tools), "completes")
    with contextlib.suppress(CheckSkipped):
        await s.run(kind)
    if s.not_durable is not None:
        raise s.not_durable
    if not s.durable:
        s.tool(kind)  # skips: no tool named
        raise CheckSkipped(f"no task of the {kind!r} tool was created")
    return "tasks/get sent right after the create reply found the task"


@check("create.task", "a task-creating call answers with a task tasks/get knows")
async def _create_task(s: Session) -> str:
    run = await s.run("completes")
    task = s.task_of(run.create.result or {}) or {}
    status = task.get(s.field(1))
    if s.rules.create_status_initial and status != s.tables.initial:
        raise CheckFailed(
            f"a new task is {status!r}, not {s.tables.initial!r}", run.create
        )
    if status not in s.tables.statuses:
        raise CheckFailed(f"a new task has the unknown status {status!r}", run.create)
    if not run.snapshots:
        raise CheckFailed("no tasks/get answer for the new task", run.create)
    return f"task {run.task_id} created {status}"


async def all_runs(s: Session) -> list[TaskRun]:
    """The runs of every named tool kind (a kind that cannot run is left out: its own
    checks say why; with none, skip with the first reason)."""
    runs: list[TaskRun] = []
    skipped: CheckSkipped | None = None
    for kind in KINDS:
        if kind in s.tools:
            try:
                runs.append(await s.run(kind))
            except CheckSkipped as skip:
                skipped = skipped or skip
    if not runs:
        raise skipped or CheckSkipped(
            "no tool named (--tool KIND=NAME)", "--tool completes=NAME"
        )
    return runs


@check("status.transitions", "live statuses change only as the transitions allow")
async def _transitions(s: Session) -> str:
    count = 0
    for run in await all_runs(s):
        seen = [(s.task_of(run.create.result or {}) or {}, run.create), *run.snapshots]
        previous: str | None = None
        for task, exchange in seen:
            status = task.get(s.field(1))
            if not isinstance(status, str) or status not in s.tables.statuses:
                raise CheckFailed(f"unknown status {status!r}", exchange)
            if previous is not None and previous != status:
                if previous in s.tables.terminal:
                    break  # terminal.final judges what follows a terminal status
                if status not in s.tables.transitions.get(previous, _NOTHING):
                    raise CheckFailed(
                        f"{previous} -> {status} is not allowed", exchange
                    )
                count += 1
            previous = status
    return f"{count} transitions, all allowed"


@check("terminal.final", "a terminal status never changes, even when cancelled")
async def _terminal_final(s: Session) -> str:
    cancelled = 0
    for run in await all_runs(s):
        assert run.terminal is not None
        final = run.terminal[0].get(s.field(1))
        cancelled += run.terminal_cancel is not None
        for task, exchange in run.after:
            if task.get(s.field(1)) != final:
                then = " after a tasks/cancel" if run.terminal_cancel else ""
                raise CheckFailed(
                    f"task {run.task_id} was {final}, then{then}"
                    f" {task.get(s.field(1))}",
                    exchange,
                )
    return "terminal statuses stayed" + (
        f" (also after a tasks/cancel of {cancelled} finished task(s))"
        if cancelled
        else ""
    )


_NOTHING: frozenset[str] = frozenset()


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 timestamp as a ``datetime`` (None when it is not one)."""
    if not isinstance(value, str):
        return None
    # Python 3.10 reads only 3 or 6 fraction digits and no "Z"
    text = re.sub(r"(\.\d{1,6})\d*", lambda m: m.group(1).ljust(7, "0"), value)
    try:
        return datetime.fromisoformat(re.sub(r"[Zz]$", "+00:00", text))
    except ValueError:
        return None


@check("task.timestamps", "createdAt stays, lastUpdatedAt never goes back")
async def _timestamps(s: Session) -> str:
    for run in await all_runs(s):
        seen = [(s.task_of(run.create.result or {}) or {}, run.create), *run.snapshots]
        seen += run.after
        created = parse_time(seen[0][0].get(s.field(3)))
        latest: datetime | None = None
        for task, exchange in seen:
            first, updated = parse_time(task.get(s.field(3))), parse_time(
                task.get(s.field(4))
            )
            if first is None or updated is None:
                raise CheckFailed(f"{s.field(3)}/{s.field(4)} not RFC 3339", exchange)
            if first != created:
                raise CheckFailed(f"{s.field(3)} changed", exchange)
            if updated < first or (latest is not None and updated < latest):
                raise CheckFailed(f"{s.field(4)} went back", exchange)
            latest = updated
    return "consistent"


def _task_shapes(
    s: Session, runs: Sequence[TaskRun]
) -> list[tuple[dict[str, Any], Exchange]]:
    shapes: list[tuple[dict[str, Any], Exchange]] = []
    for run in runs:
        shapes.append((s.task_of(run.create.result or {}) or {}, run.create))
        shapes += run.snapshots + run.after
    return shapes


@check("hints.ttl", "the TTL is a non-negative integer or null")
async def _hints_ttl(s: Session) -> str:
    name = s.field(5)
    for task, exchange in _task_shapes(s, await all_runs(s)):
        if name not in task:
            continue  # the shape checks judge presence
        ttl = task[name]
        if ttl is not None and (not isinstance(ttl, int) or ttl < 0):
            raise CheckFailed(f"{name} is {ttl!r}", exchange)
    return f"{name} fine"


@check("hints.poll_interval", "every task shape carries a usable poll interval")
async def _hints_poll(s: Session) -> str:
    name = s.field(6)
    for task, exchange in _task_shapes(s, await all_runs(s)):
        if task.get(s.field(1)) in s.tables.terminal:
            continue
        hint = task.get(name)
        if not isinstance(hint, int) or hint < 0:
            raise CheckFailed(
                f"{name} is {hint!r} on a live task (the checker asks for the hint the"
                " spec recommends)",
                exchange,
            )
    return f"{name} present on live tasks"


def _terminal(run: TaskRun) -> tuple[dict[str, Any], Exchange]:
    assert run.terminal is not None
    return run.terminal


@check("outcome.completed", "a tool that completes ends completed with its result")
async def _outcome_completed(s: Session) -> str:
    run = await s.run("completes")
    task, exchange = _terminal(run)
    if task.get(s.field(1)) != s.tables.completed:
        raise CheckFailed(f"the task ended {task.get(s.field(1))!r}", exchange)
    if run.payload is not None:
        result = run.payload.result
        if result is None or result.get("isError") is True:
            raise CheckFailed(
                "tasks/result did not return the tool result", run.payload
            )
    elif json_object(task.get("result")) is None:
        raise CheckFailed("the completed task carries no result", exchange)
    return "completed with its result"


@check("outcome.failed", "a tool that fails ends as the revision says")
async def _outcome_failed(s: Session) -> str:
    run = await s.run("fails")
    task, exchange = _terminal(run)
    status = task.get(s.field(1))
    if status == s.tables.failed:
        if not s.rules.sessions and json_object(task.get("error")) is None:
            raise CheckFailed("the failed task carries no error", exchange)
        if run.payload is not None and run.payload.error is None:
            result = run.payload.result or {}
            if result.get("isError") is not True:
                raise CheckFailed(
                    "tasks/result of a failed task is neither an error nor isError",
                    run.payload,
                )
        return "failed"
    result = json_object(task.get("result")) or {}
    if (
        not s.rules.tool_error_fails
        and status == s.tables.completed
        and result.get("isError") is True
    ):
        return "completed with isError: true"
    raise CheckFailed(f"the failing tool's task ended {status!r}", exchange)


@check(
    "result.related_task",
    "tasks/result carries the related-task _meta",
    lambda rules, tables: "result" in tables.roles
    and "RELATED_TASK" in tables.meta_keys,
)
async def _related_task(s: Session) -> str:
    run = await s.run("completes")
    key = s.tables.meta_keys["RELATED_TASK"]
    payload = run.payload
    if payload is None or payload.result is None:
        raise CheckFailed("no tasks/result answer", payload)
    meta = json_object(payload.result.get("_meta")) or {}
    related = json_object(meta.get(key)) or {}
    if related.get(s.field(0)) != run.task_id:
        raise CheckFailed(f"_meta[{key!r}] does not name the task", payload)
    return f"_meta[{key!r}] names the task"


@check("input.requested", "a task that needs input asks for it")
async def _input_requested(s: Session) -> str:
    run = await s.run("input")
    reported = any(t.get(s.field(1)) in s.tables.input for t, _ in run.snapshots)
    if not reported and not run.input_seen:
        raise CheckFailed(
            "the task never reported an input status nor asked", run.create
        )
    if not run.input_seen:
        raise CheckFailed("no input request reached the client", run.create)
    if s.rules.sessions:
        key = s.tables.meta_keys.get("RELATED_TASK", "")
        for exchange in run.input_seen:
            meta = json_object(exchange.params.get("_meta")) or {}
            related = json_object(meta.get(key)) or {}
            if related.get(s.field(0)) != run.task_id:
                raise CheckFailed(
                    "the input request does not carry the related-task _meta", exchange
                )
        return f"{len(run.input_seen)} input request(s) with the related task"
    first, second = run.input_seen[0], run.input_seen[-1]
    keys = [
        sorted(json_object((e.result or {}).get("inputRequests")) or {})
        for e in (first, second)
    ]
    if len(run.input_seen) < 2 or keys[0] != keys[1]:
        raise CheckFailed("inputRequests keys changed between polls", second)
    return f"inputRequests {keys[0]} stable across polls"


@check("input.answered", "answered input lets the task finish")
async def _input_answered(s: Session) -> str:
    run = await s.run("input")
    task, exchange = _terminal(run)
    if task.get(s.field(1)) != s.tables.completed:
        raise CheckFailed(
            f"after the answers the task ended {task.get(s.field(1))!r}", exchange
        )
    after = [n for n in run.notes if n.startswith("after-unknown:")]
    if after and after[0] != f"after-unknown:{s.tables.input_required}":
        raise CheckFailed(
            f"an answer under an unknown key changed the task ({after[0]})",
            (
                s.last(s.tables.roles.get("update", ""))
                if "update" in s.tables.roles
                else None
            ),
        )
    return "completed after the answers" + ("; unknown keys ignored" if after else "")


@check("cancel.accepted", "a live task is cancelled on request")
async def _cancel(s: Session) -> str:
    run = await s.run("long")
    cancel = run.cancel
    assert cancel is not None
    if cancel.error is not None:
        raise CheckFailed("tasks/cancel of a live task failed", cancel)
    if s.rules.cancel_returns_task:
        status = (cancel.result or {}).get(s.field(1))
        if status != s.tables.cancelled:
            raise CheckFailed(f"tasks/cancel answered with status {status!r}", cancel)
    task, exchange = _terminal(run)
    final = task.get(s.field(1))
    if final == s.tables.cancelled:
        return "cancelled"
    if not s.rules.cancel_cooperative:
        raise CheckFailed(f"the cancelled task ended {final!r}", exchange)
    # terminal.final fails a terminal status that changes afterwards
    return (
        f"acknowledged; the task still ended {final} (cancellation is cooperative"
        " here: the task may reach another terminal status, D.2.10)"
    )


@check(
    "cancel.terminal",
    "cancelling a terminal task is refused",
    lambda rules, tables: rules.cancel_terminal_error != 0,
)
async def _cancel_terminal(s: Session) -> str:
    s.method_of("cancel")
    if not s.declared("cancel"):
        raise CheckSkipped("the server does not declare tasks/cancel")
    run = await s.run("completes")
    exchange = run.terminal_cancel
    assert exchange is not None
    code = (
        None if exchange.error is None else JsonRpcError.from_wire(exchange.error).code
    )
    if code != s.rules.cancel_terminal_error:
        raise CheckFailed(
            f"cancelling a completed task got {_code(code)}"
            f" (expected {s.rules.cancel_terminal_error})",
            exchange,
        )
    return f"error {code}"


@check("errors.unknown_task", "requests about an unknown task get -32602")
async def _unknown(s: Session) -> str:
    unknown = "mcptasks-check-unknown-" + secrets.token_hex(8)
    tried: list[str] = []
    for spec in s.schema_checks:
        if spec.kind != "method" or s.field(0) not in spec.params:
            continue
        if not s.declared(spec.role):
            continue
        params: dict[str, Any] = {name: {} for name in spec.params}
        params.update(s.task_params(unknown))
        code, exchange = await s.error_of(spec.method, params)
        if code != INVALID_PARAMS:
            raise CheckFailed(
                f"{spec.method} of an unknown task got {_code(code)}"
                f" (expected {INVALID_PARAMS})",
                exchange,
            )
        tried.append(spec.method)
    return ", ".join(tried)


# -- the schema-decided checks ---------------------------------------------------------


def _validate(model: type[BaseModel], value: object, exchange: Exchange) -> None:
    try:
        model.model_validate(value)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CheckFailed(
            f"not a valid {model.__name__}: {where}: {first['msg']}", exchange
        ) from None


_SHOWN_BY = {
    "cancelled": "long",
    "cancel": "long",
    "failed": "fails",
    "input_required": "input",
    "update": "input",
}
"""The tool kind whose run shows a status, or a method's result (else ``completes``)."""


async def _schema_check(s: Session, spec: SchemaCheck) -> str:
    if spec.kind == "method":
        if not s.declared(spec.role):
            raise CheckSkipped(f"the server does not declare {spec.method}")
        params: dict[str, Any] = {name: {} for name in spec.params}
        if s.field(0) in spec.params:
            params |= s.task_params("mcptasks-check-unknown-" + secrets.token_hex(8))
        code, exchange = await s.error_of(spec.method, params)
        if code == METHOD_NOT_FOUND:
            raise CheckFailed(f"{spec.method} is unknown to the server", exchange)
        return f"answered with {_code(code)}"
    assert spec.model is not None
    seen: list[tuple[object, Exchange]] = []
    if spec.kind == "create":
        runs = await all_runs(s)
        seen = [(run.create.result, run.create) for run in runs]
    elif spec.kind == "result":
        seen = [
            (e.result, e)
            for e in s.log
            if e.method == spec.method and e.result is not None and not e.incoming
        ]
    elif spec.kind == "notification":
        seen = [
            ({"jsonrpc": "2.0", "method": e.method, "params": e.params}, e)
            for e in s.log
            if e.incoming and e.method == spec.method
        ]
    else:
        get = s.tables.roles["get"]
        seen = [
            (e.result, e)
            for e in s.log
            if e.method == get
            and e.result is not None
            and not e.incoming
            and e.result.get(s.field(1)) == spec.status
        ]
    if not seen:
        what = {
            "status": f"no task seen {spec.status}",
            "notification": "none received",
        }
        kind = _SHOWN_BY.get(spec.status or spec.role, "completes")
        needs = f"--tool {kind}=NAME" if spec.kind != "notification" else ""
        raise CheckSkipped(
            what.get(spec.kind, "nothing to validate (no tool named)"),
            needs if kind not in s.tools else "",
        )
    for value, exchange in seen:
        _validate(spec.model, value, exchange)
    return f"{len(seen)} message(s) valid"


# -- running ---------------------------------------------------------------------------


def checks_module(tables: RevisionTables) -> ModuleType:
    """The generated ``checks_<revision>`` module of a revision (named like its
    models)."""
    suffix = tables.models.__name__.rsplit("_", 1)[1]
    return importlib.import_module(f"{__package__}.checks_{suffix}")


async def detect(url: str, headers: Mapping[str, str]) -> str:
    """The revision the server speaks, found as ``client_dual.DualClient.detect`` does:
    ``server/discover`` answered means the stateless revision, else the one with
    sessions.
    """
    if len(REVISIONS) == 1:
        return next(iter(REVISIONS))
    stateless = next((r for r, t in REVISIONS.items() if t.extension_id), None)
    sessions = next((r for r, t in REVISIONS.items() if not t.extension_id), None)
    if stateless is None or sessions is None:
        return next(iter(REVISIONS))
    session = Session(
        url,
        checks_module(REVISIONS[stateless]),
        {},
        headers=headers,
        other_headers=None,
        timeout=10,
    )
    try:
        await session.open()
        return stateless
    except (JsonRpcError, TransportError):
        return sessions
    finally:
        await session.close()


def _parse_tools(
    tools: Mapping[str, str | tuple[str, Mapping[str, Any]]],
) -> dict[str, tuple[str, dict[str, Any]]]:
    parsed: dict[str, tuple[str, dict[str, Any]]] = {}
    for kind, value in tools.items():
        if kind not in KINDS:
            raise ValueError(f"unknown tool kind {kind!r} (known: {', '.join(KINDS)})")
        parsed[kind] = (
            (value, {}) if isinstance(value, str) else (value[0], dict(value[1]))
        )
    return parsed


async def run_checks(
    url: str,
    *,
    tools: Mapping[str, str | tuple[str, Mapping[str, Any]]] | None = None,
    revision: str | None = None,
    auth: str | None = None,
    other_auth: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    only: Sequence[str] | None = None,
) -> Report:
    """Run every check against the server at ``url`` and return the report.

    ``tools`` maps a kind (``completes``, ``fails``, ``input``, ``long``) to a tool
    name, or to ``(name, arguments)``. ``revision`` pins one of the package's revisions
    (default: detected). ``auth`` is the ``Authorization`` header of the checker;
    ``other_auth`` that of a second principal (for ``errors.foreign_task``). ``only``
    restricts the run to these check ids. Raises ``ConfigurationError`` when the server
    does not list a named tool or its input schema rejects the arguments given.
    """
    parsed = _parse_tools(tools or {})
    base = dict(headers or {})
    if auth is not None:
        base["Authorization"] = auth
    other = {**base, "Authorization": other_auth} if other_auth is not None else None
    if revision is not None and revision not in REVISIONS:
        raise ValueError(
            f"unknown revision {revision!r} (this package has {', '.join(REVISIONS)})"
        )
    chosen = revision or await detect(url, base)
    module = checks_module(REVISIONS[chosen])
    session = Session(
        url, module, parsed, headers=base, other_headers=other, timeout=timeout
    )
    report = Report(url=url, revision=chosen)
    entries: list[tuple[str, str, Callable[[], Awaitable[str]]]] = []
    for item in REGISTRY:
        if item.applies(session.rules, session.tables):
            entries.append((item.id, item.title, functools.partial(item.run, session)))
    for spec in session.schema_checks:
        entries.append(
            (spec.id, spec.title, functools.partial(_schema_check, session, spec))
        )
    if only is not None:
        entries = [e for e in entries if e[0] in only]
    try:
        try:
            await session.open()
            cursor: object = None
            for _ in range(100):  # pages of tools/list
                page = await session.call(
                    "tools/list", {} if cursor is None else {"cursor": cursor}
                )
                listed = page.get("tools")
                for tool in cast(
                    "list[object]", listed if isinstance(listed, list) else []
                ):
                    entry = json_object(tool)
                    if entry is not None and isinstance(entry.get("name"), str):
                        session.tool_list[str(entry["name"])] = entry
                cursor = page.get("nextCursor")
                if not isinstance(cursor, str):
                    break
            problems = check_probes.tool_problems(session.tools, session.tool_list)
            if problems:
                raise ConfigurationError("\n".join(problems))
        except (JsonRpcError, TransportError) as error:
            exchange = session.log[-1].to_wire() if session.log else None
            report.results.append(
                CheckResult(
                    "session.open", "the server answers", "fail", f"{error}", exchange
                )
            )
            for id, title, _ in entries:
                report.results.append(
                    CheckResult(id, title, "skip", "the server did not answer")
                )
            return report
        for id, title, run in entries:
            started = time.monotonic()
            needs = ""
            try:
                detail = await run()
                status: Status = "pass"
                exchange = None
            except CheckFailed as failure:
                status, detail = "fail", failure.detail
                exchange = failure.exchange.to_wire() if failure.exchange else None
            except CheckSkipped as skip:
                status, detail, exchange = "skip", str(skip), None
                needs = skip.needs
            except (asyncio.TimeoutError, TimeoutError):
                status, detail, exchange = (
                    "fail",
                    f"no terminal status within {timeout}s",
                    None,
                )
            except (JsonRpcError, TransportError) as error:
                status, detail = "fail", f"{type(error).__name__}: {error}"
                exchange = session.log[-1].to_wire() if session.log else None
            seconds = time.monotonic() - started
            report.results.append(
                CheckResult(id, title, status, detail, exchange, seconds, needs)
            )
    finally:
        await session.close()
    return report


def _tool_option(value: str) -> tuple[str, tuple[str, dict[str, Any]]]:
    kind, sep, rest = value.partition("=")
    if not sep or kind not in KINDS or not rest:
        raise argparse.ArgumentTypeError(
            f"expected KIND=NAME[:JSON] with KIND one of {', '.join(KINDS)}: {value!r}"
        )
    name, colon, arguments = rest.partition(":")
    try:
        parsed: object = json.loads(arguments) if colon else {}
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"arguments of {name!r} are not JSON"
        ) from None
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError(f"arguments of {name!r} are not a JSON object")
    return kind, (name, cast("dict[str, Any]", parsed))


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: check the server at URL; exit 0, 1 (a check failed), 2 (usage,
    or a ``--tool`` that does not fit the server) or 3 (some checks did not run)."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {__package__}.check",
        description="Check a Tasks server against its revision's server checklist.",
    )
    parser.add_argument("url", help="the server's MCP endpoint")
    parser.add_argument(
        "--revision", choices=sorted(REVISIONS), help="default: detected"
    )
    parser.add_argument(
        "--tool",
        action="append",
        default=[],
        type=_tool_option,
        metavar="KIND=NAME[:JSON]",
        help=f"a tool of a kind ({', '.join(KINDS)}) and optional JSON arguments",
    )
    parser.add_argument("--auth", help="Authorization header value of the checker")
    parser.add_argument("--other-auth", help="Authorization of a second principal")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per task")
    parser.add_argument(
        "--allow-skips",
        action="store_true",
        help="exit 0 when no check failed, even if some did not run (default: exit 3)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE")
    options = parser.parse_args(argv)
    tools = dict(cast("list[tuple[str, tuple[str, dict[str, Any]]]]", options.tool))
    try:
        report = asyncio.run(
            run_checks(
                options.url,
                tools=tools,
                revision=options.revision,
                auth=options.auth,
                other_auth=options.other_auth,
                timeout=options.timeout,
            )
        )
    except ConfigurationError as error:
        for line in str(error).splitlines():
            print(f"{parser.prog}: error: {line}", file=sys.stderr)
        return 2
    if options.junit:
        with open(options.junit, "w", encoding="utf-8") as out:
            out.write(report.to_junit() + "\n")
    print(json.dumps(report.to_json(), indent=2) if options.json else report.to_text())
    return report.exit_code(options.allow_skips)


from . import check_probes as check_probes  # noqa: E402  (registers its checks)

if __name__ == "__main__":
    # run the package's module rather than this __main__ copy of it: the checks of
    # check_probes registered themselves there
    sys.exit(importlib.import_module(f"{__package__}.check").main())
