"""Task stores: where the server keeps every task it created.

``TaskStore`` (``stores.base``) is the protocol the server talks to. Three
implementations ship here, sharing one record codec (``stores.codec``):

- ``InMemoryTaskStore`` (``stores.memory``) keeps tasks in a dict (tests, throw-away
  servers);
- ``SQLiteTaskStore`` (``stores.sqlite``) keeps them in a SQLite database (the
  embedded default). It uses the standard library ``sqlite3`` module in WAL mode, runs
  every write and every query over many rows on one dedicated worker thread so the
  event loop does not wait on them (a ``get`` by task ID reads in place, see the
  class), and commits before a write returns, so a task is durable before the server
  answers with ``CreateTaskResult``;
- ``RedisTaskStore`` (``stores.redis``, also importable from ``redis_store``) keeps
  them in Redis, shared by several server processes.

Two optional protocols extend ``TaskStore``. A store with ``transition`` (all three
stores shipped with this package) lets the server write a status change as one
atomic check-and-set. A ``ReplicaStore`` (``RedisTaskStore``) is shared by several
server processes: it keeps worker leases and carries signals between them.

Limits. Every store keeps counters of what each owner has (unfinished tasks,
finished tasks and the bytes they keep) and of every task it holds, updated with
each create, finish and deletion. ``create`` with a ``Quota`` checks them in the
same atomic step as the insert and raises ``LimitExceeded`` instead of storing, so
concurrent creates (on one server or on several sharing the store) never get past
a limit, and a create costs the same however many tasks its owner has.

A ``TaskRecord`` is revision-neutral: the server renders it to the wire shape of its
protocol revision. The stores know nothing of the server.
"""

from __future__ import annotations

from ..protocol import TERMINAL_STATUSES as TERMINAL_STATUSES
from .base import BatchTransitionStore as BatchTransitionStore
from .base import LimitExceeded as LimitExceeded
from .base import Quota as Quota
from .base import ReplicaStore as ReplicaStore
from .base import Signal as Signal
from .base import SignalHandler as SignalHandler
from .base import StoreUnavailable as StoreUnavailable
from .base import TaskChanges as TaskChanges
from .base import TaskRecord as TaskRecord
from .base import TaskStore as TaskStore
from .base import TransitionStore as TransitionStore
from .base import UsageStore as UsageStore
from .codec import kept_bytes as kept_bytes
from .jobs import Claim as Claim
from .jobs import Job as Job
from .jobs import JobStore as JobStore
from .jobs import SharedJobStore as SharedJobStore
from .memory import InMemoryTaskStore as InMemoryTaskStore
from .sqlite import SQLiteTaskStore as SQLiteTaskStore

__all__ = [
    "TERMINAL_STATUSES",
    "BatchTransitionStore",
    "Claim",
    "InMemoryTaskStore",
    "Job",
    "JobStore",
    "LimitExceeded",
    "Quota",
    "ReplicaStore",
    "SQLiteTaskStore",
    "SharedJobStore",
    "Signal",
    "SignalHandler",
    "StoreUnavailable",
    "TaskChanges",
    "TaskRecord",
    "TaskStore",
    "TransitionStore",
    "UsageStore",
    "kept_bytes",
]
