"""The types of input handlers (what a client answers the server's input requests
with) and of notification callbacks, apart from the client so that the generated
``protocol`` modules can name them: :class:`InputContext`, :class:`TypedInputContext`,
:data:`InputHandler` and :data:`TypedInputHandler`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeAlias, TypeVar

from pydantic import BaseModel

__all__ = [
    "InputContext",
    "InputHandler",
    "TypedInputContext",
    "TypedInputHandler",
]

P = TypeVar("P")
"""The params of an input request (its generated model)."""
R = TypeVar("R")
"""The answer to an input request (its generated result model)."""


@dataclass(frozen=True)
class InputContext:
    """One request from the server for input, handed to a registered input handler.

    Attributes:
        method: The input method (``"elicitation/create"``, ...: a member of the
            schema's input-request union).
        params: The request's ``params`` exactly as received (wire names).
        task_id: The task the request belongs to, when it is tied to one.
        key: The ``inputRequests`` key the request was listed under, when it came
            that way.
    """

    method: str
    params: dict[str, Any]
    task_id: str | None = None
    key: str | None = None


@dataclass(frozen=True)
class TypedInputContext(InputContext, Generic[P]):
    """An :class:`InputContext` with the params validated by the generated model:
    ``request`` (the params model of the method; the dict where the schema has
    none). Handlers get this class; one annotated with :class:`InputContext` fits
    too."""

    request: P = field(kw_only=True)


InputHandler: TypeAlias = Callable[
    [InputContext], Awaitable[Mapping[str, Any] | BaseModel | None]
]
"""Answers one input request; returns the result object (``ElicitResult``, ...), or
``None`` to leave the request unanswered for now."""

TypedInputHandler: TypeAlias = Callable[
    [TypedInputContext[P]], Awaitable[R | Mapping[str, Any] | None]
]
"""The handler of one input method: gets the params as its model, returns its result
model (or the result's wire form; ``None`` leaves the request unanswered for now)."""
