"""A diff people can read (issue 14, section 2): a glyph column beside the colours, removed
items as ghost rows where they were, changed rows that say what changed, a changed text word
by word in the detail, and ``d`` at live holding the state it was pressed on."""

from __future__ import annotations

from pathlib import Path

from engine.context.commands import MessageCommand, UpdateCommand
from engine.workspace import Workspace
from pact_tui.app import PactApp
from pact_tui.screens.context import ContextScreen
from pact_tui.screens.reader import ReaderScreen
from pact_tui.tree_layout import Row
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


def _drawn(pane: LinePane, line: int) -> str:
    """A line as the pane draws it (scrolled into view first)."""
    pane.scroll_to(y=max(0, line - 2), animate=False, immediate=True)
    return pane.render_line(line - int(pane.scroll_offset.y)).text


async def _put_cursor_on(pilot: object, pane: LinePane, node_id: str) -> Row:
    pane.jump_to(_line_of(pane, node_id))
    await pilot.pause()  # type: ignore[attr-defined]
    row = pane.current_row
    assert row is not None and row.node_id == node_id
    return row


async def _diff_of_the_last_advance(app: PactApp) -> ContextScreen:
    """The demo's researcher: the snapshot before its last advance as the base, the newest
    one shown (current_mode rehydrated, the alert's stage moved on, n57 gone)."""
    screen = screen_of(app)
    screen.go_to(screen.workspace.snapshot_count("researcher") - 2)
    await settle(app)  # type: ignore[arg-type]
    return screen


async def test_changed_added_and_removed_rows_carry_a_glyph_of_their_own(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        base, shown = screen.workspace.snapshots("researcher")[-2:]
        expected = await screen.workspace.diff("researcher", base.id, shown.id)
        assert expected.added and expected.removed and expected.changed
        await pilot.press("left_square_bracket", "left_square_bracket", "d")
        await pilot.press("right_square_bracket")
        await settle(pilot)
        tree = screen.context_tree
        for item_id in expected.added:
            assert _drawn(tree, _line_of(tree, item_id)).startswith("+ ")
        for item_id in expected.removed:  # a ghost, where it was
            assert _drawn(tree, _line_of(tree, item_id)).startswith("− ")
        for change in expected.changed:
            assert _drawn(tree, _line_of(tree, change.id)).startswith("~ ")
        unchanged = screen.workspace.context("researcher").select("#system_prompt")[0]
        assert _drawn(tree, _line_of(tree, unchanged.id)).startswith("  ")
        # the provider view has the same column
        await pilot.press("v")
        await settle(pilot)
        provider = screen.provider

        def marked() -> bool:  # drawn once the view shown is laid out and painted
            try:
                lines = [_drawn(provider, _line_of(provider, item)) for item in expected.added]
            except StopIteration:  # not laid out yet
                return False
            return all(line.startswith("+ ") for line in lines)

        await wait_until(pilot, marked, "the provider view's added rows marked +")


async def test_a_changed_row_says_what_changed_as_the_engine_diff_says(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        snapshots = screen.workspace.snapshots("researcher")
        base, shown = snapshots[0], snapshots[2]
        expected = await screen.workspace.diff("researcher", base.id, shown.id)
        await pilot.press("left_curly_bracket", "d", "right_square_bracket")
        await pilot.press("right_square_bracket")
        await settle(pilot)
        tree = screen.context_tree
        for change in expected.changed:
            assert change.depth is not None and not change.fields  # moved with its turn
            before, after = change.depth
            line = _drawn(tree, _line_of(tree, change.id))
            assert line.startswith("↓ ") and f"depth {before}→{after}" in line
        # a change of fields, with their values, and of offset
        base, shown = snapshots[-2:]
        expected = await screen.workspace.diff("researcher", base.id, shown.id)
        (change,) = expected.changed
        assert change.offset is not None and "ttl" in change.fields
        old = (await screen.workspace.view("researcher", base.id)).find(change.id)
        new = (await screen.workspace.view("researcher", shown.id)).find(change.id)
        assert old is not None and new is not None
        # the newest snapshot's step: live, back twice, mark the base, forward to the newest
        await pilot.press("d", "right_curly_bracket", *["left_square_bracket"] * 2, "d")
        await pilot.press("right_square_bracket", "w")  # zoomed: the whole row in view
        await settle(pilot)
        line = _drawn(tree, _line_of(tree, change.id))
        assert line.startswith("~ ")
        ttl = f"ttl {old.item.ttl or '∞'}→{new.item.ttl or '∞'}"
        assert f"offset {change.offset[0]}→{change.offset[1]} · {ttl}" in line


async def test_a_removed_item_is_a_ghost_where_it_was(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        base, shown = screen.workspace.snapshots("researcher")[-2:]
        expected = await screen.workspace.diff("researcher", base.id, shown.id)
        (gone,) = expected.removed
        was = (await screen.workspace.view("researcher", base.id)).find(gone)
        assert was is not None and was.depth is not None and was.position is not None
        base_view = await screen.workspace.view("researcher", base.id)
        base_turn = base_view.turn_at(was.depth)
        assert base_turn is not None
        await pilot.press("left_square_bracket", "left_square_bracket", "d")
        await pilot.press("right_square_bracket")
        await settle(pilot)
        tree = screen.context_tree
        line = _line_of(tree, gone)
        ghost = tree.layout_model.row(line)
        assert ghost.kind == "ghost" and ghost.item is None and ghost.ghost is not None
        # in its own turn and slot, among its old neighbours
        assert ghost.turn.seq == base_turn.seq
        assert ghost.slot is not None and ghost.slot.position == was.position
        above = tree.layout_model.row(line - 1)
        assert above.kind == "slot" and above.slot is not None
        assert above.slot.position == was.position  # it was the first of its slot
        drawn = _drawn(tree, line)
        assert f"({was.depth},{was.position},{was.offset})" in drawn
        assert " expired (ttl " in drawn  # why it went, from the changelog (test_changelog)

        # the detail says what it was and where; it is never a command's target
        row = await _put_cursor_on(pilot, tree, gone)
        detail = " ".join(detail_text(app).split())  # as said, however the pane wraps it
        assert f"− removed: in {base.id} (base), not in {shown.id}" in detail
        assert f"was at ({was.depth},{was.position},{was.offset})" in detail
        await pilot.press("enter")  # folds nothing, reads nothing
        assert tree.layout_model.row(line) == row and not isinstance(app.screen, ReaderScreen)
        assert screen.highlighted == row


async def test_d_at_live_holds_the_newest_snapshot_as_live_moves_on(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        newest = screen.workspace.snapshots("researcher")[-1]
        await pilot.press("d")
        assert notifications(app)[-1].startswith(
            f"Diff: diff base set to snapshot {newest.id}, the newest"
        )
        await pilot.press("full_stop")
        await settle(pilot)
        status = status_text(app)
        assert f"diff {newest.id} (base) → live" in status
        expected = await screen.workspace.diff("researcher", newest.id, None)
        assert screen.comparison is not None
        assert screen.comparison.diff.to_diff() == expected
        assert expected.changed or expected.added or expected.removed  # the advance shows
        scrubber = screen.query_one(Scrubber).render_line(0).text
        assert "A" in scrubber  # the base, on its snapshot's tick
        # header and detail name the two sides in the same order, with the same words
        label = screen.comparison.label
        detail = " ".join(detail_text(app).split())
        assert f"diff {label}" in status and f"diff {label}" in detail
        await pilot.press("full_stop")  # and again: the base stays where it was
        await settle(pilot)
        assert f"diff {newest.id} (base) → live" in status_text(app)
        assert screen.diff_base is not None and screen.diff_base.snapshot_id == newest.id


async def test_d_at_live_with_no_snapshot_holds_the_state_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "fresh.pact"
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("fresh")
        await workspace.add_message("fresh", "user", "hello")
    app = inspector(path)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("d")
        assert "held: it does not move" in notifications(app)[-1]
        assert "diff e0 held (base) → live  +0 −0 ~0" in status_text(app)
        screen.run_command(MessageCommand(role="user", text="again"))
        await settle(pilot)
        assert "diff e0 held (base) → live  +1 −0 ~0 ↓1" in status_text(app)
        assert "diff e0 held (base) → live" in " ".join(detail_text(app).split())


async def test_a_changed_text_is_shown_word_by_word_side_by_side(tmp_path: Path) -> None:
    path = tmp_path / "texts.pact"
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("notes")
        await workspace.add_message("notes", "user", "hello")
        await workspace.insert("notes", "d0, 1, 0", {"content": "the quick brown fox jumps"})
    app = inspector(path, context="notes")
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("d")
        update = UpdateCommand.model_validate(
            {"selector": "d0, 1, 0", "component": {"content": "the quick red fox jumps"}}
        )
        screen.run_command(update)
        await settle(pilot)
        item = screen.workspace.context("notes").select("d0, 1, 0")[0]
        line = _drawn(screen.context_tree, _line_of(screen.context_tree, item.id))
        assert line.startswith("~ ") and "content" in line
        await _put_cursor_on(pilot, screen.context_tree, item.id)
        detail = detail_text(app)
        assert "content changed, word by word" in detail
        # side by side, the older side on the left, each under its side's name
        lines = detail.split("\n")
        titles = next(i for i, text in enumerate(lines) if text.startswith("e0 held (base)"))
        middle = lines[titles].index("live")
        table = lines[titles + 1 : titles + 4]
        assert any("brown" in text[:middle] for text in table)
        assert any("red" in text[middle:] for text in table)
        assert not any("red" in text[:middle] or "brown" in text[middle:] for text in table)
