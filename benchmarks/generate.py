"""Time full package generation against datamodel-codegen producing models alone.

Usage: python benchmarks/generate.py [--runs N] [--shared PATH] [--smoke]

For each official schema (core 2025-11-25 and the Tasks extension) and for the package
of both revisions (``dual``: the two schemas, one package, as ``generated/mcp_tasks``),
runs side by side, in alternation, N rounds of cold processes:
  * ``mcptasks-gen generate SCHEMA...``: models, protocol tables, client, server and the
    runtime, written to a new folder; formatter cache disabled (MCPTASKS_GEN_CACHE=off);
  * ``datamodel-codegen`` on the same schema (for ``dual``, on each schema in turn, one
    process each): pydantic v2 models only;
  * ``mcptasks-gen generate SCHEMA... --check`` on an up-to-date folder, formatter
    cache disabled as well, so it runs black on every file like the generation;
each measured twice: free to use every CPU, and pinned to one CPU (the affinity mask of
the child, as ``taskset -c 0`` would set it); and ``--check`` with the formatter cache
warm (the usual case), all CPUs. For every run it records the wall-clock time and the
CPU time (user + system) of the whole process tree, and prints the medians and the
ratios: ours / datamodel-codegen (targets: CPU ratio <= 0.5, wall ratio <= 1.0) and
``--check`` without the cache / ``generate`` (target: at most 1, a check costs no more
than generating), each ratio the median of the rounds' ratios (the two runs of a round
are seconds apart, so load on the machine that comes and goes moves both alike).

Both tools run as installed: with their byte code. Before the timed runs each tool runs
once per schema outside the medians (printed as its first run), with
``PYTHONDONTWRITEBYTECODE`` taken out of the children's environment: in an editable
checkout that writes the generator's ``__pycache__`` (pip byte-compiles both tools'
modules when it installs a wheel) and keeps its compiled templates (see
``render.CompiledTemplates``). The generator's cache folder is a temporary one
(``XDG_CACHE_HOME``), so the first run compiles every template.

``--shared`` defaults to ``$MCPTASKS_SHARED``, else the ``shared/`` folder beside the
repository. ``--smoke`` checks in a few seconds that the script works: one round, the
extension only, all CPUs only, no first runs (no figures to keep). A run that fails
stops the benchmark with exit status 1 and the tool's error output.
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
ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = {
    "2025-11-25": ("mcp-2025-11-25.schema.json",),
    "extension": ("ext-tasks-draft.schema.json",),
    "dual": ("mcp-2025-11-25.schema.json", "ext-tasks-draft.schema.json"),
}
NAMES = {
    "first": "mcptasks-gen generate, first run (no medians)",
    "theirs-first": "datamodel-codegen, first run (no medians)",
    "ours": "mcptasks-gen generate (full package, cold)",
    "theirs": "datamodel-codegen (models only)",
    "check-cold": "mcptasks-gen generate --check (no cache)",
    "warm": "mcptasks-gen generate --check (cache warm)",
}


class RunFailed(RuntimeError):
    """A timed process exited with an error."""


def _pin_to_first_cpu() -> None:
    """Child set-up for the one-CPU runs: run on the lowest CPU this process may use."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def timed(
    cmds: list[list[str]], env: dict[str, str], cwd: Path, pin: bool = False
) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + system, children included) of ``cmds`` run
    one after the other; ``RunFailed`` with the error output when one fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    setup: Callable[[], None] | None = _pin_to_first_cpu if pin else None
    for cmd in cmds:
        done = subprocess.run(
            cmd,
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=setup,
        )
        if done.returncode != 0:
            error = done.stderr.decode("utf-8", "replace").strip()[-1000:]
            raise RunFailed(f"{' '.join(cmd)} exited {done.returncode}:\n{error}")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(
    schemas: list[Path], runs: int, pins: tuple[bool, ...], first: bool
) -> dict[tuple[str, bool], list[tuple[float, float]]]:
    """Every timed run of one schema set, by (tool, pinned), in round order."""
    gen, dmc = str(BIN / "mcptasks-gen"), str(BIN / "datamodel-codegen")
    results: dict[tuple[str, bool], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base["XDG_CACHE_HOME"] = str(work / "cache")
        base.pop("MCPTASKS_GEN_CACHE", None)
        cold = {**base, "MCPTASKS_GEN_CACHE": "off"}
        command = [gen, "generate", *map(str, schemas), "--package", "pkg"]
        ours = [[*command, "-o", "out"]]
        check = [[*command, "-o", "current", "--check"]]

        def theirs(i: int) -> list[list[str]]:
            return [
                [
                    dmc,
                    "--input",
                    str(schema),
                    "--input-file-type",
                    "jsonschema",
                    "--output",
                    str(work / f"models{i}-{n}.py"),
                    "--output-model-type",
                    "pydantic_v2.BaseModel",
                ]
                for n, schema in enumerate(schemas)
            ]

        def add(key: tuple[str, bool], figures: tuple[float, float]) -> None:
            results.setdefault(key, []).append(figures)

        if first:
            add(("first", True), timed(ours, cold, work, True))
            add(("theirs-first", True), timed(theirs(-1), base, work, True))
        # the folder --check compares with, and the formatter cache the warm check uses
        timed([[*command, "-o", "current"]], base, work)
        for i in range(runs):
            for pin in pins if i % 2 == 0 else pins[::-1]:
                # generate and --check take turns going first: the one right after
                # datamodel-codegen starts with less of the generator in the caches
                shutil.rmtree(work / "out", ignore_errors=True)
                ours_first = (i + pins.index(pin)) % 2 == 0
                for tool in ("ours", "check-cold")[:: 1 if ours_first else -1]:
                    cmds = ours if tool == "ours" else check
                    add((tool, pin), timed(cmds, cold, work, pin))
                add(("theirs", pin), timed(theirs(i), base, work, pin))
            add(("warm", False), timed(check, base, work))
    return results


def report(
    label: str, results: dict[tuple[str, bool], list[tuple[float, float]]]
) -> None:
    """Print the medians and the ratios of one schema set."""
    for (tool, pin), runs in results.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(
            f"{label:<11} {NAMES[tool]:<46} {'1' if pin else 'all':>4} {wall:>7.2f}"
            f" {cpu:>7.2f}"
        )
    pins = sorted({pin for tool, pin in results if tool == "ours"})
    for pin in pins:
        cpus = "one CPU" if pin else "all CPUs"
        ours, theirs = results[("ours", pin)], results[("theirs", pin)]
        check = results[("check-cold", pin)]
        for name, top, bottom in (
            ("ours / datamodel-codegen", ours, theirs),
            ("--check (no cache) / generate", check, ours),
        ):
            walls = statistics.median(
                a[0] / b[0] for a, b in zip(top, bottom, strict=True)
            )
            cpus_ = statistics.median(
                a[1] / b[1] for a, b in zip(top, bottom, strict=True)
            )
            title = f"ratio {name}, {cpus}"
            print(f"{label:<11} {title:<46} {'':>4} {walls:>7.2f} {cpus_:>7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--shared",
        type=Path,
        default=Path(os.environ.get("MCPTASKS_SHARED", ROOT.parent / "shared")),
    )
    parser.add_argument(
        "--smoke", action="store_true", help="one round of the extension, all CPUs"
    )
    args = parser.parse_args()
    if not (BIN / "datamodel-codegen").exists():
        sys.exit("datamodel-codegen is not installed (pip install -e '.[dev]')")
    sets = {"extension": SCHEMAS["extension"]} if args.smoke else SCHEMAS
    missing = [n for names in sets.values() for n in names]
    missing = [n for n in missing if not (args.shared / "schemas" / n).is_file()]
    if missing:
        sys.exit(f"schemas not found in {args.shared}/schemas: {', '.join(missing)}")
    runs, pins = (1, (False,)) if args.smoke else (args.runs, (False, True))
    print(f"{'schema':<11} {'tool':<46} {'CPUs':>4} {'wall s':>7} {'CPU s':>7}")
    for label, names in sets.items():
        schemas = [args.shared / "schemas" / name for name in names]
        try:
            results = measure(schemas, runs, pins, first=not args.smoke)
        except RunFailed as exc:
            sys.exit(f"generate.py: {exc}")
        report(label, results)


if __name__ == "__main__":
    main()
