"""What the first round of use found wrong on screen, each kept fixed (issue 9, section 5), and
the widget messages the screen relies on: Highlighted as the cursor moves, Selected on Enter."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from textual.app import App
from textual.message import Message
from textual.widgets._footer import FooterKey

from engine.context import Context, SequentialIds, SteppingClock, TextContent
from pact_tui.screens.help import SELECTORS
from pact_tui.types import Shown
from pact_tui.widgets.context_list import ContextList
from pact_tui.widgets.context_tree import ContextTree, LinePane
from pact_tui.widgets.status import Status, status_content

from .inspector import (
    SIZE,
    inspector,
    notifications,
    screen_of,
    screen_text,
    status_text,
    wait_until,
)


# -- 2. a kept selector whose matches expire ---------------------------------------------------
async def test_a_kept_selectors_expired_match_says_0_matches_and_esc_clears_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    from engine.workspace import Workspace

    async with await Workspace.open(path, create=True, watch=False) as ws:
        await ws.create_context("agent")
        await ws.add_message("agent", "user", "hi")
        await ws.insert("agent", "d0, 1, 0", {"content": "soon gone", "key": "blink", "ttl": 2})
    app = inspector(path, context="agent")
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("slash", *"#blink")
        await wait_until(pilot, lambda: "1/1 match" in status_text(app), "the match walked to")
        await pilot.press("enter", "full_stop")  # keep it; the match lives one more episode
        await wait_until(pilot, lambda: "EPISODE 1" in status_text(app), "episode 1")
        assert "1/1 match" in status_text(app)
        await pilot.press("full_stop")  # gone now
        await wait_until(pilot, lambda: "EPISODE 2" in status_text(app), "episode 2")
        assert "0 matches" in status_text(app) and "1/0" not in status_text(app)
        await pilot.press("left_square_bracket")  # in the past too
        assert "0 matches" in status_text(app) and "1/0" not in status_text(app)
        # Esc in the tree clears the kept selector
        await pilot.press("right_curly_bracket", "escape")
        assert screen.selector == "" and screen.matches == ()
        assert "match" not in status_text(app)
        assert "match" not in screen.context_tree.marks.values()


# -- 3. the help page's selector cheat sheet -------------------------------------------------
async def test_the_help_page_shows_every_selector_example_as_written(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=(120, 100)) as pilot:  # tall: the whole page at once
        await pilot.press("question_mark")
        help_text = screen_text(app)
        for example, _meaning in SELECTORS:
            assert example in help_text, example  # [remaining<=1] is not eaten as markup
        assert "[permanent] [temporary] [sticky] [cyclic]" in help_text


# -- 5. the status line fits -------------------------------------------------------------------
BUSY = Status(
    context="researcher",
    episode=4167,
    live=False,
    snapshot="n270831",
    trigger="after-summary",
    pending=12,
    diff="n25 (base) → n270831",
    diff_counts=(5, 2, 3, 0),
    playing=0.25,
    matches="3/12 matches",
)


def test_a_busy_status_line_fits_and_keeps_what_matters_most() -> None:
    full = status_content(BUSY).plain
    assert len(full) > 120  # too long for 120 columns whole
    for width in (120, 100, 80):
        fitted = status_content(BUSY, width).plain
        assert len(fitted) <= width, (width, fitted)
        assert "researcher" in fitted and "4167" in fitted and "PAST" in fitted
        assert "▶" in fitted and "0.25s" in fitted  # the play indicator never falls off
        assert "+12 new" in fitted or "12 new events" in fitted
    assert status_content(BUSY, 10_000).plain == full  # nothing shortened when there is room


async def test_the_status_bar_fits_the_terminal(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.press("slash", *"^seq", "enter", "d", "left_square_bracket", "p")
        await wait_until(pilot, lambda: "▶" in status_text(app), "the play indicator")
        assert len(status_text(app)) <= 80
        assert "PAST" in status_text(app) and "1s" in status_text(app)
        await pilot.press("p")


# -- 6. deep coordinates -------------------------------------------------------------------------
class OnePane(App[None]):
    """A tree pane alone, showing a view it is given."""

    def __init__(self, view: Any) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> Any:
        yield ContextTree(id="tree")

    def on_mount(self) -> None:
        self.query_one(ContextTree).shown = Shown("c", self.view, None, 0, 0)


def deep_context(turns: int) -> Context:
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    context.add_user("first")
    context.pact_insert("d0, 1, 0", TextContent("note"))
    for number in range(turns):
        context.add_user(f"m{number}")
    return context


async def test_deep_coordinates_never_run_into_the_type_column() -> None:
    app = OnePane(deep_context(10_000))
    async with app.run_test(size=(100, 10)) as pilot:
        tree = app.query_one(ContextTree)
        line = tree.layout_model.line_of(10_000, 1, 0)
        assert line is not None
        tree.jump_to(line)
        await pilot.pause()
        drawn = tree.render_line(line - int(tree.scroll_offset.y)).text
        assert re.search(r"\(10000,1,0\) +text PERM", drawn), drawn


# -- 7. the footer at 80 columns ---------------------------------------------------------------
async def test_the_footer_at_80_columns_shows_whole_keys_and_nothing_stray(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "? Help" in screen_text(app), "the footer")
        footer = screen_text(app).splitlines()[-1]
        assert footer.rstrip().endswith("palette")  # no letter of a hidden key after it
        keys = [key for key in screen_of(app).query(FooterKey) if key.display]
        assert "? Help" in footer
        for key in keys:
            drawn = key.render().plain.strip()
            assert drawn in footer, drawn  # every key shown is shown whole
        hidden = [key for key in screen_of(app).query(FooterKey) if not key.display]
        assert hidden  # at 80 columns some give way
    app = inspector(demo)
    async with app.run_test(size=(200, 24)) as pilot:
        await pilot.pause()
        assert all(key.display for key in screen_of(app).query(FooterKey))


# -- 10. j and k in the context list ------------------------------------------------------------
async def test_j_and_k_move_in_the_context_list(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        contexts = screen_of(app).query_one(ContextList)
        await pilot.press("c")
        assert contexts.has_focus and contexts.highlighted == 0
        await pilot.press("j")
        assert contexts.highlighted == 1
        await pilot.press("k")
        assert contexts.highlighted == 0


# -- the panes' cursor and messages -----------------------------------------------------------
async def test_the_cursor_stays_in_range_and_says_where_it_is(demo: Path) -> None:
    messages: list[Message] = []
    app = inspector(demo)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        tree = screen_of(app).context_tree
        await pilot.press("up")  # at the top already
        assert tree.cursor_line == 0
        await pilot.press("end", "down")
        assert tree.cursor_line == tree.layout_model.line_count - 1
        tree.cursor_line = 10_000
        assert tree.cursor_line == tree.layout_model.line_count - 1  # validate_cursor_line
        tree.cursor_line = -5
        assert tree.cursor_line == 0

        await pilot.pause()
        messages.clear()
        await pilot.press("down", "down")
        said = {id(m): m for m in messages if isinstance(m, LinePane.Highlighted)}  # bubbling
        rows = [m.row for m in said.values()]  # is seen by the hook at every node
        assert [row.node_id for row in rows if row is not None] == [
            tree.layout_model.row(1).node_id,
            tree.layout_model.row(2).node_id,
        ]

        await pilot.press("up")  # the system region's message slot
        assert tree.layout_model.row(1).kind == "slot"
        messages.clear()
        await pilot.press("enter")  # on a slot header: folds it, and says Selected
        selected = list({id(m): m for m in messages if isinstance(m, LinePane.Selected)}.values())
        assert [m.row.node_id for m in selected] == [tree.layout_model.row(1).node_id]
        assert tree.layout_model.row(1).collapsed


async def test_a_notification_shows_brackets_as_typed(demo: Path) -> None:
    """Text from outside (a name, a selector) in a notification is never read as markup."""
    app = inspector(demo, context="[bold]ghost[/bold]")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "no context named '[bold]ghost[/bold]'; showing the first" in notifications(app)
