"""The app on a workspace the log does not fully vouch for: an event of a context it cannot
replay ends it with a message naming the event; a document whose stream holds one is shown as
an error naming the event, and the app goes on; a checkpoint it could not use is said at
startup."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import date
from pathlib import Path

import pytest

from engine.deep_verify import record_pass, verify_deep
from engine.store import NewEvent, SqliteEventStore
from engine.workspace import Workspace
from pact_tui.screens.context import ContextScreen
from pact_tui.screens.document import DocumentScreen
from pact_tui.screenshot import fixed_clock
from pact_tui.widgets.outline import SectionOutline
from pact_tui.widgets.status import Status, status_content
from tests.forged_log import append_envelope, swap_events

from .inspector import SIZE, inspector, notifications, settle, status_text, wait_until


async def test_an_event_that_cannot_be_replayed_ends_the_app_with_a_message_naming_it(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with await SqliteEventStore.open(demo, watch=False) as store:
        [event] = await store.append([NewEvent("ctx:writer", "context.insert", {"result": None})])
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
    assert app.return_code == 1
    message = " ".join(capsys.readouterr().err.split())  # the console wraps it at its width
    assert message.startswith(
        f"pact-tui: UNREPLAYABLE_EVENT: event {event.seq} (context.insert) of stream"
        " 'ctx:writer' cannot be replayed: its payload holds no command"
    )


async def test_a_checkpoint_not_used_is_said_at_startup(demo: Path) -> None:
    with closing(sqlite3.connect(demo)) as connection:
        connection.execute("UPDATE checkpoints SET seq = 9999 WHERE name = 'workspace:index'")
        connection.commit()
    app = inspector(demo)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        [said] = [n for n in notifications(app) if n.startswith("Checkpoint: ")]
    assert said.startswith("Checkpoint: the workspace index could not be used (")
    assert "is at event 9999, past the log's last event" in said
    assert said.endswith("read the log instead")


async def test_a_document_that_cannot_be_replayed_is_shown_as_an_error_and_the_app_goes_on(
    demo: Path,
) -> None:
    """Issue 23 §4: the app died with WorkerFailed(UnreplayableEvent) on ``2``."""
    forged = await append_envelope(
        demo, "doc:memo", lambda envelope: envelope.__setitem__("eventType", "pact.made.up")
    )
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        await wait_until(pilot, lambda: screen.unreadable is not None, "the document to fail")
        said = str(screen.query_one("#doc-status").render())
        assert said.startswith(
            f" document 'memo' cannot be shown: UNREPLAYABLE_EVENT: event {forged.seq}"
            " (pact.made.up) of stream 'doc:memo' cannot be replayed: ValueError: "
        )
        assert "\n" not in said  # one line (the widget may wrap it at its width)
        assert screen.shown is None and not screen.query_one(SectionOutline).rows
        # The rest of the app goes on: the contexts, and the document screen again.
        await pilot.press("1")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "the contexts")
        await wait_until(pilot, lambda: "EPISODE" in status_text(app), "the status line")
        await pilot.press("2", "D")
        await settle(pilot)
        assert screen.unreadable is not None and screen.unreadable[0] == "memo"
        assert app.is_running and app.return_code is None


async def test_the_past_of_a_document_that_cannot_be_replayed_is_refused_in_a_notification(
    demo: Path,
) -> None:
    """The document is read from its checkpoint, which the log vouches for: only a fold from
    its creation meets the two events swapped behind it (the chain recomputed)."""
    async with await Workspace.open(demo, watch=False, clock=fixed_clock()) as ws:
        await ws.load_document("memo")
        await ws.checkpoint()
        events = await ws.store.read_stream("doc:memo", 0)
    swap_events(demo, events[5].seq, events[6].seq)
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("2")
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        await wait_until(pilot, lambda: screen.shown is not None, "the memo to load")
        await pilot.press("left_square_bracket")
        await settle(pilot)
        [said] = [n for n in notifications(app) if n.startswith("The past: ")]
        assert said.startswith(
            f"The past: UNREPLAYABLE_EVENT: event {events[5].seq}"
            f" ({events[6].payload['eventType']}) of stream 'doc:memo' cannot be replayed"
        )
        assert app.is_running and screen.shown is not None


async def test_the_status_line_says_when_the_checkpoints_were_last_deep_verified(
    demo: Path,
) -> None:
    """A forged checkpoint is believed until ``verify --deep`` runs: the status line says
    when it last passed."""
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "EPISODE" in status_text(app), "the status line")
        assert status_text(app).endswith("checkpoints never deep-verified   demo.pact")

    passed_ns = 1_795_780_800 * 1_000_000_000  # 2026-11-27 12:00 UTC
    async with await SqliteEventStore.open(demo, watch=False) as store:
        await record_pass(store, await verify_deep(store), passed_ns)
    day = date.fromtimestamp(passed_ns // 1_000_000_000).isoformat()
    app = inspector(demo)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "EPISODE" in status_text(app), "the status line")
        assert status_text(app).endswith(f"checkpoints deep-verified {day}   demo.pact")


def test_when_room_is_short_the_path_stays_and_the_verification_gives_way() -> None:
    status = Status(
        "researcher", 6, True, path="demo.pact", verified="checkpoints never deep-verified"
    )
    assert (
        status_content(status, 100)
        .plain.rstrip()
        .endswith("checkpoints never deep-verified   demo.pact")
    )
    narrow = status_content(status, 60).plain
    assert len(narrow) <= 60 and "deep-verified" not in narrow
    assert narrow.rstrip().endswith("demo.pact")
    assert status_content(status).plain.endswith("checkpoints never deep-verified   demo.pact")


async def test_an_event_that_cannot_be_replayed_arriving_live_stops_the_updates_not_the_app(
    demo: Path,
) -> None:
    """The document is shown when another process appends an event its fold cannot take: the
    change feed stops with a notification naming it (it ended the app with a ValueError)."""
    app = inspector(demo, human="ann", watch=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("2")
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        await wait_until(pilot, lambda: screen.shown is not None, "the memo to load")
        forged = await append_envelope(
            demo, "doc:memo", lambda envelope: envelope.__setitem__("sequenceNumber", 99)
        )
        await wait_until(
            pilot,
            lambda: any("live updates stopped" in n for n in notifications(app)),
            "the live updates to stop",
        )
        [said] = [n for n in notifications(app) if "live updates stopped" in n]
        assert said.startswith(
            f"live updates stopped: UNREPLAYABLE_EVENT: event {forged.seq}"
            f" ({forged.payload['eventType']}) of stream 'doc:memo' cannot be replayed"
        )
        await pilot.press("1")
        await wait_until(pilot, lambda: isinstance(app.screen, ContextScreen), "the contexts")
        assert app.is_running and app.return_code is None


async def test_a_command_that_meets_an_event_that_cannot_be_replayed_shows_the_error(
    demo: Path,
) -> None:
    """Without a file watcher, another process's event is first met inside the next command,
    which catches up with the log before it decides (here the due-work tick, ``t``)."""
    app = inspector(demo, human="ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        screen = app.screen
        assert isinstance(screen, DocumentScreen)
        await wait_until(pilot, lambda: screen.shown is not None, "the memo to load")
        forged = await append_envelope(
            demo, "doc:memo", lambda envelope: envelope.__setitem__("payloadJson", "{not json")
        )
        await pilot.press("t")
        await wait_until(pilot, lambda: screen.unreadable is not None, "the document to fail")
        said = str(screen.query_one("#doc-status").render())
        assert said.startswith(
            f" document 'memo' cannot be shown: UNREPLAYABLE_EVENT: event {forged.seq}"
        )
        screen._on_clock()  # the next tick of the clock finds no document to fire due work on
        await settle(pilot)
        assert app.is_running and app.return_code is None
