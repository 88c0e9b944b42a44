"""The README's quickstart, run as written.

The test reads the "## Quickstart" section of README.md and follows it block by block in
a temporary copy of what the commands read from the repository root (``.venv`` and
``schema/``): shell blocks are run line by line, a Python block is saved under the file
name its paragraph gives, a diff block is applied with ``git apply``, and a text block
is the output the client run before it must show. Long-running commands (the server) run
in the background; the client answers the server's question with ``y`` on its stdin. The
only change to what README shows is the port: 8000 becomes a free one.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.support.docs import Block, section, section_blocks
from tests.support.procs import free_port, run_server

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DEADLINE = 120.0
STATUSES = ("working", "input_required", "completed", "failed", "cancelled")


def _quickstart() -> list[Block]:
    return section_blocks(README, "## Quickstart")


def _main_job_generate() -> str:
    """The generation part of the set-up's main-job command (after its install
    steps)."""
    setup = [
        b
        for b in section_blocks(README, "## Set up on a fresh machine")
        if b.lang == ""
    ]
    return setup[0].code.strip().split("&&")[-1].strip()


def _file_name(block: Block) -> str:
    """The file a Python block is saved as: the last ``path.py`` its paragraph names."""
    names = re.findall(r"`([\w./-]+\.py)`", block.before)
    assert (
        names
    ), f"{block.where}: the paragraph before the block names no .py file to save it as"
    return names[-1]


def _status_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.split(" ", 1)[0] in STATUSES]


def _check_output(expected: str, actual: str, where: str) -> None:
    """The client's output matches the README's: the same first and last line, the
    statuses in that order (an extra ``working`` snapshot may show, depending on when
    the polls fall), and the same input_required and terminal lines."""
    prompt = re.search(r"^(.*\[y/n\] )y$", expected, re.M)
    assert prompt is not None, f"{where}: the sample output shows no answered prompt"
    assert prompt[1] in actual, f"{where}: the prompt {prompt[1]!r} is not in\n{actual}"
    # On a terminal the answer and its newline are echoed; stdin here is a pipe.
    actual = actual.replace(prompt[1], prompt[1] + "y\n")
    want, got = expected.strip().splitlines(), actual.strip().splitlines()
    assert (
        want[0] == got[0] and want[-1] == got[-1]
    ), f"{where}: expected\n{expected}\ngot\n{actual}"
    got_statuses = [line.split(" ", 1)[0] for line in _status_lines(actual)]
    position = 0
    for line in _status_lines(expected):
        status = line.split(" ", 1)[0]
        while position < len(got_statuses) and got_statuses[position] != status:
            position += 1
        assert position < len(
            got_statuses
        ), f"{where}: {status!r} missing or out of order in\n{actual}"
        if status != "working":
            assert line in got, f"{where}: {line!r} not in\n{actual}"
        position += 1


def test_the_quickstart_section_has_every_step() -> None:
    """Generate, serve, call with input, regenerate after a schema edit: README keeps
    the four steps, with their blocks."""
    text = section(README, "## Quickstart")
    for step in (
        "### 1. Generate",
        "### 2. Serve a tool as a task",
        "### 3. Call it and answer its input",
        "### 4. Regenerate after a schema edit",
    ):
        assert step in text
    langs = [block.lang for block in _quickstart()]
    assert (
        langs.count("python") == 3
        and langs.count("diff") == 1
        and langs.count("text") == 2
    )


def test_the_quickstart_runs_as_written(tmp_path: Path) -> None:
    venv = Path(sys.prefix)
    if not (venv / "bin" / "mcptasks-gen").exists():
        pytest.fail(
            f"run the tests with the project's venv (no mcptasks-gen in {venv})",
            pytrace=False,
        )
    work = tmp_path / "repo"
    work.mkdir()
    (work / ".venv").symlink_to(venv)
    shutil.copytree(ROOT / "schema", work / "schema")
    port = free_port()
    env = {
        **os.environ,
        "MCP_TASKS_STORE": str(tmp_path / "task_ids.sqlite3"),  # the client's task IDs
        "PYTHONUNBUFFERED": "1",
        "NO_COLOR": "1",
    }

    def run(command: str, stdin: str = "") -> str:
        proc = subprocess.run(
            ["bash", "-c", command],
            cwd=work,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
        assert (
            proc.returncode == 0
        ), f"{command!r} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    run(_main_job_generate())
    assert (work / "out" / "mcp_tasks" / "client" / "__init__.py").is_file()

    outputs: list[tuple[str, str]] = (
        []
    )  # (client command, its output) of the latest shell block
    diff_summaries: list[str] = []
    with ExitStack() as servers:
        for block in _quickstart():
            if block.lang == "python":
                name = _file_name(block)
                (work / name).parent.mkdir(parents=True, exist_ok=True)
                (work / name).write_text(
                    block.code.replace("8000", str(port)), encoding="utf-8"
                )
            elif block.lang == "diff":
                patch = tmp_path / "step.diff"
                patch.write_text(block.code, encoding="utf-8")
                applied = subprocess.run(
                    ["git", "apply", "-v", str(patch)],
                    cwd=work,
                    capture_output=True,
                    text=True,
                    timeout=DEADLINE,
                )
                assert (
                    applied.returncode == 0
                ), f"{block.where}: the diff does not apply:\n{applied.stderr}"
            elif block.lang == "text":
                assert (
                    outputs
                ), f"{block.where}: a sample output with no client run before it"
                command, output = outputs[0]
                _check_output(block.code, output, f"{block.where} ({command})")
            elif block.lang == "sh":
                outputs = []
                for line in block.code.splitlines():
                    command = line.split("#", 1)[0].strip()
                    if not command:
                        continue
                    words = shlex.split(command)
                    if words[:3] == [".venv/bin/pip", "install", "-q"]:
                        # The test's venv is the project's: check instead of installing.
                        missing = [
                            name
                            for name in words[3:]
                            if importlib.util.find_spec(name) is None
                        ]
                        assert (
                            not missing
                        ), f"{block.where}: {missing} not installed in {venv}"
                    elif words[:2] == [".venv/bin/python", "out/server.py"]:
                        servers.close()  # "stop the server" before starting it again
                        servers.enter_context(
                            run_server(words, port, cwd=work, env=env, timeout=DEADLINE)
                        )
                    elif words[:2] == [".venv/bin/python", "out/client.py"]:
                        output = run(command, stdin="y\n")
                        revision = words[2] if len(words) > 2 else None
                        if revision is not None:
                            assert output.startswith(
                                f"the server speaks {revision}\n"
                            ), output
                        assert output.rstrip().endswith("published notes"), output
                        outputs.append((command, output))
                    else:
                        output = run(command)
                        if words[:2] == [".venv/bin/mcptasks-gen", "diff"]:
                            diff_summaries.append(output)
            else:
                pytest.fail(
                    f"{block.where}: a {block.lang or 'plain'} block the quickstart"
                    " test cannot run"
                )

    # What the README says of the diff it shows.
    claim = re.search(
        r"`diff` lists (\d+) compatible changes", section(README, "## Quickstart")
    )
    assert claim is not None and len(diff_summaries) == 1
    count = claim[1]
    assert (
        f"{count} changes: 0 breaking for clients, 0 breaking for servers, {count}"
        " compatible for both" in diff_summaries[0]
    )
    assert "result: nothing breaking" in diff_summaries[0]
