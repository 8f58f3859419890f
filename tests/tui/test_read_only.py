"""The inspector on a workspace it may only look at: asked with --read-only, or because this
user cannot write the file (issue 10 §3). It says so, and commands do nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from engine.workspace import Workspace
from tests.processes import run_as_ordinary_user

from .inspector import inspector, notifications, screen_of, settle, status_text

HERE = Path(__file__).resolve().parent


async def test_read_only_shows_everything_and_runs_no_command(demo: Path) -> None:
    before = demo.read_bytes()
    app = inspector(demo, context="researcher", read_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.workspace is not None and app.workspace.read_only
        assert "READ-ONLY" in status_text(app)
        head = app.workspace.head
        screen = screen_of(app)
        for action in ("advance", "message", "seal"):
            assert screen.check_action(action, ()) is None  # shown dimmed in the footer
        assert screen.check_action("earlier", ()) is True  # looking still works
        await pilot.press("full_stop", "u", "s")  # keys of disabled actions: nothing runs
        screen.action_seal()  # the palette's "Seal a snapshot…" calls it directly
        await settle(pilot)
        assert app.workspace.head == head
        assert any("open read-only" in n for n in notifications(app))
        await pilot.press("left_square_bracket")  # the past is there as always
        await settle(pilot)
        assert "PAST" in status_text(app)
    assert demo.read_bytes() == before


def test_a_workspace_this_user_cannot_write_opens_read_only_and_says_so(
    demo: Path, tmp_path: Path
) -> None:
    folder = demo.parent
    demo.chmod(0o444)
    folder.chmod(0o555)
    try:
        done = run_as_ordinary_user([sys.executable, str(HERE / "read_only_app.py"), str(demo)])
    finally:
        folder.chmod(0o755)
        demo.chmod(0o644)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["read_only"] is True
    assert any("cannot write" in n and "open read-only" in n for n in seen["notifications"])
    assert "READ-ONLY" in seen["status"]
    assert seen["head_after"] == seen["head_before"]


async def test_a_writable_workspace_is_not_read_only(demo: Path) -> None:
    app = inspector(demo, context="researcher")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.workspace is not None and not app.workspace.read_only
        assert "READ-ONLY" not in status_text(app)
        head = app.workspace.head
        await pilot.press("full_stop")
        await settle(pilot)
        assert app.workspace.head == head + 1
    async with await Workspace.open(demo, watch=False, read_only=True) as ws:
        assert ws.head == head + 1


def test_a_workspace_this_user_cannot_read_ends_the_app_with_one_line(demo: Path) -> None:
    demo.chmod(0o000)
    try:
        done = run_as_ordinary_user([sys.executable, str(HERE / "unreadable_app.py"), str(demo)])
    finally:
        demo.chmod(0o644)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["return_code"] == 1
    said = " ".join(seen["stderr"].split())  # the console wraps it at its width
    assert said.startswith("pact-tui: PERMISSION_DENIED: permission denied: this user may not")
    assert "Traceback" not in done.stderr + seen["stderr"]
