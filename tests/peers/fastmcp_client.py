"""Tasks extension peer client on ``fastmcp[tasks]==4.1.4`` (``fastmcp_tasks``).

Run with the peer virtualenv's interpreter::

    venv-fastmcp/bin/python tests/peers/fastmcp_client.py URL TOOL [ARGS_JSON]
        [--elicit accept|decline|cancel] [--answer JSON] [--cancel-after SECONDS]
        [--timeout SECONDS]

Importing ``fastmcp_tasks`` makes every FastMCP ``Client`` declare the
``io.modelcontextprotocol/tasks`` extension. ``call_tool_task`` returns a handle
as soon as the server answers with ``resultType: "task"``; ``ToolTask.result()``
polls ``tasks/get`` and answers ``input_required`` through the client's
elicitation handler (sent back with ``tasks/update``); ``ToolTask.cancel()`` sends
``tasks/cancel``. Prints one JSON line with the same keys as the other peer
clients: task_id, status, result, error, is_error, text, status_messages,
elicitations, notifications, cancel.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

import fastmcp_tasks  # noqa: F401  (registers the client half of the extension)
from fastmcp import Client
from fastmcp.client.elicitation import ElicitResult
from fastmcp_tasks import call_tool_task

TERMINAL = {"completed", "failed", "cancelled"}


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("tool")
    parser.add_argument("arguments", nargs="?", default="{}")
    parser.add_argument(
        "--elicit", default="accept", choices=["accept", "decline", "cancel"]
    )
    parser.add_argument("--answer", default='{"confirm": true}')
    parser.add_argument("--cancel-after", type=float, default=None)
    parser.add_argument("--timeout", type=float, default=60.0)
    return parser.parse_args(argv)


def _error(exc: BaseException) -> dict[str, Any]:
    code = getattr(getattr(exc, "error", None), "code", None)
    return {"code": code, "message": f"{type(exc).__name__}: {exc}"}


async def run(opts: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {
        "task_id": None,
        "status": None,
        "result": None,
        "error": None,
        "is_error": False,
        "text": "",
        "status_messages": [],
        "elicitations": [],
        "notifications": 0,
        "cancel": None,
    }

    def note(status: Any) -> None:
        report["status"] = status.status
        message = status.status_message
        if message and message not in report["status_messages"]:
            report["status_messages"].append(message)

    async def on_elicit(
        message: str, _response_type: Any, _params: Any, _context: Any
    ) -> Any:
        report["elicitations"].append(message)
        if opts.elicit == "accept":
            return ElicitResult(action="accept", content=json.loads(opts.answer))
        return ElicitResult(action=opts.elicit)

    async with Client(opts.url, elicitation_handler=on_elicit) as client:
        try:
            task = await call_tool_task(
                client, opts.tool, json.loads(opts.arguments), raise_on_error=False
            )
        except Exception as exc:  # the server refused to run the call as a task
            report["error"] = _error(exc)
            return report
        report["task_id"] = task.task_id
        report["status"] = "working"

        async def watch() -> None:
            # Samples tasks/get so that status messages are visible in the report.
            while True:
                note(await task.status())
                if report["status"] in TERMINAL:
                    return
                await asyncio.sleep(0.1)

        watcher = asyncio.create_task(watch())
        try:
            if opts.cancel_after is not None:
                await asyncio.sleep(opts.cancel_after)
                try:
                    await task.cancel()
                    report["cancel"] = {"status": "requested"}
                except Exception as exc:
                    report["cancel"] = {"error": _error(exc)}
                final = await task.wait(timeout=opts.timeout)
            else:
                result = await task.result()
                report["result"] = {
                    "content": [
                        block.model_dump(mode="json") for block in result.content
                    ],
                    "isError": result.is_error,
                    "structuredContent": result.structured_content,
                }
                report["is_error"] = bool(result.is_error)
                report["text"] = "".join(getattr(b, "text", "") for b in result.content)
                final = await task.status()
        finally:
            watcher.cancel()
        note(final)
        if final.status == "failed":
            report["error"] = final.error if isinstance(final.error, dict) else None
    return report


async def bounded(opts: argparse.Namespace) -> dict[str, Any]:
    return await asyncio.wait_for(run(opts), opts.timeout)


def main() -> None:
    opts = parse_args(sys.argv[1:])
    print(json.dumps(asyncio.run(bounded(opts))), flush=True)


if __name__ == "__main__":
    main()
