"""Decide which Tasks revision a schema describes, from its content.

Input: ``Document`` and an optional forced revision id. Output: ``Revision``.
The file name plays no part: the ``method`` constants of the definitions decide.
"""

from __future__ import annotations

from typing import Any

from mcptasks_gen.errors import fail
from mcptasks_gen.load import Document, subschemas
from mcptasks_gen.revisions import (
    ALIASES,
    CORE_2025_11_25,
    EXTENSION,
    REVISIONS,
    Revision,
)


def method_constants(doc: Document) -> dict[str, str]:
    """Map each definition that declares a ``method`` constant to that method."""
    found: dict[str, str] = {}
    for name, node in doc.defs.items():
        for sub in subschemas(node):
            method: Any = (
                sub.get("properties", {}).get("method")
                if isinstance(sub.get("properties"), dict)
                else None
            )
            if isinstance(method, dict) and isinstance(method.get("const"), str):
                found[name] = method["const"]
    return found


def is_task_method(method: str) -> bool:
    """Whether a method belongs to the Tasks surface."""
    return method.startswith("tasks/") or method.startswith("notifications/tasks")


def resolve_revision_name(name: str) -> Revision | None:
    """Look up a revision by id or alias."""
    return REVISIONS.get(ALIASES.get(name, name))


def detect(doc: Document, forced: str | None = None) -> Revision:
    """The revision of ``doc``; ``forced`` (already validated) wins when given."""
    methods = set(method_constants(doc).values())
    task_methods = {m for m in methods if is_task_method(m)}
    if not task_methods:
        hint = (
            " (core 2026-07-28 moved Tasks into the io.modelcontextprotocol/tasks"
            " extension schema)"
            if "server/discover" in methods
            else ""
        )
        raise fail(
            f"no Tasks definitions found: no tasks/* methods in this schema{hint}",
            doc.loc,
        )
    if forced is not None:
        revision = REVISIONS[forced]
        others = [
            r
            for r in REVISIONS.values()
            if r is not revision and task_methods & r.marker_methods
        ]
        if others and not task_methods & revision.marker_methods:
            marker = sorted(task_methods & others[0].marker_methods)[0]
            raise fail(
                f"schema is revision {others[0].id} (it has {marker}), not"
                f" {revision.id}",
                doc.loc,
            )
    elif task_methods & EXTENSION.marker_methods:
        revision = EXTENSION
    elif task_methods & CORE_2025_11_25.marker_methods:
        revision = CORE_2025_11_25
    else:
        raise fail(
            f"cannot tell the Tasks revision from methods {sorted(task_methods)} (use"
            " --revision)",
            doc.loc,
        )
    return revision
