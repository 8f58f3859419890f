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
