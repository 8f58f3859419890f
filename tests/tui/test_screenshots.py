"""Ctrl+P → Screenshot: the SVG is saved in the current folder (Textual's default, the
Downloads folder, may not exist) and the notification names the file; a failure says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from .inspector import SIZE, inspector, notifications, screen_text, wait_until


async def test_the_palette_saves_a_screenshot_in_the_current_folder(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p", *"screenshot")
        await wait_until(pilot, lambda: "Save an SVG" in screen_text(app), "the palette's hit")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(notifications(app)), "the screenshot's notification")
        [saved] = here.iterdir()
        [message] = notifications(app)
    assert saved.suffix == ".svg"
    assert saved.read_text(encoding="utf-8").startswith("<svg")
    assert message.startswith("Screenshot: Saved screenshot to ")
    assert str(saved) in message  # the full path


async def test_a_screenshot_that_cannot_be_written_says_why(demo: Path, tmp_path: Path) -> None:
    (tmp_path / "taken.svg").mkdir()  # a folder where the file would go
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        app.action_screenshot("taken.svg", str(tmp_path))
        await wait_until(pilot, lambda: bool(notifications(app)), "the failure's notification")
        assert notifications(app) == [
            f"Screenshot: Could not save the screenshot: {tmp_path / 'taken.svg'}: Is a directory"
        ]


async def test_a_screenshot_from_a_removed_folder_says_why(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        app.action_screenshot()
        await wait_until(pilot, lambda: bool(notifications(app)), "the failure's notification")
        assert notifications(app) == [
            "Screenshot: Could not save the screenshot: "
            "the current folder is gone (No such file or directory)"
        ]
        assert app.is_running
