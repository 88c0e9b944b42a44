"""JSON-RPC 2.0 as MCP uses it: the one error class, the error codes, and the checks
and envelopes of messages.

Both sides of the package share this module: the client raises :class:`JsonRpcError`
for an error response, and the server raises it (or a tool does) to answer with one.
It depends on nothing else in the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias, cast

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LIMIT_EXCEEDED",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "JsonRpcError",
    "RequestId",
    "envelope_error",
    "error_response",
    "json_object",
    "result_response",
    "validation_problems",
    "valid_id",
]

RequestId: TypeAlias = str | int
"""A JSON-RPC request ID."""

# JSON-RPC 2.0 error codes: the same in every revision (its ``ErrorCode`` names them
# too).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

LIMIT_EXCEEDED = -32000
"""Default code for a refused limit (too many tasks, rate limit); see ``Limits``."""


class JsonRpcError(Exception):
    """A JSON-RPC error, with its ``code``, ``message`` and optional ``data``.

    The client raises it for an error response; the server's dispatcher raises it to
    answer with one, and a tool handler raises it to fail its task. ``str()`` gives
    ``"message (code N)"``.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        """Keep the three fields of the error object."""
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def from_wire(cls, error: dict[str, Any]) -> JsonRpcError:
        """Build the error from the ``error`` member of a JSON-RPC response."""
        code = error.get("code")
        message = error.get("message")
        return cls(
            code if isinstance(code, int) and not isinstance(code, bool) else -32603,
            message if isinstance(message, str) else "",
            error.get("data"),
        )

    def to_wire(self) -> dict[str, Any]:
        """Return the ``error`` member of a JSON-RPC response."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def validation_problems(
    error: ValidationError, root: str = ""
) -> list[tuple[str, str]]:
    """Each problem pydantic found, as the dotted path of the value (``root`` for
    the whole value) and its message, in pydantic's order: what an error message
    names."""
    return [
        (".".join(str(part) for part in problem["loc"]) or root, problem["msg"])
        for problem in error.errors(include_url=False)
    ]


def json_object(value: object) -> dict[str, Any] | None:
    """Return ``value`` when it is a JSON object (a ``dict``), else ``None``."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def valid_id(value: Any) -> bool:
    """Whether ``value`` may be a JSON-RPC request id in MCP: a string or an integer."""
    return isinstance(value, str) or (
        isinstance(value, int) and not isinstance(value, bool)
    )


def envelope_error(message: dict[str, Any]) -> JsonRpcError | None:
    """What makes ``message`` an invalid JSON-RPC 2.0 message for MCP, if anything.

    A request has a string ``method`` and a string or integer ``id``; a notification
    has a ``method`` and no ``id``; a response has an ``id`` and ``result`` or
    ``error``. The error is answered with ``id: null``.
    """
    if message.get("jsonrpc") != "2.0":
        return JsonRpcError(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    if "method" in message:
        if not isinstance(message["method"], str):
            return JsonRpcError(
                INVALID_REQUEST, "Invalid Request: method must be a string"
            )
        if "id" in message and not valid_id(message["id"]):
            return JsonRpcError(
                INVALID_REQUEST, "Invalid Request: id must be a string or an integer"
            )
        return None
    if "id" not in message or ("result" in message) == ("error" in message):
        return JsonRpcError(
            INVALID_REQUEST,
            "Invalid Request: a message needs a method (request, notification) or an"
            " id with a result or an error (response)",
        )
    if not valid_id(message["id"]) and not (
        message["id"] is None and "error" in message
    ):
        return JsonRpcError(
            INVALID_REQUEST, "Invalid Request: id must be a string or an integer"
        )
    return None


def result_response(request_id: RequestId | None, result: Any) -> dict[str, Any]:
    """The response that answers request ``request_id`` with ``result``."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: RequestId | None, error: JsonRpcError) -> dict[str, Any]:
    """The response that answers request ``request_id`` (None: one that could not be
    read) with ``error``."""
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}
