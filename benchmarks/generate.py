"""Time full package generation against datamodel-codegen producing models alone.

Usage: python benchmarks/generate.py [--runs N] [--shared PATH]

For each official schema (core 2025-11-25 and the Tasks extension), runs side by side,
in alternation, N cold processes of:
  * ``mcptasks-gen generate SCHEMA``: models, protocol tables, client, server and the
    runtime, written to disk; formatter cache disabled (MCPTASKS_GEN_CACHE=off);
  * ``datamodel-codegen`` on the same schema: pydantic v2 models only;
each measured twice: free to use every CPU, and pinned to one CPU (the affinity mask of
the child, as ``taskset -c 0`` would set it). For every run it records the wall-clock
time and the CPU time (user + system) of the whole process tree, and prints the medians
and the ratios (targets: CPU ratio <= 0.5, wall ratio <= 1.0). Then times ``--check`` on
an up-to-date tree, with the formatter cache warm (the usual case) and disabled.

Both tools run as installed: with their byte code. Before the timed runs each tool runs
once per schema outside the medians (printed as its first run), with
``PYTHONDONTWRITEBYTECODE`` taken out of the children's environment: in an editable
checkout that writes the generator's ``__pycache__`` (pip byte-compiles both tools'
modules when it installs a wheel) and keeps its compiled templates (see
``render.CompiledTemplates``). The generator's cache folder is a temporary one
(``XDG_CACHE_HOME``), so the first run compiles every template.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

BIN = Path(sys.executable).parent
SCHEMAS = {
    "2025-11-25": "mcp-2025-11-25.schema.json",
    "extension": "ext-tasks-draft.schema.json",
}


def _pin_to_first_cpu() -> None:
    """Child set-up for the one-CPU runs: run on the lowest CPU this process may use."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def timed(
    cmd: list[str], env: dict[str, str], cwd: Path, pin: bool = False
) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + system, children included) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    setup: Callable[[], None] | None = _pin_to_first_cpu if pin else None
    subprocess.run(
        cmd,
        env=env,
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=setup,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared"
    )
    args = parser.parse_args()
    gen, dmc = str(BIN / "mcptasks-gen"), str(BIN / "datamodel-codegen")
    if not Path(dmc).exists():
        sys.exit("datamodel-codegen is not installed (pip install -e '.[dev]')")
    print(f"{'schema':<11} {'tool':<46} {'CPUs':>4} {'wall s':>7} {'CPU s':>7}")
    for label, name in SCHEMAS.items():
        schema = args.shared / "schemas" / name
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            base = {
                k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"
            }
            base["XDG_CACHE_HOME"] = str(work / "cache")
            base.pop("MCPTASKS_GEN_CACHE", None)
            cold = {**base, "MCPTASKS_GEN_CACHE": "off"}
            results: dict[tuple[str, bool], list[tuple[float, float]]] = {}
            ours = [gen, "generate", str(schema), "-o", "out", "--package", "pkg"]

            def theirs(i: int) -> list[str]:
                return [
                    dmc,
                    "--input",
                    str(schema),
                    "--input-file-type",
                    "jsonschema",
                    "--output",
                    str(work / f"models{i}.py"),
                    "--output-model-type",
                    "pydantic_v2.BaseModel",
                ]

            results[("first", True)] = [timed(ours, cold, work, True)]
            results[("theirs-first", True)] = [timed(theirs(-1), base, work, True)]
            for i in range(args.runs):
                for pin in (False, True):
                    shutil.rmtree(work / "out", ignore_errors=True)
                    results.setdefault(("ours", pin), []).append(
                        timed(ours, cold, work, pin)
                    )
                    results.setdefault(("theirs", pin), []).append(
                        timed(theirs(i), base, work, pin)
                    )
            check = [*ours, "--check"]
            timed(ours, base, work)  # fills the formatter cache
            results[("warm", False)] = [
                timed(check, base, work) for _ in range(args.runs)
            ]
            results[("check-cold", False)] = [
                timed(check, cold, work) for _ in range(args.runs)
            ]
        names = {
            "first": "mcptasks-gen generate, first run (no medians)",
            "theirs-first": "datamodel-codegen, first run (no medians)",
            "ours": "mcptasks-gen generate (full package, cold)",
            "theirs": "datamodel-codegen (models only)",
            "warm": "mcptasks-gen generate --check (cache warm)",
            "check-cold": "mcptasks-gen generate --check (no cache)",
        }
        medians = {
            key: (
                statistics.median(w for w, _ in runs),
                statistics.median(c for _, c in runs),
            )
            for key, runs in results.items()
        }
        for (tool, pin), (wall, cpu) in medians.items():
            print(
                f"{label:<11} {names[tool]:<46} {'1' if pin else 'all':>4} {wall:>7.2f}"
                f" {cpu:>7.2f}"
            )
        for pin in (False, True):
            (ow, oc), (tw, tc) = medians[("ours", pin)], medians[("theirs", pin)]
            cpus = "one CPU" if pin else "all CPUs"
            print(
                f"{label:<11} {'ratio ours / datamodel-codegen, ' + cpus:<46} {'':>4}"
                f" {ow / tw:>7.2f} {oc / tc:>7.2f}"
            )


if __name__ == "__main__":
    main()
