"""Executors: who runs the tool of a task.

A server hands every task it creates to its executor (``TaskServerCore(...,
executor=...)``):

- ``InProcessExecutor`` (the default) runs the tool as an asyncio task of the server
  that received the call, with the call's live context (its session, progress token
  and response stream): the embedded server, with no dependency;
- a ``RemoteExecutor`` (``CeleryExecutor`` in ``server.celery_executor``) stores the
  task's job (arguments and context, JSON) in the task store (a ``stores.JobStore``
  that every process shares) and sends only the task's ID through a queue; a worker
  process runs it with ``run_task``, writing status, messages, input requests and the
  outcome to the store, from which every front-end serves the task as usual.

The store, not the queue, decides who runs a task (``stores.jobs``): a queued task
holds no lease, the worker takes the lease with an attempt number as it starts, and a
duplicate delivery that finds a live lease, or a task that ended (cancelled while
queued), drops out. A lapsed lease is the replicas' lease check's business
(``Replicas.fail_lost_tasks``), which asks the executor what to do
(``Executor.orphaned``): a remote executor queues the task again when its tool is
idempotent and attempts remain, and otherwise has it failed with a message that says
the worker was lost.

Input: a remote worker stores its tool's input requests in the task
(``ReplayContext``). The Tasks extension shows them and takes the answers through
``tasks/update`` on any front-end; for 2025-11-25 the front-end holding the task's
session asks on its streams (``RemoteExecutor.published``) and stores the answer. A
run of an idempotent tool ends at its first question not answered yet; the task waits
with no worker, and once the answers are in (``Executor.answered``) it is queued again
and the tool run again from the start, each question it asked before now answered from
the store. A tool that is not idempotent holds its worker while it waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from ..jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JsonRpcError
from ..protocol import StatusName
from ..revision import RevisionTables
from ..stores import JobStore, SharedJobStore, StoreUnavailable, TaskRecord
from .lifecycle import TTL_RAN_OUT
from .replicas import LOST_WORKER
from .tools import ToolContext

if TYPE_CHECKING:
    from .host import Host

__all__ = [
    "WORKER_LOST",
    "Executor",
    "InProcessExecutor",
    "RemoteExecutor",
    "ReplayContext",
    "not_taken",
    "relay_progress",
    "run_task",
]

_log = logging.getLogger(__name__)

WORKER_LOST = (
    "The worker running the task was lost before the task finished (its lease"
    " expired)"
)
"""The error message of a task whose remote worker was lost (killed, say) and that
is not run again (its tool is not idempotent, or its attempts ran out)."""


def not_taken(waited_s: float) -> str:
    """The error message of a task that no worker took within ``waited_s``."""
    return f"No worker took the task within {waited_s:g} s (is a worker running?)"


@runtime_checkable
class Executor(Protocol):
    """Runs the tools of a server's tasks (see the module documentation).

    One executor may serve several servers (the revisions of a dual server): each
    registers with ``bind`` as it is built.
    """

    def bind(self, host: Host) -> None:
        """Called by each server built with this executor (it may refuse the server's
        store with ``ValueError``)."""
        ...

    async def launch(
        self,
        host: Host,
        record: TaskRecord,
        ctx: ToolContext,
        arguments: dict[str, Any],
        values: dict[str, Any],
    ) -> None:
        """Start the task ``host`` just created for a call (``ctx``): ``arguments``
        as the call sent them (JSON), ``values`` as the tool's handler gets them (a
        typed tool's validated values: ``Tool.handler_arguments``)."""
        ...

    async def submit(self, task_id: str) -> None:
        """Queue the task ``task_id`` for a worker."""
        ...

    async def cancel(self, task_id: str) -> None:
        """The task was cancelled (its status is stored already): stop its worker
        sooner where the executor can."""
        ...

    async def orphaned(self, host: Host, record: TaskRecord) -> str | None:
        """An unfinished task holds no live lease: the message to fail it with, or
        None when the executor takes care of it (it is queued, or queued again)."""
        ...

    async def answered(self, host: Host, record: TaskRecord) -> None:
        """``tasks/update`` stored answers of the task (``record``, as written)."""
        ...

    async def published(self, host: Host, record: TaskRecord) -> None:
        """A stored change of a task reached ``host`` (``TaskServerCore.published``)."""
        ...


class InProcessExecutor:
    """Runs each task's tool as an asyncio task of the server that created it, with
    the call's live context (today's embedded behaviour)."""

    def __init__(self) -> None:
        self.hosts: list[Host] = []
        """The servers that use this executor."""
        self.prepared: dict[str, tuple[Host, TaskRecord, ToolContext, Any]] = {}
        """Tasks launched but not yet submitted (``launch`` submits at once)."""

    def bind(self, host: Host) -> None:
        """Remember ``host`` (any store will do)."""
        self.hosts.append(host)

    async def launch(
        self,
        host: Host,
        record: TaskRecord,
        ctx: ToolContext,
        arguments: dict[str, Any],
        values: dict[str, Any],
    ) -> None:
        """Run the tool in the background of ``host`` now."""
        host.lifecycle.contexts[record.task_id] = ctx
        self.prepared[record.task_id] = (host, record, ctx, values)
        await self.submit(record.task_id)

    async def submit(self, task_id: str) -> None:
        """Start the worker of a launched task (``Lifecycle.spawn``)."""
        prepared = self.prepared.pop(task_id, None)
        if prepared is None:
            raise KeyError(f"task {task_id} was not launched in this process")
        host, record, ctx, values = prepared
        host.lifecycle.spawn(record, host.calls.work(task_id, ctx, values))

    async def cancel(self, task_id: str) -> None:
        """Stop the task's worker, if it runs here."""
        for host in self.hosts:
            host.lifecycle.stop_worker(task_id)

    async def orphaned(self, host: Host, record: TaskRecord) -> str | None:
        """The replica that ran it died: fail it (``replicas.LOST_WORKER``)."""
        return LOST_WORKER

    async def answered(self, host: Host, record: TaskRecord) -> None:
        """Nothing: the worker waiting here gets them (``InputRequests``)."""

    async def published(self, host: Host, record: TaskRecord) -> None:
        """Nothing: the tasks run here ask on their own streams."""


class RemoteExecutor:
    """The store side of an executor whose workers run in other processes; a
    subclass carries the task IDs (``submit``) and runs them in its workers
    (``run_task``).

    ``max_attempts`` bounds how often a task of an idempotent tool is run after its
    worker was lost (a task that kills its worker every time ends ``failed``).
    ``queue_timeout_s``: a task no worker took within it is queued once more (a lost
    message), and failed when nobody took it within as long again. ``cancel_check_s``
    is how often a worker reads the task while its tool runs, in case the cancel
    signal (pub/sub, at most once) did not reach it.
    """

    def __init__(
        self,
        *,
        max_attempts: int = 3,
        queue_timeout_s: float = 300.0,
        cancel_check_s: float = 0.5,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if queue_timeout_s <= 0 or cancel_check_s <= 0:
            raise ValueError("queue_timeout_s and cancel_check_s must be positive")
        self.max_attempts = max_attempts
        self.queue_timeout_s = queue_timeout_s
        self.cancel_check_s = cancel_check_s
        self.servers: dict[str, Host] = {}
        """The servers that run tasks in this process's workers, by revision
        (``serve``)."""
        self.asking: dict[str, set[str]] = {}
        """The input requests of workers' tasks that this front-end asks on its
        streams (2025-11-25), by task ID (``published``)."""
        self._askers: set[asyncio.Task[None]] = set()

    def bind(self, host: Host) -> None:
        """Refuse a store that other processes cannot share."""
        store = host.store
        if not isinstance(store, SharedJobStore):
            raise ValueError(
                f"{type(self).__name__} runs tasks in other processes, which must"
                " share the task store: use RedisTaskStore (stores.redis), not"
                f" {type(store).__name__}"
            )

    def serve(self, server: Any) -> None:
        """Run this process's share of the tasks on ``server`` (a ``TasksServer`` of
        one revision, or of several: each revision's server), built with this
        executor and the tools the front-ends list."""
        by_revision: Any = getattr(server, "by_revision", None)
        hosts: list[Host] = (
            list(cast("dict[str, Host]", by_revision).values())
            if isinstance(by_revision, dict)
            else [server]
        )
        for host in hosts:
            if not isinstance(host.store, JobStore):
                raise ValueError("a worker's server must use the shared task store")
            self.servers[host.tables.revision] = host

    async def launch(
        self,
        host: Host,
        record: TaskRecord,
        ctx: ToolContext,
        arguments: dict[str, Any],
        values: dict[str, Any],
    ) -> None:
        """Store the task's job (JSON: arguments, revision, client capabilities, the
        call's other params, the answers to its preflight questions, whether the tool
        is idempotent) and submit its ID."""
        store = host.store
        assert isinstance(store, JobStore)
        spec = {
            "arguments": arguments,
            "revision": host.tables.revision,
            "capabilities": ctx.client_capabilities,
            "requestParams": ctx.request_params,
            "inputResponses": ctx.input_responses,
            "progressToken": ctx.progress_token,
            "idempotent": ctx.tool.idempotent,
        }
        await store.put_job(record.task_id, spec, record.expires_at)
        await self.send(record.task_id)

    async def submit(self, task_id: str) -> None:
        """Send ``task_id`` to a worker (the subclass's queue)."""
        raise NotImplementedError

    async def send(self, task_id: str) -> None:
        """``submit``, logging a failure (the broker is unreachable, say) instead of
        raising it: the task is stored and queued, and the lease check sends it
        again once it waited ``queue_timeout_s``."""
        try:
            await self.submit(task_id)
        except Exception:  # the store holds the job: it is sent again later
            _log.exception(
                "task %s: sending it to the workers failed; sending it again in %g s",
                task_id,
                self.queue_timeout_s,
            )

    async def cancel(self, task_id: str) -> None:
        """Nothing more: the cancelled status in the store is the marker a worker
        checks before it starts the tool (``claim_job``) and while it runs
        (``cancel_check_s``), and the cancel signal reaches a running one at once."""

    async def orphaned(self, host: Host, record: TaskRecord) -> str | None:
        """Leave a queued task alone (or queue it once more, or fail it, once it
        waited ``queue_timeout_s``), and one waiting for answers; queue again a task
        whose worker was lost when its tool is idempotent and attempts remain; else
        fail it (``WORKER_LOST``). Any of them whose TTL is about to run out is failed
        (``lifecycle.TTL_RAN_OUT``), as a running one is by its worker."""
        store = host.store
        if not isinstance(store, JobStore):
            return WORKER_LOST
        expires_at = record.expires_at
        if expires_at is not None and record.ttl_ms is not None:
            margin = host.lifecycle.ttl_margin_s(record.ttl_ms)
            if expires_at - time.time() <= margin:  # as a running task's timer does
                return TTL_RAN_OUT
        job = await store.get_job(record.task_id)
        if job is None:  # not run by an executor: its replica died
            return LOST_WORKER
        if job.leased:  # a worker took it since the lease check read its lease
            return None
        if job.state == "waiting":  # for answers (``answered``), with no worker
            return None
        if job.state == "abandoned":  # given up, and its failure not stored yet
            return not_taken(self.queue_timeout_s * 2)
        if job.state == "queued":
            waited = time.time() - job.queued_at
            if waited < self.queue_timeout_s:
                return None
            if job.resubmits >= 1:  # unless a worker took it since the read
                if await store.abandon_job(record.task_id, job.attempt):
                    return not_taken(self.queue_timeout_s * 2)
                return None
            if await store.requeue_job(record.task_id, job.attempt, resubmit=True):
                _log.warning(
                    "task %s: no worker took it within %g s; submitting it again",
                    record.task_id,
                    self.queue_timeout_s,
                )
                await self.send(record.task_id)
            return None
        if job.spec.get("idempotent") is True and job.attempt < self.max_attempts:
            if await store.requeue_job(record.task_id, job.attempt):
                _log.warning(
                    "task %s: its worker was lost (attempt %d of %d); running it"
                    " again",
                    record.task_id,
                    job.attempt,
                    self.max_attempts,
                )
                host.emit_audit("requeued", record.task_id, record.owner)
                await self.send(record.task_id)
            return None
        if job.attempt > 1:
            return f"{WORKER_LOST}, {job.attempt} times"
        return WORKER_LOST

    async def answered(self, host: Host, record: TaskRecord) -> None:
        """Once every input request of a task whose run ended to wait for them is
        answered, queue it again with the answers (``JobStore.resume_job``)."""
        store = host.store
        if record.input_requests or record.is_terminal or not record.answers:
            return
        if not isinstance(store, JobStore):
            return
        job = await store.get_job(record.task_id)
        if job is None or job.spec.get("idempotent") is not True:
            return  # its worker waits for the answers (``InputRequests``)
        if await store.resume_job(record.task_id, record.answers):
            await self.send(record.task_id)

    async def published(self, host: Host, record: TaskRecord) -> None:
        """Ask the client for the input requests a worker stored in a task whose
        revision sends them on streams (2025-11-25), on the front-end that holds the
        task's session (``ask_stored``)."""
        task_id = record.task_id
        if record.is_terminal:
            self.asking.pop(task_id, None)
            return
        if (
            not record.input_requests
            or task_id in host.lifecycle.contexts  # its tool runs here
            or task_id not in host.notifications.task_sessions
            or record.status not in host.tables.input
            or shows_input(host.tables, record.status)
        ):
            return
        asking = self.asking.setdefault(task_id, set())
        for key, request in record.input_requests.items():
            if key in asking:
                continue
            asking.add(key)
            asker = asyncio.create_task(self.ask_stored(host, record, key, request))
            self._askers.add(asker)
            asker.add_done_callback(self._askers.discard)

    async def ask_stored(
        self, host: Host, record: TaskRecord, key: str, request: dict[str, Any]
    ) -> None:
        """Send one stored input request on the task's streams
        (``InputRequests.ask_on_streams``), then store the answer in the task and
        tell the worker (the ``answers`` signal), as ``tasks/update`` does."""
        task_id = record.task_id
        tool = host.registry.by_name.get(record.tool)
        if tool is None:
            return
        ctx = ToolContext(
            host,
            tool=tool,
            principal=record.owner,
            session=host.notifications.task_sessions.get(task_id),
            task_id=task_id,
        )
        try:
            answer = await host.inputs.ask_on_streams(
                ctx,
                task_id,
                str(request.get("method")),
                _object(request.get("params")),
                status=record.status,
            )
        except asyncio.CancelledError:  # the task ended, or the server closes
            return
        except Exception:  # the client answered with an error, say: a new ask
            _log.exception("task %s: asking for input %s failed", task_id, key)
            return

        def store(current: TaskRecord) -> dict[str, Any] | None:
            if key not in current.input_requests:
                return None  # answered or withdrawn meanwhile
            remaining = {k: v for k, v in current.input_requests.items() if k != key}
            return {
                "status": current.status if remaining else host.tables.working,
                "input_requests": remaining,
                "answers": {**current.answers, key: answer},
            }

        updated = await host.lifecycle.mutate(task_id, store)
        if updated is not None:
            await host.replicas.signal("answers", task_id, answers={key: answer})
            await self.answered(host, updated)

    async def run(self, task_id: str) -> str:
        """The worker entry: run the task ``task_id`` on the server of its revision
        (``serve``); see ``run_task``. Returns what happened (``ran``, or why it was
        not run: ``gone``, ``ended``, ``duplicate``, ``lost``, ``waiting``,
        ``no-server``; ``input`` when the tool's run ended to wait for input)."""
        if not self.servers:
            raise RuntimeError(f"{type(self).__name__}.serve was never called")
        any_host = next(iter(self.servers.values()))
        store = any_host.store
        assert isinstance(store, JobStore)
        job = await store.get_job(task_id)
        if job is None:
            return "gone"
        host = self.servers.get(str(job.spec.get("revision")))
        if host is None:
            _log.error(
                "task %s: this worker serves no revision %s",
                task_id,
                job.spec.get("revision"),
            )
            return "no-server"
        return await run_task(
            host, task_id, cancel_check_s=self.cancel_check_s, resubmit=self.send
        )


async def run_task(
    host: Host,
    task_id: str,
    *,
    cancel_check_s: float = 0.5,
    resubmit: Callable[[str], Awaitable[None]] | None = None,
) -> str:
    """Run one task by its ID on ``host`` (a started server on the shared store): the
    worker entry of a remote executor.

    Takes the task's job (``JobStore.claim_job``: a task that ended, or that another
    worker holds, is not run), then runs its tool as a local worker of ``host``
    (which renews its lease and hears the cancel signal) with a ``ReplayContext``
    made from the stored job, reading the task every ``cancel_check_s`` while it
    runs, and returns once the outcome is stored. Returns ``ran``, ``input`` (an
    idempotent tool asked for input: its run ended, ``ReplayContext``; its answers
    queue it again, through ``resubmit`` when they came before the run ended),
    ``superseded`` (the run stalled past its lease and another run took the task:
    this one stopped storing nothing, ``Replicas.hold_leases``), or the claim's
    outcome.
    """
    store = host.store
    if not isinstance(store, JobStore):
        raise TypeError("run_task needs a JobStore (RedisTaskStore)")
    claim = await store.claim_job(
        task_id, host.replicas.replica_id, host.replicas.lease_ms
    )
    if claim.job is None:
        _log.debug("task %s not run here: %s", task_id, claim.outcome)
        return claim.outcome
    job = claim.job
    record = await store.get(task_id)
    if record is None or record.is_terminal:
        return "ended"
    tool = host.registry.by_name.get(record.tool)
    if tool is None:
        await host.lifecycle.finish(
            task_id,
            host.tables.failed,
            error=JsonRpcError(
                INTERNAL_ERROR, f"Tool {record.tool!r} is not served by the worker"
            ),
        )
        return "ran"
    ctx = ReplayContext(
        host,
        tool=tool,
        principal=record.owner,
        client_capabilities=_object(job.spec.get("capabilities")),
        task_id=task_id,
    )
    ctx.replay_answers = dict(job.answers) if tool.idempotent else None
    ctx.request_params = _object(job.spec.get("requestParams"))
    ctx.input_responses = _object(job.spec.get("inputResponses"))
    token: Any = job.spec.get("progressToken")
    ctx.progress_token = token if isinstance(token, (str, int)) else None
    try:  # a typed tool's values (the front-end checked them already)
        values = tool.handler_arguments(_object(job.spec.get("arguments")))
    except JsonRpcError as error:  # a tool changed between front-end and worker
        await host.lifecycle.finish(task_id, host.tables.failed, error=error)
        return "ran"
    host.lifecycle.contexts[task_id] = ctx
    host.lifecycle.spawn(record, host.calls.work(task_id, ctx, values))
    worker = host.lifecycle.workers[task_id]
    while not worker.done():
        await asyncio.wait({worker}, timeout=cancel_check_s)
        if worker.done():
            break
        try:
            current = await store.get(task_id)
        except StoreUnavailable:  # logged by the store; the lease lapses meanwhile
            continue
        if (current is None or current.is_terminal) and (
            task_id not in host.lifecycle.storing
        ):
            host.lifecycle.cancelled_elsewhere(task_id)
    await asyncio.gather(worker, return_exceptions=True)
    if task_id in host.lifecycle.superseded:  # run elsewhere now (hold_leases)
        host.lifecycle.superseded.discard(task_id)
        return "superseded"
    if ctx.suspended:  # the run ended to wait for input
        # on an outage the lease lapses, and the lease check re-runs the task
        with contextlib.suppress(StoreUnavailable):
            if await store.park_job(task_id, job.attempt) and resubmit is not None:
                await resubmit(task_id)  # answered before the run ended
        return "input"
    try:
        ended = await store.get(task_id)
        if ended is None or ended.is_terminal:
            await store.drop_job(task_id)
    except StoreUnavailable:  # the job expires with the task
        pass
    return "ran"


async def relay_progress(host: Host, task_id: str, signal: dict[str, Any]) -> None:
    """A worker's ``progress`` signal (``ReplayContext.progress``): send it as
    ``notifications/progress`` to the session that created the task, if it is
    here."""
    session = host.notifications.task_sessions.get(task_id)
    carried = _object(signal.get("progress"))
    token = carried.get("progressToken")
    progress = carried.get("progress")
    if (
        session is None
        or not isinstance(token, (str, int))
        or not isinstance(progress, (int, float))
    ):
        return
    params: dict[str, Any] = {"progressToken": token, "progress": progress}
    total = carried.get("total")
    if isinstance(total, (int, float)):
        params["total"] = total
    message = carried.get("message")
    if isinstance(message, str):
        params["message"] = message
    session.notify(
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
    )


def shows_input(tables: RevisionTables, status: str) -> bool:
    """Whether a task in input ``status`` shows its input requests (``inputRequests``,
    answered through the update role: the Tasks extension), rather than sending them
    on streams (2025-11-25)."""
    return (
        tables.has_role("update")
        and "input_requests" in tables.task_by_status[status].model_fields
    )


def _object(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object (a dict), else an empty one."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


class _Suspended(BaseException):
    """Ends the run of a tool that asked for input it has no answer to yet
    (``ReplayContext``): a ``BaseException``, so that the tool's own ``except
    Exception`` does not take it for a failure."""


class ReplayContext(ToolContext):
    """The ``ToolContext`` of a tool run by a remote executor's worker.

    With ``replay_answers`` (a dict: the tool is idempotent), an input request of a
    revision whose tasks show their input requests (the update role) does not wait:
    its key is the order in which the run asks (``elicitation-r0``, ...), so a run
    again asks the same questions under the same keys; a question answered in an
    earlier run gets its stored answer at once, and the first question not answered
    yet is shown in the task (its input status) and ends the run (``suspended``),
    freeing the worker until ``RemoteExecutor.answered`` queues the task again.
    Otherwise (None) it asks and waits as any ``ToolContext``. Where input requests
    travel on streams (2025-11-25), which a worker does not serve, the request is
    stored in the task all the same, and the front-end holding the task's session
    asks the client (``RemoteExecutor.published``).
    """

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` through the front-end holding the task's
        session (a ``progress`` signal: ``relay_progress``)."""
        if self.progress_token is None or self.finished or self.task_id is None:
            return
        await self._server.replicas.signal(
            "progress",
            self.task_id,
            progress={
                "progressToken": self.progress_token,
                "progress": progress,
                "total": total,
                "message": message,
            },
        )

    replay_answers: dict[str, Any] | None = None
    """The answers of earlier runs by key, or None: the tool waits for input."""
    suspended = False
    """Whether the run ended to wait for input."""
    asked = 0
    """How many input requests this run made."""

    async def request_input(
        self,
        method: str,
        params: dict[str, Any],
        *,
        status: StatusName | None = None,
    ) -> dict[str, Any]:
        """Answer from an earlier run, or show the request and end the run (see the
        class); as ``ToolContext.request_input`` where the tool waits."""
        host = self._server
        tables = host.tables
        task_id = self.task_id
        waiting = status or tables.input_required
        if (
            task_id is None
            or waiting not in tables.input
            or (self.replay_answers is None and shows_input(tables, waiting))
        ):
            return await super().request_input(method, params, status=status)
        params = host.inputs.checked_params(method, params)
        host.inputs.require_capability(self, method)
        key = f"{method.split('/')[0]}-r{self.asked}"
        self.asked += 1
        answer: Any = (self.replay_answers or {}).get(key)
        if isinstance(answer, dict):
            return cast(dict[str, Any], answer)
        request = {"method": method, "params": params}
        if self.replay_answers is None:  # stored for the front-end to ask; waits
            return await host.inputs.wait_for_input(
                task_id, key, request, status=waiting
            )

        def ask(record: TaskRecord) -> dict[str, Any]:
            asking = {**record.input_requests, key: request}
            try:  # refuse what the schema does not allow before the task shows it
                host.views.model(replace(record, status=waiting, input_requests=asking))
            except ValueError as error:
                raise JsonRpcError(
                    INVALID_PARAMS, f"Invalid input request: {error}"
                ) from None
            return {"status": waiting, "input_requests": asking, "answers": {}}

        if await host.lifecycle.mutate(task_id, ask) is None:
            raise asyncio.CancelledError  # the task already ended
        self.suspended = True
        raise _Suspended(key)
