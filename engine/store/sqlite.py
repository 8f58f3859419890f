"""The event store in one SQLite file, shared by any number of processes on one machine.

The file is in WAL mode, so readers never block the single writer and a process killed mid-write
leaves the last committed state. Each open store holds two connections: a writer, for commands
and checkpoints, and a reader, for queries and the change feed (its ``data_version`` moves only
when another connection commits). Verification streams over a third, short-lived, read-only
connection in a worker thread, so hashing a million events never stalls the event loop.

The writer lives in a thread of its own (:class:`~engine.store.writer_thread.WriterThread`) and
each step of a command runs there whole: :meth:`SqliteEventStore.append` is one trip to that
thread (take the lock, catch the chain head up, link, hash, insert, commit), and
:meth:`SqliteEventStore.execute` two (take the lock and read what others appended; then, once
``decide`` has run here, link, hash, insert and commit).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import itertools
import operator
import os
import random
import secrets
import sqlite3
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import aiosqlite

from engine.store.backup import BackupResult, backup_file
from engine.store.base import (
    Checkpoint,
    Clock,
    Decide,
    EventStore,
    NewEvent,
    StoredEvent,
    StreamHead,
    Subscription,
    VerifyResult,
    check_part_path,
    part_of,
)
from engine.store.chain import (
    CHAIN_COLUMNS,
    GENESIS_HASH,
    ChainHead,
    ChainRow,
    encode_events,
    verify_rows,
    verify_tail,
)
from engine.store.errors import (
    BrokenTail,
    CorruptDatabase,
    ForeignDatabase,
    InvalidCheckpoint,
    ReadOnlyWorkspace,
    SchemaTooNew,
    SchemaTooOld,
    StorageFailure,
    StoreClosed,
)
from engine.store.feed import RECENT_WINDOW, ChangeFeed
from engine.store.file_check import can_write, inspect_workspace_file, made_or_nothing
from engine.store.read_access import (
    ReadOnlyAccess,
    read_as_of_one_moment,
    read_only_access,
    sidecars_absent,
    tidy_after_reading,
)
from engine.store.rules import (
    checkpoint_from_rows,
    decoded_json,
    event_from_row,
    not_vouched,
    payload_of,
)
from engine.store.schema import (
    APPLICATION_ID,
    MIGRATIONS,
    SCHEMA_VERSION,
)
from engine.store.sqlite_errors import is_busy, translate_sqlite_error
from engine.store.writer_thread import WriterThread

T = TypeVar("T")

# Checkpoint blobs are written in pieces of this size, one short transaction each, so that
# commands from this and other processes get the write lock in between.
CHECKPOINT_CHUNK_BYTES = 1 << 20
# How many events appended by others a command reads to keep its cached chain head current,
# before it rather reads the head afresh.
CACHED_HEAD_CATCH_UP_LIMIT = 1_000

# The schema versions a read-only store reads as they are (it cannot upgrade them).
READABLE_SCHEMAS = range(1, SCHEMA_VERSION + 1)

_INSERT_EVENT = (
    "INSERT INTO events (seq, stream, stream_seq, type, time_ns, actor, payload, prev_hash, hash)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_stream_of = operator.attrgetter("stream")


class SqliteEventStore(EventStore):
    """Open with ``await SqliteEventStore.open(path)``; close with ``await store.close()``."""

    def __init__(
        self,
        path: Path,
        writer: WriterThread | None,
        reader: aiosqlite.Connection,
        *,
        head: int,
        clock: Clock,
        busy_timeout: float,
        watch: bool,
        unchanging: bool = False,
        broken_tail: BrokenTail | None = None,
        schema: int = SCHEMA_VERSION,
        tidy_at_close: bool = False,
        access: ReadOnlyAccess | None = None,
    ) -> None:
        self.path = path
        self._where = str(path)
        # The file itself: SQLite names the write-ahead log after it, not after a link to it.
        self._file = path.resolve()
        self._writer_or_none = writer
        self._reader = reader
        self.read_only = writer is None
        """Opened read-only: commands and checkpoints raise ``ReadOnlyWorkspace``."""
        self.unchanging = unchanging
        """Opened as a file nobody writes (by a user who cannot write it or its folder, with no
        write-ahead log beside it): others' commits are not followed (see
        :mod:`engine.store.read_access`)."""
        self._clock = clock
        self._busy_timeout = busy_timeout
        self._cursor = head
        # Read at the first command, then kept current under the write lock.
        self._chain_head: ChainHead | None = None
        self._write_lock = asyncio.Lock()  # one transaction at a time on the writer connection
        self._closed = False
        # Why the log takes no writes: its last event did not verify when the store opened.
        self._broken_tail = broken_tail
        self._schema = schema  # a read-only store may read an older one as it is
        self._tidy_at_close = tidy_at_close  # remove the -wal and -shm files this store made
        # How a read-only store reads the file (its lock, for one this user cannot write).
        self._access = access
        self._reopening = asyncio.Lock()
        self._feed = ChangeFeed(
            head=head,
            read_after=self.read,
            data_version=self._data_version,
            database_file=self._file if watch and not unchanging else None,
        )

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        create: bool = False,
        read_only: bool = False,
        clock: Clock = time.time_ns,
        busy_timeout: float = 5.0,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        watch: bool = True,
    ) -> SqliteEventStore:
        """Open the workspace at ``path``; with ``create``, make it if missing or empty.

        ``read_only`` opens it for reading only, and writes nothing to it: no schema upgrade,
        no switch to WAL mode (SQLite may leave its ``-wal`` and ``-shm`` files beside it).
        Commands and checkpoints then raise :class:`~engine.store.errors.ReadOnlyWorkspace`.

        ``busy_timeout`` is how long, in seconds, to wait for another process's write lock
        before raising :class:`~engine.store.errors.WorkspaceLocked`. ``synchronous="NORMAL"``
        survives any process crash; ``"FULL"`` also survives power loss, at an fsync per command.
        ``watch=False`` follows this process's own appends only (no file watcher).

        A bad file raises a :class:`~engine.store.errors.StoreError` and is left untouched.
        """
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be 'NORMAL' or 'FULL', not {synchronous!r}")
        if create and read_only:
            raise ValueError("a workspace cannot be created read-only")
        path = Path(path)
        where = str(path)
        await asyncio.to_thread(inspect_workspace_file, path, create=create)
        if read_only:
            return await cls._open_read_only(path, clock, busy_timeout, watch)
        if path.exists() and not await asyncio.to_thread(can_write, path):
            raise ReadOnlyWorkspace(
                "this user cannot write the file or its folder: commands cannot run (queries "
                "and `pact-tui open` read it read-only)",
                path=where,
            )
        with made_or_nothing(path) if create else contextlib.nullcontext():
            return await cls._open_writable(path, clock, busy_timeout, synchronous, watch)

    @classmethod
    async def _open_writable(
        cls,
        path: Path,
        clock: Clock,
        busy_timeout: float,
        synchronous: str,
        watch: bool,
    ) -> SqliteEventStore:
        where = str(path)
        connections: list[WriterThread | aiosqlite.Connection] = []
        file = path.resolve()
        try:
            writer = await WriterThread.connect(file, busy_timeout)
            connections.append(writer)
            await writer.run(_set_up_writer, where, synchronous)
            reader = await _connect(str(file), busy_timeout)
            connections.append(reader)
            await reader.execute("PRAGMA query_only = ON")
            head = await _head(reader)
            broken_tail = await _broken_tail(reader, where)
        except BaseException as error:
            for connection in connections:
                await connection.close()
            if isinstance(error, sqlite3.Error):
                raise translate_sqlite_error(error, where) from error
            raise
        return cls(
            path,
            writer,
            reader,
            head=head,
            clock=clock,
            busy_timeout=busy_timeout,
            watch=watch,
            broken_tail=broken_tail,
        )

    @classmethod
    async def _open_read_only(
        cls, path: Path, clock: Clock, busy_timeout: float, watch: bool
    ) -> SqliteEventStore:
        where = str(path)
        file = path.resolve()
        tidy = sidecars_absent(file)  # those SQLite makes now are removed at close
        access = await _read_only_access(file, busy_timeout, where)
        try:
            while True:
                reader = await _connect(access.uri, busy_timeout, uri=True)
                try:
                    rows = await reader.execute_fetchall("PRAGMA user_version")
                    [(version,)] = list(rows)
                    head = await _head(reader)
                except BaseException:
                    await reader.close()
                    raise
                if await asyncio.to_thread(access.still_unchanged):
                    break
                # A writer started: read again, through its files.
                await reader.close()
                newer = await _read_only_access(file, busy_timeout, where)
                access.release()
                access = newer
        except BaseException as error:
            access.release()
            if isinstance(error, sqlite3.Error):
                raise translate_sqlite_error(error, where) from error
            raise
        # The upgrade is a write, which this store does not make: it reads what each
        # version has. Version 1 recorded no event hash with a checkpoint: one is taken as
        # an upgrade would vouch for it then, while its event is in the log.
        if version not in READABLE_SCHEMAS:
            await reader.close()
            access.release()
            raise SchemaTooOld(
                f"written by an older version of pact-tui (schema {version}; this version "
                f"reads {min(READABLE_SCHEMAS)} to {SCHEMA_VERSION}): open it once for "
                "writing to upgrade it",
                path=where,
                found_version=version,
                supported_version=SCHEMA_VERSION,
            )
        return cls(
            path,
            None,
            reader,
            head=head,
            clock=clock,
            busy_timeout=busy_timeout,
            watch=watch,
            unchanging=access.unchanging,
            schema=version,
            tidy_at_close=tidy and access.lock is None,
            access=access,
        )

    @property
    def _writer(self) -> WriterThread:
        """The writer; every writing method checks first (``_check_writable``)."""
        if self._writer_or_none is None:
            raise self._read_only_error()
        return self._writer_or_none

    def _read_only_error(self) -> ReadOnlyWorkspace:
        return ReadOnlyWorkspace(
            "the workspace was opened read-only: nothing can be written to it", path=self._where
        )

    # Commands

    @property
    def cursor(self) -> int:
        return self._cursor

    @cursor.setter
    def cursor(self, seq: int) -> None:
        if seq < 0:
            raise ValueError(f"cursor must be >= 0, not {seq}")
        self._cursor = seq

    async def execute(self, decide: Decide) -> list[StoredEvent]:
        async with self._command() as (head, unseen, caught_up):
            new_events, payloads = encode_events(decide(caught_up), self._where)
            stored = await self._writer.run(
                _insert_and_commit, head, new_events, payloads, self._clock
            )
            head.record(stored)
            self._cursor = max(self._cursor, head.seq)
        # Local subscribers hear about this commit now, not after a file-watch round trip.
        self._feed.publish([*unseen, *stored])
        return stored

    async def execute_streamed(
        self,
        decide: Decide,
        more: Iterator[Sequence[NewEvent]],
        stored: Callable[[Sequence[StoredEvent]], None],
    ) -> int:
        # One write transaction left open across the writer's trips: each batch is linked after
        # the last and inserted, the COMMIT comes after the last batch; any error rolls it back.
        recent: deque[StoredEvent] = deque(maxlen=RECENT_WINDOW)  # for the change feed
        count = 0
        async with self._command() as (head, unseen, caught_up):
            linking = ChainHead(head.seq, head.hash, dict(head.stream_lengths))
            for events in itertools.chain([decide(caught_up)], more):
                new_events, payloads = encode_events(events, self._where)
                batch = await self._writer.run(_insert, linking, new_events, payloads, self._clock)
                linking.record(batch)
                stored(batch)
                recent.extend(batch)
                count += len(batch)
            await self._writer.run(_commit)
            head.seq, head.hash, head.stream_lengths = (
                linking.seq,
                linking.hash,
                linking.stream_lengths,
            )
            self._cursor = max(self._cursor, head.seq)
        # Local subscribers read what is older than the feed's window from the store.
        self._feed.publish([*unseen, *recent] if len(recent) < RECENT_WINDOW else [*recent])
        return count

    @contextlib.asynccontextmanager
    async def _command(
        self,
    ) -> AsyncIterator[tuple[ChainHead, list[StoredEvent], list[StoredEvent]]]:
        """A command's write transaction, under the write lock: yields the chain's head, the
        events other processes appended since this one last looked (``unseen``, for the change
        feed) and those after :attr:`cursor` (``caught_up``, for ``decide``). The body inserts
        and commits; any error rolls the transaction back, a SQLite one as a storage error."""
        self._check_writable()
        async with self._write_lock:
            self._check_open()  # close() may have run while we waited for _write_lock
            cached, cursor = self._chain_head, self._cursor
            try:
                async with self._rolled_back_on_error():
                    # IMMEDIATE: the write lock is taken before reading, so whatever decide()
                    # sees is still the latest state when its events are appended.
                    head, unseen, caught_up = await self._locked(
                        lambda connection: _catch_up(connection, cached, cursor)
                    )
                    self._chain_head = head
                    # Shown to the owner: they count as seen even if decide() then refuses.
                    self._cursor = max(self._cursor, head.seq)
                    yield head, unseen, caught_up
            except sqlite3.Error as error:
                raise self._storage_error(error) from error

    async def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        self._check_writable()
        # Where the events land does not change their payloads: encoded before taking the lock.
        to_append, payloads = encode_events(events, self._where)
        async with self._write_lock:
            self._check_open()
            cached, clock = self._chain_head, self._clock
            try:
                async with self._rolled_back_on_error():
                    head, unseen, stored = await self._locked(
                        lambda connection: _append(connection, cached, to_append, payloads, clock)
                    )
            except sqlite3.Error as error:
                raise self._storage_error(error) from error
            head.record(stored)
            self._chain_head = head
        self._feed.publish([*unseen, *stored])
        return stored

    @contextlib.asynccontextmanager
    async def _rolled_back_on_error(self) -> AsyncIterator[None]:
        """On any error, end the command's transaction before the error goes on.

        Also when the caller is cancelled halfway: the writer finishes the trip it started, and
        the ROLLBACK queued after it waits for that, so a cancelled command is whole or absent
        and leaves the write lock free when it returns.
        """
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                await self._writer.run(_roll_back)
            raise

    def _storage_error(self, error: sqlite3.Error) -> Exception:
        if isinstance(error, sqlite3.IntegrityError):
            self._chain_head = None  # the cache disagreed with the file: re-read it
        return translate_sqlite_error(error, self._where)

    async def _locked(self, step: Callable[[sqlite3.Connection], T]) -> T:
        """Take the write lock with BEGIN IMMEDIATE and run ``step`` in the same trip.

        ``step`` commits, or leaves the transaction open for the caller; if it raises, the
        transaction is rolled back. The caller holds ``_write_lock``.

        The store waits for another process's lock here rather than in SQLite's busy handler:
        that one backs off to 100 ms between attempts, so a process committing back to back
        keeps the others out for its whole burst. Trying again every millisecond or so gives
        each process its turn.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._busy_timeout
        while True:
            try:
                return await self._writer.run(_begin_then, step)
            except _LockBusy as busy:
                if loop.time() >= deadline:
                    raise busy.error from None
            # Jittered, so that two waiting processes do not retry in lockstep.
            await asyncio.sleep(random.uniform(0.0005, 0.002))

    # Queries

    async def read(
        self, after_seq: int = 0, limit: int | None = None, stream: str | None = None
    ) -> list[StoredEvent]:
        self._check_open()
        sql = f"SELECT {CHAIN_COLUMNS} FROM events WHERE seq > ?"
        parameters: list[Any] = [after_seq]
        if stream is not None:
            # In stream_seq order, which is seq order, so SQLite walks the (stream, stream_seq)
            # index instead of sorting.
            sql += " AND stream = ? ORDER BY stream_seq"
            parameters.append(stream)
        else:
            sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            parameters.append(limit)
        return [event_from_row(row) for row in await self._query(sql, parameters)]

    async def read_stream(
        self, stream: str, after_stream_seq: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        self._check_open()
        # A range of the (stream, stream_seq) index: read(after_seq, stream=...) filters on seq
        # while walking the stream's entries from its first.
        sql = f"SELECT {CHAIN_COLUMNS} FROM events WHERE stream = ? AND stream_seq > ?"
        sql += " ORDER BY stream_seq LIMIT ?"
        parameters = (stream, after_stream_seq, -1 if limit is None else limit)
        return [event_from_row(row) for row in await self._query(sql, parameters)]

    async def read_stream_payloads(
        self, stream: str, after_stream_seq: int = 0, limit: int | None = None
    ) -> list[tuple[int, Any]]:
        self._check_open()
        # Three columns of nine: the chain's hashes are a third of a row's bytes.
        sql = "SELECT seq, stream_seq, payload FROM events WHERE stream = ? AND stream_seq > ?"
        sql += " ORDER BY stream_seq LIMIT ?"
        parameters = (stream, after_stream_seq, -1 if limit is None else limit)
        rows = await self._query(sql, parameters)
        return [(stream_seq, payload_of(seq, payload)) for seq, stream_seq, payload in rows]

    async def read_stream_part(
        self,
        stream: str,
        path: tuple[str, ...],
        after_stream_seq: int = 0,
        limit: int | None = None,
    ) -> list[tuple[int, int, str, Any]]:
        self._check_open()
        # SQLite's JSON reads the part out (a large payload's text stays in the reader's
        # thread); a payload it does not read as JSON comes whole, to be read (or refused)
        # as read_stream reads it.
        check_part_path(path)
        where = "$" + "".join(f'."{key}"' for key in path)
        sql = (
            "SELECT seq, stream_seq, type, json_valid(payload),"
            " CASE WHEN json_valid(payload) THEN payload -> ? ELSE payload END"
            " FROM events WHERE stream = ? AND stream_seq > ? ORDER BY stream_seq LIMIT ?"
        )
        parameters = (where, stream, after_stream_seq, -1 if limit is None else limit)
        out = []
        for seq, stream_seq, type_, valid, text in await self._query(sql, parameters):
            if not valid:
                part = part_of(decoded_json(seq, text), path)
            else:
                part = None if text is None else decoded_json(seq, text)
            out.append((seq, stream_seq, type_, part))
        return out

    async def first_at(self, stream: str, time_ns: int) -> int | None:
        self._check_open()
        # The stream's entries of the (stream, stream_seq) index, each row checked for its time.
        [(stream_seq,)] = await self._query(
            "SELECT MIN(stream_seq) FROM events WHERE stream = ? AND time_ns = ?",
            (stream, time_ns),
        )
        return None if stream_seq is None else int(stream_seq)

    async def head(self) -> int:
        self._check_open()
        [(seq,)] = await self._query(HEAD_SQL)
        return int(seq)

    async def stream_names(self, prefix: str) -> list[str]:
        self._check_open()
        if not prefix:
            raise ValueError("a stream prefix cannot be empty")
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # the first string past every match
        # A skip-scan of the (stream, stream_seq) index: one probe per stream, not per event.
        rows = await self._query(
            "WITH RECURSIVE names(name) AS ("
            " SELECT (SELECT MIN(stream) FROM events WHERE stream >= ?1)"
            " UNION ALL"
            " SELECT (SELECT MIN(stream) FROM events WHERE stream > name) FROM names"
            " WHERE name < ?2"
            ") SELECT name FROM names WHERE name IS NOT NULL AND name < ?2",
            (prefix, end),
        )
        return [name for (name,) in rows]

    async def streams(self) -> dict[str, int]:
        self._check_open()
        rows = await self._query(
            "SELECT stream, MAX(stream_seq) FROM events GROUP BY stream ORDER BY stream"
        )
        return {stream: length for stream, length in rows}

    async def stream_heads(self, after_seq: int = 0) -> dict[str, StreamHead]:
        self._check_open()
        # Within a stream seq and stream_seq grow together: both maxima are its last event's.
        if after_seq <= 0:  # every stream: the (stream, stream_seq) index holds all it needs
            rows = await self._query(
                "SELECT stream, MAX(seq), MAX(stream_seq) FROM events GROUP BY stream"
            )
        else:
            # NOT INDEXED: a range of seq (the rowid), not a walk of the whole index, which is
            # what SQLite would otherwise choose.
            rows = await self._query(
                "SELECT stream, MAX(seq), MAX(stream_seq) FROM events NOT INDEXED"
                " WHERE seq > ? GROUP BY stream",
                (after_seq,),
            )
        return {stream: StreamHead(seq, stream_seq) for stream, seq, stream_seq in rows}

    async def _query(self, sql: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """Rows of one statement on the reader connection (one statement: one snapshot)."""
        while True:
            access, reader = self._access, self._reader
            try:
                rows = list(await reader.execute_fetchall(sql, parameters))
            except sqlite3.Error as error:
                raise translate_sqlite_error(error, self._where) from error
            # Two stat() calls, inline: a trip to a worker thread would cost more than they do.
            if access is None or access.still_unchanged():
                return rows
            # A writer started while the file was read as unchanging: the rows may mix pages
            # from before and after its checkpoint. Read again, through its files.
            await self._reopen_reader(access)

    async def _reopen_reader(self, stale: ReadOnlyAccess) -> None:
        async with self._reopening:
            if self._access is not stale:
                return  # another query reopened it meanwhile
            access = await _read_only_access(self._file, self._busy_timeout, self._where)
            try:
                reader = await _connect(access.uri, self._busy_timeout, uri=True)
            except BaseException:
                access.release()
                raise
            old = self._reader
            self._reader, self._access = reader, access
            await old.close()  # after the queries queued on it
            stale.release()

    async def _data_version(self) -> int:
        [(version,)] = await self._query("PRAGMA data_version")
        return int(version)

    # Change feed

    def subscribe(self, after_seq: int) -> Subscription:
        self._check_open()
        if after_seq < 0:
            raise ValueError(f"after_seq must be >= 0, not {after_seq}")
        return self._feed.subscribe(after_seq)

    # Checkpoints

    async def save_checkpoint(
        self, name: str, seq: int, data: bytes, *, replacing: Collection[str] = ()
    ) -> None:
        self._check_writable()  # a cache the chain vouches for: not of a chain that is broken
        # The log only grows, so a seq that exists now still exists when the checkpoint lands.
        head = await self.head()
        if not 0 <= seq <= head:
            raise InvalidCheckpoint(
                f"checkpoint {name!r} at seq {seq}, but the store holds events 1..{head}",
                path=self._where,
                name=name,
                seq=seq,
            )
        generation = secrets.token_hex(8)
        # The rowid of the generation's first piece orders it among the others of its name:
        # SQLite gives a new row the largest rowid yet, plus one.
        first_rowid: int | None = None
        try:
            for chunk, offset in enumerate(range(0, len(data), CHECKPOINT_CHUNK_BYTES)):
                piece = data[offset : offset + CHECKPOINT_CHUNK_BYTES]
                rowid = await self._write(
                    functools.partial(
                        _insert_checkpoint_chunk,
                        name=name,
                        generation=generation,
                        chunk=chunk,
                        data=piece,
                    )
                )
                first_rowid = rowid if first_rowid is None else first_rowid
            saved = _SavedGeneration(
                name,
                seq,
                generation,
                first_rowid,
                pieces=-(-len(data) // CHECKPOINT_CHUNK_BYTES),
                size=len(data),
                digest=hashlib.sha256(data).hexdigest(),
                saved_ns=self._clock(),
                replacing=tuple(other for other in replacing if other != name),
            )
            await self._write(
                lambda connection: _publish_checkpoint(connection, saved, self._where)
            )
        except BaseException as error:
            # Best effort: pieces of a checkpoint that was never published are dead weight.
            async with self._write_lock:
                with contextlib.suppress(sqlite3.Error):
                    await self._writer.run(_delete_generation, name, generation)
            if isinstance(error, sqlite3.Error):
                raise translate_sqlite_error(error, self._where) from error
            raise

    async def _write(self, step: Callable[[sqlite3.Connection], T]) -> T:
        """One write transaction of its own: ``step`` runs after BEGIN IMMEDIATE and commits."""
        async with self._write_lock:
            self._check_open()  # close() may have run while we waited for _write_lock
            return await self._locked(step)

    async def load_checkpoint(self, name: str) -> Checkpoint | None:
        self._check_open()
        # One statement, so one snapshot: a concurrent save cannot swap chunks under us, and
        # the log's end and its event at the checkpoint's place are read as of the same moment.
        rows = await self._query(self._checkpoint_sql(), (name,))
        return checkpoint_from_rows(name, rows, self._where)

    @property
    def reads_blocking(self) -> bool:
        # A store reading the file through its read-only access (its lock, perhaps as an
        # unchanging file) reads only through that connection.
        return self._access is None

    def load_checkpoint_blocking(self, name: str) -> Checkpoint | None:
        self._check_open()
        if not self.reads_blocking:
            return super().load_checkpoint_blocking(name)  # refused, as by any such store
        connection = sqlite3.connect(self._file, timeout=self._busy_timeout)
        try:
            connection.execute("PRAGMA query_only = ON")
            rows = connection.execute(self._checkpoint_sql(), (name,)).fetchall()
        except sqlite3.Error as error:
            raise translate_sqlite_error(error, self._where) from error
        finally:
            connection.close()
        return checkpoint_from_rows(name, rows, self._where)

    def _checkpoint_sql(self) -> str:
        recorded = "c.event_hash" if self._schema >= 2 else "NULL"  # version 1 had none
        return (
            f"SELECT c.seq, c.size, c.sha256, {recorded}, e.hash, ({HEAD_SQL}), k.data"
            " FROM checkpoints AS c"
            " LEFT JOIN events AS e ON e.seq = c.seq"
            " LEFT JOIN checkpoint_chunks AS k ON k.name = c.name AND k.generation = c.generation"
            " WHERE c.name = ? ORDER BY k.chunk"
        )

    async def checkpoints(self) -> dict[str, int]:
        self._check_open()
        rows = await self._query("SELECT name, seq FROM checkpoints ORDER BY name")
        return {name: seq for name, seq in rows}

    async def checkpoint_sizes(self) -> dict[str, int]:
        self._check_open()
        rows = await self._query("SELECT name, size FROM checkpoints ORDER BY name")
        return {name: size for name, size in rows}

    async def delete_checkpoint(self, name: str) -> None:
        self._check_writable()
        await self._write(lambda connection: _delete_checkpoint(connection, name))

    # Integrity

    async def verify(self) -> VerifyResult:
        self._check_open()
        try:
            return await asyncio.to_thread(verify_file, self._file)
        except sqlite3.Error as error:
            raise translate_sqlite_error(error, self._where) from error

    async def backup(
        self, destination: str | os.PathLike[str], *, replace: bool = False
    ) -> BackupResult:
        """Copy the workspace, as of one moment, to a new file at ``destination`` with SQLite's
        online backup, while others write (see :mod:`engine.store.backup`); its chain is
        verified. An existing destination raises ``DestinationExists`` unless ``replace``."""
        self._check_open()
        return await asyncio.to_thread(backup_file, self._file, Path(destination), replace=replace)

    # Lifecycle

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._feed.close()
        if self._writer_or_none is not None:
            async with self._write_lock:  # let a command in flight finish
                await self._writer_or_none.close()
        await self._reader.close()
        if self._access is not None:
            self._access.release()
        if self._tidy_at_close:
            await asyncio.to_thread(tidy_after_reading, self._file)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosed("the store is closed", path=self._where)

    def _check_writable(self) -> None:
        self._check_open()
        if self._writer_or_none is None:
            raise self._read_only_error()
        if self._broken_tail is not None:
            raise self._broken_tail


def verify_file(path: Path) -> VerifyResult:
    """Walk the chain of the workspace at ``path`` with a read-only connection (blocking)."""

    def walk(connection: sqlite3.Connection) -> VerifyResult:
        # One SELECT is one read snapshot; the cursor yields rows as SQLite steps.
        rows: Iterable[ChainRow] = connection.execute(
            f"SELECT {CHAIN_COLUMNS} FROM events ORDER BY seq"
        )
        return verify_rows(rows)

    return read_as_of_one_moment(path, walk)


# The reader (aiosqlite)


HEAD_SQL = "SELECT COALESCE(MAX(seq), 0) FROM events"


async def _read_only_access(file: Path, busy_timeout: float, where: str) -> ReadOnlyAccess:
    try:
        return await asyncio.to_thread(read_only_access, file, wait=busy_timeout)
    except sqlite3.Error as error:
        raise translate_sqlite_error(error, where) from error


async def _connect(
    database: str, busy_timeout: float, *, uri: bool = False
) -> aiosqlite.Connection:
    # isolation_level=None: no implicit BEGINs.
    # timeout= is SQLite's busy timeout: how long to wait for another connection's lock.
    return await aiosqlite.connect(database, isolation_level=None, timeout=busy_timeout, uri=uri)


async def _head(connection: aiosqlite.Connection) -> int:
    rows = await connection.execute_fetchall(HEAD_SQL)
    return int(next(iter(rows))[0])


async def _broken_tail(connection: aiosqlite.Connection, where: str) -> BrokenTail | None:
    """The error that refuses writes if the log's last event does not verify: its hash, its
    link to the event before it, its place in its stream. Two reads of an index, whatever the
    length of the log."""
    rows = list(
        await connection.execute_fetchall(
            f"SELECT {CHAIN_COLUMNS} FROM events ORDER BY seq DESC LIMIT 2"
        )
    )
    if not rows:
        return None
    last: ChainRow = tuple(rows[0])
    before: ChainRow | None = tuple(rows[1]) if len(rows) > 1 else None
    [(length,)] = await connection.execute_fetchall(
        "SELECT COALESCE(MAX(stream_seq), 0) FROM events WHERE stream = ? AND seq < ?",
        (last[1], last[0]),
    )
    result = verify_tail(last, before, int(length))
    if result.ok:
        return None
    return BrokenTail(
        f"event {result.broken_seq}, the log's last, does not verify ({result.problem}:"
        f" {result.detail}): the workspace takes no writes, so that the chain is not extended"
        " past a broken link (pact-tui verify names the first broken event)",
        path=where,
        seq=result.broken_seq,
        problem=str(result.problem),
    )


# The writer: everything below runs in the writer's thread (WriterThread.run).


class _LockBusy(Exception):
    """Another connection holds the write lock: BEGIN IMMEDIATE did nothing; try again."""

    def __init__(self, error: sqlite3.OperationalError) -> None:
        super().__init__(str(error))
        self.error = error


def _begin_then(connection: sqlite3.Connection, step: Callable[[sqlite3.Connection], T]) -> T:
    try:
        connection.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        if is_busy(error):
            raise _LockBusy(error) from None
        raise
    try:
        return step(connection)
    except BaseException:
        _roll_back(connection)
        raise


def _roll_back(connection: sqlite3.Connection) -> None:
    # Fails when the error already ended the transaction, or closed the connection.
    with contextlib.suppress(sqlite3.Error):
        connection.execute("ROLLBACK")


def _catch_up(
    connection: sqlite3.Connection, cached: ChainHead | None, cursor: int
) -> tuple[ChainHead, list[StoredEvent], list[StoredEvent]]:
    """The chain head, the events it moved past, and the events after ``cursor`` (for decide)."""
    head, unseen = _current_chain_head(connection, cached)
    if cursor >= head.seq:
        return head, unseen, []
    if unseen and unseen[0].seq <= cursor + 1:
        return head, unseen, [event for event in unseen if event.seq > cursor]
    # The owner is further behind (it used append(), or moved its cursor back).
    return head, unseen, _select_events(connection, cursor)


def _append(
    connection: sqlite3.Connection,
    cached: ChainHead | None,
    events: Sequence[NewEvent],
    payloads: Sequence[str],
    clock: Clock,
) -> tuple[ChainHead, list[StoredEvent], list[StoredEvent]]:
    """The chain head, the events it moved past, and ``events`` as appended and committed."""
    head, unseen = _current_chain_head(connection, cached)
    return head, unseen, _insert_and_commit(connection, head, events, payloads, clock)


def _current_chain_head(
    connection: sqlite3.Connection, cached: ChainHead | None
) -> tuple[ChainHead, list[StoredEvent]]:
    """The chain head as of now (inside the write transaction), and the events it moved past.

    The cached head and stream lengths stay exact by reading every event appended after them.
    After a long quiet spell that may be many events, so past a limit it is cheaper to read the
    head afresh and look stream lengths up again as commands need them.
    """
    if cached is not None:
        unseen = _select_events(connection, cached.seq, limit=CACHED_HEAD_CATCH_UP_LIMIT + 1)
        if len(unseen) <= CACHED_HEAD_CATCH_UP_LIMIT:
            cached.record(unseen)
            return cached, unseen
    row = connection.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    if row is None:
        return ChainHead(), []
    return ChainHead(seq=int(row[0]), hash=str(row[1])), []


def _insert_and_commit(
    connection: sqlite3.Connection,
    head: ChainHead,
    events: Sequence[NewEvent],
    payloads: Sequence[str],
    clock: Clock,
) -> list[StoredEvent]:
    """Link ``events`` after ``head`` (left unchanged), insert them and commit."""
    stored = _insert(connection, head, events, payloads, clock)
    connection.execute("COMMIT")
    return stored


def _insert(
    connection: sqlite3.Connection,
    head: ChainHead,
    events: Sequence[NewEvent],
    payloads: Sequence[str],
    clock: Clock,
) -> list[StoredEvent]:
    """Link ``events`` after ``head`` (left unchanged) and insert them, in the open transaction."""
    stored: list[StoredEvent] = []
    if events:
        unknown = set(map(_stream_of, events)) - head.stream_lengths.keys()
        if unknown:
            head.stream_lengths.update(_stream_lengths(connection, unknown))
        stored, rows = head.link(events, payloads, clock())
        connection.executemany(_INSERT_EVENT, rows)
    return stored


def _commit(connection: sqlite3.Connection) -> None:
    connection.execute("COMMIT")


def _select_events(
    connection: sqlite3.Connection, after_seq: int, limit: int = -1
) -> list[StoredEvent]:
    rows = connection.execute(
        f"SELECT {CHAIN_COLUMNS} FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
        (after_seq, limit),
    )
    return [event_from_row(row) for row in rows]


def _stream_lengths(connection: sqlite3.Connection, streams: set[str]) -> dict[str, int]:
    """The length of each of ``streams``; 0 for a stream with no events yet."""
    names = sorted(streams)
    placeholders = ", ".join("?" * len(names))
    rows = connection.execute(
        "SELECT stream, MAX(stream_seq) FROM events"
        f" WHERE stream IN ({placeholders}) GROUP BY stream",
        names,
    )
    lengths = dict.fromkeys(names, 0)
    lengths.update((stream, length) for stream, length in rows)
    return lengths


def _insert_checkpoint_chunk(
    connection: sqlite3.Connection, name: str, generation: str, chunk: int, data: bytes
) -> int:
    """Insert one piece and commit; returns its rowid."""
    cursor = connection.execute(
        "INSERT INTO checkpoint_chunks (name, generation, chunk, data) VALUES (?, ?, ?, ?)",
        (name, generation, chunk, data),
    )
    connection.execute("COMMIT")
    return int(cursor.lastrowid or 0)


@dataclass(frozen=True, slots=True)
class _SavedGeneration:
    """A checkpoint whose pieces are written, to publish: ``first_rowid`` is its first piece's
    (None when it has none), ``pieces`` how many it has."""

    name: str
    seq: int
    generation: str
    first_rowid: int | None
    pieces: int
    size: int
    digest: str
    saved_ns: int
    replacing: tuple[str, ...] = ()  # checkpoints forgotten as this one is published


def _publish_checkpoint(
    connection: sqlite3.Connection, saved: _SavedGeneration, where: str
) -> None:
    """Point checkpoint ``saved.name`` at the saved generation, unless the stored one is at a
    later event and vouched for by the log; then remove every other generation of that name
    begun before this one: the one replaced, and pieces of saves that never finished (a killed
    process). Generations begun after this one may be saves under way: the next to publish
    removes them. A generation that lost pieces meanwhile (removed by a save of the same name
    that finished first, which also began after it) is not published."""
    name, seq = saved.name, saved.seq
    event = connection.execute("SELECT hash FROM events WHERE seq = ?", (seq,)).fetchone()
    if seq > 0 and event is None:
        raise InvalidCheckpoint(
            f"checkpoint {name!r} at seq {seq}, but the log no longer holds event {seq}",
            path=where,
            name=name,
            seq=seq,
        )
    event_hash = GENESIS_HASH if seq == 0 else str(event[0])
    [(pieces, size)] = connection.execute(
        "SELECT COUNT(*), COALESCE(SUM(LENGTH(data)), 0) FROM checkpoint_chunks"
        " WHERE name = ? AND generation = ?",
        (name, saved.generation),
    )
    complete = (pieces, size) == (saved.pieces, saved.size)
    current = connection.execute(
        f"SELECT c.seq, c.generation, c.event_hash, e.hash, ({HEAD_SQL}) FROM checkpoints AS c"
        " LEFT JOIN events AS e ON e.seq = c.seq WHERE c.name = ?",
        (name,),
    ).fetchone()
    kept = False
    if current is not None:
        current_seq, _, recorded, found, head = current
        # Another process saved a later state meanwhile, one the log vouches for: keep it.
        kept = current_seq > seq and not_vouched(current_seq, recorded, found, head) is None
    if complete and not kept:
        connection.execute(
            "INSERT OR REPLACE INTO checkpoints"
            " (name, seq, generation, size, sha256, saved_ns, event_hash)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (name, seq, saved.generation, saved.size, saved.digest, saved.saved_ns, event_hash),
        )
        published = saved.generation
    else:
        published = current[1] if current is not None else ""
    # Begun before this one: its first piece has a smaller rowid (this one has none if its data
    # is empty: then every generation so far began before it).
    began = saved.first_rowid
    if began is None:
        [(began,)] = connection.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM checkpoint_chunks")
    connection.execute(
        "DELETE FROM checkpoint_chunks WHERE name = ? AND generation != ? AND (generation = ?"
        " OR generation IN (SELECT generation FROM checkpoint_chunks WHERE name = ?"
        " GROUP BY generation HAVING MIN(rowid) < ?))",
        (name, published, saved.generation, name, began),
    )
    for other in saved.replacing:
        connection.execute("DELETE FROM checkpoints WHERE name = ?", (other,))
        connection.execute("DELETE FROM checkpoint_chunks WHERE name = ?", (other,))
    connection.execute("COMMIT")


def _delete_checkpoint(connection: sqlite3.Connection, name: str) -> None:
    # Every generation: a save of this name under way then finds its pieces gone, and does not
    # publish them.
    connection.execute("DELETE FROM checkpoints WHERE name = ?", (name,))
    connection.execute("DELETE FROM checkpoint_chunks WHERE name = ?", (name,))
    connection.execute("COMMIT")


def _delete_generation(connection: sqlite3.Connection, name: str, generation: str) -> None:
    """Remove the pieces of a save that failed (never those of a published checkpoint)."""
    connection.execute(
        "DELETE FROM checkpoint_chunks WHERE name = ? AND generation = ?"
        " AND NOT EXISTS (SELECT 1 FROM checkpoints WHERE name = ? AND generation = ?)",
        (name, generation, name, generation),
    )


def _set_up_writer(connection: sqlite3.Connection, where: str, synchronous: str) -> None:
    # WAL first, outside any transaction (SQLite requires it), then the schema.
    _enable_wal(connection, where)
    connection.execute(f"PRAGMA synchronous = {synchronous}")
    _migrate(connection, where)
    # From here on the store waits for the write lock itself: see SqliteEventStore._locked.
    connection.execute("PRAGMA busy_timeout = 0")


def _enable_wal(connection: sqlite3.Connection, where: str) -> None:
    [mode] = connection.execute("PRAGMA journal_mode = WAL").fetchone()
    if str(mode).lower() != "wal":
        # Without WAL, readers and the writer block each other and the change feed has no log
        # file to watch: better to refuse than to half-work.
        raise StorageFailure(
            f"cannot switch the workspace to WAL mode (journal_mode is {str(mode).lower()!r})",
            path=where,
        )


def _migrate(connection: sqlite3.Connection, where: str) -> None:
    """Bring the schema to SCHEMA_VERSION; a file already there is left untouched."""
    application_id, version, _ = _identity(connection)
    if application_id == APPLICATION_ID and version == SCHEMA_VERSION:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        # Read again under the lock: another process may have migrated meanwhile.
        application_id, version, schema_objects = _identity(connection)
        blank = application_id == 0 and schema_objects == 0
        if application_id != APPLICATION_ID and not blank:
            raise ForeignDatabase(
                f"an SQLite database of another application (application_id {application_id:#x})",
                path=where,
                application_id=application_id,
            )
        if version < 0:  # inspect_workspace_file refused it; changed by hand since?
            raise CorruptDatabase(f"its schema version is {version}", path=where)
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"written by a newer version of pact-tui (schema {version}; this version reads "
                f"up to {SCHEMA_VERSION}): upgrade pact-tui to open it",
                path=where,
                found_version=version,
                supported_version=SCHEMA_VERSION,
            )
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[step]:
                connection.execute(statement)
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        _roll_back(connection)
        raise


def _identity(connection: sqlite3.Connection) -> tuple[int, int, int]:
    """The application_id, the schema version, and how many tables and indexes there are."""
    [application_id] = connection.execute("PRAGMA application_id").fetchone()
    [version] = connection.execute("PRAGMA user_version").fetchone()
    [schema_objects] = connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    return int(application_id), int(version), int(schema_objects)
