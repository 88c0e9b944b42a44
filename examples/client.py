"""Terminal client for MCP Tasks, built on the generated golden packages.

Call a tool, watch its task, answer the server's questions, get the result::

    python examples/client.py URL TOOL [JSON-ARGS] [--revision 2025-11-25|ext-2026-07-28]

    python examples/client.py http://127.0.0.1:8000/mcp slow_compute '{"seconds": 5}'

While the task runs, a status line shows its status, ``statusMessage`` and the elapsed
time. When the server needs input (elicitation) the client asks on the terminal and
sends the answer. The tool result is printed as JSON on stdout. Ctrl-C cancels the task
(``tasks/cancel``) before exiting.

Task IDs are kept in a SQLite store (``--store``, default: the package default) until
the task ends, so a wait that was interrupted can be continued with ``--resume``::

    python examples/client.py URL --resume [TASK_ID] --store tasks.sqlite3

Exit status: 0 success, 1 the tool failed (task ``failed`` or ``isError`` result),
2 the task was cancelled, 3 other errors (unknown task, timeout, transport), 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

PACKAGES = {"2025-11-25": "mcp_tasks_2025_11_25", "ext-2026-07-28": "mcp_tasks_ext"}


class StatusLine:
    """One line on stderr showing the latest task status, redrawn while the task runs."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.status = "calling"
        self.message = ""
        self.paused = False
        self.tty = sys.stderr.isatty()
        self._last = ""

    def update(self, status: str, message: str | None) -> None:
        self.status, self.message = status, message or ""
        if not self.tty:
            line = self.render()
            if line.split(" (")[0] != self._last:
                self._last = line.split(" (")[0]
                print(line, file=sys.stderr, flush=True)
        else:
            self.draw()

    def render(self) -> str:
        text = f"[{self.status}] {self.message}".rstrip()
        return f"{text} ({time.monotonic() - self.started:.1f}s)"

    def draw(self) -> None:
        if self.tty and not self.paused:
            sys.stderr.write("\r\x1b[K" + self.render())
            sys.stderr.flush()

    def clear(self) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()

    async def tick(self) -> None:
        while True:
            self.draw()
            await asyncio.sleep(0.2)


async def read_line(prompt: str) -> str:
    """Ask on the terminal without blocking the event loop (Ctrl-C still cancels)."""
    sys.stderr.write(prompt)
    sys.stderr.flush()
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def ready() -> None:
        if not line.done():
            line.set_result(sys.stdin.readline())

    loop.add_reader(sys.stdin.fileno(), ready)
    try:
        text = await line
    finally:
        loop.remove_reader(sys.stdin.fileno())
    if text == "":
        raise EOFError("stdin closed")
    return text.strip()


def parse_answer(text: str, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "boolean":
        return text.lower() in ("y", "yes", "true", "1")
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    return text


def make_elicitation_handler(line: StatusLine) -> Any:
    async def elicit(context: Any) -> dict[str, Any]:
        params = context.params
        line.paused = True
        line.clear()
        try:
            print(f"\nThe server asks: {params.get('message', '')}", file=sys.stderr)
            if params.get("mode") == "url":
                print(f"Open: {params.get('url')}", file=sys.stderr)
                action = (
                    await read_line("Done? [accept/decline/cancel] (accept): ")
                    or "accept"
                )
                return {"action": action}
            action = (
                await read_line("Answer? [accept/decline/cancel] (accept): ")
                or "accept"
            )
            if action != "accept":
                return {"action": action}
            content: dict[str, Any] = {}
            properties = (params.get("requestedSchema") or {}).get("properties") or {}
            for name, schema in properties.items():
                hint = " (y/n)" if schema.get("type") == "boolean" else ""
                description = (
                    f" - {schema['description']}" if schema.get("description") else ""
                )
                content[name] = parse_answer(
                    await read_line(f"  {name}{description}{hint}: "), schema
                )
            return {"action": "accept", "content": content}
        finally:
            line.paused = False

    return elicit


def to_json(result: Any) -> dict[str, Any]:
    return result.to_wire() if hasattr(result, "to_wire") else dict(result)


async def follow(
    handle: Any, line: StatusLine, api: Any, timeout: float | None, verb: str
) -> dict[str, Any]:
    if handle.task_id is not None:
        print(f"task {handle.task_id} {verb}", file=sys.stderr, flush=True)
    ticker = asyncio.ensure_future(line.tick()) if line.tty else None
    try:
        async for snapshot in handle.snapshots(timeout=timeout):
            line.update(api.status_name(snapshot.status), snapshot.status_message)
        return to_json(await handle.result())
    finally:
        if ticker is not None:
            ticker.cancel()
            await asyncio.gather(ticker, return_exceptions=True)
        line.clear()
        if handle.task is not None and line.tty:
            line.status = api.status_name(handle.task.status)
            line.message = handle.task.status_message or ""
            print(line.render(), file=sys.stderr, flush=True)


async def run(args: argparse.Namespace) -> int:
    package = PACKAGES[args.revision]
    api = importlib.import_module(f"{package}.client")
    transports = importlib.import_module(f"{package}.transport")
    stores = importlib.import_module(f"{package}.task_ids")
    line = StatusLine()
    store = (
        stores.SqliteTaskIdStore(args.store)
        if args.store
        else stores.SqliteTaskIdStore()
    )
    client = api.TasksClient(
        transports.HttpTransport(args.url),
        store=store,
        elicitation_handler=make_elicitation_handler(line),
        cancel_on_abort=True,
    )
    ids: list[str] = []
    if args.resume is not None:
        ids = (
            [args.resume]
            if args.resume
            else [entry.task_id for entry in await store.pending()]
        )
        if ids and hasattr(client, "rejoin"):
            # 2025-11-25 servers may bind a task to the session that created it.
            await client.rejoin(ids[0])
    async with client:
        if args.resume is not None:
            if not ids:
                print("no pending tasks in the store", file=sys.stderr)
                return 3
            results = [
                await follow(client.task(task_id), line, api, args.timeout, "resumed")
                for task_id in ids
            ]
            result = results[0] if len(results) == 1 else {"results": results}
        else:
            if args.tool is None:
                print("a TOOL is required (or --resume)", file=sys.stderr)
                return 3
            arguments = json.loads(args.arguments) if args.arguments else {}
            result = await follow(
                await client.start_tool(args.tool, arguments),
                line,
                api,
                args.timeout,
                "created",
            )
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 1 if result.get("isError") else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="MCP endpoint, e.g. http://127.0.0.1:8000/mcp")
    parser.add_argument("tool", nargs="?", help="tool to call")
    parser.add_argument("arguments", nargs="?", help="tool arguments as a JSON object")
    parser.add_argument("--revision", choices=sorted(PACKAGES), default="2025-11-25")
    parser.add_argument(
        "--store", help="SQLite file for task IDs (default: the package default)"
    )
    parser.add_argument(
        "--timeout", type=float, help="give up waiting after this many seconds"
    )
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        help="continue waiting for TASK_ID (or every stored task)",
    )
    args = parser.parse_args()
    api = importlib.import_module(f"{PACKAGES[args.revision]}.client")
    transports = importlib.import_module(f"{PACKAGES[args.revision]}.transport")
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:
        print("\ninterrupted: task cancelled", file=sys.stderr)
        return 130
    except api.TaskFailed as error:
        print(f"task failed: {error.message} (code {error.code})", file=sys.stderr)
        if error.data is not None:
            print(json.dumps(error.data), file=sys.stderr)
        return 1
    except api.TaskCancelled as error:
        print(f"cancelled: {error}", file=sys.stderr)
        return 2
    except (
        api.TasksClientError,
        transports.JsonRpcError,
        transports.TransportError,
    ) as error:
        print(f"error: {error}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
