"""Filter mode (F, quick filters), follow mode (f), going to a place (:), the cursor kept on its
item as the context moves, the notice when that item goes, the selector bar's time-qualified
selectors read only on Enter, and the legend and tooltips that say what the badges mean."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Label

from engine.context import Context, ContextView, SequentialIds, SteppingClock, TextContent
from engine.workspace import Workspace
from pact_tui.filtered_layout import FilteredLayout
from pact_tui.jump import JumpError, Place, find_place
from pact_tui.screens.choose import ChooseScreen
from pact_tui.screens.context import QUICK_FILTERS, ContextScreen
from pact_tui.screens.help import HelpScreen
from pact_tui.screens.prompt import PromptScreen
from pact_tui.tree_layout import Row, TreeLayout
from pact_tui.widgets.context_tree import ContextTree, LinePane

from .inspector import (
    SIZE,
    inspector,
    notifications,
    pane_lines,
    screen_of,
    screen_text,
    settle,
    status_text,
    wait_until,
)


def _rows(pane: LinePane) -> list[Row]:
    layout = pane.layout_model
    return [layout.row(line) for line in range(layout.line_count)]


def _expected_rows(view: ContextView, selector: str) -> tuple[set[str], set[int], set[tuple]]:
    """What filter mode must show for ``selector``: its matched items, and the turns and slots
    above them (counted from ``view.select``, not from the layout)."""
    matches = view.select(selector)
    items = {node.id for node in matches if node.item is not None}
    turns = {node.depth for node in matches if node.depth is not None}
    slots = {(node.depth, node.position) for node in matches if node.position is not None}
    return items, turns, slots


def _drawn_rows(pane: LinePane) -> tuple[set[str], set[int], set[tuple]]:
    rows = _rows(pane)
    items = {row.node_id for row in rows if row.kind == "item"}
    turns = {row.depth for row in rows if row.kind in ("turn", "system")}
    slots = {(row.depth, row.slot.position) for row in rows if row.kind == "slot" and row.slot}
    return items, turns, slots


async def _select(pilot: Pilot[Any], text: str) -> ContextScreen:
    """Type ``text`` in the selector bar and keep it (Enter)."""
    screen = screen_of(pilot.app)  # type: ignore[arg-type]
    await pilot.press("slash", *text, "enter")
    await wait_until(pilot, lambda: screen.selector == text, f"the selector {text!r}")
    return screen


def _cursor_row(screen: ContextScreen) -> Row | None:
    return screen.active_pane.current_row


# -- filter mode ----------------------------------------------------------------------------------
@pytest.mark.parametrize("selector", ["+notes, #alert", "[remaining<=1]", "^seq", "#user_prefs"])
async def test_the_filter_shows_exactly_the_matches_and_their_turns_and_slots(
    demo: Path, selector: str
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _select(pilot, selector)
        tree = screen.context_tree
        every_row = tree.line_count
        await pilot.press("f")
        assert screen.filtering
        view = screen.view
        assert view is not None
        expected = _expected_rows(view, selector)
        assert expected[0]  # the demo has matches for each
        assert _drawn_rows(tree) == expected
        rows = len(expected[0]) + len(expected[1]) + len(expected[2])
        assert tree.line_count == rows < every_row
        # What is drawn is those rows (the first screenful of them), in the tree's order.
        drawn = [line for line in pane_lines(tree) if line.strip()]
        assert len(drawn) == rows
        matches = len(view.select(selector))
        noun = "match" if matches == 1 else "matches"
        assert f"▽ FILTER {matches} {noun} · {rows} row" in status_text(app)

        await pilot.press("f")  # off: every row again
        assert not screen.filtering and tree.line_count == every_row
        assert "FILTER" not in status_text(app)


async def test_the_filter_is_made_again_at_each_step_and_live_change(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _select(pilot, "[remaining<=1]")
        await pilot.press("f")
        before = _drawn_rows(screen.context_tree)
        await pilot.press("full_stop")  # an advance: what expires next is another set
        await settle(pilot)
        view = screen.view
        assert view is not None and view.current_episode == 7
        after = _drawn_rows(screen.context_tree)
        assert after == _expected_rows(view, "[remaining<=1]") and after != before
        await pilot.press("left_square_bracket")  # a step into the past: filtered there too
        await settle(pilot)
        assert screen.position is not None and screen.view is not None
        assert _drawn_rows(screen.context_tree) == _expected_rows(screen.view, "[remaining<=1]")
        assert screen.filtering and "▽ FILTER" in status_text(app)


@pytest.mark.parametrize("index", range(len(QUICK_FILTERS)))
async def test_each_quick_filter_filters_by_its_selector(demo: Path, index: int) -> None:
    key, label, selector = QUICK_FILTERS[index]
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("f")  # no selector typed: f offers the quick filters
        await wait_until(pilot, lambda: isinstance(app.screen, ChooseScreen), "the quick filters")
        assert label in screen_text(app) and selector in screen_text(app)
        await pilot.press(key)  # its key picks it (as Enter on it would)
        await wait_until(pilot, lambda: screen.filtering, "filter mode")
        assert screen.selector == selector
        assert screen.view is not None
        assert _drawn_rows(screen.context_tree) == _expected_rows(screen.view, selector)


async def test_the_quick_filters_expected_next_episode_are_what_the_next_advance_does(
    demo: Path,
) -> None:
    """The demo at episode 6: #current_mode (sticky) and #checkin (1 of 2 left) expire at the
    next advance; only #current_mode's schedule makes a fresh one then (#checkin's at 10)."""
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        screen.quick_filter("[remaining<=1]")
        await pilot.pause()
        keys = {row.item.key for row in _rows(screen.context_tree) if row.item is not None}
        assert keys == {"current_mode", "checkin"}
        screen.quick_filter("[rehydrates_in<=1]")
        await pilot.pause()
        keys = {row.item.key for row in _rows(screen.context_tree) if row.item is not None}
        assert keys == {"current_mode"}


async def test_the_quick_filters_are_palette_commands(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("ctrl+p", *"Filter: cyclic")
        await wait_until(pilot, lambda: "Filter: cyclic items" in screen_text(app), "the command")
        # its help keeps the selector's text: not eaten as markup (issue 27)
        assert "show only [cyclic] and their turns" in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.filtering, "filter mode")
        assert screen.selector == "[cyclic]"
        items = {row.item.key for row in _rows(screen.context_tree) if row.item is not None}
        assert items == {"checkin"}


# -- the filtered layout against the whole tree's ---------------------------------------------
def _busy_context() -> Context:
    """Turns with several slots, items before and after the core, every lifecycle."""
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    context.pact_insert("d-1, 0, 0", TextContent("system", key="system"))
    for number in range(6):
        context.add_user(f"question {number}")
        context.pact_insert("d0, 1, 0", TextContent(f"note {number}", tags=["notes"]))
        context.pact_insert("d0, 1, -1", TextContent(f"before {number}", tags=["notes", "pre"]))
        context.pact_insert("d0, 1, 1", TextContent(f"after {number}"))
        context.pact_insert("d0, 2, 0", TextContent(f"reminder {number}", ttl=4))
        context.add_assistant(f"answer {number}")
        if number % 2:
            context.pact_insert("d0, 3, 0", TextContent(f"status {number}", ttl=1, cadence=1))
            context.advance()
    return context


def _described(rows: list[Row]) -> list[tuple[object, ...]]:
    return [(row.kind, row.node_id, row.depth, row.offset) for row in rows]


@pytest.mark.parametrize(
    "selector", ["+notes", "+pre", "[temporary]", "[sticky]", ".turn", ".slot", "d-1", "#nobody"]
)
def test_the_filtered_rows_are_the_trees_rows_of_the_matches_and_what_holds_them(
    selector: str,
) -> None:
    context = _busy_context()
    matches = context.select(selector)
    keep = {node.id for node in matches} | {node.parent_id for node in matches if node.item}
    keep |= {context.turn_at(node.depth).id for node in matches if node.depth is not None}
    whole = TreeLayout(headers=True)
    whole.sync(context)
    expected = [row for row in map(whole.row, range(whole.line_count)) if row.node_id in keep]
    for given in (matches, list(reversed(matches))):  # out of order: laid out sorted
        filtered = FilteredLayout(context, given, headers=True)
        assert _described(list(map(filtered.row, range(filtered.line_count)))) == _described(
            expected
        )
        items = {node.id for node in matches if node.item is not None}
        assert filtered.item_count == len(items)
        provider = FilteredLayout(context, given, headers=False)  # the matched items alone
        every = TreeLayout(headers=False)
        every.sync(context)
        alone = [row for row in map(every.row, range(every.line_count)) if row.node_id in items]
        assert _described(list(map(provider.row, range(provider.line_count)))) == _described(alone)
    filtered = FilteredLayout(context, matches, headers=True)
    for line, row in enumerate(expected):  # and each row is found where it is drawn
        if row.kind == "item":
            assert row.slot is not None
            assert filtered.line_of(row.depth, row.slot.position, row.offset) == line
        elif row.kind == "slot":
            assert row.slot is not None
            assert filtered.line_of(row.depth, row.slot.position) == line
        else:
            assert filtered.line_of_turn(row.depth) == line


# -- opening, and follow mode -------------------------------------------------------------------
async def _deep(path: Path, turns: int) -> Path:
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("deep")
        await workspace.insert("deep", "d-1, 0, 0", {"content": "system", "key": "system"})
        for number in range(turns):
            await workspace.add_message("deep", "user", f"message {number}")
            await workspace.insert("deep", "d0, 1, 0", {"content": f"note {number}", "ttl": 3})
    return path


def _active_turn_in_view(pane: LinePane) -> bool:
    line = pane.layout_model.line_of_turn(0)
    top = int(pane.scroll_offset.y)
    return line is not None and top <= line < top + pane.scrollable_content_region.height


async def test_a_long_context_opens_with_its_active_turn_in_view(tmp_path: Path) -> None:
    path = await _deep(tmp_path / "deep.pact", 60)
    app = inspector(path, context="deep")
    async with app.run_test(size=SIZE) as pilot:
        tree = screen_of(app).context_tree
        await wait_until(pilot, lambda: _active_turn_in_view(tree), "d0 in view")
        assert any(line.startswith("▾ turn d0") for line in pane_lines(tree))
        assert tree.current_row is not None and tree.current_row.depth == 0


async def test_follow_keeps_the_active_turn_in_view_as_another_process_writes(
    tmp_path: Path,
) -> None:
    path = await _deep(tmp_path / "deep.pact", 5)
    app = inspector(path, context="deep", watch=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        tree = screen.context_tree
        await pilot.press("home", "F")
        assert screen.following and "↓ FOLLOWING" in status_text(app)
        assert tree.current_row is not None and tree.current_row.depth == 0
        async with await Workspace.open(path, watch=False) as other:  # another writer
            for number in range(12):
                await other.add_message("deep", "assistant", f"reply {number}")
                await other.insert("deep", "d0, 2, 0", {"content": f"aside {number}"})
            await other.insert("deep", "d0, 3, 0", {"content": "the last one"})
            head = other.head
        await wait_until(pilot, lambda: screen.workspace.head == head, "every event applied")
        await pilot.pause()
        assert _active_turn_in_view(tree)
        assert tree.current_row is not None and tree.current_row.kind == "turn"
        assert tree.current_row.depth == 0
        assert tree.current_row.turn.slots[0].items[0].text() == "reply 11"
        assert any('"the last one"' in line for line in pane_lines(tree))  # its end too

        await pilot.press("up")  # moved away by hand: follow mode ends, and says so
        await wait_until(pilot, lambda: not screen.following, "follow off")
        assert "Follow off" in " ".join(notifications(app))
        assert "FOLLOWING" not in status_text(app)


# -- going to a place ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("typed", "depth", "position", "offset"),
    [
        ("d2, 1, 0", 2, 1, 0),
        ("2,1,0", 2, 1, 0),
        ("(d0, 0, -1)", 0, 0, -1),
        ("d3", 3, None, None),
        ("4", 4, None, None),
        ("d-1", -1, None, None),
        ("d5, 3", 5, 3, None),
        ("#finding", 2, 1, 0),
    ],
)
async def test_colon_goes_to_a_coordinate_a_depth_or_a_key(
    demo: Path, typed: str, depth: int, position: int | None, offset: int | None
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("colon", *typed, "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "the prompt gone")
        row = _cursor_row(screen)
        assert row is not None and row.depth == depth
        if position is None:
            assert row.kind in ("turn", "system")
        elif offset is None:
            assert row.kind == "slot" and row.slot is not None and row.slot.position == position
        else:
            assert row.kind == "item" and (row.slot.position, row.offset) == (position, offset)


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("d42", "there is no depth 42: this view has d-1 to d5"),
        ("d5, 2", "turn d5 has no slot 2 (its slots: 0, 1, 3)"),
        ("d2, 1, 4", "slot (2,1) has no offset 4 (its offsets: 0 to 0)"),
        ("#nobody", "no item has the key #nobody"),
        ("d1-3", "the depth must be one number"),
        ("^seq", "':' goes to a coordinate"),
        ("#a, #b", "':' goes to one place"),
        ("@e3 d0", "':' goes to one place"),
        ("d0, 1 0", "is a ',' missing?"),
        ("[oops", "unterminated '['"),
    ],
)
async def test_colon_refuses_what_is_not_a_place_and_says_why(
    demo: Path, typed: str, said: str
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        before = screen.context_tree.cursor_line
        await pilot.press("colon", *typed, "enter")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)  # still open, saying what is wrong
        problem = str(app.screen.query_one("#prompt-problem", Label).render())
        assert said in problem, problem
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "Esc closed it")
        assert screen.context_tree.cursor_line == before


async def test_going_to_a_place_the_filter_hides_turns_the_filter_off(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _select(pilot, "[cyclic]")
        await pilot.press("f", "colon", *"#finding", "enter")
        await wait_until(pilot, lambda: not screen.filtering, "the filter off")
        row = _cursor_row(screen)
        assert row is not None and row.item is not None and row.item.key == "finding"
        assert "Go to: Filter off: it hid (2,1,0)" in notifications(app)


# -- the cursor stays on its item ----------------------------------------------------------------
async def test_the_cursor_stays_on_its_item_when_a_message_pushes_it_deeper(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("colon", *"#finding", "enter")
        await pilot.pause()
        row = _cursor_row(screen)
        assert row is not None and row.item is not None and row.depth == 2
        item_id = row.item.id
        await pilot.press("u", *"one more question", "enter")
        await settle(pilot)
        moved = _cursor_row(screen)
        assert moved is not None and moved.node_id == item_id and moved.depth == 3
        line = screen.context_tree.cursor_line - int(screen.context_tree.scroll_offset.y)
        assert "(3,1,0)" in screen.context_tree.render_line(line).text  # drawn there too

        # A turn header under the cursor stays on its turn too (by its seq, not its depth).
        await pilot.press("colon", *"d3", "enter")
        await pilot.pause()
        turn = _cursor_row(screen)
        assert turn is not None and turn.kind == "turn"
        await pilot.press("a", *"an answer", "enter")
        await settle(pilot)
        after = _cursor_row(screen)
        assert after is not None and after.node_id == turn.node_id and after.depth == 4


async def test_stepping_through_snapshots_keeps_the_cursor_on_its_item(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("colon", *"#user_prefs", "enter")
        await pilot.pause()
        row = _cursor_row(screen)
        assert row is not None and row.item is not None
        item_id, depths = row.item.id, {row.depth}
        for _ in range(4):  # back through the snapshots: the note sits shallower each time
            await pilot.press("left_square_bracket")
            await settle(pilot)
            now = _cursor_row(screen)
            assert now is not None and now.node_id == item_id
            depths.add(now.depth)
        assert len(depths) > 1


async def test_when_the_selected_item_expires_the_app_says_so_and_stays_near(
    demo: Path,
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("colon", *"#checkin", "enter")
        await pilot.pause()
        row = _cursor_row(screen)
        assert row is not None and row.item is not None
        gone = row.item.id
        await pilot.press("full_stop")  # 1 of its 2 episodes left: this advance takes it
        await settle(pilot)
        view = screen.view
        assert view is not None and view.live() is not None
        assert view.live().find(gone) is None  # type: ignore[union-attr]
        said = [n for n in notifications(app) if "#checkin" in n]
        assert said and "expired (ttl 2)" in said[0] and "(0,-1,0)" in said[0]
        near = _cursor_row(screen)
        assert near is not None and near.depth == 0  # the active turn, where it was


# -- time-qualified selectors are read on Enter; Esc returns to where you were -----------------
async def test_typing_a_time_qualified_selector_moves_nothing_until_enter(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        tree = screen.context_tree
        await pilot.press("colon", *"#finding", "enter")
        await pilot.pause()
        line, row = tree.cursor_line, _cursor_row(screen)
        shown = []
        await pilot.press("slash")
        for key in "@e3 ^seq":
            await pilot.press(key)
            await pilot.pause(0.15)  # longer than the pause that evaluates a selector
            shown.append((screen.position, tree.cursor_line))
        assert set(shown) == {(None, line)}  # never moved while typing
        feedback = str(screen.query_one("#selector-feedback").render())
        entry = screen.workspace.snapshot_of_episode("researcher", 3)
        assert f"snapshot {entry.id} (episode 3) · Enter goes there" in feedback

        await pilot.press("escape")  # Esc: still where it was, nothing selected
        assert (screen.position, tree.cursor_line, _cursor_row(screen)) == (None, line, row)
        assert screen.selector == ""

        await pilot.press("slash", *"@e3 ^seq", "enter")  # Enter: there
        await wait_until(pilot, lambda: screen.position == entry.index, "snapshot of episode 3")


async def test_escape_returns_the_cursor_where_it_was_before_the_bar_opened(
    demo: Path,
) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        tree = screen.context_tree
        await pilot.press("colon", *"d4", "enter")
        await pilot.pause()
        before = (tree.cursor_line, tree.scroll_offset.y, _cursor_row(screen))
        await pilot.press("slash", *"#alert")
        await wait_until(pilot, lambda: len(screen.matches) == 1, "the match")
        await wait_until(pilot, lambda: tree.cursor_line != before[0], "the cursor on it")
        assert isinstance(app.focused, Input)
        await pilot.press("escape")
        assert (tree.cursor_line, tree.scroll_offset.y, _cursor_row(screen)) == before


# -- the legend and the tooltips ------------------------------------------------------------------
LEGEND_GLYPHS = [
    "PERM", "TEMP", "STCK", "CYCL", "▰▰▱▱ 2/4", "↻e7", "§1/2", "▾  ▸", "(3,1,0)", "#key  +tag",
    "┼", "●", "A", "LIVE · 7 snapshots", "◆ PAST", "↓ FOLLOWING", "▽ FILTER", "59 ch ~15 tok",
]  # fmt: skip


async def test_the_help_page_has_a_legend_of_every_glyph_and_badge(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=(120, 200)) as pilot:  # tall: the whole page on screen
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help page")
        await pilot.pause()
        text = screen_text(app)
        for glyph in LEGEND_GLYPHS:
            assert glyph in text, glyph
        assert "next fresh instance comes at episode 7" in text
        assert "Selectors (press / to type one)" in text  # and the selector language still
        for title in ("The tree", "The timeline", "The status line", "The provider view"):
            assert title in text


def _hover_offset(tree: ContextTree, key: str) -> tuple[int, int]:
    """Where on the tree (its border included) the row of the item with ``key`` is drawn."""
    for y in range(tree.scrollable_content_region.height):
        if f"#{key}" in tree.render_line(y).text:
            return 20, y + 1
    raise AssertionError(f"#{key} is not on screen")


async def test_hovering_a_row_says_what_its_badges_mean(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        tree = screen_of(app).context_tree
        await pilot.pause()
        assert any("↻e10 #checkin" in line for line in pane_lines(tree))  # not ↻10
        await pilot.hover(ContextTree, _hover_offset(tree, "checkin"))
        tip = str(tree.tooltip)
        assert "(0,-1,0) text #checkin" in tip
        assert "CYCL  cyclic" in tip
        assert "▰▰▱▱ 1/2  1 of its 2 episodes left: gone at the next advance" in tip
        assert "↻e10  a fresh instance every 5 episodes, next at episode 10" in tip
        await pilot.hover(ContextTree, _hover_offset(tree, "alert"))
        assert "§3/3  render lifecycle: stage 3 of 3 (the last)" in str(tree.tooltip)
        await pilot.hover(ContextTree, _hover_offset(tree, "current_mode"))
        assert "↻e7  a fresh instance every episode, next at episode 7" in str(tree.tooltip)


def test_colon_says_why_a_schedule_s_item_is_not_there() -> None:
    """Issue 27: ``:`` ``#checkin`` between a cyclic item's lives says when it expired and when
    the next instance comes, not only that no item has the key."""
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    context.add_user("hello")
    context.pact_insert("d0, 1, 0", TextContent("check in", key="checkin", ttl=2, cadence=5))
    for _ in range(7):
        context.advance()
    with pytest.raises(JumpError) as gone:
        find_place(context, "#checkin")
    assert str(gone.value) == (
        "no item has the key #checkin: it expired at e7 (ttl 2), next instance at e10"
    )
    for _ in range(3):
        context.advance()
    assert find_place(context, "#checkin") == Place(0, 1, 0)  # back at e10
