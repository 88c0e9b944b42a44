"""``CeleryExecutor``: tools of tasks run on Celery workers (``celery -A yourapp
worker``), the front-ends serving the tasks from the shared Redis task store.

The ``celery`` package is an optional dependency (``pip install 'celery[redis]'``):
this module never imports it; the executor uses the Celery app it is given.

One module (your Celery app) builds the app, the executor and the server the workers
run the tools on, with the same tools the front-ends list::

    app = Celery("tools", broker="redis://127.0.0.1:6379/0")
    executor = CeleryExecutor(app)
    server = TasksServer("tools", store=RedisTaskStore(url), executor=executor)
    ...  # register the tools on server
    executor.serve(server)

and every front-end builds its server with ``executor=`` that module's executor.
Only the task's ID travels through the broker (JSON: the app is configured to send and
accept nothing else, so no pickle anywhere); the arguments, the principal and the
outcome live in the task store (``stores.jobs``). What the executor relies on, and
why, given how Celery 5 behaves with a Redis broker:

- the task store decides who runs a task (``server.executor.run_task``): a message
  delivered again (a task running longer than the broker's ``visibility_timeout``, a
  requeued message) finds the live lease and drops out, so a task runs once;
- a cancelled task is marked in the store, which the worker checks before it starts
  the tool and while it runs (the cancel signal stops a running one at once); a
  Celery ``revoke`` is never needed, which a worker offline at the time would miss;
- tasks are acknowledged when they start (``task_acks_late`` off): a worker killed
  mid-task loses its lease, and the replicas' lease check runs the task again
  (idempotent tools, at most ``max_attempts`` times) or fails it within about the
  lease time, instead of the broker redelivering it after its visibility timeout,
  and without end for a task that kills its worker;
- ``worker_prefetch_multiplier`` is 1, so that a busy worker does not hold messages
  an idle one could run.

Each worker process runs one asyncio event loop in a thread of its own, with the
served servers started in it (their store connection, lease renewal and signals),
and each Celery task waits for its tool there; run workers with the prefork pool
(the default) and ``-c`` as many tools at once as a worker should run.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .executor import RemoteExecutor

__all__ = ["TASK_NAME", "CeleryExecutor", "configure"]

_log = logging.getLogger(__name__)

TASK_NAME = "mcptasks.run_task"
"""The name of the Celery task that runs one MCP task by its ID."""


def configure(app: Any) -> None:
    """Set what ``CeleryExecutor`` relies on in the Celery app's configuration: JSON
    only (no pickle), acknowledgement as a task starts, one prefetched message per
    process, no result backend for its task (see the module documentation)."""
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        task_acks_late=False,
        task_reject_on_worker_lost=False,
        worker_prefetch_multiplier=1,
        broker_connection_retry_on_startup=True,
    )


class CeleryExecutor(RemoteExecutor):
    """Runs the tools of tasks on Celery workers (see the module documentation).

    ``app`` is your Celery app (configured with ``configure`` unless ``configure_app``
    is False); ``task_name`` names the Celery task registered on it, sent to ``queue``
    (None: the app's default queue). ``max_attempts``, ``queue_timeout_s`` and
    ``cancel_check_s``: see ``RemoteExecutor``. A server built with it refuses a
    task store that the workers cannot share (anything but ``RedisTaskStore``).
    """

    def __init__(
        self,
        app: Any,
        *,
        task_name: str = TASK_NAME,
        queue: str | None = None,
        configure_app: bool = True,
        max_attempts: int = 3,
        queue_timeout_s: float = 300.0,
        cancel_check_s: float = 0.5,
    ) -> None:
        super().__init__(
            max_attempts=max_attempts,
            queue_timeout_s=queue_timeout_s,
            cancel_check_s=cancel_check_s,
        )
        if configure_app:
            configure(app)
        self.app = app
        self.queue = queue

        def run_task(task_id: str) -> str:
            """Run one MCP task by its ID (in a worker process)."""
            return self.run_in_worker(task_id)

        self.task: Any = app.task(name=task_name, ignore_result=True)(run_task)
        """The Celery task that runs one MCP task by its ID."""
        self._lock = threading.Lock()
        self._pid = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = False
        self._publisher: ThreadPoolExecutor | None = None
        self._publisher_pid = 0

    async def submit(self, task_id: str) -> None:
        """Send ``task_id`` to the workers (the broker's client blocks: it runs in a
        thread of its own)."""
        options: dict[str, Any] = {} if self.queue is None else {"queue": self.queue}
        send = functools.partial(self.task.apply_async, (task_id,), **options)
        await asyncio.get_running_loop().run_in_executor(self.publisher(), send)

    def publisher(self) -> ThreadPoolExecutor:
        """The thread that sends messages to the broker (one per process: a forked
        worker process makes its own)."""
        with self._lock:
            if self._publisher is None or self._publisher_pid != os.getpid():
                self._publisher = ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="mcptasks-celery-send"
                )
                self._publisher_pid = os.getpid()
            return self._publisher

    def run_in_worker(self, task_id: str) -> str:
        """The body of the Celery task: run the MCP task on this process's event loop
        (``RemoteExecutor.run``) and wait for it."""
        _log.info("task %s: received by process %d", task_id, os.getpid())
        future = asyncio.run_coroutine_threadsafe(self.run(task_id), self.worker_loop())
        outcome = future.result()
        _log.info("task %s: %s", task_id, outcome)
        return outcome

    def worker_loop(self) -> asyncio.AbstractEventLoop:
        """This process's event loop (started in a thread, with the served servers
        started in it, on first use)."""
        with self._lock:
            if self._loop is None or self._pid != os.getpid():  # a new process
                loop = asyncio.new_event_loop()
                threading.Thread(
                    target=loop.run_forever, name="mcptasks-worker-loop", daemon=True
                ).start()
                self._loop, self._pid, self._started = loop, os.getpid(), False
            if not self._started:  # again on the next task if Redis was down
                future = asyncio.run_coroutine_threadsafe(
                    self.start_servers(), self._loop
                )
                future.result()
                self._started = True
            return self._loop

    async def start_servers(self) -> None:
        """Start every served server (in the worker's event loop); on a failure (Redis
        unreachable), close them again, so that the next task starts them anew."""
        if not self.servers:
            raise RuntimeError("CeleryExecutor.serve was never called in the app")
        servers: list[Any] = list(self.servers.values())
        try:
            for server in servers:
                await server.start()
        except BaseException:
            for server in servers:
                with contextlib.suppress(Exception):
                    await server.close()
            raise
