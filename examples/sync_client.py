"""The synchronous client: the async client's methods without ``await``, for scripts,
notebooks and WSGI apps. Runs against the example server::

    .venv/bin/python examples/server.py --host 127.0.0.1 --port 8000 --memory
    .venv/bin/python examples/sync_client.py http://127.0.0.1:8000/mcp

It calls a plain tool, follows a task's status, answers a question the server asks
midway with a plain function that reads the terminal (``input()``: it runs in a worker
thread, so the client's event loop keeps serving), reads a tool's structured content
as a model of its own (``result_type=``), and cancels a task. Every call returns a
``ToolResult``: ``result.text`` is the text of its content blocks.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

from pydantic import BaseModel  # noqa: E402

from mcp_tasks.client import (  # noqa: E402
    InputContext,
    TaskCancelled,
    TasksClient,
    TaskSnapshot,
    status_name,
)
from mcp_tasks.task_ids import MemoryTaskIdStore  # noqa: E402


class Reading(BaseModel):
    """The ``weather`` tool's structured content."""

    city: str
    celsius: float


def confirm(context: InputContext) -> dict[str, Any]:
    """Answer an elicitation on the terminal (the end of input declines)."""
    message = context.params.get("message", "?")
    try:
        reply = input(f"{message} [y/N] ")
    except EOFError:
        return {"action": "decline"}
    if reply.strip().lower() in ("y", "yes"):
        return {"action": "accept", "content": {"confirm": True}}
    return {"action": "decline"}


def show(snapshot: TaskSnapshot) -> None:
    """Print each new status of a task (runs in the client's loop thread)."""
    print(f"  [{status_name(snapshot.status)}] {snapshot.status_message or ''}")


def main(url: str) -> None:
    with TasksClient.sync(
        url, elicitation_handler=confirm, store=MemoryTaskIdStore()
    ) as client:
        print(f"revision: {client.revision}")
        print(client.call_tool("greet", {"name": "sync"}).text)

        result = client.call_tool(
            "slow_compute", {"seconds": 1, "label": "sum"}, on_status=show
        )
        print(result.text)

        print(client.call_tool("confirm_delete", {"filename": "notes.txt"}).text)

        weather = client.call_tool("weather", {"city": "Oslo"}, result_type=Reading)
        reading = weather.structured  # a Reading (InvalidStructuredContent if not)
        print(f"{reading.city}: {reading.celsius} degrees")

        handle = client.start_tool("slow_compute", {"seconds": 60})
        print(f"started task {handle.task_id}, cancelling it")
        handle.cancel()
        try:
            handle.result(timeout=30)
        except TaskCancelled:
            print("cancelled")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/mcp")
