"""The app on a workspace the log does not fully vouch for: an event it cannot replay ends it
with a message naming the event; a checkpoint it could not use is said at startup."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from engine.store import NewEvent, SqliteEventStore

from .inspector import SIZE, inspector, notifications


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
