"""The document screen's escalation inbox, agents roster, events view and view-as-agent, on
the demo workspace's ``memo``: an open question, an escalated conflict, four agents (one an
Observer), a Confidential section nobody is cleared for."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text
from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import Markdown, Static

from pact_tui.screens.document import VIEWS, DocumentScreen, resolve_command
from pact_tui.screens.pick import PickScreen
from pact_tui.screens.prompt import PromptScreen
from pact_tui.screens.reader import ReaderScreen
from pact_tui.widgets.agents import AgentRoster
from pact_tui.widgets.events import EventFilter, EventList, _clock
from pact_tui.widgets.heatmap import SalienceHeatmap
from pact_tui.widgets.inbox import EscalationInbox, InboxRow, inbox_rows
from pact_tui.widgets.outline import SectionOutline, countdown
from pact_tui.widgets.queue import ProposalQueue
from pact_tui.widgets.rows import RowList
from tests import barrier_world as bw

from .inspector import (
    SIZE,
    inspector,
    notifications,
    screen_text,
    settle,
    status_text,
    wait_until,
)


def lines_of(rows: Any) -> list[str]:
    return [rows.render_line(y).text.rstrip() for y in range(len(rows.rows))]


async def opened(pilot: Pilot[Any], view: str | None = None) -> DocumentScreen:
    await pilot.press("2")
    screen = pilot.app.screen
    assert isinstance(screen, DocumentScreen), screen
    await wait_until(pilot, lambda: screen.shown is not None, "the memo to load")
    if view is not None:
        await pilot.press(view)
        await settle(pilot)
    return screen


async def answer(pilot: Pilot[Any], text: str, *, clear: bool = False) -> None:
    """Type ``text`` into the prompt (or the picker: it narrows to the first option left) that
    is open, and confirm it."""
    app = pilot.app
    await wait_until(
        pilot, lambda: isinstance(app.screen, (PromptScreen, PickScreen)), "a prompt or a picker"
    )
    prompt = app.screen
    if clear:
        await pilot.press("ctrl+u")
    await pilot.press(*text, "enter")
    # Not settle(): the worker asking may be waiting for its next question.
    await wait_until(pilot, lambda: prompt not in app.screen_stack, "the prompt to close")
    await pilot.pause()


async def cursor_to(pilot: Pilot[Any], rows: Any, wanted: Any) -> None:
    """Move the cursor of ``rows`` with the keys until ``wanted(row)`` holds."""
    await pilot.press("home")
    for _ in range(len(rows.rows)):
        if wanted(rows.current_row):
            return
        await pilot.press("down")
    assert wanted(rows.current_row), rows.rows


async def test_the_inbox_lists_what_waits_oldest_first_with_countdowns(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "I")
        inbox = screen.query_one(EscalationInbox)
        doc = screen.shown.doc  # type: ignore[union-attr]
        # A section flagged now, by the custodian: it joins the question and the conflict.
        screen.run_document({"op": "escalate", "sectionId": "sec:budget", "reason": "check"})
        await settle(pilot)
        await wait_until(pilot, lambda: len(inbox.rows) == 3, "three waiting items")
        question = next(q for q in doc.queries.values() if q.status == "open")
        conflict = next(g for g in doc.conflicts.values() if g.resolved is None)
        assert {row.key for row in inbox.rows} == {
            f"question:{question.id}",
            f"conflict:{conflict.id}",
            "flag:sec:budget",
        }
        # Who asked, flagged or escalated, each with its kind.
        assert {row.kind: row.by for row in inbox.rows} == {
            "question": "agent legal",
            "conflict": "system",
            "flag": "human ann",
        }
        conflict_row = next(row for row in inbox.rows if row.kind == "conflict")
        assert conflict_row.text.endswith(": agent legal, agent finance")
        since = [row.since_ms for row in inbox.rows]
        assert since == sorted(since)
        assert since == sorted([question.asked_ms, conflict.escalated_ms, since[0]])  # type: ignore[list-item]
        line = lines_of(inbox)[[r.kind for r in inbox.rows].index("question")]
        assert question.question in line
        assert f"⏳{countdown(question.due_ms, screen.shown.now_ms)}" in line  # type: ignore[union-attr]
        # The badge counts them; the briefing of the row under the cursor is beside it.
        assert "⚑ 3 waiting" in str(screen.query_one("#doc-status", Static).render())
        await cursor_to(pilot, inbox, lambda r: r is not None and r.kind == "conflict")
        briefing = str(screen.query_one("#inbox-briefing", Static).render())
        assert "Conflict" in briefing and "Briefing on sec:risk" in briefing


async def test_respond_answers_the_question_and_it_leaves_the_inbox(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "I")
        inbox = screen.query_one(EscalationInbox)
        await wait_until(pilot, lambda: len(inbox.rows) == 2, "the rows")
        await cursor_to(pilot, inbox, lambda r: r is not None and r.kind == "question")
        row: InboxRow = inbox.current_row  # type: ignore[assignment]
        await pilot.press("e")
        await answer(pilot, "yes")
        query = screen.shown.doc.queries[row.ref]  # type: ignore[union-attr]
        await wait_until(pilot, lambda: query.status == "answered", "the answer")
        assert (query.response, query.responder) == ("yes", "ann")
        # It waits no more; it stays below what waits, greyed, with the answer (its history).
        assert [(r.kind, r.closed) for r in inbox.rows] == [
            ("conflict", None),
            ("question", "answered by human ann: yes"),
        ]
        assert lines_of(inbox)[1].startswith("✓ sec:risk answered by human ann: yes · Include")
        assert "⚑ 1 waiting" in str(screen.query_one("#doc-status", Static).render())
        assert inbox.border_title is not None and "(1) · 1 settled" in str(inbox.border_title)
        # Acting on a settled item does nothing, and says so.
        await cursor_to(pilot, inbox, lambda r: r is not None and r.closed is not None)
        before = screen.shown.doc.sequence  # type: ignore[union-attr]
        await pilot.press("e")
        await settle(pilot)
        assert "Settled already: answered by human ann: yes" in notifications(app)[-1]
        assert screen.shown.doc.sequence == before  # type: ignore[union-attr]


async def test_dismiss_closes_the_question(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "I")
        inbox = screen.query_one(EscalationInbox)
        await wait_until(pilot, lambda: len(inbox.rows) == 2, "the rows")
        await cursor_to(pilot, inbox, lambda r: r is not None and r.kind == "question")
        row: InboxRow = inbox.current_row  # type: ignore[assignment]
        await pilot.press("X")
        await answer(pilot, "duplicate")
        query = screen.shown.doc.queries[row.ref]  # type: ignore[union-attr]
        await wait_until(pilot, lambda: query.status == "dismissed", "the dismissal")
        assert row not in inbox.rows
        [settled] = [r for r in inbox.rows if r.key == row.key]
        assert settled.closed == "dismissed by a human"


async def test_escape_at_a_prompt_does_nothing(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "I")
        inbox = screen.query_one(EscalationInbox)
        await wait_until(pilot, lambda: len(inbox.rows) == 2, "the rows")
        before = screen.shown.doc.sequence  # type: ignore[union-attr]
        await pilot.press("R")
        await answer(pilot, "decision only")  # what goes in the section: nothing new
        await answer(pilot, "hedge")  # the decision...
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "justification")
        await pilot.press("escape")  # ...but no justification
        await settle(pilot)
        assert screen.shown.doc.sequence == before  # type: ignore[union-attr]
        assert len(inbox.rows) == 2


async def test_resolve_decides_the_escalated_conflict(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "I")
        inbox = screen.query_one(EscalationInbox)
        await wait_until(pilot, lambda: len(inbox.rows) == 2, "the rows")
        await cursor_to(pilot, inbox, lambda r: r is not None and r.kind == "conflict")
        row: InboxRow = inbox.current_row  # type: ignore[assignment]
        doc = screen.shown.doc  # type: ignore[union-attr]
        await pilot.press("R")
        await answer(pilot, "decision only")
        await answer(pilot, "hedge")
        await answer(pilot, "board")
        await answer(pilot, "y", clear=True)  # override: every other open proposal rejected
        group = doc.conflicts[row.ref]
        await wait_until(pilot, lambda: group.resolved == "human", "the conflict resolved")
        resolution = next(iter(doc.resolutions.values()))
        assert (resolution.decision, resolution.justification, resolution.override) == (
            "hedge",
            "board",
            True,
        )
        assert resolution.by == "ann"
        assert not doc.open_on(doc.by_id["sec:risk"].key)
        assert row not in inbox.rows
        [settled] = [r for r in inbox.rows if r.key == row.key]
        assert settled.closed == "resolved (human)"


async def test_a_refused_resolve_is_shown_and_changes_nothing(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "I")
        inbox = screen.query_one(EscalationInbox)
        await wait_until(pilot, lambda: len(inbox.rows) == 2, "the rows")
        before = screen.shown.doc.sequence  # type: ignore[union-attr]
        screen.run_document(resolve_command("sec:risk", "hedge", "", "y"))  # no justification
        await settle(pilot)
        refused = [n for n in notifications(app) if n.startswith("Refused:")]
        assert refused and "justification" in refused[0], notifications(app)
        assert screen.shown.doc.sequence == before  # type: ignore[union-attr]
        assert not screen.shown.doc.resolutions  # type: ignore[union-attr]
        assert len(inbox.rows) == 2


@pytest.mark.slow
async def test_the_roster_shows_trust_and_clearance_and_a_trust_change_works(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "A")
        roster = screen.query_one(AgentRoster)
        doc = screen.shown.doc  # type: ignore[union-attr]
        await wait_until(pilot, lambda: len(roster.rows) == len(doc.agents), "the roster")
        for row, line in zip(roster.rows, lines_of(roster), strict=True):
            agent = doc.agents[row.key]
            # Columns as wide as what they hold, the name first and whole.
            cells = re.split(r"\s{2,}", line)
            assert cells[0].startswith(agent.name) and cells[1:3] == [agent.trust, "uncleared"]
            assert any(cell.startswith("evict ") for cell in cells)
        intern = doc.agent_named("intern")
        assert intern is not None and intern.trust == "Observer"
        await cursor_to(pilot, roster, lambda r: r is not None and r.name == "intern")
        await pilot.press("T")
        await answer(pilot, "Suggester", clear=True)
        await answer(pilot, "earned")
        await wait_until(pilot, lambda: doc.agents[intern.id].trust == "Suggester", "new trust")
        assert re.split(r"\s{2,}", lines_of(roster)[roster.cursor_line])[1] == "Suggester"
        # A level that does not exist is refused, shown, and changes nothing.
        before = doc.sequence
        # A level is picked, never typed: one that does not exist cannot be picked.
        await pilot.press("T")
        await wait_until(pilot, lambda: isinstance(app.screen, PickScreen), "the levels")
        await pilot.press(*"Boss", "enter")
        await pilot.pause()
        assert isinstance(app.screen, PickScreen) and app.screen.left == []
        await pilot.press("escape")
        await settle(pilot)
        assert doc.sequence == before and doc.agents[intern.id].trust == "Suggester"


async def test_clearance_and_remove_from_the_roster(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "A")
        roster = screen.query_one(AgentRoster)
        doc = screen.shown.doc  # type: ignore[union-attr]
        await wait_until(pilot, lambda: len(roster.rows) == len(doc.agents), "the roster")
        await cursor_to(pilot, roster, lambda r: r is not None and r.name == "finance")
        finance = doc.agent_named("finance")
        assert finance is not None
        await pilot.press("L")
        await answer(pilot, "Confidential")
        await wait_until(pilot, lambda: finance.clearance == "Confidential", "the clearance")
        assert "Confidential" in re.split(r"\s{2,}", lines_of(roster)[roster.cursor_line])
        await pilot.press("delete")
        await answer(pilot, "done")
        await wait_until(pilot, lambda: finance.gone == "removed", "the removal")
        assert "finance" not in doc.active


@pytest.mark.slow
async def test_the_events_view_lists_the_stream_and_filters_it(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "E")
        events = screen.query_one(EventList)
        doc = screen.shown.doc  # type: ignore[union-attr]
        await wait_until(pilot, lambda: len(events.rows) == doc.sequence, "every event")
        assert [row.sequence for row in events.rows] == list(range(doc.sequence))
        assert events.current_row is not None
        assert events.current_row.sequence == doc.sequence - 1  # following the newest
        log = await screen.workspace.document_events("memo")
        await pilot.press("f")
        await answer(pilot, "type:proposal")
        wanted = [e for e in log if "proposal" in e["eventType"]]
        await wait_until(pilot, lambda: len(events.rows) == len(wanted), "the filtered rows")
        await wait_until(pilot, lambda: not events.rows[-1].loading, "the rows read")
        assert all("proposal" in row.type for row in events.rows)
        # The filter searched every event of the log, and says so.
        assert f"({len(wanted)} of {len(log)} searched) · type:proposal" in str(events.border_title)
        await pilot.press("f")
        await answer(pilot, "agent:legal", clear=True)
        by_legal = [e for e in log if e["actorDisplay"] == "legal"]
        await wait_until(pilot, lambda: len(events.rows) == len(by_legal), "legal's events")
        await wait_until(pilot, lambda: not events.rows[-1].loading, "the rows read")
        assert by_legal and all(row.actor == "legal" for row in events.rows)
        # New events are appended as the document moves.
        await pilot.press("f")
        await answer(pilot, "section:summary", clear=True)
        await wait_until(pilot, lambda: "searched)" in str(events.border_title), "the search done")
        count = len(events.rows)
        screen.run_document({"op": "comment", "sectionId": "sec:summary", "text": "noted"})
        await wait_until(pilot, lambda: len(events.rows) == count + 1, "the new comment")
        await wait_until(pilot, lambda: not events.rows[-1].loading, "the new row read")
        assert events.rows[-1].type == "comment.added"
        assert events.rows[-1].sequence == doc.sequence - 1


async def test_the_events_view_names_each_actors_kind_from_the_event(demo: Path) -> None:
    """The custodian acting as "legal", the name of one of the memo's agents: the two are told
    apart by the kind each event carries (actorKind), not by the name."""
    app = inspector(demo, human="legal")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "E")
        events = screen.query_one(EventList)
        doc = screen.shown.doc  # type: ignore[union-attr]
        await wait_until(pilot, lambda: len(events.rows) == doc.sequence, "every event")
        count = len(events.rows)
        screen.run_document({"op": "comment", "sectionId": "sec:summary", "text": "noted"})
        await wait_until(pilot, lambda: len(events.rows) == count + 1, "the new comment")
        await wait_until(pilot, lambda: not events.rows[-1].loading, "the new row read")
        comment = events.event(events.rows[-1].sequence)
        assert comment is not None
        assert comment["eventType"] == "pact.comment.added"
        assert (comment["actorKind"], comment["actorDisplay"]) == ("Individual", "legal")
        await wait_until(pilot, lambda: not events.rows[0].loading, "the first rows read")
        labels = {row.who for row in events.rows}
        assert {"human ann", "agent legal", "human legal", "system"} <= labels
        by_legal = [r for r in events.rows if r.actor == "legal"]
        assert {r.who for r in by_legal} == {"agent legal", "human legal"}
        # What the screen draws: the newest line (the cursor's) is the human's comment.
        await settle(pilot)
        [newest] = [line for line in lines_of(events) if " comment.added " in line][-1:]
        assert newest.lstrip().startswith(f"{comment['sequenceNumber']} ")
        assert f" {_clock(comment['epochMs'])} comment.added " in newest  # when, in UTC
        assert " human legal " in newest
        drawn = "\n".join(lines_of(events))
        assert " agent legal " in drawn and " system " in drawn


def test_an_event_filter_reads_types_agents_sections_and_words() -> None:
    wanted = EventFilter.parse("type:proposal agent:Legal section:risk merged")
    assert wanted == EventFilter(("proposal",), ("legal",), ("risk",), ("merged",))


async def test_view_as_an_uncleared_agent_hides_the_classified_section(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        outline = screen.query_one(SectionOutline)
        doc = screen.shown.doc  # type: ignore[union-attr]
        await wait_until(pilot, lambda: len(outline.rows) == len(doc.sections), "the rows")
        assert "sec:financials" in [row.key for row in outline.rows]
        await pilot.press("V")
        await answer(pilot, "intern")
        await wait_until(pilot, lambda: screen.shown.reader is not None, "the agent's view")  # type: ignore[union-attr]
        assert screen.shown.reader.name == "intern"  # type: ignore[union-attr]
        keys = [row.key for row in outline.rows]
        assert "sec:financials" not in keys and "sec:summary" in keys
        status = str(screen.query_one("#doc-status", Static).render())
        assert "VIEWING AS intern" in status
        # The status line counts what the agent may know of (issue 24): not the hidden section.
        assert f" {len(keys)} sections " in status and len(keys) < len(doc.sections)
        # The events too: a classified section's event keeps its envelope, not its payload.
        await pilot.press("E")
        events = screen.query_one(EventList)
        await wait_until(pilot, lambda: len(events.rows) == doc.sequence, "the events")
        classified = [r for r in events.rows if r.type == "section.classified"]
        assert classified and classified[0].payload == '{"withheld": true}'
        await pilot.press("V")
        await settle(pilot)
        assert screen.shown.reader is None  # type: ignore[union-attr]
        assert "sec:financials" in [row.key for row in outline.rows]
        status = str(screen.query_one("#doc-status", Static).render())
        assert "VIEWING AS" not in status and f" {len(doc.sections)} sections " in status


async def test_view_as_an_unknown_agent_is_refused(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("V")
        await wait_until(pilot, lambda: isinstance(app.screen, PickScreen), "the agents")
        await pilot.press(*"nobody", "enter")  # no agent is picked: the picker stays
        await pilot.pause()
        assert isinstance(app.screen, PickScreen) and app.screen.left == []
        await pilot.press("escape")
        await settle(pilot)
        assert screen.viewing_as is None
        screen.view_as("nobody")  # by name, from elsewhere: refused, said
        await wait_until(
            pilot, lambda: any("no agent named 'nobody'" in n for n in notifications(app)), "why"
        )
        assert screen.viewing_as is None


# -- view-as, for every reader of tests/barrier_world.py --------------------------------------
@pytest.fixture(scope="session")
def canary_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bw.World]:
    path = tmp_path_factory.mktemp("canary-template") / "canary.pact"
    return path, bw.build_workspace(path)


@pytest.fixture
def canary(canary_template: tuple[Path, bw.World], tmp_path: Path) -> tuple[Path, bw.World]:
    """A fresh copy of the canary world's workspace (the app may write to it)."""
    template, world = canary_template
    for part in template.parent.iterdir():
        shutil.copy(part, tmp_path / part.name)
    return tmp_path / template.name, world


def drawn(widget: Static | Markdown) -> str:
    """What a detail pane holds, as text."""
    if isinstance(widget, Markdown):
        return widget.source
    content = widget.content
    if isinstance(content, str):
        return content
    if isinstance(content, Text | Content):
        return content.plain
    console = Console(width=200, file=io.StringIO(), color_system=None)
    console.print(content)
    return console.file.getvalue()  # type: ignore[attr-defined]


def rows_text(rows: RowList[Any, Any]) -> list[str]:
    """Every row of a list as it draws it (at a width that cuts nothing), in sight or not."""
    return ["".join(seg.text for seg in rows.render_row(row, 400)) for row in rows.rows]


PANES = (
    "#section-markdown",
    "#section-comments",
    "#inbox-briefing",
    "#proposal-detail",
    "#heat-detail",
    "#doc-diff",
)


async def seen_as(pilot: Pilot[Any], screen: DocumentScreen, name: str | None) -> list[str]:
    """Everything the screen holds to draw viewing as ``name`` (None: the custodian), the
    proposal queue in front: the status line, every view's title and rows (hidden or not, and
    each once it is shown: a hidden view is made when it is shown), every detail pane (the
    diff too) for the selection the screen kept (from another reader's view too), then
    for every selection it could hold (a hidden proposal, item or cell, a section of the hidden
    one: the others hold no canary), each beside its view; the screen as drawn at the end."""
    doc = screen.workspace.document(bw.NAME)
    screen.view_as(name)
    await settle(pilot)
    seen = [drawn(screen.query_one("#doc-status", Static))]
    seen += [drawn(screen.query_one(pane, Static | Markdown)) for pane in PANES]
    for view in VIEWS:
        pane = screen.query_one(f"#{view}")
        seen.append(str(pane.border_title))
        if isinstance(pane, RowList):
            seen += rows_text(pane)
    for view in VIEWS:
        screen.view = view
        await settle(pilot)
        pane = screen.query_one(f"#{view}")
        seen.append(str(pane.border_title))
        if isinstance(pane, RowList):
            seen += rows_text(pane)
    seen += [drawn(screen.query_one(pane, Static | Markdown)) for pane in PANES]
    screen.view = "queue"
    await settle(pilot)
    for pid in [None, *doc.proposals]:
        screen.proposal_id = pid
        seen.append(drawn(screen.query_one("#proposal-detail", Static)))
    grid = screen.query_one(SalienceHeatmap).grid
    seen += [f"{s.id} {s.title}" for s in grid.sections]
    seen += [f"invited {grid.invited(s.key)}" for s in grid.sections]
    screen.view = "heatmap"
    await settle(pilot)
    for agent in doc.agents.values():
        for section in doc.sections:
            screen.heat_cell = (agent.id, section.key)
            seen.append(drawn(screen.query_one("#heat-detail", Static)))
    screen.view = "inbox"
    await settle(pilot)
    for row in inbox_rows(doc, None):
        screen.inbox_row = row
        seen.append(drawn(screen.query_one("#inbox-briefing", Static)))
    screen.view = "queue"
    await settle(pilot)
    for section in doc.sections:
        if section.id.startswith(bw.SECRET):
            screen.section_id = section.id
            seen.append(drawn(screen.query_one("#section-markdown", Markdown)))
            seen.append(drawn(screen.query_one("#section-comments", Static)))
    await pilot.pause()
    seen.append(screen_text(pilot.app))
    return seen


def by_projection(doc: Any, events: list[dict[str, Any]]) -> list[list[bw.Reader]]:
    """The readers of the canary world, grouped by what the engine gives the app for each: which
    sections it sees and reads, the content, the outline's rows, the briefings and the events
    as it may see them (everything the screen asks the engine through a reader; the screen
    reads nothing else of the reader but its name and id). Readers of one group are shown the
    same by any screen that draws what the engine gives."""
    from engine.protocol.barriers import reads, sees
    from engine.protocol.views import briefing, content, redact, section_rows

    def dumped(value: Any) -> str:
        return json.dumps(value, sort_keys=True, default=str)

    now_ms = bw.END_NS // 1_000_000
    groups: dict[tuple[Any, ...], list[bw.Reader]] = {}
    for spec in bw.READERS:
        reader = doc.agent_named(spec.name)
        seen = tuple((sees(doc, reader, s), reads(doc, reader, s)) for s in doc.sections)
        key = (
            seen,
            content(doc, reader),
            dumped(section_rows(doc, reader, now_ms)),
            tuple(dumped(briefing(doc, reader, s)) for s in doc.sections),
            tuple(dumped(redact(doc, reader, event)) for event in events),
        )
        groups.setdefault(key, []).append(spec)
    return list(groups.values())


def invited_to_draft(seen: list[str]) -> set[str]:
    """Who the screen says is invited to draft: a briefing names it, a heatmap cell's detail
    (``NAME on SECTION`` first) says it of its agent."""
    named = set(re.findall(r"invited to draft: (\S+)$", "\n".join(seen), re.MULTILINE))
    cells = {t.split(" on ", 1)[0] for t in seen if "invited to draft: its" in t}
    return (named - {"its"}) | cells


@pytest.mark.slow
async def test_view_as_shows_no_reader_what_it_may_not_read(
    canary: tuple[Path, bw.World],
) -> None:
    """The app's view-as, for every context mode x clearance x organisation: no view, no diff,
    and no section, proposal, briefing or cell beside them whatever is selected (what the
    custodian selected before the switch too), holds anything of the hidden section the reader
    may not read, and only an agent that may read the section is named as invited to draft
    it; a reader that may read it sees it.

    Every view and selection is walked once for each group of readers the engine shows the same
    (``by_projection``: 10 groups of the 37 readers), as the group's first reader; the others
    are each viewed as too, and the screen drawn for them checked. Readers the engine groups
    must be owed the same (what ``barrier_world`` works out apart from the engine): an engine
    that showed two readers the same where one may read more fails here."""
    path, world = canary
    app = inspector(path, human=bw.HUMAN, clock=lambda: bw.END_NS)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "P")
        doc = screen.workspace.document(bw.NAME)
        secret = doc.section(bw.SECRET, bw.END_NS // 1_000_000)
        assert secret is not None
        # the diff from just after the classification: the hidden section's merge in it
        events = await screen.workspace.document_events(bw.NAME)
        [classified] = [e for e in events if e["eventType"] == "pact.section.classified"]
        screen.diff_base = classified["sequenceNumber"] + 1
        await wait_until(pilot, lambda: screen.base_doc is not None, "the diff's base")
        seen = await seen_as(pilot, screen, None)
        custodian = "\n".join(seen)
        assert bw.found(custodian) == {"title", "content"}
        drafter = doc.agent_named(bw.DRAFTER)
        assert drafter is not None
        assert f"invited {drafter.id}" in custodian
        assert invited_to_draft(seen) == {bw.DRAFTER}
        groups = by_projection(doc, events)
        assert sum(map(len, groups)) == len(bw.READERS)
        assert len(groups) >= 10  # one for each mode's readers that see it, and more
        for group in groups:
            owed = {(frozenset(bw.allowed(spec)), spec.sees, spec.reads) for spec in group}
            assert len(owed) == 1, [spec.name for spec in group]  # shown the same, owed less
            spec = group[0]
            # as the custodian, the hidden things selected: the screen keeps them
            screen.view_as(None)
            await settle(pilot)
            screen.section_id = bw.DETAIL
            screen.proposal_id = world.refs["proposal"]
            screen.inbox_row = next(r for r in inbox_rows(doc, None) if r.ref == bw.SECRET)
            screen.heat_cell = (drafter.id, secret.key)
            seen = await seen_as(pilot, screen, spec.name)
            assert screen.shown is not None and screen.shown.reader is not None
            assert screen.shown.reader.name == spec.name
            for text in seen:
                assert not bw.leaked(spec, text, world), (spec.name, text)
            everything = "\n".join(seen)
            assert bw.found(everything) == bw.allowed(spec), spec.name
            invited = f"invited {drafter.id}" in everything
            assert invited == spec.reads, spec.name
            assert invited_to_draft(seen) == ({bw.DRAFTER} if spec.reads else set()), spec.name
            for other in group[1:]:  # the screen as drawn, viewed as each of the others
                screen.view_as(other.name)
                await settle(pilot)
                assert screen.shown is not None and screen.shown.reader is not None
                assert screen.shown.reader.name == other.name
                drawn_now = screen_text(app)
                assert not bw.leaked(other, drawn_now, world), (other.name, drawn_now)
                assert bw.found(drawn_now) <= bw.allowed(other), other.name


@pytest.mark.slow
async def test_a_proposal_the_custodian_read_is_not_shown_to_the_agent_viewed_as_later(
    canary: tuple[Path, bw.World],
) -> None:
    """The proposal's detail is drawn only while the queue is in front: coming back to the
    queue as another reader draws it again, through that reader's barriers."""
    path, world = canary
    app = inspector(path, human=bw.HUMAN, clock=lambda: bw.END_NS)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "P")
        queue = screen.query_one(ProposalQueue)
        hidden = world.refs["proposal"]
        await cursor_to(pilot, queue, lambda row: row is not None and row.key == hidden)
        await settle(pilot)
        detail = screen.query_one("#proposal-detail", Static)
        assert bw.found(drawn(detail)) == {"title", "content"}  # the custodian reads it
        await pilot.press("E", "V")
        await answer(pilot, "public")
        await settle(pilot)
        await pilot.press("P")
        await settle(pilot)
        assert bw.found(drawn(detail)) == set()
        assert bw.found(screen_text(app)) == set()


async def test_enter_reads_a_section_whole_only_through_the_viewed_as_barriers(
    canary: tuple[Path, bw.World],
) -> None:
    """Enter on the outline reads the section under the cursor whole (the pane beside renders
    its start), as whoever's eyes the views use: the custodian reads the hidden section, an
    agent that may only know it exists gets no reader."""
    path, _world = canary
    app = inspector(path, human=bw.HUMAN, clock=lambda: bw.END_NS)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "O")
        outline = screen.query_one(SectionOutline)
        await cursor_to(pilot, outline, lambda row: row is not None and row.key == bw.SECRET)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReaderScreen), "the reader")
        assert bw.found(screen_text(app)) >= {"content"}
        await pilot.press("escape")
        summary_only = next(r for r in bw.READERS if r.mode == "SummaryOnly" and r.sees)
        screen.view_as(summary_only.name)
        await settle(pilot)
        await cursor_to(pilot, outline, lambda row: row is not None and row.key == bw.SECRET)
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, ReaderScreen)
        assert bw.found(screen_text(app)) <= {"title"}


async def test_a_clock_tick_does_not_remake_the_event_rows(demo: Path) -> None:
    """The events do not depend on the clock: the countdowns' tick leaves their rows alone,
    while a new event makes them again."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "E")
        events = screen.query_one(EventList)
        doc = screen.shown.doc  # type: ignore[union-attr]
        await wait_until(pilot, lambda: len(events.rows) == doc.sequence, "every event")
        rows = events.rows
        screen.now_ms += 1_000
        await pilot.pause()
        assert screen.shown.now_ms == screen.now_ms  # type: ignore[union-attr]
        assert events.rows is rows
        screen.run_document({"op": "comment", "sectionId": "sec:summary", "text": "noted"})
        await wait_until(pilot, lambda: len(events.rows) == len(rows) + 1, "the new event")
        assert events.rows[: len(rows)] == list(rows)


async def test_the_badge_is_seen_from_the_context_screen_too(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "I")
        inbox = screen.query_one(EscalationInbox)
        await wait_until(pilot, lambda: len(inbox.rows) == 2, "the rows")
        await pilot.press("1")
        await wait_until(pilot, lambda: "⚑ 2 waiting" in status_text(app), "the badge")
        await pilot.press("2")
        await cursor_to(pilot, inbox, lambda r: r is not None and r.kind == "question")
        await pilot.press("X")
        await answer(pilot, "later")
        await pilot.press("1")
        await wait_until(pilot, lambda: "⚑ 1 waiting" in status_text(app), "one less")


async def test_the_badge_is_counted_before_the_document_screen_is_opened(demo: Path) -> None:
    """The app counts what waits from the workspace (issue 25): the context screen's ⚑ says
    2 from the start, with the document screen never opened (it read 0 until it was)."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "⚑ 2 waiting" in status_text(app), "the badge", 10)
        assert app.waiting == 2 and app.document == "memo"
        assert not any(type(s).__name__ == "DocumentScreen" for s in app.screen_stack)


async def test_the_badge_follows_another_process_with_the_document_screen_never_opened(
    demo: Path,
) -> None:
    """Another process dismisses the question: the app, following the change feed, counts one
    less on the context screen."""
    from engine.protocol.commands import Actor
    from engine.workspace import Workspace
    from pact_tui.screenshot import fixed_clock

    app = inspector(demo, human="ann", watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "⚑ 2 waiting" in status_text(app), "the badge", 10)
        async with await Workspace.open(demo, watch=False, clock=fixed_clock()) as other:
            doc = await other.load_document("memo")
            [query] = [q for q in doc.doc.queries.values() if q.status == "open"]
            command = {"op": "dismiss", "queryId": query.id, "why": "elsewhere"}
            await other.run_document("memo", command, Actor.human("bob"))
        await wait_until(pilot, lambda: "⚑ 1 waiting" in status_text(app), "one less")
