"""Scrubbing through snapshots: back, forward, the edges, return to live, and the past is
read-only (a command there is refused with a notification and changes nothing)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pact_tui.screens.prompt import PromptScreen
from pact_tui.widgets.scrubber import Scrubber

from .inspector import (
    SIZE,
    inspector,
    notifications,
    screen_of,
    screen_text,
    settle,
    status_text,
    wait_until,
)


async def test_step_back_and_forward_through_the_snapshots(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        snapshots = screen.workspace.snapshots("researcher")
        assert len(snapshots) == 7

        await pilot.press("left_square_bracket")
        newest = snapshots[-1]
        assert screen.position == len(snapshots) - 1
        status = status_text(app)
        assert f"PAST  snapshot {newest.id} ({newest.trigger}) · read-only" in status
        assert "LIVE" not in status
        assert screen.context_tree.border_title is not None
        assert "PAST · snapshot " + newest.id in screen.context_tree.border_title
        assert " 7/7 · ep 6 · episode" in str(screen.query_one(Scrubber).render_line(0).text)

        await pilot.press("left_square_bracket", "left_square_bracket", "left_square_bracket")
        shown = snapshots[3]
        assert screen.position == 3
        assert f"EPISODE {shown.episode}" in status_text(app)
        assert screen.view is not None and screen.view.current_episode == shown.episode

        await pilot.press("right_square_bracket")
        assert screen.position == 4
        await pilot.press("left_curly_bracket")
        assert screen.position == 0 and "EPISODE 1" in status_text(app)
        await pilot.press("left_square_bracket")  # there is nothing older: stays
        assert screen.position == 0
        screen.action_last_snapshot()  # the palette's "Last snapshot" (} is live)
        assert screen.position == len(snapshots) - 1
        await pilot.press("right_square_bracket")  # past the newest is live again
        assert screen.position is None
        assert "● LIVE" in status_text(app)


async def test_the_live_key_returns_to_live_from_anywhere_in_the_past(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("left_curly_bracket")
        assert "EPISODE 1" in status_text(app)
        await pilot.press("right_curly_bracket")
        assert screen.position is None
        assert "EPISODE 6" in status_text(app) and "● LIVE" in status_text(app)
        assert screen.context_tree.border_title == "context tree · live"


@pytest.mark.parametrize(
    "keys",
    [("full_stop",), ("u",), ("a",), ("s",)],
    ids=["advance", "user message", "assistant message", "seal"],
)
async def test_a_command_in_the_past_is_refused_and_changes_nothing(
    demo: Path, keys: tuple[str, ...]
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = screen_of(app)
        head = screen.workspace.head
        await pilot.press("left_square_bracket", "left_square_bracket")
        position = screen.position
        await pilot.press(*keys)
        await settle(pilot)
        assert not isinstance(app.screen, PromptScreen)  # no prompt for a refused command
        assert screen.workspace.head == head
        assert screen.position == position
        assert notifications(app) == [
            "Read-only: You are looking at the past, which is read-only. Press } to return to live."
        ]
        await wait_until(
            pilot, lambda: "You are looking at the past" in screen_text(app), "the toast"
        )


@pytest.mark.parametrize("per_cell", [1, 2, 5])
async def test_a_scrubber_with_more_snapshots_than_cells_ticks_every_cell(
    demo: Path, per_cell: int
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE):
        scrubber = screen_of(app).query_one(Scrubber)
        width = scrubber._track_width()
        shown = screen_of(app).shown
        assert shown is not None and shown.live
        scrubber.shown = replace(shown, snapshots=per_cell * width)
        track = scrubber.render_line(0).text[4 : 4 + width]
        assert track == "┼" * (width - 1) + "●"
        assert scrubber._label() == f" LIVE · {per_cell * width} snapshots"
        scrubber.shown = replace(shown, snapshots=3)  # few snapshots: ticks only where they fall
        assert scrubber.render_line(0).text[4 : 4 + width].count("┼") == 3
