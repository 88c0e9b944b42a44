"""Random damage to the official schemas never crashes the generator.

Each case applies one to three random edits to one of the official schemas (delete a
key, replace a value with an odd one, rename a key to a keyword or an awkward name, drop
or replace an array item), from a fixed seed, and runs the front of the pipeline (load,
detect, extract, normalize, profile check). The outcome must be a package or
``GenError`` (exit 2 with a pointer), never another exception. The same edits, run by
the thousand during development, found the cases now pinned one by one in
``test_hostile_inputs.py`` and ``test_model_validation_keywords.py``; this test keeps a
fixed sample of them in the suite.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from mcptasks_gen import pipeline
from mcptasks_gen.config import Target
from mcptasks_gen.errors import GenError

SCHEMAS = {"ext": "ext-tasks-draft.schema.json", "2025": "mcp-2025-11-25.schema.json"}
ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    "",
    "x",
    "#/$defs/Nope",
    [],
    {},
    {"type": "string"},
    {"$ref": "#/$defs/Task"},
    {"$ref": "#"},
    ["a", 1],
    {"anyOf": []},
    {"allOf": [{"$ref": "#/$defs/Task"}]},
    "class",
    "None",
    "123abc",
    "a-b",
    "ümlaut",
    "__init__",
    {"const": None},
    {"enum": []},
    {"type": ["string", "null"]},
    {"type": "object", "additionalProperties": {"$ref": "#/$defs/Task"}},
    False,
]
ODD_KEYS = [
    "class",
    "def",
    "None",
    "123abc",
    "a-b",
    "ümlaut",
    "__init__",
    "",
    "$ref",
    "type",
    "properties",
    "Task",
    "model_config",
    "to_wire",
    "_meta",
]
CASES = 120


def _containers(node: Any) -> list[Any]:
    """Every object and array inside a JSON value, itself included."""
    found = [node]
    children = (
        node.values()
        if isinstance(node, dict)
        else node if isinstance(node, list) else []
    )
    for child in children:
        if isinstance(child, (dict, list)):
            found.extend(_containers(child))
    return found


def _damage(raw: dict[str, Any], rng: random.Random) -> None:
    containers = _containers(raw)
    for _ in range(rng.randint(1, 3)):
        node = rng.choice(containers)
        roll = rng.random()
        if isinstance(node, dict) and node:
            key = rng.choice(list(node))
            if roll < 0.3:
                del node[key]
            elif roll < 0.7:
                node[key] = copy.deepcopy(rng.choice(ODD_VALUES))
            else:
                node[rng.choice(ODD_KEYS)] = node.pop(key)
        elif isinstance(node, list) and node:
            index = rng.randrange(len(node))
            if roll < 0.5:
                node.pop(index)
            else:
                node[index] = copy.deepcopy(rng.choice(ODD_VALUES))


@pytest.fixture(scope="module")
def originals(shared: Path) -> dict[str, dict[str, Any]]:
    return {
        key: json.loads((shared / "schemas" / name).read_text())
        for key, name in SCHEMAS.items()
    }


@pytest.mark.parametrize("seed", range(CASES))
def test_damaged_schema_generates_or_fails_cleanly(
    seed: int, originals: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    rng = random.Random(seed)
    raw = copy.deepcopy(originals[rng.choice(sorted(originals))])
    _damage(raw, rng)
    schema = tmp_path / "damaged.json"
    schema.write_text(json.dumps(raw))
    target = Target(
        schema=schema,
        schema_label="damaged.json",
        output=tmp_path,
        package="p",
        revision=None,
        templates=None,
        regenerate="x",
    )
    try:
        pipeline.package(target)
    except GenError as error:
        assert "\n" not in str(error), str(error)
