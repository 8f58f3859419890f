"""The document screen's events view as an audit trail: a log longer than any page read
lazily (no cap), each event's time, actor and reason on its row and whole in the pane beside
it, a filter that searches every event and says how many, and ``x`` writing the trail."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from engine.documents import DOC_PREFIX, creation_event
from engine.protocol.audit import iso_time
from engine.protocol.commands import Actor
from engine.protocol.decide import decide
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds
from engine.store import NewEvent, SqliteEventStore
from pact_tui.screens.document import DocumentScreen
from pact_tui.screens.prompt import PromptScreen
from pact_tui.screens.reader import ReaderScreen
from pact_tui.widgets.events import PAGE, EventList

from .inspector import SIZE, inspector, notifications, settle, wait_until

LONG = 5 * PAGE + 37  # events of the long document: more than a page, not a whole number


async def build_long(path: Path) -> Document:
    """Document ``plan``: its creation, two agents, a human changing one's trust with a
    reason, then comments to ``LONG`` events."""
    doc, ids = Document(), CountingIds()
    first = creation_event(
        name="plan",
        markdown="Intro.\n\n## Risk\n\nText.\n",
        document_id=ids.uuid(),
        event_id=ids.uuid(),
        epoch_ms=1_800_000_000_000,
        human="ann",
        policy="single",
        window_s=60,
        strategy="first-wins",
        default_trust="Collaborator",
    )
    doc.apply(first)
    events = [first]
    now = 1_800_000_001_000

    def run(command: dict[str, Any], actor: Actor) -> None:
        events.extend(decide(doc, command, actor, now, ids).events)

    run({"op": "join", "agentName": "legal"}, Actor.agent("legal"))
    run({"op": "join", "agentName": "finance"}, Actor.agent("finance"))
    run(
        {"op": "trust", "agent": "finance", "level": "Observer", "why": "audit drill"},
        Actor.human("ann"),
    )
    n = 0
    while len(events) < LONG:
        now += 1_000
        run({"op": "comment", "sectionId": "sec:risk", "text": f"note {n}"}, Actor.agent("legal"))
        n += 1
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        await store.append(
            [
                NewEvent(
                    DOC_PREFIX + "plan", e["eventType"], e, e["actorDisplay"], e["epochMs"] * 10**6
                )
                for e in events[:LONG]
            ]
        )
    return doc


async def opened(pilot: Pilot[Any]) -> tuple[DocumentScreen, EventList]:
    await pilot.press("2")
    screen = pilot.app.screen
    assert isinstance(screen, DocumentScreen), screen
    await wait_until(pilot, lambda: screen.shown is not None, "the document to load")
    await pilot.press("E")
    events = screen.query_one(EventList)
    await wait_until(
        pilot,
        lambda: events.current_row is not None and not events.current_row.loading,
        "the newest row",
    )
    return screen, events


async def answer(pilot: Pilot[Any], text: str) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "a prompt")
    prompt = app.screen
    await pilot.press("ctrl+u", *text, "enter")
    await wait_until(pilot, lambda: prompt not in app.screen_stack, "the prompt to close")


def detail(screen: DocumentScreen) -> str:
    return str(screen.query_one("#event-detail", Static).render())


async def test_a_long_log_is_read_a_page_at_a_time_and_filtered_whole(tmp_path: Path) -> None:
    path = tmp_path / "long.pact"
    await build_long(path)
    app = inspector(path, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, events = await opened(pilot)
        assert len(events.rows) == LONG and events.current_row.sequence == LONG - 1  # type: ignore[union-attr]
        assert str(events.border_title) == f"events ({LONG:,})"
        # Only pages in sight were read (the newest; the first, drawn before the list scrolled
        # to its cursor when shown), not the whole log.
        held = [s for s in range(LONG) if events.event(s) is not None]
        assert LONG - 1 in held and len(held) <= 2 * PAGE, len(held)
        await pilot.press("home")
        await wait_until(
            pilot,
            lambda: detail(screen).startswith("event #0 · document.snapshot"),
            "the first event",
        )
        assert events.event(0) is not None
        # A filter searches every event, and says how many it searched.
        await pilot.press("f")
        await answer(pilot, "type:trust")
        await wait_until(
            pilot, lambda: "of 1,037 searched)" in str(events.border_title), "the search"
        )
        assert str(events.border_title) == f"events (1 of {LONG:,} searched) · type:trust"
        await wait_until(pilot, lambda: not events.rows[0].loading, "the row read")
        [row] = events.rows
        assert (row.sequence, row.who, row.why, row.override) == (
            3,
            "human ann",
            "audit drill",
            True,
        )
        await settle(pilot)
        assert events.render_line(0).text.split()[:4] == [
            "3",
            iso_time(row.at_ms)[5:10],
            iso_time(row.at_ms)[11:19],
            "agent.trust-changed",
        ]
        assert "human ann        ⚑ wh" in events.render_line(0).text  # "why: …", cut to fit


async def test_the_detail_pane_shows_the_event_whole(tmp_path: Path) -> None:
    path = tmp_path / "long.pact"
    await build_long(path)
    app = inspector(path, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen, events = await opened(pilot)
        await pilot.press("f")
        await answer(pilot, "type:trust")
        await wait_until(
            pilot, lambda: detail(screen).startswith("event #3 "), "the trust change's detail"
        )
        shown = detail(screen)
        for part in (
            "event #3 · agent.trust-changed",
            "⚑ override: a human overriding the protocol",
            "who: human ann (Individual)",
            "on: finance",  # the agent by name, though the event names it by id
            "why: audit drill",
            "detail: trustLevel: Observer",
            '"trustLevel": "Observer"',  # the payload, whole
        ):
            assert part in shown, (part, shown)
        assert f"when: {iso_time(events.rows[0].at_ms)} (UTC)" in shown
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReaderScreen), "the event, whole")


@pytest.mark.slow
async def test_x_writes_the_audit_trail_and_says_where(tmp_path: Path) -> None:
    path = tmp_path / "long.pact"
    await build_long(path)
    app = inspector(path, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        _screen, events = await opened(pilot)
        await pilot.press("f")
        await answer(pilot, "agent:ann")
        await wait_until(pilot, lambda: "searched)" in str(events.border_title), "the search")
        target = tmp_path / "trail.csv"
        await pilot.press("x")
        await answer(pilot, str(target))
        await wait_until(
            pilot, lambda: any(str(target) in n for n in notifications(app)), "the export said"
        )
        rows = list(csv.DictReader(io.StringIO(target.read_text(encoding="utf-8"))))
        assert [(r["sequence"], r["actor"], r["why"], r["override"]) for r in rows] == [
            ("0", "human ann", "", "false"),
            ("3", "human ann", "audit drill", "true"),
        ]
        assert any(
            f"2 of {LONG:,} events (1 overrides) written to {target}" in n
            for n in notifications(app)
        )
        # The same as a file named .json; a file that exists and a suffix unknown: nothing.
        await pilot.press("x")
        await answer(pilot, str(tmp_path / "trail.json"))
        await wait_until(pilot, lambda: (tmp_path / "trail.json").exists(), "the JSON")
        await settle(pilot)
        assert json.loads((tmp_path / "trail.json").read_text(encoding="utf-8"))["kept"] == 2
        before = target.read_bytes()
        await pilot.press("x")
        await answer(pilot, str(target))
        await wait_until(pilot, lambda: any("exists" in n for n in notifications(app)), "refused")
        assert target.read_bytes() == before
        await pilot.press("x")
        await answer(pilot, str(tmp_path / "trail.txt"))
        await wait_until(
            pilot, lambda: any("must end in .md" in n for n in notifications(app)), "refused"
        )
        assert not (tmp_path / "trail.txt").exists()


def test_the_long_document_builds(tmp_path: Path) -> None:
    doc = asyncio.run(build_long(tmp_path / "w.pact"))
    assert doc.sequence >= LONG
