"""The wheel carries the templates and the embedded schemas and works from any
folder."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_installs_and_generates_from_an_unrelated_folder(tmp_path: Path) -> None:
    """Build the wheel offline, install it alone into a fresh venv, generate both
    revisions."""
    dist = tmp_path / "dist"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-v",
            "-w",
            str(dist),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # every folder of data files is a declared package: no setuptools warning at install
    # time
    assert "absent from the `packages` configuration" not in built.stdout + built.stderr
    wheel = next(dist.glob("mcptasks_gen-*.whl"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [
            str(python),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies come from this test's environment (the suite runs offline); the
    # generator itself comes only from the wheel.
    (Path(site) / "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = subprocess.run(
        [str(python), "-c", "import mcptasks_gen; print(mcptasks_gen.__file__)"],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(site), where.stdout
    exe = env_dir / "bin" / "mcptasks-gen"
    for revision in ("ext-2026-07-28", "2025-11-25"):
        proc = subprocess.run(
            [
                str(exe),
                "generate",
                "--revision",
                revision,
                "--package",
                f"p_{revision[:3]}",
                "-o",
                "out",
            ],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        init = (work / "out" / f"p_{revision[:3]}" / "__init__.py").read_text()
        assert f'SPEC_REVISION = "{revision}"' in init
    names = subprocess.run(
        [str(python), "-m", "zipfile", "-l", str(wheel)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "mcptasks_gen/templates/package/models.py.jinja" in names
    assert (
        "mcptasks_gen/templates/runtime/server_core.py" in names
        and "mcptasks_gen/templates/runtime/py.typed" in names
    )
    assert (
        "mcptasks_gen/schema/2025-11-25/schema.json" in names
        and "mcptasks_gen/schema/ext-2026-07-28/schema.json" in names
    )
