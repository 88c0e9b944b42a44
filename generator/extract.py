"""Cut the Tasks surface out of a schema: its roots and their transitive ``$ref``
closure.

Input: ``MethodScan`` (the schema and its method constants, as detection found them)
and ``Revision``. Output: ``Surface`` (definition name -> node, sorted). Roots: every
definition declaring a ``tasks/*`` or ``notifications/tasks*`` method and the result
type of each such request, every definition named after tasks, and the revision's extra
roots (capabilities, the task-augmentable requests and their results).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcptasks_gen.detect import MethodScan
from mcptasks_gen.errors import Location
from mcptasks_gen.load import Document, pointer_parts, resolve_pointer, subschemas
from mcptasks_gen.revisions import Revision


@dataclass(frozen=True, slots=True, kw_only=True)
class Surface:
    """The definitions a generated package is made of."""

    doc: Document
    revision: Revision
    defs: dict[str, Any]  # name -> schema node, sorted by name
    methods: dict[
        str, str
    ]  # definition name -> method it declares (Tasks methods only)
    refs: dict[str, frozenset[str]]  # definition name -> the definitions it refers to

    def loc(self, name: str) -> Location:
        """Where a definition is in the file."""
        return self.doc.loc.child(self.doc.defs_key, name)


def ref_name(ref: str) -> str | None:
    """``#/$defs/Task`` -> ``Task``; ``None`` for a reference to anything but a
    definition (read as ``load.pointer_parts`` reads it: percent-decoded, then ``~1``
    and ``~0``).
    """
    parts = pointer_parts(ref) if ref.startswith("#") else None
    if parts is not None and len(parts) == 2 and parts[0] in ("$defs", "definitions"):
        return parts[1]
    return None


def extract(found: MethodScan, revision: Revision) -> Surface:
    """The Tasks surface of the scanned schema."""
    doc = found.doc
    defs = doc.defs
    methods = found.task_methods
    roots = set(methods)
    roots |= {
        name.removesuffix("Request") + "Result"
        for name in methods
        if name.endswith("Request")
    }
    roots |= {name for name in defs if "Task" in name}
    roots |= set(revision.extra_roots)
    roots &= set(defs)
    refs: dict[str, frozenset[str]] = {}
    pending = sorted(roots)
    while pending:
        name = pending.pop()
        if name not in refs:
            refs[name] = referenced_defs(doc, defs[name])
            pending.extend(refs[name] - set(refs))
    return Surface(
        doc=doc,
        revision=revision,
        defs={n: defs[n] for n in sorted(refs)},
        methods=dict(sorted(methods.items())),
        refs=dict(sorted(refs.items())),
    )


def referenced_defs(doc: Document, node: Any) -> frozenset[str]:
    """The definitions a node refers to, looking through references into the middle
    of one."""
    found: set[str] = set()
    followed: set[str] = set()
    nodes = [node]
    while nodes:
        for sub in subschemas(nodes.pop()):
            ref = sub.get("$ref")
            if not isinstance(ref, str):
                continue
            target = ref_name(ref)
            if target is not None:
                found.add(target)
            elif ref not in followed:  # a reference into the middle of a definition
                followed.add(ref)
                nodes.append(resolve_pointer(doc, ref))
    return frozenset(found)
