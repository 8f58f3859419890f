"""SVG snapshots of the provider view's sizes and changes, the layout at 80x24, and the play
confirm (baselines in ``snapshots/tui/test_provider_layout_snapshots/``). Drawn as
``test_snapshots.py`` draws them: the demo workspace, a fixed clock, no watchers, no toasts.
Update with ``pytest tests/tui/test_provider_layout_snapshots.py --snapshot-update`` and look
at the new SVGs before committing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .test_snapshots import steps, still

SMALL = (80, 24)


def test_the_provider_view_with_sizes_and_changes(snap_compare: Any, demo: Path) -> None:
    """A message and an advance, then ``v``: each message's coordinates, characters and ~tokens;
    the new message and the rehydrated mode marked + (since e6); the totals on the border."""
    run = steps("u", *"Any news on compaction?", "enter", "full_stop", "v", "end")
    assert snap_compare(still(demo), terminal_size=(120, 40), run_before=run)


def test_the_layout_at_80x24(snap_compare: Any, demo: Path) -> None:
    """80 columns: the context list hidden (b shows it), the tree most of the width with rows
    ending in …, the detail of the system prompt wrapped on words; the path at the right."""
    run = steps("down", "down")
    assert snap_compare(still(demo), terminal_size=SMALL, run_before=run)


def test_the_provider_view_zoomed_at_80x24(snap_compare: Any, demo: Path) -> None:
    """``v`` then ``w``: the provider view takes the whole width, the totals below it."""
    assert snap_compare(still(demo), terminal_size=SMALL, run_before=steps("v", "w"))


def test_play_at_live_asks_first(snap_compare: Any, demo: Path) -> None:
    """``p`` at live: the question names the context it would write to, Cancel focused."""
    assert snap_compare(still(demo), terminal_size=SMALL, run_before=steps("p"))
