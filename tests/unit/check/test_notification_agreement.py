"""``notifications.status`` compares each status notification with the ``tasks/get``
the checker sends as it arrives (``probes_notifications._agree``). A terminal status
that changed after the checker's own ``tasks/cancel`` of the finished task is
``terminal.final``'s to report, not this check's, however late the notification came:
the checker's ``terminal_changes`` mutant must fail exactly one check."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from mcp_tasks_ext.check.probes_notifications import _agree
from mcp_tasks_ext.check.results import CheckFailed, Exchange
from mcp_tasks_ext.protocol_ext import TABLES

FIELDS = ["taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttlMs"]
FIELDS.append("pollIntervalMs")
T0, T1 = "2026-12-02T05:21:18.674Z", "2026-12-02T05:21:18.676Z"


def task(status: str, updated: str = T1) -> dict[str, Any]:
    return {"taskId": "t1", "status": status, "createdAt": T0, "lastUpdatedAt": updated}


def session(*log: Exchange) -> Any:
    """The parts of a checker ``Session`` that ``_agree`` reads."""
    return SimpleNamespace(
        tables=TABLES, log=list(log), field=lambda index: FIELDS[index]
    )


def get(status: str, updated: str = T1) -> Exchange:
    return Exchange("tasks/get", {"taskId": "t1"}, result=task(status, updated))


def cancel(via: str = "") -> Exchange:
    return Exchange("tasks/cancel", {"taskId": "t1"}, result=task("cancelled"), via=via)


NOTIFIED = Exchange("notifications/tasks", task("completed"), incoming=True)


def test_a_late_notification_after_the_checker_cancelled_the_finished_task() -> None:
    polled, cancelled, confirm = get("completed"), cancel(), get("cancelled")
    _agree(session(polled, cancelled, NOTIFIED, confirm), NOTIFIED, confirm)


@pytest.mark.parametrize(
    "log",
    [
        pytest.param([], id="no cancel"),
        pytest.param([cancel()], id="cancelled before it was seen completed"),
        pytest.param([get("completed"), cancel("other")], id="another's cancel"),
        pytest.param([get("working"), cancel()], id="cancelled while working"),
    ],
)
def test_a_notification_that_disagrees_with_a_terminal_status_fails(
    log: list[Exchange],
) -> None:
    confirm = get("cancelled")
    s = session(*log, NOTIFIED, confirm)
    with pytest.raises(CheckFailed, match="says completed; tasks/get right after"):
        _agree(s, NOTIFIED, confirm)


def test_a_cancel_sent_after_the_confirming_get_does_not_count() -> None:
    confirm = get("cancelled")
    s = session(get("completed"), NOTIFIED, confirm, cancel())
    with pytest.raises(CheckFailed):
        _agree(s, NOTIFIED, confirm)
