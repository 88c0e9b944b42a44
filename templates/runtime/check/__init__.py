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

Layout: ``rules`` (tool kinds, ``Rules``, ``SchemaCheck``), ``results`` and ``report``
(verdicts, ``Report``), ``session`` (the checker's ``Session`` and task runs),
``registry`` (``@check``), ``checks`` (the behavioural checks), ``schema_checks``,
``probes`` (a second principal, ``errors.foreign_task``; the routing headers),
``probes_notifications`` (the notifications' contents), ``tool_options`` (the named
tools against the server's), ``runner`` (``run_checks``) and ``cli`` (``main``).

Exit status: 0 when every check passed (or, with ``--allow-skips``, none failed), 1 when
one failed, 2 for bad usage (including a ``--tool`` the server does not list or whose
arguments its input schema rejects), 3 when none failed but some did not run.
"""

from __future__ import annotations

from ..client_core import ClientCore as ClientCore
from ..client_core import InputContext as InputContext
from ..jsonrpc import INVALID_PARAMS as INVALID_PARAMS
from ..jsonrpc import METHOD_NOT_FOUND as METHOD_NOT_FOUND
from ..jsonrpc import JsonRpcError as JsonRpcError
from ..jsonrpc import json_object as json_object
from ..protocol import REVISIONS as REVISIONS
from ..revision import RevisionTables as RevisionTables
from ..task_ids import MemoryTaskIdStore as MemoryTaskIdStore
from ..transport import HttpTransport as HttpTransport
from ..transport import TransportError as TransportError
from .checks import all_runs as all_runs
from .checks import parse_time as parse_time
from .cli import main as main
from .registry import REGISTRY as REGISTRY
from .registry import Check as Check
from .registry import check as check
from .report import Report as Report
from .results import CheckFailed as CheckFailed
from .results import CheckResult as CheckResult
from .results import CheckSkipped as CheckSkipped
from .results import ConfigurationError as ConfigurationError
from .results import Exchange as Exchange
from .rules import KINDS as KINDS
from .rules import Rules as Rules
from .rules import SchemaCheck as SchemaCheck
from .runner import checks_module as checks_module
from .runner import detect as detect
from .runner import run_checks as run_checks
from .session import NOT_DURABLE as NOT_DURABLE
from .session import Session as Session
from .session import TaskRun as TaskRun
from .session import input_answer as input_answer

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
