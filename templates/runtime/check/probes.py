"""The checker's probes that take a conversation rather than one request: another
principal trying every operation on a live task (``errors.foreign_task``), and the
routing headers wrong and missing (``routing.headers``, ``routing.headers_missing``).
The status notifications are probed in ``probes_notifications``, the checker's own
options in ``tool_options``.

They register themselves into ``registry.REGISTRY`` and use the checker's ``Session``,
its recorded exchanges and its task runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import secrets
from collections.abc import Callable, Mapping
from typing import Any, cast

from ..client_core import InputContext
from ..jsonrpc import JsonRpcError, json_object
from ..transport import TransportError
from .registry import check
from .results import CheckFailed, CheckSkipped, Exchange, code_text
from .session import Session, TaskRun, input_answer

__all__ = ["FOREIGN_WAIT_S"]

FOREIGN_WAIT_S = 3.0
"""How long a request of another principal may take before the checker concludes that
the server is waiting on the task for it, as it would for the owner."""

_EMPTY: dict[str, Any] = {}


def _status(task: Mapping[str, Any], s: Session) -> object:
    return task.get(s.field(1))


def _answers(task: Mapping[str, Any]) -> dict[str, Any]:
    """An answer that fits each of the task's outstanding ``inputRequests``."""
    answers: dict[str, Any] = {}
    for key, entry in (json_object(task.get("inputRequests")) or _EMPTY).items():
        request = json_object(entry) or _EMPTY
        params = json_object(request.get("params")) or _EMPTY
        answers[key] = input_answer(str(request.get("method")), params)
    return answers


_ANSWER_FOR = "io.github.mcptasks-gen/check-answer-for"
"""``_meta`` key of the checker's input answers: the task whose request it answers."""

# -- errors.foreign_task ---------------------------------------------------------------


@check("errors.foreign_task", "another principal can neither see nor change a task")
async def _foreign(s: Session) -> str:
    if s.other_headers is None:
        raise CheckSkipped("no second identity given (--other-auth)", "--other-auth")
    kind = next((k for k in ("input", "long", "completes") if k in s.tools), "")
    if not kind:
        s.tool("input")  # skips, naming the option
    probe = _Foreign(s, kind)
    try:
        return await asyncio.wait_for(probe.probe(), s.timeout)
    finally:
        await probe.close()


class _Foreign:
    """One task of the owner (the ``input`` kind: it waits in its input status, where
    nothing else changes it) and the second principal trying, while it is live: every
    read (``tasks/get``, ``tasks/result``, ``tasks/list``), every write
    (``tasks/update`` with answers for its outstanding keys, ``tasks/cancel``, and on
    2025-11-25 a reply to the server's input request, sent before the owner's), and
    ``subscriptions/listen`` for it. Each must be refused like a request about an
    unknown task, and the owner's polls must find the task untouched; nothing about it
    may reach the other principal.
    """

    def __init__(self, s: Session, kind: str) -> None:
        assert s.other_headers is not None
        self.s = s
        self.kind = kind
        self.other = s.new_client(s.other_headers, via="other", handler=self._asked)
        self.owner = s.client
        self.run: TaskRun | None = None
        self.refused: list[str] = []
        self.not_tried: list[str] = []
        self.failure: CheckFailed | None = None
        self.probed: asyncio.Future[None] | None = None
        self.created = asyncio.Event()
        self.probing = False
        self.side: list[asyncio.Future[Any]] = []

    async def _asked(self, request: InputContext) -> dict[str, Any]:
        return {"action": "decline"}  # the request itself is the leak (_no_leak)

    async def probe(self) -> str:
        s = self.s
        await s.open(self.other)
        if (
            not s.tables.stateless
            and self.kind == "input"
            and "result" in s.tables.roles
        ):
            await self._through_reply()
        else:
            run = self.run = await s.create(self.kind)
            before = await self._live(run)
            await self._everything(run, before)
            await self._untouched(run, before)
            await self._finish(run, before)
        assert self.run is not None
        if self.failure is not None:
            raise self.failure
        self._no_leak(self.run)
        detail = f"refused to another principal: {', '.join(self.refused)}; untouched"
        if self.not_tried:
            detail += f" (not tried: {'; '.join(self.not_tried)})"
        return detail

    async def close(self) -> None:
        for side in self.side:
            side.cancel()
        await asyncio.gather(*self.side, return_exceptions=True)

    # -- the task ------------------------------------------------------------------

    def _waits(self, task: Mapping[str, Any]) -> bool:
        """Whether the task waits for the owner (its input status, with its requests
        where the revision lists them), so that nothing else may change it."""
        s = self.s
        if _status(task, s) not in s.tables.input:
            return False
        return not s.tables.stateless or bool(json_object(task.get("inputRequests")))

    async def _live(self, run: TaskRun) -> dict[str, Any]:
        """The owner's poll once the task is where the probes start: waiting for input
        (the ``input`` kind) or live; a task that ended first is probed all the same."""
        s = self.s
        while True:
            task, _ = await s.get(run, self.owner)
            status = _status(task, s)
            if self.kind != "input" or self._waits(task) or status in s.tables.terminal:
                if status in s.tables.terminal:
                    self.not_tried.append(f"writes on a live task (it ended {status})")
                return task
            await asyncio.sleep(s.pause(task))

    async def _finish(self, run: TaskRun, before: Mapping[str, Any]) -> None:
        """The owner ends the task: answers its input (or cancels a ``long`` one) and
        follows it until it is terminal."""
        s = self.s
        answers = _answers(before)
        if answers and "update" in s.tables.roles:
            params = {**s.task_params(run.task_id), "inputResponses": answers}
            await s.send(s.tables.roles["update"], params, client=self.owner)
        elif self.kind == "long" and "cancel" in s.tables.roles:
            await s.send(s.tables.roles["cancel"], s.task_params(run.task_id))
            return
        task = dict(before)
        while _status(task, s) not in s.tables.terminal:
            await asyncio.sleep(s.pause(task))
            task, _ = await s.get(run, self.owner)

    async def _untouched(
        self, run: TaskRun, before: Mapping[str, Any], after: str = ""
    ) -> None:
        """A few polls of the owner (the writes may be acknowledged before they act):
        the task is as it was (a task that works on its own: at least not cancelled)."""
        after = after or f"another principal's {', '.join(self.refused)}"
        s = self.s
        for _ in range(2):
            await asyncio.sleep(s.pause(before))
            task, exchange = await s.get(run, self.owner)
            if self._waits(before) or _status(before, s) in s.tables.terminal:
                same = (
                    _status(task, s) == _status(before, s)
                    and task.get(s.field(4)) == before.get(s.field(4))
                    and sorted(json_object(task.get("inputRequests")) or {})
                    == sorted(json_object(before.get("inputRequests")) or {})
                )
            else:
                same = _status(task, s) != s.tables.cancelled
            if not same:
                raise CheckFailed(
                    f"after {after} the task changed: {_status(before, s)} ->"
                    f" {_status(task, s)} ({s.field(4)} {before.get(s.field(4))} ->"
                    f" {task.get(s.field(4))})",
                    exchange,
                )

    def _no_leak(self, run: TaskRun) -> None:
        """Nothing about the task reached the other principal's client."""
        for exchange in self.s.log:
            if (
                exchange.via == "other"
                and exchange.incoming
                and run.task_id in json.dumps(exchange.params)
            ):
                raise CheckFailed(
                    f"the server sent another principal {exchange.method} about"
                    " the task",
                    exchange,
                )

    # -- the other principal's requests ----------------------------------------------

    async def _everything(self, run: TaskRun, before: Mapping[str, Any]) -> None:
        s = self.s
        roles, params = s.tables.roles, s.task_params(run.task_id)
        await self._refused(roles["get"], params)
        if "result" in roles:
            await self._refused(roles["result"], params, wait=True)
        if "list" in roles:
            await self._not_listed(run)
        if "update" in roles:
            answers = _answers(before)
            if not answers:
                self.not_tried.append(f"{roles['update']} of outstanding keys (none)")
                answers = {
                    "mcptasks-check-" + secrets.token_hex(4): {"action": "decline"}
                }
            await self._refused(roles["update"], {**params, "inputResponses": answers})
        if "notify" in roles and "SUBSCRIPTION_ID" in s.tables.meta_keys:
            await self._listen(run)
        if "cancel" in roles:
            await self._refused(roles["cancel"], params)

    async def _refused(
        self, method: str, params: Mapping[str, Any], *, wait: bool = False
    ) -> None:
        """The other principal's request is answered as the same request about an
        unknown task is (an error, and the same one: F-8), so that nothing tells it
        the task exists; a read (``tasks/get``, ``tasks/result``) never gets a
        result. One that ``wait``s for the task must be answered within
        ``FOREIGN_WAIT_S``."""
        s = self.s
        unknown_id = "mcptasks-check-unknown-" + secrets.token_hex(8)
        unknown = await s.send(
            method, {**params, **s.task_params(unknown_id)}, client=self.other
        )
        sending = asyncio.ensure_future(s.send(method, params, client=self.other))
        done, _ = await asyncio.wait(
            {sending}, timeout=FOREIGN_WAIT_S if wait else None
        )
        if not done:
            sending.cancel()
            await asyncio.gather(sending, return_exceptions=True)
            exchange = next(
                e for e in reversed(s.log) if e.via == "other" and e.method == method
            )
            raise CheckFailed(
                f"another principal's {method} was not refused within"
                f" {FOREIGN_WAIT_S:.0f} s: it waits for the task, as the owner's does",
                exchange,
            )
        exchange = sending.result()
        code, expected = (
            None if e.error is None else JsonRpcError.from_wire(e.error).code
            for e in (exchange, unknown)
        )
        read = method in (s.tables.roles["get"], s.tables.roles.get("result"))
        if (code is None and read) or code != expected:
            raise CheckFailed(
                f"another principal's {method} of the task got {code_text(code)};"
                f" about an unknown task it gets {code_text(expected)}"
                + (" (a read must be refused)" if read and code is None else ""),
                exchange,
            )
        self.refused.append(method)

    async def _not_listed(self, run: TaskRun) -> None:
        s = self.s
        method = s.tables.roles["list"]
        if not s.declared("list"):
            self.not_tried.append(f"{method} (not declared)")
            return
        cursor: object = None
        for _ in range(20):
            exchange = await s.send(
                method, {} if cursor is None else {"cursor": cursor}, client=self.other
            )
            if exchange.result is None:
                break
            listed = exchange.result.get("tasks")
            for task in cast(
                "list[object]", listed if isinstance(listed, list) else []
            ):
                if (json_object(task) or _EMPTY).get(s.field(0)) == run.task_id:
                    raise CheckFailed(
                        f"another principal's {method} lists the task", exchange
                    )
            cursor = exchange.result.get("nextCursor")
            if not isinstance(cursor, str):
                break
        self.refused.append(f"{method} (not listed)")

    async def _listen(self, run: TaskRun) -> None:
        """``subscriptions/listen`` for the task: refused, or acknowledged without it;
        its stream stays open until the task ends (``_no_leak`` then looks at it)."""
        s = self.s
        key = s.tables.meta_keys["SUBSCRIPTION_ID"]
        listen_id = "mcptasks-check-foreign-" + secrets.token_hex(4)
        params = {"notifications": {"taskIds": [run.task_id]}}
        future = asyncio.ensure_future(
            s.send(
                "subscriptions/listen", params, client=self.other, request_id=listen_id
            )
        )
        self.side.append(future)

        def acknowledged() -> Exchange | None:
            for exchange in s.log:
                meta = json_object(exchange.params.get("_meta")) or _EMPTY
                if (
                    exchange.incoming
                    and meta.get(key) == listen_id
                    and exchange.method == "notifications/subscriptions/acknowledged"
                ):
                    return exchange
            return None

        await s.wait_until(
            lambda: future.done() or acknowledged() is not None, FOREIGN_WAIT_S
        )
        ack = acknowledged()
        if ack is not None:
            listed = (json_object(ack.params.get("notifications")) or _EMPTY).get(
                "taskIds"
            )
            if isinstance(listed, list) and run.task_id in listed:
                raise CheckFailed(
                    "another principal's subscriptions/listen was acknowledged for the"
                    " task",
                    ack,
                )
            self.refused.append("subscriptions/listen (not acknowledged for it)")
        elif future.done():
            self.refused.append("subscriptions/listen")
        else:
            self.not_tried.append("subscriptions/listen (no acknowledgement came)")

    # -- 2025-11-25: a reply to the server's input request -----------------------------

    async def _through_reply(self) -> None:
        """The owner (a client of its own) starts the task and asks ``tasks/result``;
        when its answer to the server's input request is about to leave, every
        request of the other principal is tried first (``_before_send``), its reply
        included."""
        s = self.s
        self.probed = asyncio.get_running_loop().create_future()
        s.answers_held = self.probed
        try:
            self.owner = s.new_client(
                s.headers, handler=self._answer_now, on_request=self._before_send
            )
            await s.open(self.owner)
            try:
                run = self.run = await s.create(self.kind, client=self.owner)
            finally:
                self.created.set()
            payload = asyncio.ensure_future(
                s.send(
                    s.tables.roles["result"],
                    s.task_params(run.task_id),
                    client=self.owner,
                )
            )
            self.side.append(payload)
            waiting: set[asyncio.Future[Any]] = {self.probed, payload}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if not self.probing:  # the task ended without asking
                self.probing = True
                self.probed.set_result(None)
                self.not_tried.append("a reply to its input request (it asked none)")
                before, _ = await s.get(run, self.owner)
                await self._everything(run, before)
            await self.probed
            await payload
            await self._finish(run, (await s.get(run, self.owner))[0])
        finally:
            if not self.probed.done():
                self.probed.set_result(None)
            s.answers_held = None
            if self.owner is not s.client:
                # A session of the checker's principal that stays open would be given
                # (and answer) the input requests of the tasks probed after this one.
                with contextlib.suppress(TransportError, OSError):
                    await self.owner.aclose()

    async def _answer_now(self, request: InputContext) -> dict[str, Any]:
        answer = input_answer(request.method, request.params)
        if request.task_id is None:
            return answer
        # The answer names its task in ``_meta``, so that ``_before_send`` tells the
        # answer to this task's request from one to a request of an earlier task that
        # the server delivers again on a new stream.
        meta = json_object(answer.get("_meta")) or {}
        return {**answer, "_meta": {**meta, _ANSWER_FOR: request.task_id}}

    def _for_other_task(self, message: Mapping[str, Any]) -> bool:
        """Whether ``message`` answers a request of a task other than the probed one."""
        result = json_object(message.get("result")) or {}
        named = (json_object(result.get("_meta")) or {}).get(_ANSWER_FOR)
        return named is not None and (self.run is None or named != self.run.task_id)

    async def _before_send(self, request: Any) -> None:
        """An ``httpx`` request hook of the owner's client: before the owner's answer to
        the server's input request goes out, run the other principal's requests."""
        if self.probed is None or self.probed.done():
            return
        try:
            message = json_object(json.loads(request.content))
        except ValueError:
            return
        if message is None or "method" in message or message.get("result") == {}:
            return  # a request, a notification, or the answer to a ping
        await self.created.wait()  # the input request may come before the create reply
        if self._for_other_task(message):
            return
        if self.probing:
            # The server may deliver its request again on another stream while the
            # probes run: every copy of the owner's answer waits for them to end.
            await self.probed
            return
        if self.run is None or self.probing:
            if self.probing:
                await self.probed
            return
        self.probing = True
        try:
            before, _ = await self.s.get(self.run, self.owner)
            await self._everything(self.run, before)
            await self._untouched(self.run, before)
            await self._reply(message.get("id"))
            reply = "another principal's reply to the task's input request"
            await self._untouched(self.run, before, reply)
        except CheckFailed as failure:
            self.failure = failure
        except (JsonRpcError, TransportError) as error:
            self.failure = CheckFailed(f"{type(error).__name__}: {error}")
        finally:
            self.probed.set_result(None)

    async def _reply(self, request_id: object) -> None:
        """The other principal answers the server's request first (an error, so that a
        server that takes it cannot go on as if the owner had answered)."""
        reply = {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": -32603, "message": "mcptasks-check: another principal"},
        }
        transport = cast(Any, self.other.transport).inner
        headers = transport.headers_for("", {})
        status, _ = await transport.exchange(reply, headers)
        exchange = Exchange("(reply)", reply, headers=headers, http_status=status)
        exchange.via = "other"
        self.s.log.append(exchange)
        self.refused.append("a reply to its input request (ignored)")


# -- routing headers -------------------------------------------------------------------


async def _routed(
    s: Session, run: TaskRun, change: Callable[[dict[str, str]], None]
) -> tuple[int, dict[str, Any], Exchange]:
    """``tasks/get`` of the task with its routing headers changed by ``change``: the
    HTTP status, the JSON-RPC error (empty when none) and the exchange."""
    method = s.tables.roles["get"]
    params = s.client.prepare(method, s.task_params(run.task_id))
    request_id = s.client.next_request_id()
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    headers = s.transport.headers_for(method, params)
    change(headers)
    status, received = await s.transport.exchange(message, headers)
    reply = next((m for m in received if m.get("id") == request_id), _EMPTY)
    error = json_object(reply.get("error")) or {}
    exchange = Exchange(
        method, params, reply.get("result"), error or None, headers, status
    )
    s.log.append(exchange)
    return status, error, exchange


def _refused_400(s: Session, status: int, error: Mapping[str, Any]) -> bool:
    return error.get("code") == s.rules.header_mismatch_error and status == 400


def _set_header(headers: dict[str, str], *, header: str, value: str) -> None:
    headers[header] = value


def _drop_headers(headers: dict[str, str], *, names: tuple[str, ...]) -> None:
    for name in names:
        headers.pop(name, None)


@check(
    "routing.headers",
    "Mcp-Method and Mcp-Name must match the request",
    lambda rules, tables: rules.routing_headers,
)
async def _routing(s: Session) -> str:
    run = await s.run("completes")
    for header, wrong in (
        ("Mcp-Name", "mcptasks-check-other"),
        ("Mcp-Method", "tools/list"),
    ):
        status, error, exchange = await _routed(
            s, run, functools.partial(_set_header, header=header, value=wrong)
        )
        if not _refused_400(s, status, error):
            raise CheckFailed(
                f"a wrong {header} got HTTP {status} and"
                f" {error.get('code', 'no error')} (expected HTTP 400 and"
                f" {s.rules.header_mismatch_error})",
                exchange,
            )
    return f"HTTP 400 and error {s.rules.header_mismatch_error} for both headers"


@check(
    "routing.headers_missing",
    "a tasks/* request without Mcp-Method or Mcp-Name is refused",
    lambda rules, tables: rules.routing_headers,
)
async def _routing_missing(s: Session) -> str:
    run = await s.run("completes")
    for left_out in (("Mcp-Name",), ("Mcp-Method",), ("Mcp-Method", "Mcp-Name")):
        drop = functools.partial(_drop_headers, names=left_out)
        status, error, exchange = await _routed(s, run, drop)
        if not _refused_400(s, status, error):
            raise CheckFailed(
                f"a request without {' and '.join(left_out)} got HTTP {status} and"
                f" {error.get('code', 'no error')} (expected HTTP 400 and"
                f" {s.rules.header_mismatch_error}: SEP-2243, B.17)",
                exchange,
            )
    return (
        f"HTTP 400 and error {s.rules.header_mismatch_error} without either header"
        " or both"
    )


# -- notifications ---------------------------------------------------------------------
