"""Replies the benchmarks read, checked before they are used or counted.

A benchmark must neither crash on an answer it did not expect (a ``KeyError`` three
calls later) nor time requests that failed: every reply it reads goes through
:func:`result`, which returns the JSON-RPC ``result`` (or a value inside it) only when
the reply is one and carries what the caller needs, and raises :class:`BadReply` with
the reply otherwise. :func:`run` runs a benchmark's ``main`` and turns a ``BadReply``
into exit status 1 with the message on stderr.

A reply is a JSON-RPC response as JSON bytes or text, an SSE stream of them (the
response is the last ``data:`` message with an ``id``), or an already parsed ``dict``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
_SHOWN = 400  # characters of a reply quoted in an error


class BadReply(RuntimeError):
    """A reply that is an error, is not a JSON-RPC response, or lacks what is needed."""


def _quote(body: object) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def message(body: bytes | str | Mapping[str, Any], what: str) -> dict[str, Any]:
    """The JSON-RPC response in ``body`` (see the module docstring)."""
    if isinstance(body, Mapping):
        return dict(body)
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    stripped = text.lstrip()
    try:
        if stripped.startswith("{"):
            parsed = json.loads(stripped)
            if isinstance(parsed, dict):
                return parsed
        else:  # an SSE stream: the response is the last message with an id
            for line in reversed(text.splitlines()):
                if line.startswith("data:"):
                    parsed = json.loads(line[5:])
                    if isinstance(parsed, dict) and "id" in parsed:
                        return parsed
    except json.JSONDecodeError:
        pass
    raise BadReply(f"{what}: not a JSON-RPC response: {_quote(body)}")


def result(
    body: bytes | str | Mapping[str, Any],
    what: str,
    *path: str,
    expect: Mapping[str, Any] | None = None,
) -> Any:
    """The ``result`` of the response in ``body``, or the value at ``path`` (keys) in
    it.

    Raises :class:`BadReply` naming ``what`` (the request, and the server) when the
    reply is an error, has no ``result``, lacks a key of ``path``, or when a key of
    ``expect`` does not have the given value in the result.
    """
    response = message(body, what)
    if "error" in response:
        raise BadReply(f"{what}: error reply: {_quote(json.dumps(response['error']))}")
    if "result" not in response:
        raise BadReply(f"{what}: no result in the reply: {_quote(body)}")
    value: Any = response["result"]
    for key, wanted in (expect or {}).items():
        if not isinstance(value, dict) or value.get(key) != wanted:
            raise BadReply(
                f"{what}: expected {key}={wanted!r} in the result: {_quote(body)}"
            )
    for index, key in enumerate(path):
        if not isinstance(value, dict) or key not in value:
            where = ".".join(("result", *path[: index + 1]))
            raise BadReply(f"{what}: no {where} in the reply: {_quote(body)}")
        value = value[key]
    return value


def run(main: Callable[[], T]) -> T:
    """``main()``; a :class:`BadReply` ends the process with status 1 and its
    message."""
    try:
        return main()
    except BadReply as exc:
        sys.exit(f"{Path(sys.argv[0]).name}: {exc}")
