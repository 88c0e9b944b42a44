"""Status classifications and the initial status, per revision, from the target
configuration and the command line (the generated tables; the runtime's side is in
``tests/integration/test_spec_edits_statuses.py``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from mcptasks_gen.cli import main
from tests.spec_edits import STATUSES, add_status

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = {
    "2025": ROOT / "schema" / "2025-11-25" / "schema.json",
    "ext": ROOT / "schema" / "ext-2026-07-28" / "schema.json",
}


def _invoke(cwd: Path, *args: str) -> tuple[int, str, str]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args))
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def _schemas(folder: Path) -> None:
    """``2025.json`` unchanged and ``ext.json`` with ``rejected`` and ``queued``."""
    (folder / "2025.json").write_text(SCHEMAS["2025"].read_text())
    raw = add_status(json.loads(SCHEMAS["ext"].read_text()), "rejected", "cancelled")
    raw = add_status(raw, "queued", "working", listed=(*STATUSES, "rejected"))
    (folder / "ext.json").write_text(json.dumps(raw))


def test_a_target_gives_statuses_and_the_initial_status_per_revision(
    tmp_path: Path,
) -> None:
    _schemas(tmp_path)
    target = (
        "[[tool.mcptasks-gen.targets]]\n"
        'schema = ["2025.json", "ext.json"]\noutput = "g"\npackage = "dual"\n'
        'initial = { ext = "queued" }\n'
        "[tool.mcptasks-gen.targets.statuses]\n"
        'ext = { rejected = "terminal", queued = "active" }\n'
    )
    (tmp_path / "pyproject.toml").write_text("[tool.mcptasks-gen]\n" + target)
    code, _, err = _invoke(tmp_path, "generate")
    assert code == 0, err
    ext = (tmp_path / "g" / "dual" / "protocol_ext.py").read_text()
    core = (tmp_path / "g" / "dual" / "protocol_2025.py").read_text()
    assert 'INITIAL_STATUS: StatusName = "queued"' in ext
    assert 'INITIAL_STATUS: StatusName = "working"' in core
    assert '"rejected"' in ext and '"rejected"' not in core
    (tmp_path / "pyproject.toml").write_text(
        "[tool.mcptasks-gen]\n" + target.replace('{ ext = "queued" }', '"queued"')
    )
    code, _, err = _invoke(tmp_path, "generate")
    assert code == 2 and err.count("\n") == 1, err
    assert 'initial status "queued" is not a status of the 2025-11-25' in err
    assert "--initial-status REVISION:queued" in err


def test_the_command_line_qualifies_statuses_and_the_initial_status(
    tmp_path: Path,
) -> None:
    _schemas(tmp_path)
    args = ["generate", "2025.json", "ext.json", "-o", "g", "--package", "dual"]
    qualified = [
        "--status",
        "ext:rejected=terminal",
        "--status",
        "ext:queued=active",
        "--initial-status",
        "ext:queued",
    ]
    code, _, err = _invoke(tmp_path, *args, *qualified)
    assert code == 0, err
    header = (tmp_path / "g" / "dual" / "protocol_ext.py").read_text().splitlines()[1]
    assert "--status ext-2026-07-28:rejected=terminal" in header
    assert "--initial-status ext-2026-07-28:queued" in header
    refusals = {
        ("--status", "2025:rejected=terminal"): "no schema of 2025-11-25 lists",
        ("--status", "working=terminal"): "runtime's own (active)",
        ("--initial-status", "ext:input_required"): "is input: a new task starts",
        ("--initial-status", "ext:a", "--initial-status", "ext:b"): "two initial",
    }
    for extra, expected in refusals.items():
        code, _, err = _invoke(tmp_path, *args, *qualified[:4], *extra)
        assert code == 2 and expected in err and err.count("\n") == 1, (extra, err)
