"""Files that are not usable workspaces: a typed error naming the file, and the file untouched."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from engine.store import (
    EmptyWorkspaceFile,
    ForeignDatabase,
    NotADatabase,
    SchemaTooNew,
    SqliteEventStore,
    StoreError,
    TruncatedDatabase,
    WorkspaceLocked,
    WorkspaceNotFound,
)
from engine.store.schema import APPLICATION_ID, SCHEMA_VERSION

from .conftest import events

pytestmark = pytest.mark.filterwarnings("error")


def file_state(path: Path) -> tuple[bytes, int, list[str]]:
    """The file's bytes, its modification time, and what lies beside it."""
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(os.listdir(path.parent))


async def make_workspace(path: Path, count: int = 200) -> None:
    async with await SqliteEventStore.open(path, create=True) as store:
        for start in range(0, count, 50):
            await store.append(events("ctx:a", min(50, count - start), start=start))


async def assert_refused(
    path: Path, error_type: type[StoreError], code: str, *, create: bool = False
) -> StoreError:
    before = file_state(path)
    with pytest.raises(error_type) as refused:
        await SqliteEventStore.open(path, create=create)
    assert refused.value.code == code
    assert refused.value.path == str(path)
    assert str(path) in str(refused.value)
    assert file_state(path) == before
    return refused.value


async def test_a_text_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("These are my notes.\n" * 50)
    await assert_refused(path, NotADatabase, "NOT_A_DATABASE")
    await assert_refused(path, NotADatabase, "NOT_A_DATABASE", create=True)


async def test_an_empty_file_is_refused_unless_asked_to_create(tmp_path: Path) -> None:
    path = tmp_path / "empty.pact"
    path.touch()
    await assert_refused(path, EmptyWorkspaceFile, "EMPTY_FILE")

    async with await SqliteEventStore.open(path, create=True) as store:
        await store.append(events("ctx:a", 1))
    async with await SqliteEventStore.open(path) as store:
        assert await store.head() == 1


async def test_a_missing_file_is_refused_unless_asked_to_create(tmp_path: Path) -> None:
    path = tmp_path / "missing.pact"
    with pytest.raises(WorkspaceNotFound) as refused:
        await SqliteEventStore.open(path)
    assert refused.value.code == "WORKSPACE_NOT_FOUND"
    assert not path.exists()


async def test_a_directory(tmp_path: Path) -> None:
    with pytest.raises(NotADatabase):
        await SqliteEventStore.open(tmp_path)


@pytest.mark.parametrize(
    "keep",
    [
        pytest.param(lambda size: size // 2, id="half"),
        pytest.param(lambda size: 4096, id="first-page"),
        pytest.param(lambda size: size - 100, id="ragged-end"),
        pytest.param(lambda size: 60, id="inside-header"),
        pytest.param(lambda size: 10, id="inside-magic"),
    ],
)
async def test_a_truncated_database(tmp_path: Path, keep: Callable[[int], int]) -> None:
    path = tmp_path / "truncated.pact"
    await make_workspace(path)
    data = path.read_bytes()
    path.write_bytes(data[: keep(len(data))])

    error = await assert_refused(path, TruncatedDatabase, "TRUNCATED_DATABASE")
    assert error.code != "CORRUPT_DATABASE" and isinstance(error, StoreError)


async def test_a_foreign_sqlite_database(tmp_path: Path) -> None:
    path = tmp_path / "someone-elses.db"
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA application_id = 1234")
        connection.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, data TEXT)")
        connection.commit()
    await assert_refused(path, ForeignDatabase, "FOREIGN_DATABASE")
    await assert_refused(path, ForeignDatabase, "FOREIGN_DATABASE", create=True)

    # Another application's database with tables but no application_id: foreign as well.
    plain = tmp_path / "plain.db"
    with closing(sqlite3.connect(plain)) as connection:
        connection.execute("CREATE TABLE t (x)")
        connection.commit()
    await assert_refused(plain, ForeignDatabase, "FOREIGN_DATABASE", create=True)


async def test_an_sqlite_database_with_nothing_in_it(tmp_path: Path) -> None:
    path = tmp_path / "blank.db"
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("VACUUM")  # writes a header and nothing else
    assert path.stat().st_size > 0
    await assert_refused(path, EmptyWorkspaceFile, "EMPTY_FILE")

    async with await SqliteEventStore.open(path, create=True) as store:
        assert await store.head() == 0


async def test_a_workspace_from_a_newer_version(tmp_path: Path) -> None:
    path = tmp_path / "future.pact"
    await make_workspace(path, count=50)
    with closing(sqlite3.connect(path)) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        connection.commit()

    error = await assert_refused(path, SchemaTooNew, "SCHEMA_TOO_NEW")
    assert error.details == {
        "found_version": SCHEMA_VERSION + 1,
        "supported_version": SCHEMA_VERSION,
    }
    assert "newer version" in error.message


async def test_a_newer_version_still_in_the_write_ahead_log(tmp_path: Path) -> None:
    # A newer program has the workspace open and has not checkpointed yet: the main file's header
    # still says the old version, only SQLite (reading the log) knows better.
    path = tmp_path / "live.pact"
    await make_workspace(path, count=50)
    with closing(sqlite3.connect(path, isolation_level=None)) as newer_program:
        newer_program.execute("PRAGMA wal_autocheckpoint = 0")
        newer_program.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        assert (path.parent / (path.name + "-wal")).stat().st_size > 0
        main_file_before = path.read_bytes(), path.stat().st_mtime_ns

        with pytest.raises(SchemaTooNew):
            await SqliteEventStore.open(path)
        assert (path.read_bytes(), path.stat().st_mtime_ns) == main_file_before


async def test_the_application_id_marks_our_files(workspace: Path) -> None:
    await make_workspace(workspace, count=1)
    with closing(sqlite3.connect(workspace)) as connection:
        assert connection.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_a_writer_holding_the_lock_past_the_busy_timeout(workspace: Path) -> None:
    await make_workspace(workspace, count=1)
    with closing(sqlite3.connect(workspace, isolation_level=None)) as other_writer:
        other_writer.execute("BEGIN IMMEDIATE")
        # Opening needs no write lock; reading goes on beside the writer (WAL).
        async with await SqliteEventStore.open(workspace, busy_timeout=0.1) as store:
            assert await store.head() == 1
            with pytest.raises(WorkspaceLocked) as locked:
                await store.append(events("ctx:a", 1))
            assert locked.value.code == "WORKSPACE_LOCKED"
            assert locked.value.path == str(workspace)

            other_writer.execute("ROLLBACK")
            [appended] = await store.append(events("ctx:a", 1))
            assert appended.seq == 2
