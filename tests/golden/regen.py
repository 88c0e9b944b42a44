"""Refresh the error goldens: ``python -m tests.golden.regen``.

Each ``tests/golden/errors/<case>.json`` is run through ``mcptasks-gen generate`` and
its stderr is stored in ``<case>.stderr``. (The generated packages under ``generated/``
are refreshed with ``mcptasks-gen generate`` from the repository root.)
"""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner

from mcptasks_gen.cli import main

ERRORS = Path(__file__).resolve().parent / "errors"


def run_case(case: Path, out: Path) -> tuple[int, str]:
    """Run the CLI on one error case from the repository root; exit code and stderr."""
    root = ERRORS.parents[2]
    result = CliRunner().invoke(
        main, ["generate", str(case.relative_to(root)), "-o", str(out)]
    )
    return result.exit_code, result.stderr


def main_() -> None:
    """Rewrite every ``.stderr`` file from the current generator."""
    import os
    import tempfile

    os.chdir(ERRORS.parents[2])
    for case in sorted(ERRORS.glob("*.json")):
        with tempfile.TemporaryDirectory() as tmp:
            code, stderr = run_case(case, Path(tmp))
        if code != 2:
            sys.exit(f"{case.name}: expected exit 2, got {code}")
        case.with_suffix(".stderr").write_text(stderr, encoding="utf-8")
        print(f"{case.with_suffix('.stderr').name}: {stderr.strip()}")


if __name__ == "__main__":
    main_()
