"""Issue 24: every action prompt of the custodian names what it acts on, refuses before it
asks, offers pickers, and acts on the row the custodian highlighted, never on one that moved
under the cursor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from engine.protocol.commands import Actor
from pact_tui.diffs import changed, unified
from pact_tui.screens.choose import ChooseScreen
from pact_tui.screens.document import DocumentScreen
from pact_tui.screens.pick import PickScreen
from pact_tui.screens.prompt import PromptScreen
from pact_tui.widgets.agents import AgentRoster
from pact_tui.widgets.inbox import EscalationInbox

from .inspector import SIZE, inspector, notifications, settle, wait_until
from .test_document_inbox import answer, cursor_to, opened
from .test_document_queue import by_status, queue_of


def named_parts(doc: Any, pid: str) -> list[str]:
    """What a prompt must name of proposal ``pid``, read from the document itself."""
    proposal = doc.proposals[pid]
    section = doc.by_key[proposal.section]
    removed, added = changed(unified(proposal.base_content, proposal.content))
    return [
        section.title,
        section.id,
        f"agent {proposal.author_name}",
        proposal.summary,
        proposal.status,
        f"+{added}/−{removed} lines",
    ]


async def question_of(pilot: Pilot[Any], key: str) -> str:
    app = pilot.app
    await pilot.press(key)
    await wait_until(
        pilot, lambda: isinstance(app.screen, (PromptScreen, ChooseScreen, PickScreen)), key
    )
    screen = app.screen
    text = screen.question if isinstance(screen, PromptScreen) else screen.title_text
    return str(text)


async def test_every_proposal_prompt_names_section_author_summary_status_and_size(
    demo: Path,
) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        pending = by_status(screen, "Pending")
        await cursor_to(pilot, queue, lambda row: row.key == pending.id)
        for key in ("a", "r", "m"):
            question = await question_of(pilot, key)
            for part in named_parts(doc, pending.id):
                assert part in question, (key, part, question)
            await pilot.press("escape")
            await settle(pilot)
        merged = by_status(screen, "Merged")
        await cursor_to(pilot, queue, lambda row: row.key == merged.id)
        question = await question_of(pilot, "u")
        for part in named_parts(doc, merged.id):
            assert part in question, ("u", part, question)
        await pilot.press("escape")
        await settle(pilot)
        group = next(iter(doc.conflicts.values()))
        await cursor_to(pilot, queue, lambda row: row.key == group.proposals[0])
        question = await question_of(pilot, "c")
        assert isinstance(app.screen, PickScreen)
        for side in group.proposals:  # each side is named as the prompt names one
            label = next(p.label for p in app.screen.picks if p.value == side)
            for part in named_parts(doc, side):
                assert part in label, (side, part, label)
        await pilot.press("escape")
        await settle(pilot)
        assert doc.sequence == screen.shown.doc.sequence  # type: ignore[union-attr]


async def test_a_prompt_acts_on_the_row_highlighted_not_the_one_now_under_the_cursor(
    demo: Path,
) -> None:
    """The queue shows pending proposals; the custodian highlights one. An agent objects to it
    (it leaves the filtered rows) and another proposal arrives in its place, under the still
    cursor. Force-merge says so, and merges the one highlighted."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        screen.queue_filter = "status:pending"
        await settle(pilot)
        pending = by_status(screen, "Pending")
        await cursor_to(pilot, queue, lambda row: row.key == pending.id)
        ws = screen.workspace
        objection = {"op": "object", "proposalId": pending.id, "reason": "too early"}
        await ws.run_document("memo", objection, Actor.agent("finance"))
        arriving = {
            "op": "propose",
            "sectionId": "sec:summary",
            "newContent": "# Summary\n\nA newer summary.\n",
            "summary": "newcomer",
        }
        newcomer = (await ws.run_document("memo", arriving, Actor.agent("editor"))).answer()
        screen.revision = doc.sequence
        await settle(pilot)
        assert doc.proposals[pending.id].status == "Objected"
        assert queue.current_row is not None and queue.current_row.key == newcomer["proposalId"]
        question = await question_of(pilot, "m")
        assert "The rows moved as proposals arrived" in question
        assert "newcomer" in question and "This acts on the one you highlighted." in question
        assert "it was Pending, it is Objected" in question
        assert question.startswith(f"Force-merge proposal …{pending.id[-8:]}")
        await answer(pilot, "the objection is answered")
        await settle(pilot)
        assert doc.proposals[pending.id].status == "Merged"
        assert doc.proposals[newcomer["proposalId"]].status == "Pending"


async def test_approve_on_a_rejected_proposal_is_refused_before_asking(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, queue = await queue_of(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        pending = by_status(screen, "Pending")
        screen.run_document({"op": "reject", "proposalId": pending.id, "reason": "no"})
        await settle(pilot)
        await cursor_to(pilot, queue, lambda row: row.key == pending.id)
        before = doc.sequence
        for key in ("a", "m"):
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is screen, key  # nothing asked
        refused = [n for n in notifications(app) if n.startswith("Refused:")]
        assert len(refused) == 2 and all(f"{pending.id} is Rejected" in n for n in refused)
        assert doc.sequence == before


async def test_trust_on_an_agent_gone_is_refused_before_the_level_or_the_why(
    demo: Path,
) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "A")
        roster = screen.query_one(AgentRoster)
        doc = screen.shown.doc  # type: ignore[union-attr]
        await wait_until(pilot, lambda: len(roster.rows) == len(doc.agents), "the roster")
        screen.run_document({"op": "remove", "agent": "intern", "why": "left the team"})
        await settle(pilot)
        await cursor_to(pilot, roster, lambda r: r is not None and r.name == "intern")
        before = doc.sequence
        for key in ("T", "X"):
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is screen, key
        assert doc.sequence == before
        assert any("intern" in n for n in notifications(app) if n.startswith("Refused:"))
        # One on the document: the levels are picked, the current one marked, then why.
        await cursor_to(pilot, roster, lambda r: r is not None and r.name == "finance")
        question = await question_of(pilot, "T")
        assert "agent finance (reviewer)" in question and "Collaborator" in question
        assert isinstance(app.screen, PickScreen)
        assert "Collaborator  (now)" in [p.label for p in app.screen.picks]
        await answer(pilot, "Suggester")
        assert isinstance(app.screen, PromptScreen)
        assert app.screen.question.startswith("Trust Suggester for agent finance")


async def test_resolve_picks_a_side_merges_it_and_says_what_it_did(demo: Path) -> None:
    """Bug 5: R on an escalated conflict picks a side (or your text), and the section changes
    visibly; the notification says what the resolution did."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "I")
        inbox = screen.query_one(EscalationInbox)
        await wait_until(pilot, lambda: len(inbox.rows) == 2, "the rows")
        await cursor_to(pilot, inbox, lambda r: r is not None and r.kind == "conflict")
        doc = screen.shown.doc  # type: ignore[union-attr]
        group = doc.conflicts[inbox.current_row.ref]  # type: ignore[union-attr]
        side = group.proposals[1]
        wanted = doc.proposals[side].content
        section = doc.by_key[doc.proposals[side].section]
        version = section.version
        assert section.content != wanted
        question = await question_of(pilot, "R")
        assert section.title in question and section.id in question
        await answer(pilot, side[-6:])
        await answer(pilot, "take the cap")
        await answer(pilot, "the board decided")
        await answer(pilot, "n", clear=True)
        await wait_until(pilot, lambda: group.resolved == "human", "the conflict resolved")
        assert doc.by_id[section.id].content.strip() == wanted.strip()
        assert doc.proposals[side].status == "Merged"
        await wait_until(
            pilot, lambda: any(n.startswith("Resolved:") for n in notifications(app)), "said"
        )
        said = next(n for n in notifications(app) if n.startswith("Resolved:"))
        assert f"merged proposal …{side[-8:]} (merged)" in said
        assert f"{section.id} is now v{version + 1}" in said


@pytest.mark.slow
async def test_resolve_with_your_own_text_puts_it_in_the_section(demo: Path) -> None:
    from textual.widgets import TextArea

    from pact_tui.screens.edit import EditScreen

    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "I")
        inbox = screen.query_one(EscalationInbox)
        await wait_until(pilot, lambda: len(inbox.rows) == 2, "the rows")
        await cursor_to(pilot, inbox, lambda r: r is not None and r.kind == "conflict")
        doc = screen.shown.doc  # type: ignore[union-attr]
        group = doc.conflicts[inbox.current_row.ref]  # type: ignore[union-attr]
        section = doc.by_key[group.section]
        await pilot.press("R")
        await answer(pilot, "yourself")
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen), "the editor")
        assert app.screen.query_one(TextArea).text == section.content
        heading = section.content.splitlines()[0]
        text = f"{heading}\n\nWritten by the custodian.\n"
        app.screen.query_one(TextArea).text = text
        await pilot.press("ctrl+s")
        await answer(pilot, "neither")
        await answer(pilot, "both overreach")
        await answer(pilot, "y", clear=True)
        await wait_until(pilot, lambda: group.resolved == "human", "the conflict resolved")
        assert doc.by_id[section.id].content.strip() == text.strip()
        said = next(n for n in notifications(app) if n.startswith("Resolved:"))
        assert "put your text in the section" in said and "0 open proposal(s) left" in said


async def test_view_as_picks_among_a_thousand_agents_by_typing(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen: DocumentScreen = await opened(pilot)
        await pilot.press("V")
        await wait_until(pilot, lambda: isinstance(app.screen, PickScreen), "the agents")
        picker = app.screen
        assert {p.value for p in picker.picks} == {a.name for a in screen.shown.doc.agents.values()}  # type: ignore[union-attr]
        await pilot.press(*"fin")
        await pilot.pause()
        assert [p.value for p in picker.left] == ["finance"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.shown.reader is not None, "the agent's view")  # type: ignore[union-attr]
        assert screen.shown.reader.name == "finance"  # type: ignore[union-attr]
