"""Names a custodian can read: the agents view on a crowd of 1,000 ``agent-NNNN`` agents (its
columns as wide as what they hold), the heatmap's column headers and the queue's rows by
section title, one filter meaning for ``section:`` in every view, the agent detail pane and
the inbox's history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pact_tui.widgets.agents import AgentRoster

from .crowd import agent_name, build_crowd
from .inspector import inspector, settle
from .test_document_inbox import opened


@pytest.fixture(scope="session")  # kept while other modules' slow tests run
def crowd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import asyncio

    path = tmp_path_factory.mktemp("crowd") / "crowd.pact"
    asyncio.run(build_crowd(path))
    return path


def drawn(rows: Any, count: int) -> list[str]:
    return [rows.render_line(y).text.rstrip() for y in range(count)]


@pytest.mark.parametrize("width", [80, 120, 200])
async def test_the_agents_view_shows_whole_names_in_a_crowd(crowd: Path, width: int) -> None:
    """Bug 4: at 120 columns, with 1,000 agents, every name was cut to "age"."""
    app = inspector(crowd, human="ann")
    async with app.run_test(size=(width, 30)) as pilot:
        screen = await opened(pilot, "A")
        roster = screen.query_one(AgentRoster)
        assert len(roster.rows) == 1_000
        for number, line in enumerate(drawn(roster, 20)):
            assert line.startswith(agent_name(number) + " "), line


# -- one meaning of a filter word in every view ---------------------------------------------------
def three_sections() -> tuple[Any, list[dict[str, Any]]]:
    """A document of ``sec:risk``, ``sec:riskier-bets`` and ``sec:riskier-bets/mitigation``, a
    proposal on each, and its events."""
    from engine.documents import creation_event
    from engine.protocol.commands import Actor
    from engine.protocol.decide import decide
    from engine.protocol.document import Document
    from engine.protocol.envelope import CountingIds

    ids, doc = CountingIds(), Document()
    markdown = "# Risk\n\nA.\n\n# Riskier bets\n\nB.\n\n## Mitigation\n\nC.\n"
    first = creation_event(
        name="plan", markdown=markdown, document_id=ids.uuid(), event_id=ids.uuid(),
        epoch_ms=0, human="ann", policy="single", window_s=60, strategy="first-wins",
        default_trust="Collaborator",
    )  # fmt: skip
    doc.apply(first)
    events = [first]
    me = Actor.agent("a")
    events += decide(doc, {"op": "join", "agentName": "a"}, me, 1_000, ids).events
    for section, text in (
        ("sec:risk", "# Risk\n\nA2.\n"),
        ("sec:riskier-bets", "# Riskier bets\n\nB2.\n"),
        ("sec:riskier-bets/mitigation", "## Mitigation\n\nC2.\n"),
    ):
        command = {"op": "propose", "sectionId": section, "newContent": text}
        events += decide(doc, command, me, 1_000, ids).events
        salience = {"op": "salience", "sectionId": section, "score": 7}
        events += decide(doc, salience, me, 1_000, ids).events
    return doc, events


def test_section_means_an_id_or_a_title_word_in_every_view() -> None:
    """``section:sec:risk`` kept ``sec:riskier-bets`` in the queue (a bare prefix of its id),
    and the heatmap and the events matched any part of an id or a title: one function
    (``engine.protocol.filters``) now says what a section word means, for every view."""
    from dataclasses import replace

    from engine.protocol.audit import EventFilter
    from engine.protocol.filters import section_matches, section_titles
    from pact_tui.widgets.heatmap import HeatFilter, grid_of
    from pact_tui.widgets.queue import QueueFilter, queue_ids

    doc, events = three_sections()
    expected = {
        "sec:risk": ["sec:risk"],
        "SEC:RISK": ["sec:risk"],
        "risk": ["sec:risk"],  # the id without sec:, and the title's word "Risk"
        "riskier-bets": ["sec:riskier-bets", "sec:riskier-bets/mitigation"],  # and under it
        "bets": ["sec:riskier-bets"],
        "mitigation": ["sec:riskier-bets/mitigation"],
        "sec:riskier-bets/mitigation": ["sec:riskier-bets/mitigation"],
        "ris": [],
        "sec:": [],
        "mitigation/": [],
    }
    for word, ids in expected.items():
        queue = {doc.by_key[doc.proposals[p].section].id for p in
                 queue_ids(doc, None, QueueFilter.parse(f"section:{word}"))}  # fmt: skip
        heat = {s.id for s in grid_of(doc, None, HeatFilter.parse(f"section:{word}")).sections}
        wanted = replace(EventFilter.parse(f"section:{word}"), titles=section_titles(doc, None))
        seen = {e["sectionId"] for e in events if wanted.keeps_event(e)}
        assert queue == heat == seen == set(ids), word
    assert section_matches("Bets", "sec:riskier-bets", "Riskier bets")
    assert not section_matches("bets", "sec:riskier-bets", None)  # a title it may not read


# -- the queue's rows -------------------------------------------------------------------------
async def test_queue_rows_show_the_section_title_and_keep_author_and_summary(demo: Path) -> None:
    """The rows named a section by its id (``sec:budget/line-…``), and a conflict's row lost its
    author and summary to what it waits for at 120 columns."""
    from pact_tui.widgets.queue import ProposalQueue

    app = inspector(demo, human="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot, "P")
        queue = screen.query_one(ProposalQueue)
        doc = screen.shown.doc  # type: ignore[union-attr]
        lines = drawn(queue, len(queue.rows))
        for row, line in zip(queue.rows, lines, strict=True):
            proposal = doc.proposals[row.key]
            section = doc.by_key[proposal.section]
            assert f" {section.title} · {row.author} · " in line, line
            assert "sec:" not in line, line
            if row.conflict:
                assert (proposal.summary or "")[:12] in line, line


# -- the heatmap's headers ------------------------------------------------------------------------
def test_a_title_is_abbreviated_word_by_word() -> None:
    from pact_tui.widgets.heatmap import abbreviate

    assert abbreviate("Budget", 3) == "Bud"
    assert abbreviate("Part 12 of the plan", 3) == "P12"
    assert abbreviate("Risk mitigation", 3) == "Rm"
    assert abbreviate("Open questions for legal", 3) == "Oqf"
    assert abbreviate("", 3) == ""


async def test_heatmap_headers_show_titles_and_the_whole_title_on_hover(demo: Path) -> None:
    """The header showed each column's id cut to three characters (``bud``, ``bud``, ``ris``:
    a section and its subsection alike); now the title, word by word, and the whole title
    in a tooltip over the header and in the cursor's subtitle."""
    from textual.content import Content

    from pact_tui.widgets.heatmap import CELL, LABEL, SalienceHeatmap, abbreviate, column_name

    app = inspector(demo, human="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot, "H")
        heatmap = screen.query_one(SalienceHeatmap)
        sections = heatmap.grid.sections
        header = heatmap.render_line(0).text
        for column, section in enumerate(sections[: (heatmap.size.width - LABEL) // CELL]):
            cell = header[LABEL + column * CELL : LABEL + column * CELL + CELL - 1]
            assert cell.rstrip() == column_name(section, CELL - 1), (cell, section.title)
            if section.title:
                assert cell.rstrip() == abbreviate(section.title, CELL - 1)
        line_items = next(n for n, s in enumerate(sections) if s.id == "sec:budget/line-items")
        assert header[LABEL + line_items * CELL :].startswith("LI")
        x = heatmap.content_region.x + LABEL + line_items * CELL + 1
        await pilot.hover(offset=(x, heatmap.content_region.y))
        await settle(pilot)
        tip = heatmap.tooltip
        assert isinstance(tip, Content) and tip.plain == "Line Items (sec:budget/line-items)"
        await pilot.hover(offset=(x, heatmap.content_region.y + 1))  # a cell: no tooltip
        await settle(pilot)
        assert heatmap.tooltip is None


# -- the agent detail pane ------------------------------------------------------------------------
async def test_the_agent_detail_shows_its_sections_proposals_locks_and_keys(demo: Path) -> None:
    from textual.widgets import Static

    from .test_document_inbox import cursor_to
    from .test_document_queue import text_of

    app = inspector(demo, human="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(pilot, "A")
        roster = screen.query_one(AgentRoster)
        doc = screen.shown.doc  # type: ignore[union-attr]
        assert screen.query_one("#agent-pane").display
        assert not screen.query_one("#section-markdown").display
        await cursor_to(pilot, roster, lambda r: r is not None and r.name == "finance")
        await settle(pilot)
        finance = doc.agent_named("finance")
        assert finance is not None and screen.agent_id == finance.id
        shown = text_of(screen.query_one("#agent-detail", Static).content, 120)
        mine = doc.by_author[finance.id]
        assert f"Proposals ({len(mine)}):" in shown
        for pid in mine:
            assert pid[-6:] in shown
        salience = [k for (a, k) in doc.salience if a == finance.id]
        assert f"Sections ({len(salience)}):" in shown
        assert "S10 Budget (sec:budget)" in shown
        held = [s for s in doc.sections if s.lock is not None and s.lock.holder == finance.id]
        assert f"Locks ({len(held)}):" in shown
        assert "Idempotency keys (" in shown
        await pilot.press("O")  # another view: the section's Markdown again
        await settle(pilot)
        assert not screen.query_one("#agent-pane").display
