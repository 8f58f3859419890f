"""Time on the document screen: the memo's past, read-only, event by event; a diff between two
points; protocol time stepped ahead in the demo to fire a window's end and a lock's expiry."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from textual.widgets import Static

from engine.documents import DOC_PREFIX
from engine.protocol.persist import dump_document

from .inspector import SIZE, inspector, notifications, settle, wait_until
from .test_document_inbox import answer, opened
from .test_document_queue import text_of


async def test_scrubbing_shows_the_document_as_it_was_and_the_past_is_read_only(
    demo: Path,
) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        live = screen.shown.doc  # type: ignore[union-attr]
        total = live.sequence
        await pilot.press("left_square_bracket")
        await wait_until(pilot, lambda: screen.shown.revision == total - 1, "one event back")  # type: ignore[union-attr]
        assert screen.position == total - 1
        past = await screen.workspace.document_at("memo", total - 1)
        assert dump_document(screen.shown.doc) == dump_document(past)  # type: ignore[union-attr]
        assert screen.shown.doc is not live  # type: ignore[union-attr]
        status = str(screen.query_one("#doc-status", Static).content)
        assert f"PAST: after event #{total - 2} of #{total - 1}" in status
        # acting in the past is refused, and changes nothing
        screen.run_document({"op": "escalate", "sectionId": "sec:budget", "reason": "x"})
        await settle(pilot)
        assert any("The past is read-only" in n for n in notifications(app))
        assert live.sequence == total
        # the creation, then a jump by number, then back to live
        await pilot.press("left_curly_bracket")
        await wait_until(pilot, lambda: screen.shown.revision == 1, "the creation")  # type: ignore[union-attr]
        assert screen.shown.doc.agents == {}  # type: ignore[union-attr]
        await pilot.press("colon")
        await answer(pilot, "12")  # after event #12: its first 13 events
        await wait_until(pilot, lambda: screen.shown.revision == 13, "after event #12")  # type: ignore[union-attr]
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: screen.shown.revision == 14, "after event #13")  # type: ignore[union-attr]
        await pilot.press("right_curly_bracket")
        await settle(pilot)
        assert screen.position is None and screen.shown.doc is live  # type: ignore[union-attr]


async def test_the_rewind_is_built_when_the_document_opens_so_the_first_step_back_is_a_step(
    demo: Path,
) -> None:
    """Once the document is drawn, its rewind is built at its present in the background: the
    first ``[`` is the rewind's step (its own document), the fold's state."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        total = screen.shown.doc.sequence  # type: ignore[union-attr]
        rewinds = screen.workspace._rewinds
        await wait_until(
            pilot,
            lambda: "memo" in rewinds and rewinds["memo"].first < total <= rewinds["memo"].last,
            "the rewind built at the present",
        )
        rewind = rewinds["memo"]
        await pilot.press("left_square_bracket")
        await wait_until(pilot, lambda: screen.shown.revision == total - 1, "one event back")  # type: ignore[union-attr]
        assert screen.shown.doc is rewind.doc  # type: ignore[union-attr]  # a step, not a fold
        past = await screen.workspace.document_at("memo", total - 1)
        assert dump_document(screen.shown.doc) == dump_document(past)  # type: ignore[union-attr]


async def test_a_step_back_before_the_rewind_is_ready_shows_a_fold_and_then_steps(
    demo: Path,
) -> None:
    """A ``[`` pressed while the rewind is still being built (held up here) is shown at once
    from a fold of the nearest cache; once it is built, the next ``[`` is its step. Every one
    the fold's state."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.workspace is not None, "the workspace")
        assert app.workspace is not None
        building = app.workspace._rebuild_locks.setdefault(DOC_PREFIX + "memo", asyncio.Lock())
        await building.acquire()  # the rewind's building waits for this
        screen = await opened(pilot)
        total = screen.shown.doc.sequence  # type: ignore[union-attr]
        await pilot.press("left_square_bracket")
        await wait_until(pilot, lambda: screen.shown.revision == total - 1, "one event back")  # type: ignore[union-attr]
        assert "memo" not in screen.workspace._rewinds  # not built yet: a fold was shown
        past = await screen.workspace.document_at("memo", total - 1)
        assert dump_document(screen.shown.doc) == dump_document(past)  # type: ignore[union-attr]
        building.release()
        rewinds = screen.workspace._rewinds
        await wait_until(
            pilot,
            lambda: "memo" in rewinds and rewinds["memo"].first < total - 1 <= rewinds["memo"].last,
            "the rewind built",
        )
        await pilot.press("left_square_bracket")
        await wait_until(pilot, lambda: screen.shown.revision == total - 2, "two events back")  # type: ignore[union-attr]
        assert screen.shown.doc is rewinds["memo"].doc  # type: ignore[union-attr]  # a step
        past = await screen.workspace.document_at("memo", total - 2)
        assert dump_document(screen.shown.doc) == dump_document(past)  # type: ignore[union-attr]


async def test_a_jump_to_no_such_event_says_so_and_changes_nothing(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        for bad in ("x", "100000", "-3", "1.5", str(screen.shown.doc.sequence)):  # type: ignore[union-attr]
            await pilot.press("colon")
            await answer(pilot, bad)
            await settle(pilot)
            assert any(f"{bad!r}: give an event number from 0 to" in n for n in notifications(app))
            assert screen.position is None


async def test_live_changes_while_in_the_past_are_counted(demo: Path) -> None:
    """Another process writes while the custodian reads the past: the status line counts the
    newer events; what is shown stays where it was."""
    import subprocess
    import sys

    app = inspector(demo, human="ann", watch=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        total = screen.shown.doc.sequence  # type: ignore[union-attr]
        await pilot.press("colon")
        await answer(pilot, "4")  # after event #4: its first 5 events
        await wait_until(pilot, lambda: screen.shown.revision == 5, "after event #4")  # type: ignore[union-attr]
        join = ["tap", "join", str(demo), "memo", "--agent", "zed"]
        subprocess.run([sys.executable, "-m", "pact_tui", *join], check=True, timeout=60)
        status = screen.query_one("#doc-status", Static)

        def newer() -> int:
            found = re.search(r"PAST: after event #4 of #(\d+)", str(status.content))
            return int(found.group(1)) + 1 if found else 0

        await wait_until(pilot, lambda: newer() > total, "the newer events counted")
        assert screen.shown.revision == 5  # type: ignore[union-attr]


async def test_the_diff_between_two_points_lists_the_changed_sections(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        merged = next(p for p in doc.proposals.values() if p.status == "Merged")
        await pilot.press("left_curly_bracket", "d")  # the creation is the base
        await pilot.press("right_curly_bracket")  # against the live document
        await wait_until(pilot, lambda: screen.base_doc is not None, "the base")
        await settle(pilot)
        shown = text_of(screen.query_one("#doc-diff", Static).content, 120)
        assert f"Diff: after event #0 → after event #{doc.sequence - 1}" in shown
        assert "\nadded: -\nremoved: -\nchanged: sec:summary v1→v2\n" in shown  # exactly
        assert "+ The project is on budget, on time, and hedged." in shown
        assert merged.section == doc.by_id["sec:summary"].key
        await pilot.press("d")  # cleared
        await settle(pilot)
        assert not screen.query_one("#doc-diff", Static).display


async def test_stepping_time_fires_a_window_and_a_lock_expiry(demo: Path) -> None:
    """A step of a stepped workspace is recorded for every process, fires what became due,
    and the status line says how far ahead protocol time is and what firing did."""
    from engine.workspace import Workspace

    app = inspector(demo, human="ann", step_time=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        doc = screen.shown.doc  # type: ignore[union-attr]
        pending = next(p for p in doc.proposals.values() if p.status == "Pending")
        budget = doc.by_id["sec:budget"]
        assert pending.merge_at_ms is not None and budget.lock is not None
        await pilot.press("plus")  # 60 s → 300 s
        assert screen.step_s == 300
        screen.action_set_step()  # the palette's "Set the time step"
        await answer(pilot, "4m", clear=True)  # past the window and the lock, not evictions
        assert screen.step_s == 240
        await pilot.press("full_stop")
        await settle(pilot)
        assert pending.status == "Merged"
        assert budget.lock is None
        said = [n for n in notifications(app) if n.startswith("Step: +4m: ")]
        assert said, notifications(app)
        where = doc.by_key[pending.section].id
        assert f"merged {pending.id} on {where} (window ended)" in said[0]
        assert "evicted" not in said[0]
        assert "released the lock on sec:budget (expired)" in said[0]
        status = str(screen.query_one("#doc-status", Static).content)
        assert "time +4m ahead · last step: +4m: " in status
        assert "1 lock expired" in status and "1 proposal merged" in status
        assert status.endswith(")") or status.endswith("expired")
        assert screen.workspace.time_ahead_ms == 240_000
        await pilot.resize_terminal(80, 24)  # issue 24: the header wrapped to three lines here
        await pilot.pause()
        assert screen.query_one("#doc-status", Static).size.height <= 2
    # durable and shared: another process opening the file reads the same time
    async with await Workspace.open(demo, watch=False, lazy=True) as other:
        assert other.time_stepped and other.time_ahead_ms == 240_000


async def test_a_bad_step_is_refused_and_the_step_stays(demo: Path) -> None:
    app = inspector(demo, human="ann", step_time=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        for bad in ("0", "x", "25h", "-5"):
            screen.action_set_step()
            await answer(pilot, bad, clear=True)
            assert any(f"{bad!r}: give a step of 1 s to 24 h" in n for n in notifications(app))
            assert screen.step_s == 60
        assert screen.workspace.time_ahead_ms == 0


async def test_stepping_is_refused_where_time_follows_the_clock(demo: Path) -> None:
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        before = screen.shown.doc.sequence  # type: ignore[union-attr]
        await pilot.press("full_stop")
        await settle(pilot)
        assert any("Protocol time follows the clock here" in n for n in notifications(app))
        assert screen.workspace.time_ahead_ms == 0 and not screen.workspace.time_stepped
        assert screen.shown.doc.sequence == before  # type: ignore[union-attr]


async def test_stepping_is_refused_in_the_past_and_curly_bracket_goes_back_to_live(
    demo: Path,
) -> None:
    app = inspector(demo, human="ann", step_time=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        live = screen.shown.doc  # type: ignore[union-attr]
        await pilot.press("left_square_bracket")
        await wait_until(pilot, lambda: screen.shown.doc is not live, "one event back")  # type: ignore[union-attr]
        await pilot.press("full_stop")
        await settle(pilot)
        assert any("Go back to live (}) before stepping time" in n for n in notifications(app))
        assert screen.workspace.time_ahead_ms == 0
        await pilot.press("right_curly_bracket")
        await settle(pilot)
        assert screen.position is None and screen.shown.doc is live  # type: ignore[union-attr]


async def test_the_diff_lists_exactly_the_sections_added_and_changed(tmp_path: Path) -> None:
    """Two points of a document built by commands: a section's text changed and a subsection
    added under it; the diff names exactly those, with their versions, and the content's
    lines."""
    from engine.protocol.commands import Actor
    from engine.workspace import Workspace
    from pact_tui.screens.document import document_diff
    from pact_tui.themes import Palette

    from .test_document_queue import text_of

    async with await Workspace.open(tmp_path / "ws.pact", create=True, watch=False) as ws:
        await ws.create_document("plan", "# Aims\n\nShip it.\n\n# Costs\n\nLow.\n", human="ann")
        await ws.run_document("plan", {"op": "join", "agentName": "bo"}, Actor.agent("bo"))
        new = "# Aims\n\nShip it soon.\n\n## Risks\n\nLate.\n\n"
        proposed = await ws.run_document(
            "plan",
            {"op": "propose", "sectionId": "sec:aims", "newContent": new},
            Actor.agent("bo"),
        )
        pid = proposed.answer()["proposalId"]
        command = {"op": "approve", "proposalId": pid, "why": "fine"}
        await ws.run_document("plan", command, Actor.human("ann"))
        live = ws.document("plan")
        start = await ws.document_at("plan", 1)
        shown = text_of(document_diff(start, 1, live, live.sequence, Palette()), 100)
    lines = shown.splitlines()
    assert lines[0] == f"Diff: after event #0 → after event #{live.sequence - 1}"
    assert lines[1:4] == ["added: sec:aims/risks v1", "removed: -", "changed: sec:aims v1→v2"]
    assert "- Ship it." in shown and "+ Ship it soon." in shown and "+ ## Risks" in shown
