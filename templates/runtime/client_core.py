"""Revision-neutral client runtime: it moved into the ``client`` subpackage.

The errors are in ``client.errors``, the task decoding in ``client.codec``, one wait on
a task in ``client.wait`` (:class:`Wait`) and ``client.handle`` (:class:`TaskHandle`),
the client base in ``client.core`` (:class:`ClientCore`, composed of the parts in
``client.inputs``, ``client.notifications``, ``client.results``, ``client.calls`` and
``client.tasks``). This module re-exports their names, so imports from here keep
working.
"""

from __future__ import annotations

from .client import shared as _shared
from .client.codec import M as M
from .client.codec import answer_to_wire as answer_to_wire
from .client.codec import decode_as as decode_as
from .client.codec import decode_state as decode_state
from .client.codec import to_wire as to_wire
from .client.codec import wire_value as wire_value
from .client.core import C as C
from .client.core import ClientCore as ClientCore
from .client.core import R as R
from .client.errors import ERRORS_BY_NAME as ERRORS_BY_NAME
from .client.errors import HeaderMismatch as HeaderMismatch
from .client.errors import (
    MissingRequiredClientCapability as MissingRequiredClientCapability,
)
from .client.errors import UnsupportedProtocolVersion as UnsupportedProtocolVersion
from .client.http import HttpTransport as HttpTransport
from .client.notifications import LISTEN_DRAIN_S as LISTEN_DRAIN_S
from .client.shared import *  # noqa: F403 - the shared public names
from .client.transport import Transport as Transport
from .client.transport import TransportError as TransportError
from .client.wait import Wait as Wait
from .client.wait import nap as nap
from .jsonrpc import INTERNAL_ERROR as INTERNAL_ERROR
from .jsonrpc import INVALID_PARAMS as INVALID_PARAMS
from .jsonrpc import INVALID_REQUEST as INVALID_REQUEST
from .jsonrpc import METHOD_NOT_FOUND as METHOD_NOT_FOUND
from .jsonrpc import JsonRpcError as JsonRpcError
from .jsonrpc import RequestId as RequestId
from .jsonrpc import json_object as json_object
from .protocol import TaskState as TaskState
from .revision import INPUT_CAPABILITIES as INPUT_CAPABILITIES
from .revision import RevisionTables as RevisionTables
from .task_ids import SqliteTaskIdStore as SqliteTaskIdStore
from .task_ids import StoredTask as StoredTask
from .task_ids import TaskIdStore as TaskIdStore

__all__: list[str] = []
__all__ += _shared.__all__
