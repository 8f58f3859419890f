"""SVG snapshots of the legend, filter mode and the quick filters (baselines in
``snapshots/tui/test_filter_snapshots/``). Drawn as ``test_snapshots.py`` draws the inspector:
the demo workspace with a fixed clock, no watchers, no animations, no toasts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Static

from pact_tui.app import PactApp
from pact_tui.screens.help import HelpScreen

from .inspector import wait_until
from .test_snapshots import SIZE, steps, still


def test_the_legend(snap_compare: Any, demo: Path) -> None:
    """``?``, scrolled to the legend: the tree's glyphs and badges (PERM/TEMP/STCK/CYCL, the
    TTL bar, ↻e7, §1/2), the provider view's, the timeline's."""

    async def run(pilot: Pilot[Any]) -> None:
        app: PactApp = pilot.app  # type: ignore[assignment]
        await steps("question_mark")(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help page")
        titles = [w for w in app.screen.query(".legend-title") if isinstance(w, Static)]
        tree = next(w for w in titles if str(w.render()).startswith("The tree"))
        tree.scroll_visible(top=True, animate=False, immediate=True)
        await pilot.pause()

    assert snap_compare(still(demo), terminal_size=SIZE, run_before=run)


def test_filter_mode(snap_compare: Any, demo: Path) -> None:
    """``[remaining<=1]`` kept, then F: the two items the next advance takes (#current_mode at
    (5,3,0), #checkin at (0,-1,0)) under their turns and slots, and the status line's count."""
    run = steps(selector="[remaining<=1]", feedback="2 matches", then=("enter", "f"))
    assert snap_compare(still(demo), terminal_size=SIZE, run_before=run)


def test_the_quick_filters(snap_compare: Any, demo: Path) -> None:
    """F with no selector typed: the quick filters, each with the selector it stands for."""
    assert snap_compare(still(demo), terminal_size=SIZE, run_before=steps("f"))
