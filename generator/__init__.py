"""mcptasks-gen: generate typed Python packages for MCP Tasks from the protocol's
JSON Schema."""

__version__ = "0.1.0"
