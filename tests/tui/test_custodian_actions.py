"""The custodian's own powers in the app (``!`` on the document screen): each asks what its
command needs, runs it as the custodian and the document shows it; Escape does nothing; a
read-only workspace offers nothing to change; an invite's token is shown once and copied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Label, TextArea

from engine.protocol.commands import Actor
from engine.protocol.model import POLICIES, STRATEGIES
from pact_tui.screens.choose import ChooseScreen
from pact_tui.screens.confirm import ConfirmScreen
from pact_tui.screens.custodian import InvitesScreen, TokenScreen
from pact_tui.screens.document import DocumentScreen
from pact_tui.screens.edit import EditScreen
from pact_tui.screens.prompt import PromptScreen
from pact_tui.widgets.agents import AgentRoster
from pact_tui.widgets.outline import SectionOutline

from .inspector import SIZE, inspector, notifications, settle, wait_until
from .test_document_inbox import answer, cursor_to, opened


async def menu(pilot: Pilot[Any], key: str) -> None:
    """Open the custodian's menu and pick ``key``."""
    await pilot.press("exclamation_mark")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ChooseScreen), "the menu")
    await pick(pilot, key)


async def pick(pilot: Pilot[Any], key: str) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, ChooseScreen), "a choice")
    chooser = app.screen
    await pilot.press(key)
    await wait_until(pilot, lambda: chooser not in app.screen_stack, "the choice to close")
    await pilot.pause()


def choice_keys(app: Any) -> dict[str, str]:
    screen = app.screen
    assert isinstance(screen, ChooseScreen)
    return {choice.value: choice.key for choice in screen.choices}


async def to_section(pilot: Pilot[Any], screen: DocumentScreen, section_id: str) -> None:
    outline = screen.query_one(SectionOutline)
    await cursor_to(pilot, outline, lambda row: row is not None and row.key == section_id)
    await settle(pilot)


async def test_lock_then_unlock_the_document(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        await menu(pilot, "l")
        await answer(pilot, "release review")
        await wait_until(pilot, lambda: screen.shown.doc.locked is not None, "the lock")  # type: ignore[union-attr]
        locked = screen.shown.doc.locked  # type: ignore[union-attr]
        assert (locked.by, locked.why) == ("ann", "release review")  # type: ignore[union-attr]
        assert "the document is locked" in notifications(app)[-1]
        # The menu now offers the other way; n at the confirmation changes nothing.
        await menu(pilot, "l")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("n")
        await settle(pilot)
        assert screen.shown.doc.locked is not None  # type: ignore[union-attr]
        await menu(pilot, "l")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.shown.doc.locked is None, "the unlock")  # type: ignore[union-attr]
        assert doc is not None


@pytest.mark.slow
async def test_escape_at_any_question_changes_nothing(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        before = screen.workspace.document("memo").sequence
        await menu(pilot, "p")
        await pick(pilot, choice_keys(app)["objection-based"])
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the window")
        await pilot.press("escape")
        await settle(pilot)
        await menu(pilot, "l")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the why")
        await pilot.press("escape")
        await settle(pilot)
        assert screen.workspace.document("memo").sequence == before


@pytest.mark.slow
async def test_policy_checks_the_window_as_it_is_typed(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await menu(pilot, "p")
        assert list(choice_keys(app)) == list(POLICIES)
        await pick(pilot, choice_keys(app)["objection-based"])
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the window")
        prompt = app.screen
        await pilot.press("ctrl+u", "0", "enter")
        problem_label = prompt.query_one("#prompt-problem", Label)
        await wait_until(pilot, lambda: problem_label.display, "the problem said")
        assert prompt is app.screen  # refused where it was typed, before the why
        problem = str(problem_label.render())
        assert "from 1 to 86400" in problem
        await answer(pilot, "45", clear=True)
        await answer(pilot, "slower agents")
        doc = screen.workspace.document("memo")
        await wait_until(pilot, lambda: doc.policy == "objection-based", "the policy")
        assert doc.window_s == 45
        await menu(pilot, "s")
        assert list(choice_keys(app)) == list(STRATEGIES)
        await pick(pilot, choice_keys(app)["vote"])
        await answer(pilot, "let them vote")
        await wait_until(pilot, lambda: doc.strategy == "vote", "the strategy")
        await menu(pilot, "g")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the guard")
        guard = app.screen
        await pilot.press("ctrl+u", *"101", "enter")
        problem_label = guard.query_one("#prompt-problem", Label)
        await wait_until(pilot, lambda: problem_label.display, "the problem said")
        await answer(pilot, "30", clear=True)
        await answer(pilot, "tighter")
        await wait_until(pilot, lambda: doc.removal_guard == 30, "the guard")


@pytest.mark.slow
async def test_edit_classify_and_force_unlock_a_section(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        doc = screen.workspace.document("memo")
        await to_section(pilot, screen, "sec:budget")
        section = doc.by_id["sec:budget"]
        assert section.lock is not None  # finance holds it in the demo
        await menu(pilot, "u")
        await answer(pilot, "finance went quiet")
        await wait_until(pilot, lambda: doc.by_id["sec:budget"].lock is None, "the unlock")
        # Edit: the editor holds the section; an unchanged text does nothing.
        version = doc.by_id["sec:budget"].version
        await menu(pilot, "e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen), "the editor")
        assert app.screen.query_one(TextArea).text == doc.by_id["sec:budget"].content
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "unchanged" in notifications(app)[-1]
        await menu(pilot, "e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen), "the editor")
        await pilot.press("down", "down", "end", *" Reviewed.", "ctrl+s")
        await answer(pilot, "a note for the board")
        await wait_until(pilot, lambda: doc.by_id["sec:budget"].version == version + 1, "the edit")
        assert "Total: $1.8M. Reviewed." in doc.by_id["sec:budget"].content
        # Classify: the document's framework's levels, lowest first.
        await menu(pilot, "k")
        keys = choice_keys(app)
        assert list(keys) == ["Public", "Internal", "Confidential", "Restricted"]
        await pick(pilot, keys["Internal"])
        await wait_until(
            pilot, lambda: doc.by_id["sec:budget"].classification == "Internal", "the level"
        )


@pytest.mark.slow
async def test_mark_a_constraint(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        made = await screen.workspace.run_document(
            "memo",
            {"op": "constrain", "sectionId": "sec:risk", "boundary": "no more than 3 risks"},
            Actor.agent("legal"),
        )
        await settle(pilot)
        await to_section(pilot, screen, "sec:risk")
        await menu(pilot, "m")
        labels = [c.label for c in app.screen.choices]  # type: ignore[attr-defined]
        assert labels[-1] == "legal: no more than 3 risks (unknown)"
        assert len(labels) == len(
            screen.shown.doc.constraints_of(screen.shown.doc.by_id["sec:risk"].key)
        )  # type: ignore[union-attr]
        await pick(pilot, str(len(labels)))
        await pick(pilot, "c")
        await answer(pilot, "fits the others")
        constraint = screen.workspace.document("memo").constraints[made.answer()["constraintId"]]
        await wait_until(pilot, lambda: constraint.compatibility == "compatible", "the mark")


@pytest.mark.slow
async def test_an_invite_token_is_shown_once_copied_and_revocable(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        doc = screen.workspace.document("memo")
        await menu(pilot, "n")
        await pick(pilot, "2")  # Suggester
        await pick(pilot, "2")  # SectionScoped: it asks for the sections
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the sections")
        prompt = app.screen
        await pilot.press("ctrl+u", *"sec:nowhere", "enter")
        problem_label = prompt.query_one("#prompt-problem", Label)
        await wait_until(pilot, lambda: problem_label.display, "the problem said")
        assert "sec:nowhere" in str(problem_label.render())
        assert app.screen is prompt  # an unknown section is refused where it was typed
        await answer(pilot, "sec:risk", clear=True)
        await pick(pilot, "1")  # no clearance
        await pick(pilot, "2")  # one day
        await wait_until(pilot, lambda: isinstance(app.screen, TokenScreen), "the token")
        token_screen = app.screen
        token = token_screen.token  # type: ignore[attr-defined]
        [invite] = doc.invites.values()
        from engine.protocol.decide import token_hash

        assert token_hash(token) == invite.token_hash
        assert (invite.trust, invite.mode) == ("Suggester", "SectionScoped")
        assert [doc.by_key[k].id for k in invite.scope] == ["sec:risk"]
        shown = str(token_screen.query_one("#token", Label).render())
        assert shown == token
        await pilot.press("y")
        await wait_until(pilot, lambda: app.clipboard == token, "the token copied")
        await pilot.press("escape")
        await settle(pilot)
        # The list shows it open, never its token; x revokes it, with a reason.
        await menu(pilot, "v")
        await wait_until(pilot, lambda: isinstance(app.screen, InvitesScreen), "the invites")
        assert token not in str(app.screen.query_one("#invites").render_lines)
        await pilot.press("x")
        await answer(pilot, "sent to the wrong team")
        await wait_until(pilot, lambda: invite.revoked_by == "ann", "the revocation")
        await wait_until(pilot, lambda: isinstance(app.screen, InvitesScreen), "the list again")
        rows = app.screen.rows  # type: ignore[attr-defined]
        assert [row["state"] for row in rows] == ["revoked"]
        await pilot.press("escape")


@pytest.mark.slow
async def test_create_a_framework_refusing_a_name_taken(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await menu(pilot, "f")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the name")
        prompt = app.screen
        await pilot.press(*"Sensitivity", "enter")
        problem_label = prompt.query_one("#prompt-problem", Label)
        await wait_until(pilot, lambda: problem_label.display, "the problem said")
        assert "exists already" in str(problem_label.render())
        assert app.screen is prompt
        await answer(pilot, "Ops", clear=True)
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the levels")
        levels = app.screen
        await pilot.press("ctrl+u", *"Low, Low", "enter")  # not distinct: refused where typed
        problem_label = levels.query_one("#prompt-problem", Label)
        await wait_until(pilot, lambda: problem_label.display, "the problem said")
        assert app.screen is levels
        await answer(pilot, "Low, High", clear=True)
        await wait_until(pilot, lambda: "framework Ops" in " ".join(notifications(app)), "it")
        assert (await screen.workspace.frameworks())["Ops"] == ["Low", "High"]


async def test_disclosure_from_the_agents_view(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot, "A")
        roster = screen.query_one(AgentRoster)
        await cursor_to(pilot, roster, lambda row: row is not None and row.name == "legal")
        await pilot.press("B")
        await pick(pilot, "2")
        doc = screen.workspace.document("memo")
        legal = doc.agent_named("legal")
        await wait_until(pilot, lambda: legal.disclosure == 2, "the disclosure")  # type: ignore[union-attr]


async def test_a_read_only_workspace_offers_nothing_to_change(demo: Path) -> None:
    app = inspector(demo, human="ann", read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        await pilot.press("exclamation_mark")
        await settle(pilot)
        assert not isinstance(app.screen, ChooseScreen)
        assert "read-only" in notifications(app)[-1]
