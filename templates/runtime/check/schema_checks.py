"""The checks the schema decides (methods, result shapes, notification shapes, one
per status), listed in the generated ``checks_<revision>`` module and run here."""

from __future__ import annotations

import secrets
from typing import Any

from pydantic import BaseModel, ValidationError

from ..jsonrpc import METHOD_NOT_FOUND, validation_problems
from .checks import all_runs
from .results import CheckFailed, CheckSkipped, Exchange, code_text
from .rules import SchemaCheck
from .session import Session

__all__ = ["schema_check"]


def _validate(model: type[BaseModel], value: object, exchange: Exchange) -> None:
    try:
        model.model_validate(value)
    except ValidationError as error:
        where, message = validation_problems(error)[0]
        raise CheckFailed(
            f"not a valid {model.__name__}: {where}: {message}", exchange
        ) from None


_SHOWN_BY = {
    "cancelled": "long",
    "cancel": "long",
    "failed": "fails",
    "input_required": "input",
    "update": "input",
}
"""The tool kind whose run shows a status, or a method's result (else ``completes``)."""


async def schema_check(s: Session, spec: SchemaCheck) -> str:
    if spec.kind == "method":
        if not s.declared(spec.role):
            raise CheckSkipped(f"the server does not declare {spec.method}")
        params: dict[str, Any] = {name: {} for name in spec.params}
        if s.field(0) in spec.params:
            params |= s.task_params("mcptasks-check-unknown-" + secrets.token_hex(8))
        code, exchange = await s.error_of(spec.method, params)
        if code == METHOD_NOT_FOUND:
            raise CheckFailed(f"{spec.method} is unknown to the server", exchange)
        return f"answered with {code_text(code)}"
    assert spec.model is not None
    seen: list[tuple[object, Exchange]] = []
    if spec.kind == "create":
        runs = await all_runs(s)
        seen = [(run.create.result, run.create) for run in runs]
    elif spec.kind == "result":
        seen = [
            (e.result, e)
            for e in s.log
            if e.method == spec.method and e.result is not None and not e.incoming
        ]
    elif spec.kind == "notification":
        seen = [
            ({"jsonrpc": "2.0", "method": e.method, "params": e.params}, e)
            for e in s.log
            if e.incoming and e.method == spec.method
        ]
    else:
        get = s.tables.roles["get"]
        seen = [
            (e.result, e)
            for e in s.log
            if e.method == get
            and e.result is not None
            and not e.incoming
            and e.result.get(s.field(1)) == spec.status
        ]
    if not seen:
        what = {
            "status": f"no task seen {spec.status}",
            "notification": "none received",
        }
        kind = _SHOWN_BY.get(spec.status or spec.role, "completes")
        needs = f"--tool {kind}=NAME" if spec.kind != "notification" else ""
        raise CheckSkipped(
            what.get(spec.kind, "nothing to validate (no tool named)"),
            needs if kind not in s.tools else "",
        )
    for value, exchange in seen:
        _validate(spec.model, value, exchange)
    return f"{len(seen)} message(s) valid"
