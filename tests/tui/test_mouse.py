"""The mouse: a click selects a tree line (and folds it when it is already selected), a click
on the scrubber jumps through time, a click in the context list switches contexts."""

from __future__ import annotations

from pathlib import Path

from pact_tui.widgets.context_tree import ContextTree
from pact_tui.widgets.scrubber import Scrubber

from .inspector import SIZE, detail_text, inspector, pane_lines, screen_of, settle, status_text


async def test_a_click_selects_the_line_under_it_and_a_second_click_folds(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        tree = screen_of(app).context_tree
        lines = pane_lines(tree)
        line = next(n for n, text in enumerate(lines) if "#concise_instruction" in text)
        # The pane has a border: content line n is drawn one row below the pane's top edge.
        await pilot.click(ContextTree, offset=(8, line + 1))
        await pilot.pause()
        assert tree.cursor_line == line
        assert "Always" in detail_text(app)  # the concise instruction's content

        slot = next(n for n, text in enumerate(lines) if text.startswith("  ▾ (-1,1) slot"))
        await pilot.click(ContextTree, offset=(8, slot + 1))
        await pilot.pause()
        assert tree.cursor_line == slot and pane_lines(tree) == lines  # first click: selects only
        await pilot.click(ContextTree, offset=(8, slot + 1))
        await pilot.pause()
        folded = pane_lines(tree)
        assert folded[slot].startswith("  ▸ (-1,1) slot")
        assert "#concise_instruction" not in "\n".join(folded)


async def test_a_click_on_the_border_changes_nothing(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        tree = screen_of(app).context_tree
        await pilot.press("down", "down")
        await pilot.click(ContextTree, offset=(8, 0))  # the top border, over line 0
        await pilot.pause()
        assert tree.cursor_line == 2


async def test_clicks_on_the_scrubber_travel_to_the_first_snapshot_and_back_to_live(
    demo: Path,
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        scrubber = screen.query_one(Scrubber)
        await pilot.click(Scrubber, offset=(4, 0))  # the track's first cell
        await settle(pilot)
        first = screen.workspace.snapshot_at("researcher", 0)
        assert screen.position == 0
        assert f"PAST  snapshot {first.id}" in status_text(app)
        assert f"EPISODE {first.episode} " in status_text(app)

        await pilot.click(Scrubber, offset=(4 + scrubber._track_width() - 1, 0))  # the end
        await settle(pilot)
        assert screen.position is None
        assert "● LIVE" in status_text(app)


async def test_a_click_in_the_context_list_switches_context(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        # Each context takes two lines (name, then episode and size) under the list's border.
        await pilot.click("#contexts", offset=(3, 3))
        await settle(pilot)
        assert screen.context_name == "writer"
        assert status_text(app).startswith("writer   EPISODE 2")
