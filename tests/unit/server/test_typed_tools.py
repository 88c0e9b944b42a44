"""Typed tools: ``@server.tool()`` on ``async def brew(ctx, size: Literal[...], sugars:
int = 0) -> Receipt`` makes the tool's ``inputSchema`` and ``outputSchema`` from the
signature, validates the call's arguments before the tool runs (``-32602`` naming the
field, before any task) and sends the result as ``structuredContent`` with text; dict
tools (``(ctx, arguments)``, or ``input_schema=``) stay as they were. In process,
through ``TasksServer.handle`` of each package.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from mcp_tasks_ext.server import JsonRpcError, RequestInfo, TasksServer, ToolContext
from mcp_tasks_ext.stores import InMemoryTaskStore
from tests.support.servers import (
    error_of,
    ext_message,
    headers_for,
    message_2025,
    result_of,
)

pytestmark = pytest.mark.anyio


class Milk(BaseModel):
    """A milk to add."""

    kind: Literal["whole", "oat"]
    foam: bool = False


class Receipt(BaseModel):
    """What ``brew`` returns."""

    size: str
    sugars: int
    milk: str | None = None


class Totals(TypedDict):
    """A TypedDict result."""

    count: int
    label: str


async def brew(
    ctx: ToolContext,
    size: Literal["S", "M", "L"],
    sugars: Annotated[int, Field(ge=0, description="Spoons of sugar.")] = 0,
    milk: Milk | None = None,
) -> Receipt:
    """Brew a coffee.

    Args:
        size: The cup size.
        sugars: Not this one: the Field's description wins.
        milk: The milk, if any.
    """
    return Receipt(size=size, sugars=sugars, milk=milk.kind if milk else None)


BREW_INPUT = {
    "type": "object",
    "properties": {
        "size": {
            "type": "string",
            "enum": ["S", "M", "L"],
            "title": "Size",
            "description": "The cup size.",
        },
        "sugars": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "title": "Sugars",
            "description": "Spoons of sugar.",
        },
        "milk": {
            "anyOf": [{"$ref": "#/$defs/Milk"}, {"type": "null"}],
            "default": None,
            "description": "The milk, if any.",
        },
    },
    "required": ["size"],
    "$defs": {"Milk": Milk.model_json_schema()},
}


def schema_of(server: Any, name: str) -> tuple[dict[str, Any], Any]:
    """The registered tool ``name``'s input and output schemas."""
    tool = next(t for t in server.tools if t.name == name)
    return tool.input_schema, tool.output_schema


def test_input_and_output_schema_from_the_signature() -> None:
    """The parameters after the context make ``inputSchema`` (Literal as an enum,
    defaults, a pydantic model parameter in ``$defs``, ``Annotated`` Field and
    docstring ``Args:`` descriptions); the pydantic return type is ``outputSchema``;
    the docstring before ``Args:`` is the description."""
    server = TasksServer("typed", store=InMemoryTaskStore())
    assert server.tool()(brew) is brew
    tool = server.tools[0]
    assert tool.input_schema == BREW_INPUT
    assert tool.output_schema == Receipt.model_json_schema()
    assert tool.description == "Brew a coffee."
    assert tool.signature is not None


async def returns_int(ctx: ToolContext, n: int) -> int:
    return n


async def returns_list(ctx: ToolContext, n: int) -> list[str]:
    return ["x"] * n


async def returns_typeddict(ctx: ToolContext, n: int) -> Totals:
    return {"count": n, "label": "n"}


async def returns_mapping(ctx: ToolContext, n: int) -> dict[str, int]:
    return {"n": n}


async def returns_text(ctx: ToolContext, n: int) -> str:
    return str(n)


async def returns_unannotated(ctx: ToolContext, n: int):  # type: ignore[no-untyped-def]
    return str(n)


async def returns_tool_output(
    ctx: ToolContext, n: int
) -> str | dict[str, Any]:  # ToolOutput
    return {"content": [{"type": "text", "text": str(n)}], "isError": False}


def _wrapped(items: dict[str, Any], title: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"result": {**items, "title": "Result"}},
        "required": ["result"],
        "title": title,
    }


@pytest.mark.parametrize(
    ("function", "output_schema"),
    [
        (returns_int, _wrapped({"type": "integer"}, "returns_intOutput")),
        (
            returns_list,
            _wrapped(
                {"type": "array", "items": {"type": "string"}}, "returns_listOutput"
            ),
        ),
        (
            returns_typeddict,
            {
                "type": "object",
                "properties": {
                    "count": {"type": "integer", "title": "Count"},
                    "label": {"type": "string", "title": "Label"},
                },
                "required": ["count", "label"],
                "title": "Totals",
                "description": "A TypedDict result.",
            },
        ),
        (
            returns_mapping,
            {"type": "object", "additionalProperties": {"type": "integer"}},
        ),
        (returns_text, None),
        (returns_unannotated, None),
        (returns_tool_output, None),
    ],
)
def test_output_schema_by_return_type(
    function: Callable[..., Awaitable[object]], output_schema: Any
) -> None:
    """An object return type (pydantic model, TypedDict, ``dict[str, T]``) is the
    output schema; any other is wrapped as ``{"result": ...}``; ``str``, ``ToolOutput``
    and no annotation keep today's text-only result without an output schema."""
    server = TasksServer("typed", store=InMemoryTaskStore())
    server.tool()(function)
    assert schema_of(server, function.__name__)[1] == output_schema


async def dict_tool(ctx: ToolContext, arguments: dict[str, Any]) -> str:
    return "dict"


async def bare_dict_tool(ctx: ToolContext, arguments: dict) -> str:  # type: ignore[type-arg]
    return "dict"


async def unannotated_tool(ctx, arguments):  # type: ignore[no-untyped-def]
    return "dict"


async def other_name(ctx: Any, args: dict[str, Any]) -> str:
    return "dict"


async def object_values(ctx: ToolContext, arguments: dict[str, object]) -> str:
    return "dict"


async def mapping_tool(ctx: ToolContext, arguments: Mapping[str, Any]) -> str:
    return "dict"


@pytest.mark.parametrize(
    "function",
    [
        dict_tool,
        bare_dict_tool,
        unannotated_tool,
        other_name,
        object_values,
        mapping_tool,
    ],
)
def test_dict_tools_stay_dict_tools(function: Any) -> None:
    """``(ctx, arguments)`` with ``arguments`` annotated ``dict[str, Any]`` (or
    ``dict[str, object]``, ``dict``, a ``Mapping`` of those, or nothing) is a dict
    tool: today's default schema, no validation, the
    handler itself."""
    server = TasksServer("typed", store=InMemoryTaskStore())
    server.tool()(function)
    tool = server.tools[0]
    assert tool.signature is None and tool.output_schema is None
    assert tool.input_schema == {"type": "object", "properties": {}}
    assert tool.handler is function
    assert tool.handler_arguments({"anything": [1]}) == {"anything": [1]}


def test_an_explicit_input_schema_makes_a_dict_tool() -> None:
    """A function registered with ``input_schema=`` is a dict tool whatever its
    signature says."""
    server = TasksServer("typed", store=InMemoryTaskStore())
    schema = {"type": "object", "properties": {"size": {"type": "string"}}}
    server.tool(input_schema=schema)(brew)
    tool = server.tools[0]
    assert tool.signature is None and tool.input_schema == schema
    assert tool.description == (brew.__doc__ or "").strip()  # as always


async def star_args(ctx: ToolContext, *sizes: str) -> str:
    return ""


async def star_kwargs(ctx: ToolContext, size: str, **more: int) -> str:
    return ""


async def unannotated_param(ctx: ToolContext, size: str, sugars) -> str:  # type: ignore[no-untyped-def]
    return ""


async def no_context(size: str, sugars: int) -> str:
    return ""


async def no_parameters() -> str:
    return ""


class Opaque:
    """A class pydantic cannot make a schema of."""


async def opaque_param(ctx: ToolContext, thing: Opaque) -> str:
    return ""


async def opaque_result(ctx: ToolContext, n: int) -> Opaque:
    return Opaque()


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (star_args, "tool 'star_args': parameter 'sizes': *args and **kwargs"),
        (star_kwargs, "tool 'star_kwargs': parameter 'more': *args and **kwargs"),
        (unannotated_param, "tool 'unannotated_param': parameter 'sugars' has no"),
        (no_context, "tool 'no_context': its first parameter 'size' must be the"),
        (no_parameters, "tool 'no_parameters': its first parameter must be the"),
        (opaque_param, "tool 'opaque_param': parameter 'thing': Opaque cannot be"),
        (opaque_result, "tool 'opaque_result': return annotation Opaque cannot be"),
    ],
)
def test_signatures_that_cannot_be_a_schema_are_type_errors(
    function: Any, message: str
) -> None:
    """A typed signature that cannot be made a schema is a ``TypeError`` at
    registration naming the tool and the parameter; nothing is registered."""
    server = TasksServer("typed", store=InMemoryTaskStore())
    with pytest.raises(TypeError) as caught:
        server.tool()(function)
    assert str(caught.value).startswith(message), str(caught.value)
    assert server.tools == []


def test_arguments_are_validated_into_python_values() -> None:
    """``handler_arguments`` validates with the model built at registration: Python
    values (a ``Milk``, an ``int`` from ``"2"``, defaults); a bad call is ``-32602``
    naming each field that does not fit."""
    server = TasksServer("typed", store=InMemoryTaskStore())
    server.tool()(brew)
    tool = server.tools[0]
    values = tool.handler_arguments(
        {"size": "M", "sugars": "2", "milk": {"kind": "oat"}}
    )
    assert values == {"size": "M", "sugars": 2, "milk": Milk(kind="oat")}
    assert tool.handler_arguments({"size": "S"}) == {
        "size": "S",
        "sugars": 0,
        "milk": None,
    }
    with pytest.raises(JsonRpcError) as caught:
        tool.handler_arguments({"size": "S", "sugars": "many"})
    assert caught.value.code == -32602
    assert "sugars: Input should be a valid integer" in caught.value.message
    with pytest.raises(JsonRpcError) as caught:
        tool.handler_arguments({"sugars": -1, "milk": {"kind": "soy"}})
    assert caught.value.message.startswith("Invalid arguments for tool 'brew': ")
    for part in (
        "size: Field required",
        "sugars: Input should be greater than or equal to 0",
        "milk.kind: Input should be 'whole' or 'oat'",
    ):
        assert part in caught.value.message


async def reserved_names(
    ctx: ToolContext, json: str, schema: int, model_config: bool = False
) -> str:
    return f"{json} {schema} {model_config}"


async def test_parameter_names_pydantic_reserves_keep_their_names() -> None:
    """Parameters named like ``BaseModel`` attributes keep their names on the wire and
    reach the function."""
    server = TasksServer("typed", store=InMemoryTaskStore())
    server.tool()(reserved_names)
    tool = server.tools[0]
    assert sorted(tool.input_schema["properties"]) == ["json", "model_config", "schema"]
    assert tool.input_schema["required"] == ["json", "schema"]
    values = tool.handler_arguments({"json": "j", "schema": 3})
    output = await tool.handler(ToolContext.__new__(ToolContext), values)
    assert output == "j 3 False"


def test_docstring_parameter_sections() -> None:
    """Google (``Args:``) and NumPy (``Parameters`` underlined) sections give each
    parameter's description; the text before the section is the description."""
    from mcp_tasks_ext.server.signatures import parameter_docs

    google = """Brew a coffee.

    More words.

    Args:
        size (str): The cup
            size.
        sugars: Spoons.

    Returns:
        A receipt.
    """
    assert parameter_docs(google) == (
        "Brew a coffee.\n\nMore words.",
        {"size": "The cup size.", "sugars": "Spoons."},
    )
    numpy = """Brew a coffee.

    Parameters
    ----------
    size : str
        The cup size.
    sugars : int, optional
        Spoons
        of sugar.

    Returns
    -------
    Receipt
    """
    assert parameter_docs(numpy) == (
        "Brew a coffee.",
        {"size": "The cup size.", "sugars": "Spoons of sugar."},
    )
    assert parameter_docs("Just text.") == ("Just text.", {})
    assert parameter_docs(None) == ("", {})


def _typed_server(server: Any, ran: list[str]) -> None:
    """``brew`` (a task may be asked for), ``count`` (wrapped result) and ``say``
    (typed arguments, text result) on ``server``; each run is noted in ``ran``."""

    async def noted_brew(
        ctx: ToolContext,
        size: Literal["S", "M", "L"],
        sugars: Annotated[int, Field(ge=0, description="Spoons of sugar.")] = 0,
        milk: Milk | None = None,
    ) -> Receipt:
        ran.append("brew")
        return await brew(ctx, size, sugars, milk)

    noted_brew.__doc__ = brew.__doc__
    server.tool("brew", answer_within_ms=0)(noted_brew)

    @server.tool()
    async def count(ctx: ToolContext, n: int) -> list[int]:
        ran.append("count")
        return list(range(n))

    @server.tool()
    async def say(ctx: ToolContext, words: list[str]) -> str:
        ran.append("say")
        return " ".join(words)


RECEIPT = {"size": "M", "sugars": 2, "milk": "oat"}
BREW_ARGS = {"size": "M", "sugars": 2, "milk": {"kind": "oat"}}
BAD_ARGS = {"size": "M", "sugars": "many"}


def _structured(result: dict[str, Any], value: Any, text: Any = None) -> None:
    """``result`` carries ``value`` as ``structuredContent`` and its JSON as text."""
    assert result["structuredContent"] == value
    assert result["isError"] is False
    [block] = result["content"]
    assert block["type"] == "text"
    assert json.loads(block["text"]) == (value if text is None else text)


async def test_extension_lists_schemas_and_answers_typed_calls() -> None:
    """Extension: ``tools/list`` has both schemas; a call (inline and as a task)
    returns ``structuredContent`` with text; a bad call, asked as a task or not, is
    ``-32602`` naming the field, before the tool runs or any task exists."""
    server = TasksServer("typed", store=InMemoryTaskStore())
    ran: list[str] = []
    _typed_server(server, ran)
    info = RequestInfo(principal="alice")
    async with server:

        async def send(
            method: str, params: dict[str, Any], declare: bool = False
        ) -> dict[str, Any] | None:
            return await server.handle(
                ext_message(method, params, declare=declare), info
            )

        tools = result_of(await send("tools/list", {}))["tools"]
        brew_wire = next(t for t in tools if t["name"] == "brew")
        assert brew_wire["inputSchema"] == BREW_INPUT
        assert brew_wire["outputSchema"] == Receipt.model_json_schema()
        say_wire = next(t for t in tools if t["name"] == "say")
        assert "outputSchema" not in say_wire
        inline = result_of(
            await send("tools/call", {"name": "brew", "arguments": BREW_ARGS})
        )
        _structured(inline, RECEIPT)
        counted = result_of(
            await send("tools/call", {"name": "count", "arguments": {"n": 3}})
        )
        _structured(counted, {"result": [0, 1, 2]}, [0, 1, 2])
        said = result_of(
            await send("tools/call", {"name": "say", "arguments": {"words": ["a"]}})
        )
        assert said["content"] == [{"type": "text", "text": "a"}]
        assert "structuredContent" not in said
        created = result_of(
            await send(
                "tools/call", {"name": "brew", "arguments": BREW_ARGS}, declare=True
            )
        )
        assert created["resultType"] == "task", created
        task_id = created["taskId"]
        done = await _until_done(
            lambda: send("tasks/get", {"taskId": task_id}, declare=True)
        )
        _structured(done["result"], RECEIPT)
        assert ran == ["brew", "count", "say", "brew"]
        for declare in (False, True):
            error = error_of(
                await send(
                    "tools/call", {"name": "brew", "arguments": BAD_ARGS}, declare
                )
            )
            assert error["code"] == -32602
            assert "sugars: Input should be a valid integer" in error["message"]
        assert ran == ["brew", "count", "say", "brew"]
        assert len(await server.store.list_tasks("alice", 0, 10)) == 1


async def _until_done(get: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
    """The task ``get()`` reads, once it is terminal (5 s deadline)."""
    deadline = time.monotonic() + 5
    while True:
        task = result_of(await get())
        if task["status"] in ("completed", "failed", "cancelled"):
            assert task["status"] == "completed", task
            return task
        assert time.monotonic() < deadline, task
        await asyncio.sleep(0.01)


async def test_2025_lists_schemas_and_answers_typed_calls() -> None:
    """2025-11-25: the same through a session, task-augmented or not; a bad
    task-augmented call is ``-32602`` and creates no task."""
    from mcp_tasks_2025_11_25.server import RequestInfo as Info2025
    from mcp_tasks_2025_11_25.server import TasksServer as Server2025
    from mcp_tasks_2025_11_25.stores import InMemoryTaskStore as Store2025

    server = Server2025("typed", store=Store2025())
    ran: list[str] = []
    _typed_server(server, ran)
    async with server:
        session = server.open_session("alice")
        info = Info2025(principal="alice", session_id=session.id)
        ids = iter(range(1, 100))

        async def send(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
            message = message_2025(method, params, request_id=next(ids))
            return await server.handle(message, info)

        result_of(
            await send(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            )
        )
        tools = result_of(await send("tools/list", {}))["tools"]
        brew_wire = next(t for t in tools if t["name"] == "brew")
        assert brew_wire["inputSchema"] == BREW_INPUT
        assert brew_wire["outputSchema"] == Receipt.model_json_schema()
        inline = result_of(
            await send("tools/call", {"name": "brew", "arguments": BREW_ARGS})
        )
        _structured(inline, RECEIPT)
        created = result_of(
            await send(
                "tools/call", {"name": "brew", "arguments": BREW_ARGS, "task": {}}
            )
        )
        task_id = created["task"]["taskId"]
        result = result_of(await send("tasks/result", {"taskId": task_id}))
        _structured(result, RECEIPT)
        for task in (None, {}):
            params: dict[str, Any] = {"name": "brew", "arguments": BAD_ARGS}
            if task is not None:
                params["task"] = task
            error = error_of(await send("tools/call", params))
            assert error["code"] == -32602
            assert "sugars: Input should be a valid integer" in error["message"]
        assert ran == ["brew", "brew"]
        assert len(await server.store.list_tasks("alice", 0, 10)) == 1


async def test_dual_server_lists_and_checks_typed_tools_in_both_revisions() -> None:
    """The dual server's one registration serves the typed tool to both revisions:
    ``outputSchema`` listed, a bad call ``-32602`` naming the field in each."""
    from mcp_tasks.server import RequestInfo as DualInfo
    from mcp_tasks.server import TasksServer as DualServer
    from mcp_tasks.stores import InMemoryTaskStore as DualStore

    server = DualServer("typed", store=DualStore())
    ran: list[str] = []
    _typed_server(server, ran)
    async with server:
        session = server.server_2025.open_session(None)
        session_info = DualInfo(session_id=session.id)
        init = message_2025(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        )
        result_of(await server.handle(init, session_info))
        for make, info in (
            (message_2025, session_info),
            (partial(ext_message, declare=False), None),
        ):
            listing = make("tools/list", {})
            bad = make("tools/call", {"name": "brew", "arguments": BAD_ARGS})
            good = make("tools/call", {"name": "brew", "arguments": BREW_ARGS})
            answers = [
                await server.handle(
                    message,
                    (
                        info
                        if info is not None
                        else DualInfo(headers=headers_for(message))
                    ),
                )
                for message in (listing, bad, good)
            ]
            tools = result_of(answers[0])["tools"]
            brew_wire = next(t for t in tools if t["name"] == "brew")
            assert brew_wire["outputSchema"] == Receipt.model_json_schema()
            error = error_of(answers[1])
            assert error["code"] == -32602
            assert "sugars: Input should be a valid integer" in error["message"]
            _structured(result_of(answers[2]), RECEIPT)
        assert ran == ["brew", "brew"]
