"""Schema-edit cases, one module a topic."""
