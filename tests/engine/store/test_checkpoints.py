"""Projection checkpoints: saved in pieces, loaded whole, the latest state wins."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from engine.store import CorruptCheckpoint, EventStore, InvalidCheckpoint
from engine.store.sqlite import CHECKPOINT_CHUNK_BYTES

from .conftest import Backend, events, start_helper

pytestmark = pytest.mark.filterwarnings("error")


async def chunk_rows(backend: Backend) -> int:
    [(count,)] = await backend.rows("SELECT COUNT(*) FROM checkpoint_chunks")
    return int(count)


async def test_a_checkpoint_round_trips_and_survives_reopening(
    store: EventStore, backend: Backend
) -> None:
    await store.append(events("ctx:a", 10))
    state = os.urandom(2 * CHECKPOINT_CHUNK_BYTES + 12345)  # three chunks
    assert await store.load_checkpoint("context-tree") is None

    await store.save_checkpoint("context-tree", 8, state)
    assert await store.load_checkpoint("context-tree") == (8, state)
    await store.close()

    async with await backend.open() as reopened:
        checkpoint = await reopened.load_checkpoint("context-tree")
        assert checkpoint is not None
        seq, data = checkpoint
        assert (seq, data) == (8, state)
        # Resume: replay only what came after the checkpoint.
        assert [e.seq for e in await reopened.read(after_seq=seq)] == [9, 10]


async def test_a_newer_checkpoint_replaces_the_old_and_an_older_one_is_ignored(
    store: EventStore, backend: Backend
) -> None:
    await store.append(events("ctx:a", 10))
    await store.save_checkpoint("tree", 5, b"state at 5" * 200_000)
    await store.save_checkpoint("tree", 9, b"state at 9")
    await store.save_checkpoint("tree", 7, b"state at 7")  # a slower process, finishing late
    await store.save_checkpoint("other", 3, b"")

    assert await store.load_checkpoint("tree") == (9, b"state at 9")
    assert await store.load_checkpoint("other") == (3, b"")
    assert await chunk_rows(backend) == 1  # the replaced and the ignored pieces are gone


async def test_a_deleted_checkpoint_is_gone_with_its_pieces(
    store: EventStore, backend: Backend
) -> None:
    await store.append(events("ctx:a", 4))
    await store.save_checkpoint("tree", 3, os.urandom(CHECKPOINT_CHUNK_BYTES + 1))  # two pieces
    await store.save_checkpoint("other", 4, b"kept")
    await store.delete_checkpoint("tree")
    await store.delete_checkpoint("never-saved")  # nothing to do

    assert await store.load_checkpoint("tree") is None
    assert await store.load_checkpoint("other") == (4, b"kept")
    assert await chunk_rows(backend) == 1
    await store.save_checkpoint("tree", 2, b"an older state is welcome again")
    assert await store.load_checkpoint("tree") == (2, b"an older state is welcome again")


async def test_a_save_forgets_the_checkpoints_it_replaces_with_their_pieces(
    store: EventStore, backend: Backend
) -> None:
    await store.append(events("ctx:a", 6))
    await store.save_checkpoint("archive:1", 1, os.urandom(CHECKPOINT_CHUNK_BYTES + 1))
    await store.save_checkpoint("archive:2", 2, b"second")
    await store.save_checkpoint("archive:3", 3, b"third")
    assert await store.checkpoint_sizes() == {
        "archive:1": CHECKPOINT_CHUNK_BYTES + 1,
        "archive:2": 6,
        "archive:3": 5,
    }
    with pytest.raises(InvalidCheckpoint):  # refused: nothing is forgotten either
        await store.save_checkpoint("archive:9", 9, b"ninth", replacing=["archive:1"])
    assert await store.load_checkpoint("archive:1") is not None

    await store.save_checkpoint(
        "archive:5", 5, b"fifth", replacing=["archive:1", "archive:3", "never", "archive:5"]
    )
    assert await store.checkpoint_sizes() == {"archive:2": 6, "archive:5": 5}
    assert await store.load_checkpoint("archive:1") is None
    assert await store.load_checkpoint("archive:5") == (5, b"fifth")
    assert await chunk_rows(backend) == 2


async def test_a_checkpoint_beyond_the_log_is_refused(store: EventStore) -> None:
    await store.append(events("ctx:a", 3))
    with pytest.raises(InvalidCheckpoint) as refused:
        await store.save_checkpoint("tree", 4, b"from the future")
    assert refused.value.code == "INVALID_CHECKPOINT"
    with pytest.raises(InvalidCheckpoint):
        await store.save_checkpoint("tree", -1, b"")
    assert await store.load_checkpoint("tree") is None


async def test_a_damaged_checkpoint_is_reported_not_returned(
    store: EventStore, backend: Backend
) -> None:
    await store.append(events("ctx:a", 3))
    await store.save_checkpoint("tree", 3, b"x" * 1000)
    await backend.edit("UPDATE checkpoint_chunks SET data = ?", b"y" * 1000)

    with pytest.raises(CorruptCheckpoint) as damaged:
        await store.load_checkpoint("tree")
    assert damaged.value.code == "CORRUPT_CHECKPOINT"


async def generations(backend: Backend) -> dict[str, set[str]]:
    """Each checkpoint name with the generations it has pieces of."""
    found: dict[str, set[str]] = {}
    for name, generation in await backend.rows(
        "SELECT DISTINCT name, generation FROM checkpoint_chunks"
    ):
        found.setdefault(name, set()).add(generation)
    return found


def kill_a_save_halfway(where: str | Path, name: str) -> None:
    """A real process saves a three-piece checkpoint and is killed after its first piece."""
    process = start_helper("checkpoint_process.py", where, name, 2 * CHECKPOINT_CHUNK_BYTES + 1)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line == "piece 0 written\n", line + process.communicate()[1]
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL


async def test_a_finished_save_removes_the_pieces_of_saves_killed_halfway(
    store: EventStore, backend: Backend
) -> None:
    # The case: killed saves left orphaned pieces that no later checkpoint cleaned.
    await store.append(events("ctx:a", 5))
    await store.save_checkpoint("tree", 4, b"state at 4")
    for _ in range(3):
        kill_a_save_halfway(backend.where, "tree")
    kill_a_save_halfway(backend.where, "other")
    assert await chunk_rows(backend) == 1 + 3 + 1  # one piece of each killed save
    assert await store.load_checkpoint("tree") == (4, b"state at 4")

    await store.save_checkpoint("tree", 5, b"state at 5")
    assert await store.load_checkpoint("tree") == (5, b"state at 5")
    # Only the new generation of "tree" is left; "other" is another checkpoint's business.
    assert len((await generations(backend))["tree"]) == 1
    assert await chunk_rows(backend) == 1 + 1
    # Deleting a checkpoint removes every generation of it, unfinished ones included.
    await store.delete_checkpoint("other")
    assert await chunk_rows(backend) == 1


class PausedSave:
    """A save by ``store`` that stops after its first piece until ``resume()``."""

    def __init__(self, store: EventStore, name: str, seq: int, data: bytes) -> None:
        self.began, self.resumed = asyncio.Event(), asyncio.Event()
        real, pieces = store._write, 0  # type: ignore[attr-defined]

        async def write(step: Any) -> Any:
            nonlocal pieces
            written = await real(step)
            pieces += 1
            if pieces == 1:
                self.began.set()
                await self.resumed.wait()
            return written

        store._write = write  # type: ignore[attr-defined]
        self.task = asyncio.ensure_future(store.save_checkpoint(name, seq, data))

    async def __aenter__(self) -> PausedSave:
        await self.began.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.resumed.set()
        await self.task


async def test_a_save_that_finishes_first_removes_a_slower_one_begun_before_it(
    backend: Backend,
) -> None:
    async with (
        await backend.open(create=True) as slow,
        await backend.open() as fast,
    ):
        await fast.append(events("ctx:a", 9))
        big = os.urandom(2 * CHECKPOINT_CHUNK_BYTES + 1)
        async with PausedSave(slow, "tree", 5, big):
            await fast.save_checkpoint("tree", 8, b"state at 8")
        # The slow save lost its pieces: it published nothing, and left nothing behind.
        assert await fast.load_checkpoint("tree") == (8, b"state at 8")
        assert await chunk_rows(backend) == 1


async def test_a_save_begun_after_one_that_finishes_is_left_to_finish(backend: Backend) -> None:
    async with (
        await backend.open(create=True) as first,
        await backend.open() as second,
    ):
        await first.append(events("ctx:a", 9))
        later = os.urandom(2 * CHECKPOINT_CHUNK_BYTES + 1)
        earlier = os.urandom(CHECKPOINT_CHUNK_BYTES + 1)
        async with (
            PausedSave(first, "tree", 5, earlier) as one,
            PausedSave(second, "tree", 8, later),
        ):
            one.resumed.set()
            await one.task  # published; the save begun after it keeps its pieces
            assert await first.load_checkpoint("tree") == (5, earlier)
        assert await second.load_checkpoint("tree") == (8, later)
        assert await chunk_rows(backend) == 3
