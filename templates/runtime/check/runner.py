"""Running the checks: detect the server's revision, open a ``Session``, run every
registered behavioural check and every schema check, and report."""

from __future__ import annotations

import asyncio
import functools
import importlib
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import ModuleType
from typing import Any, cast

from ..jsonrpc import JsonRpcError, json_object
from ..protocol import REVISIONS
from ..revision import RevisionTables
from ..transport import TransportError
from . import checks as checks  # registers the behavioural checks, in report order
from . import probes as probes  # then the probes'
from . import probes_notifications as probes_notifications  # and the last one
from .registry import REGISTRY
from .report import Report
from .results import CheckFailed, CheckResult, CheckSkipped, ConfigurationError, Status
from .rules import KINDS
from .schema_checks import schema_check
from .session import Session
from .tool_options import tool_problems

__all__ = ["checks_module", "detect", "run_checks"]


def checks_module(tables: RevisionTables) -> ModuleType:
    """The generated ``checks_<revision>`` module of a revision (named like its
    models)."""
    suffix = tables.models.__name__.rsplit("_", 1)[1]
    return importlib.import_module(f"..checks_{suffix}", __package__)


async def detect(url: str, headers: Mapping[str, str]) -> str:
    """The revision the server speaks, found by the package's dual client
    (``client.TasksClient.detect``: ``server/discover`` answered picks the newest
    stateless revision it lists, refused the one with sessions); when the server
    cannot be asked, the first revision with sessions, whose opening then says what
    went wrong."""
    if len(REVISIONS) == 1:
        return next(iter(REVISIONS))
    from ..client.http import HttpTransport
    from ..task_ids import MemoryTaskIdStore

    # A package of several revisions has the dual client (client.dual); imported by
    # name, since a one-revision package, which returned above, has none.
    client_module = importlib.import_module("..client", __package__)
    forget_detected = importlib.import_module(
        "..client.dual", __package__
    ).forget_detected
    dual = client_module.TasksClient(
        HttpTransport(url, headers=headers, timeout=10), store=MemoryTaskIdStore()
    )
    try:
        return cast(str, await dual.detect())
    except (JsonRpcError, TransportError):
        with_sessions = [r for r, t in REVISIONS.items() if not t.stateless]
        return (with_sessions or list(REVISIONS))[0]
    finally:
        forget_detected(url)
        await dual.aclose()


def _parse_tools(
    tools: Mapping[str, str | tuple[str, Mapping[str, Any]]],
) -> dict[str, tuple[str, dict[str, Any]]]:
    parsed: dict[str, tuple[str, dict[str, Any]]] = {}
    for kind, value in tools.items():
        if kind not in KINDS:
            raise ValueError(f"unknown tool kind {kind!r} (known: {', '.join(KINDS)})")
        parsed[kind] = (
            (value, {}) if isinstance(value, str) else (value[0], dict(value[1]))
        )
    return parsed


async def run_checks(
    url: str,
    *,
    tools: Mapping[str, str | tuple[str, Mapping[str, Any]]] | None = None,
    revision: str | None = None,
    auth: str | None = None,
    other_auth: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    only: Sequence[str] | None = None,
) -> Report:
    """Run every check against the server at ``url`` and return the report.

    ``tools`` maps a kind (``completes``, ``fails``, ``input``, ``long``) to a tool
    name, or to ``(name, arguments)``. ``revision`` pins one of the package's revisions
    (default: detected). ``auth`` is the ``Authorization`` header of the checker;
    ``other_auth`` that of a second principal (for ``errors.foreign_task``). ``only``
    restricts the run to these check ids. Raises ``ConfigurationError`` when the server
    does not list a named tool or its input schema rejects the arguments given.
    """
    parsed = _parse_tools(tools or {})
    base = dict(headers or {})
    if auth is not None:
        base["Authorization"] = auth
    other = {**base, "Authorization": other_auth} if other_auth is not None else None
    if revision is not None and revision not in REVISIONS:
        raise ValueError(
            f"unknown revision {revision!r} (this package has {', '.join(REVISIONS)})"
        )
    chosen = revision or await detect(url, base)
    module = checks_module(REVISIONS[chosen])
    session = Session(
        url, module, parsed, headers=base, other_headers=other, timeout=timeout
    )
    report = Report(url=url, revision=chosen)
    entries: list[tuple[str, str, Callable[[], Awaitable[str]]]] = []
    for item in REGISTRY:
        if item.applies(session.rules, session.tables):
            entries.append((item.id, item.title, functools.partial(item.run, session)))
    for spec in session.schema_checks:
        entries.append(
            (spec.id, spec.title, functools.partial(schema_check, session, spec))
        )
    if only is not None:
        entries = [e for e in entries if e[0] in only]
    try:
        try:
            await session.open()
            cursor: object = None
            for _ in range(100):  # pages of tools/list
                page = await session.call(
                    "tools/list", {} if cursor is None else {"cursor": cursor}
                )
                listed = page.get("tools")
                for tool in cast(
                    "list[object]", listed if isinstance(listed, list) else []
                ):
                    entry = json_object(tool)
                    if entry is not None and isinstance(entry.get("name"), str):
                        session.tool_list[str(entry["name"])] = entry
                cursor = page.get("nextCursor")
                if not isinstance(cursor, str):
                    break
            problems = tool_problems(session.tools, session.tool_list)
            if problems:
                raise ConfigurationError("\n".join(problems))
        except (JsonRpcError, TransportError) as error:
            exchange = session.log[-1].to_wire() if session.log else None
            report.results.append(
                CheckResult(
                    "session.open", "the server answers", "fail", f"{error}", exchange
                )
            )
            for id, title, _ in entries:
                report.results.append(
                    CheckResult(id, title, "skip", "the server did not answer")
                )
            return report
        for id, title, run in entries:
            started = time.monotonic()
            needs = ""
            try:
                detail = await run()
                status: Status = "pass"
                exchange = None
            except CheckFailed as failure:
                status, detail = "fail", failure.detail
                exchange = failure.exchange.to_wire() if failure.exchange else None
            except CheckSkipped as skip:
                status, detail, exchange = "skip", str(skip), None
                needs = skip.needs
            except (asyncio.TimeoutError, TimeoutError):
                status, detail, exchange = (
                    "fail",
                    f"no terminal status within {timeout}s",
                    None,
                )
            except (JsonRpcError, TransportError) as error:
                status, detail = "fail", f"{type(error).__name__}: {error}"
                exchange = session.log[-1].to_wire() if session.log else None
            seconds = time.monotonic() - started
            report.results.append(
                CheckResult(id, title, status, detail, exchange, seconds, needs)
            )
    finally:
        await session.close()
    return report
