"""A store opened read-only reads everything and writes nothing (issue 10 §3), and a store
opened through a symlink watches the file the link leads to."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import pytest

import engine.store.feed as feed_module
from engine.store import NewEvent, ReadOnlyWorkspace, SqliteEventStore
from engine.store.schema import SCHEMA_VERSION
from tests.engine.workspace.bad_files import state
from tests.processes import OWNER_UID, READER_UID, run_as_user, shared_folder, start_as_user

from .conftest import SteppingClock, events
from .test_feed import take

pytestmark = pytest.mark.filterwarnings("error")

HELPERS = Path(__file__).resolve().parent
LOOKER, WRITER = HELPERS / "looker_process.py", HELPERS / "writer_process.py"


async def written(path: Path) -> None:
    async with await SqliteEventStore.open(path, create=True, clock=SteppingClock()) as store:
        await store.append(events("ctx:a", 5))
        await store.save_checkpoint("a", 5, b"state at five")


def identity(path: Path) -> tuple[object, ...]:
    uri = path.absolute().as_uri() + "?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as connection:
        return (
            connection.execute("PRAGMA journal_mode").fetchone(),
            connection.execute("PRAGMA user_version").fetchone(),
            connection.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall(),
            connection.execute("SELECT * FROM checkpoints").fetchall(),
        )


@pytest.mark.parametrize("journal", ["wal", "delete"])
async def test_a_read_only_store_reads_all_and_writes_nothing(tmp_path: Path, journal: str) -> None:
    path = tmp_path / "w.pact"
    await written(path)
    with closing(sqlite3.connect(path)) as connection:
        connection.execute(f"PRAGMA journal_mode = {journal}")
    before, schema = state(path)[:3], identity(path)

    async with await SqliteEventStore.open(path, read_only=True) as store:
        assert store.read_only
        assert await store.head() == 5
        assert [e.payload["n"] for e in await store.read()] == [0, 1, 2, 3, 4]
        checkpoint = await store.load_checkpoint("a")
        assert checkpoint is not None and checkpoint.data == b"state at five"
        assert (await store.verify()).ok

        writes = [
            store.append(events("ctx:a", 1)),
            store.execute(lambda seen: [NewEvent("ctx:a", "noted", {}, "x")]),
            store.save_checkpoint("a", 5, b"other"),
            store.delete_checkpoint("a"),
        ]
        for write in writes:
            with pytest.raises(ReadOnlyWorkspace, match="opened read-only"):
                await write
    assert state(path)[:3] == before  # bytes and modification time of the file itself
    assert identity(path) == schema  # still in its journal mode, schema as it was
    assert schema[1][0] == SCHEMA_VERSION


async def test_a_read_only_store_follows_another_process_s_commits(tmp_path: Path) -> None:
    path = tmp_path / "w.pact"
    await written(path)
    async with (
        await SqliteEventStore.open(path, read_only=True) as reader,
        await SqliteEventStore.open(path, watch=False) as writer,
    ):
        subscription = reader.subscribe(after_seq=5)
        await writer.append(events("ctx:a", 3, start=5))
        assert [e.seq for e in await take(subscription, 3)] == [6, 7, 8]


async def test_a_symlinked_workspace_is_watched_where_its_log_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite makes the write-ahead log beside the file a link leads to. The feed watched the
    link's folder, saw nothing, and fell back on its safety check: 548 ms median per change
    through a link, 18 ms direct. With the safety check an hour apart, only the watcher of
    the right folder delivers anything."""
    monkeypatch.setattr(feed_module, "SAFETY_CHECK_MS", 3_600_000)
    real = tmp_path / "store" / "w.pact"
    real.parent.mkdir()
    await written(real)
    link = tmp_path / "elsewhere" / "link.pact"
    link.parent.mkdir()
    link.symlink_to(real)
    async with (
        await SqliteEventStore.open(link) as follower,
        await SqliteEventStore.open(real, watch=False) as writer,
    ):
        subscription = follower.subscribe(after_seq=5)
        # The watcher starts in the background: commit until it has seen one (each commit
        # changes the log), then the rest arrive by it too.
        received = []
        for n in range(40):
            await writer.append(events("ctx:a", 1, start=5 + n))
            try:
                received += await asyncio.wait_for(take(subscription, 1), 0.5)
                break
            except TimeoutError:
                continue
        assert received, "no commit arrived through the watcher"
        await writer.append(events("ctx:a", 2, start=100))
        later = await take(subscription, await writer.head() - received[-1].seq)
        assert [e.seq for e in later][-2:] == [await writer.head() - 1, await writer.head()]


def beside(path: Path) -> dict[str, int]:
    """The files SQLite makes beside the workspace, and whose they are."""
    return {
        p.name: p.stat().st_uid
        for p in path.parent.iterdir()
        if p.name.startswith(path.name) and p.name != path.name
    }


def owners_append(path: Path, name: str, commands: int) -> None:
    done = run_as_user(OWNER_UID, [sys.executable, str(WRITER), path, name, str(commands), "1"])
    assert done.returncode == 0, done.stderr


def test_a_look_by_a_user_who_cannot_write_makes_nothing_and_follows_a_writer_who_starts() -> None:
    """A user who cannot write the workspace reads it as an unchanging file, which makes no
    -wal or -shm of theirs beside it (the owner could neither use nor remove them). An owner
    who starts writing meanwhile is not stopped, and the look reads on through the owner's
    files: the read lock it holds keeps the owner's closing from removing them."""
    with shared_folder() as folder:
        path = folder / "w.pact"
        asyncio.run(written(path))
        os.chown(path, OWNER_UID, OWNER_UID)
        path.chmod(0o644)
        assert beside(path) == {}
        with start_as_user(READER_UID, LOOKER, path) as looker:
            assert looker.stdin is not None and looker.stdout is not None
            assert looker.stdout.readline() == "head 5 unchanging true\n"
            assert beside(path) == {}
            owners_append(path, "owner", 3)
            # The owner's last connection could not remove its files while the look held its
            # lock; its commits are in its -wal, not in the file the look began reading.
            assert beside(path) == {"w.pact-wal": OWNER_UID, "w.pact-shm": OWNER_UID}
            looker.stdin.write("again\n")
            looker.stdin.flush()
            assert looker.stdout.readline() == "head 8 events 8\n"
            owners_append(path, "owner-again", 2)
            looker.stdin.write("again\n")
            looker.stdin.flush()
            assert looker.stdout.readline() == "head 10 events 10\n"
            looker.stdin.close()
            assert looker.stdout.readline() == "closed\n"
            assert looker.wait(timeout=60) == 0
        assert set(beside(path).values()) <= {OWNER_UID}
        owners_append(path, "owner-after", 1)  # the last one out tidies
        assert beside(path) == {}
