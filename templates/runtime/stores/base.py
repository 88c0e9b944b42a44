"""What every task store offers: the record, the protocols and the limits.

``TaskStore`` is the protocol the server talks to; ``TaskRecord`` is what it stores,
revision-neutral (the server renders it to the wire shape of its protocol revision).
Two optional protocols extend ``TaskStore``: a store with ``transition`` (every store
of this package) lets the server write a status change as one atomic check-and-set,
and a ``ReplicaStore`` (``stores.redis.RedisTaskStore``) is shared by several server
processes: it keeps worker leases and carries signals between them.

Limits. ``create`` with a ``Quota`` checks the counts a store keeps of what each owner
has in the same atomic step as the insert, and raises ``LimitExceeded`` instead of
storing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict, runtime_checkable

from ..protocol import TERMINAL_STATUSES

__all__ = [
    "BatchTransitionStore",
    "LimitExceeded",
    "Quota",
    "ReplicaStore",
    "Signal",
    "SignalHandler",
    "StoreUnavailable",
    "TaskChanges",
    "TaskRecord",
    "TaskStore",
    "TransitionStore",
    "UsageStore",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRecord:
    """One stored task, independent of the protocol revision.

    Times are seconds since the epoch (UTC). ``result`` holds the original request's
    result object and ``error`` a JSON-RPC error object; ``input_requests`` maps each
    outstanding input-request key to its request; ``extra`` holds the values of task
    fields the schema has and the runtime does not know, by wire name. ``seq`` is
    assigned by the store on creation and orders tasks for listing.
    """

    task_id: str
    owner: str | None
    tool: str
    status: str
    created_at: float
    updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] = field(
        default_factory=dict[str, dict[str, Any]]
    )
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    """Task fields the runtime does not know (new optional schema fields), by wire
    name."""
    answers: dict[str, dict[str, Any]] = field(
        default_factory=dict[str, dict[str, Any]]
    )
    """Answers given to input requests, by key, kept until the task asks again or
    ends: a worker on another replica that missed the answer signal (pub/sub delivers
    at most once) finds them here."""
    seq: int = 0

    @property
    def is_terminal(self) -> bool:
        """Whether the task reached a terminal status
        (``protocol.TERMINAL_STATUSES``)."""
        return self.status in TERMINAL_STATUSES

    @property
    def expires_at(self) -> float | None:
        """When the TTL runs out (seconds since the epoch), or None when unlimited."""
        if self.ttl_ms is None:
            return None
        return self.created_at + self.ttl_ms / 1000.0

    def is_expired(self, now: float) -> bool:
        """Whether the TTL has elapsed at ``now``."""
        expires_at = self.expires_at
        return expires_at is not None and now >= expires_at


class TaskChanges(TypedDict, total=False):
    """Changes to a :class:`TaskRecord` (its fields by name; ``task_id``,
    ``updated_at`` and ``seq`` are the store's), as the server's lifecycle applies
    them: a misspelt field is a type error."""

    owner: str | None
    tool: str
    status: str
    created_at: float
    ttl_ms: int | None
    poll_interval_ms: int | None
    status_message: str | None
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    input_requests: dict[str, dict[str, Any]]
    extra: dict[str, Any]
    answers: dict[str, dict[str, Any]]


class StoreUnavailable(Exception):
    """The store cannot reach its backend (a Redis outage, say); retry later.

    The store logs the cause once per outage, so whoever catches this need not.
    """


@dataclass(frozen=True, slots=True, kw_only=True)
class Quota:
    """The limits ``TaskStore.create`` checks in the same atomic step as the insert.

    Each is named after the ``server_core.Limits`` field the server fills it from;
    None leaves it unchecked. A create is refused when the count is already at the
    maximum, so it never ends above it:

    - ``max_active_tasks``: the unfinished tasks of the new task's owner;
    - ``max_finished_tasks``: the owner's finished tasks plus its unfinished ones
      (each of which will finish), so the finished tasks never exceed it;
    - ``max_stored_bytes``: what the owner's finished tasks keep (``kept_bytes``);
      the results of tasks still running come on top, each bounded by the server's
      ``Limits.max_result_bytes``;
    - ``max_tasks``: every task the store holds, of every owner.
    """

    max_active_tasks: int | None = None
    max_finished_tasks: int | None = None
    max_stored_bytes: int | None = None
    max_tasks: int | None = None

    def check(self, active: int, finished: int, kept: int, total: int) -> None:
        """Raise ``LimitExceeded`` when an owner with ``active`` unfinished and
        ``finished`` finished tasks keeping ``kept`` bytes, in a store holding
        ``total`` tasks, may not have one more (the limits in the order above)."""
        for limit, maximum, current in (
            ("max_active_tasks", self.max_active_tasks, active),
            ("max_finished_tasks", self.max_finished_tasks, finished + active),
            ("max_stored_bytes", self.max_stored_bytes, kept),
            ("max_tasks", self.max_tasks, total),
        ):
            if maximum is not None and current >= maximum:
                raise LimitExceeded(limit, current, maximum)


class LimitExceeded(Exception):
    """``create`` refused a task: a ``Quota`` limit is reached (nothing was stored).

    ``limit`` names the ``Quota`` field (``"max_active_tasks"``, ...), ``current`` is
    the count it was checked against and ``maximum`` the limit.
    """

    def __init__(self, limit: str, current: int, maximum: int) -> None:
        super().__init__(f"{limit}: {current} (limit {maximum})")
        self.limit = limit
        self.current = current
        self.maximum = maximum


class TaskStore(Protocol):
    """Persistence for tasks. Every method is a coroutine; a write is durable on
    return."""

    async def open(self) -> None:
        """Prepare the store for use (create tables, open connections)."""
        ...

    async def close(self) -> None:
        """Release every resource the store holds."""
        ...

    async def create(
        self, record: TaskRecord, *, quota: Quota | None = None
    ) -> TaskRecord:
        """Store a new task and return it with ``seq`` assigned.

        With ``quota``, raise ``LimitExceeded`` (storing nothing) when the task's
        owner or the store is at one of its limits; the check and the insert are one
        atomic step.
        """
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task with this ID, or None."""
        ...

    async def put(self, record: TaskRecord) -> None:
        """Replace the stored state of an existing task; a terminal one never
        changes."""
        ...

    async def delete(self, task_ids: list[str]) -> None:
        """Forget these tasks."""
        ...

    async def list_tasks(
        self, owner: str | None, after_seq: int, limit: int
    ) -> list[TaskRecord]:
        """Up to ``limit`` tasks of ``owner`` with ``seq > after_seq``, in ``seq``
        order."""
        ...

    async def count_active(self, owner: str | None) -> int:
        """How many non-terminal tasks ``owner`` has."""
        ...

    async def expired(self, now: float) -> list[str]:
        """IDs of the tasks whose TTL has elapsed at ``now``."""
        ...

    async def unfinished(self) -> list[TaskRecord]:
        """Every task that is not terminal (used for crash recovery)."""
        ...


@runtime_checkable
class TransitionStore(Protocol):
    """A store that can change a task's status as one atomic check-and-set."""

    async def transition(
        self,
        task_id: str,
        allowed_from: frozenset[str],
        record: TaskRecord,
        *,
        expected_updated_at: float | None = None,
    ) -> bool:
        """Store ``record`` only if the task is now in one of ``allowed_from``.

        With ``expected_updated_at`` the stored record must also still have that
        ``updated_at`` (a compare-and-set on the whole record). A terminal task
        never changes. Returns whether the record was written.
        """
        ...


@runtime_checkable
class BatchTransitionStore(Protocol):
    """A store that writes many status changes at once (the server fails its running
    tasks this way when it shuts down)."""

    async def transition_many(
        self, changes: Sequence[tuple[frozenset[str], TaskRecord, float | None]]
    ) -> list[bool]:
        """``transition(record.task_id, allowed_from, record,
        expected_updated_at=...)`` for each ``(allowed_from, record,
        expected_updated_at)``, written together (one commit); returns whether each
        record was written."""
        ...


Signal = dict[str, Any]
"""A JSON object sent from one server process to every other (see ``ReplicaStore``)."""

SignalHandler = Callable[[Signal], Awaitable[None]]
"""Receives every ``Signal`` published through a ``ReplicaStore``."""


@runtime_checkable
class UsageStore(Protocol):
    """A store that counts what each owner's finished tasks keep (``Limits``)."""

    async def usage(self, owner: str | None) -> tuple[int, int]:
        """How many finished tasks ``owner`` has, and their ``kept_bytes`` in total
        (from the store's counters: the cost does not grow with the tasks)."""
        ...


@runtime_checkable
class ReplicaStore(Protocol):
    """A store shared by several server processes (replicas).

    Worker leases: the replica running a task renews a lease on it; a task whose
    lease ran out lost its worker. Signals: a message published by one replica
    reaches the handlers every replica subscribed (cancellation, input answers,
    status changes for notification streams).
    """

    async def hold_leases(
        self, task_ids: Sequence[str], holder: str, lease_ms: int
    ) -> list[str]:
        """Take or renew the leases on ``task_ids`` for ``lease_ms`` milliseconds;
        return the tasks among them that another run holds now, whose leases are
        left alone: another holder's lease, or a lapsed lease on a task an executor
        queued again (``server.executor``: a stalled worker's task, run elsewhere).
        Their runs here must stop."""
        ...

    async def leased(self, task_ids: Sequence[str]) -> list[bool]:
        """For each task, whether a lease on it is still live."""
        ...

    async def publish(self, signal: Signal) -> None:
        """Send ``signal`` to every subscribed replica (this one included)."""
        ...

    async def subscribe(self, handler: SignalHandler) -> None:
        """Call ``handler`` for every signal from now on; returns once listening."""
        ...
