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


# What the context screen's first paint needs loads; the other screens' modules (the master-log
# reader, the document screen's) load with those screens: a workspace's start-up does not wait
# for them (issue 27: imports were a third of the cold start at 100k items).
SHOWN_THEN_MODULES = """
import asyncio, sys
from engine.workspace import Workspace
from pact_tui.app import PactApp

async def main(path):
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("agent")
        await workspace.run("agent", {"op": "message", "role": "user", "text": "hello"})
    app = PactApp(path, watch=False)
    async with app.run_test() as pilot:
        for _ in range(500):
            if getattr(app.screen, "view", None) is not None:
                break
            await pilot.pause(0.01)
        assert type(app.screen).__name__ == "ContextScreen", app.screen
        await pilot.pause()
    print("\\n".join(sys.modules))

asyncio.run(main(sys.argv[1]))
"""

NOT_AT_START = (
    "engine.masterlog.conversation",
    "engine.masterlog.verify",
    "pact_tui.logsession",
    "pact_tui.screens.masterlog",
    "pact_tui.screens.document",
    "pact_tui.widgets.queue",
    "pact_tui.diffs",
)


def test_the_context_screen_starts_without_the_other_screens_modules(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SHOWN_THEN_MODULES, str(tmp_path / "w.pact")],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(done.stdout.split())
    assert "pact_tui.screens.context" in loaded
    assert [name for name in NOT_AT_START if name in loaded] == []
