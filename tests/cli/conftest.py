"""Running ``pact-tui`` in the test process (``main(argv)``, output captured) or as a real
process, and reading a workspace back to check what a command did or did not change."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine.workspace import Workspace
from pact_tui.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "gptme"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's own ``$PACT_TUI_CACHE`` (the log index), in ``tmp_path``."""
    monkeypatch.setenv("PACT_TUI_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def basic(tmp_path: Path) -> Path:
    """A copy of the gptme fixture ``conv-basic`` of the test's own."""
    return Path(shutil.copytree(FIXTURES / "conv-basic", tmp_path / "conv-basic"))


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str

    @property
    def data(self) -> Any:
        """The JSON document a ``--json`` command printed."""
        return json.loads(self.out)

    @property
    def error(self) -> dict[str, Any]:
        """The error object a failed ``--json`` command printed on stderr."""
        error: dict[str, Any] = json.loads(self.err)["error"]
        return error


def cli(*args: object) -> Ran:
    """``pact-tui ARGS`` in this process."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main([str(arg) for arg in args])
        except SystemExit as exit:  # argparse: usage errors and --help
            code = int(exit.code or 0)
    return Ran(code, out.getvalue(), err.getvalue())


def cli_process(*args: object) -> Ran:
    """``pact-tui ARGS`` as a separate process: the real exit status and streams."""
    done = subprocess.run(
        [sys.executable, "-m", "pact_tui", *map(str, args)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def ok(*args: object) -> Ran:
    ran = cli(*args)
    assert (ran.code, ran.err) == (0, ""), ran
    return ran


def failed(*args: object, code: str) -> Ran:
    """The command must fail with one line on stderr naming ``code``, and print nothing else."""
    ran = cli(*args)
    assert ran.code == 1, ran
    assert ran.out == ""
    assert "Traceback" not in ran.err
    if "--json" in map(str, args):
        assert ran.error["code"] == code, ran
        assert ran.err.count("\n") == 1
    else:
        [line] = ran.err.splitlines()
        assert line.startswith(f"pact-tui: {code}: "), line
    return ran


def read_state(path: Path) -> tuple[int, dict[str, str], dict[str, list[str]]]:
    """The event head, every context's export and snapshot ids, as a fresh open shows them."""

    async def read() -> tuple[int, dict[str, str], dict[str, list[str]]]:
        async with await Workspace.open(path, watch=False, read_only=True) as ws:
            names = [info.name for info in ws.contexts()]
            return (
                ws.head,
                {name: ws.context(name).model_dump_json() for name in names},
                {name: [e.id for e in ws.snapshots(name)] for name in names},
            )

    return asyncio.run(read())


def events(path: Path) -> list[Any]:
    async def read() -> list[Any]:
        async with await Workspace.open(path, watch=False, read_only=True) as ws:
            return await ws.store.read()

    return asyncio.run(read())
