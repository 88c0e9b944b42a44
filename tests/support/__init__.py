"""Test support: process helpers (:mod:`.procs`) and the real MCP peers
(:mod:`.peers`)."""
