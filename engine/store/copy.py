"""A workspace copied between stores: from an SQLite file to a PostgreSQL database, back, or
between two databases (file to file is SQLite's online backup: :mod:`engine.store.backup`).

The copy is the source's tables as of one moment (one read transaction), copied as stored:
events with their positions and hashes, never linked again (a broken chain is copied as it is,
and said so), checkpoints with the hash of the event each was taken at, so that the copy's log
vouches for the same ones. The copy's chain is walked before it is kept. Into a file, it is
written beside the destination and renamed into place; into a database, it is one
transaction, which commits only once the chain has been read back and walked. A copy that
fails leaves the destination as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.store.backup import (
    BackupResult,
    check_destination,
    partial_beside,
    put_in_place,
    remove_partial,
)
from engine.store.base import VerifyResult
from engine.store.chain import CHAIN_COLUMNS, ChainRow, verify_rows
from engine.store.errors import (
    DestinationExists,
    InvalidDestination,
    StorageFailure,
)
from engine.store.opening import is_url, open_store, where_shown
from engine.store.read_access import read_as_of_one_moment
from engine.store.sqlite_errors import translate_sqlite_error

READ_BATCH = 10_000


CHECKPOINT_COLUMNS = "name, seq, generation, size, sha256, saved_ns, event_hash"
CHUNK_COLUMNS = "name, generation, chunk, data"


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """The source's three tables as of one moment, as stored."""

    rows: list[ChainRow]
    checkpoints: list[tuple[Any, ...]]
    chunks: list[tuple[Any, ...]]


async def copy_workspace(
    source: str | os.PathLike[str], destination: str | os.PathLike[str], *, replace: bool
) -> BackupResult:
    """Copy the workspace at ``source`` to ``destination`` (paths or URLs; see the module)."""
    if not is_url(source) and not is_url(destination):
        raise ValueError("between two files, copy with SqliteEventStore.backup")
    if str(source) == str(destination):
        raise InvalidDestination(
            "the backup's destination is the workspace itself", path=str(where_shown(source))
        )
    if not is_url(destination):  # then the source is a database
        await asyncio.to_thread(check_destination, None, Path(destination), replace=replace)
    # Opened first: a source that is no workspace (missing, foreign, too new) is refused as
    # any command refuses it.
    async with await open_store(source, read_only=True, watch=False):
        pass
    try:
        if is_url(source):
            snapshot = await _read_database(str(source))
        else:
            snapshot = await asyncio.to_thread(_read_file, Path(source))
    except sqlite3.Error as error:
        raise translate_sqlite_error(error, str(source)) from error
    except (OSError, ImportError) as error:
        raise StorageFailure(f"cannot read the workspace: {error}", path=str(source)) from error
    if is_url(destination):
        return await _into_database(str(destination), snapshot, replace=replace)
    return await _into_file(Path(destination), snapshot)


def _read_file(file: Path) -> _Snapshot:
    """The file's tables in one read transaction (blocking)."""

    def read(connection: sqlite3.Connection) -> _Snapshot:
        connection.execute("BEGIN")
        columns = {row[1] for row in connection.execute("PRAGMA table_info(checkpoints)")}
        # A file of schema 1 recorded no event hash with a checkpoint (read as the store does).
        heads = CHECKPOINT_COLUMNS
        if "event_hash" not in columns:
            heads = heads.replace("event_hash", "NULL")
        snapshot = _Snapshot(
            connection.execute(f"SELECT {CHAIN_COLUMNS} FROM events ORDER BY seq").fetchall(),
            connection.execute(f"SELECT {heads} FROM checkpoints ORDER BY name").fetchall(),
            connection.execute(
                f"SELECT {CHUNK_COLUMNS} FROM checkpoint_chunks ORDER BY rowid"
            ).fetchall(),
        )
        connection.execute("COMMIT")
        return snapshot

    return read_as_of_one_moment(file.resolve(), read)


async def _read_database(url: str) -> _Snapshot:
    """The database's tables in one repeatable-read transaction."""
    import asyncpg

    from engine.store.postgres import translate_postgres_error
    from engine.store.postgres_schema import shown_url

    try:
        connection = await asyncpg.connect(url)
        try:
            async with connection.transaction(isolation="repeatable_read", readonly=True):
                tables = [
                    [tuple(row) for row in await connection.fetch(query)]
                    for query in (
                        f"SELECT {CHAIN_COLUMNS} FROM events ORDER BY seq",
                        f"SELECT {CHECKPOINT_COLUMNS} FROM checkpoints ORDER BY name",
                        f"SELECT {CHUNK_COLUMNS} FROM checkpoint_chunks ORDER BY id",
                    )
                ]
        finally:
            await connection.close()
    except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError) as error:
        raise translate_postgres_error(error, shown_url(url)) from error
    return _Snapshot(*tables)


async def _into_file(destination: Path, snapshot: _Snapshot) -> BackupResult:
    from engine.store.sqlite import SqliteEventStore

    partial = partial_beside(destination)
    try:
        async with await SqliteEventStore.open(partial, create=True, watch=False):
            pass  # the schema, at this version
        chain = await asyncio.to_thread(_fill_file, partial, snapshot)
        size = partial.stat().st_size
        await asyncio.to_thread(put_in_place, partial, destination)
    except (OSError, sqlite3.Error) as error:
        why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise StorageFailure(f"cannot write the backup: {why}", path=str(destination)) from error
    finally:
        await asyncio.to_thread(remove_partial, partial)
    return BackupResult(destination, size, chain, len(snapshot.checkpoints))


def _fill_file(partial: Path, snapshot: _Snapshot) -> VerifyResult:
    copy = sqlite3.connect(partial, isolation_level=None)
    try:
        copy.execute("BEGIN IMMEDIATE")
        copy.executemany(
            f"INSERT INTO events ({CHAIN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            snapshot.rows,
        )
        copy.executemany(
            f"INSERT INTO checkpoints ({CHECKPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            snapshot.checkpoints,
        )
        copy.executemany(
            f"INSERT INTO checkpoint_chunks ({CHUNK_COLUMNS}) VALUES (?, ?, ?, ?)",
            snapshot.chunks,
        )
        copy.execute("COMMIT")
        copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        chain = verify_rows(copy.execute(f"SELECT {CHAIN_COLUMNS} FROM events ORDER BY seq"))
    finally:
        copy.close()
    with partial.open("rb+") as file:  # on the disk before it is renamed into place
        os.fsync(file.fileno())
    return chain


async def _into_database(url: str, snapshot: _Snapshot, *, replace: bool) -> BackupResult:
    import asyncpg

    from engine.store.postgres import PostgresEventStore, translate_postgres_error
    from engine.store.postgres_schema import LOCK_WORKSPACE, shown_url

    where = shown_url(url)
    async with await PostgresEventStore.open(url, create=True, watch=False):
        pass  # the tables, at this version (a foreign database is refused here)
    try:
        connection = await asyncpg.connect(url)
    except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError) as error:
        raise translate_postgres_error(error, where) from error
    try:
        async with connection.transaction():
            await connection.execute(LOCK_WORKSPACE)
            held = await connection.fetchval("SELECT COUNT(*) FROM events")
            kept = await connection.fetchval("SELECT COUNT(*) FROM checkpoints")
            if (held or kept) and not replace:
                raise DestinationExists(
                    f"the database holds a workspace ({held} events): pass --force to replace it",
                    path=where,
                )
            await connection.execute(
                "DELETE FROM checkpoint_chunks; DELETE FROM checkpoints; DELETE FROM events"
            )
            await connection.copy_records_to_table(
                "events", records=snapshot.rows, columns=CHAIN_COLUMNS.split(", ")
            )
            await connection.copy_records_to_table(
                "checkpoints",
                records=snapshot.checkpoints,
                columns=CHECKPOINT_COLUMNS.split(", "),
            )
            await connection.copy_records_to_table(
                "checkpoint_chunks", records=snapshot.chunks, columns=CHUNK_COLUMNS.split(", ")
            )
            chain = await _walk(connection)
            size = int(await connection.fetchval("SELECT pg_database_size(current_database())"))
    except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError) as error:
        raise translate_postgres_error(error, where) from error
    finally:
        with contextlib.suppress(Exception):
            await connection.close()
    return BackupResult(where, size, chain, len(snapshot.checkpoints))


async def _walk(connection: object) -> VerifyResult:
    """The copy's chain, read back inside the copy's transaction."""
    rows: Sequence[ChainRow] = await connection.fetch(  # type: ignore[attr-defined]
        f"SELECT {CHAIN_COLUMNS} FROM events ORDER BY seq"
    )
    return await asyncio.to_thread(verify_rows, rows)
