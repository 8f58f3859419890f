"""The document screen's salience heatmap, on the demo workspace's ``memo``: legal 9 on risk
(an intent and a constraint), finance 6 on risk (a constraint) and 10 on budget, editor 2 on
risk, intern 3 on summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.pilot import Pilot
from textual.widgets import Static

from pact_tui.screens.document import DocumentScreen
from pact_tui.widgets.heatmap import (
    CELL,
    LABEL,
    HeatFilter,
    SalienceHeatmap,
    grid_of,
    next_sort,
)

from .inspector import SIZE, inspector, notifications, settle, wait_until
from .test_document_inbox import answer, opened


async def heatmap_of(pilot: Pilot[Any]) -> tuple[DocumentScreen, SalienceHeatmap]:
    screen = await opened(pilot, "H")
    return screen, screen.query_one(SalienceHeatmap)


def row_text(heatmap: SalienceHeatmap, name: str) -> str:
    line = next(i for i, a in enumerate(heatmap.grid.agents) if a.name == name)
    return heatmap.render_line(line + 1 - int(heatmap.scroll_offset.y)).text


def cell_at(heatmap: SalienceHeatmap, name: str, section_id: str) -> str:
    text = row_text(heatmap, name)
    column = next(i for i, s in enumerate(heatmap.grid.sections) if s.id == section_id)
    start = LABEL + (column - int(heatmap.scroll_offset.x) // CELL) * CELL
    return text[start : start + CELL]


def test_the_filter_says_what_it_does_not_understand() -> None:
    assert HeatFilter.parse("min:7 agent:Leg section:risk sort:total") == HeatFilter(
        7, ("leg",), ("risk",), "total", "document"
    )
    assert HeatFilter.parse("sort:max sort:name") == HeatFilter(0, (), (), "name", "max")
    for bad in ("min:11", "min:x", "sort:joined", "sort:", "agent:", "hello"):
        try:
            HeatFilter.parse(bad)
        except ValueError as error:
            assert repr(bad) in str(error)
        else:
            raise AssertionError(f"{bad!r} was taken")


async def test_cells_show_salience_and_marks(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        _screen, heatmap = await heatmap_of(pilot)
        assert [a.name for a in heatmap.grid.agents] == ["legal", "finance", "editor", "intern"]
        assert cell_at(heatmap, "legal", "sec:risk") == " 9b "  # an intent and a constraint
        assert cell_at(heatmap, "finance", "sec:risk") == " 6c "
        assert cell_at(heatmap, "finance", "sec:budget") == "10  "
        assert cell_at(heatmap, "editor", "sec:risk") == " 2  "
        assert cell_at(heatmap, "intern", "sec:risk") == " ·  "  # not set
        assert "agents x" in str(heatmap.border_title)


async def test_a_tie_and_an_invited_drafter_are_marked(demo: Path) -> None:
    app = inspector(demo, human="ann", step_time=True)
    async with app.run_test(size=SIZE) as pilot:
        screen, heatmap = await heatmap_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        from engine.protocol.commands import Actor

        await screen.workspace.run_document(
            "memo", {"op": "salience", "sectionId": "sec:risk", "score": 9}, Actor.agent("finance")
        )
        screen.revision = doc.sequence
        await settle(pilot)
        grid = heatmap.grid
        risk = doc.by_id["sec:risk"].key
        assert grid.top(risk) == (9, 2)
        header = heatmap.render_line(0).text
        column = next(i for i, s in enumerate(grid.sections) if s.id == "sec:risk")
        assert header[LABEL + column * CELL + CELL - 1] == "="  # the column says: a tie
        _, _, tied = grid.cell(doc.agent_named("legal").id, risk)  # type: ignore[union-attr]
        assert tied
        # Once the intents there align (the intent's window ends unopposed: protocol time is
        # stepped past it), the top agent (legal: registered first) is invited to draft.
        intent = next(iter(doc.intents.values()))
        assert cell_at(heatmap, "legal", "sec:risk")[2] == "b"
        await pilot.press("plus", "full_stop")  # five minutes on
        await settle(pilot)
        assert intent.status == "Accepted"
        assert cell_at(heatmap, "legal", "sec:risk")[2] == "▲"


async def test_the_cursor_shows_the_cells_intents_and_constraints(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, heatmap = await heatmap_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        risk = next(i for i, s in enumerate(heatmap.grid.sections) if s.id == "sec:risk")
        await pilot.press("0", *["right"] * risk)
        await settle(pilot)
        assert screen.heat_cell == (doc.agent_named("legal").id, doc.by_id["sec:risk"].key)  # type: ignore[union-attr]
        detail = str(screen.query_one("#heat-detail", Static).content)
        assert "legal on sec:risk" in detail and "salience 9" in detail
        assert "Add currency risk language [compliance]" in detail
        assert "Must reference hedging policy (unknown)" in detail
        assert "reasoning: Regulator letter of March" in detail  # level 4: everything
        assert heatmap.border_subtitle == "legal · Risk (sec:risk)"
        await pilot.press("down")
        await settle(pilot)
        detail = str(screen.query_one("#heat-detail", Static).content)
        assert "finance on sec:risk" in detail and "Must not name specific instruments" in detail


async def test_filter_and_sort(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, heatmap = await heatmap_of(pilot)
        await pilot.press("f")
        await answer(pilot, "min:6")
        await settle(pilot)
        assert [a.name for a in heatmap.grid.agents] == ["legal", "finance"]
        assert [s.id for s in heatmap.grid.sections] == ["sec:risk", "sec:budget"]
        assert cell_at(heatmap, "legal", "sec:budget") == " ·  "
        await pilot.press("f")
        await answer(pilot, "min:99", clear=True)
        await settle(pilot)
        assert any("'min:99'" in n for n in notifications(app))
        assert screen.heat_filter == "min:6"  # the bad one changed nothing
        await pilot.press("f")
        await answer(pilot, "agent:fin", clear=True)
        await settle(pilot)
        assert [a.name for a in heatmap.grid.agents] == ["finance"]
        await pilot.press("f")
        await answer(pilot, "-", clear=True)
        await settle(pilot)
        await pilot.press("s")  # agents by name
        await settle(pilot)
        assert screen.heat_filter == "sort:name"
        assert [a.name for a in heatmap.grid.agents] == ["editor", "finance", "intern", "legal"]
        await pilot.press("s")  # agents by their total salience
        await settle(pilot)
        assert screen.heat_filter == "sort:total"
        assert [a.name for a in heatmap.grid.agents] == ["finance", "legal", "intern", "editor"]
        await pilot.press("S")  # sections by their top salience, the agents' order kept
        await settle(pilot)
        assert screen.heat_filter == "sort:total sort:max"
        assert [s.id for s in heatmap.grid.sections][:2] == ["sec:budget", "sec:risk"]
        assert heatmap.grid.agents[0].name == "finance"
        await pilot.press("s", "S")  # back to as they joined, in document order
        await settle(pilot)
        assert screen.heat_filter == ""
        assert [a.name for a in heatmap.grid.agents] == ["legal", "finance", "editor", "intern"]
        assert heatmap.grid.sections == [
            s
            for s in screen.shown.doc.sections  # type: ignore[union-attr]
        ]


async def test_an_agent_sees_only_the_sections_it_may_read(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, heatmap = await heatmap_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        assert "sec:financials" in [s.id for s in heatmap.grid.sections]  # Confidential
        screen.view_as("intern")
        await settle(pilot)
        assert "sec:financials" not in [s.id for s in heatmap.grid.sections]
        intern = doc.agent_named("intern")
        ids = [s.id for s in grid_of(doc, intern, HeatFilter()).sections]
        assert ids == [s.id for s in heatmap.grid.sections]


@pytest.mark.slow
async def test_the_cursor_scrolls_a_wide_grid_and_keeps_names_in_place(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, heatmap = await heatmap_of(pilot)
        await wide(pilot, screen, heatmap)
        room = (heatmap.scrollable_content_region.width - LABEL) // CELL
        assert room < 60
        await pilot.press("down", *["right"] * 70)
        await settle(pilot)
        assert heatmap.cursor_column == len(heatmap.grid.sections) - 1
        first = int(heatmap.scroll_offset.x) // CELL
        assert first > 0 and first <= heatmap.cursor_column < first + room
        assert row_text(heatmap, "bob").startswith("bob")  # the names stay in place
        assert cell_at(heatmap, "bob", "sec:part-59") == " 8  "
        assert heatmap.border_subtitle == "bob · Part 59 (sec:part-59)"


def test_the_sort_keys_cycle_one_axis_and_keep_the_other_words() -> None:
    assert next_sort("", "agents") == "sort:name"
    assert next_sort("sort:name", "agents") == "sort:total"
    assert next_sort("sort:total", "agents") == ""
    assert next_sort("", "sections") == "sort:max"
    assert next_sort("sort:max", "sections") == ""
    assert next_sort("min:7 sort:max agent:leg", "agents") == "min:7 sort:max agent:leg sort:name"
    assert next_sort("min:7 sort:total sort:max", "sections") == "min:7 sort:total"


async def test_a_tie_counts_every_agent_whatever_the_filter_hides(demo: Path) -> None:
    from engine.protocol.commands import Actor

    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, heatmap = await heatmap_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        await screen.workspace.run_document(
            "memo", {"op": "salience", "sectionId": "sec:risk", "score": 9}, Actor.agent("finance")
        )
        screen.revision = doc.sequence
        screen.heat_filter = "agent:legal"
        await settle(pilot)
        assert [a.name for a in heatmap.grid.agents] == ["legal"]
        risk = doc.by_id["sec:risk"].key
        assert heatmap.grid.top(risk) == (9, 2)  # finance is hidden, and still ties
        assert heatmap.grid.cell(doc.agent_named("legal").id, risk)[2]  # type: ignore[union-attr]
        line = heatmap.render_line(1 - int(heatmap.scroll_offset.y) + 0)
        column = next(i for i, s in enumerate(heatmap.grid.sections) if s.id == "sec:risk")
        cell = line.crop(LABEL + column * CELL, LABEL + (column + 1) * CELL)
        assert all(seg.style is not None and seg.style.underline for seg in cell)
        await pilot.press("0", *["right"] * column)
        await settle(pilot)
        detail = str(screen.query_one("#heat-detail", Static).content)
        assert "legal on sec:risk" in detail and "tied at the top (9) with finance" in detail


async def wide(pilot: Pilot[Any], screen: DocumentScreen, heatmap: SalienceHeatmap) -> None:
    """Open ``wide``: 60 sections (more than fit), ada and bob joined, bob 8 on part-59."""
    from engine.protocol.commands import Actor

    workspace = screen.workspace
    markdown = "".join(f"# Part {n}\n\nText {n}.\n\n" for n in range(60))
    await workspace.create_document("wide", markdown, human="ann", policy="single")
    for name in ("ada", "bob"):
        await workspace.run_document("wide", {"op": "join", "agentName": name}, Actor.agent(name))
    await workspace.run_document(
        "wide", {"op": "salience", "sectionId": "sec:part-59", "score": 8}, Actor.agent("bob")
    )
    await screen._refresh_documents().wait()
    screen.switch_document("wide")
    await wait_until(pilot, lambda: len(heatmap.grid.sections) >= 60, "the wide document")


async def test_the_grid_keys_move_the_cell_cursor_in_two_dimensions(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, heatmap = await heatmap_of(pilot)
        await wide(pilot, screen, heatmap)
        last = len(heatmap.grid.sections) - 1
        room = heatmap.columns_in_sight
        assert 1 < room < last

        async def keys(*pressed: str) -> tuple[int, int]:
            await pilot.press(*pressed)
            await settle(pilot)
            return heatmap.cursor_line, heatmap.cursor_column

        assert await keys("dollar_sign") == (0, last)
        assert heatmap.border_subtitle == "ada · Part 59 (sec:part-59)"
        assert await keys("0") == (0, 0)
        assert await keys("shift+right") == (0, room)
        assert await keys("ctrl+pagedown") == (0, 2 * room)
        assert await keys("shift+left") == (0, room)
        assert await keys("right", "right", "left") == (0, room + 1)
        assert await keys("ctrl+end") == (1, last)  # bob, the last agent
        assert screen.heat_cell == (
            screen.shown.doc.agent_named("bob").id,  # type: ignore[union-attr]
            screen.shown.doc.by_id["sec:part-59"].key,  # type: ignore[union-attr]
        )
        assert await keys("pageup") == (0, last)
        assert await keys("G") == (1, last)
        assert await keys("g") == (0, last)
        assert await keys("end") == (1, last)  # home and end: the top and bottom, as in a list
        assert await keys("home") == (0, last)
        assert await keys("ctrl+home") == (0, 0)
        assert int(heatmap.scroll_offset.x) == 0
        assert await keys("left", "up") == (0, 0)  # the edges hold


async def test_an_invited_drafter_is_marked_where_nobody_set_salience(demo: Path) -> None:
    """Every agent reviews at the default (5) where none is set: the first to join is invited."""
    from engine.protocol.commands import Actor

    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, heatmap = await heatmap_of(pilot)
        await wide(pilot, screen, heatmap)
        doc = screen.workspace.document("wide")
        await screen.workspace.run_document(
            "wide",
            {"op": "intent", "sectionId": "sec:part-1", "goal": "Expand"},
            Actor.agent("bob"),
        )
        screen.revision = doc.sequence
        await settle(pilot)
        assert cell_at(heatmap, "bob", "sec:part-1") == " ·i "
        assert cell_at(heatmap, "ada", "sec:part-1") == " ·  "  # the intent is only proposed
        intent = doc.intents[doc.intents_on[doc.by_id["sec:part-1"].key][0]]
        intent.status = "Accepted"  # as the window's end would make it (a read-only check)
        heatmap.regrid()
        assert cell_at(heatmap, "ada", "sec:part-1") == " ·▲ "
        assert cell_at(heatmap, "bob", "sec:part-1") == " ·i "
        column = next(i for i, s in enumerate(heatmap.grid.sections) if s.id == "sec:part-1")
        await pilot.press("ctrl+home", *["right"] * column)
        await settle(pilot)
        detail = str(screen.query_one("#heat-detail", Static).content)
        assert "ada on sec:part-1" in detail and "invited to draft" in detail
        assert "tied" not in detail  # nobody set a score there


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("minagetscorlx:0123456789 -·▲\t\n"), max_size=40))
def test_any_filter_text_is_a_filter_or_a_clear_refusal(text: str) -> None:
    try:
        wanted = HeatFilter.parse(text)
    except ValueError as error:
        assert str(error).startswith("'")  # names the word it did not take
    else:
        assert 0 <= wanted.minimum <= 10
    for axis in ("agents", "sections"):
        following = next_sort(text, axis)
        assert set(following.split()) <= set(text.split()) | {"sort:name", "sort:total", "sort:max"}
