"""SVG snapshots of a context imported from the real gptme fixture ``conv-branches`` (baselines
in ``snapshots/tui/test_reference_snapshots/``): its first snapshot, ``compacted-001``, whose
reference items carry the verifier's badges (one broken by the undo), and ``o`` on the broken
one: what the model was shown beside the original recovered from the undo's branch.

The fixture is copied into the test's folder and imported with ``pact-tui ctx import``; no file
watchers, no animations, every worker finished and the toasts cleared before the picture.
Update with ``pytest tests/tui/test_reference_snapshots.py --snapshot-update`` and look at the
pictures before committing.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Awaitable, Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from pact_tui.app import PactApp
from pact_tui.cli import main
from pact_tui.reference_items import reference_of

from .inspector import inspector, screen_of, settle, wait_until

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gptme"
SIZE = (120, 40)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PACT_TUI_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "conv-branches"
    shutil.copytree(FIXTURES / "conv-branches", folder)
    ws = tmp_path / "ws.pact"
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()) as err:
        code = main(["ctx", "import", str(ws), "conv-branches", "--gptme", str(folder)])
    assert code == 0, err.getvalue()
    return ws


def still(path: Path) -> PactApp:
    app = inspector(path, context="conv-branches")
    app.animation_level = "none"
    return app


def on_the_broken_reference(*keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """The first snapshot shown, its badges judged, the cursor on the item whose reference
    is not ok; then ``keys``."""

    async def run(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await settle(pilot)
        screen = screen_of(app)  # type: ignore[arg-type]
        await pilot.press("left_curly_bracket")
        await settle(pilot)
        await wait_until(pilot, lambda: "ok" in screen.badges.values(), "the badges")
        await wait_until(pilot, lambda: len(set(screen.badges.values())) > 1, "a broken one")
        [broken] = [i for i, status in screen.badges.items() if status != "ok"]
        screen.go_to_item(broken)
        await pilot.pause()
        assert screen.highlighted is not None and screen.highlighted.item is not None
        assert reference_of(screen.highlighted.item) is not None
        await pilot.press(*keys)
        await settle(pilot)
        app.clear_notifications()
        await pilot.pause()

    return run


def test_reference_badges(snap_compare: Any, workspace: Path) -> None:
    """compacted-001's reference items with their verdicts: ✓ ok, and ✗ on the test run the
    undo removed (its range now starts mid-line); the cursor on it."""
    # i: the detail pane hidden (it names the test's folder and the import's time)
    run = on_the_broken_reference("i")
    assert snap_compare(still(workspace), terminal_size=SIZE, run_before=run)


def test_the_original_beside_what_was_shown(snap_compare: Any, workspace: Path) -> None:
    """``o`` on it: the verdict in words, the compacted text the model was shown on the left,
    the original recovered from the undo's branch on the right."""
    run = on_the_broken_reference("o")
    assert snap_compare(still(workspace), terminal_size=SIZE, run_before=run)
