"""README.md keeps showing the set-up commands that CI really runs, stays short, and
links to files that exist (the rest of the documentation is tested by
``test_docs.py`` and the quickstart by ``test_quickstart.py``)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.docs import nav_pages

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_README_BYTES = 15_000


def _blocks_after(heading: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```\n(.*?)\n```", section, re.S)


def test_ci_runs_the_readme_test_command() -> None:
    """``.ci/run`` ends with exactly the test command shown in the README."""
    test_command = _blocks_after("## Set up on a fresh machine")[1].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == test_command


def test_main_job_command_uses_the_default_schema() -> None:
    """The first command installs the project and runs generation with no schema
    argument."""
    main_job = _blocks_after("## Set up on a fresh machine")[0].strip()
    assert main_job.startswith("python3 -m venv .venv") and main_job.endswith(
        "mcptasks-gen generate -o out/"
    )


def test_readme_is_short() -> None:
    """A new user reads the README first: what it is, set-up, quickstart, links; the
    rest lives in docs/."""
    size = len(README.read_bytes())
    assert (
        size < MAX_README_BYTES
    ), f"README.md is {size} bytes; move detail to a page under docs/"


def test_readme_links_lead_to_existing_files() -> None:
    """Every relative link of the README names a file of the repository (the docs
    pages)."""
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert any(link.startswith("docs/") for link in local)
    missing = [link for link in local if not (ROOT / link).is_file()]
    assert not missing, f"README links to missing files: {missing}"


def test_readme_links_every_docs_page_of_the_nav() -> None:
    """The README's documentation list names every page of the site's nav (the home page
    is the README's own job; the API reference is linked by its index)."""
    text = README.read_text(encoding="utf-8")
    unlinked = [
        page
        for page in nav_pages()
        if not page.startswith("reference/")
        and page != "index.md"
        and f"(docs/{page})" not in text
    ]
    assert not unlinked, f"README's documentation list lacks {unlinked}"
    assert "(docs/reference/index.md)" in text
