"""Writing the package: the umask, what --force may touch, the reported counts, the
header on every file, and unwritable destinations (issue 9, items 11, 14, 15 and 16)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcptasks_gen import write
from mcptasks_gen.cli import main


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exc_info is None or result.exc_info[0] is SystemExit, result.exc_info
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_created_folders_and_files_follow_the_umask(
    tmp_path: Path, umask_022: None
) -> None:
    code, _, err = invoke("generate", "-o", str(tmp_path / "deep" / "out"))
    assert code == 0, err
    package = tmp_path / "deep" / "out" / "mcp_tasks"
    assert _mode(package) == 0o755 and _mode(tmp_path / "deep") == 0o755
    assert _mode(package / "models_ext.py") == 0o644
    assert sorted(p.name for p in (tmp_path / "deep" / "out").iterdir()) == [
        "mcp_tasks"
    ]  # no leftovers


def test_regenerating_keeps_the_folder_permissions(
    tmp_path: Path, umask_022: None
) -> None:
    assert invoke("generate", "-o", str(tmp_path))[0] == 0
    package = tmp_path / "mcp_tasks"
    package.chmod(0o750)
    models = package / "models_ext.py"
    models.write_text(models.read_text() + "# edited\n")
    code, out, _ = invoke("generate", "-o", str(tmp_path))
    assert code == 0 and "wrote 1 of" in out
    assert _mode(package) == 0o750 and _mode(models) == 0o644


def test_force_replaces_only_what_it_writes_and_lists_it(tmp_path: Path) -> None:
    """--force replaces generated files without the header; user files and folders
    survive."""
    assert invoke("generate", "-o", str(tmp_path))[0] == 0
    package = tmp_path / "mcp_tasks"
    total = len([p for p in package.rglob("*") if p.is_file()])
    (package / "models_ext.py").write_text("# hand-written\n")
    (package / "notes.txt").write_text("mine\n")
    (package / "sub").mkdir()
    (package / "sub" / "helper.py").write_text("x = 1\n")
    code, _, err = invoke("generate", "-o", str(tmp_path))
    assert (
        code == 2
        and "models_ext.py: error: not written by mcptasks-gen" in err
        and err.count("\n") == 1
    )
    code, out, err = invoke("generate", "-o", str(tmp_path), "--force")
    assert code == 0, err
    assert f"wrote 1 of {total} files" in out
    assert "replaced (had no generated-file header): models_ext.py" in out
    assert (package / "models_ext.py").read_text().startswith(write.HEADER_PREFIX)
    assert (package / "notes.txt").read_text() == "mine\n"
    assert (package / "sub" / "helper.py").read_text() == "x = 1\n"
    code, out, _ = invoke("generate", "-o", str(tmp_path), "--check")
    assert code == 0 and "up to date" in out  # user files are not "stale"


def test_user_files_do_not_block_generation(tmp_path: Path) -> None:
    assert invoke("generate", "-o", str(tmp_path))[0] == 0
    (tmp_path / "mcp_tasks" / "README.md").write_text("mine\n")
    code, out, err = invoke("generate", "-o", str(tmp_path))
    assert code == 0 and "up to date" in out, err
    assert (tmp_path / "mcp_tasks" / "README.md").read_text() == "mine\n"


def test_stale_generated_files_are_removed_and_counted(tmp_path: Path) -> None:
    assert invoke("generate", "-o", str(tmp_path))[0] == 0
    old = tmp_path / "mcp_tasks" / "gone.py"
    old.write_text(write.HEADER_PREFIX + " 0.0.1 from x; do not edit.\n")
    code, out, _ = invoke("generate", "-o", str(tmp_path))
    assert code == 0 and "up to date, removed 1 generated file no longer made" in out
    assert not old.exists()


def test_template_added_files_carry_the_header(tmp_path: Path) -> None:
    templates = tmp_path / "tpl" / "package"
    templates.mkdir(parents=True)
    (templates / "NOTES.md.jinja").write_text("# Notes for {{ pkg.name }}\n")
    (templates / "extra.py.jinja").write_text("VALUE = 1\n")
    (templates / "data.cfg.jinja").write_text("[x]\n")
    args = ("generate", "-o", str(tmp_path / "o"), "--templates", str(tmp_path / "tpl"))
    code, _, err = invoke(*args)
    assert code == 0, err
    package = tmp_path / "o" / "mcp_tasks"
    models_header = (package / "__init__.py").read_text().splitlines()[:2]
    assert (package / "extra.py").read_text().splitlines()[:2] == models_header
    assert (package / "data.cfg").read_text().splitlines()[:2] == models_header
    assert (package / "NOTES.md").read_text().splitlines()[
        0
    ] == f"<!-- {models_header[0][2:]} -->"
    assert all(write.is_generated(p) for p in package.iterdir() if p.is_file())
    code, out, err = invoke(*args)  # the next run may replace them: no refusal
    assert code == 0 and "up to date" in out, err
    assert invoke(*args, "--check")[0] == 0


def test_a_json_template_cannot_carry_the_header(tmp_path: Path) -> None:
    templates = tmp_path / "tpl" / "package"
    templates.mkdir(parents=True)
    (templates / "data.json.jinja").write_text("{}\n")
    code, _, err = invoke(
        "generate", "-o", str(tmp_path / "o"), "--templates", str(tmp_path / "tpl")
    )
    assert (
        code == 2
        and err.startswith(
            "data.json: error: a .json file cannot carry the generated-file header"
        )
        and err.count("\n") == 1
    )
    assert not (tmp_path / "o").exists()


def test_unwritable_folder_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only folder (simulated: the tests may run as root, who can write
    anyway)."""
    real = Path.write_text

    def refuse(self: Path, *args: object, **kwargs: object) -> int:
        if tmp_path in self.parents:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", refuse)
    code, _, err = invoke("generate", "-o", str(tmp_path / "out"))
    assert (
        code == 2
        and err.count("\n") == 1
        and "error: cannot write (permission denied)" in err
    ), err
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_is_a_one_line_error(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        code, _, err = invoke("generate", "-o", str(folder))
    finally:
        folder.chmod(0o755)
    assert code == 2 and err.count("\n") == 1 and "error: cannot write" in err


def test_output_below_a_file_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "file.json").write_text("{}\n")
    code, _, err = invoke("generate", "-o", str(tmp_path / "file.json" / "sub"))
    assert (
        code == 2
        and err
        == f"{tmp_path / 'file.json'}: error: output path is a file, not a folder\n"
    )
    code, _, err = invoke(
        "generate", "-o", str(tmp_path / "file.json" / "sub"), "--check"
    )
    assert code == 2 and err.count("\n") == 1


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda out: out.symlink_to(out), "a symbolic link that loops"),
        (
            lambda out: (
                out.symlink_to(out.with_name("b")),
                out.with_name("b").symlink_to(out),
            ),
            "a symbolic link that loops",
        ),
        (
            lambda out: out.symlink_to("missing"),
            'a dangling symbolic link (to "missing", which does not exist)',
        ),
    ],
    ids=["self-loop", "loop", "dangling"],
)
def test_output_symlink_that_leads_nowhere_is_named_as_such(
    make: Callable[[Path], object], what: str, tmp_path: Path
) -> None:
    """A symbolic link loop or a dangling link as the output folder is called what it is
    (both were "output path is a file"), for the folder itself and for a folder below
    it.
    """
    out = tmp_path / "a"
    make(out)
    for args in (
        ("-o", str(out)),
        ("-o", str(out / "sub")),
        ("-o", str(out), "--check"),
    ):
        code, _, err = invoke("generate", *args)
        assert (
            code == 2 and err == f"{out}: error: output path is {what}, not a folder\n"
        ), err
    assert out.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) in (
        ["a"],
        ["a", "b"],
    )


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null")
def test_output_device_is_named_as_such() -> None:
    code, _, err = invoke("generate", "-o", "/dev/null")
    assert (
        code == 2
        and err == "/dev/null: error: output path is a character device, not a folder\n"
    )
