"""``notifications.status`` compares each status notification with the ``tasks/get``
the checker sends as it arrives (``probes_notifications._agree``). A terminal status
that changed after the checker's own ``tasks/cancel`` of the finished task is
``terminal.final``'s to report, not this check's, however late the notification came
and whichever of the two requests the server answered first: the checker's
``terminal_changes`` mutant must fail exactly one check.

Each exchange below has the times the checker gives it: ``sent`` when it went out,
``seq`` when its answer came (one clock)."""

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


def task(status: str) -> dict[str, Any]:
    return {"taskId": "t1", "status": status, "createdAt": T0, "lastUpdatedAt": T1}


def session(*log: Exchange) -> Any:
    """The parts of a checker ``Session`` that ``_agree`` reads."""
    return SimpleNamespace(
        tables=TABLES, log=list(log), field=lambda index: FIELDS[index]
    )


def get(status: str, sent: int, answered: int) -> Exchange:
    """A ``tasks/get`` of the task that answered ``status``."""
    return Exchange(
        "tasks/get", {"taskId": "t1"}, result=task(status), sent=sent, seq=answered
    )


def cancel(sent: int, answered: int, via: str = "") -> Exchange:
    """The checker's ``tasks/cancel`` of the task (``via="other"``: another's)."""
    return Exchange(
        "tasks/cancel",
        {"taskId": "t1"},
        result=task("cancelled"),
        via=via,
        sent=sent,
        seq=answered,
    )


NOTIFIED = Exchange("notifications/tasks", task("completed"), incoming=True, seq=3)


@pytest.mark.parametrize(
    ("log", "confirm"),
    [
        pytest.param(
            [get("completed", 1, 2), cancel(4, 5)],
            get("cancelled", 6, 7),
            id="the confirming get sent after the cancel",
        ),
        pytest.param(  # the case a full run met: the server took the cancel first
            [get("completed", 1, 2), cancel(5, 6)],
            get("cancelled", 4, 7),
            id="sent before the cancel, answered after it",
        ),
    ],
)
def test_a_change_after_the_checker_cancelled_the_finished_task_is_not_this_check_s(
    log: list[Exchange], confirm: Exchange
) -> None:
    _agree(session(*log, NOTIFIED, confirm), NOTIFIED, confirm)


@pytest.mark.parametrize(
    "log",
    [
        pytest.param([], id="no cancel"),
        pytest.param([cancel(1, 2)], id="cancelled before it was seen completed"),
        pytest.param(
            [get("completed", 1, 2), cancel(4, 5, via="other")], id="another's cancel"
        ),
        pytest.param([get("working", 1, 2), cancel(4, 5)], id="cancelled working"),
        pytest.param(
            [get("completed", 1, 2), cancel(8, 9)],
            id="cancel sent after the confirming get was answered",
        ),
    ],
)
def test_a_notification_that_disagrees_with_a_terminal_status_fails(
    log: list[Exchange],
) -> None:
    confirm = get("cancelled", 6, 7)
    s = session(*log, NOTIFIED, confirm)
    with pytest.raises(CheckFailed, match="says completed; tasks/get right after"):
        _agree(s, NOTIFIED, confirm)
