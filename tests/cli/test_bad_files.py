"""Bad workspace files through the command line: one line naming the problem and the file,
exit status 1, no traceback, and the file's bytes as they were."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.engine.workspace.bad_files import BAD_FILES, state

from .conftest import cli_process, failed

pytestmark = pytest.mark.filterwarnings("error")

COMMANDS = [
    ("ctx", "list"),
    ("ctx", "user", "{path}", "agent", "hello"),
    ("ctx", "print", "{path}", "agent"),
    ("ctx", "snapshots", "{path}", "agent"),
    ("verify",),
]


def arguments(command: tuple[str, ...], path: Path) -> list[str]:
    if "{path}" not in command:
        command = (*command, "{path}")
    return [str(path) if part == "{path}" else part for part in command]


@pytest.mark.parametrize("kind", BAD_FILES)
def test_a_bad_file_is_one_line_and_left_untouched(tmp_path: Path, kind: str) -> None:
    maker, _, code, refused_on_create = BAD_FILES[kind]
    path = asyncio.run(maker(tmp_path / "workspace.pact"))
    before = state(path)

    for command in COMMANDS:
        ran = failed(*arguments(command, path), code=code)
        assert str(path) in ran.err
        ran = failed(*arguments(command, path), "--json", code=code)
        assert ran.error["path"] == str(path)
    if refused_on_create:
        failed("ctx", "create", path, "agent", code=code)
    assert state(path) == before

    # The same as a real process: the exit status, the streams, no traceback.
    ran = cli_process("ctx", "list", path)
    assert (ran.code, ran.out) == (1, "")
    [line] = ran.err.splitlines()
    assert line.startswith(f"pact-tui: {code}: ") and str(path) in line
    ran = cli_process("verify", path, "--json")
    assert ran.code == 1
    assert json.loads(ran.err)["error"]["code"] == code
    assert state(path) == before


@pytest.mark.parametrize("kind", ["symlink loop", "through a file"])
def test_a_path_that_leads_to_no_file_is_one_line_and_makes_nothing(
    tmp_path: Path, kind: str
) -> None:
    """Symbolic links in a loop, or a file where the path needs a folder: each command said
    INTERNAL (OSError, or RuntimeError from the create's clean-up)."""
    if kind == "symlink loop":
        path = tmp_path / "a.pact"
        path.symlink_to(tmp_path / "b.pact")
        (tmp_path / "b.pact").symlink_to(path)
    else:
        (tmp_path / "file").write_text("not a folder\n")
        path = tmp_path / "file" / "a.pact"
    source = tmp_path / "plan.md"
    source.write_text("# Plan\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    for command in [
        *COMMANDS,
        ("verify", "{path}", "--deep"),
        ("backup", "{path}", str(tmp_path / "copy.pact")),
        ("ctx", "create", "{path}", "agent"),
        ("doc", "create", "{path}", "plan", "--from", str(source)),
        ("doc", "list", "{path}"),
        ("tap", "join", "{path}", "plan", "--as", "bot"),
    ]:
        ran = failed(*arguments(command, path), code="WORKSPACE_NOT_FOUND")
        assert "the path leads to no file" in ran.err and str(path) in ran.err, command
    assert sorted(p.name for p in tmp_path.iterdir()) == before
