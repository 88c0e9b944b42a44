"""The behavioural checks, once for every revision, read from the revision's tables
and ``Rules``: capabilities, task creation, statuses and their transitions,
timestamps, hints, outcomes, input and cancellation, unknown tasks."""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..jsonrpc import INVALID_PARAMS, JsonRpcError, json_object
from .registry import check
from .results import CheckFailed, CheckSkipped, Exchange, code_text
from .rules import KINDS
from .session import Session, TaskRun

__all__ = ["all_runs", "parse_time"]


@check("capability.declared", "the server advertises Tasks support")
async def _capability_declared(s: Session) -> str:
    exchange = s.log[0] if s.log else None
    caps = s.capabilities
    if s.tables.is_extension:
        extensions = json_object(caps.get("extensions")) or {}
        if s.tables.extension_id not in extensions:
            raise CheckFailed(
                f"capabilities.extensions lacks {s.tables.extension_id!r}", exchange
            )
        if "tasks" in caps:
            raise CheckFailed("the legacy capabilities.tasks is declared", exchange)
        return f"capabilities.extensions[{s.tables.extension_id!r}]"
    tasks = json_object(caps.get("tasks"))
    node = json_object((json_object((tasks or {}).get("requests")) or {}).get("tools"))
    if node is None or json_object(node.get("call")) is None:
        raise CheckFailed("capabilities.tasks.requests.tools.call missing", exchange)
    missing = [role for role, _ in s.rules.role_capabilities if not s.declared(role)]
    if "cancel" in missing:
        raise CheckFailed("capabilities.tasks.cancel missing", exchange)
    return "capabilities.tasks.requests.tools.call" + (
        f" (not declared: {', '.join(missing)})" if missing else ""
    )


@check("capability.gating", "task mode and declarations are enforced")
async def _capability_gating(s: Session) -> str:
    if not s.tables.stateless:
        checked: list[str] = []
        for name, tool in s.tool_list.items():
            execution = json_object(tool.get("execution")) or {}
            support = execution.get("taskSupport", "forbidden")
            if support == "forbidden" and "forbidden" not in checked:
                params: dict[str, Any] = {"name": name, "arguments": {}}
                params[s.rules.create_wrapper] = {}
                code, exchange = await s.error_of("tools/call", params)
                if code not in s.rules.task_required_errors:
                    raise CheckFailed(
                        f"a task for the task-forbidden tool {name!r} got"
                        f" {code_text(code)}",
                        exchange,
                    )
                checked.append("forbidden")
            if support == "required" and "required" not in checked:
                code, exchange = await s.error_of(
                    "tools/call", {"name": name, "arguments": {}}
                )
                if code not in s.rules.task_required_errors:
                    raise CheckFailed(
                        f"a plain call of the task-required tool {name!r} got"
                        f" {code_text(code)}",
                        exchange,
                    )
                checked.append("required")
        if not checked:
            raise CheckSkipped("no tool with taskSupport forbidden or required")
        return f"checked {' and '.join(checked)} tools"
    name, arguments = s.tool("completes")
    bare = s.new_client(s.headers, declare=False)
    try:
        result = await s.call(
            "tools/call", {"name": name, "arguments": arguments}, client=bare
        )
    except JsonRpcError as error:
        if error.code != s.rules.missing_capability_error:
            raise CheckFailed(
                f"a call without the extension got error {error.code}",
                s.last("tools/call"),
            ) from None
    else:
        if s.task_of(result) is not None:
            raise CheckFailed(
                "a task was created for a request that did not declare the extension",
                s.last("tools/call"),
            )
    run = await s.run("completes")
    code, exchange = await s.error_of(
        s.tables.roles["get"], s.task_params(run.task_id), client=bare
    )
    if code != s.rules.missing_capability_error:
        raise CheckFailed(
            f"tasks/get without the extension got {code_text(code)}"
            f" (expected {s.rules.missing_capability_error})",
            exchange,
        )
    return "no task without the extension; tasks/get refused"


@check(
    "envelope.meta",
    "requests without the per-request _meta are refused",
    lambda rules, tables: rules.meta_required,
)
async def _envelope_meta(s: Session) -> str:
    run = await s.run("completes")
    method = s.tables.roles["get"]
    code, exchange = await s.error_of(method, s.task_params(run.task_id), raw=True)
    if code != INVALID_PARAMS:
        raise CheckFailed(
            f"{method} without _meta got {code_text(code)} (expected {INVALID_PARAMS})",
            exchange,
        )
    return f"{method} without _meta: error {code}"


@check("create.durable", "a created task is readable right after the create reply")
async def _create_durable(s: Session) -> str:
    kind = next((k for k in ("completes", *KINDS) if k in s.tools), "completes")
    with contextlib.suppress(CheckSkipped):
        await s.run(kind)
    if s.not_durable is not None:
        raise s.not_durable
    if not s.durable:
        s.tool(kind)  # skips: no tool named
        raise CheckSkipped(f"no task of the {kind!r} tool was created")
    return "tasks/get sent right after the create reply found the task"


@check("create.task", "a task-creating call answers with a task tasks/get knows")
async def _create_task(s: Session) -> str:
    run = await s.run("completes")
    task = s.task_of(run.create.result or {}) or {}
    status = task.get(s.field(1))
    if s.rules.create_status_initial and status != s.tables.initial:
        raise CheckFailed(
            f"a new task is {status!r}, not {s.tables.initial!r}", run.create
        )
    if status not in s.tables.statuses:
        raise CheckFailed(f"a new task has the unknown status {status!r}", run.create)
    if not run.snapshots:
        raise CheckFailed("no tasks/get answer for the new task", run.create)
    return f"task {run.task_id} created {status}"


async def all_runs(s: Session) -> list[TaskRun]:
    """The runs of every named tool kind (a kind that cannot run is left out: its own
    checks say why; with none, skip with the first reason)."""
    runs: list[TaskRun] = []
    skipped: CheckSkipped | None = None
    for kind in KINDS:
        if kind in s.tools:
            try:
                runs.append(await s.run(kind))
            except CheckSkipped as skip:
                skipped = skipped or skip
    if not runs:
        raise skipped or CheckSkipped(
            "no tool named (--tool KIND=NAME)", "--tool completes=NAME"
        )
    return runs


@check("status.transitions", "live statuses change only as the transitions allow")
async def _transitions(s: Session) -> str:
    count = 0
    for run in await all_runs(s):
        seen = [(s.task_of(run.create.result or {}) or {}, run.create), *run.snapshots]
        previous: str | None = None
        for task, exchange in seen:
            status = task.get(s.field(1))
            if not isinstance(status, str) or status not in s.tables.statuses:
                raise CheckFailed(f"unknown status {status!r}", exchange)
            if previous is not None and previous != status:
                if previous in s.tables.terminal:
                    break  # terminal.final judges what follows a terminal status
                if status not in s.tables.transitions.get(previous, _NOTHING):
                    raise CheckFailed(
                        f"{previous} -> {status} is not allowed", exchange
                    )
                count += 1
            previous = status
    return f"{count} transitions, all allowed"


@check("terminal.final", "a terminal status never changes, even when cancelled")
async def _terminal_final(s: Session) -> str:
    cancelled = 0
    for run in await all_runs(s):
        assert run.terminal is not None
        final = run.terminal[0].get(s.field(1))
        cancelled += run.terminal_cancel is not None
        for task, exchange in run.after:
            if task.get(s.field(1)) != final:
                then = " after a tasks/cancel" if run.terminal_cancel else ""
                raise CheckFailed(
                    f"task {run.task_id} was {final}, then{then}"
                    f" {task.get(s.field(1))}",
                    exchange,
                )
    return "terminal statuses stayed" + (
        f" (also after a tasks/cancel of {cancelled} finished task(s))"
        if cancelled
        else ""
    )


_NOTHING: frozenset[str] = frozenset()


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 timestamp as a ``datetime`` (None when it is not one)."""
    if not isinstance(value, str):
        return None
    # Python 3.10 reads only 3 or 6 fraction digits and no "Z"
    text = re.sub(r"(\.\d{1,6})\d*", lambda m: m.group(1).ljust(7, "0"), value)
    try:
        return datetime.fromisoformat(re.sub(r"[Zz]$", "+00:00", text))
    except ValueError:
        return None


@check("task.timestamps", "createdAt stays, lastUpdatedAt never goes back")
async def _timestamps(s: Session) -> str:
    for run in await all_runs(s):
        seen = [(s.task_of(run.create.result or {}) or {}, run.create), *run.snapshots]
        seen += run.after
        created = parse_time(seen[0][0].get(s.field(3)))
        latest: datetime | None = None
        for task, exchange in seen:
            first, updated = parse_time(task.get(s.field(3))), parse_time(
                task.get(s.field(4))
            )
            if first is None or updated is None:
                raise CheckFailed(f"{s.field(3)}/{s.field(4)} not RFC 3339", exchange)
            if first != created:
                raise CheckFailed(f"{s.field(3)} changed", exchange)
            if updated < first or (latest is not None and updated < latest):
                raise CheckFailed(f"{s.field(4)} went back", exchange)
            latest = updated
    return "consistent"


def _task_shapes(
    s: Session, runs: Sequence[TaskRun]
) -> list[tuple[dict[str, Any], Exchange]]:
    shapes: list[tuple[dict[str, Any], Exchange]] = []
    for run in runs:
        shapes.append((s.task_of(run.create.result or {}) or {}, run.create))
        shapes += run.snapshots + run.after
    return shapes


@check("hints.ttl", "the TTL is a non-negative integer or null")
async def _hints_ttl(s: Session) -> str:
    name = s.field(5)
    for task, exchange in _task_shapes(s, await all_runs(s)):
        if name not in task:
            continue  # the shape checks judge presence
        ttl = task[name]
        if ttl is not None and (not isinstance(ttl, int) or ttl < 0):
            raise CheckFailed(f"{name} is {ttl!r}", exchange)
    return f"{name} fine"


@check("hints.poll_interval", "every task shape carries a usable poll interval")
async def _hints_poll(s: Session) -> str:
    name = s.field(6)
    for task, exchange in _task_shapes(s, await all_runs(s)):
        if task.get(s.field(1)) in s.tables.terminal:
            continue
        hint = task.get(name)
        if not isinstance(hint, int) or hint < 0:
            raise CheckFailed(
                f"{name} is {hint!r} on a live task (the checker asks for the hint the"
                " spec recommends)",
                exchange,
            )
    return f"{name} present on live tasks"


def _terminal(run: TaskRun) -> tuple[dict[str, Any], Exchange]:
    assert run.terminal is not None
    return run.terminal


@check("outcome.completed", "a tool that completes ends completed with its result")
async def _outcome_completed(s: Session) -> str:
    run = await s.run("completes")
    task, exchange = _terminal(run)
    if task.get(s.field(1)) != s.tables.completed:
        raise CheckFailed(f"the task ended {task.get(s.field(1))!r}", exchange)
    if run.payload is not None:
        result = run.payload.result
        if result is None or result.get("isError") is True:
            raise CheckFailed(
                "tasks/result did not return the tool result", run.payload
            )
    elif json_object(task.get("result")) is None:
        raise CheckFailed("the completed task carries no result", exchange)
    return "completed with its result"


@check("outcome.failed", "a tool that fails ends as the revision says")
async def _outcome_failed(s: Session) -> str:
    run = await s.run("fails")
    task, exchange = _terminal(run)
    status = task.get(s.field(1))
    if status == s.tables.failed:
        if s.tables.stateless and json_object(task.get("error")) is None:
            raise CheckFailed("the failed task carries no error", exchange)
        if run.payload is not None and run.payload.error is None:
            result = run.payload.result or {}
            if result.get("isError") is not True:
                raise CheckFailed(
                    "tasks/result of a failed task is neither an error nor isError",
                    run.payload,
                )
        return "failed"
    result = json_object(task.get("result")) or {}
    if (
        not s.rules.tool_error_fails
        and status == s.tables.completed
        and result.get("isError") is True
    ):
        return "completed with isError: true"
    raise CheckFailed(f"the failing tool's task ended {status!r}", exchange)


@check(
    "result.related_task",
    "tasks/result carries the related-task _meta",
    lambda rules, tables: "result" in tables.roles
    and "RELATED_TASK" in tables.meta_keys,
)
async def _related_task(s: Session) -> str:
    run = await s.run("completes")
    key = s.tables.meta_keys["RELATED_TASK"]
    payload = run.payload
    if payload is None or payload.result is None:
        raise CheckFailed("no tasks/result answer", payload)
    meta = json_object(payload.result.get("_meta")) or {}
    related = json_object(meta.get(key)) or {}
    if related.get(s.field(0)) != run.task_id:
        raise CheckFailed(f"_meta[{key!r}] does not name the task", payload)
    return f"_meta[{key!r}] names the task"


@check("input.requested", "a task that needs input asks for it")
async def _input_requested(s: Session) -> str:
    run = await s.run("input")
    reported = any(t.get(s.field(1)) in s.tables.input for t, _ in run.snapshots)
    if not reported and not run.input_seen:
        raise CheckFailed(
            "the task never reported an input status nor asked", run.create
        )
    if not run.input_seen:
        raise CheckFailed("no input request reached the client", run.create)
    if not s.tables.stateless:
        key = s.tables.meta_keys.get("RELATED_TASK", "")
        for exchange in run.input_seen:
            meta = json_object(exchange.params.get("_meta")) or {}
            related = json_object(meta.get(key)) or {}
            if related.get(s.field(0)) != run.task_id:
                raise CheckFailed(
                    "the input request does not carry the related-task _meta", exchange
                )
        return f"{len(run.input_seen)} input request(s) with the related task"
    first, second = run.input_seen[0], run.input_seen[-1]
    keys = [
        sorted(json_object((e.result or {}).get("inputRequests")) or {})
        for e in (first, second)
    ]
    if len(run.input_seen) < 2 or keys[0] != keys[1]:
        raise CheckFailed("inputRequests keys changed between polls", second)
    return f"inputRequests {keys[0]} stable across polls"


@check("input.answered", "answered input lets the task finish")
async def _input_answered(s: Session) -> str:
    run = await s.run("input")
    task, exchange = _terminal(run)
    if task.get(s.field(1)) != s.tables.completed:
        raise CheckFailed(
            f"after the answers the task ended {task.get(s.field(1))!r}", exchange
        )
    after = [n for n in run.notes if n.startswith("after-unknown:")]
    if after and after[0] != f"after-unknown:{s.tables.input_required}":
        raise CheckFailed(
            f"an answer under an unknown key changed the task ({after[0]})",
            (
                s.last(s.tables.roles.get("update", ""))
                if "update" in s.tables.roles
                else None
            ),
        )
    return "completed after the answers" + ("; unknown keys ignored" if after else "")


@check("cancel.accepted", "a live task is cancelled on request")
async def _cancel(s: Session) -> str:
    run = await s.run("long")
    cancel = run.cancel
    assert cancel is not None
    if cancel.error is not None:
        raise CheckFailed("tasks/cancel of a live task failed", cancel)
    if s.rules.cancel_returns_task:
        status = (cancel.result or {}).get(s.field(1))
        if status != s.tables.cancelled:
            raise CheckFailed(f"tasks/cancel answered with status {status!r}", cancel)
    task, exchange = _terminal(run)
    final = task.get(s.field(1))
    if final == s.tables.cancelled:
        return "cancelled"
    if not s.rules.cancel_cooperative:
        raise CheckFailed(f"the cancelled task ended {final!r}", exchange)
    # terminal.final fails a terminal status that changes afterwards
    return (
        f"acknowledged; the task still ended {final} (cancellation is cooperative"
        " here: the task may reach another terminal status, D.2.10)"
    )


@check(
    "cancel.terminal",
    "cancelling a terminal task is refused",
    lambda rules, tables: rules.cancel_terminal_error != 0,
)
async def _cancel_terminal(s: Session) -> str:
    s.method_of("cancel")
    if not s.declared("cancel"):
        raise CheckSkipped("the server does not declare tasks/cancel")
    run = await s.run("completes")
    exchange = run.terminal_cancel
    assert exchange is not None
    code = (
        None if exchange.error is None else JsonRpcError.from_wire(exchange.error).code
    )
    if code != s.rules.cancel_terminal_error:
        raise CheckFailed(
            f"cancelling a completed task got {code_text(code)}"
            f" (expected {s.rules.cancel_terminal_error})",
            exchange,
        )
    return f"error {code}"


@check("errors.unknown_task", "requests about an unknown task get -32602")
async def _unknown(s: Session) -> str:
    unknown = "mcptasks-check-unknown-" + secrets.token_hex(8)
    tried: list[str] = []
    for spec in s.schema_checks:
        if spec.kind != "method" or s.field(0) not in spec.params:
            continue
        if not s.declared(spec.role):
            continue
        params: dict[str, Any] = {name: {} for name in spec.params}
        params.update(s.task_params(unknown))
        code, exchange = await s.error_of(spec.method, params)
        if code != INVALID_PARAMS:
            raise CheckFailed(
                f"{spec.method} of an unknown task got {code_text(code)}"
                f" (expected {INVALID_PARAMS})",
                exchange,
            )
        tried.append(spec.method)
    return ", ".join(tried)
