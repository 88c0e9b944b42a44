"""The ``Report``: every check's verdict against one server, as text, JSON or JUnit
XML, and the command line's exit status."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from xml.etree import ElementTree

from .results import CheckResult, Status

__all__ = ["Report"]


@dataclass(slots=True)
class Report:
    """Every check's verdict against one server and revision."""

    url: str
    revision: str
    results: list[CheckResult] = field(default_factory=lambda: [])

    @property
    def failed(self) -> list[CheckResult]:
        """The checks that failed."""
        return [r for r in self.results if r.status == "fail"]

    @property
    def ok(self) -> bool:
        """Whether no check failed."""
        return not self.failed

    @property
    def complete(self) -> bool:
        """Whether every check ran (none was skipped)."""
        return all(r.status != "skip" for r in self.results)

    def exit_code(self, allow_skips: bool = False) -> int:
        """The command line's exit status: 1 when a check failed, else 3 when one did
        not run (unless ``allow_skips``), else 0."""
        if not self.ok:
            return 1
        return 0 if self.complete or allow_skips else 3

    def incomplete(self) -> str:
        """How many checks did not run and which options would run them ("" when all
        ran)."""
        skipped = [r for r in self.results if r.status == "skip"]
        if not skipped:
            return ""
        needs: dict[str, int] = {}
        for r in skipped:
            needs[r.needs] = needs.get(r.needs, 0) + 1
        parts = [
            f"{n} need{'s' if n == 1 else ''} {option}"
            for option, n in needs.items()
            if option
        ]
        if "" in needs:
            parts.append(f"{needs['']} cannot run against this server")
        many = "checks" if len(skipped) > 1 else "check"
        return (
            f"{len(skipped)} {many} did not run ({'; '.join(parts)}): incomplete;"
            " --allow-skips accepts that"
        )

    def by_id(self) -> dict[str, CheckResult]:
        """The verdicts by check id."""
        return {r.id: r for r in self.results}

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` listing the failed checks (for test suites)."""
        if self.failed:
            raise AssertionError(
                "\n".join(f"{r.id}: {r.detail}" for r in self.failed)
                + "\n"
                + json.dumps([r.exchange for r in self.failed], indent=2)[:4000]
            )

    def counts(self) -> dict[str, int]:
        """How many checks passed, failed and were skipped."""
        return {s: sum(1 for r in self.results if r.status == s) for s in _STATUSES}

    def to_json(self) -> dict[str, Any]:
        """The whole report as one JSON object (``checks``: one item per check)."""
        return {
            "url": self.url,
            "revision": self.revision,
            "summary": self.counts(),
            "complete": self.complete,
            "checks": [r.to_json() for r in self.results],
        }

    def to_text(self) -> str:
        """One line per check and a summary line."""
        lines = [f"{self.url} ({self.revision})"]
        for r in self.results:
            lines.append(f"{r.status.upper():4} {r.id}: {r.detail or r.title}")
            if r.status == "fail" and r.exchange is not None:
                lines.append("     " + json.dumps(r.exchange)[:1000])
        c = self.counts()
        lines.append(f"{c['pass']} passed, {c['fail']} failed, {c['skip']} skipped")
        if not self.complete:
            lines.append(self.incomplete())
        return "\n".join(lines)

    def to_junit(self, suite: str = "mcp-tasks-check") -> str:
        """The report as JUnit XML (testsuites / testsuite / testcase)."""
        c = self.counts()
        total = f"{sum(r.seconds for r in self.results):.3f}"
        attrs = {
            "name": suite,
            "tests": str(len(self.results)),
            "failures": str(c["fail"]),
            "errors": "0",
            "skipped": str(c["skip"]),
            "time": total,
        }
        root = ElementTree.Element("testsuites", attrs)
        node = ElementTree.SubElement(
            root, "testsuite", {**attrs, "name": f"{suite} {self.revision}"}
        )
        for r in self.results:
            case = ElementTree.SubElement(
                node,
                "testcase",
                {
                    "classname": f"{suite}.{self.revision}",
                    "name": r.id,
                    "time": f"{r.seconds:.3f}",
                },
            )
            if r.status == "fail":
                failure = ElementTree.SubElement(
                    case, "failure", {"message": r.detail, "type": "fail"}
                )
                failure.text = json.dumps(r.exchange, indent=2) if r.exchange else ""
            elif r.status == "skip":
                ElementTree.SubElement(case, "skipped", {"message": r.detail})
        ElementTree.indent(root)
        return ElementTree.tostring(root, encoding="unicode", xml_declaration=True)


_STATUSES: tuple[Status, ...] = ("pass", "fail", "skip")
