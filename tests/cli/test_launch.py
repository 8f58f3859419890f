"""The command's entry point (``pact_tui/launch.py``): the cyclic collector paused before the
imports, until the command starts, or until the app has drawn its first frame; then what the
start made is frozen and the collector runs, at ``engine.heap.THRESHOLDS``.

Each check runs in a fresh interpreter: the collector's state is the whole process's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engine.heap import THRESHOLDS
from tests.cli.conftest import ok
from tests.processes import REPO_ROOT

COMMAND = """
import gc, sys
from engine.heap import pause_start
pause_start()
from pact_tui.cli import main
print(gc.isenabled(), file=sys.stderr)  # after the imports, before the command
main(sys.argv[1:])
print(gc.isenabled(), gc.get_freeze_count() > 0, gc.get_threshold(), file=sys.stderr)
"""

APP = """
import asyncio, gc, sys
from engine.heap import pause_start
pause_start()
from pact_tui.app import PactApp
from pact_tui.screens.context import ContextScreen

seen = []
opening = PactApp._open_workspace

async def noted(app):  # the collector as the app opens the workspace and shows it
    seen.append(gc.isenabled())
    await opening(app)
    seen.append(gc.isenabled())

PactApp._open_workspace = noted

async def main():
    app = PactApp(sys.argv[1], watch=False)
    async with app.run_test() as pilot:
        while not (isinstance(app.screen, ContextScreen) and app.screen.view is not None):
            await pilot.pause(0.01)
        await pilot.pause()
        print(seen, gc.isenabled(), gc.get_freeze_count() > 0, gc.get_threshold())

asyncio.run(main())
"""


FIRST_SCREEN = """
import asyncio, sys
from engine.workspace import Workspace
from pact_tui.app import PactApp

opened = []
opening = Workspace.open.__func__

async def noted(cls, *args, **kwargs):  # which modules are there once the workspace is read
    workspace = await opening(cls, *args, **kwargs)
    opened.append("pact_tui.screens.context" in sys.modules)
    return workspace

Workspace.open = classmethod(noted)

async def main():
    app = PactApp(sys.argv[1], watch=False)
    async with app.run_test() as pilot:
        while not opened or type(app.screen).__name__ != "ContextScreen":
            await pilot.pause(0.01)
        print(opened)

asyncio.run(main())
"""


def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "w.pact"
    ok("ctx", "create", path, "researcher")
    ok("ctx", "user", path, "researcher", "hello")
    return path


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )


def test_a_command_runs_with_the_collector_on_and_the_start_frozen(tmp_path: Path) -> None:
    done = run(COMMAND, "ctx", "list", str(workspace(tmp_path)))
    assert "researcher" in done.stdout  # the command ran
    paused, after = done.stderr.strip().splitlines()
    assert paused == "False"
    assert after == f"True True {THRESHOLDS}"


def test_the_app_turns_the_collector_on_once_its_first_frame_is_drawn(tmp_path: Path) -> None:
    done = run(APP, str(workspace(tmp_path)))
    # Off while the workspace opened and the screen was made; on once it was drawn.
    assert done.stdout.strip() == f"[False, False] True True {THRESHOLDS}"


def test_the_first_screens_modules_are_imported_while_the_workspace_is_read(
    tmp_path: Path,
) -> None:
    done = run(FIRST_SCREEN, str(workspace(tmp_path)))
    assert done.stdout.strip() == "[True]"
