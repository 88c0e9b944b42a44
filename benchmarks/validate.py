"""Validate and serialise ``tasks/get`` results: our models vs datamodel-codegen's vs a
floor.

Usage (from the repository root)::

    .venv/bin/python benchmarks/validate.py [--rounds 5] [--messages 5000] [--baseline
    NAME=PATH]

Three sets of pydantic v2 models validate the same corpus of ``tasks/get`` results of
the Tasks extension (``GetTaskResult``), side by side in one process:

* ours: ``generated/mcp_tasks_ext/models_ext.py`` (or ``--ours PATH``), loaded on its
  own (``models.py`` of a package only re-exports it, with a relative import);
* datamodel-codegen: models generated at start-up, into a temporary folder, by the
  installed ``datamodel-codegen`` from the official extension schema (``--schema``),
  default options;
* floor: the hand-written models below, what a person would write for speed: wire names
  as field names, one discriminated union on ``status``, nested payloads
  (``inputRequests``, ``result``, ``error``, ``_meta``) kept as ``dict[str, Any]``, no
  hooks.

``--baseline NAME=PATH`` adds another models file (an earlier version of ours, say) to
the same run, so a before/after comparison shares one machine state.

The corpus: 2,000 results built from a fixed seed, the five statuses in equal shares and
shuffled, ``_meta`` (server info plus a vendor key) on half of them; ``input_required``
ones carry one to three input requests (form and URL elicitation, sampling, roots). Each
measurement runs ``--messages`` messages (the corpus, or one status's share of it,
repeated) through ``TypeAdapter(GetTaskResult).validate_python`` / ``.validate_json``
(from bytes) and through serialisation of the validated objects (``to_wire()`` for ours,
``model_dump(mode="json", by_alias=True)`` for the others). The implementations take
turns within each round; the figure is the median over ``--rounds`` rounds of messages
per second of CPU time (process time, so other work on the machine disturbs it less than
wall time). Ratios are against the floor. Before timing, every implementation must
accept every message, and ours must give every message back unchanged from
``to_wire()``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
OPS = ("validate_python", "validate_json", "serialise")

# -- the floor ------------------------------------------------------------------------


class _FloorTask(BaseModel):
    """Fields every status carries, named as on the wire."""

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    resultType: Literal["complete"]
    taskId: str
    statusMessage: str | None = None
    createdAt: str
    lastUpdatedAt: str
    ttlMs: int | None
    pollIntervalMs: int | None = None


class FloorWorking(_FloorTask):
    status: Literal["working"]


class FloorInputRequired(_FloorTask):
    status: Literal["input_required"]
    inputRequests: dict[str, dict[str, Any]]


class FloorCompleted(_FloorTask):
    status: Literal["completed"]
    result: dict[str, Any]


class FloorFailed(_FloorTask):
    status: Literal["failed"]
    error: dict[str, Any]


class FloorCancelled(_FloorTask):
    status: Literal["cancelled"]


FloorGetTaskResult = Annotated[
    FloorWorking | FloorInputRequired | FloorCompleted | FloorFailed | FloorCancelled,
    Field(discriminator="status"),
]

# -- the corpus -----------------------------------------------------------------------


def _input_request(rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(("form", "url", "sampling", "roots"))
    if kind == "form":
        properties: dict[str, Any] = {
            "name": {"type": "string", "title": "Name", "minLength": 1},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "subscribe": {"type": "boolean", "default": False},
            "colour": {"type": "string", "enum": ["red", "green", "blue"]},
        }
        if rng.random() < 0.5:
            properties["size"] = {
                "type": "string",
                "oneOf": [
                    {"const": "s", "title": "Small"},
                    {"const": "l", "title": "Large"},
                ],
            }
            properties["tags"] = {
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b", "c"]},
            }
        params: dict[str, Any] = {
            "message": "Please fill in the form",
            "requestedSchema": {
                "type": "object",
                "properties": properties,
                "required": ["name"],
            },
        }
        if rng.random() < 0.5:
            params["mode"] = "form"
        return {"method": "elicitation/create", "params": params}
    if kind == "url":
        return {
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": "Sign in to continue",
                "url": f"https://auth.example.com/{rng.randrange(10**6)}",
            },
        }
    if kind == "sampling":
        return {
            "method": "sampling/createMessage",
            "params": {
                "messages": [
                    {
                        "role": "user",
                        "content": {"type": "text", "text": "Summarise the document."},
                    },
                    {
                        "role": "assistant",
                        "content": [{"type": "text", "text": "Which part?"}],
                    },
                ],
                "maxTokens": rng.choice((128, 256, 1024)),
                "systemPrompt": "You are terse.",
            },
        }
    return {"method": "roots/list"}


def _message(rng: random.Random, status: str, i: int, meta: bool) -> dict[str, Any]:
    message: dict[str, Any] = {}
    if meta:
        message["_meta"] = {
            "io.modelcontextprotocol/serverInfo": {
                "name": "bench-server",
                "version": "1.4.2",
            },
            "com.example/trace": f"t-{i}",
        }
    message |= {
        "resultType": "complete",
        "taskId": f"task-{rng.getrandbits(64):016x}",
        "status": status,
        "createdAt": "2026-07-28T10:00:00Z",
        "lastUpdatedAt": "2026-07-28T10:00:05Z",
        "ttlMs": rng.choice((None, 60000, 3600000)),
    }
    if rng.random() < 0.5:
        message["statusMessage"] = f"step {i}"
    if rng.random() < 0.7:
        message["pollIntervalMs"] = 200
    if status == "input_required":
        message["inputRequests"] = {
            f"req-{i}-{k}": _input_request(rng) for k in range(rng.randint(1, 3))
        }
    elif status == "completed":
        message["result"] = {
            "content": [{"type": "text", "text": f"done {i}"}],
            "isError": False,
            "structuredContent": {"rows": rng.randrange(100)},
        }
    elif status == "failed":
        message["error"] = {
            "code": -32603,
            "message": "worker crashed",
            "data": {"attempt": rng.randrange(3)},
        }
    return message


def corpus(size: int = 2000, seed: int = 20260728) -> list[dict[str, Any]]:
    """``size`` results, the statuses in equal shares, shuffled; ``_meta`` on every
    other one."""
    rng = random.Random(seed)
    statuses = [STATUSES[i % len(STATUSES)] for i in range(size)]
    rng.shuffle(statuses)
    return [
        _message(rng, status, i, meta=i % 2 == 0) for i, status in enumerate(statuses)
    ]


# -- the implementations --------------------------------------------------------------


def _load(path: Path, name: str) -> ModuleType:
    """Import a ``models.py`` on its own (it needs nothing but pydantic)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _datamodel_codegen(schema: Path, folder: Path) -> ModuleType:
    exe = BIN / "datamodel-codegen"
    if not exe.exists():
        sys.exit("datamodel-codegen is not installed (pip install -e '.[dev]')")
    out = folder / "dmc_models.py"
    cmd = [
        str(exe),
        "--input",
        str(schema),
        "--input-file-type",
        "jsonschema",
        "--output-model-type",
        "pydantic_v2.BaseModel",
        "--output",
        str(out),
    ]
    subprocess.run(
        cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return _load(out, "bench_dmc_models")


class Impl:
    """One set of models under test."""

    def __init__(self, label: str, annotation: Any, dump: Callable[[Any], Any]) -> None:
        self.label = label
        self.adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        self.dump = dump


def implementations(args: argparse.Namespace, folder: Path) -> list[Impl]:
    """Ours (and any baselines), datamodel-codegen's, the floor: in the order
    printed."""
    impls = []
    for i, (label, path) in enumerate([("ours", args.ours), *args.baseline]):
        models = _load(path, f"bench_ours_{i}")
        impls.append(Impl(label, models.GetTaskResult, lambda obj: obj.to_wire()))
    dmc = _datamodel_codegen(args.schema, folder)
    impls.append(
        Impl(
            "datamodel-codegen",
            dmc.GetTaskResult,
            lambda obj: obj.model_dump(mode="json", by_alias=True),
        )
    )
    impls.append(
        Impl(
            "floor",
            FloorGetTaskResult,
            lambda obj: obj.model_dump(mode="json", by_alias=True),
        )
    )
    return impls


# -- timing ---------------------------------------------------------------------------


def _cycle(items: list[Any], n: int) -> list[Any]:
    return [items[i % len(items)] for i in range(n)]


def _run(
    impl: Impl, op: str, python: list[Any], raw: list[bytes], objects: list[Any]
) -> float:
    """CPU seconds for one pass of ``op`` over the prepared inputs."""
    if op == "validate_python":
        fn, inputs = impl.adapter.validate_python, python
    elif op == "validate_json":
        fn, inputs = impl.adapter.validate_json, raw
    else:
        fn, inputs = impl.dump, objects
    start = time.process_time()
    for item in inputs:
        fn(item)
    return time.process_time() - start


def check(impls: list[Impl], messages: list[dict[str, Any]]) -> None:
    """Every implementation takes every message; ours (not a baseline) hands each one
    back unchanged."""
    for impl in impls:
        for message in messages:
            obj = impl.adapter.validate_python(message)
            if impl.label == "ours" and impl.dump(obj) != message:
                sys.exit(
                    "ours: to_wire() changed a"
                    f" message:\n{json.dumps(message)}\n{json.dumps(impl.dump(obj))}"
                )
            impl.adapter.validate_json(json.dumps(message))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="rounds of measurements; medians are printed (default 5)",
    )
    parser.add_argument(
        "--messages",
        type=int,
        default=5000,
        help="messages per measurement (default 5000)",
    )
    parser.add_argument(
        "--ours",
        type=Path,
        default=ROOT / "generated" / "mcp_tasks_ext" / "models_ext.py",
    )
    parser.add_argument(
        "--schema",
        type=Path,
        default=ROOT.parent / "shared" / "schemas" / "ext-tasks-draft.schema.json",
    )
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="NAME=PATH",
        type=lambda s: (s.split("=", 1)[0], Path(s.split("=", 1)[1])),
        help="another models.py to time beside ours",
    )
    args = parser.parse_args()

    messages = corpus()
    sets = {
        "all": messages,
        **{s: [m for m in messages if m["status"] == s] for s in STATUSES},
    }
    with tempfile.TemporaryDirectory() as tmp:
        impls = implementations(args, Path(tmp))
    check(impls, messages)
    prepared = {}
    for name, subset in sets.items():
        python = _cycle(subset, args.messages)
        raw = [json.dumps(m).encode() for m in python]
        prepared[name] = (
            python,
            raw,
            {
                impl.label: [impl.adapter.validate_python(m) for m in python]
                for impl in impls
            },
        )

    samples: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(args.rounds):
        for op in OPS:
            for name, (python, raw, objects) in prepared.items():
                for impl in impls:
                    seconds = _run(impl, op, python, raw, objects[impl.label])
                    samples.setdefault((op, name, impl.label), []).append(
                        len(python) / seconds
                    )

    rate = {key: statistics.median(values) for key, values in samples.items()}
    width = max(len(impl.label) for impl in impls)
    print(
        f"tasks/get results, {len(messages)}-message corpus, {args.messages} messages"
        f" per measurement, median of {args.rounds} rounds"
    )
    print("k msg/s of CPU time (ratio to the floor)")
    for op in OPS:
        print(f"\n{op:<{width + 2}}" + "".join(f"{name:>20}" for name in sets))
        for impl in impls:
            cells = "".join(
                f"{rate[op, name, impl.label] / 1000:>10.1f}k"
                f" ({rate[op, name, impl.label] / rate[op, name, 'floor']:4.2f}x)"
                for name in sets
            )
            print(f"  {impl.label:<{width}}{cells}")


if __name__ == "__main__":
    main()
