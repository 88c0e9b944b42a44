"""The command line: ``python -m <package>.check URL [options]``."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Any, cast

from ..protocol import REVISIONS
from .results import ConfigurationError
from .rules import KINDS
from .runner import run_checks

__all__ = ["main"]


def _tool_option(value: str) -> tuple[str, tuple[str, dict[str, Any]]]:
    kind, sep, rest = value.partition("=")
    if not sep or kind not in KINDS or not rest:
        raise argparse.ArgumentTypeError(
            f"expected KIND=NAME[:JSON] with KIND one of {', '.join(KINDS)}: {value!r}"
        )
    name, colon, arguments = rest.partition(":")
    try:
        parsed: object = json.loads(arguments) if colon else {}
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"arguments of {name!r} are not JSON"
        ) from None
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError(f"arguments of {name!r} are not a JSON object")
    return kind, (name, cast("dict[str, Any]", parsed))


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: check the server at URL; exit 0, 1 (a check failed), 2 (usage,
    or a ``--tool`` that does not fit the server) or 3 (some checks did not run)."""
    parser = argparse.ArgumentParser(
        prog=f"python -m {__package__}",
        description="Check a Tasks server against its revision's server checklist.",
    )
    parser.add_argument("url", help="the server's MCP endpoint")
    parser.add_argument(
        "--revision", choices=sorted(REVISIONS), help="default: detected"
    )
    parser.add_argument(
        "--tool",
        action="append",
        default=[],
        type=_tool_option,
        metavar="KIND=NAME[:JSON]",
        help=f"a tool of a kind ({', '.join(KINDS)}) and optional JSON arguments",
    )
    parser.add_argument("--auth", help="Authorization header value of the checker")
    parser.add_argument("--other-auth", help="Authorization of a second principal")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per task")
    parser.add_argument(
        "--allow-skips",
        action="store_true",
        help="exit 0 when no check failed, even if some did not run (default: exit 3)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE")
    options = parser.parse_args(argv)
    tools = dict(cast("list[tuple[str, tuple[str, dict[str, Any]]]]", options.tool))
    try:
        report = asyncio.run(
            run_checks(
                options.url,
                tools=tools,
                revision=options.revision,
                auth=options.auth,
                other_auth=options.other_auth,
                timeout=options.timeout,
            )
        )
    except ConfigurationError as error:
        for line in str(error).splitlines():
            print(f"{parser.prog}: error: {line}", file=sys.stderr)
        return 2
    if options.junit:
        with open(options.junit, "w", encoding="utf-8") as out:
            out.write(report.to_junit() + "\n")
    print(json.dumps(report.to_json(), indent=2) if options.json else report.to_text())
    return report.exit_code(options.allow_skips)
