"""Time full package generation against datamodel-codegen producing models alone.

Usage: python benchmarks/generate.py [--runs N] [--shared PATH]

For each official schema (core 2025-11-25 and the Tasks extension), runs side by side, in
alternation, N cold processes of:
  * ``mcptasks-gen generate SCHEMA``: models + client + server + stores, formatted with
    black, written to disk; formatter cache disabled (MCPTASKS_GEN_CACHE=off);
  * ``datamodel-codegen`` on the same schema: pydantic v2 models only;
and prints the medians and the ratio (target: <= 1.0). Then times ``--check`` on an
up-to-date tree, with the formatter cache warm (the usual case) and disabled.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
SCHEMAS = {"2025-11-25": "mcp-2025-11-25.schema.json", "extension": "ext-tasks-draft.schema.json"}


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall-clock seconds of one run; the command must succeed."""
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared")
    args = parser.parse_args()
    gen, dmc = str(BIN / "mcptasks-gen"), str(BIN / "datamodel-codegen")
    if not Path(dmc).exists():
        sys.exit("datamodel-codegen is not installed (pip install -e '.[dev]')")
    cold = {**os.environ, "MCPTASKS_GEN_CACHE": "off"}
    print(f"{'schema':<12} {'tool':<44} {'median s':>9} {'min s':>7}")
    for label, name in SCHEMAS.items():
        schema = args.shared / "schemas" / name
        ours, theirs = [], []
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for i in range(args.runs):
                shutil.rmtree(work / "out", ignore_errors=True)
                ours.append(timed([gen, "generate", str(schema), "-o", "out", "--package", "pkg"], cold, work))
                theirs.append(
                    timed(
                        [dmc, "--input", str(schema), "--input-file-type", "jsonschema", "--output", str(work / f"models{i}.py"),
                         "--output-model-type", "pydantic_v2.BaseModel"],
                        os.environ.copy(), work,
                    )  # fmt: skip
                )
            checks_warm = [timed([gen, "generate", str(schema), "-o", "out", "--package", "pkg", "--check"], os.environ.copy(), work) for _ in range(args.runs)]
            checks_cold = [timed([gen, "generate", str(schema), "-o", "out", "--package", "pkg", "--check"], cold, work) for _ in range(args.runs)]
        rows = [
            ("mcptasks-gen generate (full package, cold)", ours),
            ("datamodel-codegen (models only)", theirs),
            ("mcptasks-gen generate --check (cache warm)", checks_warm),
            ("mcptasks-gen generate --check (no cache)", checks_cold),
        ]
        for tool, times in rows:
            print(f"{label:<12} {tool:<44} {statistics.median(times):>9.2f} {min(times):>7.2f}")
        print(f"{label:<12} {'ratio generate / datamodel-codegen (median)':<44} {statistics.median(ours) / statistics.median(theirs):>9.2f}")


if __name__ == "__main__":
    main()
