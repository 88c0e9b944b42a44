"""Decide which Tasks revision a schema describes, from its content.

Input: ``MethodScan`` (the schema's method constants, scanned once; extraction reads the
same scan) and an optional forced revision id. Output: ``Revision``. The file name
plays no part: the ``method`` constants of the definitions decide, against each
registered revision's ``marker_methods`` (see ``revisions.REGISTRY``), the newest
revision first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcptasks_gen.errors import fail
from mcptasks_gen.load import Document, subschemas
from mcptasks_gen.revisions import REGISTRY, Revision, newest_first, resolve


@dataclass(frozen=True, slots=True)
class MethodScan:
    """The ``method`` constants of a schema's definitions, found once for detection and
    extraction."""

    doc: Document
    methods: dict[str, str]
    """Definition name -> the method it declares (each definition that declares one)."""

    @property
    def task_methods(self) -> dict[str, str]:
        """The definitions that declare a Tasks method, with their methods."""
        return {name: m for name, m in self.methods.items() if is_task_method(m)}


def scan(doc: Document) -> MethodScan:
    """The method constants of ``doc``'s definitions."""
    return MethodScan(doc, method_constants(doc))


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
    return resolve(name)


def detect(found: MethodScan, forced: str | None = None) -> Revision:
    """The revision of the scanned schema; ``forced`` (already validated) wins when
    given."""
    doc = found.doc
    methods = set(found.methods.values())
    task_methods = set(found.task_methods.values())
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
    marked = [r for r in newest_first() if task_methods & r.marker_methods]
    if forced is not None:
        revision = REGISTRY[forced]
        others = [r for r in marked if r is not revision]
        if others and revision not in marked:
            marker = sorted(task_methods & others[0].marker_methods)[0]
            raise fail(
                f"schema is revision {others[0].id} (it has {marker}), not"
                f" {revision.id}",
                doc.loc,
            )
    elif marked:
        revision = marked[0]
    else:
        raise fail(
            f"cannot tell the Tasks revision from methods {sorted(task_methods)} (use"
            " --revision)",
            doc.loc,
        )
    return revision
