"""The public names that the clients of every revision share (errors, handles, input
and callback types), as one list: the package's ``client`` module and the old
``client_core`` module re-export them."""

from __future__ import annotations

from ..protocol import TaskSnapshot as TaskSnapshot
from .codec import status_name as status_name
from .errors import CapabilityNotDeclared as CapabilityNotDeclared
from .errors import InvalidResponse as InvalidResponse
from .errors import MethodNotFound as MethodNotFound
from .errors import TaskAugmentationRequired as TaskAugmentationRequired
from .errors import TaskCancelled as TaskCancelled
from .errors import TaskEnded as TaskEnded
from .errors import TaskExpired as TaskExpired
from .errors import TaskFailed as TaskFailed
from .errors import TaskNotFound as TaskNotFound
from .errors import TaskRequired as TaskRequired
from .errors import TasksClientError as TasksClientError
from .errors import WaitTimeout as WaitTimeout
from .handle import StatusCallback as StatusCallback
from .handle import TaskHandle as TaskHandle
from .inputs import InputContext as InputContext
from .inputs import InputHandler as InputHandler
from .inputs import InputNotHandled as InputNotHandled
from .inputs import TypedInputContext as TypedInputContext
from .notifications import NotificationCallback as NotificationCallback
from .notifications import ProgressCallback as ProgressCallback
from .tool_result import InvalidStructuredContent as InvalidStructuredContent
from .tool_result import Structured as Structured
from .tool_result import ToolResult as ToolResult

__all__: list[str] = [
    "CapabilityNotDeclared",
    "InputContext",
    "InputHandler",
    "InputNotHandled",
    "NotificationCallback",
    "TypedInputContext",
    "InvalidResponse",
    "InvalidStructuredContent",
    "MethodNotFound",
    "ProgressCallback",
    "StatusCallback",
    "TaskCancelled",
    "TaskEnded",
    "TaskExpired",
    "TaskFailed",
    "TaskHandle",
    "TaskNotFound",
    "TaskAugmentationRequired",
    "TaskRequired",
    "TaskSnapshot",
    "TasksClientError",
    "ToolResult",
    "Structured",
    "WaitTimeout",
    "status_name",
]
