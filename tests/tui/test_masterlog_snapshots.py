"""SVG snapshots of the master-log screen on the real gptme fixture ``conv-branches``
(baselines in ``snapshots/tui/test_masterlog_snapshots/``).

The fixture is copied to a folder of the same name, its index cache kept in the test's folder;
no file watchers, no animations, every worker finished and the toasts cleared before the
picture is taken. Update with ``pytest tests/tui/test_masterlog_snapshots.py
--snapshot-update`` and look at the pictures before committing.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from pact_tui.app import PactApp
from pact_tui.screens.masterlog import MasterLogScreen

from .inspector import inspector, settle, wait_until

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gptme"
SIZE = (120, 40)


@pytest.fixture
def conversation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PACT_TUI_CACHE", str(tmp_path / "cache"))
    target = tmp_path / "conv-branches"
    shutil.copytree(FIXTURES / "conv-branches", target)
    return target


def still(path: Path) -> PactApp:
    app = inspector(path)
    app.animation_level = "none"
    return app


def steps(*keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await wait_until(pilot, lambda: isinstance(app.screen, MasterLogScreen), "the screen")
        await settle(pilot)
        await pilot.pause()
        await pilot.press(*keys)
        await settle(pilot)
        app.clear_notifications()
        await pilot.pause()

    return run


def test_opening_a_conversation(snap_compare: Any, conversation: Path) -> None:
    """The logs with their references by status (one not ok in compacted-001), the view gptme
    has current listed, the master log below, the first message in the detail."""
    assert snap_compare(still(conversation), terminal_size=SIZE, run_before=steps())


def test_the_broken_reference(snap_compare: Any, conversation: Path) -> None:
    """``n``: the mid-line reference under the cursor, its verdict and evidence in words, what
    the model was shown beside the original recovered from the undo branch, its byte range
    highlighted in the master list."""
    assert snap_compare(still(conversation), terminal_size=SIZE, run_before=steps("n"))


def test_search_results(snap_compare: Any, conversation: Path) -> None:
    """``/rounding`` Enter: every log's matching messages, newest first, the match marked."""
    keys = ("slash", *"rounding", "enter")
    assert snap_compare(still(conversation), terminal_size=SIZE, run_before=steps(*keys))
