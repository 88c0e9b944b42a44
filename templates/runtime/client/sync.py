"""The synchronous client: the async client's methods without ``await``, for scripts,
notebooks and WSGI apps (Django, Flask).

A sync client owns one event loop, run by a daemon thread of its own
(:class:`LoopThread`). Each call submits the async client's coroutine to that loop
(``asyncio.run_coroutine_threadsafe``) and blocks the calling thread until it ends; its
exception is raised as it is. So a sync client works from any thread, also one that
runs an event loop of its own (a Jupyter cell, a test's ``asyncio.run``): that loop
waits while the call runs, but the call does not need it. What runs *in* the client's
loop (the status, progress and notification callbacks, async input handlers) must not
call the sync client: that could never finish, so it raises ``RuntimeError`` at once
(use the async client there, :attr:`SyncClientCore.async_client`).

Input handlers given to a sync client may be plain functions: each call runs in a
worker thread (``asyncio.to_thread``), so one that blocks on ``input()`` leaves the
loop serving the other calls; async handlers run in the loop as usual.

:class:`SyncClientCore` is the twin of ``ClientCore`` (each revision's adapter
subclasses it as ``SyncTasksClient``), :class:`SyncTaskHandle` the twin of
``TaskHandle``. Every public async method of the async classes has a twin here with
the same parameters (a unit test compares the signatures).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import itertools
import threading
import weakref
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterator,
    Mapping,
)
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Protocol,
    TypeAlias,
    TypedDict,
    cast,
)

from pydantic import BaseModel
from typing_extensions import Self, TypeVar, Unpack

from ..input_types import InputContext, InputHandler, TypedInputContext
from ..jsonrpc import RequestId
from ..protocol import (
    CallToolParams,
    CancelTaskParams,
    GetTaskParams,
    ListTasksParams,
    SchemaNotification,
    TaskResultParams,
    TaskSnapshot,
    TaskState,
    UpdateTaskParams,
)
from ..task_ids import StoredTask, TaskIdStore
from .handle import StatusCallback, TaskHandle
from .notifications import NotificationCallback, ProgressCallback
from .tool_result import ToolResult
from .transport import Transport

if TYPE_CHECKING:
    from .core import ClientCore

__all__: list[str] = [
    "LoopThread",
    "SyncClientCore",
    "SyncClientOptions",
    "SyncInputHandler",
    "SyncTaskHandle",
]

V = TypeVar("V")
"""What a coroutine or function run in the loop thread gives."""
V_co = TypeVar("V_co", covariant=True)
"""What an async handle's ``result()`` gives."""
R = TypeVar("R")
"""The revision's own form of a tool result (``ClientCore``'s parameter): its
generated ``CallToolResult``, or ``dict`` where the schema defines none."""
T = TypeVar("T", default=dict[str, Any] | None)
"""A call's ``result_type``: the type of its result's ``structured`` content (without
one, the ``structuredContent`` object as received, or ``None``), as in
``ClientCore``."""
S = TypeVar("S", default=dict[str, Any] | None)
"""The type of a handle's result's ``structured`` content (as in ``TaskHandle``)."""

InputAnswer: TypeAlias = Mapping[str, Any] | BaseModel | None
"""What an input handler returns: the result object (a model or its wire form), or
``None`` to leave the request unanswered for now."""

SyncInputHandler: TypeAlias = Callable[
    [TypedInputContext[Any]], InputAnswer | Awaitable[InputAnswer]
]
"""An input handler of a sync client: a plain function (run in a worker thread, so it
may block, e.g. on ``input()``) or an async one (run in the client's loop). It gets the
request's :class:`TypedInputContext` and returns the result object (``ElicitResult``,
...; a model or its wire form), or ``None`` to leave the request unanswered."""

_numbers = itertools.count(1)


class SyncClientOptions(TypedDict, total=False):
    """The keyword options of a sync client: those of the async client
    (``ClientOptions``), with input handlers that may be plain functions
    (:data:`SyncInputHandler`)."""

    store: TaskIdStore | None
    client_info: Mapping[str, Any] | None
    default_poll_interval: float
    cancel_on_abort: bool
    poll_after_cancel: bool
    ttl_backstop: bool | None
    transport_retries: int
    elicitation_handler: SyncInputHandler | None
    sampling_handler: SyncInputHandler | None
    roots_handler: SyncInputHandler | None
    clock: Callable[[], float]
    sleep: Callable[[float], Awaitable[None]]
    wall_clock: Callable[[], float]
    prefer_tasks: bool
    retry_with_task: bool
    declare_tasks: bool
    subscribe: bool
    max_input_rounds: int


_HANDLER_OPTIONS = ("elicitation_handler", "sampling_handler", "roots_handler")


def _is_async(handler: object) -> bool:
    """Whether calling ``handler`` gives a coroutine (an ``async def`` function or an
    object whose ``__call__`` is one)."""
    call = type(handler).__call__ if callable(handler) else None
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(call)


class LoopThread:
    """An event loop run by a daemon thread of its own, and the calls into it.

    :meth:`run` submits a coroutine and blocks until it ends; :meth:`close` stops the
    loop (cancelling what still runs there) and waits for the thread to end. Plain
    input handlers run in a pool of worker threads of the loop (its default
    executor), shut down with it.
    """

    def __init__(self, name: str | None = None) -> None:
        """Start the loop's thread (``name``: the thread's name, numbered by
        default)."""
        self.name = name or f"mcp-tasks-sync-{next(_numbers)}"
        self.loop = asyncio.new_event_loop()
        """The event loop (runs in :attr:`thread`)."""
        self._executor = concurrent.futures.ThreadPoolExecutor(
            thread_name_prefix=f"{self.name}-handler"
        )
        self.loop.set_default_executor(self._executor)
        self._busy = 0
        self._closed = False
        self.thread = threading.Thread(target=self._main, name=self.name, daemon=True)
        """The thread running :attr:`loop`."""
        self.thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
            left = asyncio.all_tasks(self.loop)
            for task in left:
                task.cancel()
            if left:
                self.loop.run_until_complete(
                    asyncio.gather(*left, return_exceptions=True)
                )
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            self.loop.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ran (no call may be made then)."""
        return self._closed

    def in_loop_thread(self) -> bool:
        """Whether the caller runs in the loop's own thread."""
        return threading.current_thread() is self.thread

    def run(self, coroutine: Coroutine[Any, Any, V]) -> V:
        """Run ``coroutine`` in the loop and return its result (its exception raised
        as it is). Interrupting the wait (``KeyboardInterrupt``) cancels it.

        Raises ``RuntimeError`` when called from the loop's own thread (a callback or
        an async handler of the client: the call could never finish) or after
        :meth:`close`.
        """
        if self.in_loop_thread():
            coroutine.close()
            raise RuntimeError(
                "a sync client was called from its own event loop thread (a callback"
                " or an async input handler of that client): use the async client"
                " there (async_client), or a plain function handler"
            )
        if self._closed:
            coroutine.close()
            raise RuntimeError("the sync client is closed")
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # interrupted: stop the call too (no-op once it ended)
            raise

    def call(self, function: Callable[[], V]) -> V:
        """Run a plain function in the loop's thread (for what touches the loop's
        state) and return its result."""

        async def invoke() -> V:
            return function()

        return self.run(invoke())

    def iterate(self, items: AsyncIterator[V]) -> Iterator[V]:
        """Iterate an async iterator of the loop, one ``__anext__`` per step; leaving
        the loop early closes it."""

        async def step() -> list[V]:
            try:
                return [await items.__anext__()]
            except StopAsyncIteration:
                return []

        async def close() -> None:
            aclose = getattr(items, "aclose", None)
            if aclose is not None:
                await aclose()

        try:
            while True:
                got = self.run(step())
                if not got:
                    return
                yield got[0]
        finally:
            if not self._closed and not self.in_loop_thread():
                self.run(close())

    def threaded(self, handler: SyncInputHandler) -> InputHandler:
        """The async input handler that runs ``handler``: itself when it is async,
        else a call of it in a worker thread (awaiting what it returns, when that is
        awaitable)."""
        if _is_async(handler):
            return cast(InputHandler, handler)

        async def in_worker(context: InputContext) -> InputAnswer:
            self._busy += 1
            try:
                answer = await asyncio.to_thread(
                    handler, cast("TypedInputContext[Any]", context)
                )
            finally:
                self._busy -= 1
            if inspect.isawaitable(answer):
                return await answer
            return answer

        return in_worker

    def close(self) -> None:
        """Stop the loop (cancelling the calls still running in it), wait for its
        thread to end and shut the worker threads down (a handler still blocked, on
        ``input()`` say, is left to return on its own). Idempotent."""
        if self._closed:
            return
        if self.in_loop_thread():
            raise RuntimeError(
                "a sync client cannot be closed from its own event loop thread"
            )
        self._closed = True
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self._executor.shutdown(wait=self._busy == 0, cancel_futures=True)


def _stop(loop: asyncio.AbstractEventLoop) -> None:
    """Stop ``loop`` from any thread (a sync client collected without ``close``)."""
    if not loop.is_closed():
        with contextlib.suppress(RuntimeError):  # closed meanwhile
            loop.call_soon_threadsafe(loop.stop)


class SyncClientBase:
    """What every sync client has: its :class:`LoopThread`, ``close`` and the
    context manager."""

    def __init__(self) -> None:
        self.runner = LoopThread()
        """The client's event loop and its thread."""
        weakref.finalize(self, _stop, self.runner.loop)

    def _async_options(
        self,
        input_handlers: Mapping[str, SyncInputHandler] | None,
        on_notification: NotificationCallback | None,
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        """The async client's keyword options for these: plain input handlers run
        in worker threads."""
        passed = dict(options)
        for name in _HANDLER_OPTIONS:
            handler = passed.get(name)
            if handler is not None:
                passed[name] = self.runner.threaded(handler)
        if input_handlers is not None:
            passed["input_handlers"] = {
                method: self.runner.threaded(handler)
                for method, handler in input_handlers.items()
            }
        if on_notification is not None:
            passed["on_notification"] = on_notification
        return passed

    async def _aclose(self) -> None:
        """Close the async client (overridden by each sync client)."""

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ran."""
        return self.runner.closed

    def close(self) -> None:
        """Close the async client (``aclose``), then stop the event loop and its
        thread. Idempotent."""
        if self.runner.closed:
            return
        try:
            self.runner.run(self._aclose())
        finally:
            self.runner.close()

    def __enter__(self) -> Self:
        """Open the connection (``open``) and return the client."""
        try:
            self.open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the client (:meth:`close`)."""
        self.close()

    def open(self) -> None:
        """Start the connection (overridden by each sync client)."""


class AsyncHandle(Protocol[V_co]):
    """What :class:`SyncTaskHandle` drives: a ``TaskHandle`` or a ``DualHandle``."""

    @property
    def task_id(self) -> str | None: ...

    @property
    def task(self) -> TaskSnapshot | None: ...

    @property
    def done(self) -> bool: ...

    async def result(
        self, *, timeout: float | None = None, on_status: StatusCallback | None = None
    ) -> V_co: ...

    def snapshots(
        self, *, timeout: float | None = None
    ) -> AsyncIterator[TaskSnapshot]: ...

    def notifications(self) -> AsyncIterator[SchemaNotification]: ...

    async def cancel(self, **params: Unpack[CancelTaskParams]) -> TaskState | None: ...


class SyncHandleBase(Generic[V]):
    """What the sync handles share (:class:`SyncTaskHandle`, ``SyncDualHandle``);
    ``V``: what the async handle's ``result()`` gives."""

    def __init__(self, handle: AsyncHandle[V], runner: LoopThread) -> None:
        """Wrap the async ``handle``, whose calls run in ``runner``'s loop."""
        self.handle = handle
        """The async handle (use it in the client's loop only)."""
        self._runner = runner

    @property
    def task_id(self) -> str | None:
        """The task ID, or ``None`` when the server answered the call without a task."""
        return self.handle.task_id

    @property
    def task(self) -> TaskSnapshot | None:
        """The latest snapshot of the task (``None`` without a task or before the
        first fetch)."""
        return self.handle.task

    @property
    def done(self) -> bool:
        """Whether the outcome is known."""
        return self.handle.done

    def snapshots(self, *, timeout: float | None = None) -> Iterator[TaskSnapshot]:
        """Every new snapshot of the task until it is terminal (see
        ``TaskHandle.snapshots``)."""
        return self._runner.iterate(self.handle.snapshots(timeout=timeout))

    def notifications(self) -> Iterator[SchemaNotification]:
        """The schema's notifications naming the task, until the wait on it ends (see
        ``TaskHandle.notifications``): iterate in one thread while another waits for
        :meth:`result`. They are collected from this call on."""
        return self._runner.iterate(self._runner.call(self.handle.notifications))

    def cancel(self, **params: Unpack[CancelTaskParams]) -> TaskState | None:
        """Send ``tasks/cancel`` (see ``TaskHandle.cancel``); a running
        :meth:`result` in another thread then ends with ``TaskCancelled``."""
        return self._runner.run(self.handle.cancel(**params))


class SyncTaskHandle(SyncHandleBase[ToolResult[S]]):
    """The sync twin of ``TaskHandle``: one call and, when the server made one, its
    task, and eventually its result (a ``ToolResult`` whose ``structured`` content is
    an ``S``); the methods block until the async handle's end."""

    def __init__(self, handle: TaskHandle[S], runner: LoopThread) -> None:
        """Wrap the async ``handle``, whose calls run in ``runner``'s loop."""
        super().__init__(handle, runner)

    def result(
        self, *, timeout: float | None = None, on_status: StatusCallback | None = None
    ) -> ToolResult[S]:
        """Wait for the tool's :class:`ToolResult` (see ``TaskHandle.result``: the
        same errors, such as ``InvalidStructuredContent`` when the
        ``structuredContent`` does not validate as the ``result_type``). ``on_status``
        runs in the client's loop thread."""
        return self._runner.run(
            self.handle.result(timeout=timeout, on_status=on_status)
        )


class SyncClientCore(SyncClientBase, Generic[R]):
    """The sync twin of ``ClientCore``: the same options and methods, without
    ``await`` (the revisions' adapters subclass it as ``SyncTasksClient``)::

        with TasksClient.sync("http://127.0.0.1:8000/mcp") as client:
            result = client.call_tool("slow_compute", {"seconds": 3})

    The async client is built in the client's own loop (:attr:`async_client`).
    """

    client_class: ClassVar[type[ClientCore[Any]]]
    """The async client class this one drives (set by each revision's twin)."""

    def __init__(
        self,
        transport: Transport | str,
        *,
        input_handlers: Mapping[str, SyncInputHandler] | None = None,
        on_notification: NotificationCallback | None = None,
        **options: Unpack[SyncClientOptions],
    ) -> None:
        """Start the client's loop thread and build the async client there with
        these options (those of ``ClientCore``; input handlers may be plain
        functions); nothing is sent."""
        super().__init__()
        passed = self._async_options(input_handlers, on_notification, options)
        client_class = self.client_class

        async def build() -> ClientCore[R]:
            return cast("ClientCore[R]", client_class(transport, **passed))

        try:
            self._client = self.runner.run(build())
        except BaseException:
            self.runner.close()
            raise

    @property
    def async_client(self) -> ClientCore[R]:
        """The async client (its attributes, tables and sync helpers may be read from
        any thread; await its methods in the client's loop only)."""
        return self._client

    @property
    def tools(self) -> dict[str, dict[str, Any]]:
        """The tools seen in ``tools/list``, by name."""
        return self._client.tools

    @property
    def server_capabilities(self) -> dict[str, Any]:
        """The server's capabilities (from the handshake, where the revision has
        one)."""
        return self._client.server_capabilities

    def _handle(self, handle: TaskHandle[S]) -> SyncTaskHandle[S]:
        return SyncTaskHandle(handle, self.runner)

    async def _aclose(self) -> None:
        await self._client.aclose()

    def open(self) -> None:
        """Start the connection (see ``ClientCore.open``; ``with`` calls it)."""
        self.runner.run(self._client.open())

    # -- tools ------------------------------------------------------------------------

    def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result_type: type[T] | None = None,
        task: bool | None = None,
        ttl: int | None = None,
        on_progress: ProgressCallback | None = None,
        **params: Unpack[CallToolParams],
    ) -> SyncTaskHandle[T]:
        """Send ``tools/call`` and return a handle without waiting for a task to
        finish (see ``ClientCore.start_tool``; ``result_type``: what the handle's
        ``ToolResult`` validates the ``structuredContent`` into)."""
        handle = self.runner.run(
            self._client.start_tool(
                name,
                arguments,
                result_type=result_type,
                task=task,
                ttl=ttl,
                on_progress=on_progress,
                **params,
            )
        )
        return self._handle(handle)

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        result_type: type[T] | None = None,
        task: bool | None = None,
        ttl: int | None = None,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
        on_progress: ProgressCallback | None = None,
        **params: Unpack[CallToolParams],
    ) -> ToolResult[T]:
        """Call a tool and return its :class:`ToolResult`, whether or not the server
        made a task; with ``result_type``, its ``structured`` content is validated into
        that type (``InvalidStructuredContent``, naming the fields, when it does not
        fit). See ``ClientCore.call_tool``; the callbacks run in the client's loop
        thread."""
        # Thin delegation to the async call_tool: the same parameters (the twin test
        # compares the signatures), passed on as they are, and its return type.
        return self.runner.run(
            self._client.call_tool(
                name,
                arguments,
                result_type=result_type,
                task=task,
                ttl=ttl,
                timeout=timeout,
                on_status=on_status,
                on_progress=on_progress,
                **params,
            )
        )

    def adopt(
        self,
        result: Mapping[str, Any],
        name: str,
        *,
        on_finish: Callable[[], object] | None = None,
    ) -> SyncTaskHandle[dict[str, Any] | None]:
        """Follow the task a ``tools/call`` created (see ``ClientCore.adopt``)."""
        handle = self.runner.run(self._client.adopt(result, name, on_finish=on_finish))
        return self._handle(handle)

    def task_support(self, name: str) -> str:
        """The tool's ``execution.taskSupport`` (``"forbidden"`` when absent or
        unknown)."""
        return self.runner.run(self._client.task_support(name))

    def list_tools(self) -> list[dict[str, Any]]:
        """``tools/list``: every tool, following ``nextCursor``."""
        return self.runner.run(self._client.list_tools())

    # -- tasks ------------------------------------------------------------------------

    def get_task(self, task_id: str, **params: Unpack[GetTaskParams]) -> TaskState:
        """``tasks/get``: the task's current state (one class per status)."""
        return self.runner.run(self._client.get_task(task_id, **params))

    def cancel_task(
        self, task_id: str, **params: Unpack[CancelTaskParams]
    ) -> TaskState | None:
        """``tasks/cancel``: ask the server to stop the task (see
        ``ClientCore.cancel_task``)."""
        return self.runner.run(self._client.cancel_task(task_id, **params))

    def get_task_payload(
        self, task_id: str, **params: Unpack[TaskResultParams]
    ) -> dict[str, Any]:
        """``tasks/result`` (the ``result`` role): block until the task is terminal
        and return the original request's result."""
        return self.runner.run(self._client.get_task_payload(task_id, **params))

    def update_task(
        self,
        task_id: str,
        input_responses: Mapping[str, Mapping[str, Any] | BaseModel],
        **params: Unpack[UpdateTaskParams],
    ) -> None:
        """``tasks/update`` (the ``update`` role): deliver answers to some or all
        outstanding ``inputRequests``."""
        self.runner.run(self._client.update_task(task_id, input_responses, **params))

    def list_tasks(self, **params: Unpack[ListTasksParams]) -> list[TaskState]:
        """``tasks/list`` (the ``list`` role): every task, following ``nextCursor``."""
        return self.runner.run(self._client.list_tasks(**params))

    def created(
        self,
        task: TaskSnapshot,
        context: Mapping[str, Any],
        *,
        model_immediate_response: str | None = None,
        on_finish: Callable[[], object] | None = None,
    ) -> SyncTaskHandle[Any]:
        """Store a new task's ID with ``context`` and return its handle (see
        ``ClientCore.created`` and ``TaskHandle`` for the options)."""
        handle = self.runner.run(
            self._client.created(
                task,
                context,
                model_immediate_response=model_immediate_response,
                on_finish=on_finish,
            )
        )
        return self._handle(handle)

    def task(
        self, task_id: str, *, result_type: type[T] | None = None
    ) -> SyncTaskHandle[T]:
        """A handle for an existing task (fetched on first use); ``result_type`` as in
        :meth:`call_tool`."""
        return self._handle(
            self.runner.call(
                lambda: self._client.task(task_id, result_type=result_type)
            )
        )

    def resume(
        self,
        task_id: str,
        *,
        result_type: type[T] | None = None,
        timeout: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> ToolResult[T]:
        """Continue waiting for a task created earlier (for example by a process that
        crashed) and return its :class:`ToolResult` (``result_type`` as in
        :meth:`call_tool`)."""
        return self.runner.run(
            self._client.resume(
                task_id, result_type=result_type, timeout=timeout, on_status=on_status
            )
        )

    def pending_tasks(self) -> list[StoredTask]:
        """The tasks in the store: created, and not yet seen terminal."""
        return self.runner.run(self._client.pending_tasks())

    def answer_requests(
        self, requests: Mapping[str, object], task_id: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """Answer an ``inputRequests`` map with the registered handlers."""
        return self.runner.run(self._client.answer_requests(requests, task_id))

    def request(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        request_id: RequestId | None = None,
    ) -> dict[str, Any]:
        """Send one request with a fresh ID; error responses are raised as typed
        errors."""
        return self.runner.run(
            self._client.request(method, params, request_id=request_id)
        )
