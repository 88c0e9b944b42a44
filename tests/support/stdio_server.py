"""A small JSON-RPC server on stdio (newline-delimited JSON), for the stdio transport
test.

Run as ``python tests/support/stdio_server.py``. It knows one task, ``t1``:
``tools/call`` sends a ``notifications/message`` first and answers with the task
``working``; ``tasks/get`` of ``t1`` answers ``working`` on the first poll, then
``completed`` with the tool's result (text ``stdio ok``); anything else is ``Task not
found``. Notifications from the client are ignored.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _send(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


def main() -> None:
    """Answer requests from stdin until it closes."""
    polls = 0
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method, params = message["method"], message["params"]
        task = {
            "taskId": "t1",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "x",
            "ttlMs": None,
            "pollIntervalMs": 0,
        }
        if method == "tools/call":
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": "hi"},
            }
            _send(note)
            result = {**task, "resultType": "task", "status": "working"}
        elif method == "tasks/get" and params["taskId"] == "t1":
            polls += 1
            done = {"content": [{"type": "text", "text": "stdio ok"}], "isError": False}
            result = {
                **task,
                "resultType": "complete",
                "status": "completed" if polls > 1 else "working",
                "lastUpdatedAt": str(polls),
                **({"result": done} if polls > 1 else {}),
            }
        else:
            error = {"code": -32602, "message": "Task not found"}
            _send({"jsonrpc": "2.0", "id": message["id"], "error": error})
            continue
        _send({"jsonrpc": "2.0", "id": message["id"], "result": result})


if __name__ == "__main__":
    main()
