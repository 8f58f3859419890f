"""``pact-tui backup WS DEST``: SQLite's online backup, consistent while another process writes,
never over an existing file unless told, the copy's chain verified, one self-contained file."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from engine.deep_verify import verify_deep
from engine.store import SqliteEventStore
from engine.workspace import Workspace
from tests.engine.workspace.conftest import replay_from_scratch, start_helper
from tests.engine.workspace.writer_process import CONTEXTS

from .conftest import cli

GUARD_S = 120  # failure guard for a process that hangs; never reached when things work


def events_of(path: Path) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute("SELECT seq, stream, hash FROM events ORDER BY seq").fetchall()


def make_workspace(path: Path) -> None:
    for name in CONTEXTS:
        assert cli("ctx", "create", path, name).code == 0


def test_a_backup_taken_while_another_process_writes_is_a_whole_moment_of_the_log(
    tmp_path: Path,
) -> None:
    path, copy = tmp_path / "live.pact", tmp_path / "backup.pact"
    make_workspace(path)
    writer = start_helper("writer_process.py", path, "alpha", 0)  # until killed
    assert writer.stdout is not None
    try:
        for expected in range(5):
            assert writer.stdout.readline() == f"committed {expected}\n"
        done = cli("backup", path, copy)
        for expected in range(5, 10):  # it went on writing
            assert writer.stdout.readline() == f"committed {expected}\n"
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.communicate(timeout=GUARD_S)

    assert (done.code, done.err) == (0, "")
    copied = events_of(copy)
    with closing(sqlite3.connect(copy)) as connection:
        [(checkpoints,)] = connection.execute("SELECT COUNT(*) FROM checkpoints")
    assert done.out == (
        f"backed up {path} to {copy}: {len(copied)} events and {checkpoints} checkpoint(s),"
        f" {copy.stat().st_size} bytes; chain intact\n"
    )
    # Every event committed before it, in order, and nothing half: the log as of one moment.
    assert len(copied) >= len(CONTEXTS) + 5
    assert events_of(path)[: len(copied)] == copied
    assert not Path(f"{copy}-wal").exists()  # one self-contained file

    async def check() -> None:
        async with await SqliteEventStore.open(copy, watch=False) as store:
            deep = await verify_deep(store)
        assert deep.ok, deep
        replayed = await replay_from_scratch(copy)
        async with await Workspace.open(copy, watch=False) as ws:
            for name in CONTEXTS:
                assert ws.context(name).model_dump_json() == (
                    replayed[name].context.model_dump_json()
                )

    asyncio.run(check())


def test_an_existing_destination_is_refused_unless_forced(tmp_path: Path) -> None:
    path, copy = tmp_path / "w.pact", tmp_path / "backup.pact"
    make_workspace(path)
    copy.write_bytes(b"something precious")
    done = cli("backup", path, copy)
    assert (done.code, done.out) == (1, "")
    assert done.err == (
        f"pact-tui: DESTINATION_EXISTS: backup.pact already there: pass --force to replace it"
        f" ({copy})\n"
    )
    assert copy.read_bytes() == b"something precious"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []

    done = cli("backup", path, copy, "--force", "--json")
    assert done.code == 0
    assert done.data == {
        "ok": True,
        "path": str(copy),
        "bytes": copy.stat().st_size,
        "events": len(CONTEXTS),
        "checkpoints": 1,
        "broken_seq": None,
        "problem": None,
        "detail": "",
    }
    assert events_of(copy) == events_of(path)


def test_a_file_sqlite_left_beside_the_destination_counts_as_there(tmp_path: Path) -> None:
    # A -wal left by another database would be applied to the copy when it is next opened.
    path, copy = tmp_path / "w.pact", tmp_path / "backup.pact"
    make_workspace(path)
    stale = tmp_path / "backup.pact-wal"
    stale.write_bytes(b"frames of another database")
    done = cli("backup", path, copy)
    assert done.code == 1 and "DESTINATION_EXISTS: backup.pact-wal already there" in done.err
    assert not copy.exists()
    assert cli("backup", path, copy, "--force").code == 0
    assert not stale.exists()
    assert cli("verify", copy).code == 0


@pytest.mark.parametrize(
    ("destination", "said"),
    [
        (lambda folder: folder / "w.pact", "the backup's destination is the workspace itself"),
        (lambda folder: folder, "the backup's destination is a folder: name a file"),
        (
            lambda folder: folder / "missing" / "b.pact",
            "the folder of the backup's destination does not exist",
        ),
    ],
    ids=["itself", "a-folder", "no-folder"],
)
def test_a_destination_that_cannot_be_one_is_refused(
    tmp_path: Path, destination: object, said: str
) -> None:
    path = tmp_path / "w.pact"
    make_workspace(path)
    before = sorted(p.name for p in tmp_path.iterdir())
    target = destination(tmp_path)  # type: ignore[operator]
    for force in ([], ["--force"]):
        done = cli("backup", path, target, *force)
        assert (done.code, done.out) == (1, "")
        assert done.err == f"pact-tui: INVALID_DESTINATION: {said} ({target})\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert cli("verify", path).code == 0


def test_a_bad_workspace_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    source, copy = tmp_path / "notes.txt", tmp_path / "backup.pact"
    source.write_text("not a workspace\n")
    done = cli("backup", source, copy)
    assert done.code == 1 and done.err.startswith("pact-tui: NOT_A_DATABASE: ")
    assert not copy.exists()
