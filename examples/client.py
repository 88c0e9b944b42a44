"""Terminal client for MCP Tasks, built on the generated golden package ``mcp_tasks``.

Call a tool, watch its task, answer the server's questions, get the result::

    python examples/client.py URL TOOL [JSON-ARGS] [--revision
    2025-11-25|ext-2026-07-28]

The client finds out which Tasks revision the server speaks (2025-11-25 or the Tasks
extension) and speaks it; ``--revision`` pins one instead (the generator's aliases
``2025``, ``ext``, ``extension`` and ``2026-07-28`` work too).

    python examples/client.py http://127.0.0.1:8000/mcp slow_compute '{"seconds": 5}'

While the task runs, a status line shows its status, ``statusMessage`` and the elapsed
time. When the server needs input (elicitation) the client asks on the terminal and
sends the answer; answers may also come from a pipe or a file, a line each, and the end
of input (Ctrl-D at the terminal) declines the question. Any other input request of the
package's schema (its input-request union: sampling, roots, or a method a newer schema
adds) is printed as JSON, and the answer is read as one JSON object on one line (the
end of input then ends the client with exit status 3). The tool result is printed as
JSON on stdout. Ctrl-C cancels the task
(``tasks/cancel``) before exiting.

Task IDs are kept in a SQLite store (``--store``, default: the package default) until
the task ends, so a wait that was interrupted can be continued with ``--resume``::

    python examples/client.py URL --resume [TASK_ID] --store tasks.sqlite3

Answers are checked before they are sent: the action must be ``accept``, ``decline`` or
``cancel``, and each value must fit the schema the server requested (type, choices,
bounds, length, format); the question is asked again until it does.

Exit status:
  0    success
  1    the tool failed (task ``failed`` or ``isError`` result)
  2    the command line is invalid (for example JSON-ARGS that is not a JSON object,
       or no TOOL and no --resume): checked before connecting
  3    other errors (unknown task, timeout, transport, a missing dependency)
  4    the task was cancelled
  130  interrupted (Ctrl-C): the task was cancelled on the server
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import functools
import json
import math
import re
import signal
import sys
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

from mcp_tasks import SPEC_REVISIONS  # noqa: E402
from mcp_tasks import client as api  # noqa: E402
from mcp_tasks import task_ids as stores  # noqa: E402
from mcp_tasks import transport as transports  # noqa: E402
from mcp_tasks.protocol import REVISIONS, InputHandlers  # noqa: E402


class StatusLine:
    """One line on stderr showing the latest task status, redrawn while the task
    runs."""

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


class EndOfInput(Exception):
    """Standard input ended (Ctrl-D, or the end of a pipe or file): the question is
    declined."""


async def read_line(prompt: str) -> str:
    """Ask on the terminal without blocking the event loop (Ctrl-C still cancels).

    Standard input may be a terminal, a pipe or a file (``/dev/null`` too): answers
    are read line by line whatever it is. At its end :class:`EndOfInput` is raised.
    """
    sys.stderr.write(prompt)
    sys.stderr.flush()
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def ready() -> None:
        if not line.done():
            line.set_result(sys.stdin.readline())

    try:
        loop.add_reader(sys.stdin.fileno(), ready)
    except (PermissionError, OSError, ValueError):
        # A regular file or /dev/null cannot be watched: it never blocks, so read it
        # in a thread (at its end, readline returns "").
        text: str = await loop.run_in_executor(None, sys.stdin.readline)
    else:
        try:
            text = await line
        finally:
            loop.remove_reader(sys.stdin.fileno())
    if text == "":
        sys.stderr.write("\n")
        raise EndOfInput("end of input")
    return text.strip()


T = TypeVar("T")
"""What an answer parser returns."""


ACTIONS = ("accept", "decline", "cancel")

MISSING = object()
"""An optional property left empty: it is not sent."""


def parse_action(text: str) -> str:
    """The elicitation action typed at the prompt (empty: ``accept``)."""
    action = text.strip().lower() or "accept"
    if action not in ACTIONS:
        raise ValueError("please answer accept, decline or cancel")
    return action


def choices(schema: dict[str, Any]) -> list[str]:
    """The values an enum schema allows (``enum``, or the ``const`` of
    ``oneOf``/``anyOf``)."""
    if isinstance(schema.get("enum"), list):
        return [str(value) for value in schema["enum"]]
    for key in ("oneOf", "anyOf"):
        options: Any = schema.get(key)
        if isinstance(options, list):
            return [
                str(cast(dict[str, Any], option)["const"])
                for option in cast(list[object], options)
                if isinstance(option, dict) and "const" in option
            ]
    return []


def hint(schema: dict[str, Any]) -> str:
    """What the prompt shows about the expected answer."""
    kind = schema.get("type")
    if kind == "boolean":
        text = " (y/n)"
    elif kind == "array":
        text = f" (comma-separated: {', '.join(choices(schema.get('items') or {}))})"
    elif choices(schema):
        text = f" [{'/'.join(choices(schema))}]"
    elif kind in ("integer", "number"):
        text = " (a whole number)" if kind == "integer" else " (a number)"
    else:
        text = f" ({schema['format']})" if schema.get("format") else ""
    if "default" in schema:
        text += f" (default: {json.dumps(schema['default'])})"
    return text


def check_bounds(value: float, schema: dict[str, Any]) -> None:
    """``minimum``/``maximum`` (and their exclusive forms) of a number schema."""
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(low, (int, float)) and value < low:
        raise ValueError(f"must be at least {low}")
    if isinstance(high, (int, float)) and value > high:
        raise ValueError(f"must be at most {high}")
    low, high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(low, (int, float)) and value <= low:
        raise ValueError(f"must be more than {low}")
    if isinstance(high, (int, float)) and value >= high:
        raise ValueError(f"must be less than {high}")


def check_string(text: str, schema: dict[str, Any]) -> None:
    """Length, ``pattern`` and ``format`` of a string schema."""
    shortest, longest = schema.get("minLength"), schema.get("maxLength")
    if isinstance(shortest, int) and len(text) < shortest:
        raise ValueError(f"must be at least {shortest} characters long")
    if isinstance(longest, int) and len(text) > longest:
        raise ValueError(f"must be at most {longest} characters long")
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and re.search(pattern, text) is None:
        raise ValueError(f"must match {pattern}")
    form = schema.get("format")
    if form == "email" and not re.fullmatch(r"[^@\s]+@[^@\s]+", text):
        raise ValueError("must be an email address")
    if form == "uri" and not urllib.parse.urlsplit(text).scheme:
        raise ValueError("must be a URI (with a scheme, e.g. https://)")
    try:
        if form == "date":
            datetime.date.fromisoformat(text)
        elif form == "date-time":
            datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"must be a {form} in ISO 8601 form") from None


def parse_answer(text: str, schema: dict[str, Any], required: bool = True) -> Any:
    """The value typed for one requested property, checked against its schema.

    Raises ``ValueError`` saying what is wrong; returns :data:`MISSING` for an optional
    property left empty.
    """
    text = text.strip()
    if text == "":
        if "default" in schema:
            return schema["default"]
        if not required:
            return MISSING
        raise ValueError("an answer is required")
    kind = schema.get("type")
    if kind == "array":
        allowed = choices(schema.get("items") or {})
        picked = [part.strip() for part in text.split(",") if part.strip()]
        wrong = [value for value in picked if allowed and value not in allowed]
        if wrong:
            raise ValueError(f"choose from {', '.join(allowed)}")
        fewest, most = schema.get("minItems"), schema.get("maxItems")
        if isinstance(fewest, int) and len(picked) < fewest:
            raise ValueError(f"choose at least {fewest}")
        if isinstance(most, int) and len(picked) > most:
            raise ValueError(f"choose at most {most}")
        return picked
    allowed = choices(schema)
    if allowed:
        if text not in allowed:
            raise ValueError(f"choose one of {', '.join(allowed)}")
        return text
    if kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True
        if text.lower() in ("n", "no", "false", "0"):
            return False
        raise ValueError("answer y or n")
    if kind in ("integer", "number"):
        try:
            value: float = int(text) if kind == "integer" else float(text)
        except ValueError:
            raise ValueError(
                "must be a whole number" if kind == "integer" else "must be a number"
            ) from None
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        check_bounds(value, schema)
        return value
    check_string(text, schema)
    return text


async def ask(prompt: str, parse: Callable[[str], T]) -> T:
    """Ask until ``parse`` accepts the answer, saying what was wrong each time."""
    while True:
        text = await read_line(prompt)
        try:
            return parse(text)
        except ValueError as error:
            print(f"  {error}", file=sys.stderr, flush=True)


def make_elicitation_handler(line: StatusLine) -> api.InputHandler:
    async def elicit(context: Any) -> dict[str, Any]:
        params = context.params
        line.paused = True
        line.clear()
        try:
            return await answer(params)
        except EndOfInput:
            print("end of input: the question is declined", file=sys.stderr, flush=True)
            return {"action": "decline"}
        finally:
            line.paused = False

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        """Ask the server's question; the answer to send."""
        print(f"\nThe server asks: {params.get('message', '')}", file=sys.stderr)
        if params.get("mode") == "url":
            print(f"Open: {params.get('url')}", file=sys.stderr)
            action = await ask("Done? [accept/decline/cancel] (accept): ", parse_action)
            return {"action": action}
        action = await ask("Answer? [accept/decline/cancel] (accept): ", parse_action)
        if action != "accept":
            return {"action": action}
        content: dict[str, Any] = {}
        requested: dict[str, Any] = params.get("requestedSchema") or {}
        required: set[str] = set(requested.get("required") or [])
        properties: dict[str, dict[str, Any]] = requested.get("properties") or {}
        for name, schema in properties.items():
            description = (
                f" - {schema['description']}" if schema.get("description") else ""
            )
            value = await ask(
                f"  {name}{description}{hint(schema)}: ",
                functools.partial(
                    parse_answer, schema=schema, required=name in required
                ),
            )
            if value is not MISSING:
                content[name] = value
        return {"action": "accept", "content": content}

    return elicit


def json_object_answer(text: str) -> dict[str, Any]:
    """A typed answer to an input request: one JSON object."""
    try:
        value = json.loads(text)
    except ValueError:
        raise ValueError("not JSON: type one JSON object on one line") from None
    if not isinstance(value, dict):
        raise ValueError("must be a JSON object ({...})")
    return cast(dict[str, Any], value)


def make_json_handler(line: StatusLine) -> api.InputHandler:
    """The handler of an input request the client has no form for (any method of the
    schema's input-request union but elicitation): print the request and read the
    answer as a JSON object; the end of input gives up with an error."""

    async def answer(context: Any) -> dict[str, Any]:
        line.paused = True
        line.clear()
        try:
            print(
                f"\nThe server asks for input with {context.method}:\n"
                + json.dumps(context.params, indent=2, ensure_ascii=False),
                file=sys.stderr,
            )
            return await ask("Answer (a JSON object): ", json_object_answer)
        except EndOfInput:
            raise api.TasksClientError(
                f"end of input: no answer to {context.method}"
            ) from None
        finally:
            line.paused = False

    return answer


def input_handlers(line: StatusLine) -> InputHandlers:
    """A handler for every input method of the package's revisions: a form for
    elicitation, a JSON answer for any other."""
    methods = {method for tables in REVISIONS.values() for method in tables.inputs} - {
        "elicitation/create"
    }
    handlers = {method: make_json_handler(line) for method in sorted(methods)}
    handlers["elicitation/create"] = make_elicitation_handler(line)
    # the methods are the schema's, known at run time: one handler for each
    return cast(InputHandlers, handlers)


async def follow(
    handle: Any, line: StatusLine, api: Any, timeout: float | None, verb: str
) -> dict[str, Any]:
    if handle.task_id is not None:
        print(f"task {handle.task_id} {verb}", file=sys.stderr, flush=True)
    ticker = asyncio.ensure_future(line.tick()) if line.tty else None
    try:
        async for snapshot in handle.snapshots(timeout=timeout):
            line.update(api.status_name(snapshot.status), snapshot.status_message)
        result = await handle.result()  # a ToolResult: its wire object is printed
        raw: dict[str, Any] = result.raw
        return raw
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
    line = StatusLine()
    store = (
        stores.SqliteTaskIdStore(args.store)
        if args.store
        else stores.SqliteTaskIdStore()
    )
    client = api.TasksClient(
        args.url,
        revision=args.revision,
        store=store,
        input_handlers=input_handlers(line),
        cancel_on_abort=True,
    )
    ids: list[str] = []
    if args.resume is not None:
        ids = (
            [args.resume]
            if args.resume
            else [entry.task_id for entry in await store.pending()]
        )
        if ids:
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
            assert args.tool is not None  # checked by main() before connecting
            result = await follow(
                await client.start_tool(args.tool, args.arguments),
                line,
                api,
                args.timeout,
                "created",
            )
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 1 if result.get("isError") else 0


def json_object_argument(text: str) -> dict[str, Any]:
    """``JSON-ARGS`` as a dict; ``ValueError`` saying what is wrong otherwise."""
    try:
        value = json.loads(text)
    except ValueError as error:
        raise ValueError(f"JSON-ARGS is not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise ValueError(
            f"JSON-ARGS must be a JSON object like '{{\"seconds\": 5}}', not {text!r}"
        )
    return cast(dict[str, Any], value)


REVISION_ALIASES = {
    "2025": "2025-11-25",
    "ext": "ext-2026-07-28",
    "extension": "ext-2026-07-28",
    "2026-07-28": "ext-2026-07-28",
}
"""The generator's short names of the revisions, accepted by ``--revision``."""


def revision_argument(text: str) -> str:
    """``--revision``: a revision of the package, or one of the generator's aliases."""
    revision = REVISION_ALIASES.get(text, text)
    if revision not in SPEC_REVISIONS:
        known = sorted({*SPEC_REVISIONS, *REVISION_ALIASES})
        raise argparse.ArgumentTypeError(
            f"unknown revision {text!r} (choose from {', '.join(known)})"
        )
    return revision


def build_parser() -> argparse.ArgumentParser:
    paragraphs = str(__doc__).split("\n\n")
    parser = argparse.ArgumentParser(
        description=paragraphs[0],
        epilog=next(p for p in paragraphs if p.startswith("Exit status:")),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("url", help="MCP endpoint, e.g. http://127.0.0.1:8000/mcp")
    parser.add_argument("tool", nargs="?", help="tool to call")
    parser.add_argument(
        "arguments",
        nargs="?",
        default="{}",
        metavar="JSON-ARGS",
        help="tool arguments as a JSON object (default: {})",
    )
    parser.add_argument(
        "--revision",
        type=revision_argument,
        metavar="REVISION",
        help=(
            f"the Tasks revision the server speaks: {', '.join(sorted(SPEC_REVISIONS))}"
            " or an alias (2025, ext) (default: found out from the server)"
        ),
    )
    parser.add_argument(
        "--store",
        help=(
            "SQLite file for task IDs (default: $MCP_TASKS_STORE, else "
            f"{stores.default_store_path()})"
        ),
    )
    parser.add_argument(
        "--timeout",
        type=float,
        help=(
            "give up waiting after this many seconds (default: wait until the task"
            " ends)"
        ),
    )
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="TASK_ID",
        help="continue waiting for TASK_ID (or, without one, every stored task)",
    )
    return parser


def main() -> int:
    # Ctrl-C cancels the task even when the shell started us with SIGINT ignored (a
    # background job of a non-interactive shell): asyncio only turns SIGINT into a
    # cancellation when Python's own handler is installed.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    parser = build_parser()
    args = parser.parse_args()
    if args.tool is None and args.resume is None:
        print(
            f"{parser.prog}: error: a TOOL is required (or --resume)", file=sys.stderr
        )
        return 2
    try:
        args.arguments = json_object_argument(args.arguments)
    except ValueError as error:
        # A usage error: one line and exit 2 (like argparse's own), never exit 1,
        # which says that the tool failed.
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
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
        return 4
    except (
        api.TasksClientError,
        transports.JsonRpcError,
        transports.TransportError,
        ModuleNotFoundError,  # an optional dependency: the message says what to install
    ) as error:
        print(f"error: {error}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
