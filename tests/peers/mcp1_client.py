"""Tasks peer client on the official Python SDK ``mcp==1.30.0`` (revision 2025-11-25).

Run with the peer virtualenv's interpreter::

    venv-mcp1/bin/python tests/peers/mcp1_client.py URL TOOL ARGS_JSON
        [--elicit accept|decline|cancel] [--answer JSON] [--cancel-after SECONDS]
        [--ttl MS] [--timeout SECONDS]

It calls TOOL as a task (``tools/call`` with ``params.task``), polls ``tasks/get``
until the task is terminal, calls ``tasks/result`` when the task needs input (the
server then delivers its elicitation on that response stream) or has finished,
optionally sends ``tasks/cancel`` after SECONDS, and prints exactly one JSON line
on stdout:

    {"task_id": ..., "status": "completed"|"failed"|"cancelled"|..., "result":
    {...}|null,
     "error": {"code": ..., "message": ...}|null, "is_error": bool, "text": "...",
     "status_messages": [...], "elicitations": [...], "notifications": int,
     "cancel": {...}|null}

By default every elicitation is answered with ``accept`` and ``{"confirm": true}``.
The exit code is 0 whenever the JSON line was printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.context import RequestContext
from mcp.shared.exceptions import McpError

# The SDK marks its experimental Tasks API deprecated; it is exactly what this peer
# exercises.
warnings.filterwarnings("ignore", category=DeprecationWarning)


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
    parser.add_argument("--ttl", type=int, default=60000)
    parser.add_argument("--timeout", type=float, default=60.0)
    return parser.parse_args(argv)


def _error(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, McpError):
        return {"code": exc.error.code, "message": exc.error.message}
    return {"code": None, "message": f"{type(exc).__name__}: {exc}"}


def _texts(result: dict[str, Any] | None) -> str:
    content = (result or {}).get("content") or []
    return "".join(
        block.get("text", "") for block in content if isinstance(block, dict)
    )


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

    def note_message(message: str | None) -> None:
        if message and message not in report["status_messages"]:
            report["status_messages"].append(message)

    async def on_elicit(
        _context: RequestContext[ClientSession, Any], params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        report["elicitations"].append(params.message)
        content = json.loads(opts.answer) if opts.elicit == "accept" else None
        return types.ElicitResult(action=opts.elicit, content=content)

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.TaskStatusNotification
        ):
            report["notifications"] += 1
            note_message(message.root.params.statusMessage)

    async with (
        streamablehttp_client(opts.url) as (read, write, _),
        ClientSession(
            read, write, elicitation_callback=on_elicit, message_handler=on_message
        ) as session,
    ):
        await session.initialize()
        try:
            created = await session.experimental.call_tool_as_task(
                opts.tool, json.loads(opts.arguments), ttl=opts.ttl
            )
        except McpError as exc:
            report["error"] = _error(exc)
            return report
        task_id = created.task.taskId
        report["task_id"] = task_id
        report["status"] = created.task.status

        async def cancel_later() -> None:
            await anyio.sleep(opts.cancel_after)
            try:
                ack = await session.experimental.cancel_task(task_id)
                report["cancel"] = {"status": ack.status}
            except McpError as exc:
                report["cancel"] = {"error": _error(exc)}

        async def fetch_result() -> None:
            try:
                payload = await session.experimental.get_task_result(
                    task_id, types.GetTaskPayloadResult
                )
                result = payload.model_dump(
                    by_alias=True, mode="json", exclude_none=True
                )
                report["result"] = result
                report["is_error"] = bool(result.get("isError"))
                report["text"] = _texts(result)
            except McpError as exc:
                report["error"] = _error(exc)

        async with anyio.create_task_group() as group:
            if opts.cancel_after is not None:
                group.start_soon(cancel_later)
            fetched = False
            async for status in session.experimental.poll_task(task_id):
                report["status"] = status.status
                note_message(status.statusMessage)
                if status.status == "input_required" and not fetched:
                    # tasks/result carries the queued elicitation and then blocks
                    # until the task is terminal.
                    fetched = True
                    await fetch_result()
            final = await session.experimental.get_task(task_id)
            report["status"] = final.status
            note_message(final.statusMessage)
            if final.status in ("completed", "failed") and not fetched:
                await fetch_result()
            group.cancel_scope.cancel()
    return report


def main() -> None:
    opts = parse_args(sys.argv[1:])
    report = anyio.run(_bounded, opts)
    print(json.dumps(report), flush=True)


async def _bounded(opts: argparse.Namespace) -> dict[str, Any]:
    with anyio.fail_after(opts.timeout):
        return await run(opts)


if __name__ == "__main__":
    main()
