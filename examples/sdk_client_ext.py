"""``mcp.client.Client`` (official Python SDK, ``mcp`` 2.x) with durable tasks from the
generated Tasks-extension package, through ``mcp_tasks_ext.sdk.client_extension``.

``client.call_tool`` stays a plain call: when the server answers with a task, the
extension polls it, answers its input requests with the client's elicitation callback
(here: a prompt on the terminal), keeps the task ID in ``--store`` until the task ends
and returns the ``CallToolResult``. ``--resume [TASK_ID]`` continues a stored task (the
last one when no ID is given), for example after the process was killed. Run it with an
interpreter that has ``mcp>=2.3``, for example the fastmcp peer virtualenv::

    $MCPTASKS_PEERS/venv-fastmcp/bin/python examples/sdk_client_ext.py
    http://127.0.0.1:8000/mcp slow_compute '{"seconds": 2}'

Exit codes: 0 done, 1 the tool or task failed, 2 cancelled or a bad command line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generated"))

from mcp.client import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp_types import ElicitResult  # noqa: E402

from mcp_tasks_ext.client import TaskCancelled  # noqa: E402
from mcp_tasks_ext.sdk import client_extension  # noqa: E402
from mcp_tasks_ext.task_ids import SqliteTaskIdStore  # noqa: E402


async def ask_on_terminal(context: Any, params: Any) -> ElicitResult:
    """The host's elicitation callback: one yes/no question per boolean field."""
    schema: dict[str, Any] = getattr(params, "requested_schema", None) or {}
    content: dict[str, Any] = {}
    properties: dict[str, Any] = schema.get("properties", {})
    for name in properties:
        answer = await asyncio.to_thread(input, f"{params.message} [{name}: y/n] ")
        content[name] = answer.strip().lower().startswith("y")
    return ElicitResult(action="accept", content=content)


def status_line(task: Any) -> None:
    """Print each new status of the task."""
    message = f" - {task.status_message}" if task.status_message else ""
    print(f"[{task.task_id[:8]}] {task.status}{message}", file=sys.stderr)


async def run(options: argparse.Namespace) -> int:
    """Call the tool (or resume a task) and print the result as JSON."""
    tasks = client_extension(
        store=SqliteTaskIdStore(options.store), on_status=status_line
    )
    async with Client(
        options.url, extensions=[tasks], elicitation_callback=ask_on_terminal
    ) as client:
        try:
            if options.resume is not None:
                task_id = options.resume or (await tasks.pending() or [""])[-1]
                result = await tasks.resume(client, task_id)
            else:
                result = await client.call_tool(options.tool, options.arguments)
        except TaskCancelled:
            print("cancelled", file=sys.stderr)
            return 2
        except MCPError as error:
            print(f"error {error.code}: {error.message}", file=sys.stderr)
            return 1
    print(json.dumps(result.model_dump(by_alias=True, mode="json", exclude_none=True)))
    return 1 if result.is_error else 0


def main() -> None:
    """Parse the command line and run."""
    parser = argparse.ArgumentParser(description=str(__doc__).splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("tool", nargs="?", default="")
    parser.add_argument("arguments", nargs="?", default="{}", type=json.loads)
    parser.add_argument("--store", default="mcp-task-ids.sqlite3")
    parser.add_argument("--resume", nargs="?", const="", default=None)
    options = parser.parse_args()
    if not isinstance(options.arguments, dict) or (
        not options.tool and options.resume is None
    ):
        parser.error("give TOOL and JSON-ARGS as an object, or --resume")
    sys.exit(asyncio.run(run(options)))


if __name__ == "__main__":
    main()
