"""The checker's probes that take a conversation rather than one request.

They moved to the ``check`` package: ``check.probes`` (another principal,
``errors.foreign_task``; the routing headers), ``check.probes_notifications`` (the
status notifications) and ``check.tool_options`` (``tool_problems``). This module
re-exports their names so that existing imports keep working.
"""

from __future__ import annotations

from .check.checks import all_runs as all_runs
from .check.checks import parse_time as parse_time
from .check.probes import FOREIGN_WAIT_S as FOREIGN_WAIT_S
from .check.registry import check as check
from .check.results import CheckFailed as CheckFailed
from .check.results import CheckSkipped as CheckSkipped
from .check.results import Exchange as Exchange
from .check.session import Session as Session
from .check.session import TaskRun as TaskRun
from .check.session import input_answer as input_answer
from .check.tool_options import tool_problems as tool_problems
from .client_core import InputContext as InputContext
from .jsonrpc import JsonRpcError as JsonRpcError
from .jsonrpc import json_object as json_object
from .transport import TransportError as TransportError

__all__ = ["FOREIGN_WAIT_S", "tool_problems"]
