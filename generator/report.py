"""Render an API diff as text, JSON or Markdown.

Input: ``apidiff.Diff``. Output: one string (nothing is printed here; ``cli`` prints).

Text (default) is for terminals: one line per change under a heading per section, with
the client and server verdicts in two columns; ANSI colour only when the caller asks for
it. Markdown is for a pull request description: a summary line and one table per section
(long sections folded in ``<details>``). JSON is for tools; its keys are stable:

``format``
    ``"mcptasks-gen-diff/1"``; the number changes only if a key changes meaning or goes
    away.
``old``, ``new``
    ``{"schema": label, "revision": revision id, "sha256": hex digest of the file}``.
``breaking``
    ``true`` when any change breaks a client or a server (the exit status is then 1).
``summary``
    ``{"changes", "breaking", "breaking_for_client", "breaking_for_server",
    "compatible"}``: counts; ``compatible`` counts changes that break neither side.
``changes``
    a list, in report order, of ``{"kind", "category", "subject", "client", "server",
    "flow", "old", "new", "detail"}``: ``kind`` as listed in ``apidiff``
    (``field-renamed``, ``method-removed``, ...), ``category`` one of ``extension``,
    ``methods``, ``errors``, ``types``, ``fields``, ``values``; ``client`` and
    ``server`` are ``"breaking"`` or ``"compatible"``; ``flow`` is ``client->server``,
    ``server->client``, ``both`` or ``""`` (methods, error codes); ``old``/``new`` hold
    the old and new name, type or value (``""`` when none); ``detail`` is one English
    sentence and may be reworded between versions.
"""

from __future__ import annotations

import json
from typing import Any

import click

from mcptasks_gen.apidiff import BREAKING, CATEGORIES, Change, Diff

FORMATS = ("text", "json", "markdown")
JSON_FORMAT = "mcptasks-gen-diff/1"
_FOLD_AFTER = 15  # markdown sections longer than this are folded


def render(diff: Diff, fmt: str, *, color: bool = False) -> str:
    """The report in ``fmt`` (text, json or markdown)."""
    if fmt == "json":
        return to_json(diff)
    if fmt == "markdown":
        return to_markdown(diff)
    return to_text(diff, color=color)


def summary(diff: Diff) -> dict[str, int]:
    """The counts shown at the end of every report."""
    return {
        "changes": len(diff.changes),
        "breaking": sum(1 for c in diff.changes if c.breaking),
        "breaking_for_client": diff.count(client=BREAKING),
        "breaking_for_server": diff.count(server=BREAKING),
        "compatible": sum(1 for c in diff.changes if not c.breaking),
    }


def summary_line(diff: Diff) -> str:
    """One sentence with the counts."""
    s = summary(diff)
    if not s["changes"]:
        return "no API changes"
    noun = "change" if s["changes"] == 1 else "changes"
    return (
        f"{s['changes']} {noun}: {s['breaking_for_client']} breaking for clients,"
        f" {s['breaking_for_server']} breaking for servers, {s['compatible']}"
        " compatible for both"
    )


def _sections(diff: Diff) -> list[tuple[str, list[Change]]]:
    return [
        (title, [c for c in diff.changes if c.category == key])
        for key, title in CATEGORIES
        if any(c.category == key for c in diff.changes)
    ]


def _side(diff: Diff, which: str) -> str:
    side = diff.old if which == "old" else diff.new
    return f"{side.revision} ({side.schema})"


# -- text ------------------------------------------------------------------------------


def to_text(diff: Diff, *, color: bool = False) -> str:
    """Plain text; ``color`` adds ANSI styles (red breaking, green compatible, bold
    headings)."""

    def style(text: str, **kw: Any) -> str:
        return click.style(text, **kw) if color else text

    def verdict(v: str) -> str:
        return style(
            f"{v:<10}", fg="red" if v == BREAKING else "green", bold=v == BREAKING
        )

    lines = [f"API diff {_side(diff, 'old')} -> {_side(diff, 'new')}", ""]
    for title, changes in _sections(diff):
        lines.append(style(f"{title} ({len(changes)})", bold=True))
        lines.append(f"  {'client':<10}  {'server':<10}  change")
        for c in changes:
            lines.append(f"  {verdict(c.client)}  {verdict(c.server)}  {c.detail}")
        lines.append("")
    lines.append(summary_line(diff))
    outcome = "breaking" if diff.breaking else "nothing breaking"
    lines.append(
        f"result: {style(outcome, fg='red' if diff.breaking else 'green', bold=True)}"
    )
    return "\n".join(lines) + "\n"


# -- json ------------------------------------------------------------------------------


def to_dict(diff: Diff) -> dict[str, Any]:
    """The JSON document as a dict (keys documented in the module docstring)."""
    return {
        "format": JSON_FORMAT,
        "old": {
            "schema": diff.old.schema,
            "revision": diff.old.revision,
            "sha256": diff.old.sha256,
        },
        "new": {
            "schema": diff.new.schema,
            "revision": diff.new.revision,
            "sha256": diff.new.sha256,
        },
        "breaking": diff.breaking,
        "summary": summary(diff),
        "changes": [
            {
                "kind": c.kind,
                "category": c.category,
                "subject": c.subject,
                "client": c.client,
                "server": c.server,
                "flow": c.flow,
                "old": c.old,
                "new": c.new,
                "detail": c.detail,
            }
            for c in diff.changes
        ],
    }


def to_json(diff: Diff) -> str:
    """Indented JSON with a trailing newline."""
    return json.dumps(to_dict(diff), indent=2, ensure_ascii=False) + "\n"


# -- markdown --------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


HIGHLIGHTS = frozenset(
    {
        "method-added",
        "method-removed",
        "method-renamed",
        "method-kind-changed",
        "field-renamed",
        "field-inlined",
        "field-nested",
        "type-kind-changed",
        "const-changed",
        "value-added",
        "value-removed",
    }
)


def _marks(c: Change) -> str:
    """``client: breaking, server: compatible`` in brackets, bold when breaking."""
    return f"[client: {_verdict_md(c.client)}, server: {_verdict_md(c.server)}]"


def _verdict_md(v: str) -> str:
    return "**breaking**" if v == BREAKING else "compatible"


def to_markdown(diff: Diff) -> str:
    """GitHub-flavoured Markdown for a pull request description."""
    lines = [
        f"## API changes: {diff.old.revision} → {diff.new.revision}",
        "",
        f"From `{diff.old.schema}` to `{diff.new.schema}`.",
        "",
        f"**{summary_line(diff)}.**" if diff.changes else "**No API changes.**",
    ]
    notable = [c for c in diff.changes if c.kind in HIGHLIGHTS]
    if notable:
        lines += [
            "",
            "Highlights (methods, renames, moved and reshaped types, values):",
            "",
        ]
        lines += [f"- {_marks(c)} {c.detail}" for c in notable]
    for title, changes in _sections(diff):
        lines += ["", f"### {title} ({len(changes)})", ""]
        fold = len(changes) > _FOLD_AFTER
        if fold:
            breaking = sum(1 for c in changes if c.breaking)
            lines += [
                (
                    f"<details><summary>{len(changes)} changes, {breaking}"
                    " breaking</summary>"
                ),
                "",
            ]
        lines += [
            "| Client | Server | Change | Subject | Detail |",
            "| --- | --- | --- | --- | --- |",
        ]
        for c in changes:
            lines.append(
                f"| {_verdict_md(c.client)} | {_verdict_md(c.server)} | {c.kind} |"
                f" `{_cell(c.subject)}` | {_cell(c.detail)} |"
            )
        if fold:
            lines += ["", "</details>"]
    lines += [
        "",
        (
            "<sub>Generated by `mcptasks-gen diff`. Verdicts: could code written"
            " against the old API, regenerated, stop working against a peer that speaks"
            " the new one?</sub>"
        ),
    ]
    return "\n".join(lines) + "\n"
