"""Jobs: what a task run by another process (an executor's worker) needs from the
store, so that only the task's ID travels through the queue.

A ``JobStore`` keeps, next to each task an executor runs elsewhere, its job: the
tool's arguments and the call's context (``Job.spec``, JSON only), whether the job is
``queued`` or ``running``, and how often a worker took it (``attempt``). The store,
not the queue, decides who runs a task:

- a queued job holds no worker lease (the lapsed-lease check of the replicas leaves
  it alone while it is queued);
- a worker takes the job with ``claim_job``: one atomic step that checks the task is
  live (a task cancelled while it was queued is never run) and that the job is
  queued (a duplicate delivery finds it running, under a live lease, and drops out;
  one whose worker was lost waits for the lease check to queue it again or fail it),
  then takes the lease and counts the attempt;
- ``requeue_job`` puts a job back in the queue (its worker was lost, or no worker
  took it), once per attempt however many replicas try at the same moment, and
  ``abandon_job`` gives up one that no worker took even then, unless a worker takes
  it at that moment;
- ``park_job`` ends a run whose tool asked for input (the job ``waiting``, no lease
  held), and ``resume_job`` queues it again with the answers, which the tool's next
  run gets (``Job.answers``) instead of asking again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from .base import ReplicaStore

__all__ = ["Claim", "ClaimOutcome", "Job", "JobStore", "SharedJobStore"]

ClaimOutcome = Literal["claimed", "gone", "ended", "duplicate", "lost", "waiting"]
"""What ``JobStore.claim_job`` found: ``claimed`` (the caller runs the task now),
``gone`` (no such task or job), ``ended`` (the task is terminal, cancelled say),
``duplicate`` (a live lease: another worker runs it), ``lost`` (a worker took it
before and its lease lapsed: the lease check queues it again or fails it; or nobody
took it in time and it was given up: ``abandon_job``) or
``waiting`` (its tool asked for input and ended its run: the answers queue it
again)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """The job of a task run by an executor's worker.

    ``spec`` is JSON (the tool's ``arguments``, the ``revision``, the client's
    ``capabilities``, ``requestParams``, the ``inputResponses`` to its preflight
    questions, whether the tool is ``idempotent``);
    ``state`` is ``queued``, ``running``, ``waiting`` (for answers) or ``abandoned``
    (nobody took it: ``abandon_job``); ``attempt`` counts the workers that took
    it; ``queued_at`` is when it was last queued (seconds since the epoch);
    ``resubmits`` counts how often it was queued again while nobody took it;
    ``answers`` holds the answers to the input requests of earlier runs, by key;
    ``leased`` is whether a worker's lease on the task was live when the job was
    read (read in the same step as the rest, so that a job read as ``running`` and
    not leased is one whose worker was lost, not one a worker just took).
    """

    task_id: str
    spec: dict[str, Any] = field(default_factory=dict[str, Any])
    state: str = "queued"
    attempt: int = 0
    queued_at: float = 0.0
    resubmits: int = 0
    answers: dict[str, Any] = field(default_factory=dict[str, Any])
    leased: bool = False


@dataclass(frozen=True, slots=True)
class Claim:
    """The outcome of ``JobStore.claim_job``: the job when ``outcome`` is
    ``claimed`` (its ``attempt`` counts this one)."""

    outcome: ClaimOutcome
    job: Job | None = None


@runtime_checkable
class JobStore(Protocol):
    """A store that keeps the jobs of tasks run by other processes (see the module
    documentation); ``stores.redis.RedisTaskStore`` is one."""

    async def put_job(
        self, task_id: str, spec: dict[str, Any], expires_at: float | None
    ) -> None:
        """Store a queued job for ``task_id`` (``spec`` must be JSON), kept until
        ``expires_at`` (the task's expiry; None: until ``drop_job``), and release
        the task's lease in the same step: the replica that created the task held
        it until then, so that no lease check finds the task without either."""
        ...

    async def get_job(self, task_id: str) -> Job | None:
        """The job of ``task_id`` and whether its task's lease is live, read in one
        atomic step, or None."""
        ...

    async def get_jobs(self, task_ids: Sequence[str]) -> list[Job | None]:
        """The jobs of ``task_ids`` (None where a task has none), each read with its
        task's lease in one atomic step, in one round trip."""
        ...

    async def claim_job(self, task_id: str, holder: str, lease_ms: int) -> Claim:
        """Take the job of a live, queued task with a lease for ``holder`` (see the
        module documentation)."""
        ...

    async def requeue_job(
        self, task_id: str, attempt: int, *, resubmit: bool = False
    ) -> bool:
        """Queue the job again if it is still at ``attempt`` and holds no live lease:
        a ``running`` job whose worker was lost, or (``resubmit``) a ``queued`` one no
        worker took. Returns whether this call queued it."""
        ...

    async def abandon_job(self, task_id: str, attempt: int) -> bool:
        """Give up the job of a task no worker took, which its caller then fails: True
        if it is still ``queued`` at ``attempt`` with no live lease (or was given up
        already), False if a worker took it meanwhile (leave it to that worker). A
        worker's claim of a job given up finds it ``lost``."""
        ...

    async def park_job(self, task_id: str, attempt: int) -> bool:
        """End the run at ``attempt`` of a tool that asked for input: the job waits
        for the answers (``resume_job``), holding no lease. Returns True when the
        answers came before the run ended: the job is queued again at once, and the
        caller submits it."""
        ...

    async def resume_job(self, task_id: str, answers: dict[str, Any]) -> bool:
        """Queue a ``waiting`` job again with ``answers`` (JSON, by key) added to its
        ``answers``; a job whose run has yet to end (``park_job``) keeps them and is
        queued as it ends, and a job queued already (its worker was lost after it
        asked) keeps them for its next run. Returns whether this call queued it (once,
        however many replicas try): then the caller submits it."""
        ...

    async def drop_job(self, task_id: str) -> None:
        """Forget the job of a task that ended."""
        ...


@runtime_checkable
class SharedJobStore(JobStore, ReplicaStore, Protocol):
    """A ``JobStore`` that several processes share (a ``ReplicaStore``: worker
    leases and signals between them), which an executor whose workers run in other
    processes needs: ``stores.redis.RedisTaskStore``."""
