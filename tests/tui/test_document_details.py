"""What the custodian's keys and detail panes do around the selection (issue 24, bug 7): a
diff holds only what a proposal changes, the detail of a new selection starts at its top, one
key means one thing on a screen, ``:N`` shows the document after event #N, and after a
decision the cursor goes on to the next open proposal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from pact_tui.diffs import without_separator
from pact_tui.themes import Palette
from pact_tui.widgets.cursor import CursorPane
from pact_tui.widgets.detail import NodeDetail
from pact_tui.widgets.queue import diff_renderable, proposal_detail

from .inspector import SIZE, inspector, notifications, screen_of, settle, wait_until
from .test_document_inbox import answer, cursor_to, opened
from .test_document_queue import by_status, queue_of, text_of


def removed_blank_lines(text: str) -> int:
    """The lines of a unified diff that remove a blank line."""
    return sum(1 for line in text.splitlines() if line.rstrip() == "-")


async def test_a_diff_holds_no_removed_blank_line_the_proposal_did_not_remove(
    demo: Path,
) -> None:
    """A section's content ends with the blank line that keeps it apart from the next one; a
    proposal's content need not (the merge puts the blank line back): that blank line is
    the document's, not something the proposal removes."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        pending = by_status(screen, "Pending")
        assert pending.base_content.endswith("\n\n") and not pending.content.endswith("\n\n")
        await cursor_to(pilot, queue, lambda row: row.key == pending.id)
        await settle(pilot)
        shown = text_of(screen.query_one("#proposal-detail", Static).content)
        assert "Diff against its base (-2 +2 lines):" in shown
        assert removed_blank_lines(shown) == 0
        # Every side of a conflict is diffed the same way.
        assert screen.shown is not None
        conflicted = by_status(screen, "Conflict")
        sides = text_of(proposal_detail(screen.shown, conflicted.id, False))
        assert removed_blank_lines(sides) == 0


def test_a_blank_line_a_proposal_does_remove_is_shown() -> None:
    """Only the blank lines that end a section are set aside: one inside it that the
    proposal removes is part of the diff."""
    base, proposed = without_separator("a\n\nb\n\n"), without_separator("a\nb\n")
    shown = text_of(diff_renderable(base, proposed, False, ("", ""), Palette()))
    assert removed_blank_lines(shown) == 1


@pytest.mark.slow
async def test_l_means_right_on_the_document_screen_and_live_is_its_own_key(demo: Path) -> None:
    """``l`` is the heatmap's vim right and nothing else on this screen (it meant "live" in
    the other views): in the past, ``l`` neither goes live from the heatmap nor from any
    other view; ``}`` does, and the status line, the refusals and the help say ``}``."""
    from pact_tui.screens.help import HelpScreen

    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "H")
        await pilot.press("left_square_bracket")
        await wait_until(pilot, lambda: screen.past is not None, "one event back")
        status = str(screen.query_one("#doc-status", Static).content)
        assert "} live" in status and "l live" not in status
        cell = screen.heat_cell
        await pilot.press("l")
        await settle(pilot)
        assert screen.position is not None  # still in the past
        assert screen.heat_cell is not None and cell is not None
        assert screen.heat_cell[1] != cell[1]  # the next section
        for view in ("O", "P", "I", "A", "E"):
            await pilot.press(view, "l")
            await settle(pilot)
            assert screen.position is not None, f"l after {view}"
        screen.run_document({"op": "escalate", "sectionId": "sec:budget", "reason": "x"})
        await settle(pilot)
        assert any("press } to go back to live" in n for n in notifications(app))
        await pilot.press("right_curly_bracket")
        await settle(pilot)
        assert screen.position is None
        # The help lists l once on this screen: the heatmap's "the next section".
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        help_screen: Any = app.screen
        keys = [
            (binding.key, binding.tooltip)
            for _, bindings in help_screen.groups
            for binding in bindings
            if "l" in binding.key.split(",")
        ]
        assert keys == [("right,l", "the next section")]


async def test_colon_n_shows_the_document_after_event_n_as_the_events_view_numbers_it(
    demo: Path,
) -> None:
    """The events view numbers events from #0 (the creation); ``:20`` shows the document
    after event #20 (its first 21 events), and every place that names a point says so."""
    from engine.protocol.persist import dump_document
    from pact_tui.widgets.events import EventList

    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "E")
        events = screen.query_one(EventList)
        await wait_until(pilot, lambda: len(events.rows) > 21, "the events")
        twentieth = next(row for row in events.rows if row.sequence == 20)
        await pilot.press("colon")
        await answer(pilot, "20")
        await wait_until(pilot, lambda: screen.past is not None, "the past")
        assert screen.shown is not None
        after = await screen.workspace.document_at("memo", 21)
        assert dump_document(screen.shown.doc) == dump_document(after)
        assert screen.shown.doc.sequence == twentieth.sequence + 1  # #20 is applied, no more
        status = str(screen.query_one("#doc-status", Static).content)
        live = screen.workspace.document("memo").sequence
        assert f"PAST: after event #20 of #{live - 1}" in status
        # The diff names its points the same way.
        await pilot.press("d", "right_square_bracket")
        await wait_until(pilot, lambda: screen.base_doc is not None, "the base")
        await settle(pilot)
        diff = text_of(screen.query_one("#doc-diff", Static).content, 120)
        assert "Diff: after event #20 → after event #21" in diff
        # #0 (the creation) is the first point; a number past the last is refused.
        await pilot.press("colon")
        await answer(pilot, "0")
        await wait_until(pilot, lambda: screen.position == 1, "the creation")
        await pilot.press("colon")
        await answer(pilot, str(live))
        await settle(pilot)
        assert any(f"give an event number from 0 to {live - 1}" in n for n in notifications(app))
        assert screen.position == 1


async def test_the_proposal_detail_starts_at_its_top_for_each_new_selection(demo: Path) -> None:
    """Scrolled down one proposal's detail, the next proposal's is shown from its top (the
    same proposal redrawn, as the clock ticks, keeps where the reader was)."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=(100, 20)) as pilot:
        screen, queue = await queue_of(pilot)
        pane = screen.query_one("#proposal-pane")
        await wait_until(pilot, lambda: pane.max_scroll_y > 2, "a detail taller than its pane")
        await scrolled_to_end(pilot, pane)
        screen.now_ms += 1_000  # a tick redraws the same proposal: the reader stays there
        await settle(pilot)
        assert pane.scroll_y > 0
        await pilot.press("j")
        await settle(pilot)
        assert queue.cursor_line == 1
        assert pane.scroll_y == 0


async def test_the_context_detail_starts_at_its_top_for_each_new_node(demo: Path) -> None:
    app = inspector(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = screen_of(app)
        await wait_until(pilot, lambda: screen.shown is not None, "the context")
        await settle(pilot)
        detail = screen.query_one(NodeDetail)
        await to_two_tall_details(pilot, detail, screen.context_tree.line_count)
        await scrolled_to_end(pilot, detail)
        await pilot.press("k")  # the node before, whose detail is taller than its pane too
        await settle(pilot)
        assert detail.scroll_y == 0


async def scrolled_to_end(pilot: Any, pane: Any) -> None:
    """Scroll ``pane`` to its end once its content is laid out (taller than the pane)."""
    await wait_until(pilot, lambda: pane.max_scroll_y > 2, "the detail laid out, taller")
    pane.scroll_end(animate=False, immediate=True)
    await settle(pilot)
    await wait_until(pilot, lambda: pane.scroll_y > 0, "the detail scrolled to its end")


async def to_two_tall_details(pilot: Any, pane: Any, lines: int) -> None:
    """Move down to the first row whose detail, and the one before's, are taller than
    ``pane`` (a detail that fits could not show where it was scrolled)."""
    before = 0.0
    for _ in range(lines):
        if pane.max_scroll_y > 2 and before > 2:
            return
        before = pane.max_scroll_y
        await pilot.press("j")
        await settle(pilot)
    raise AssertionError("no two rows in a row with details taller than the pane")


async def test_the_master_log_detail_starts_at_its_top_for_each_new_line(tmp_path: Path) -> None:
    from pact_tui.widgets.loglines import LogLines

    from .test_masterlog import copy, opened
    from .test_masterlog import inspector as log_inspector

    directory = copy(tmp_path, "conv-basic")
    async with log_inspector(directory).run_test(size=(80, 24)) as pilot:
        shown = await opened(pilot)
        pane = shown.query_one("#log-detail")
        lines = shown.query_one("#messages", LogLines)
        await to_two_tall_details(pilot, pane, lines.line_count)
        await scrolled_to_end(pilot, pane)
        await pilot.press("k")
        await settle(pilot)
        assert pane.scroll_y == 0


@pytest.mark.slow
async def test_after_a_decision_the_cursor_goes_on_to_the_next_open_proposal(
    demo: Path,
) -> None:
    """Approve, then reject: each time the cursor goes to the open proposal after the one
    decided (the one before it when none is after), not with the decided one as it sorts
    down among the closed ones."""
    from pact_tui.widgets.queue import OPEN_ORDER

    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.workspace.document("memo")

        def open_ids() -> list[str]:
            return [
                row.key
                for row in (queue.rows[i] for i in range(len(queue.rows)))
                if row.status in OPEN_ORDER
            ]

        for key, why in (("a", "numbers checked"), ("r", "not this one")):
            before = open_ids()
            decided = (
                before[0]
                if key == "r"
                else next(pid for pid in before if doc.proposals[pid].status == "Pending")
            )
            await cursor_to(pilot, queue, lambda row, d=decided: row.key == d)  # type: ignore[misc]
            await pilot.press(key)
            await answer(pilot, why)
            await wait_until(
                pilot,
                lambda d=decided: doc.proposals[d].status not in OPEN_ORDER,
                "decided",  # type: ignore[misc]
            )
            await settle(pilot)
            at = before.index(decided)
            still_open = [p for p in before if doc.proposals[p].status in OPEN_ORDER]
            after = [p for p in before[at + 1 :] if p in still_open]
            wanted = after[0] if after else [p for p in before[:at] if p in still_open][-1]
            assert queue.current_row is not None
            assert queue.current_row.key == wanted, (key, decided, before)
            assert screen.proposal_id == wanted


async def test_the_agent_detail_starts_at_its_top_for_each_new_agent(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(pilot, "A")
        pane = screen.query_one("#agent-pane")
        pane.styles.height = 3  # the demo's agents are short: a pane shorter than each
        roster = screen.query_one("#agents", CursorPane)
        await to_two_tall_details(pilot, pane, roster.line_count)
        await scrolled_to_end(pilot, pane)
        await pilot.press("k")
        await settle(pilot)
        assert pane.scroll_y == 0
