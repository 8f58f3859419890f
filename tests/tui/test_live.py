"""Other processes change the workspace while the app shows it: the live view follows, the past
stays put and counts what arrived, and a workspace locked by another process refuses a command
with a notification instead of crashing."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

import engine.store.sqlite
from engine.store.sqlite import SqliteEventStore
from engine.workspace import Workspace

from .inspector import (
    SIZE,
    WAIT,
    inspector,
    notifications,
    pane_lines,
    screen_of,
    settle,
    status_text,
    wait_until,
)


async def _run(*args: str) -> str:
    """Run a command in another process and return what it printed (it must succeed)."""
    process = await asyncio.create_subprocess_exec(
        *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=WAIT)
    assert process.returncode == 0, err.decode()
    return out.decode()


async def _pact_tui(*args: str) -> str:
    return await _run(sys.executable, "-m", "pact_tui", *args)


async def test_a_command_from_another_process_shows_live(demo: Path) -> None:
    app = inspector(demo, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        assert "EPISODE 6   ● LIVE" in status_text(app)
        await _pact_tui("ctx", "user", str(demo), "researcher", "Hello from outside")
        await _pact_tui("ctx", "advance", str(demo), "researcher")
        await wait_until(pilot, lambda: "EPISODE 7" in status_text(app), "episode 7 on screen")
        assert "● LIVE" in status_text(app)
        await pilot.press("end")
        assert any('"Hello from outside"' in line for line in pane_lines(screen.context_tree))
        contexts = screen.query_one("#contexts")
        assert "ep 7 · " in str(contexts.get_option_at_index(0).prompt)


async def test_the_demo_driver_in_another_process_is_followed(demo: Path) -> None:
    app = inspector(demo, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        # six commands: a round of the researcher (message, two inserts, answer, advance) and
        # the first of the next
        await _run(
            sys.executable, "-m", "pact_tui.demo", "drive", str(demo), "--interval", "0",
            "--steps", "6",
        )  # fmt: skip
        async with await Workspace.open(demo, watch=False) as other:
            expected = other.context("researcher").current_episode
            head = other.head
        assert expected == 7
        await wait_until(pilot, lambda: screen.workspace.head == head, "every event applied")
        await wait_until(pilot, lambda: f"EPISODE {expected}" in status_text(app), "the episode")
        await pilot.press("end")
        lines = "\n".join(pane_lines(screen.context_tree))
        assert '"Next question, round 2' in lines  # the sixth command opened round 2


async def test_in_the_past_the_view_stays_and_counts_what_arrived(demo: Path) -> None:
    app = inspector(demo, watch=True)
    # wide enough for all the line says in the past with the ⚑ badge, and the path after it
    async with app.run_test(size=(140, 40)) as pilot:
        screen = screen_of(app)
        await wait_until(pilot, lambda: "⚑ 2 waiting" in status_text(app), "the badge")
        await pilot.press("left_square_bracket", "left_square_bracket")
        position, before = screen.position, pane_lines(screen.context_tree)
        status_before = status_text(app)
        head = screen.workspace.head

        await _pact_tui("ctx", "advance", str(demo), "researcher")
        await wait_until(pilot, lambda: "new event" in status_text(app), "the pending count")
        arrived = screen.workspace.head - head
        noun = "event" if arrived == 1 else "events"
        # What the status said, then the count (the workspace's path stays at the right end;
        # when the checkpoints were last deep-verified, beside it, gives way to the count).
        assert status_before.endswith("demo.pact")
        before_path = status_before.removesuffix("demo.pact").rstrip()
        before_path = before_path.removesuffix("checkpoints never deep-verified").rstrip()
        now = status_text(app)
        assert now.endswith("demo.pact")
        said = now.removesuffix("demo.pact").rstrip()
        badge = "   ⚑ 2 waiting (2)"  # what waits in the memo, said last
        assert before_path.endswith(badge)
        pending = f"   {arrived} new {noun} · }} returns to live"
        assert said == before_path.removesuffix(badge) + pending + badge
        assert screen.position == position
        assert pane_lines(screen.context_tree) == before

        await _pact_tui("ctx", "user", str(demo), "researcher", "Another one")
        await wait_until(
            pilot, lambda: f"{arrived + 1} new events" in status_text(app), "the count to grow"
        )
        assert pane_lines(screen.context_tree) == before

        await pilot.press("right_curly_bracket")
        assert "EPISODE 7   ● LIVE" in status_text(app)
        assert "new event" not in status_text(app)


async def test_another_contexts_changes_do_not_count_as_pending(demo: Path) -> None:
    app = inspector(demo, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press("left_square_bracket")
        await _pact_tui("ctx", "advance", str(demo), "writer")
        contexts = screen.query_one("#contexts")
        await wait_until(
            pilot,
            lambda: "ep 3 · " in str(contexts.get_option_at_index(1).prompt),
            "the writer's new episode in the list",
        )
        assert "new event" not in status_text(app)


LOCK_HOLDER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
connection.execute("ROLLBACK")
"""


class QuickToGiveUp(SqliteEventStore):
    """The store with a short wait for another process's lock (the default is 5 s)."""

    @classmethod
    async def open(cls, path, **options):  # type: ignore[no-untyped-def,override]
        return await super().open(path, busy_timeout=0.5, **options)


async def test_a_workspace_locked_by_another_process_refuses_a_command(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine.store.sqlite, "SqliteEventStore", QuickToGiveUp)
    app = inspector(demo)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = screen_of(app)
        head = screen.workspace.head
        holder = await asyncio.create_subprocess_exec(
            sys.executable, "-c", LOCK_HOLDER, str(demo),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            assert holder.stdout is not None and holder.stdin is not None
            assert await asyncio.wait_for(holder.stdout.readline(), WAIT) == b"locked\n"

            await pilot.press("full_stop")
            await settle(pilot)
            (message,) = notifications(app)
            assert message.startswith(
                "Refused: WORKSPACE_LOCKED: another process holds the workspace's write lock"
            )
            assert screen.workspace.head == head
            assert "EPISODE 6   ● LIVE" in status_text(app)
            await pilot.press("v", "v")  # the app still answers
            assert screen.active_pane is screen.context_tree

            holder.stdin.write(b"done\n")
            await holder.stdin.drain()
            await asyncio.wait_for(holder.wait(), WAIT)
        finally:
            if holder.returncode is None:
                holder.kill()
                await holder.wait()

        await pilot.press("full_stop")  # the lock is gone: the same command goes through
        await settle(pilot)
        assert "EPISODE 7   ● LIVE" in status_text(app)


async def test_the_demo_driver_works_the_memo_while_the_custodian_acts(demo: Path) -> None:
    """``demo --live`` keeps the memo's agents working through the commands agents use; the
    custodian approves and answers on the document screen meanwhile; the driver takes the
    refusals its stale choices meet (a proposal the custodian merged first) and goes on, and
    the log stays whole."""
    from pact_tui.screens.document import DocumentScreen

    app = inspector(demo, watch=True, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        await wait_until(pilot, lambda: screen.shown is not None, "the memo")
        doc = screen.shown.doc  # type: ignore[union-attr]
        before = doc.sequence
        drive = ("drive", str(demo), "--interval", "0.01", "--steps", "60")
        driver = asyncio.create_task(_run(sys.executable, "-m", "pact_tui.demo", *drive))
        approved: list[str] = []
        while not driver.done():  # the custodian approves whatever waits, as it arrives
            pending = list(doc.by_status.get("Pending", {}))
            if pending:
                command = {"op": "approve", "proposalId": pending[0], "why": "ok"}
                await screen.run_document(command).wait()  # a refusal is a notification
                if doc.proposals[pending[0]].status == "Merged":
                    approved.append(pending[0])
            await pilot.pause(0.05)
        await driver
        async with await Workspace.open(demo, watch=False) as other:
            head = other.head
            assert (await other.verify()).ok
            await other.load_document("memo")
            final = other.document("memo")
            kinds = {e["eventType"] for e in await other.document_events("memo", before)}
        try:
            await wait_until(pilot, lambda: screen.workspace.head == head, "every event applied")
        except AssertionError as error:  # failed once in CI, cause not found: say where all were
            async with await Workspace.open(demo, watch=False) as now:
                where = (
                    f"the app at {screen.workspace.head} (its memo at {doc.sequence}), the log"
                    f" at {head} (the memo at {final.sequence}) then and at {now.head} now"
                )
            raise AssertionError(f"{error}: {where}") from None
        assert doc.sequence == final.sequence > before
        assert {"pact.agent.heartbeat", "pact.salience.set", "pact.proposal.created"} <= kinds
        # whatever the custodian merged stayed merged, whoever acted first
        assert all(final.proposals[pid].status == "Merged" for pid in approved)


async def test_the_highlight_moved_in_the_context_list_stays_through_updates(demo: Path) -> None:
    """Issue 27: ``c`` then ``j`` in the context list during ``demo --live``: the next update
    took the highlight back to the first context. It stays where the keys put it."""
    app = inspector(demo, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        contexts = screen.query_one("#contexts")
        await pilot.press("c", "j")
        await wait_until(pilot, lambda: contexts.highlighted == 1, "the writer highlighted")
        for _ in range(2):  # the shown context and the highlighted one both move on
            await _pact_tui("ctx", "advance", str(demo), "researcher")
            await _pact_tui("ctx", "advance", str(demo), "writer")
        await wait_until(
            pilot,
            lambda: (
                "ep 8 · " in str(contexts.get_option_at_index(0).prompt)
                and "ep 4 · " in str(contexts.get_option_at_index(1).prompt)
            ),
            "both contexts' new episodes in the list",
        )
        assert contexts.highlighted == 1
        assert contexts.has_focus and screen.context_name == "researcher"
