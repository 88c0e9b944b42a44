"""Resource limits of the server (``Limits``), the rate-limiter hook, and the checks
that apply them to one request's inputs and one tool's result."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from ..jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, LIMIT_EXCEEDED, JsonRpcError
from ..stores import LimitExceeded
from .wire import json_size, short

RateLimiter = Callable[[str | None, str], bool]
"""``(principal, method) -> allowed``; a refused call gets ``LIMIT_EXCEEDED``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Resource limits and timing hints, all documented to clients through errors.

    - ``max_ttl_ms`` caps the lifetime of a task; ``default_ttl_ms`` is used when the
      client asks for none (None means unlimited). A task whose worker still runs
      when its TTL is about to run out is failed ("The task's TTL ran out ...") and
      its worker stopped, whatever the store: ``poll_interval_ms`` (at least 1 s, at
      most a third of the TTL) before it runs out, so that a client polling as
      suggested sees it ``failed`` before it expires and is deleted;
    - ``poll_interval_ms`` is the longest polling hint a task gets (None: no hint).
      A young task gets a shorter one, so that a tool that finishes at once is not
      reported a whole interval later: the hint is the task's age times
      ``poll_interval_growth``, but at least ``first_poll_interval_ms`` (None: a
      twentieth of ``poll_interval_ms``) and at most ``poll_interval_ms``
      (``poll_interval_at``). With the defaults a client polls when the task is
      about 0.05, 0.15 and 0.45 intervals old, then every interval: a task that ran
      for less than an interval is seen finished at most about twice as long after
      it finished as it had run, for about three more ``tasks/get`` per task than a
      fixed hint. ``first_poll_interval_ms=poll_interval_ms`` gives a fixed hint;
    - ``max_poll_hold_ms``: a ``tasks/get`` of a ``working`` task younger than its
      longest hint is held until the task changes (a new status, message or field),
      at most until the task is ``poll_interval_ms`` old and at most this long; it
      then answers the state of that moment. So a client polling at the short first
      hint learns of a tool that finishes at once as soon as it does, and one whose
      task runs on polls next a whole interval later: no more requests than with a
      fixed hint. A caller may have ``max_listens`` gets held at once (beyond, they
      are answered at once); 0 turns holding off. Keep it below the clients' read
      timeout (httpx: 5 s);
    - ``answer_within_ms``: where the revision lets the server answer a call with
      its result instead of a task (the extension), a task-capable tool that
      finishes within this many milliseconds of the call is answered inline, with
      its result (or its JSON-RPC error), and its task is forgotten; one that does
      not (or asks for input) is answered with its task as usual. 0 (the default)
      always answers with a task; ``Tool.answer_within_ms`` overrides it per tool.
    - ``max_active_tasks`` is the number of unfinished tasks one principal may have;
    - ``max_input_bytes`` bounds tool arguments and input responses (JSON size);
    - ``max_result_bytes`` bounds one task's stored result (JSON size): a tool whose
      result is larger fails its task;
    - ``max_finished_tasks`` and ``max_stored_bytes`` bound what one principal keeps
      in finished tasks until their TTL elapses (their number, and the JSON size of
      their results and errors); a new task beyond either is refused. Unfinished
      tasks count towards ``max_finished_tasks`` (each will finish), so the finished
      ones never exceed it; ``max_stored_bytes`` is checked against the tasks
      finished so far;
    - ``max_tasks`` bounds the tasks the store holds for all principals together
      (unfinished and finished), None for no bound;
    - ``sweep_interval_s`` is how often expired tasks are purged;
    - ``max_listens`` is the number of ``subscriptions/listen`` streams one principal
      (when anonymous: one client address) may hold open, and
      ``max_listen_task_ids`` the number of task IDs one of them may name;
    - ``lease_s`` is the worker lease on a store shared by several replicas (a
      ``ReplicaStore`` such as Redis): each replica renews the leases of the tasks it
      runs every ``lease_s / 3`` seconds and, as often, fails the unfinished tasks
      whose lease ran out, so a task whose replica died is ``failed`` within about
      ``lease_s * 4 / 3`` seconds. It must exceed the longest stall of the event loop;
    - ``limit_error_code`` is the JSON-RPC code for a refused limit (task count, rate
      limit), which the spec leaves open. Over HTTP it has the status the revision
      gives ``LIMIT_EXCEEDED``, whichever store holds the tasks: 429 in the
      extension, 200 in 2025-11-25 (which answers every JSON-RPC error with 200);
    - ``session_pressure`` and ``session_pressure_idle_s`` keep room for new sessions
      (revisions with sessions): once the open sessions reach ``session_pressure``
      times the server's ``max_sessions``, a new session first closes the sessions
      unused for ``session_pressure_idle_s`` seconds (no request or stream open),
      least recently used first, until the open ones are below that mark again. So
      sessions nobody uses (opened under made-up bearer tokens, say) cannot keep new
      clients out for long.

    The task-count limits are checked by the store in the same atomic step as the
    create (``stores.Quota``), so concurrent creates, on one server or on replicas
    sharing a store, never get past them.
    """

    max_ttl_ms: int | None = 86_400_000
    default_ttl_ms: int | None = 3_600_000
    poll_interval_ms: int | None = 1_000
    first_poll_interval_ms: int | None = None
    poll_interval_growth: float = 2.0
    answer_within_ms: int = 0
    max_poll_hold_ms: int = 2_000
    max_active_tasks: int = 100
    max_input_bytes: int = 1_048_576
    max_result_bytes: int = 4 * 1_048_576
    max_finished_tasks: int = 1_000
    max_stored_bytes: int = 64 * 1_048_576
    max_tasks: int | None = 100_000
    sweep_interval_s: float = 30.0
    max_listens: int = 128
    max_listen_task_ids: int = 100
    lease_s: float = 15.0
    limit_error_code: int = LIMIT_EXCEEDED
    session_pressure: float = 0.8
    session_pressure_idle_s: float = 60.0

    def __post_init__(self) -> None:
        for name in ("sweep_interval_s", "lease_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"Limits.{name} must be a positive number of seconds")
        if not 0 <= self.session_pressure <= 1:
            raise ValueError("Limits.session_pressure must be between 0 and 1")
        if not self.session_pressure_idle_s >= 0:
            raise ValueError("Limits.session_pressure_idle_s must not be negative")
        if not 0 < self.poll_interval_growth < math.inf:
            raise ValueError("Limits.poll_interval_growth must be a positive number")
        first = self.first_poll_interval_ms
        if first is not None and not 0 <= first <= (self.poll_interval_ms or 0):
            raise ValueError(
                "Limits.first_poll_interval_ms must lie between 0 and"
                " Limits.poll_interval_ms"
            )
        if self.answer_within_ms < 0:
            raise ValueError("Limits.answer_within_ms must not be negative")
        if self.max_poll_hold_ms < 0:
            raise ValueError("Limits.max_poll_hold_ms must not be negative")

    def poll_interval_at(self, age_ms: float, longest: int | None) -> int | None:
        """The polling hint of a live task ``age_ms`` old whose longest hint is
        ``longest`` (the ``poll_interval_ms`` stored with it; None: no hint): its age
        times ``poll_interval_growth``, between ``first_poll_interval_ms`` (default a
        twentieth of ``longest``) and ``longest``."""
        if longest is None:
            return None
        first = self.first_poll_interval_ms
        first = longest // 20 if first is None else min(first, longest)
        grown = age_ms * self.poll_interval_growth
        if grown >= longest:
            return longest
        return max(first, round(grown))


def refusal(refused: LimitExceeded) -> str:
    """The error message for a create refused by a ``Limits`` task-count limit."""
    current, maximum = refused.current, refused.maximum
    if refused.limit == "max_active_tasks":
        return (
            f"Too many unfinished tasks: {current} (limit {maximum} per principal);"
            " wait for some to finish or cancel them"
        )
    if refused.limit == "max_finished_tasks":
        return (
            f"Too many finished tasks kept: {current}, unfinished ones included as"
            f" they will finish (limit {maximum} per principal); finished tasks are"
            " deleted when their TTL elapses"
        )
    if refused.limit == "max_stored_bytes":
        return (
            f"Finished tasks keep too much: {current} bytes of results (limit"
            f" {maximum} bytes per principal); they are deleted when their TTL"
            " elapses"
        )
    return (
        f"The server holds too many tasks: {current} (limit {maximum} for all"
        " principals); try again later"
    )


def check_size(limits: Limits, what: str, value: Any) -> None:
    """Refuse inputs larger than ``limits.max_input_bytes``."""
    size = json_size(value)
    if size > limits.max_input_bytes:
        raise JsonRpcError(
            INVALID_PARAMS,
            f"{what} is too large: {size} bytes (limit {limits.max_input_bytes})",
        )


def input_responses(limits: Limits, responses: Any) -> dict[str, Any]:
    """A request's ``params.inputResponses``, checked: an object within the size
    limit."""
    if not isinstance(responses, dict):
        raise JsonRpcError(INVALID_PARAMS, "params.inputResponses must be an object")
    check_size(limits, "params.inputResponses", responses)
    return cast(dict[str, Any], responses)


def check_result(
    limits: Limits, tool: str, result: dict[str, Any], *, stored: bool
) -> None:
    """Refuse a result of tool ``tool`` that is not plain JSON, or (``stored``) is
    larger than ``limits.max_result_bytes``."""
    try:
        size = json_size(result)
    except (ValueError, RecursionError, TypeError) as error:
        raise JsonRpcError(
            INTERNAL_ERROR,
            f"Tool {tool!r} returned a result that is not plain JSON: {short(error)}",
        ) from None
    if stored and size > limits.max_result_bytes:
        raise JsonRpcError(
            INTERNAL_ERROR,
            f"Tool {tool!r} returned a result too large to keep: {size}"
            f" bytes (limit {limits.max_result_bytes})",
        )


def task_ttl(limits: Limits, requested: int | None) -> int | None:
    """The TTL a new task gets: the request clamped to the maximum, or the default."""
    ttl = requested if requested is not None else limits.default_ttl_ms
    maximum = limits.max_ttl_ms
    if maximum is not None and (ttl is None or ttl > maximum):
        return maximum
    return ttl
