"""The document screen's proposal queue, on the demo workspace's ``memo``: two proposals in a
conflict escalated to the custodian, one pending in its objection window, one merged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from textual.pilot import Pilot
from textual.widgets import Static

from pact_tui.diffs import changed, side_by_side, unified, word_spans
from pact_tui.screens.document import DocumentScreen
from pact_tui.widgets.outline import countdown
from pact_tui.widgets.queue import (
    ProposalQueue,
    QueueFilter,
    QueueRows,
    needs_human,
    proposal_detail,
    queue_ids,
)

from .inspector import SIZE, inspector, notifications, settle, wait_until
from .test_document_inbox import answer, cursor_to, lines_of, opened


def text_of(renderable: Any, width: int = 100) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


async def queue_of(pilot: Pilot[Any]) -> tuple[DocumentScreen, ProposalQueue]:
    screen = await opened(pilot, "P")
    return screen, screen.query_one(ProposalQueue)


def by_status(screen: DocumentScreen, status: str) -> Any:
    doc = screen.shown.doc  # type: ignore[union-attr]
    return next(p for p in doc.proposals.values() if p.status == status)


# -- the diffs, alone ------------------------------------------------------------------------------
def test_word_spans_mark_only_the_words_that_changed() -> None:
    left, right = word_spans("- Personnel: $1.2M", "- Personnel: $1.1M")
    assert [t for t, c in left if c] == ["2M"]
    assert [t for t, c in right if c] == ["1M"]
    assert "".join(t for t, _ in left) == "- Personnel: $1.2M"
    assert "".join(t for t, _ in right) == "- Personnel: $1.1M"


def test_unified_and_side_by_side_hold_every_line_in_order() -> None:
    base = "# T\n\nkeep\nold one\ngone\n"
    new = "# T\n\nkeep\nnew one\nadded\nmore\n"
    lines = unified(base, new)
    assert [(line.tag, line.text) for line in lines] == [
        ("same", "# T"),
        ("same", ""),
        ("same", "keep"),
        ("removed", "old one"),
        ("removed", "gone"),
        ("added", "new one"),
        ("added", "added"),
        ("added", "more"),
    ]
    assert changed(lines) == (2, 3)
    rows = side_by_side(base, new)
    assert len(rows) == 6
    pairs = [(r.left.text if r.left else None, r.right.text if r.right else None) for r in rows]
    assert pairs[3:] == [("old one", "new one"), ("gone", "added"), (None, "more")]
    assert [line.old for line in lines if line.tag != "added"] == [1, 2, 3, 4, 5]


def test_a_filter_names_a_status_that_does_not_exist() -> None:
    wanted = QueueFilter.parse("status:merged author:legal section:sec:risk needs:me risk")
    assert wanted == QueueFilter(("Merged",), ("sec:risk",), ("legal",), True, ("risk",))
    try:
        QueueFilter.parse("status:mergd")
    except ValueError as error:
        assert "mergd" in str(error) and "Merged" in str(error)
    else:
        raise AssertionError("an unknown status was taken")


# -- the view --------------------------------------------------------------------------------------
async def test_the_queue_puts_open_proposals_first_with_what_each_waits_for(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        statuses = [row.status for row in queue.rows]
        assert statuses == ["Conflict", "Conflict", "Pending", "Merged"]
        pending = by_status(screen, "Pending")
        row = queue.rows[2]
        assert row.key == pending.id
        assert row.progress == f"merges in {countdown(pending.merge_at_ms, screen.now_ms)}"
        assert all(r.progress == "conflict (human-escalate) → human" for r in queue.rows[:2])
        assert queue.rows[3].progress.startswith("merged v")
        lines = lines_of(queue)
        assert "⚔" in lines[0] and "⚔" not in lines[2]
        assert queue.border_title == "proposals (4)"
        assert [needs_human(doc, p) for p in doc.proposals.values()].count(True) == 2


async def test_filters_by_status_author_section_and_needs_me(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        for text, expected in (
            ("status:merged", ["Merged"]),
            ("author:finance", ["Conflict"]),
            ("section:sec:budget", ["Pending"]),
            ("needs:me", ["Conflict", "Conflict"]),
            ("status:pending needs:me", []),
        ):
            await pilot.press("f")
            await answer(pilot, text, clear=True)
            await settle(pilot)
            assert [r.status for r in queue.rows] == expected, text
            assert screen.queue_filter == text
        await pilot.press("f")
        await answer(pilot, "status:bogus", clear=True)
        await settle(pilot)
        assert any("bogus" in n for n in notifications(app))
        assert screen.queue_filter == "status:pending needs:me"  # the bad one changed nothing
        await pilot.press("f")
        await answer(pilot, "-", clear=True)
        await settle(pilot)
        assert len(queue.rows) == 4


async def test_the_detail_shows_the_diff_unified_or_side_by_side(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        pending = by_status(screen, "Pending")
        await cursor_to(pilot, queue, lambda row: row.key == pending.id)
        await settle(pilot)
        assert screen.proposal_id == pending.id
        shown = text_of(screen.query_one("#proposal-detail", Static).content)
        assert "Summary: Move $0.1M to cloud" in shown
        assert "- - Personnel: $1.2M" in shown and "+ - Personnel: $1.1M" in shown
        assert not screen.diff_side
        await pilot.press("u")
        await settle(pilot)
        assert screen.diff_side
        side = proposal_detail(screen.shown, pending.id, True)  # type: ignore[arg-type]
        tables = [r for r in side.renderables if isinstance(r, Table)]  # type: ignore[attr-defined]
        assert [c.header for c in tables[0].columns] == ["base", "proposed"]
        flat = text_of(screen.query_one("#proposal-detail", Static).content, 120)
        row = next(line for line in flat.splitlines() if "Personnel" in line)
        assert row.index("$1.2M") < row.index("$1.1M")  # base left, proposed right


async def test_a_conflict_shows_every_side(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, _queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        group = next(iter(doc.conflicts.values()))
        shown = text_of(proposal_detail(screen.shown, group.proposals[0], False))  # type: ignore[arg-type]
        assert f"Conflict {group.id} (human-escalate, escalated to a human): 2 sides" in shown
        for pid in group.proposals:
            assert pid in shown
        assert "+ Currency exposure is hedged under policy H-2." in shown
        assert "+ Currency exposure is capped at 10%." in shown


async def test_approve_asks_why_and_merges(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        pending = by_status(screen, "Pending")
        await cursor_to(pilot, queue, lambda row: row.key == pending.id)
        await pilot.press("a")
        await answer(pilot, "numbers checked")
        await settle(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        assert doc.proposals[pending.id].status == "Merged"
        assert ("numbers checked") in [o.why for _, o in doc.overrides]
        assert queue.current_row is not None and queue.current_row.key == pending.id  # sticky
        assert queue.current_row.status == "Merged"


async def test_escape_at_the_question_does_nothing(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        pending = by_status(screen, "Pending")
        before = screen.shown.doc.sequence  # type: ignore[union-attr]
        await cursor_to(pilot, queue, lambda row: row.key == pending.id)
        await pilot.press("r")
        await wait_until(pilot, lambda: len(app.screen_stack) > 1, "the prompt")
        await pilot.press("escape")
        await settle(pilot)
        assert screen.shown.doc.sequence == before  # type: ignore[union-attr]
        assert pending.status == "Pending"


async def test_reject_force_merge_and_a_refused_approval(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        merged = by_status(screen, "Merged")
        await cursor_to(pilot, queue, lambda row: row.key == merged.id)
        before = doc.sequence
        await pilot.press("a")
        await answer(pilot, "again")
        await settle(pilot)
        refused = [n for n in notifications(app) if n.startswith("Refused:")]
        assert refused and "Merged" in refused[0]
        assert doc.sequence == before
        pending = by_status(screen, "Pending")
        await cursor_to(pilot, queue, lambda row: row.key == pending.id)
        await pilot.press("r")
        await answer(pilot, "the cloud line is wrong")
        await settle(pilot)
        assert doc.proposals[pending.id].status == "Rejected"
        assert doc.proposals[pending.id].reason == "the cloud line is wrong"


async def test_force_merge_one_side_of_a_conflict(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        await pilot.press("home", "m")
        side = queue.current_row.key  # type: ignore[union-attr]
        await answer(pilot, "legal wins")
        await settle(pilot)
        assert doc.proposals[side].status == "Merged"
        assert doc.proposals[side].override is not None
        assert doc.proposals[side].override.why == "legal wins"  # type: ignore[union-attr]


async def test_choose_a_side_of_the_conflict(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, _queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        group = next(iter(doc.conflicts.values()))
        chosen, other = group.proposals[1], group.proposals[0]
        await pilot.press("home", "c")
        await answer(pilot, "nobody", clear=True)  # not a side: refused, nothing done
        await settle(pilot)
        assert any("'nobody' is not one of" in n for n in notifications(app))
        assert group.resolved is None
        await pilot.press("home", "c")
        await answer(pilot, chosen, clear=True)
        await answer(pilot, "the cap is the board's")
        await settle(pilot)
        assert (group.resolved, group.winner) == ("human", chosen)
        assert doc.proposals[chosen].status == "Merged"
        assert doc.proposals[other].status != "Merged"
        assert "capped at 10%" in doc.by_id["sec:risk"].content


async def test_choose_on_a_proposal_in_no_conflict_is_refused(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        pending = by_status(screen, "Pending")
        await cursor_to(pilot, queue, lambda row: row.key == pending.id)
        await pilot.press("c")
        await settle(pilot)
        assert any("is in no conflict" in n for n in notifications(app))
        assert len(app.screen_stack) == 1 or app.screen is screen


async def test_revert_a_merged_proposal(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        merged = by_status(screen, "Merged")
        await cursor_to(pilot, queue, lambda row: row.key == merged.id)
        await pilot.press("R")
        await answer(pilot, "too strong a claim")
        await settle(pilot)
        revert = next(p for p in doc.proposals.values() if p.reverts == merged.id)
        assert revert.summary == "too strong a claim"
        assert doc.proposals[merged.id].reverted_by == revert.id
        assert len(queue.rows) == 5


async def test_an_agent_sees_only_the_proposals_it_may_read(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        await pilot.press("f")
        await answer(pilot, "status:merged", clear=True)
        await settle(pilot)
        screen.run_document({"op": "classify", "sectionId": "sec:summary", "level": "Restricted"})
        await settle(pilot)
        assert len(queue.rows) == 1  # the custodian sees everything
        screen.view_as("intern")
        await settle(pilot)
        assert len(queue.rows) == 0
        intern = doc.agent_named("intern")
        assert queue_ids(doc, intern, QueueFilter(("Merged",))) == []
        assert len(queue_ids(doc, None, QueueFilter(("Merged",)))) == 1


def test_queue_rows_are_made_only_when_read() -> None:
    class Doc:
        proposals: dict[str, Any] = {}

    rows = QueueRows(Doc(), [f"p{i}" for i in range(100_000)], 0)  # type: ignore[arg-type]
    assert len(rows) == 100_000
    assert rows.line_of("p99999") == 99_999 and rows.line_of("nope") is None
    assert rows._made == {}


async def test_help_lists_the_queue_keys(demo: Path) -> None:
    from pact_tui.screens.help import HelpScreen

    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await queue_of(pilot)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        shown = " ".join(text_of(s.content, 140) for s in app.screen.query(Static))
        assert "Proposal queue (P)" in shown
        for tip in ("approve: it merges", "revert a merged proposal", "needs:me"):
            assert tip in shown, tip
