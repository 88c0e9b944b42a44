"""Reading the documentation for its tests: the Markdown files, their fenced code
blocks, and the MkDocs configuration."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

_FENCE = re.compile(
    r"^(?P<indent>"
    r" *)(?P<fence>```+)(?P<lang>[\w+-]*)[^\n]*\n(?P<code>.*?)^(?P=indent)(?P=fence)["
    r" \t]*$",
    re.M | re.S,
)


@dataclass(frozen=True)
class Block:
    """One fenced code block of a Markdown file."""

    path: Path
    line: int
    lang: str
    code: str
    before: str
    """The Markdown text between the previous block (or the start) and this one."""

    @property
    def where(self) -> str:
        """``file:line`` of the opening fence, relative to the repository."""
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def markdown_files() -> list[Path]:
    """README.md, CONTRIBUTING.md and every page under docs/."""
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]


def blocks(path: Path, text: str | None = None) -> list[Block]:
    """The fenced code blocks of ``path`` (or of ``text``, read from it), in order."""
    if text is None:
        text = path.read_text(encoding="utf-8")
    found: list[Block] = []
    previous_end = 0
    for match in _FENCE.finditer(text):
        indent = len(match["indent"])
        code = "\n".join(line[indent:] for line in match["code"].splitlines()) + "\n"
        found.append(
            Block(
                path=path,
                line=text.count("\n", 0, match.start()) + 1,
                lang=match["lang"],
                code=code,
                before=text[previous_end : match.start()],
            )
        )
        previous_end = match.end()
    return found


def all_blocks(lang: str | tuple[str, ...]) -> Iterator[Block]:
    """Every block of the given language(s) in every documentation file."""
    langs = (lang,) if isinstance(lang, str) else lang
    for path in markdown_files():
        for block in blocks(path):
            if block.lang in langs:
                yield block


def section(path: Path, heading: str) -> str:
    """The text of the section that starts with ``heading`` (a whole heading line),
    up to the next heading of the same or a higher level."""
    text = path.read_text(encoding="utf-8")
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(heading + "\n")
    rest = text[start + len(heading) + 1 :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest if end is None else rest[: end.start()]


def section_blocks(path: Path, heading: str) -> list[Block]:
    """The fenced code blocks inside one section of ``path`` (see :func:`section`), with
    their line numbers in the whole file."""
    text = path.read_text(encoding="utf-8")
    start = text.index(heading + "\n")
    first = text.count("\n", 0, start) + 1
    last = first + section(path, heading).count("\n")
    return [block for block in blocks(path, text) if first <= block.line <= last]


def load_mkdocs_config() -> dict[str, Any]:
    """``mkdocs.yml`` as data (MkDocs' own ``!relative`` tags read as None)."""
    import yaml

    class Loader(yaml.SafeLoader):
        """Safe loading, plus any ``!tag`` as None."""

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    config: dict[str, Any] = yaml.load(
        (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader
    )
    return config


def nav_pages() -> list[str]:
    """Every page the site's nav names, relative to docs/."""
    pages: list[str] = []

    def walk(entry: object) -> None:
        if isinstance(entry, str):
            pages.append(entry)
        elif isinstance(entry, dict):
            for value in entry.values():
                walk(value)
        elif isinstance(entry, list):
            for value in entry:
                walk(value)

    walk(load_mkdocs_config()["nav"])
    return pages
