"""The floors of the server benchmark: minimal ASGI apps under our uvicorn settings.

``fixed`` reads the request body and answers fixed bytes (a completed ``tasks/get``
response as our extension server sends it); ``json`` parses the body with
``json.loads`` and answers ``json.dumps`` of a response with the request's id and the
same fixed task-shaped result. Both run under uvicorn exactly as ``asgi.serve`` runs
ours (same ``uvicorn.run`` arguments, the pure-Python ``h11`` parser), so the CPU a
request costs them is what HTTP parsing, the ASGI exchange and (``json``) the JSON
work cost without any MCP logic. Used by ``benchmarks/server_throughput.py``::

    .venv/bin/python benchmarks/floor_server.py {fixed,json} --port 8000
"""

from __future__ import annotations

import argparse
import json
from typing import Any

RESULT: dict[str, Any] = {
    "taskId": "48e43c02cf46b19d36aa4ae7ad7702fa",
    "status": "completed",
    "statusMessage": "computing bench for 0.0s",
    "createdAt": "2026-11-30T23:51:06.682Z",
    "lastUpdatedAt": "2026-11-30T23:51:06.684Z",
    "ttlMs": 600000,
    "pollIntervalMs": 200,
    "result": {
        "content": [{"type": "text", "text": "computed bench after 0.0s"}],
        "isError": False,
        "resultType": "complete",
    },
    "resultType": "complete",
    "_meta": {
        "io.modelcontextprotocol/serverInfo": {
            "name": "mcptasks-example-ext",
            "version": "1.0.0",
        }
    },
}
"""What ours answers to ``tasks/get`` of a finished ``slow_compute`` task."""

FIXED = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "result": RESULT}, separators=(",", ":")
).encode()
HEADERS = [(b"content-type", b"application/json")]


def make_app(mode: str) -> Any:
    """The ASGI app: ``fixed`` bytes, or ``json`` (loads the body, dumps a result)."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        chunks = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        if mode == "fixed":
            payload = FIXED
        else:
            request = json.loads(b"".join(chunks))
            reply = {"jsonrpc": "2.0", "id": request.get("id"), "result": RESULT}
            payload = json.dumps(reply, separators=(",", ":")).encode()
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        await send({"type": "http.response.body", "body": payload})

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["fixed", "json"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    options = parser.parse_args()
    import uvicorn

    uvicorn.run(  # the arguments of asgi.serve
        make_app(options.mode),
        host=options.host,
        port=options.port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=5,
    )


if __name__ == "__main__":
    main()
