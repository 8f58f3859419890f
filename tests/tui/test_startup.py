"""Opening: a bad workspace path ends the app with return code 1 and a one-line message."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .inspector import SIZE, inspector


@pytest.mark.parametrize(
    "make_bad, problem",
    [
        (lambda folder: folder / "missing.pact", "WORKSPACE_NOT_FOUND: no workspace at this path"),
        (lambda folder: folder, "NOT_A_CONVERSATION: no conversation.jsonl in the directory"),
        (lambda folder: _write(folder / "notes.txt", b"just some text\n"), "NOT_A_DATABASE"),
        (lambda folder: _write(folder / "empty.pact", b""), "EMPTY_FILE: the file is empty"),
    ],
    ids=["missing", "a directory", "a text file", "an empty file"],
)
async def test_a_bad_workspace_path_exits_with_code_1_and_a_message(
    tmp_path: Path,
    make_bad: Callable[[Path], Path],
    problem: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = make_bad(tmp_path)
    before = path.read_bytes() if path.is_file() else None
    app = inspector(path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
    assert app.return_code == 1
    printed = capsys.readouterr().err
    message = " ".join(printed.split())  # the console wraps it at its width
    assert message.startswith(f"pact-tui: {problem}")
    # ...anywhere, a long path too (mid-name, where no space is): compared without white space.
    assert "".join(message.split()).endswith("".join(f"({path})".split()))
    if before is not None:
        assert path.read_bytes() == before  # left untouched
    else:
        assert not path.exists() or path.is_dir()  # nothing created


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_the_command_line_refuses_a_missing_workspace_before_starting_the_app(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "missing.pact"
    done = subprocess.run(
        [sys.executable, "-m", "pact_tui", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"pact-tui: no workspace at {missing} (create one with: pact-tui ctx create {missing} "
        "NAME)\n"
    )
    assert not missing.exists()
