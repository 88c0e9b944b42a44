"""The registry of behavioural checks: ``@check(id, title, applies)`` adds a check,
in report order."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeAlias

from ..revision import RevisionTables
from .rules import Rules
from .session import Session

__all__ = ["REGISTRY", "Check", "CheckFunction", "check"]

CheckFunction: TypeAlias = Callable[[Session], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Check:
    """A behavioural check: returns its pass detail or raises
    ``CheckFailed``/``CheckSkipped``."""

    id: str
    title: str
    run: CheckFunction
    applies: Callable[[Rules, RevisionTables], bool] = lambda rules, tables: True


REGISTRY: list[Check] = []
"""The behavioural checks, in report order."""


def check(
    id: str,
    title: str,
    applies: Callable[[Rules, RevisionTables], bool] = lambda rules, tables: True,
) -> Callable[[CheckFunction], CheckFunction]:
    """Register a behavioural check."""

    def register(function: CheckFunction) -> CheckFunction:
        REGISTRY.append(Check(id, title, function, applies))
        return function

    return register
