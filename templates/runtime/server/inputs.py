"""Input requests of tools: asked through the update role (the task shows them until
the client answers with the update method) or sent to the client on the result role's
stream or a session's GET stream (``Channel``); and the checks of who may answer."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

from ..jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JsonRpcError,
)
from ..stores import Signal, TaskRecord
from .answers import check_answer, missing_capability
from .limits import input_responses
from .sessions import Session
from .tools import ToolContext
from .wire import task_id_param

if TYPE_CHECKING:
    from .dispatch import Call
    from .host import Host


@dataclass(slots=True)
class Channel:
    """Server-to-client requests of one task, waiting for a stream to carry them (the
    result role's input mechanism), until the client answers them.

    Each result-role stream of the task carries every outstanding request once (a new
    stream again, for a client that lost the first). So does each GET stream that
    opens in a session that may hear them: the task's session and, for a task of an
    authenticated principal, any session of that principal; never another principal's
    or another anonymous client's. A request asked while no result-role stream is open
    goes out at once on a GET stream of the task's session (or, when it has none open,
    of each other session of the principal with one open).

    A new stream leaves out a request that a still open stream of the same session
    carried: that client has it, and an SDK client that does not detect duplicates
    would ask its user twice. A stream of another session of the principal also
    leaves out a request that any open stream carried: it goes there only once the
    client it went to is gone (``leaves_out``). Once the streams that carried it
    close unanswered, the request goes out again.
    """

    outstanding: dict[str, dict[str, Any]] = field(
        default_factory=dict[str, dict[str, Any]]
    )
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    session: Session | None = None
    """The session of the task's ``tools/call``, whose GET stream may carry requests."""
    principal: str | None = None
    """The task's principal (None: anonymous, only its session hears its requests)."""
    carriers: dict[str, int] = field(default_factory=dict[str, int])
    """How many streams carried each outstanding request (or hold it queued)."""
    holders: dict[str, list[tuple[Session, object]]] = field(
        default_factory=dict[str, list[tuple[Session, object]]]
    )
    """The streams that carried each outstanding request, with their session: a GET
    stream's queue, or a result-role stream's token (in ``reading`` while open)."""
    reading: set[object] = field(default_factory=set[object])
    """The tokens of the result-role streams of the task that are open now."""

    @property
    def readers(self) -> int:
        """How many result-role streams of the task are open."""
        return len(self.reading)

    def open(self, session: Session, stream: object) -> bool:
        """Whether ``stream`` of ``session`` is still open."""
        return stream in self.reading or session.has_stream(stream)

    def held(self, request_id: str, session: Session | None = None) -> bool:
        """Whether a still open stream of ``session`` (None: of any session) carried
        ``request_id``."""
        return any(
            (session is None or holder is session) and self.open(holder, stream)
            for holder, stream in self.holders.get(request_id, ())
        )

    def leaves_out(self, request_id: str, session: Session | None) -> bool:
        """Whether a new stream of ``session`` leaves out ``request_id``: an open
        stream of that session carried it, or, for another session than the task's,
        any open stream did."""
        if session is not None and self.held(request_id, session):
            return True
        return session is not self.session and self.held(request_id)

    def carried(self, request_id: str, session: Session, stream: object) -> None:
        """Note that ``stream`` of ``session`` carried ``request_id`` (the closed
        streams noted before are forgotten)."""
        self.carriers[request_id] = self.carriers.get(request_id, 0) + 1
        self.holders[request_id] = [
            (holder, held)
            for holder, held in self.holders.get(request_id, ())
            if self.open(holder, held)
        ] + [(session, stream)]

    def settled(self, request_id: str) -> None:
        """Forget ``request_id``, answered or abandoned."""
        self.outstanding.pop(request_id, None)
        self.carriers.pop(request_id, None)
        self.holders.pop(request_id, None)


class InputRequests:
    """The input requests of this server's tasks: the local workers waiting for an
    answer through the update role (``answers``) and the requests waiting for a stream
    to carry them through the result role (``channels``)."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.answers: dict[tuple[str, str], asyncio.Future[dict[str, Any]]] = {}
        """Input requests of local workers waiting for the update role, by task and
        key."""
        self.channels: dict[str, Channel] = {}
        """Server-to-client input requests of local tasks (the result role), by task."""

    def changed(self, task_id: str) -> None:
        """A task changed: wake its result-role waiters."""
        channel = self.channels.get(task_id)
        if channel is not None:
            channel.changed.set()

    def task_ended(self, task_id: str) -> None:
        """A task's local worker stopped."""
        self.channels.pop(task_id, None)

    def purged(self, task_id: str) -> None:
        """A task was deleted after its TTL: wake its result-role waiters (they answer
        not-found)."""
        channel = self.channels.pop(task_id, None)
        if channel is not None:
            channel.changed.set()

    def close(self) -> None:
        """Wake every result-role waiter (the server closes)."""
        for channel in self.channels.values():
            channel.changed.set()

    def stored_answers(self, record: TaskRecord) -> None:
        """Answers stored in the task for a worker here that missed their signal."""
        self.deliver_answers(record.task_id, record.answers)

    def on_signal(self, kind: Any, task_id: str, signal: Signal) -> None:
        """Answers given through another replica for a worker running here."""
        answers: Any = signal.get("answers")
        if kind == "answers" and isinstance(answers, dict):
            self.deliver_answers(task_id, cast(dict[str, Any], answers))

    def stream_opened(
        self,
        session: Session,
        stream: asyncio.Queue[dict[str, Any] | None] | None = None,
    ) -> None:
        """Called by the HTTP app once a GET stream of ``session`` is open (``stream``,
        from ``session.open_stream``; None: any of its streams): it carries every
        outstanding input request the session may hear (see ``Channel``), even one
        another stream carried before, whose client may be gone."""
        for channel in self.channels.values():
            if not channel.outstanding or not self.hears(channel, session):
                continue
            for request_id, message in channel.outstanding.items():
                pending = self.host.replies.pending.get(request_id)
                if pending is None or channel.leaves_out(request_id, session):
                    continue
                if stream is not None:
                    stream.put_nowait(message)
                    carrier: object = stream
                else:
                    used = session.send(message)
                    if used is None:
                        return
                    carrier = used
                pending.sessions.add(session.id)
                channel.carried(request_id, session, carrier)

    def stream_closed(self, session: Session, unsent: list[dict[str, Any]]) -> None:
        """Called by the HTTP app when a GET stream of ``session`` ended before it
        sent the messages ``unsent``: requests no other stream carried wait for
        another stream again."""
        returned = {str(m["id"]) for m in unsent if "id" in m and "method" in m}
        for channel in self.channels.values():
            if not channel.outstanding:
                continue
            # a waiting result-role stream may carry what this stream held
            channel.changed.set()
            back = returned & channel.carriers.keys()
            if not back:
                continue
            for request_id in back:
                channel.carriers[request_id] -= 1
            self.push_input(channel)

    @staticmethod
    def hears(channel: Channel, session: Session) -> bool:
        """Whether streams of ``session`` may carry the input requests of
        ``channel``'s task: the task's session, or a session of its (authenticated)
        principal."""
        return session is channel.session or (
            channel.principal is not None and session.principal == channel.principal
        )

    async def request_input(
        self,
        ctx: ToolContext,
        method: str,
        params: dict[str, Any],
        *,
        status: str | None = None,
    ) -> dict[str, Any]:
        """Ask the client for input mid-flight and wait for the answer.

        Without a task, ``input_without_task`` (the revision's way). As a task, the
        schema decides: with an update role whose input status variant carries
        ``inputRequests``, the task shows the request under a new key until the client
        answers with the update method (``wait_for_input``); else, with a result role,
        the request goes to the client as a server-to-client request on the result
        role's stream, or the session's GET stream (``ask_on_streams``); the task is
        in the input ``status`` (None: ``input_required``) meanwhile. Raises
        ``-32601`` when the schema has neither, the revision's missing-capability
        error when the client did not declare the capability the request needs, and
        ``-32602`` for a request the schema does not allow.
        """
        params = self.checked_params(method, params)
        if ctx.task_id is None:
            return await self.input_without_task(ctx, method, params)
        if ctx.settling is not None:  # the client answers through the task
            ctx.settling.set()
        tables = self.host.tables
        waiting = status or tables.input_required
        input_variant = tables.task_by_status[waiting]
        by_update = (
            tables.has_role("update") and "input_requests" in input_variant.model_fields
        )
        if not by_update and not tables.has_role("result"):
            raise JsonRpcError(
                METHOD_NOT_FOUND,
                f"{method}: this schema has neither an update nor a result method to"
                " answer input requests through",
            )
        self.require_capability(ctx, method)
        if not by_update:
            return await self.ask_on_streams(
                ctx, ctx.task_id, method, params, status=waiting
            )
        prefix = method.split("/")[0]
        key = f"{prefix}-{secrets.token_hex(8)}"
        while key in ctx.issued_keys:
            key = f"{prefix}-{secrets.token_hex(8)}"
        ctx.issued_keys.add(key)
        return await self.wait_for_input(
            ctx.task_id, key, {"method": method, "params": params}, status=waiting
        )

    def checked_params(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` of the input request ``method``, validated by the generated
        model of the schema's input-request union (``tables.inputs``); ``ValueError``
        for a method the union does not have or params its model refuses."""
        spec = self.host.tables.inputs.get(method)
        if spec is None:
            known = ", ".join(self.host.tables.inputs)
            raise ValueError(
                f"{method} is not an input request of this schema (it has: {known})"
            )
        try:
            return spec.check_params(params)
        except ValueError as error:
            raise ValueError(f"invalid params of {method}: {error}") from None

    async def input_without_task(
        self, ctx: ToolContext, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """An input request of a tool not running as a task: a server-to-client request
        on the call's own response stream. Where results name their kind, a call asks
        its questions by MRTR preflight instead, so only a task asks mid-flight (the
        request did not declare Tasks: ``Host.tasks_not_declared``)."""
        if self.host.tables.results_say_their_kind:
            raise self.host.tasks_not_declared(
                f"tool {ctx.tool.name!r} asking for input"
            )
        self.require_capability(ctx, method)
        if ctx.emit is None:
            raise JsonRpcError(
                INTERNAL_ERROR, f"No response stream to send {method} on"
            )
        return await self.host.replies.request_on_stream(
            ctx.emit,
            method,
            params,
            principal=ctx.principal,
            session_id=ctx.session.id if ctx.session is not None else None,
        )

    def require_capability(self, ctx: ToolContext, method: str) -> None:
        """Refuse an input request ``method`` of ``ctx`` whose capability its client did
        not declare: the revision's ``MISSING_REQUIRED_CLIENT_CAPABILITY`` naming it in
        ``data.requiredCapabilities`` where its error codes have one, else ``-32600``.
        """
        capability = missing_capability(method, ctx.client_capabilities)
        if capability is None:
            return
        code = self.host.tables.error_codes.get("MISSING_REQUIRED_CLIENT_CAPABILITY")
        if code is not None:
            raise JsonRpcError(
                code,
                f"Missing required client capability: {method} needs {capability!r}"
                " in the client's capabilities",
                {"requiredCapabilities": {capability: {}}},
            )
        raise JsonRpcError(
            INVALID_REQUEST,
            f"The client did not declare the {capability!r} capability that"
            f" {method} needs",
        )

    async def wait_for_input(
        self,
        task_id: str,
        key: str,
        request: dict[str, Any],
        *,
        status: str | None = None,
    ) -> dict[str, Any]:
        """Publish one input request under ``key`` in the task's ``inputRequests`` and
        wait for its answer through the update role.

        The task is in the input ``status`` (None: ``input_required``) while any key
        is outstanding.
        """
        answer: asyncio.Future[dict[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )
        self.answers[(task_id, key)] = answer
        input_required = status or self.host.tables.input_required
        try:

            def ask(record: TaskRecord) -> dict[str, Any]:
                asking = {**record.input_requests, key: request}
                try:  # refuse what the schema does not allow before the task shows it
                    self.host.views.model(
                        replace(record, status=input_required, input_requests=asking)
                    )
                except ValueError as error:
                    raise JsonRpcError(
                        INVALID_PARAMS, f"Invalid input request: {error}"
                    ) from None
                # answers the local worker already took are dropped from the task
                waiting = {
                    k: v
                    for k, v in record.answers.items()
                    if (task_id, k) in self.answers
                    and not self.answers[(task_id, k)].done()
                }
                return {
                    "status": input_required,
                    "input_requests": asking,
                    "answers": waiting,
                }

            asked = await self.host.lifecycle.mutate(task_id, ask)
            if asked is None:
                raise asyncio.CancelledError  # the task already ended
            return await answer
        finally:
            self.answers.pop((task_id, key), None)

    async def tasks_update(self, call: Call) -> dict[str, Any]:
        """The update role: store answers for outstanding keys; ignore every other
        key."""
        task_id = task_id_param(call.params)
        responses = input_responses(self.host.limits, call.params.get("inputResponses"))
        await self.host.lifecycle.lookup(task_id, call.principal)
        self.host.roles.noted(call, "update", task_id)
        answered: dict[str, dict[str, Any]] = {}

        def answer(record: TaskRecord) -> dict[str, Any] | None:
            answered.clear()
            for key, value in responses.items():
                asked: Any = record.input_requests.get(key)
                if not isinstance(asked, dict):
                    continue  # unknown, answered or superseded: ignored
                request = cast(dict[str, Any], asked)
                params: Any = request.get("params")
                try:
                    answered[key] = check_answer(
                        str(request.get("method")),
                        (
                            cast(dict[str, Any], params)
                            if isinstance(params, dict)
                            else {}
                        ),
                        value,
                        self.host.tables.models,
                        self.host.tables.inputs,
                    )
                except JsonRpcError as error:  # nothing is stored; the key stays open
                    raise JsonRpcError(
                        INVALID_PARAMS, f"inputResponses[{key!r}]: {error.message}"
                    ) from None
            if not answered:
                return None
            remaining = {
                k: v for k, v in record.input_requests.items() if k not in answered
            }
            # still waiting: in the input status it was asked in
            status = record.status if remaining else self.host.tables.working
            # kept in the task too: the worker's replica may miss the signal below
            stored = {**record.answers, **answered}
            return {"status": status, "input_requests": remaining, "answers": stored}

        updated = await self.host.lifecycle.mutate(task_id, answer)
        if updated is None:
            answered.clear()
        else:  # a remote executor queues a task whose run ended to wait for them
            await self.host.executor.answered(self.host, updated)
        if self.deliver_answers(task_id, answered):
            # some waiting worker runs on another replica
            await self.host.replicas.signal("answers", task_id, answers=answered)
        return self.host.views.complete({})

    def deliver_answers(self, task_id: str, answers: dict[str, Any]) -> bool:
        """Hand answers to the local ``wait_for_input`` calls; True if any was not
        here."""
        elsewhere = False
        for key, value in answers.items():
            future = self.answers.get((task_id, key))
            if future is None:
                elsewhere = True
            elif not future.done():
                future.set_result(cast(dict[str, Any], value))
        return elsewhere

    async def ask_on_streams(
        self,
        ctx: ToolContext,
        task_id: str,
        method: str,
        params: dict[str, Any],
        *,
        status: str | None = None,
    ) -> dict[str, Any]:
        """Send a task's input request to the client and wait for its result.

        The request (with the related-task ``_meta``, where the schema has that key)
        goes out on the client's streams as ``Channel`` tells, until it is answered;
        the task works again once every outstanding request is answered. Raises
        ``JsonRpcError`` when the client answered with an error.
        """
        params = self.host.views.related(params, task_id)
        request_id, message, pending = self.host.replies.new_request(
            method, params, ctx.principal
        )
        channel = self.channels.setdefault(task_id, Channel())
        channel.session = ctx.session
        channel.principal = ctx.principal
        channel.outstanding[request_id] = message
        try:
            if (
                await self.host.lifecycle.update(
                    task_id, status=status or self.host.tables.input_required
                )
                is None
            ):
                raise asyncio.CancelledError  # the task already ended
            self.push_input(channel)
            result = await pending.reply
        finally:
            self.host.replies.pending.pop(request_id, None)
            channel.settled(request_id)
        if not channel.outstanding:
            await self.host.lifecycle.update(task_id, status=self.host.tables.working)
        return result

    def push_input(self, channel: Channel) -> None:
        """Send a task's requests that no stream carries on a GET stream of its session
        or, when that has none open, of each other session of its principal with one
        (none while a result-role stream is open to carry them); those sessions may
        answer them."""
        if channel.readers:
            return
        waiting = [
            (request_id, message)
            for request_id, message in channel.outstanding.items()
            if not channel.carriers.get(request_id)
            and request_id in self.host.replies.pending
        ]
        if not waiting:
            return
        listeners: list[Session] = []
        if channel.session is not None and channel.session.streaming:
            listeners.append(channel.session)
        elif channel.principal is not None:
            listeners += [
                session
                for session in self.host.sessions.of_principal(channel.principal)
                if session.streaming
            ]
        for session in listeners:
            for request_id, message in waiting:
                stream = session.send(message)
                if stream is None:
                    continue
                self.host.replies.pending[request_id].sessions.add(session.id)
                channel.carried(request_id, session, stream)

    async def tasks_result(self, call: Call) -> dict[str, Any]:
        """The result role: block until the task is terminal, carrying its input
        requests on this stream; then replay the outcome (the stored error, or the
        result with the related-task ``_meta`` where the schema has that key)."""
        task_id = task_id_param(call.params)
        await self.host.lifecycle.lookup(task_id, call.principal)
        self.host.roles.noted(call, "result", task_id)
        sent: set[str] = set()
        channel = self.channels.setdefault(task_id, Channel())
        # an anonymous task's requests go only to the session that created it
        carries = call.emit is not None and (
            call.principal is not None
            or call.session is self.host.notifications.task_sessions.get(task_id)
        )
        token = object()  # this stream, among the holders of the requests it carries
        if carries:
            channel.reading.add(token)
        try:
            while True:
                channel.changed.clear()  # before reading, so no change is missed
                record = await self.host.lifecycle.lookup(task_id, call.principal)
                if record.is_terminal:
                    break
                for request_id, message in list(channel.outstanding.items()):
                    if (
                        call.emit is not None
                        and carries
                        and request_id not in sent
                        and request_id in channel.outstanding  # not answered since
                        and not channel.leaves_out(request_id, call.session)
                    ):
                        sent.add(request_id)
                        if call.session is not None:
                            channel.carried(request_id, call.session, token)
                        else:
                            channel.carriers[request_id] = (
                                channel.carriers.get(request_id, 0) + 1
                            )
                        pending = self.host.replies.pending.get(request_id)
                        if pending is not None:  # only this session may answer it
                            pending.sessions.add(call.request.session_id)
                        await call.emit(message)
                if not self.host.started:
                    raise JsonRpcError(INTERNAL_ERROR, "Server is shutting down")
                await channel.changed.wait()
        finally:
            if carries:
                channel.reading.discard(token)
                channel.changed.set()  # another stream may carry what this one held
            if not channel.outstanding and task_id not in self.host.lifecycle.contexts:
                self.channels.pop(task_id, None)
            else:  # what no result-role stream carries now goes to the GET stream
                self.push_input(channel)
        self.host.emit_audit("result_retrieved", task_id, call.principal)
        if record.error is not None:
            stored = record.error
            raise JsonRpcError(
                int(stored.get("code", INTERNAL_ERROR)),
                str(stored.get("message", "")),
                stored.get("data"),
            )
        if record.result is None:
            raise JsonRpcError(
                INTERNAL_ERROR,
                f"Task ended in status {record.status!r}; it has no result",
            )
        return self.host.views.complete(self.host.views.related(record.result, task_id))
