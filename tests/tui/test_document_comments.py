"""Comments on the custodian's screen and the redacted export, on the demo's ``memo``: an
agent's comments under their section's Markdown and in their proposal's detail, one
addressed to a human in the inbox (replied to, resolved), the custodian commenting (``M``)
and resolving from a picker (``U``), and ``W`` writing the document as the agent viewed sees
it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from engine.protocol.commands import Actor
from engine.protocol.views import content
from engine.workspace import Workspace
from pact_tui.screens.choose import ChooseScreen
from pact_tui.screens.confirm import ConfirmScreen
from pact_tui.screenshot import fixed_clock
from pact_tui.widgets.inbox import EscalationInbox
from pact_tui.widgets.outline import SectionOutline
from pact_tui.widgets.queue import ProposalQueue

from .inspector import SIZE, inspector, notifications, settle, wait_until
from .test_document_inbox import answer, cursor_to, drawn, opened


async def commented(demo: Path) -> dict[str, str]:
    """The agents' comments, made before the app opens (on the app's fixed clock): on
    sec:summary one to a human and one resolved, and one on an open proposal of sec:risk."""
    async with await Workspace.open(demo, watch=False, lazy=True, clock=fixed_clock()) as ws:
        await ws.load_document("memo")
        doc = ws.document("memo")

        async def run(agent: str, command: dict[str, Any]) -> dict[str, Any]:
            return (await ws.run_document("memo", command, Actor.agent(agent))).answer()

        summary = {"op": "comment", "sectionId": "sec:summary"}
        asked = await run("legal", {**summary, "text": "@human is the date firm?"})
        old = await run("finance", {**summary, "text": "typo in line 2"})
        await run("legal", {"op": "resolve-comment", "commentId": old["commentId"]})
        pid = next(p.id for p in doc.proposals.values() if p.status in ("Pending", "Conflict"))
        section = doc.by_key[doc.proposals[pid].section].id
        on = await run(
            "finance",
            {"op": "comment", "sectionId": section, "text": "too long", "proposalId": pid},
        )
    return {
        "asked": asked["commentId"],
        "old": old["commentId"],
        "on": on["commentId"],
        "proposal": pid,
        "section": section,
    }


async def to_section(pilot: Pilot[Any], screen: Any, section_id: str) -> None:
    outline = screen.query_one(SectionOutline)
    outline.focus()
    await cursor_to(pilot, outline, lambda r: r is not None and r.key == section_id)
    await settle(pilot)


@pytest.mark.slow
async def test_comments_show_under_their_section_and_in_their_proposal(demo: Path) -> None:
    made = await commented(demo)
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await to_section(pilot, screen, "sec:summary")
        pane = screen.query_one("#section-comments", Static)
        assert pane.display
        said = drawn(pane)
        assert "Comments (1 open, 1 resolved)" in said
        assert "agent legal → human" in said and "@human is the date firm?" in said
        assert "resolved by legal" in said and "typo in line 2" in said
        assert said.index("date firm") < said.index("typo")  # open first
        await to_section(pilot, screen, "sec:budget")  # no comment: no pane
        assert not pane.display
        # The proposal's detail lists the comment on it; the queue hides the section's pane.
        await pilot.press("P")
        queue = screen.query_one(ProposalQueue)
        await cursor_to(pilot, queue, lambda r: r is not None and r.key == made["proposal"])
        await settle(pilot)
        detail = drawn(screen.query_one("#proposal-detail", Static))
        assert "Comments (1 open, 0 resolved)" in detail and "too long" in detail
        assert "date firm" not in detail  # the section's own comment is not the proposal's
        assert not pane.display


@pytest.mark.slow
async def test_a_comment_to_a_human_waits_in_the_inbox_until_resolved(demo: Path) -> None:
    made = await commented(demo)
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "I")
        inbox = screen.query_one(EscalationInbox)
        await wait_until(pilot, lambda: len(inbox.rows) == 3, "the rows")
        [row] = [r for r in inbox.rows if r.kind == "comment"]
        assert (row.ref, row.by, row.section_id) == (made["asked"], "agent legal", "sec:summary")
        assert "⚑ 3 waiting" in drawn(screen.query_one("#doc-status", Static))
        await cursor_to(pilot, inbox, lambda r: r is not None and r.kind == "comment")
        await settle(pilot)
        briefing = drawn(screen.query_one("#inbox-briefing", Static))
        assert "Comment · by agent legal" in briefing and "Briefing on sec:summary" in briefing
        # e replies on its section, as the custodian.
        await pilot.press("e")
        await answer(pilot, "yes, firm")
        doc = screen.shown.doc  # type: ignore[union-attr]
        await wait_until(
            pilot, lambda: any(k.text == "yes, firm" for k in doc.comments.values()), "the reply"
        )
        reply = next(k for k in doc.comments.values() if k.text == "yes, firm")
        assert (reply.author, doc.by_key[reply.section].id) == ("human:ann", "sec:summary")
        # R asks, naming the comment; Escape changes nothing; y resolves it.
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        assert "@human is the date firm?" in app.screen.question  # type: ignore[attr-defined]
        await pilot.press("escape")
        await settle(pilot)
        assert doc.comments[made["asked"]].resolved_by is None
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: doc.comments[made["asked"]].resolved_by == "ann", "done")
        await wait_until(
            pilot,
            lambda: [r.closed for r in inbox.rows if r.kind == "comment"] == ["resolved by ann"],
            "the comment settled",
        )
        assert len([r for r in inbox.rows if r.closed is None]) == 2


@pytest.mark.slow
async def test_the_custodian_comments_and_resolves_from_a_picker(demo: Path) -> None:
    made = await commented(demo)
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        await to_section(pilot, screen, "sec:budget")
        await pilot.press("M")
        await answer(pilot, "@human:bob please check")
        await wait_until(pilot, lambda: len(doc.comments) == 4, "the comment")
        mine = list(doc.comments.values())[-1]
        assert (mine.author, doc.by_key[mine.section].id, mine.proposal) == (
            "human:ann",
            "sec:budget",
            None,
        )
        await wait_until(
            pilot, lambda: "please check" in drawn(screen.query_one("#section-comments")), "shown"
        )
        # On the proposal under the queue's cursor: the comment is the proposal's.
        await pilot.press("P")
        queue = screen.query_one(ProposalQueue)
        await cursor_to(pilot, queue, lambda r: r is not None and r.key == made["proposal"])
        await pilot.press("M")
        await answer(pilot, "agreed")
        await wait_until(pilot, lambda: len(doc.comments) == 5, "the comment")
        agreed = list(doc.comments.values())[-1]
        assert (agreed.text, agreed.proposal) == ("agreed", made["proposal"])
        # U: a picker of the proposal's open comments; its key resolves one.
        await pilot.press("U")
        await wait_until(pilot, lambda: isinstance(app.screen, ChooseScreen), "the picker")
        picker = app.screen
        assert [c.value for c in picker.choices] == [made["on"], agreed.id]  # type: ignore[attr-defined]
        assert "too long" in picker.choices[0].label  # type: ignore[attr-defined]
        await pilot.press("1")
        await wait_until(pilot, lambda: doc.comments[made["on"]].resolved_by == "ann", "resolved")
        # Nothing open on a section: said, no picker.
        await pilot.press("O")
        await to_section(pilot, screen, "sec:budget/line-items")
        assert not [
            k for k in doc.comments.values() if doc.by_key[k.section].id == "sec:budget/line-items"
        ]
        await pilot.press("U")
        await settle(pilot)
        assert not isinstance(app.screen, ChooseScreen)
        assert any("No open comment on sec:budget/line-items" in n for n in notifications(app))


@pytest.mark.slow
async def test_share_writes_the_document_as_the_viewed_agent_sees_it(
    demo: Path, tmp_path: Path
) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("W")  # the custodian's own view: nothing to redact for
        await settle(pilot)
        assert any("View the document as an agent first" in n for n in notifications(app))
        assert not list(tmp_path.glob("*.md"))
        await pilot.press("V")
        await answer(pilot, "intern")
        await wait_until(pilot, lambda: screen.shown.reader is not None, "the agent's view")  # type: ignore[union-attr]
        doc, intern = screen.shown.doc, screen.shown.reader  # type: ignore[union-attr]
        expected = content(doc, intern)
        assert "## Financials" not in expected and "Financials" in doc.markdown()
        await pilot.press("W")
        await answer(pilot, "")  # the name offered, in the test's folder
        target = tmp_path / "memo-as-intern.md"
        await wait_until(pilot, target.exists, "the file")
        assert target.read_text(encoding="utf-8") == expected
        assert any(f"Wrote {target}: the document as agent intern" in n for n in notifications(app))
        # A path that cannot be written: said, nothing written.
        await pilot.press("W")
        await answer(pilot, str(tmp_path / "no" / "such" / "x.md"), clear=True)
        await wait_until(
            pilot, lambda: any(n.startswith("Cannot share") for n in notifications(app)), "why"
        )
        assert not (tmp_path / "no").exists()
