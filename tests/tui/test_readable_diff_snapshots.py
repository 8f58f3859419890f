"""SVG snapshots of a readable diff (baselines in
``snapshots/tui/test_readable_diff_snapshots/``): the glyph column, ghost rows where removed
items were, changed rows saying what changed. Update with ``pytest
tests/tui/test_readable_diff_snapshots.py --snapshot-update`` and look at them first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from .inspector import screen_of, settle
from .test_snapshots import SIZE, still


def on_the_ghost_of_the_last_advance(pilot: Pilot[Any]) -> Any:
    async def run(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await pilot.pause()
        # The snapshot before the demo's last advance as the base, the newest shown:
        # current_mode rehydrated (its old instance a ghost in its slot), the alert's stage on.
        await pilot.press("left_square_bracket", "left_square_bracket", "d")
        await pilot.press("right_square_bracket")
        await settle(pilot)
        tree = screen_of(app).context_tree  # type: ignore[arg-type]
        layout = tree.layout_model
        ghost = next(y for y in range(layout.line_count) if layout.row(y).kind == "ghost")
        tree.jump_to(ghost)
        await settle(pilot)
        app.clear_notifications()
        await pilot.pause()

    return run(pilot)


def test_a_diff_with_a_ghost_row(snap_compare: Any, demo: Path) -> None:
    """n61 (base) → n64: ``+`` the new current_mode, ``−`` its old instance struck through
    where it was (slot (5,3)), ``~`` the alert with ``offset 1→-1 · ttl …``; the cursor on the
    ghost, which the detail describes; the status and the detail name the sides alike."""
    assert snap_compare(
        still(demo), terminal_size=SIZE, run_before=on_the_ghost_of_the_last_advance
    )


def test_a_diff_across_odi_moves(snap_compare: Any, demo: Path) -> None:
    """n25 (base) → n41: turns pushed two deeper read ``↓ depth 1→3``; two removed items
    as ghosts, one in a slot its turn no longer has."""

    async def run(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await pilot.press("left_curly_bracket", "d", "right_square_bracket")
        await pilot.press("right_square_bracket", "home")
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(still(demo), terminal_size=SIZE, run_before=run)


def test_the_changelog_pane(snap_compare: Any, demo: Path) -> None:
    """``C`` at live, after a user message: the live step (the message, and ODI pushing every
    turn one deeper, one line with its moved items under it), then the step that made the
    newest snapshot (current_mode expired and rehydrated, the alert's stage on); the tree's
    lower border says the live step in one line."""

    async def run(pilot: Pilot[Any]) -> None:
        from engine.context.commands import MessageCommand

        await pilot.pause()
        screen = screen_of(pilot.app)  # type: ignore[arg-type]
        screen.run_command(MessageCommand(role="user", text="Which survey is newest?"))
        await settle(pilot)
        await pilot.press("C")
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(still(demo), terminal_size=SIZE, run_before=run)
