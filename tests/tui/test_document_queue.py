"""The document screen's proposal queue, on the demo workspace's ``memo``: two proposals in a
conflict escalated to the custodian, one pending in its objection window, one merged."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table
from textual.pilot import Pilot
from textual.widgets import Static, TextArea

from engine.protocol.merge import merge_three
from engine.protocol.model import ConflictGroup
from pact_tui.diffs import DiffLine, changed, hunks, side_by_side, unified, word_spans
from pact_tui.screens.choose import ChooseScreen
from pact_tui.screens.confirm import ConfirmScreen
from pact_tui.screens.document import DocumentScreen
from pact_tui.screens.edit import EditScreen
from pact_tui.screens.pick import PickScreen
from pact_tui.widgets.outline import countdown
from pact_tui.widgets.queue import (
    Palette,
    ProposalQueue,
    QueueFilter,
    QueueRows,
    choose_command,
    diff_renderable,
    markers_in,
    merged_text,
    needs_human,
    overlap_spans,
    progress,
    proposal_detail,
    queue_ids,
    short_id,
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


def test_hunks_keep_three_lines_around_each_change() -> None:
    base = "".join(f"line {i}\n" for i in range(1, 21))
    new = base.replace("line 3\n", "line three\n").replace("line 15\n", "line fifteen\nline 15b\n")
    first, second = hunks(base, new)
    assert (first.header, second.header) == ("@@ -1,6 +1,6 @@", "@@ -12,7 +12,8 @@")
    assert [(line.tag, line.text) for line in second.lines] == [
        ("same", "line 12"),
        ("same", "line 13"),
        ("same", "line 14"),
        ("removed", "line 15"),
        ("added", "line fifteen"),
        ("added", "line 15b"),
        ("same", "line 16"),
        ("same", "line 17"),
        ("same", "line 18"),
    ]
    pairs = [(r.left and r.left.text, r.right and r.right.text) for r in second.rows]
    assert pairs[3:5] == [("line 15", "line fifteen"), (None, "line 15b")]
    assert hunks(base, base) == () and hunks("a\n", "a") == ()
    # Changes closer than twice the context are one hunk.
    near = base.replace("line 3\n", "x\n").replace("line 8\n", "y\n")
    assert [h.header for h in hunks(near, base)] == ["@@ -1,11 +1,11 @@"]


def test_one_line_changed_among_thousands_of_repeats_is_found_alone() -> None:
    base = "same\n" * 5_000 + "old\n" + "same\n" * 5_000
    (hunk,) = hunks(base, base.replace("old", "new"))
    assert hunk.header == "@@ -4998,7 +4998,7 @@"
    assert changed(list(hunk.lines)) == (1, 1)


LINES = st.lists(st.sampled_from(["", "a", "b", "same", "x y", "- item"]), max_size=30)


@settings(max_examples=300, deadline=None)
@given(LINES, LINES, st.integers(0, 4))
def test_hunks_hold_both_texts_around_their_changes(old: list[str], new: list[str], n: int) -> None:
    """Each hunk's kept and removed lines are the base's lines it names, its kept and added ones
    the proposed text's; the lines between hunks are the same on both sides; with context
    enough, one hunk holds both texts whole."""
    base, proposed = "\n".join(old), "\n".join(new)
    found = hunks(base, proposed, n)
    a, b = base.splitlines(), proposed.splitlines()
    assert (found == ()) == (a == b)
    gaps_a, gaps_b, seen_a, seen_b = [], [], 0, 0
    for hunk in found:
        first_a = hunk.old_start - 1 if hunk.old_count else hunk.old_start
        first_b = hunk.new_start - 1 if hunk.new_count else hunk.new_start
        left = [line.text for line in hunk.lines if line.tag != "added"]
        right = [line.text for line in hunk.lines if line.tag != "removed"]
        assert left == a[first_a : first_a + hunk.old_count]
        assert right == b[first_b : first_b + hunk.new_count]
        assert [r.left.text for r in hunk.rows if r.left] == left
        assert [r.right.text for r in hunk.rows if r.right] == right
        gaps_a.append(a[seen_a:first_a])
        gaps_b.append(b[seen_b:first_b])
        seen_a, seen_b = first_a + hunk.old_count, first_b + hunk.new_count
    assert gaps_a == gaps_b and a[seen_a:] == b[seen_b:]
    if found and n >= max(len(a), len(b)):
        assert len(found) == 1


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_filter_text_is_a_filter_or_a_value_error(text: str) -> None:
    try:
        wanted = QueueFilter.parse(text)
    except ValueError:
        return
    assert isinstance(wanted, QueueFilter)


def test_the_words_of_a_changed_line_are_matched_when_read() -> None:
    word_spans.cache_clear()
    base = "".join(f"- item {i}: {i * 7} words\n" for i in range(2_000))
    (hunk,) = hunks(base, base.replace("words", "WORDS"))
    assert word_spans.cache_info().currsize == 0  # 2,000 pairs, none matched yet
    removed = hunk.lines[0]
    assert removed == DiffLine("removed", 1, None, "- item 0: 0 words", "- item 0: 0 WORDS")
    assert [t for t, c in removed.spans if c] == ["words"]
    assert [t for t, c in hunk.lines[2_000].spans if c] == ["WORDS"]
    assert word_spans.cache_info().currsize == 1


def test_a_long_diff_is_cut_and_what_is_left_out_counted() -> None:
    base = "".join(f"old {i}\n" for i in range(50))
    new = "".join(f"new {i}\n" for i in range(50))
    shown = text_of(diff_renderable(base, new, False, ("base", "proposed"), Palette(), limit=10))
    assert shown.splitlines()[0] == "@@ -1,50 +1,50 @@"
    assert "… 90 more lines of the diff not shown" in shown
    assert shown.count("- old") == 10 and "+ new" not in shown
    side = text_of(diff_renderable(base, new, True, ("base", "proposed"), Palette(), limit=10))
    assert "… 40 more rows not shown" in side
    assert text_of(diff_renderable(base, base, False, ("a", "b"), Palette())).strip() == (
        "(no change)"
    )


def test_the_three_way_result_marks_each_overlap_from_merge3() -> None:
    base = "# T\n\na\nb\nc\n"
    result = merge_three(base, base.replace("b", "B1"), base.replace("b", "B2"))
    lines = result.text.splitlines()
    assert overlap_spans(lines) == [(result.overlaps[0].line, result.overlaps[0].line + 6)]
    shown = merged_text(result.text, Palette()).plain.splitlines()
    assert shown[:3] == ["  # T", "  ", "  a"]
    assert shown[3:10] == [
        "⚠ <<<<<<< ours",
        "│ B1",
        "⚠ ||||||| base",
        "│ b",
        "⚠ =======",
        "│ B2",
        "⚠ >>>>>>> theirs",
    ]
    assert shown[10] == "  c"
    # A long result shows its overlaps with the lines around them, the rest counted.
    long = "".join(f"p{i}\n" for i in range(1_000))
    result = merge_three(long, long.replace("p500\n", "ours\n"), long.replace("p500\n", "th\n"))
    shown = merged_text(result.text, Palette(), limit=50).plain.splitlines()
    assert shown[0] == "  ⋯ 497 lines" and shown[1] == "  p497"
    assert "⚠ <<<<<<< ours" in shown and shown[-1] == "  ⋯ 496 lines"


def test_a_choice_settles_a_conflict_with_a_side_or_the_settled_result() -> None:
    merged = "# Risk\n\n<<<<<<< ours\nA\n||||||| base\nB\n=======\nC\n>>>>>>> p2\n"
    group = ConflictGroup("g", 1, "merge-both", ["p1", "p2"], 0, "base", merged, 1)
    assert markers_in(merged) == 3
    side = choose_command("sec:risk", group, " p2 ", "legal wins")
    assert side == {
        "op": "resolve",
        "sectionId": "sec:risk",
        "decision": "chose p2",
        "justification": "legal wins",
        "override": False,
        "proposalId": "p2",
    }
    settled = "# Risk\n\nA and C\n\nTitle\n=======\n"  # a heading's underline is no marker
    command = choose_command("sec:risk", group, "merged", "both", settled)
    assert command["content"] == settled and command["override"] is True
    assert "proposalId" not in command
    for choice, content, says in (
        ("merged", None, "still holds 3 merge marker line(s)"),
        ("merged", settled + ">>>>>>> p2\n", "still holds 1 merge marker line(s)"),
        ("p3", None, "'p3' is not one of p1, p2, merged"),
    ):
        try:
            choose_command("sec:risk", group, choice, "why", content)
        except ValueError as error:
            assert says in str(error), error
        else:
            raise AssertionError(f"{choice} was taken")
    group.merged = None  # a conflict of human-escalate: its sides only
    try:
        choose_command("sec:risk", group, "merged", "why", settled)
    except ValueError as error:
        assert "'merged' is not one of p1, p2" in str(error)
    else:
        raise AssertionError("merged was taken without a three-way result")


def test_a_filter_names_a_status_that_does_not_exist() -> None:
    wanted = QueueFilter.parse("status:merged author:legal section:sec:risk needs:me risk")
    assert wanted == QueueFilter(("Merged",), ("sec:risk",), ("legal",), True, ("risk",))
    for text, says in (
        ("status:mergd", "no status 'mergd' (one of"),
        ("author:", "author: needs a value"),
        ("STATUS:", "status: needs a value"),
        ("needs:you", "needs:you (only needs:me is known)"),
    ):
        try:
            QueueFilter.parse(text)
        except ValueError as error:
            assert says in str(error), (text, error)
        else:
            raise AssertionError(f"{text!r} was taken")
    assert QueueFilter.parse("sec:risk NEEDS:ME") == QueueFilter(needs_me=True, words=("sec:risk",))


def decided(policy: str, *commands: tuple[str, dict[str, Any]]) -> Any:
    """A document of two sections decided by the engine alone, ``commands`` run in turn (an
    actor named ``ann`` is the human; ``@last`` names the newest proposal)."""
    from engine.documents import creation_event
    from engine.protocol.commands import Actor
    from engine.protocol.decide import decide
    from engine.protocol.document import Document
    from engine.protocol.envelope import CountingIds

    ids, doc = CountingIds(), Document()
    markdown = "# Plan\n\nText.\n\n# Risk\n\nNone.\n"
    doc.apply(
        creation_event(
            name="plan",
            markdown=markdown,
            document_id=ids.uuid(),
            event_id=ids.uuid(),
            epoch_ms=0,
            human="ann",
            policy=policy,
            window_s=60,
            strategy="human-escalate",
            default_trust="Collaborator",
        )
    )
    for who, command in commands:
        if command.get("proposalId") == "@last":  # the newest proposal, as in the demo's script
            command = {**command, "proposalId": next(reversed(doc.proposals))}
        actor = Actor.human(who) if who == "ann" else Actor.agent(who)
        decide(doc, command, actor, 1_000, ids)
    return doc


def test_progress_says_what_each_proposal_waits_for() -> None:
    joins = [(name, {"op": "join", "agentName": name}) for name in ("a", "b", "c", "d")]
    propose = {"op": "propose", "sectionId": "sec:risk", "newContent": "# Risk\n\nSome.\n"}
    doc = decided(
        "majority", *joins, ("a", propose), ("b", {"op": "approve", "proposalId": "@last"})
    )
    (proposal,) = doc.proposals.values()
    assert progress(doc, proposal, 1_000) == ("1/2 of 3 (majority)", "dim")
    # A salience-10 reviewer blocks an objection window until it acts.
    salience = {"op": "salience", "sectionId": "sec:risk", "score": 10}
    doc = decided("objection-based", *joins, ("c", salience), ("a", propose))
    (proposal,) = doc.proposals.values()
    text, tone = progress(doc, proposal, 1_000)
    assert (text, tone) == ("blocked: salience-10 reviewer(s) c have not acted", "alert")
    assert not needs_human(doc, proposal)
    # Approved under its policy, but the section is flagged: paused, and a human's to settle.
    flag = {"op": "escalate", "sectionId": "sec:risk", "reason": "check"}
    approve = {"op": "approve", "proposalId": "@last"}
    doc = decided("single", *joins, ("a", propose), ("d", flag), ("b", approve))
    (proposal,) = doc.proposals.values()
    assert proposal.status == "Approved"
    assert progress(doc, proposal, 1_000) == (
        "approved, paused: sec:risk is escalated to a human",
        "alert",
    )
    assert needs_human(doc, proposal)


def test_a_guarded_or_objected_proposal_is_under_needs_me_and_the_flag() -> None:
    """A proposal that removes most of its section waits for a human: ``needs:me`` lists it,
    the inbox holds it and the header's ⚑ counts it; so does an objected one."""
    from pact_tui.widgets.inbox import inbox_rows, open_items

    joins = [(name, {"op": "join", "agentName": name}) for name in ("a", "b")]
    gut = {"op": "propose", "sectionId": "sec:plan", "newContent": "# Plan\n", "summary": "cut"}
    keep = {"op": "propose", "sectionId": "sec:risk", "newContent": "# Risk\n\nSome.\n"}
    guard = {"op": "policy", "removalGuard": 0, "why": "any removal waits"}
    doc = decided("objection-based", *joins, ("ann", guard), ("a", gut), ("a", keep))
    cut, kept = doc.proposals.values()
    assert cut.removes_most == (1, 2, 0) and kept.removes_most is None
    assert progress(doc, cut, 1_000) == ("removes 1 of 2 lines: waits for a human", "warn")
    assert needs_human(doc, cut) and not needs_human(doc, kept)
    assert queue_ids(doc, None, QueueFilter.parse("needs:me")) == [cut.id]
    [row] = inbox_rows(doc, None)
    assert (row.kind, row.ref, row.section_id, row.text) == (
        "proposal",
        cut.id,
        "sec:plan",
        "removes 1 of 2 lines: cut",
    )
    assert open_items(doc) == 1
    objection = {"op": "object", "proposalId": "@last", "reason": "no"}
    doc = decided("objection-based", *joins, ("a", keep), ("b", objection))
    (objected,) = doc.proposals.values()
    assert objected.status == "Objected"
    assert progress(doc, objected, 1_000) == ("objected: waits for a human", "warn")
    assert queue_ids(doc, None, QueueFilter.parse("needs:me")) == [objected.id]
    assert [r.text for r in inbox_rows(doc, None)] == ["objected (no)"]
    assert open_items(doc) == 1


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


@pytest.mark.slow
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
        # The words that changed inside a changed line are marked, and only they.
        assert screen.shown is not None
        detail: Any = proposal_detail(screen.shown, pending.id, False)
        diff = detail.renderables[-1]
        marked = [
            diff.plain[span.start : span.end] for span in diff.spans if "reverse" in str(span.style)
        ]
        assert marked == ["2M", "6M", "1M", "7M"]
        await pilot.press("vertical_line")
        await settle(pilot)
        assert screen.diff_side
        side: Any = proposal_detail(screen.shown, pending.id, True)
        tables = [r for r in side.renderables if isinstance(r, Table)]
        assert [str(c.header) for c in tables[0].columns] == ["base", "proposed"]
        cells = [cell for column in tables[0].columns for cell in column.cells]
        marked = [
            cell.plain[span.start : span.end]
            for cell in cells
            for span in cell.spans
            if "reverse" in str(span.style)
        ]
        assert sorted(marked) == ["1M", "2M", "6M", "7M"]
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


@pytest.mark.slow
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
        # the cursor went on to an open proposal (test_document_details.py says which)
        assert queue.current_row is not None and queue.current_row.key != pending.id
        assert queue.current_row.status in ("Conflict", "Pending", "Approved")


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


@pytest.mark.slow
async def test_reject_force_merge_and_a_refused_approval(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        merged = by_status(screen, "Merged")
        await cursor_to(pilot, queue, lambda row: row.key == merged.id)
        before = doc.sequence
        await pilot.press("a")
        await settle(pilot)
        assert app.screen is screen  # refused before anything is asked
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


@pytest.mark.slow
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


@pytest.mark.slow
async def test_choose_a_side_of_the_conflict(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, _queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        group = next(iter(doc.conflicts.values()))
        chosen, other = group.proposals[1], group.proposals[0]
        await pilot.press("home", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, PickScreen), "the sides")
        picker = app.screen
        assert [p.value for p in picker.left] == list(group.proposals)
        await pilot.press(*"nobody", "enter")  # not a side: nothing left to pick
        await pilot.pause()
        assert app.screen is picker and picker.left == []
        await pilot.press("escape")
        await settle(pilot)
        assert group.resolved is None
        await pilot.press("home", "c")
        await answer(pilot, chosen[-6:], clear=True)  # the end of its id, as the row shows it
        await answer(pilot, "the cap is the board's")
        await settle(pilot)
        settled = doc.conflicts[group.id]
        assert (settled.resolved, settled.winner) == ("human", chosen)
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


@pytest.mark.slow
async def test_revert_a_merged_proposal(demo: Path) -> None:
    """Before it is confirmed, the revert says what it becomes: merged at once, or waiting as
    the policy says (and then "revert now" is offered)."""
    from engine.protocol.commands import Actor
    from engine.protocol.decide import revert_outcome

    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        merged = by_status(screen, "Merged")
        outcome = revert_outcome(doc, Actor.human("ann"), screen.now_ms, merged.id)
        await cursor_to(pilot, queue, lambda row: row.key == merged.id)
        await pilot.press("u")
        await wait_until(pilot, lambda: app.screen is not screen, "the question")
        if not outcome.at_once:
            assert isinstance(app.screen, ChooseScreen)
            assert outcome.says in app.screen.title_text
            assert [c.value for c in app.screen.choices] == ["policy", "now"]
            await pilot.press("p")
        question = app.screen.question  # type: ignore[attr-defined]
        assert outcome.says in question and f"…{merged.id[-8:]}" in question
        await answer(pilot, "too strong a claim")
        await settle(pilot)
        revert = next(p for p in doc.proposals.values() if p.reverts == merged.id)
        assert revert.summary == "too strong a claim"
        assert doc.proposals[merged.id].reverted_by == revert.id
        assert (revert.status == "Merged") == outcome.at_once
        assert revert.override is None
        assert len(queue.rows) == 5


@pytest.mark.slow
async def test_revert_now_is_an_override_that_merges_at_once(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        screen.run_document({"op": "policy", "policy": "human-only", "why": "hold every change"})
        await settle(pilot)
        merged = by_status(screen, "Merged")
        await cursor_to(pilot, queue, lambda row: row.key == merged.id)
        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, ChooseScreen), "the choice")
        assert "A revert waits for a human (human-only)." in app.screen.title_text
        await pilot.press("n")
        await answer(pilot, "it broke the build")
        await settle(pilot)
        revert = next(p for p in doc.proposals.values() if p.reverts == merged.id)
        assert revert.status == "Merged"
        assert revert.override is not None and revert.override.why == "it broke the build"


@pytest.mark.slow
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


async def test_reverting_a_pending_proposal_is_refused(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        pending = by_status(screen, "Pending")
        before = doc.sequence
        await cursor_to(pilot, queue, lambda row: row.key == pending.id)
        await pilot.press("u")
        await settle(pilot)
        assert app.screen is screen  # refused before anything is asked
        refused = [n for n in notifications(app) if n.startswith("Refused:")]
        assert refused and f"{pending.id} is Pending, not Merged" in refused[0]
        assert doc.sequence == before and pending.status == "Pending"
        assert len(queue.rows) == 4


async def test_rows_show_the_end_of_each_id_and_votes_say_who_when_and_why(
    demo: Path,
) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        lines = lines_of(queue)
        for line, row in zip(lines, queue.rows, strict=True):
            assert f" {row.key[-6:]} " in line and short_id(row.key) == row.key[-6:]
        merged = by_status(screen, "Merged")
        (vote,) = merged.approvals.values()
        assert screen.shown is not None
        later = replace(screen.shown, now_ms=vote.at_ms + 125_000)
        detail = text_of(proposal_detail(later, merged.id, False))
        assert "approved by agent legal 2m05s ago" in detail
        # one line changed (the blank line the section ends with is the document's: bug 7)
        assert "Diff against its base (-1 +1 lines):\n@@ -1,3 +1,3 @@\n" in detail


async def merge_both_conflict(
    pilot: Pilot[Any], screen: DocumentScreen, legal: str = "hedged under H-2."
) -> Any:
    """Legal and finance rewrite the same line of ``sec:summary`` under ``merge-both`` (legal's
    ending it with ``legal``): the three-way merge overlaps, and the conflict goes to the
    custodian."""
    from engine.protocol.commands import Actor

    doc = screen.shown.doc  # type: ignore[union-attr]
    screen.run_document({"op": "policy", "strategy": "merge-both", "why": "merge them"})
    await settle(pilot)
    for who, end in (("legal", legal), ("finance", "hedged, within 10%.")):
        command = {
            "op": "propose",
            "sectionId": "sec:summary",
            "newContent": f"# Summary\n\nThe project is on budget, on time, and {end}\n",
            "summary": f"{who}'s summary",
        }
        await screen.workspace.run_document("memo", command, Actor.agent(who))
    screen.revision = doc.sequence
    await settle(pilot)
    group = next(g for g in doc.conflicts.values() if g.strategy == "merge-both")
    assert group.overlaps == 1 and group.escalated_ms is not None
    return group


@pytest.mark.slow
async def test_a_merge_both_conflict_shows_its_sides_and_marked_three_way_result(
    demo: Path,
) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        group = await merge_both_conflict(pilot, screen)
        side = group.proposals[0]
        await cursor_to(pilot, queue, lambda row: row.key == side)
        await settle(pilot)
        assert screen.proposal_id == side
        shown = text_of(screen.query_one("#proposal-detail", Static).content, 120)
        assert f"Conflict {group.id} (merge-both, escalated to a human): 2 sides" in shown
        settle_it = "(c, then merged: settle it by hand)"
        assert f"Three-way result (1 overlapping hunk(s)) {settle_it}:" in shown
        for pid in group.proposals:
            assert f"{pid} by " in shown
        result = shown[shown.index("Three-way result") :].splitlines()
        assert "⚠ <<<<<<< merged so far" in result
        assert "│ The project is on budget, on time, and hedged under H-2." in result
        assert "│ The project is on budget, on time, and hedged, within 10%." in result
        # Choosing the result opens it to settle by hand; saved with its markers, it is refused.
        before = doc.sequence
        await pilot.press("c")
        await answer(pilot, "merged", clear=True)
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen), "the editor")
        area = app.screen.query_one(TextArea)
        assert area.text == group.merged
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert any("still holds 3 merge marker line(s)" in n for n in notifications(app))
        assert doc.sequence == before and group.resolved is None
        # Escape in the editor does nothing.
        await pilot.press("c")
        await answer(pilot, "merged", clear=True)
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen), "the editor")
        await pilot.press("escape")
        await settle(pilot)
        assert doc.sequence == before and app.screen is screen
        # Edited, Escape asks before it throws the edits away (issue 24): n keeps them.
        await pilot.press("c")
        await answer(pilot, "merged", clear=True)
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen), "the editor")
        editor = app.screen
        editor.query_one(TextArea).text = "# Summary\n\nHalf settled.\n"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        assert "Throw away your edits?" in str(app.screen.query_one("#confirm-question").render())
        await pilot.press("n")  # no settle: the command waits for the editor, still open
        await wait_until(pilot, lambda: app.screen is editor, "back to the editor")
        assert editor.query_one(TextArea).text == "# Summary\n\nHalf settled.\n"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await settle(pilot)
        assert doc.sequence == before and app.screen is screen
        # Settled by hand, then justified: the section takes it and the conflict closes.
        await pilot.press("c")
        await answer(pilot, "merged", clear=True)
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen), "the editor")
        text = "# Summary\n\nThe project is on budget, on time, and hedged under H-2, within 10%.\n"
        app.screen.query_one(TextArea).text = text
        await pilot.press("ctrl+s")
        await answer(pilot, "both are right")
        await settle(pilot)
        settled = doc.conflicts[group.id]
        assert settled.resolved == "human"
        assert doc.by_id["sec:summary"].content.strip() == text.strip()
        assert all(doc.proposals[pid].status == "Rejected" for pid in group.proposals)
        assert ("both are right") in [o.why for _, o in doc.overrides]


async def test_a_three_way_result_holding_control_characters_is_not_edited(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, _queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        group = await merge_both_conflict(pilot, screen, "hedged\x1b[2J.")
        await cursor_to(pilot, _queue, lambda row: row.key == group.proposals[0])
        before = doc.sequence
        shown = text_of(screen.query_one("#proposal-detail", Static).content, 120)
        assert "hedged\\u001b[2J." in shown  # shown escaped
        await pilot.press("c")
        await answer(pilot, "merged", clear=True)
        await settle(pilot)
        assert not isinstance(app.screen, EditScreen)
        assert any("holds control characters" in n for n in notifications(app))
        assert doc.sequence == before and group.resolved is None


async def test_a_question_holding_square_brackets_is_text_not_markup(demo: Path) -> None:
    """The prompts name ids and sections; ``[bold]`` or an unclosed ``[/x]`` in one was read as
    markup (styled, or a crash)."""
    from pact_tui.screens.prompt import PromptScreen

    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await queue_of(pilot)
        app.push_screen(PromptScreen("Why [/not-a-tag] and [bold]x[/bold]?"))
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the prompt")
        await pilot.pause()
        shown = " ".join(str(label.content) for label in app.screen.query("Label"))
        assert "Why [/not-a-tag] and [bold]x[/bold]?" in shown


async def test_a_hidden_queue_is_made_again_only_when_it_is_shown(demo: Path) -> None:
    """A change of the document while another view is in front leaves the queue's rows as
    they were (only the view shown is made again, at 200,000 events the hidden ones were most
    of a change's cost); showing the queue makes them from the document as it is now."""
    from engine.protocol.commands import Actor
    from engine.workspace import Workspace
    from pact_tui.screenshot import fixed_clock

    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        before = [row.key for row in queue.rows]
        await pilot.press("O")  # the outline in front
        await settle(pilot)
        agent = next(iter(screen.shown.doc.active))  # type: ignore[union-attr]
        async with await Workspace.open(demo, watch=False, lazy=True, clock=fixed_clock()) as other:
            command = {"op": "propose", "sectionId": "sec:summary", "newContent": "# S\n\nNew.\n"}
            await other.run_document("memo", command, Actor.agent(agent))
        revision = screen.revision
        await pilot.press("t")
        await wait_until(pilot, lambda: screen.revision > revision, "the proposal to be read")
        await settle(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        assert len(doc.proposals) == len(before) + 1
        assert [row.key for row in queue.rows] == before  # hidden: not made again
        await pilot.press("P")
        await settle(pilot)
        assert sorted(row.key for row in queue.rows) == sorted(doc.proposals)
        assert queue.border_title == f"proposals ({len(doc.proposals)})"
