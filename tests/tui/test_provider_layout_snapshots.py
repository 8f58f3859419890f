"""SVG snapshots of the provider view's sizes and changes, the layout at 80x24, and the play
confirm (baselines in ``snapshots/tui/test_provider_layout_snapshots/``). Drawn as
``test_snapshots.py`` draws them: the demo workspace, a fixed clock, no watchers, no toasts.
Update with ``pytest tests/tui/test_provider_layout_snapshots.py --snapshot-update`` and look
at the new SVGs before committing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from .inspector import screen_of, settle, wait_until
from .test_snapshots import steps, still

SMALL = (80, 24)


def test_the_provider_view_with_sizes_and_changes(snap_compare: Any, demo: Path) -> None:
    """A message and an advance, then ``v``: each message's coordinates, characters and ~tokens;
    the new message and the rehydrated mode marked + (since e6); the totals on the border.
    ``end`` waits for the commands: typed ahead, it would go to the end of the view before
    them, and the cursor stays on its row when they land (a slow run drew that)."""
    run = steps("u", *"Any news on compaction?", "enter", "full_stop", "v", last=("end",))
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


def test_a_fork_in_the_context_list_and_its_notice(snap_compare: Any, demo: Path) -> None:
    """n41 forked (``K``, the name offered): the fork shown live at episode 2, marked ⑂ in the
    list with where it came from, and the notice saying so (its toast kept: 10 s)."""

    async def run(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await pilot.pause()
        await pilot.press("left_curly_bracket", "right_square_bracket", "right_square_bracket")
        await settle(pilot)
        await pilot.press("K", "enter")
        await settle(pilot)
        await wait_until(
            pilot, lambda: screen_of(app).context_name == "researcher-fork", "the fork"
        )
        await pilot.pause()

    assert snap_compare(still(demo), terminal_size=(120, 40), run_before=run)
