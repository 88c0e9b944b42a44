"""Seams into the official Python SDKs: keep the SDK's ``Client`` or server, add durable
tasks.

* :func:`client_extension` (the Tasks extension, ``mcp`` 2.x; ``sdk.client_seam``): a
  ``ClientExtension`` for ``mcp.client.Client(url, extensions=[...])``. A plain ``await
  client.call_tool(...)`` that the server answers with a task then runs this package's
  polling loop: input requests go to the host's elicitation, sampling and roots
  callbacks (or to handlers given here) and are delivered with ``tasks/update``; the
  task ID is stored until the task ends; cancelling the call sends ``tasks/cancel``;
  the ordinary ``CallToolResult`` is returned. Handles of running tasks are in
  ``extension.handles`` (and passed to ``on_task``); ``extension.resume(client,
  task_id)`` continues a stored task.
* :func:`server_extension` (the Tasks extension, ``mcp`` 2.x; ``sdk.server_seam``): an
  ``Extension`` for ``MCPServer(extensions=[...])``. The app keeps its ``@mcp.tool()``
  functions and marks those that may or must run as tasks with
  ``@extension.task_tool(...)``; ``tools/call`` of a marked tool is answered by the
  generated ``TasksServer`` (a task when the request declares the extension), which
  also serves the ``tasks/*`` methods and keeps the tasks in its store.
* :func:`fastmcp_tasks` (2025-11-25, ``mcp`` 1.x; ``sdk.fastmcp_seam``): the same for a
  ``FastMCP`` app (``mcp.server.fastmcp``); its tools stay where they are.
* :func:`mount` (``sdk.lowlevel``): a ``TasksServer`` inside an SDK's low-level
  ``Server`` (``TasksServer.mount``).

Inside a tool running as a task, :func:`task_context` returns the ``ToolContext``
(``report``, ``elicit``, ``request_input``, ``cancelled``); it is None otherwise. What
the seams share is in ``sdk.shared``.

The SDKs are imported when one of these functions is called, never at import time: the
package itself depends on pydantic only. The seams use the server and the client; the
server does not import them.

Typing: what the seams use of the SDK's objects is described by small protocols
(``FastMCPApp``, ``SdkClient``, ``SdkSession``, ``SdkToolResult``) that the SDK's
classes satisfy, so the package type-checks with pydantic alone, with ``mcp`` 1.x or
2.x. ``fastmcp_tasks(app, ...)`` keeps the app's type (``seam.app``);
``server_extension()`` and ``client_extension()`` return ``TasksServerExtension`` and
``TasksClientExtension``, whose SDK base class type checkers see as ``Any`` (so
``MCPServer(extensions=[...])`` accepts them) and whose ``task_tool`` decorator keeps
the decorated function's type.
"""

from __future__ import annotations

from ..client_core import ClientCore as ClientCore
from ..client_core import InputContext as InputContext
from ..client_core import TaskFailed as TaskFailed
from ..client_core import TaskHandle as TaskHandle
from ..client_core import answer_to_wire as answer_to_wire
from ..jsonrpc import JsonRpcError as JsonRpcError
from ..protocol import REVISIONS as REVISIONS
from ..revision import RevisionTables as RevisionTables
from ..server_core import RequestInfo as RequestInfo
from ..server_core import Session as Session
from ..server_core import TaskServerCore as TaskServerCore
from ..server_core import Tool as Tool
from ..server_core import ToolContext as ToolContext
from ..server_core import ToolError as ToolError
from ..server_core import http_headers as http_headers
from ..task_ids import SqliteTaskIdStore as SqliteTaskIdStore
from ..task_ids import TaskIdStore as TaskIdStore
from .client_seam import ClientSeam as ClientSeam
from .client_seam import SdkClient as SdkClient
from .client_seam import SdkSession as SdkSession
from .client_seam import SdkToolResult as SdkToolResult
from .client_seam import SdkTransport as SdkTransport
from .client_seam import TasksClientExtension as TasksClientExtension
from .client_seam import client_extension as client_extension
from .fastmcp_seam import FastMCPApp as FastMCPApp
from .fastmcp_seam import FastMCPSeam as FastMCPSeam
from .fastmcp_seam import fastmcp_tasks as fastmcp_tasks
from .lowlevel import mount as mount
from .server_seam import ServerSeam as ServerSeam
from .server_seam import TasksServerExtension as TasksServerExtension
from .server_seam import server_extension as server_extension
from .shared import F as F
from .shared import task_context as task_context

WireError = JsonRpcError
"""The name the seams gave ``JsonRpcError`` (there is one JSON-RPC error class)."""

__all__ = [
    "ClientSeam",
    "FastMCPApp",
    "FastMCPSeam",
    "SdkClient",
    "SdkSession",
    "SdkToolResult",
    "SdkTransport",
    "ServerSeam",
    "TasksClientExtension",
    "TasksServerExtension",
    "client_extension",
    "fastmcp_tasks",
    "mount",
    "server_extension",
    "task_context",
]
