"""Keys typed ahead on the document screen reach only what is on screen: a key typed right
after a view's key acts on that view, never on the one it hid, however little time passes
between them (``type_ahead`` sends them in one go, as a terminal's driver does with one read
holding several keys)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from pact_tui.screens.prompt import PromptScreen
from pact_tui.widgets.cursor import CursorPane
from pact_tui.widgets.inbox import EscalationInbox
from pact_tui.widgets.outline import SectionOutline
from pact_tui.widgets.queue import ProposalQueue

from .inspector import SIZE, inspector, screen_of, settle, type_ahead, wait_until
from .test_document_inbox import answer, cursor_to, opened

VIEW_KEYS = {"outline": "O", "queue": "P", "heatmap": "H", "inbox": "I", "agents": "A"}
VIEW_KEYS["events"] = "E"


@pytest.mark.slow
async def test_a_key_typed_right_after_a_view_key_acts_on_the_view_shown(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        panes = {view: screen.query_one(f"#{view}", CursorPane) for view in VIEW_KEYS}
        await wait_until(
            pilot, lambda: all(p.line_count >= 2 for p in panes.values()), "two rows in each"
        )
        order = ["queue", "heatmap", "inbox", "agents", "events", "outline"]
        for shown in order:  # each from the one before it: outline → queue → … → outline
            for pane in panes.values():
                pane.cursor_line = 1
            type_ahead(app, VIEW_KEYS[shown], "k")
            await settle(pilot)
            assert screen.view == shown
            assert app.focused is panes[shown]
            # The cursor of the view shown moved up; every other one stayed where it was.
            assert {v: p.cursor_line for v, p in panes.items()} == {
                v: 0 if v == shown else 1 for v in panes
            }, f"k after {VIEW_KEYS[shown]}"


@pytest.mark.slow
async def test_i_then_r_from_the_queue_answers_the_inbox_and_rejects_nothing(
    demo: Path,
) -> None:
    """The issue's case: a Pending proposal highlighted in the queue, then ``I`` ``e`` in one
    go and a sentence: the sentence answers the inbox's question; nothing is rejected."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "I")
        inbox = screen.query_one(EscalationInbox)
        await wait_until(pilot, lambda: len(inbox.rows) == 2, "the inbox's rows")
        await cursor_to(pilot, inbox, lambda r: r is not None and r.kind == "question")
        question = screen.shown.doc.queries[inbox.current_row.ref]  # type: ignore[union-attr]
        await pilot.press("P")
        queue = screen.query_one(ProposalQueue)
        await cursor_to(pilot, queue, lambda r: r is not None and r.status == "Pending")
        pending = screen.shown.doc.proposals[queue.current_row.key]  # type: ignore[union-attr]

        type_ahead(app, "I", "e")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "a prompt")
        assert app.screen.question.startswith("Answer:"), app.screen.question  # type: ignore[attr-defined]
        await answer(pilot, "hold until Friday")
        await settle(pilot)
        assert (question.status, question.response) == ("answered", "hold until Friday")
        assert pending.status == "Pending" and not pending.rejections
        assert screen.view == "inbox"


async def test_a_hidden_view_takes_no_key_even_while_it_has_the_focus(demo: Path) -> None:
    """Textual blurs a hidden widget only after the next refresh: until then a view that was
    switched away may still hold the focus, and its keys must do nothing."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "P")
        outline = screen.query_one(SectionOutline)
        await wait_until(pilot, lambda: outline.line_count > 2, "the outline's rows")
        assert not outline.display
        screen.set_focus(outline)  # what the hidden view holds until its Hide event comes
        assert app.focused is outline
        type_ahead(app, "j", "j")
        await settle(pilot)
        assert outline.cursor_line == 0
        # Its keys are not offered either: the footer leaves them out.
        assert not any(b.binding.action == "cursor(1)" for b in screen.active_bindings.values())


async def test_a_view_key_takes_the_focus_back_from_the_detail_pane(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "P")
        queue = screen.query_one(ProposalQueue)
        await pilot.press("tab")
        assert app.focused is not queue and app.focused is not None
        await pilot.press("P")
        assert app.focused is queue
        before = queue.cursor_line
        await pilot.press("j")
        assert queue.cursor_line == before + 1
        detail = screen.query_one("#proposal-detail", Static)
        assert "No proposal selected" not in str(detail.render())


async def test_a_key_typed_right_after_v_moves_the_pane_v_shows(demo: Path) -> None:
    """The context screen's tree and provider panes share one place: ``v`` then ``j`` in one
    go moves the pane ``v`` brought up (from the node the other's cursor was on, which ``v``
    puts its cursor on), never the one it hid."""
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_until(pilot, lambda: screen.shown is not None, "the context")
        tree, provider = screen.context_tree, screen.provider
        await settle(pilot)
        for shown, hidden in ((provider, tree), (tree, provider)):
            was, line = hidden.current_row, hidden.cursor_line
            assert was is not None
            type_ahead(app, "v", "j")
            await settle(pilot)
            assert app.focused is shown
            position = was.slot.position if was.slot is not None else None
            there = shown._line_near(was.depth, position, was.offset)  # where v put it
            assert there is not None
            assert (shown.cursor_line, hidden.cursor_line) == (there + 1, line)


async def test_a_key_typed_right_after_escape_from_the_hits_moves_the_log(
    tmp_path: Path,
) -> None:
    """The master-log screen's search hits and the log's lines share one place: ``escape``
    then ``j`` in one go moves the log's cursor, never the hits' it hid."""
    from pact_tui.widgets.loglines import HitList, LogLines

    from .test_masterlog import copy
    from .test_masterlog import opened as log_opened

    directory = copy(tmp_path, "conv-branches")
    async with inspector(directory).run_test(size=SIZE) as pilot:
        shown = await log_opened(pilot)
        app = pilot.app
        await pilot.press("slash", *"rounding", "enter")
        hits = shown.query_one("#hits", HitList)
        messages = shown.query_one("#messages", LogLines)
        await wait_until(pilot, lambda: hits.has_focus and len(hits.hits) > 1, "the hits")
        before = (hits.cursor_line, messages.cursor_line)
        type_ahead(app, "escape", "j")
        await wait_until(pilot, lambda: messages.cursor_line != before[1], "the log's cursor")
        assert app.focused is messages
        assert hits.cursor_line == before[0]
        assert messages.cursor_line == before[1] + 1
