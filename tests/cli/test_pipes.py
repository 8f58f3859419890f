"""Output into a pipe whose reader has gone (``pact-tui … | head``): the command stops quietly, as
Unix tools do, with the status a shell reports for one killed by SIGPIPE (141), no traceback and
no ``INTERNAL`` error. Real processes and real pipes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO_ROOT, ok

pytestmark = pytest.mark.filterwarnings("error")

PACT_TUI = [sys.executable, "-m", "pact_tui"]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    path = tmp_path / "agents.pact"
    ok("ctx", "create", path, "agent")
    ok("ctx", "user", path, "agent", "Hello")
    ok("ctx", "advance", path, "agent")
    return path


def into_a_closed_pipe(*args: object) -> subprocess.CompletedProcess[str]:
    """``pact-tui ARGS`` writing into a pipe whose read end is already closed: its first write
    meets the gone reader, whatever the size of the output."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*PACT_TUI, *map(str, args)],
            cwd=REPO_ROOT,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "command",
    [
        ("demo", "--print", "-v"),
        ("demo", "--print"),
        ("ctx", "print", "{path}", "agent"),
        ("ctx", "print", "{path}", "agent", "--json"),
        ("ctx", "select", "{path}", "agent", "*"),
        ("verify", "{path}"),
    ],
    ids=" ".join,
)
def test_a_reader_gone_away_stops_the_command_quietly(path: Path, command: tuple[str, ...]) -> None:
    done = into_a_closed_pipe(*(str(path) if part == "{path}" else part for part in command))
    assert (done.returncode, done.stderr) == (141, "")


def test_head_gets_the_first_line_and_the_command_stops_quietly(path: Path) -> None:
    """``… | head -1`` in bash, with an output far larger than a pipe holds, so the command is
    still writing when head has gone."""
    for n in range(4):
        ok("ctx", "insert", path, "agent", f"d0, 1, {n}", f"{n} " + "x" * 300_000)
    script = 'set -o pipefail; "$@" | head -1'
    command = [*PACT_TUI, "ctx", "print", str(path), "agent", "--mode", "provider"]
    done = subprocess.run(
        ["bash", "-c", script, "bash", *command],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    first = ok("ctx", "print", path, "agent", "--mode", "provider").out.splitlines()[0]
    assert (done.returncode, done.stderr, done.stdout) == (141, "", first + "\n")


def test_a_reader_that_stays_gets_everything_and_status_0(path: Path) -> None:
    done = subprocess.run(
        [*PACT_TUI, "ctx", "print", str(path), "agent"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == ok("ctx", "print", path, "agent").out
