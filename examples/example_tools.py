"""The tools of the example servers, written once against the ``ToolContext`` API that
every generated package shares, and registered on a server of one revision
(``examples/server_ext.py``) or of both (``examples/server.py``).

They are the fixtures of the official conformance suite (``greet``, ``slow_compute``,
``failing_job``, ``protocol_error_job``, ``confirm_delete``, ``multi_input``,
``test_tool_with_task``: its questions before the task are an extension feature), plus
``long_report`` (status and progress messages), ``ask_name`` (asks for input
mid-flight), ``weather`` (structured content), ``brew`` (a typed tool: its input and
output schemas come from its signature, its arguments arrive validated and its result
is ``structuredContent``) and ``order`` (a typed tool asking a typed question, a form
made from a model). The annotations name the default package's classes; a
package of one revision has the same ones. ``slow_compute`` and ``ask_name`` are
marked idempotent: run on Celery workers (``examples/celery_app.py``), such a tool is
run again after its worker was lost, and asks for input without holding a worker.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, Field

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))

from mcp_tasks.server_core import ToolContext  # noqa: E402


def _schema(**properties: Any) -> dict[str, Any]:
    """An object input schema with these properties."""
    return {"type": "object", "properties": properties}


def _first_answer(response: Mapping[str, Any] | None) -> str:
    """The first value of an accepted elicitation's content (or the action)."""
    answer = response or {}
    content: dict[str, Any] = answer.get("content") or {}
    if answer.get("action") == "accept" and content:
        return str(next(iter(content.values())))
    return str(answer.get("action"))


class _Request(Protocol):
    """What ``principal`` reads of a request (every package's ``RequestInfo``)."""

    @property
    def headers(self) -> Mapping[str, str] | None: ...


def principal(request: _Request) -> str:
    """The task owner: the Authorization header value, or "anonymous"."""
    return (request.headers or {}).get("authorization", "anonymous")


async def greet(ctx: ToolContext, arguments: dict[str, Any]) -> str:
    """Say hello (always synchronous)."""
    return f"Hello, {arguments.get('name', 'world')}!"


async def slow_compute(ctx: ToolContext, arguments: dict[str, Any]) -> str:
    """Sleep ``seconds`` seconds, then answer."""
    seconds = float(arguments.get("seconds", 0))
    label = str(arguments.get("label", ""))
    await ctx.report(f"computing {label} for {seconds}s")
    await asyncio.sleep(seconds)
    return f"computed {label} after {seconds}s"


async def confirm_delete(ctx: ToolContext, arguments: dict[str, Any]) -> str:
    """Ask for confirmation before pretending to delete a file."""
    filename = str(arguments.get("filename", "x.txt"))
    answer = await ctx.elicit(
        f"Delete {filename}?", _schema(confirm={"type": "boolean"})
    )
    if answer.get("action") == "accept":
        return f"deleted {filename}"
    return f"kept {filename} ({answer.get('action')})"


async def multi_input(ctx: ToolContext, arguments: dict[str, Any]) -> str:
    """Ask two questions at once."""
    first, second = await asyncio.gather(
        ctx.elicit("First value?", _schema(name={"type": "string"})),
        ctx.elicit("Second value?", _schema(name={"type": "string"})),
    )
    return f"got {_first_answer(first)} and {_first_answer(second)}"


async def ask_user_name(
    ctx: ToolContext, arguments: dict[str, Any]
) -> dict[str, dict[str, Any]] | None:
    """MRTR round 1: ask for the user's name before any task exists."""
    if "user_name" in ctx.input_responses:
        return None
    request = {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Your name?",
            "requestedSchema": _schema(name={"type": "string"}),
        },
    }
    return {"user_name": request}


async def test_tool_with_task(ctx: ToolContext, arguments: dict[str, Any]) -> str:
    """Greet the user whose name was gathered before the task started."""
    name = _first_answer(ctx.input_responses.get("user_name"))
    await asyncio.sleep(0.2)
    return f"Hello {name}!"


async def long_report(ctx: ToolContext, arguments: dict[str, Any]) -> str:
    """Work through ``steps`` steps, reporting each as status and progress."""
    steps = int(arguments.get("steps", 5))
    for step in range(1, steps + 1):
        await ctx.report(f"step {step}/{steps}")
        await ctx.progress(step, steps, f"step {step}/{steps}")
        await asyncio.sleep(0.3)
    return f"report ready after {steps} steps"


async def ask_name(ctx: ToolContext, arguments: dict[str, Any]) -> str:
    """Ask the user's name mid-flight and greet them."""
    answer = await ctx.elicit("What is your name?", _schema(name={"type": "string"}))
    return f"hello {_first_answer(answer)}"


async def weather(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Report a city's weather as structured content (``structuredContent``, with its
    text); ``"broken": true`` sends a reading whose temperature is not a number."""
    city = str(arguments.get("city", "Paris"))
    celsius: Any = "mild" if arguments.get("broken") else 21.5
    return {
        "content": [{"type": "text", "text": f"{city}: {celsius} C"}],
        "structuredContent": {"city": city, "celsius": celsius},
        "isError": False,
    }


class Milk(BaseModel):
    """The milk of a coffee."""

    kind: Literal["whole", "oat"]
    foamed: bool = False


class Receipt(BaseModel):
    """What ``brew`` served, and its price."""

    size: Literal["S", "M", "L"]
    sugars: int
    milk: Milk | None = None
    price_cents: int


PRICES = {"S": 250, "M": 300, "L": 350}
"""The price of each cup size, in cents."""


async def brew(
    ctx: ToolContext,
    size: Literal["S", "M", "L"],
    sugars: Annotated[int, Field(ge=0, le=5, description="Spoons of sugar.")] = 0,
    milk: Milk | None = None,
) -> Receipt:
    """Brew a coffee and return its receipt (a typed tool).

    Args:
        size: The cup size.
        milk: The milk to add, if any.
    """
    await ctx.report(f"brewing a {size} coffee")
    price = PRICES[size] + (50 if milk is not None else 0)
    return Receipt(size=size, sugars=sugars, milk=milk, price_cents=price)


class Sugars(BaseModel):
    """How the user takes their coffee: the form ``order`` asks (a typed
    elicitation; its schema is made from this model)."""

    sugars: int = Field(default=0, ge=0, le=5, description="Spoons of sugar.")


async def order(ctx: ToolContext, size: Literal["S", "M", "L"] = "M") -> Receipt:
    """Ask the user how many sugars, then brew (a typed elicitation: the answer's
    ``content`` is a ``Sugars``, or None when the user declined).

    Args:
        size: The cup size.
    """
    answer = await ctx.elicit("How many sugars?", Sugars)
    sugars = answer.content.sugars if answer.content is not None else 0
    return await brew(ctx, size, sugars=sugars)


def add_tools(
    server: Any,
    tool_error: Callable[[str], Exception],
    rpc_error: Callable[[int, str], Exception],
) -> None:
    """Register the example tools on ``server``, a ``TasksServer`` of any package;
    ``tool_error`` and ``rpc_error`` are that package's ``ToolError`` and
    ``JsonRpcError`` (a server recognises its own package's classes)."""

    async def failing_job(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Fail with a tool error after about a second (always a task)."""
        await asyncio.sleep(1)
        raise tool_error("job failed: the input could not be processed")

    async def protocol_error_job(ctx: ToolContext, arguments: dict[str, Any]) -> str:
        """Fail with a JSON-RPC error."""
        await asyncio.sleep(0.2)
        raise rpc_error(-32603, "internal failure")

    server.tool(
        task_support="forbidden", input_schema=_schema(name={"type": "string"})
    )(greet)
    server.tool(
        input_schema=_schema(seconds={"type": "number"}, label={"type": "string"}),
        idempotent=True,
    )(slow_compute)
    server.tool(task_support="required")(failing_job)
    server.tool()(protocol_error_job)
    server.tool(input_schema=_schema(filename={"type": "string"}))(confirm_delete)
    server.tool()(multi_input)
    server.tool(task_support="required", preflight=ask_user_name)(test_tool_with_task)
    server.tool(input_schema=_schema(steps={"type": "integer"}))(long_report)
    server.tool(idempotent=True)(ask_name)
    server.tool(  # answered at once where the server decides (the extension)
        input_schema=_schema(city={"type": "string"}, broken={"type": "boolean"}),
        answer_within_ms=10_000,
    )(weather)
    server.tool()(brew)
    server.tool()(order)
