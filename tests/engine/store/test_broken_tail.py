"""A workspace whose last event does not verify (checked when the store opens) takes no writes:
appending would extend a broken chain. Reads still work, so that the damage can be seen."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from engine.store import NewEvent, SqliteEventStore, StoreError

from .conftest import events

pytestmark = pytest.mark.filterwarnings("error")

COUNT = 6


def edit(path: Path, statement: str, *parameters: object) -> None:
    with closing(sqlite3.connect(path)) as connection:
        connection.execute(statement, parameters)
        connection.commit()


def rows(path: Path) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute("SELECT * FROM events ORDER BY seq").fetchall()


DAMAGE: dict[str, tuple[Callable[[Path], None], int, str]] = {
    # what is done to the log, the event named, and the problem
    "payload": (
        lambda p: edit(p, "UPDATE events SET payload = ? WHERE seq = ?", '{"n":99}', COUNT),
        COUNT,
        "hash_mismatch",
    ),
    "hash": (
        lambda p: edit(p, "UPDATE events SET hash = ? WHERE seq = ?", "f" * 64, COUNT),
        COUNT,
        "hash_mismatch",
    ),
    "link": (
        lambda p: edit(p, "UPDATE events SET prev_hash = ? WHERE seq = ?", "e" * 64, COUNT),
        COUNT,
        "prev_hash_mismatch",
    ),
    "hash-before": (  # the event before it changed its hash: the last one's link is broken
        lambda p: edit(p, "UPDATE events SET hash = ? WHERE seq = ?", "f" * 64, COUNT - 1),
        COUNT,
        "prev_hash_mismatch",
    ),
    "deleted-before": (
        lambda p: edit(p, "DELETE FROM events WHERE seq = ?", COUNT - 1),
        COUNT,
        "seq_gap",
    ),
    "place-in-stream": (
        lambda p: edit(p, "UPDATE events SET stream_seq = 9 WHERE seq = ?", COUNT),
        COUNT,
        "hash_mismatch",
    ),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
async def test_a_write_to_a_workspace_whose_tail_does_not_verify_is_refused(
    workspace: Path, damage: str
) -> None:
    async with await SqliteEventStore.open(workspace, create=True) as store:
        await store.append(events("ctx:a", COUNT))
    change, seq, problem = DAMAGE[damage]
    change(workspace)
    before = rows(workspace)

    async with await SqliteEventStore.open(workspace) as store:
        writes = {
            "append": lambda: store.append(events("ctx:a", 1)),
            "execute": lambda: store.execute(lambda _seen: [NewEvent("ctx:a", "noted")]),
            "save_checkpoint": lambda: store.save_checkpoint("tree", 1, b"state"),
        }
        for write in writes.values():
            with pytest.raises(StoreError) as refused:
                await write()
            assert refused.value.code == "BROKEN_TAIL"
            assert refused.value.details == {"seq": seq, "problem": problem}
            assert str(refused.value).startswith(
                f"BROKEN_TAIL: event {seq}, the log's last, does not verify ({problem}: "
            )
            assert str(workspace) in str(refused.value)
        # Reads still work, and verify names what is wrong.
        assert len(await store.read()) == len(before)
        result = await store.verify()
        assert not result.ok
    assert rows(workspace) == before  # nothing was written


async def test_only_the_tail_is_checked_at_open(workspace: Path) -> None:
    # A broken event before the last two is verify's to find: the check at open costs the
    # same however long the log is.
    async with await SqliteEventStore.open(workspace, create=True) as store:
        await store.append(events("ctx:a", COUNT))
    edit(workspace, "UPDATE events SET payload = ? WHERE seq = 2", '{"n":99}')
    async with await SqliteEventStore.open(workspace) as store:
        await store.append(events("ctx:a", 1))
        assert (await store.verify()).broken_seq == 2


async def test_a_log_of_one_event_and_an_empty_log_are_checked_too(workspace: Path) -> None:
    async with await SqliteEventStore.open(workspace, create=True) as store:
        assert await store.head() == 0
        await store.append(events("ctx:a", 1))
    edit(workspace, "UPDATE events SET payload = ? WHERE seq = 1", '{"n":99}')
    async with await SqliteEventStore.open(workspace) as store:
        with pytest.raises(StoreError) as refused:
            await store.append(events("ctx:a", 1))
        assert refused.value.details == {"seq": 1, "problem": "hash_mismatch"}
