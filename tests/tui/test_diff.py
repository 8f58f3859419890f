"""Diffs: mark a base with d, move, see added and changed nodes marked in the tree and the
changed fields in the detail pane; d again clears."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.style import Style

from engine.workspace import Workspace
from pact_tui.widgets.context_tree import LinePane
from pact_tui.widgets.scrubber import Scrubber

from .inspector import (
    SIZE,
    detail_text,
    inspector,
    notifications,
    screen_of,
    settle,
    status_text,
    wait_until,
)


def _line_of(pane: LinePane, node_id: str) -> int:
    layout = pane.layout_model
    return next(y for y in range(layout.line_count) if layout.row(y).node_id == node_id)


def _background(pane: LinePane, line: int) -> Style:
    """The background a line is drawn with (the first cell's)."""
    segment = pane.render_line(line - int(pane.scroll_offset.y)).__iter__().__next__()
    assert segment.style is not None
    return Style(bgcolor=segment.style.bgcolor)


def _glyph(pane: LinePane, line: int) -> str:
    """The glyph column of a line, as drawn."""
    pane.jump_to(line)
    return pane.render_line(line - int(pane.scroll_offset.y)).text[:2]


async def test_a_diff_marks_added_and_changed_nodes_and_lists_the_removed(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        snapshots = screen.workspace.snapshots("researcher")
        base, shown = snapshots[0], snapshots[2]
        expected = await screen.workspace.diff("researcher", base.id, shown.id)
        assert expected.added and expected.removed and expected.changed

        await pilot.press("left_curly_bracket", "d")
        assert screen.diff_base is not None and screen.diff_base.snapshot_id == base.id
        assert notifications(app)[-1].startswith(f"Diff: diff base set to snapshot {base.id}")
        await pilot.press("right_square_bracket", "right_square_bracket")
        await settle(pilot)

        assert screen.comparison is not None and screen.comparison.diff.to_diff() == expected
        tree = screen.context_tree
        assert tree.marks == {}  # no selector: the diff's marks come with the comparison
        added, removed, changed, moved = screen.comparison.diff.tally
        assert (added, removed, changed + moved) == expected.counts
        counts = f"+{added} −{removed} ~{changed}" + (f" ↓{moved}" if moved else "")
        assert f"diff {base.id} (base) → {shown.id}  {counts}" in status_text(app)
        scrubber = screen.query_one(Scrubber).render_line(0).text
        assert "A" in scrubber and scrubber.index("A") < scrubber.index("●")

        # the marks are drawn, with a glyph each: an added line, a ghost and a plain line
        await pilot.press("home")  # the cursor, on top, is on none of them
        added_line = _line_of(tree, expected.added[0])
        ghost_line = _line_of(tree, expected.removed[0])
        plain_line = _line_of(tree, "n4")  # the system prompt, unchanged
        backgrounds = {
            _background(tree, added_line),
            _background(tree, ghost_line),
            _background(tree, plain_line),
        }
        assert len(backgrounds) == 3
        assert _glyph(tree, added_line) == "+ "
        assert _glyph(tree, ghost_line) == "− "
        assert _glyph(tree, plain_line) == "  "
        for change in expected.changed:  # every one only moved deeper, with its turn
            assert _glyph(tree, _line_of(tree, change.id)) == "↓ "

        # removed items are drawn where they were, and the detail lists them
        detail = detail_text(app)
        assert f"diff {base.id} (base) → {shown.id}" in detail
        for item_id in expected.removed:
            assert f"− {item_id} (" in detail
            assert tree.layout_model.row(_line_of(tree, item_id)).kind == "ghost"


async def test_the_detail_names_what_changed_on_a_changed_node(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("left_curly_bracket", "d", "right_square_bracket", "right_square_bracket")
        await settle(pilot)
        assert screen.comparison is not None
        change = screen.comparison.diff.to_diff().changed[0]
        assert change.depth is not None
        before, after = change.depth
        tree = screen.context_tree
        await pilot.press("home", *["down"] * _line_of(tree, change.id))
        assert tree.current_row is not None and tree.current_row.node_id == change.id
        # The detail follows the cursor once the screen has handled its Highlighted message.
        await wait_until(pilot, lambda: "changed in this diff" in detail_text(app), "the change")
        assert f"depth {before} → {after}" in detail_text(app)


async def test_d_again_clears_the_diff(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("left_curly_bracket", "d", "right_square_bracket")
        await settle(pilot)
        assert screen.context_tree.comparison is not None
        await pilot.press("d")
        assert screen.diff_base is None and screen.comparison is None
        assert screen.context_tree.comparison is None
        assert "diff" not in status_text(app)
        assert "diff" not in detail_text(app).split("\n")[0]
        assert not any(r.kind == "ghost" for r in screen.context_tree.layout_model.rows(0, 99))
        assert notifications(app)[-1] == "diff cleared"
        assert "A" not in screen.query_one(Scrubber).render_line(0).text


async def test_a_diff_with_live_as_its_base_marks_what_the_older_view_lost(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        newest = screen.workspace.snapshots("researcher")[-1]  # live is as it was then
        await pilot.press("d")
        assert f"diff {newest.id} (base) → live  +0 −0 ~0" in status_text(app)
        await pilot.press("left_square_bracket")  # the newest snapshot, the same state
        assert f"diff {newest.id} (base) → {newest.id}  +0 −0 ~0" in status_text(app)
        await pilot.press("left_square_bracket")
        await settle(pilot)
        older = screen.workspace.snapshots("researcher")[-2]
        assert f"diff {older.id} → {newest.id} (base)" in status_text(app)
        comparison = screen.comparison
        assert comparison is not None and not comparison.shown_is_newer
        # the newer end is the base: the shown, older tree marks what it lost, and draws
        # what the newer one gained as ghosts
        expected = await screen.workspace.diff("researcher", older.id, newest.id)
        assert comparison.diff.to_diff() == expected
        tree = screen.context_tree
        for item_id in expected.removed:
            assert _glyph(tree, _line_of(tree, item_id)) == "− "
        for item_id in expected.added:
            line = _line_of(tree, item_id)
            assert tree.layout_model.row(line).kind == "ghost" and _glyph(tree, line) == "+ "


async def test_switching_context_leaves_the_diff_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A diff against an old snapshot (rebuilt in a worker, which starts after the switch) is
    not carried over to the next context, whose ids would collide with the old one's."""
    path = tmp_path / "two.pact"
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        for name in ("a", "b"):
            await workspace.create_context(name)
            for number in range(6):
                await workspace.add_message(name, "user", f"{name}{number}")
                await workspace.insert(name, "d0, 1, 0", {"content": f"note {number}"})
                await workspace.advance(name)
    app = inspector(path, context="a")
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        # Every snapshot as if long ago: rebuilt, in a worker.
        monkeypatch.setattr(screen.workspace, "snapshot_in_memory", lambda name, sid: None)
        await pilot.press("left_curly_bracket", "d")  # the base, in the past
        await wait_until(pilot, lambda: screen.comparison is not None, "the diff")
        screen.switch_context("b")
        await settle(pilot)
        assert screen.context_name == "b" and screen.diff_base is None
        assert screen.comparison is None and screen.context_tree.comparison is None
        assert "diff" not in status_text(app)
