"""A server with tools that ask for typed input (``ctx.elicit(message, Model)``), for
``tests/integration/server/test_typed_elicitation.py``.

Run as ``python tests/support/typed_input_server.py PACKAGE PORT``: ``PACKAGE`` is one
of the generated packages (``mcp_tasks``: both revisions on one endpoint). Tasks are
kept in memory. Each tool returns, as JSON text, what its answer was: the action, the
content as a dict (None when not accepted) and the content's class name.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "generated"))


class Sugars(BaseModel):
    """How the user takes their coffee."""

    sugars: int = Field(ge=0, le=5, description="How many sugars")
    sweetener: Literal["sugar", "honey"] = "sugar"
    milk: bool = False


class Code(BaseModel):
    """A field whose rule the form cannot say (a pattern): the model checks it."""

    code: str = Field(pattern="^[a-z]+$")


def main() -> None:
    """Serve the tools of the package named on the command line until killed."""
    package, port = sys.argv[1], int(sys.argv[2])
    server_module = importlib.import_module(f"{package}.server")
    serve = importlib.import_module(f"{package}.asgi").serve
    stores = importlib.import_module(f"{package}.stores")
    server = server_module.TasksServer("typed-input", store=stores.InMemoryTaskStore())
    server_module.elicitation_schema(Sugars)  # checked at registration time

    def told(answer: Any) -> str:
        content = answer.content
        return json.dumps(
            {
                "action": answer.action,
                "content": content.model_dump() if content is not None else None,
                "type": type(content).__name__,
            }
        )

    @server.tool(task_support="required")
    async def sweeten(ctx: Any, arguments: dict[str, Any]) -> str:
        return told(await ctx.elicit("How many sugars?", Sugars))

    @server.tool(task_support="required")
    async def enter_code(ctx: Any, arguments: dict[str, Any]) -> str:
        return told(await ctx.elicit("Your code?", Code))

    @server.tool(task_support="required")
    async def untyped(ctx: Any, arguments: dict[str, Any]) -> str:
        answer = await ctx.elicit(
            "Go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        )
        return json.dumps({"type": type(answer).__name__, "answer": answer})

    serve(server, "127.0.0.1", port)


if __name__ == "__main__":
    main()
