"""What the checks produce: the recorded ``Exchange``s, each check's ``CheckResult``,
and the exceptions a check raises (``CheckFailed``, ``CheckSkipped``) or the checker's
configuration does (``ConfigurationError``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = [
    "CheckFailed",
    "CheckResult",
    "CheckSkipped",
    "ConfigurationError",
    "Exchange",
    "Status",
    "code_text",
]

Status: TypeAlias = Literal["pass", "fail", "skip"]


@dataclass(slots=True)
class Exchange:
    """One message the checker sent and what came back (or one message received)."""

    method: str
    params: dict[str, Any]
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    http_status: int | None = None
    incoming: bool = False
    """A notification or request the server sent."""
    seq: int = 0
    """When it arrived, among everything the checker received (0: no answer yet)."""
    via: str = ""
    """The client that sent or received it (``other``: the second principal's)."""
    sent: int = 0
    """When it was sent, on the clock of ``seq`` (0: a message received)."""

    def to_wire(self) -> dict[str, Any]:
        """The exchange as JSON: ``request`` (or ``received``) and ``response``."""
        message = {"method": self.method, "params": self.params}
        if self.incoming:
            return {"received": message}
        out: dict[str, Any] = {"request": message}
        if self.headers is not None:
            out["headers"] = self.headers
        response: dict[str, Any] = {}
        if self.http_status is not None:
            response["httpStatus"] = self.http_status
        if self.result is not None:
            response["result"] = self.result
        if self.error is not None:
            response["error"] = self.error
        out["response"] = response
        return out


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict of one check."""

    id: str
    title: str
    status: Status
    detail: str
    exchange: dict[str, Any] | None = None
    seconds: float = 0.0
    needs: str = ""
    """For a skip: the option that would run the check ("" when none would)."""

    def to_json(self) -> dict[str, Any]:
        """The check as one item of the JSON report's ``checks``."""
        item: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
        }
        if self.exchange is not None:
            item["exchange"] = self.exchange
        if self.needs:
            item["needs"] = self.needs
        return item


class CheckFailed(Exception):
    """Raised by a check: the server broke a rule."""

    def __init__(self, detail: str, exchange: Exchange | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.exchange = exchange


class CheckSkipped(Exception):
    """Raised by a check that cannot run (no tool of the kind, optional feature absent);
    ``needs`` is the option that would run it ("" when none would)."""

    def __init__(self, detail: str, needs: str = "") -> None:
        super().__init__(detail)
        self.needs = needs


class ConfigurationError(ValueError):
    """The checker's own configuration does not fit the server (a ``--tool`` it does not
    list, or arguments the tool's input schema rejects): a usage error, not a verdict.
    """


def code_text(code: int | None) -> str:
    """What a request got, for a check's detail: ``a result`` or ``error N``."""
    return "a result" if code is None else f"error {code}"
