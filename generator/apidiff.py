"""Compare the generated API of two schemas and judge every change, for clients and
servers.

Input: two ``ir.Package`` (old, new). Output: ``Diff``, a tuple of frozen ``Change``
records. Pure: no I/O, no printing (``report`` renders, ``cli`` prints).

What is compared is the generated API, not the schema text: classes by name, object
fields by wire name, enum values, ``Literal`` values, union members, Tasks methods and
notifications with their params and result types, and the revision's error codes. Prose
(descriptions, docstrings) and order (of ``$defs``, properties, enum values, union
members) never count.

The question each verdict answers: *code written against OLD (a client, or a server) is
regenerated against NEW and now talks to a peer that speaks NEW -- can it stop working*
(fail to type-check, fail validation, or mishandle data)? ``breaking`` if it can,
``compatible`` if it cannot.

Who is affected depends on which way a type flows. Every class gets a flow from the
methods of both packages: reached (through field and union annotations) from a request
message is ``client->server`` (the client *produces* it, the server *consumes* it);
reached from a result, a Tasks notification or ``CreateTaskResult`` (the answer to a
task-augmented ``tools/call``) is ``server->client``; reached from both, or from none of
these (capabilities, ``CallToolRequest``, ...), is ``both`` and gets the stricter
verdict on each side. Data changes are judged for the producer and the consumer:

=====================================  ==========  ==========
============================== change                                 producer
consumer    why =====================================  ==========  ==========
============================== type-added                             compatible
compatible  nothing uses it yet type-removed                           breaking
breaking    imports and references fail type-kind-changed (object/enum/union)  breaking
breaking    construction and access differ type-closed (unknown fields rejected)
breaking    compatible  extra fields a producer set fail type-opened
compatible  compatible field-added, optional                  compatible  compatible
may be omitted, may be ignored field-added, required constant         compatible
compatible  defaulted and always sent field-added, required                  breaking
compatible  every constructor must set it field-removed
breaking    breaking    keyword and attribute are gone field-renamed (wire and/or
attribute)  breaking    breaking    old name unknown on the wire field-inlined /
field-nested           breaking    breaking    the object's shape moved field-required
(was optional)          breaking    compatible  must now always be set field-optional
(was required)          compatible  breaking    readers must handle ``None``
field-retyped, wider (more accepted)   compatible  breaking    readers see values they
never saw field-retyped, narrower                breaking    compatible  some values can
no longer be sent field-retyped, otherwise               breaking    breaking
field-retyped, same fields, new class  breaking    compatible  builders must name the
new class const-changed                          breaking    breaking    the
discriminating value moved value-added (enum, ``Literal``)        compatible  breaking
exhaustive handling misses it value-removed                          breaking
compatible  it can no longer be sent root-retyped (union members ...)       as
field-retyped (wider / narrower / otherwise) =====================================
==========  ==========  ==============================

``client->server``: client = producer, server = consumer. ``server->client``: the
reverse. ``both``: each side gets the stricter of the two.

Methods are judged by role: the client calls requests and receives notifications, the
server handles requests and sends notifications.

=====================================  ==========  ==========
============================== change                                 client      server
why =====================================  ==========  ==========
============================== method-added (request)                 compatible
breaking    servers must handle it method-added (notification)            compatible
compatible  may be ignored / never sent method-removed (request)               breaking
compatible  the call is gone; handler idle method-removed (notification)
breaking    breaking    updates stop; sender code fails method-renamed
breaking    breaking    dispatch is by method name method-kind-changed
breaking    breaking    request <-> notification method-params-changed
as field-retyped, with the sender as producer: the
                                       client for a request, the server for a
                                       notification
method-result-changed                  as field-retyped, with server = producer, client
= consumer error-code-added                       compatible  compatible  JSON-RPC peers
handle any code error-code-removed / -changed          breaking    breaking
``ErrorCode.X`` references fail =====================================  ==========
==========  ==============================

``extension-changed``: the identifier of the Tasks extension a package declares changed
(or Tasks became, or stopped being, an extension); breaking for client and server, which
find each other's Tasks support by it.

Rename heuristics (documented because they are guesses). Within one object, a field
removed and a field added are one renamed field when (1) their attribute names are equal
(only the wire name changed, e.g. ``_meta`` -> ``meta``), or (2) their wire names are
the same word once case, separators and a trailing unit suffix (``Ms``, ``Millis``,
``Milliseconds``, ``Seconds``, ``Secs``, ``Sec``) are ignored (``ttl`` -> ``ttlMs``,
``pollInterval`` -> ``pollIntervalMs``) and their types agree apart from ``None``; a
pair is taken only when the match is unique both ways. A removed field whose type was an
object ``C`` while the fields of ``C`` (matched the same way: every required one, and at
least 60% and two of all) were added to the owner is reported once as ``field-inlined``
(``CreateTaskResult.task``), and the reverse as ``field-nested``. Two methods are one
renamed method when they are both requests or both notifications and either share the
message class (``TaskStatusNotification``) or one name is a path prefix of the other
(``notifications/tasks/status`` -> ``notifications/tasks``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from mcptasks_gen import ir
from mcptasks_gen import typeexpr as tx
from mcptasks_gen.naming import py_str

Verdict = Literal["breaking", "compatible"]
Flow = Literal["client->server", "server->client", "both", ""]
BREAKING: Verdict = "breaking"
COMPATIBLE: Verdict = "compatible"

# Report sections, in output order, and the change kinds each holds.
CATEGORIES: tuple[tuple[str, str], ...] = (
    ("extension", "Extension identifier"),
    ("methods", "Methods and notifications"),
    ("errors", "Error codes"),
    ("types", "Types"),
    ("fields", "Fields"),
    ("values", "Enum and literal values"),
)
_CATEGORY_OF = {
    "extension": "extension",
    "method": "methods",
    "error": "errors",
    "type": "types",
    "root": "types",
    "field": "fields",
    "const": "fields",
    "value": "values",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One difference between the two generated APIs, with a verdict per side."""

    kind: str  # e.g. "field-renamed"; the full list is in the module docstring
    subject: str  # what changed: "Task.ttl", "tasks/list", "TaskStatus", "ErrorCode.X"
    detail: str  # one human sentence
    client: Verdict
    server: Verdict
    old: str = ""  # the old name / annotation / value, "" when there is none
    new: str = ""
    flow: Flow = (
        ""  # which way the affected type travels ("" for methods and error codes)
    )

    @property
    def category(self) -> str:
        """The report section: methods, errors, types, fields or values."""
        return _CATEGORY_OF[self.kind.split("-", 1)[0]]

    @property
    def breaking(self) -> bool:
        """Whether either side breaks."""
        return BREAKING in (self.client, self.server)


@dataclass(frozen=True, slots=True, kw_only=True)
class Side:
    """What one side of the comparison was."""

    schema: str
    revision: str
    sha256: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Diff:
    """The result of a comparison: both sides and the changes, in report order."""

    old: Side
    new: Side
    changes: tuple[Change, ...]

    @property
    def breaking(self) -> bool:
        """Whether any change breaks either side."""
        return any(c.breaking for c in self.changes)

    def count(
        self, *, client: Verdict | None = None, server: Verdict | None = None
    ) -> int:
        """How many changes have the given verdicts."""
        return sum(
            1
            for c in self.changes
            if client in (None, c.client) and server in (None, c.server)
        )


# -- annotations -----------------------------------------------------------------------


Terms = frozenset[tx.Type]
"""A type as a set of canonical union members: no ``Annotated``, no forward quotes, one
``Literal`` per value, list and map arguments canonical themselves."""


def terms(annotation: tx.Type) -> Terms:
    """An annotation as a set of canonical union members (order and ``Annotated``
    dropped)."""
    if isinstance(annotation, tx.Forward):
        annotation = annotation.inner
    out: set[tx.Type] = set()
    for part in tx.members(annotation):
        if isinstance(part, tx.Annotated):
            out |= terms(part.inner)
        elif isinstance(part, tx.Literal):
            out |= {tx.Literal((v,)) for v in part.values}
        elif isinstance(part, tx.Generic) and part.base in ("list", "dict"):
            out.add(tx.Generic(part.base, tuple(_canonical(a) for a in part.args)))
        else:
            out.add(part)
    return frozenset(out)


def _sorted(members: frozenset[tx.Type]) -> list[tx.Type]:
    """Members in the order of their text (as the report shows them)."""
    return sorted(members, key=lambda t: t.render())


def _canonical(annotation: tx.Type) -> tx.Type:
    return tx.union(_sorted(terms(annotation)), dedupe=False)


def _text(members: frozenset[tx.Type] | list[tx.Type]) -> str:
    """Members as the report writes them: sorted, joined with ``|``."""
    return " | ".join(sorted(t.render() for t in members))


def _generic(t: tx.Type, base: str) -> bool:
    return isinstance(t, tx.Generic) and t.base == base


def _combine(relations: list[str]) -> str:
    kinds = set(relations) - {"same"}
    if not kinds:
        return "same"
    if len(kinds) == 1:
        return kinds.pop()
    return "different"


def relation(old: Terms, new: Terms) -> str:
    """How a set of union members changed: same, wider, narrower or different."""
    if old == new:
        return "same"
    if tx.ANY in new and tx.ANY not in old:
        return "wider"
    if tx.ANY in old and tx.ANY not in new:
        return "narrower"
    removed, added = set(old - new), set(new - old)
    inner: list[str] = []
    for head in ("list", "dict"):
        gone = [t for t in removed if _generic(t, head)]
        came = [t for t in added if _generic(t, head)]
        if len(gone) == 1 and len(came) == 1:
            removed.discard(gone[0])
            added.discard(came[0])
            a, b = gone[0], came[0]
            assert isinstance(a, tx.Generic) and isinstance(b, tx.Generic)
            inner.append(relation(terms(a.args[-1]), terms(b.args[-1])))
    own = (
        "same"
        if not removed and not added
        else "wider" if not removed else "narrower" if not added else "different"
    )
    return _combine([own, *inner])


def _literals(members: Terms) -> frozenset[str] | None:
    """The literal values (as Python source) when every member (``None`` aside) is a
    ``Literal``, else ``None``."""
    values = members - {tx.NONE}
    if values and all(isinstance(m, tx.Literal) for m in values):
        return frozenset(
            py_str(v) for m in values if isinstance(m, tx.Literal) for v in m.values
        )
    return None


def _value_terms(f: ir.Field) -> Terms:
    """The members of a field's type; the ``None`` an optional field always allows is
    dropped."""
    members = terms(f.annotation)
    return members - {tx.NONE} if not f.required else members


def show(annotation: tx.Type, models: dict[str, ir.Model]) -> tx.Type:
    """An annotation with long unions, lists and maps spelled by the name of their root
    class.

    normalize spells a union in place wherever it is used; named again, a field typed
    with a union compares equal across packages and the union's own changes are reported
    once, on its class. A root's type is found as a part of the annotation, or as a run
    of members of one of its unions (``A | B`` in ``A | B | None``); longer roots first.
    """
    out = annotation
    roots = sorted(
        (
            (len(text), m.name, m.annotation)
            for m in models.values()
            if isinstance(m, ir.RootModel) and len(text := m.annotation.render()) > 40
        ),
        key=lambda r: (-r[0], r[1]),
    )
    for _, name, root in roots:
        out = _replace(out, root, tx.Name(name))
    return out


def _replace(t: tx.Type, part: tx.Type, name: tx.Name) -> tx.Type:
    """``t`` with each occurrence of ``part`` as ``name``, outermost first."""
    if t == part:
        return name
    if isinstance(t, tx.Union):
        run = tx.members(part)
        items: list[tx.Type] = []
        i = 0
        while i < len(t.items):
            if len(run) > 1 and t.items[i : i + len(run)] == run:
                items.append(name)
                i += len(run)
            else:
                items.append(_replace(t.items[i], part, name))
                i += 1
        return tx.union(items, dedupe=False)
    if isinstance(t, tx.Generic):
        return tx.Generic(t.base, tuple(_replace(a, part, name) for a in t.args))
    if isinstance(t, tx.Annotated):
        return tx.Annotated(_replace(t.inner, part, name), t.metadata)
    if isinstance(t, tx.Forward):
        return tx.Forward(_replace(t.inner, part, name))
    return t


def _referenced(annotation: tx.Type, names: set[str]) -> set[str]:
    return tx.names(annotation) & names


# -- verdicts --------------------------------------------------------------------------

_RETYPE: dict[str, tuple[Verdict, Verdict]] = {
    "wider": (COMPATIBLE, BREAKING),
    "narrower": (BREAKING, COMPATIBLE),
    "different": (BREAKING, BREAKING),
}


def _sides(flow: Flow, producer: Verdict, consumer: Verdict) -> tuple[Verdict, Verdict]:
    """(client, server) verdicts from (producer, consumer) verdicts and the type's
    flow."""
    if flow == "client->server":
        return producer, consumer
    if flow == "server->client":
        return consumer, producer
    worst = BREAKING if BREAKING in (producer, consumer) else COMPATIBLE
    return worst, worst


# Sent by the side that runs a task, which for the generated package is the server (the
# answer to a task-augmented tools/call); no Tasks method names it as its result.
_SERVER_SENT = ("CreateTaskResult",)


def _flows(pkg: ir.Package) -> dict[str, set[str]]:
    """Which ways each class travels, from the package's methods through its
    annotations."""
    models: dict[str, ir.Model] = {m.name: m for m in pkg.models}
    names = set(models)

    def refs(annotation: tx.Type) -> set[str]:
        return _referenced(annotation, names) | _referenced(
            show(annotation, models), names
        )

    seeds: dict[str, set[str]] = {
        "client->server": set(),
        "server->client": {n for n in _SERVER_SENT if n in names},
    }
    for method in pkg.methods:
        if method.notification:
            seeds["server->client"] |= {method.message} & names
        else:
            seeds["client->server"] |= {method.message} & names
            seeds["server->client"] |= refs(method.result)
    found: dict[str, set[str]] = {}
    for flow, start in seeds.items():
        pending, seen = sorted(start), set()
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            found.setdefault(name, set()).add(flow)
            model = models[name]
            if isinstance(model, ir.ObjectModel):
                for f in model.fields:
                    pending.extend(refs(f.annotation) - seen)
            elif isinstance(model, ir.RootModel):
                pending.extend(refs(model.annotation) - seen)
    return found


# -- the comparison --------------------------------------------------------------------

_UNIT = re.compile(r"(?<=[a-z0-9])(Ms|Millis|Milliseconds|Seconds|Secs|Sec)$")


def _concept(wire: str) -> str:
    """A wire name reduced to its word: no unit suffix, no case, no separators."""
    return re.sub(r"[^a-z0-9]", "", _UNIT.sub("", wire).lower())


class _Comparer:
    """Holds both packages while their changes are collected."""

    def __init__(self, old: ir.Package, new: ir.Package) -> None:
        self.old, self.new = old, new
        self.old_models: dict[str, ir.Model] = {m.name: m for m in old.models}
        self.new_models: dict[str, ir.Model] = {m.name: m for m in new.models}
        old_flows, new_flows = _flows(old), _flows(new)
        self.flows = {
            n: old_flows.get(n, set()) | new_flows.get(n, set())
            for n in {*old_flows, *new_flows}
        }
        self.changes: list[Change] = []

    def flow(self, name: str) -> Flow:
        """The flow of a class in either package ("both" when unknown or mixed)."""
        ways = self.flows.get(name, set())
        return (
            "client->server"
            if ways == {"client->server"}
            else "server->client" if ways == {"server->client"} else "both"
        )

    def add(
        self,
        kind: str,
        subject: str,
        detail: str,
        producer: Verdict,
        consumer: Verdict,
        *,
        owner: str,
        old: str = "",
        new: str = "",
    ) -> None:
        """Record a data change judged for producer and consumer of ``owner``."""
        flow = self.flow(owner)
        client, server = _sides(flow, producer, consumer)
        self.changes.append(
            Change(
                kind=kind,
                subject=subject,
                detail=detail,
                client=client,
                server=server,
                old=old,
                new=new,
                flow=flow,
            )
        )

    def add_role(
        self,
        kind: str,
        subject: str,
        detail: str,
        client: Verdict,
        server: Verdict,
        *,
        old: str = "",
        new: str = "",
    ) -> None:
        """Record a change judged by role (methods, error codes)."""
        self.changes.append(
            Change(
                kind=kind,
                subject=subject,
                detail=detail,
                client=client,
                server=server,
                old=old,
                new=new,
            )
        )

    # -- types -------------------------------------------------------------------------

    def types(self) -> None:
        """Classes added, removed, or changed."""
        for name in sorted(self.new_models.keys() - self.old_models.keys()):
            model = self.new_models[name]
            self.add(
                "type-added",
                name,
                f"new {_kind_label(model)} {name}",
                COMPATIBLE,
                COMPATIBLE,
                owner=name,
                new=name,
            )
        for name in sorted(self.old_models.keys() - self.new_models.keys()):
            model = self.old_models[name]
            self.add(
                "type-removed",
                name,
                f"{_kind_label(model)} {name} removed",
                BREAKING,
                BREAKING,
                owner=name,
                old=name,
            )
        for name in sorted(self.old_models.keys() & self.new_models.keys()):
            before, after = self.old_models[name], self.new_models[name]
            if before.kind != after.kind:
                self.add(
                    "type-kind-changed",
                    name,
                    f"{name} changed from {_kind_label(before)} to"
                    f" {_kind_label(after)}{_shape(after, self)}",
                    BREAKING,
                    BREAKING,
                    owner=name,
                    old=before.kind,
                    new=after.kind,
                )
            elif isinstance(before, ir.ObjectModel) and isinstance(
                after, ir.ObjectModel
            ):
                self.objects(before, after)
            elif isinstance(before, ir.EnumModel) and isinstance(after, ir.EnumModel):
                self.enums(before, after)
            elif isinstance(before, ir.RootModel) and isinstance(after, ir.RootModel):
                self.roots(before, after)

    def enums(self, before: ir.EnumModel, after: ir.EnumModel) -> None:
        """Values added to or removed from a ``str`` enum."""
        old_values = [m.raw for m in before.members]
        new_values = [m.raw for m in after.members]
        for value in sorted(set(new_values) - set(old_values)):
            self.add(
                "value-added",
                before.name,
                f"{before.name} gained value {value!r}",
                COMPATIBLE,
                BREAKING,
                owner=before.name,
                new=value,
            )
        for value in sorted(set(old_values) - set(new_values)):
            self.add(
                "value-removed",
                before.name,
                f"{before.name} lost value {value!r}",
                BREAKING,
                COMPATIBLE,
                owner=before.name,
                old=value,
            )

    def roots(self, before: ir.RootModel, after: ir.RootModel) -> None:
        """A union, list, map or scalar class whose type changed."""
        self.retyped(
            before.name,
            before.name,
            terms(before.annotation),
            terms(after.annotation),
            _short(before.annotation),
            _short(after.annotation),
            kind="root-retyped",
            constant=False,
        )

    def same_shape(self, old: Terms, new: Terms) -> bool:
        """Whether two types are one object class each, with the same fields (a
        renamed class)."""
        if len(old) != 1 or len(new) != 1 or old == new:
            return False
        a, b = _model(next(iter(old)), self.old_models), _model(
            next(iter(new)), self.new_models
        )
        return (
            isinstance(a, ir.ObjectModel)
            and isinstance(b, ir.ObjectModel)
            and _signature(a) == _signature(b)
        )

    def retyped(
        self,
        subject: str,
        owner: str,
        old: Terms,
        new: Terms,
        old_text: str,
        new_text: str,
        *,
        kind: str,
        constant: bool,
    ) -> None:
        """Report a type change: literal values, a constant, or a
        wider/narrower/other type."""
        how = relation(old, new)
        if how == "same":
            return
        if self.same_shape(old, new):
            detail = (
                f"{subject} class {old_text} -> {new_text} (same fields on the wire;"
                " code that builds the old class must name the new one)"
            )
            self.add(
                kind,
                subject,
                detail,
                BREAKING,
                COMPATIBLE,
                owner=owner,
                old=old_text,
                new=new_text,
            )
            return
        old_values, new_values = _literals(old), _literals(new)
        nullable_same = (tx.NONE in old) == (tx.NONE in new)
        if old_values is not None and new_values is not None and nullable_same:
            if constant:
                self.add(
                    "const-changed",
                    subject,
                    f"{subject} constant {_values(old_values)} ->"
                    f" {_values(new_values)}",
                    BREAKING,
                    BREAKING,
                    owner=owner,
                    old=_values(old_values),
                    new=_values(new_values),
                )
                return
            for value in sorted(new_values - old_values):
                self.add(
                    "value-added",
                    subject,
                    f"{subject} accepts new value {value}",
                    COMPATIBLE,
                    BREAKING,
                    owner=owner,
                    new=value,
                )
            for value in sorted(old_values - new_values):
                self.add(
                    "value-removed",
                    subject,
                    f"{subject} no longer accepts value {value}",
                    BREAKING,
                    COMPATIBLE,
                    owner=owner,
                    old=value,
                )
            return
        shown_old, shown_new = old_text, new_text
        gained = new - old
        lost = old - new
        parts = []
        if (
            how in ("wider", "narrower")
            and len(gained) + len(lost) <= 4
            and not any(isinstance(t, tx.Generic) for t in (*gained, *lost))
        ):
            if gained:
                parts.append("now also " + _text(gained))
            if lost:
                parts.append("no longer " + _text(lost))
        note = (
            f" ({'; '.join(parts)})"
            if parts
            else f" ({how})" if how != "different" else ""
        )
        producer, consumer = _RETYPE[how]
        self.add(
            kind,
            subject,
            f"{subject} type {shown_old} -> {shown_new}{note}",
            producer,
            consumer,
            owner=owner,
            old=shown_old,
            new=shown_new,
        )

    # -- fields ------------------------------------------------------------------------

    def objects(self, before: ir.ObjectModel, after: ir.ObjectModel) -> None:
        """Field changes of an object class."""
        name = before.name
        if before.closed != after.closed:
            if after.closed:
                self.add(
                    "type-closed",
                    name,
                    f"{name} now rejects unknown fields",
                    BREAKING,
                    COMPATIBLE,
                    owner=name,
                )
            else:
                self.add(
                    "type-opened",
                    name,
                    f"{name} now keeps unknown fields",
                    COMPATIBLE,
                    COMPATIBLE,
                    owner=name,
                )
        old_fields = {f.wire_name: f for f in before.fields}
        new_fields = {f.wire_name: f for f in after.fields}
        pairs = [
            (old_fields[w], new_fields[w])
            for w in sorted(old_fields.keys() & new_fields.keys())
        ]
        removed = {
            w: old_fields[w] for w in sorted(old_fields.keys() - new_fields.keys())
        }
        added = {
            w: new_fields[w] for w in sorted(new_fields.keys() - old_fields.keys())
        }
        for a, b in _pair_renames(removed, added):
            del removed[a.wire_name], added[b.wire_name]
            self.renamed(name, a, b)
            pairs.append((a, b))
        self.moved(before, after, removed, added)
        for f in removed.values():
            req = "required" if f.required else "optional"
            self.add(
                "field-removed",
                f"{name}.{f.wire_name}",
                f"{req} field {f.wire_name} ({f.name}) removed from {name}",
                BREAKING,
                BREAKING,
                owner=name,
                old=f.wire_name,
            )
        for f in added.values():
            if f.constant:
                self.add(
                    "field-added",
                    f"{name}.{f.wire_name}",
                    f"constant field {f.wire_name} = {f.default} added to {name}"
                    " (defaulted, always sent)",
                    COMPATIBLE,
                    COMPATIBLE,
                    owner=name,
                    new=f.wire_name,
                )
            elif f.required:
                self.add(
                    "field-added",
                    f"{name}.{f.wire_name}",
                    f"required field {f.wire_name}:"
                    f" {show(f.annotation, self.new_models).render()} added to {name}",
                    BREAKING,
                    COMPATIBLE,
                    owner=name,
                    new=f.wire_name,
                )
            else:
                self.add(
                    "field-added",
                    f"{name}.{f.wire_name}",
                    f"optional field {f.wire_name}:"
                    f" {show(f.annotation, self.new_models).render()} added to {name}",
                    COMPATIBLE,
                    COMPATIBLE,
                    owner=name,
                    new=f.wire_name,
                )
        for a, b in sorted(pairs, key=lambda p: p[1].wire_name):
            self.field(name, a, b)

    def renamed(self, owner: str, a: ir.Field, b: ir.Field) -> None:
        """A field that kept its meaning under a new wire name."""
        why = (
            "same attribute"
            if a.name == b.name
            else (
                "same word, unit suffix changed"
                if a.wire_name.lower() != b.wire_name.lower()
                else "same word"
            )
        )
        attr = (
            f"attribute {a.name} unchanged"
            if a.name == b.name
            else f"attribute {a.name} -> {b.name}"
        )
        self.add(
            "field-renamed",
            f"{owner}.{a.wire_name}",
            f"{owner}.{a.wire_name} renamed to {b.wire_name} ({attr}; {why})",
            BREAKING,
            BREAKING,
            owner=owner,
            old=a.wire_name,
            new=b.wire_name,
        )

    def field(self, owner: str, a: ir.Field, b: ir.Field) -> None:
        """Type and presence changes of one field present on both sides."""
        subject = f"{owner}.{b.wire_name}"
        if a.required != b.required:
            if b.required and b.constant:
                self.add(
                    "field-required",
                    subject,
                    f"{subject} is now a required constant {b.default} (defaulted,"
                    " always sent)",
                    COMPATIBLE,
                    COMPATIBLE,
                    owner=owner,
                )
            elif b.required:
                self.add(
                    "field-required",
                    subject,
                    f"{subject} is now required",
                    BREAKING,
                    COMPATIBLE,
                    owner=owner,
                )
            else:
                self.add(
                    "field-optional",
                    subject,
                    f"{subject} is now optional (readers must handle None)",
                    COMPATIBLE,
                    BREAKING,
                    owner=owner,
                )
        before, after = show(_strip_none(a), self.old_models), show(
            _strip_none(b), self.new_models
        )
        old_terms, new_terms = terms(before), terms(after)
        if not a.required:
            old_terms -= {tx.NONE}
        if not b.required:
            new_terms -= {tx.NONE}
        self.retyped(
            subject,
            owner,
            old_terms,
            new_terms,
            before.render(),
            after.render(),
            kind="field-retyped",
            constant=a.constant or b.constant,
        )

    def moved(
        self,
        before: ir.ObjectModel,
        after: ir.ObjectModel,
        removed: dict[str, ir.Field],
        added: dict[str, ir.Field],
    ) -> None:
        """A nested object whose fields moved up into the owner (inlined), or the
        reverse."""
        for wire, f in list(removed.items()):
            inner = _single_object(f, self.old_models)
            if inner is None:
                continue
            matched = _match_all(inner.fields, added)
            if matched is None:
                continue
            for _, b in matched:
                del added[b.wire_name]
            del removed[wire]
            moved = ", ".join(
                (
                    b.wire_name
                    if a.wire_name == b.wire_name
                    else f"{b.wire_name} (was {a.wire_name})"
                )
                for a, b in matched
            )
            detail = (
                f"{before.name} no longer nests {wire} ({inner.name}): its fields are"
                f" now top-level fields of {before.name}: {moved}"
            )
            self.add(
                "field-inlined",
                f"{before.name}.{wire}",
                detail,
                BREAKING,
                BREAKING,
                owner=before.name,
                old=f"{wire}: {inner.name}",
                new=", ".join(b.wire_name for _, b in matched),
            )
        for wire, f in list(added.items()):
            inner = _single_object(f, self.new_models)
            if inner is None:
                continue
            matched = [(b, a) for a, b in _match_all(inner.fields, removed) or []]
            if not matched:
                continue
            for a, _ in matched:
                del removed[a.wire_name]
            del added[wire]
            moved = ", ".join(
                (
                    a.wire_name
                    if a.wire_name == b.wire_name
                    else f"{a.wire_name} (now {b.wire_name})"
                )
                for a, b in matched
            )
            detail = (
                f"{before.name} now nests its top-level fields {moved} in {wire}"
                f" ({inner.name})"
            )
            self.add(
                "field-nested",
                f"{before.name}.{wire}",
                detail,
                BREAKING,
                BREAKING,
                owner=before.name,
                old=", ".join(a.wire_name for a, _ in matched),
                new=f"{wire}: {inner.name}",
            )

    # -- methods and error codes -------------------------------------------------------

    def extension(self) -> None:
        """The extension identifier the packages declare: peers find each other's
        Tasks support by it, so any change breaks both sides."""
        a, b = self.old.extension_id, self.new.extension_id
        if a == b:
            return
        detail = (
            f"extension identifier {a} changed to {b}: each side declares and looks"
            " for the new one"
            if a and b
            else (
                f"Tasks now come as the extension {b}: each side declares and looks"
                " for it"
                if b
                else f"Tasks no longer come as the extension {a}"
            )
        )
        self.add_role(
            "extension-changed",
            b or a,
            detail,
            BREAKING,
            BREAKING,
            old=a,
            new=b,
        )

    def methods(self) -> None:
        """Methods and notifications added, removed, renamed, or with new
        params/results."""
        old = {m.name: m for m in self.old.methods}
        new = {m.name: m for m in self.new.methods}
        removed = {n: old[n] for n in sorted(old.keys() - new.keys())}
        added = {n: new[n] for n in sorted(new.keys() - old.keys())}
        pairs = [(old[n], new[n]) for n in sorted(old.keys() & new.keys())]
        for name, a in list(removed.items()):
            candidates = [b for b in added.values() if _same_method(a, b)]
            back = [
                x
                for x in removed.values()
                if candidates and _same_method(x, candidates[0])
            ]
            if len(candidates) == 1 and len(back) == 1:
                b = candidates[0]
                del removed[name], added[b.name]
                what = "notification" if a.notification else "request"
                classes = (
                    f"class {a.message}"
                    if a.message == b.message
                    else f"class {a.message} -> {b.message}"
                )
                self.add_role(
                    "method-renamed",
                    a.name,
                    f"{what} {a.name} renamed to {b.name} ({classes})",
                    BREAKING,
                    BREAKING,
                    old=a.name,
                    new=b.name,
                )
                pairs.append((a, b))
        for m in removed.values():
            if m.notification:
                self.add_role(
                    "method-removed",
                    m.name,
                    f"notification {m.name} ({m.message}) removed",
                    BREAKING,
                    BREAKING,
                    old=m.name,
                )
            else:
                self.add_role(
                    "method-removed",
                    m.name,
                    f"request {m.name} ({m.message} -> {m.result.render()}) removed",
                    BREAKING,
                    COMPATIBLE,
                    old=m.name,
                )
        for m in added.values():
            if m.notification:
                self.add_role(
                    "method-added",
                    m.name,
                    f"new notification {m.name} ({m.message})",
                    COMPATIBLE,
                    COMPATIBLE,
                    new=m.name,
                )
            else:
                self.add_role(
                    "method-added",
                    m.name,
                    f"new request {m.name} ({m.message} ->"
                    f" {m.result.render()}); servers must handle it",
                    COMPATIBLE,
                    BREAKING,
                    new=m.name,
                )
        for a, b in sorted(pairs, key=lambda p: p[1].name):
            if a.notification != b.notification:
                kinds = (
                    ("notification", "request")
                    if a.notification
                    else ("request", "notification")
                )
                self.add_role(
                    "method-kind-changed",
                    b.name,
                    f"{b.name} changed from {kinds[0]} to {kinds[1]}",
                    BREAKING,
                    BREAKING,
                )
            self.signature(
                "params", b.name, a.params, b.params, notification=b.notification
            )
            if not (a.notification or b.notification):
                self.signature("result", b.name, a.result, b.result)

    def signature(
        self,
        part: str,
        method: str,
        old: tx.Type,
        new: tx.Type,
        *,
        notification: bool = False,
    ) -> None:
        """A method's params or result type: same, same fields under a new class, or
        changed.

        Params are produced by the sender: the client for a request, the server for a
        notification (the same direction as the message's ``params`` field); results by
        the server.
        """
        old_shown, new_shown = show(old, self.old_models), show(new, self.new_models)
        old_terms, new_terms = terms(old_shown), terms(new_shown)
        shown_old, shown_new = old_shown.render(), new_shown.render()
        how = relation(old_terms, new_terms)
        if how == "same":
            return
        kind = f"method-{part}-changed"
        if self.same_shape(old_terms - {tx.NONE}, new_terms - {tx.NONE}) and (
            tx.NONE in old_terms
        ) == (tx.NONE in new_terms):
            producer, consumer = BREAKING, COMPATIBLE
            detail = (
                f"{method} {part} class {shown_old} -> {shown_new} (same fields on the"
                " wire; code that builds the old class must name the new one)"
            )
        else:
            producer, consumer = _RETYPE[how]
            detail = f"{method} {part} {shown_old} -> {shown_new}" + (
                f" ({how})" if how != "different" else ""
            )
        client_sends = part == "params" and not notification
        client, server = (producer, consumer) if client_sends else (consumer, producer)
        self.add_role(
            kind, method, detail, client, server, old=shown_old, new=shown_new
        )

    def error_codes(self) -> None:
        """Error codes added, removed, or renumbered."""
        old = {e.name: e for e in self.old.error_codes}
        new = {e.name: e for e in self.new.error_codes}
        for name in sorted(new.keys() - old.keys()):
            e = new[name]
            self.add_role(
                "error-code-added",
                f"ErrorCode.{name}",
                f"new error code {name} = {e.code}",
                COMPATIBLE,
                COMPATIBLE,
                new=str(e.code),
            )
        for name in sorted(old.keys() - new.keys()):
            e = old[name]
            self.add_role(
                "error-code-removed",
                f"ErrorCode.{name}",
                f"error code {name} = {e.code} removed",
                BREAKING,
                BREAKING,
                old=str(e.code),
            )
        for name in sorted(old.keys() & new.keys()):
            if old[name].code != new[name].code:
                self.add_role(
                    "error-code-changed",
                    f"ErrorCode.{name}",
                    f"error code {name} renumbered {old[name].code} ->"
                    f" {new[name].code}",
                    BREAKING,
                    BREAKING,
                    old=str(old[name].code),
                    new=str(new[name].code),
                )


def _kind_label(model: ir.Model) -> str:
    if isinstance(model, ir.ObjectModel):
        return "object"
    if isinstance(model, ir.EnumModel):
        return "enum"
    members = terms(model.annotation)
    if len(members) > 1:
        return "union"
    only = next(iter(members), None)
    return (
        "list"
        if only is not None and _generic(only, "list")
        else "map" if only is not None and _generic(only, "dict") else "type alias"
    )


def _shape(model: ir.Model, cmp: _Comparer) -> str:
    if isinstance(model, ir.RootModel):
        return f" {_short(model.annotation)}"
    return ""


def _short(annotation: tx.Type) -> str:
    """A union annotation without ``Annotated``/``Field`` noise, members sorted."""
    members = terms(annotation)
    return _text(members) if len(members) > 1 else annotation.render()


def _values(values: frozenset[str]) -> str:
    return " | ".join(sorted(values))


def _strip_none(f: ir.Field) -> tx.Type:
    """The annotation without the ``| None`` every optional field carries."""
    return tx.without_none(f.annotation) if not f.required else f.annotation


def _same_concept(a: ir.Field, b: ir.Field) -> bool:
    """Whether a removed and an added field are one renamed field (see the module
    docstring)."""
    if a.name == b.name:
        return True
    return _concept(a.wire_name) == _concept(b.wire_name) and _value_terms(a) - {
        tx.NONE
    } == _value_terms(b) - {tx.NONE}


def _pair_renames(
    removed: dict[str, ir.Field], added: dict[str, ir.Field]
) -> list[tuple[ir.Field, ir.Field]]:
    """Unique removed/added pairs that are the same field under a new name."""
    pairs = []
    for a in removed.values():
        candidates = [b for b in added.values() if _same_concept(a, b)]
        if (
            len(candidates) == 1
            and sum(1 for x in removed.values() if _same_concept(x, candidates[0])) == 1
        ):
            pairs.append((a, candidates[0]))
    return pairs


def _match_all(
    inner: tuple[ir.Field, ...], pool: dict[str, ir.Field]
) -> list[tuple[ir.Field, ir.Field]] | None:
    """Match an object's fields to fields in ``pool``: all required ones and most
    others."""
    matched = []
    for f in inner:
        hit = pool.get(f.wire_name)
        if hit is None:
            candidates = [b for b in pool.values() if _same_concept(f, b)]
            hit = candidates[0] if len(candidates) == 1 else None
        if hit is None and f.required:
            return None
        if hit is not None:
            matched.append((f, hit))
    if len(matched) < max(2, math.ceil(0.6 * len(inner))):
        return None
    return matched


def _model(term: tx.Type, models: dict[str, ir.Model]) -> ir.Model | None:
    """The class a canonical member names, if it is a plain name of one."""
    if isinstance(term, tx.Name) and not term.module:
        return models.get(term.name)
    return None


def _single_class(annotation: tx.Type, models: dict[str, ir.Model]) -> ir.Model | None:
    members = terms(annotation) - {tx.NONE}
    if len(members) == 1:
        return _model(next(iter(members)), models)
    return None


def _single_object(f: ir.Field, models: dict[str, ir.Model]) -> ir.ObjectModel | None:
    model = _single_class(f.annotation, models)
    return model if isinstance(model, ir.ObjectModel) else None


def _signature(model: ir.ObjectModel) -> frozenset[tuple[str, Terms, bool]]:
    return frozenset(
        (f.wire_name, terms(f.annotation), f.required) for f in model.fields
    )


def _same_method(a: ir.Method, b: ir.Method) -> bool:
    """Whether a removed and an added method are one renamed method (see the module
    docstring)."""
    if a.notification != b.notification:
        return False
    return (
        a.message == b.message
        or b.name.startswith(a.name + "/")
        or a.name.startswith(b.name + "/")
    )


_ORDER = {key: i for i, (key, _) in enumerate(CATEGORIES)}


def compare(old: ir.Package, new: ir.Package) -> Diff:
    """All changes from ``old`` to ``new``, in report order (section, subject, kind)."""
    cmp = _Comparer(old, new)
    cmp.extension()
    cmp.methods()
    cmp.error_codes()
    cmp.types()
    changes = sorted(
        cmp.changes,
        key=lambda c: (
            _ORDER[c.category],
            c.subject.lower(),
            c.subject,
            c.kind,
            c.old,
            c.new,
        ),
    )
    return Diff(
        old=Side(
            schema=old.schema_name, revision=old.revision, sha256=old.schema_sha256
        ),
        new=Side(
            schema=new.schema_name, revision=new.revision, sha256=new.schema_sha256
        ),
        changes=tuple(changes),
    )
