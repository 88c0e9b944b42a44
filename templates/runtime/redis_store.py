"""A ``TaskStore`` on Redis, for servers that run as several replicas.

The store moved to ``stores.redis`` (its Lua scripts to ``stores.redis_scripts``, its
outage handling and signal channel to ``stores.redis_link``); this module re-exports
it so that ``from <package>.redis_store import RedisTaskStore`` keeps working.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as TYPE_CHECKING

from .jsonrpc import INTERNAL_ERROR as INTERNAL_ERROR
from .jsonrpc import JsonRpcError as JsonRpcError
from .protocol import TERMINAL_STATUSES as TERMINAL_STATUSES
from .stores.base import LimitExceeded as LimitExceeded
from .stores.base import Quota as Quota
from .stores.base import ReplicaStore as ReplicaStore
from .stores.base import StoreUnavailable as StoreUnavailable
from .stores.base import TaskRecord as TaskRecord
from .stores.base import TaskStore as TaskStore
from .stores.codec import kept_bytes as kept_bytes
from .stores.redis import RedisTaskStore as RedisTaskStore
from .stores.redis import RedisUnavailable as RedisUnavailable

__all__ = ["RedisTaskStore", "RedisUnavailable"]
