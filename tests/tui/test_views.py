"""The panes: the provider view, folding, switching contexts (list and palette), the help
screen, and a terminal too small to draw them."""

from __future__ import annotations

from pathlib import Path

from textual.command import CommandPalette
from textual.widgets import ContentSwitcher

from pact_tui.app import TooSmallScreen
from pact_tui.screens.help import HelpScreen

from .inspector import (
    SIZE,
    inspector,
    pane_lines,
    screen_of,
    screen_text,
    settle,
    status_text,
    wait_until,
)


async def test_v_toggles_the_provider_view(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("v")
        assert screen.query_one(ContentSwitcher).current == "provider"
        assert screen.active_pane is screen.provider and screen.provider.has_focus
        assert screen.provider.border_title == "provider rendering · live"
        # Its rows are laid out once it has a size (after the frame that shows it).
        await settle(pilot)
        await wait_until(pilot, lambda: any(pane_lines(screen.provider)), "the provider's rows")
        lines = pane_lines(screen.provider)
        # The glyph column (nothing changed since e5 for these), coordinates, role, sizes.
        assert lines[0].startswith("  (-1,0,0)  system    37 ch ~10 tok │ You are a careful")
        assert lines[1].startswith("  (-1,1,0)  system    17 ch  ~5 tok │ Always be concise")
        assert lines[2].startswith("  (5,0,0)   user      59 ch ~15 tok │ Find me recent pape…")
        assert not any("▾" in line for line in lines)  # no tree headers here

        await pilot.press("v")
        assert screen.query_one(ContentSwitcher).current == "tree"
        assert pane_lines(screen.context_tree)[0].startswith("▾ system  d-1")


async def test_z_folds_every_history_turn_and_Z_unfolds(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        tree = screen_of(app).context_tree
        unfolded = pane_lines(tree)
        assert "    (4,0,0)    text PERM" in "\n".join(unfolded)

        await pilot.press("z")
        folded = [line for line in pane_lines(tree) if line]
        for depth in range(1, 6):
            assert any(line.startswith(f"▸ turn d{depth} ") for line in folded), depth
        assert not any(line.startswith("    (4,") for line in folded)
        assert any(line.startswith("▾ turn d0 ") for line in folded)  # the active turn stays
        assert any(line.startswith("▾ system") for line in folded)

        await pilot.press("Z")
        assert pane_lines(tree) == unfolded


async def test_enter_folds_the_turn_under_the_cursor_and_left_right_fold_unfold(
    demo: Path,
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        tree = screen_of(app).context_tree
        assert pane_lines(tree)[0].startswith("▾ system  d-1   2 items")
        await pilot.press("enter")
        lines = pane_lines(tree)
        assert lines[0].startswith("▸ system  d-1   2 items")
        assert lines[1].startswith("▾ turn d5 ")
        await pilot.press("right")
        assert pane_lines(tree)[1].startswith("  ▾ (-1,0) message")
        await pilot.press("left")
        assert pane_lines(tree)[1].startswith("▾ turn d5 ")


async def test_the_context_list_switches_contexts(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("c")
        assert screen.query_one("#contexts").has_focus
        await pilot.press("down", "enter")
        await settle(pilot)
        assert screen.context_name == "writer"
        assert status_text(app).startswith("writer   EPISODE 2")
        assert screen.context_tree.has_focus
        text = "\n".join(pane_lines(screen.context_tree))
        assert '#system_prompt "You wri' in text  # the writer's, cut at the pane's edge
        assert "#user_prefs" not in text


async def test_the_palette_switches_contexts(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"context writer")
        await wait_until(
            pilot, lambda: "Switch to context writer" in screen_text(app), "the palette's hit"
        )
        assert "episode 2, 7 items" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot)
        assert screen.context_name == "writer"
        assert status_text(app).startswith("writer   EPISODE 2")


async def test_the_palette_lists_the_inspector_commands(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p", *"fold all")
        await wait_until(
            pilot, lambda: "Fold all history turns" in screen_text(app), "the palette's hit"
        )
        await pilot.press("enter")
        await settle(pilot)
        lines = pane_lines(screen_of(app).context_tree)
        assert any(line.startswith("▸ turn d5 ") for line in lines)


async def test_question_mark_opens_the_help_screen_and_escape_closes_it(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        assert "pact-tui keys" in text
        assert "advance one episode (expire, rehydrate)" in text
        assert "one step back (a snapshot, an event)" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_a_terminal_too_small_at_start_shows_a_message_until_it_grows(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=(70, 16)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, TooSmallScreen)
        text = screen_text(app)
        assert "The terminal is 70x16; pact-tui needs at least 80x20." in text
        assert "EPISODE" not in text

        await pilot.resize_terminal(*SIZE)
        await pilot.pause()
        assert not isinstance(app.screen, TooSmallScreen)
        assert "researcher   EPISODE 6" in screen_text(app)


async def test_shrinking_the_terminal_covers_the_app_and_growing_uncovers_it(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.resize_terminal(70, 16)
        await pilot.pause()
        assert isinstance(app.screen, TooSmallScreen)
        assert "The terminal is 70x16; pact-tui needs at least 80x20." in screen_text(app)

        await pilot.resize_terminal(90, 18)  # wider, still too short: the message follows
        await pilot.pause()
        assert "The terminal is 90x18;" in screen_text(app)

        await pilot.resize_terminal(*SIZE)
        await pilot.pause()
        assert not isinstance(app.screen, TooSmallScreen)
        assert "researcher   EPISODE 6" in screen_text(app)


async def test_the_palette_travels_to_the_first_snapshot(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        assert screen.position is None  # live
        await pilot.press("ctrl+p", *"first snapshot")
        await wait_until(pilot, lambda: "First snapshot" in screen_text(app), "the palette's hit")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.position == 0, "the oldest snapshot")
        assert "PAST" in str(screen.context_tree.border_title)
