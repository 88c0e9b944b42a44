"""A Celery app that runs the example server's tools on Celery workers.

Start Redis (``redis-server --appendonly yes``), then, from the repository root, one
or more workers and one or more front-ends::

    .venv/bin/celery -A examples.celery_app worker --loglevel INFO
    .venv/bin/python examples/server.py --redis redis://127.0.0.1:6379/0 \\
        --executor celery:examples.celery_app

The broker and the task store are the Redis at ``MCPTASKS_REDIS_URL`` (default
``redis://127.0.0.1:6379/0``); the front-ends (``examples/server.py``, both
revisions) create the tasks and serve them from the store, the workers run the tools
(``examples/example_tools.py``: ``slow_compute`` is marked idempotent, so a task whose
worker dies mid-run is run again by another; ``confirm_delete`` asks for input;
``failing_job`` fails) and write their status and results to the store.
``MCPTASKS_LEASE_S`` sets the workers' lease (default 15 s): a task whose worker
was lost is run again, or failed, about that long after.
``MCPTASKS_VISIBILITY_TIMEOUT_S`` sets the broker's ``visibility_timeout`` (default:
Celery's, one hour): a message not acknowledged within it is delivered again, which
the task store turns away while the task runs (see ``docs/celery.md``).
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from server import LIMITS, build_server  # noqa: E402

from mcp_tasks.server.celery_executor import CeleryExecutor  # noqa: E402

REDIS_URL = os.environ.get("MCPTASKS_REDIS_URL", "redis://127.0.0.1:6379/0")
"""The broker and the task store."""

celery: Any = importlib.import_module("celery")  # it has no type information
app = celery.Celery("mcptasks-example", broker=REDIS_URL)
"""The Celery app (``celery -A examples.celery_app worker``)."""
if "MCPTASKS_VISIBILITY_TIMEOUT_S" in os.environ:
    app.conf.broker_transport_options = {
        "visibility_timeout": float(os.environ["MCPTASKS_VISIBILITY_TIMEOUT_S"])
    }

executor = CeleryExecutor(app)
"""What the front-ends pass as ``executor=`` (``--executor celery:MODULE``)."""

server = build_server(
    None,
    redis_url=REDIS_URL,
    limits=replace(LIMITS, lease_s=float(os.environ.get("MCPTASKS_LEASE_S", "15"))),
    executor=executor,
)
"""The server the workers run the tools on (never serves HTTP itself)."""

executor.serve(server)
