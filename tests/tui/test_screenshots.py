"""Ctrl+P → Screenshot: the SVG is saved in the current folder (Textual's default, the
Downloads folder, may not exist) and the notification names the file; a failure says why."""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

import pytest

from pact_tui.screenshot import conversation_screenshot

from .inspector import SIZE, inspector, notifications, screen_text, wait_until

CONVERSATION = Path(__file__).resolve().parents[1] / "fixtures" / "gptme" / "conv-branches"


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


@pytest.mark.slow
async def test_the_conversation_screenshot_is_the_same_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -m pact_tui.screenshot OUT --conversation DIR`` (the README's master-log
    figure): the broken reference shown, the same SVG from every run (no temporary path is
    drawn), and nothing cached outside a temporary folder."""
    mine = tmp_path / "my-cache"
    monkeypatch.setenv("PACT_TUI_CACHE", str(mine))
    first, second = tmp_path / "first.svg", tmp_path / "second.svg"
    await conversation_screenshot(first, CONVERSATION)
    await conversation_screenshot(second, CONVERSATION)
    assert first.read_bytes() == second.read_bytes()
    svg = first.read_text(encoding="utf-8")
    drawn = html.unescape(re.sub(r"<[^>]*>", "", svg)).replace("\xa0", " ")  # the text drawn
    for part in ("mid-line", "it starts 147 bytes into", "branches/main-undo-0.jsonl:12"):
        assert part in drawn
    assert "pact-shot-" not in drawn and str(tmp_path) not in drawn
    assert os.environ["PACT_TUI_CACHE"] == str(mine) and not mine.exists()
