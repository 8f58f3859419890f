"""The master-log screen driven headless, choosing a log (``test_masterlog.py`` has the rest; the
tmux tests in ``test_terminal.py`` drive the real thing)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pact_tui.screens.masterlog import MasterLogScreen

from .inspector import SIZE, inspector, screen_text, wait_until

GPTME = Path(__file__).resolve().parents[1] / "fixtures" / "gptme"


@pytest.fixture
def conversation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PACT_TUI_CACHE", str(tmp_path / "cache"))
    directory = tmp_path / "conv-branches"
    shutil.copytree(GPTME / "conv-branches", directory)
    return directory


async def test_choosing_another_log_shows_its_first_line(conversation: Path) -> None:
    """Every gptme log starts with the same system prompt (the same bytes at the same offsets):
    choosing another log in the list shows that log's first line, not the last log's."""
    app = inspector(conversation)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, MasterLogScreen)
        await wait_until(pilot, lambda: "10 references" in screen_text(app), "the verification")
        assert screen.log_name == "views/compacted-002.jsonl"
        screen.query_one("#logs").focus()
        await pilot.press("down")
        await wait_until(
            pilot, lambda: screen.log_name == "branches/main-edit-0.jsonl", "the next log"
        )
        await pilot.pause()
        subject = screen.subject
        assert subject is not None and (subject.log, subject.line) == (screen.log_name, 0)
        assert "branches/main-edit-0:1 · system" in screen_text(app)
