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
        assert notifications(app)[-1].startswith(f"Diff: diff base set to {base.id}")
        await pilot.press("right_square_bracket", "right_square_bracket")

        assert screen.comparison is not None and screen.comparison.diff == expected
        changed = {change.id for change in expected.changed}
        tree = screen.context_tree
        assert tree.marks == {
            **dict.fromkeys(expected.added, "added"),
            **dict.fromkeys(changed, "changed"),
        }
        counts = f"+{len(expected.added)} -{len(expected.removed)} ~{len(changed)}"
        assert f"diff {base.id} ↔ {shown.id}  {counts}" in status_text(app)
        scrubber = screen.query_one(Scrubber).render_line(0).text
        assert "A" in scrubber and scrubber.index("A") < scrubber.index("●")

        # the marks are drawn: an added line, a changed line and a plain line differ
        await pilot.press("home")  # the cursor, on top, is on none of them
        added = _background(tree, _line_of(tree, expected.added[0]))
        moved = _background(tree, _line_of(tree, next(iter(changed))))
        plain = _background(tree, _line_of(tree, "n4"))  # the system prompt, unchanged
        assert len({added, moved, plain}) == 3

        # removed items are gone from the newer tree: the detail lists them
        detail = detail_text(app)
        assert f"diff {base.id} → {shown.id}" in detail
        for item_id in expected.removed:
            assert f"- {item_id} (" in detail


async def test_the_detail_names_what_changed_on_a_changed_node(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("left_curly_bracket", "d", "right_square_bracket", "right_square_bracket")
        assert screen.comparison is not None
        change = screen.comparison.diff.changed[0]
        assert change.depth is not None
        before, after = change.depth
        tree = screen.context_tree
        await pilot.press("home", *["down"] * _line_of(tree, change.id))
        assert tree.current_row is not None and tree.current_row.node_id == change.id
        detail = detail_text(app)
        assert "changed in this diff" in detail
        assert f"depth {before} → {after}" in detail


async def test_d_again_clears_the_diff(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("left_curly_bracket", "d", "right_square_bracket")
        assert screen.context_tree.marks
        await pilot.press("d")
        assert screen.diff_base is None and screen.comparison is None
        assert screen.context_tree.marks == {}
        assert "diff" not in status_text(app)
        assert "diff" not in detail_text(app).split("\n")[0]
        assert notifications(app)[-1] == "diff cleared"
        assert "A" not in screen.query_one(Scrubber).render_line(0).text


async def test_a_diff_with_now_as_its_base_marks_what_the_older_view_lost(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("d")  # the base is now, live
        assert "diff now ↔ now  +0 -0 ~0" in status_text(app)
        await pilot.press("left_square_bracket")  # the newest snapshot, the same state
        newest = screen.workspace.snapshots("researcher")[-1]
        assert f"diff now ↔ {newest.id}  +0 -0 ~0" in status_text(app)
        await pilot.press("left_square_bracket")
        assert screen.comparison is not None and screen.comparison.diff.changed
        # the newer end (now) is the base: the shown, older tree marks what it lost
        shown_marks = set(screen.context_tree.marks.values())
        assert shown_marks <= {"removed", "changed"} and "changed" in shown_marks


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
        assert screen.comparison is None and screen.context_tree.marks == {}
        assert "diff" not in status_text(app)
