"""Projection checkpoints: saved in pieces, loaded whole, the latest state wins."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from engine.store import CorruptCheckpoint, InvalidCheckpoint, SqliteEventStore
from engine.store.sqlite import CHECKPOINT_CHUNK_BYTES

from .conftest import events

pytestmark = pytest.mark.filterwarnings("error")


def chunk_rows(path: Path) -> int:
    with closing(sqlite3.connect(path)) as connection:
        (count,) = connection.execute("SELECT COUNT(*) FROM checkpoint_chunks").fetchone()
    return int(count)


async def test_a_checkpoint_round_trips_and_survives_reopening(
    store: SqliteEventStore, workspace: Path
) -> None:
    await store.append(events("ctx:a", 10))
    state = os.urandom(2 * CHECKPOINT_CHUNK_BYTES + 12345)  # three chunks
    assert await store.load_checkpoint("context-tree") is None

    await store.save_checkpoint("context-tree", 8, state)
    assert await store.load_checkpoint("context-tree") == (8, state)
    await store.close()

    async with await SqliteEventStore.open(workspace) as reopened:
        checkpoint = await reopened.load_checkpoint("context-tree")
        assert checkpoint is not None
        seq, data = checkpoint
        assert (seq, data) == (8, state)
        # Resume: replay only what came after the checkpoint.
        assert [e.seq for e in await reopened.read(after_seq=seq)] == [9, 10]


async def test_a_newer_checkpoint_replaces_the_old_and_an_older_one_is_ignored(
    store: SqliteEventStore, workspace: Path
) -> None:
    await store.append(events("ctx:a", 10))
    await store.save_checkpoint("tree", 5, b"state at 5" * 200_000)
    await store.save_checkpoint("tree", 9, b"state at 9")
    await store.save_checkpoint("tree", 7, b"state at 7")  # a slower process, finishing late
    await store.save_checkpoint("other", 3, b"")

    assert await store.load_checkpoint("tree") == (9, b"state at 9")
    assert await store.load_checkpoint("other") == (3, b"")
    assert chunk_rows(workspace) == 1  # the replaced and the ignored pieces are gone


async def test_a_deleted_checkpoint_is_gone_with_its_pieces(
    store: SqliteEventStore, workspace: Path
) -> None:
    await store.append(events("ctx:a", 4))
    await store.save_checkpoint("tree", 3, os.urandom(CHECKPOINT_CHUNK_BYTES + 1))  # two pieces
    await store.save_checkpoint("other", 4, b"kept")
    await store.delete_checkpoint("tree")
    await store.delete_checkpoint("never-saved")  # nothing to do

    assert await store.load_checkpoint("tree") is None
    assert await store.load_checkpoint("other") == (4, b"kept")
    assert chunk_rows(workspace) == 1
    await store.save_checkpoint("tree", 2, b"an older state is welcome again")
    assert await store.load_checkpoint("tree") == (2, b"an older state is welcome again")


async def test_a_checkpoint_beyond_the_log_is_refused(store: SqliteEventStore) -> None:
    await store.append(events("ctx:a", 3))
    with pytest.raises(InvalidCheckpoint) as refused:
        await store.save_checkpoint("tree", 4, b"from the future")
    assert refused.value.code == "INVALID_CHECKPOINT"
    with pytest.raises(InvalidCheckpoint):
        await store.save_checkpoint("tree", -1, b"")
    assert await store.load_checkpoint("tree") is None


async def test_a_damaged_checkpoint_is_reported_not_returned(
    store: SqliteEventStore, workspace: Path
) -> None:
    await store.append(events("ctx:a", 3))
    await store.save_checkpoint("tree", 3, b"x" * 1000)
    with closing(sqlite3.connect(workspace)) as connection:
        connection.execute("UPDATE checkpoint_chunks SET data = ?", (b"y" * 1000,))
        connection.commit()

    with pytest.raises(CorruptCheckpoint) as damaged:
        await store.load_checkpoint("tree")
    assert damaged.value.code == "CORRUPT_CHECKPOINT"
