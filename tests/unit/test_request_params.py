"""Configured values of request params (``--param``, ``params = {...}``): how they are
read and checked, and what generation makes of them (see also the schema-edit cases of
``tests/spec_edit_cases/params.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.spec_edit_cases.params import add_param, cancel_reason
from tests.unit.test_cli import EXT_SCHEMA, invoke

LIMIT = {"type": "integer", "description": "At most this many."}


def _schema(tmp_path: Path, *edits: Any) -> str:
    raw = json.loads(EXT_SCHEMA.read_text())
    for edit in edits:
        raw = edit(raw)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(raw))
    return str(path)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("tasks/cancel.reason", "expected METHOD.PARAM=VALUE"),
        ("reason=x", "expected METHOD.PARAM"),
        ("nope:tasks/cancel.reason=x", 'unknown revision "nope"'),
        ("tasks/cancel.taskId=x", 'request param "tasks/cancel.taskId" is the runtime'),
        ("tasks/get.limit=abc", '"abc" is not a JSON value of type int'),
        ("tasks/get.limit=1.5", "1.5 is not of type int"),
        ("tasks/cancel.why=x", 'request param "tasks/cancel.why": no request'),
        ("2025:tasks/cancel.reason=x", "is for revision 2025-11-25, which the package"),
    ],
)
def test_a_bad_param_value_stops_generation_with_one_line(
    tmp_path: Path, option: str, message: str
) -> None:
    schema = _schema(
        tmp_path, cancel_reason, add_param("tasks/get", "limit", LIMIT, required=False)
    )
    code, _, err = invoke(
        "generate",
        schema,
        "-o",
        str(tmp_path),
        "--param",
        "tasks/cancel.reason=stop",
        "--param",
        option,
    )
    assert code == 2, err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "mcp_tasks").exists()


def test_a_value_for_an_unedited_schema_is_refused(tmp_path: Path) -> None:
    code, _, err = invoke(
        "generate",
        str(EXT_SCHEMA),
        "-o",
        str(tmp_path),
        "--param",
        "tasks/cancel.reason=stop",
    )
    assert code == 2
    assert 'request param "tasks/cancel.reason": no request the runtime sends' in err


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ('["tasks/cancel.reason"]', "expected METHOD.PARAM=VALUE"),
        ('{ "tasks/cancel.reason" = ["a"] }', "a string, number or boolean"),
        ('{ nope = { "tasks/cancel.reason" = "a" } }', 'unknown revision "nope"'),
    ],
)
def test_a_bad_params_table_stops_generation(
    tmp_path: Path, params: str, message: str
) -> None:
    schema = _schema(tmp_path, cancel_reason)
    (tmp_path / "pyproject.toml").write_text(
        "[[tool.mcptasks-gen.targets]]\n"
        f'schema = "{Path(schema).name}"\noutput = "out"\npackage = "p"\n'
        f"params = {params}\n"
    )
    code, _, err = invoke("generate", cwd=tmp_path)
    assert code == 2, err
    assert message in err and "/params" in err, err


def test_a_per_revision_table_is_the_keywords_default(tmp_path: Path) -> None:
    schema = _schema(
        tmp_path, cancel_reason, add_param("tasks/get", "limit", LIMIT, required=False)
    )
    (tmp_path / "pyproject.toml").write_text(
        "[[tool.mcptasks-gen.targets]]\n"
        f'schema = "{Path(schema).name}"\noutput = "out"\npackage = "p"\n'
        'params = { ext = { "tasks/cancel.reason" = "stop", "tasks/get.limit" = 3 } }\n'
    )
    code, _, err = invoke("generate", cwd=tmp_path)
    assert code == 0, err
    protocol = (tmp_path / "out" / "p" / "protocol_ext.py").read_text()
    assert '"cancel": {\n        "reason": "stop",\n    }' in protocol
    assert '"limit": 3,' in protocol
    api = (tmp_path / "out" / "p" / "api_ext.py").read_text()
    assert 'reason: str = "stop",' in api
