"""The event store in a PostgreSQL database, shared by processes on any number of machines.

One database holds one workspace (:mod:`engine.store.postgres_schema`). Each open store holds a
writer connection for commands and checkpoints, a small pool of readers for queries, and, once
something subscribes, a listening connection for the change feed.

Every command is one transaction on the writer that first locks the workspace's row
(``SELECT ... FOR UPDATE``): commands from every process queue on that row in the database, so
the one holding it reads the log's true end, links its events after it and commits before the
next one reads. The global ``seq`` and every ``stream_seq`` are therefore gapless however many
servers write, with no lock held in any one process. A command appends with the same chain
(:mod:`engine.store.chain`) and reads back with the same rules (:mod:`engine.store.rules`) as
the SQLite store; they differ only in how they reach their database.

The change feed hears of other processes' commits through LISTEN/NOTIFY: a command notifies on
commit, and the listener reads what follows the last event it knows. After its connection is
lost, it reconnects and reads everything after that event before it waits again, so nothing
committed while it was away is missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import asyncpg
from asyncpg import Connection, Pool

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
    ForeignDatabase,
    InvalidCheckpoint,
    InvalidEvent,
    ReadOnlyWorkspace,
    SchemaTooNew,
    SchemaTooOld,
    StorageFailure,
    StoreClosed,
    StoreError,
    WorkspaceLocked,
    WorkspaceNotFound,
    WorkspaceUnreadable,
)
from engine.store.feed import ChangeFeed
from engine.store.postgres_schema import (
    CHANNEL,
    FIRST_VERSION,
    LOCK_WORKSPACE,
    MIGRATIONS,
    shown_url,
)
from engine.store.rules import checkpoint_from_rows, event_from_row, not_vouched
from engine.store.schema import APPLICATION_ID, SCHEMA_VERSION

T = TypeVar("T")

CHECKPOINT_CHUNK_BYTES = 1 << 20
CACHED_HEAD_CATCH_UP_LIMIT = 1_000
READERS = 4  # the reader pool's size: queries of one process at once
VERIFY_BATCH = 10_000
# After the listener lost its connection: wait this long before connecting again (doubling up
# to the second figure while the server stays away).
RECONNECT_FIRST_S, RECONNECT_MOST_S = 0.05, 2.0

HEAD_SQL = "SELECT COALESCE(MAX(seq), 0) FROM events"
_INSERT_EVENT = (
    "INSERT INTO events (seq, stream, stream_seq, type, time_ns, actor, payload, prev_hash, hash)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
)


class PostgresEventStore(EventStore):
    """Open with ``await PostgresEventStore.open(url)``; close with ``await store.close()``."""

    def __init__(
        self,
        url: str,
        writer: Connection | None,
        readers: Pool,
        *,
        head: int,
        clock: Clock,
        busy_timeout: float,
        watch: bool,
        broken_tail: BrokenTail | None,
        schema: int,
    ) -> None:
        self.url = url
        self.path = shown_url(url)  # what errors and people see: no password
        self._where = self.path
        self._writer_or_none = writer
        self._readers = readers
        self.read_only = writer is None
        self._clock = clock
        self._busy_timeout = busy_timeout
        self._cursor = head
        self._chain_head: ChainHead | None = None
        self._write_lock = asyncio.Lock()  # one transaction at a time on the writer connection
        self._closed = False
        self._broken_tail = broken_tail
        self._schema = schema
        self._feed = ChangeFeed(
            head=head,
            read_after=self.read,
            data_version=None,
            database_file=None,
            watch=self._listen if watch else None,
        )

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        create: bool = False,
        read_only: bool = False,
        clock: Clock = time.time_ns,
        busy_timeout: float = 5.0,
        watch: bool = True,
    ) -> PostgresEventStore:
        """Open the workspace in the database ``url`` names; with ``create``, make its tables
        if the database has none.

        ``read_only`` writes nothing (every connection is a read-only session): commands and
        checkpoints raise :class:`~engine.store.errors.ReadOnlyWorkspace`. ``busy_timeout`` is
        how long, in seconds, a command waits for the workspace's row before raising
        :class:`~engine.store.errors.WorkspaceLocked`. ``watch=False`` follows this process's
        own commits only (no listening connection).

        A database that is not a workspace raises a :class:`~engine.store.errors.StoreError`
        and is left untouched.
        """
        if create and read_only:
            raise ValueError("a workspace cannot be created read-only")
        where = shown_url(url)
        settings = {"application_name": "pact-tui"}
        if read_only:
            settings["default_transaction_read_only"] = "on"
        writer: Connection | None = None
        readers: Pool | None = None
        try:
            if not read_only:
                writer = await _connect(url, settings, busy_timeout)
                schema = await _migrate(writer, where, create=create)
            readers = await asyncpg.create_pool(
                url,
                min_size=1,
                max_size=READERS,
                server_settings=settings,
                timeout=busy_timeout,
            )
            async with readers.acquire() as reader:
                if read_only:
                    schema = await _readable_version(reader, where)
                head = int(await reader.fetchval(HEAD_SQL))
                broken_tail = await _broken_tail(reader, where)
        except BaseException as error:
            if writer is not None:
                await writer.close()
            if readers is not None:
                await readers.close()
            if isinstance(error, (asyncpg.PostgresError, OSError, asyncpg.InterfaceError)):
                raise translate_postgres_error(error, where) from error
            raise
        return cls(
            url,
            writer,
            readers,
            head=head,
            clock=clock,
            busy_timeout=busy_timeout,
            watch=watch,
            broken_tail=broken_tail,
            schema=schema,
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
        self._check_writable()

        async def command(connection: Connection) -> tuple[ChainHead, list[StoredEvent], Any]:
            await connection.execute(LOCK_WORKSPACE)
            cursor = self._cursor
            head, unseen = await _current_chain_head(connection, self._chain_head)
            self._chain_head = head
            # Shown to the owner: they count as seen even if decide() then refuses.
            self._cursor = max(self._cursor, head.seq)
            if cursor >= head.seq:
                caught_up: list[StoredEvent] = []
            elif unseen and unseen[0].seq <= cursor + 1:
                caught_up = [event for event in unseen if event.seq > cursor]
            else:  # the owner is further behind (it used append(), or moved its cursor back)
                caught_up = await _select_events(connection, cursor)
            new_events, payloads = _encode(decide(caught_up), self._where)
            stored = await _insert(connection, head, new_events, payloads, self._clock)
            return head, unseen, stored

        head, unseen, stored = await self._transaction(command)
        head.record(stored)
        self._cursor = max(self._cursor, head.seq)
        # Local subscribers hear about this commit now, not after a notification's round trip.
        self._feed.publish([*unseen, *stored])
        return list(stored)

    async def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        self._check_writable()
        to_append, payloads = _encode(events, self._where)

        async def command(connection: Connection) -> tuple[ChainHead, list[StoredEvent], Any]:
            await connection.execute(LOCK_WORKSPACE)
            head, unseen = await _current_chain_head(connection, self._chain_head)
            self._chain_head = head
            stored = await _insert(connection, head, to_append, payloads, self._clock)
            return head, unseen, stored

        head, unseen, stored = await self._transaction(command)
        head.record(stored)
        self._feed.publish([*unseen, *stored])
        return list(stored)

    async def _transaction(self, step: Callable[[Connection], Awaitable[T]]) -> T:
        """Run ``step`` in one transaction on the writer; it commits if ``step`` returns.

        A caller cancelled halfway does not stop the transaction: it runs to its commit or its
        rollback before the writer takes the next one, so a cancelled command is whole or
        absent and leaves no lock held. What it did is not recorded here (the cursor stays
        before it): the next command reads it back from the log like any other process's.
        """
        async with self._write_lock:
            self._check_open()  # close() may have run while we waited for _write_lock
            writer = await self._live_writer()
            task = asyncio.ensure_future(self._run_in_transaction(writer, step))
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                await asyncio.wait([task])
                if not task.cancelled():
                    task.exception()  # retrieved: what became of it is in the log
                raise

    async def _run_in_transaction(
        self, writer: Connection, step: Callable[[Connection], Awaitable[T]]
    ) -> T:
        try:
            async with writer.transaction():
                return await step(writer)
        except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError) as error:
            self._chain_head = None  # the cache may disagree with the database: read it again
            raise translate_postgres_error(error, self._where) from error

    async def _live_writer(self) -> Connection:
        """The writer, connected again if the server dropped it (a restart, a failover)."""
        writer = self._writer
        if writer.is_closed():
            settings = {"application_name": "pact-tui"}
            try:
                writer = await _connect(self.url, settings, self._busy_timeout)
            except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError) as error:
                raise translate_postgres_error(error, self._where) from error
            self._writer_or_none = writer
            self._chain_head = None
        return writer

    async def _write(self, step: Callable[[Connection], Awaitable[T]]) -> T:
        """One write transaction of its own (a piece of a checkpoint, its publication)."""
        return await self._transaction(step)

    @property
    def _writer(self) -> Connection:
        if self._writer_or_none is None:
            raise self._read_only_error()
        return self._writer_or_none

    def _read_only_error(self) -> ReadOnlyWorkspace:
        return ReadOnlyWorkspace(
            "the workspace was opened read-only: nothing can be written to it", path=self._where
        )

    # Queries

    async def _query(self, sql: str, *parameters: Any) -> list[Any]:
        self._check_open()
        try:
            return list(await self._readers.fetch(sql, *parameters))
        except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError) as error:
            if self._closed:
                raise StoreClosed("the store is closed", path=self._where) from error
            raise translate_postgres_error(error, self._where) from error

    async def read(
        self, after_seq: int = 0, limit: int | None = None, stream: str | None = None
    ) -> list[StoredEvent]:
        sql = f"SELECT {CHAIN_COLUMNS} FROM events WHERE seq > $1"
        parameters: list[Any] = [after_seq]
        if stream is not None:
            sql += " AND stream = $2 ORDER BY stream_seq"
            parameters.append(stream)
        else:
            sql += " ORDER BY seq"
        if limit is not None:
            sql += f" LIMIT ${len(parameters) + 1}"
            parameters.append(limit)
        return [event_from_row(row) for row in await self._query(sql, *parameters)]

    async def read_stream(
        self, stream: str, after_stream_seq: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        rows = await self._query(
            f"SELECT {CHAIN_COLUMNS} FROM events WHERE stream = $1 AND stream_seq > $2"
            " ORDER BY stream_seq LIMIT $3",
            stream,
            after_stream_seq,
            limit,  # NULL: no limit
        )
        return [event_from_row(row) for row in rows]

    async def first_at(self, stream: str, time_ns: int) -> int | None:
        [(stream_seq,)] = await self._query(
            "SELECT MIN(stream_seq) FROM events WHERE stream = $1 AND time_ns = $2",
            stream,
            time_ns,
        )
        return None if stream_seq is None else int(stream_seq)

    async def head(self) -> int:
        [(seq,)] = await self._query(HEAD_SQL)
        return int(seq)

    async def stream_names(self, prefix: str) -> list[str]:
        self._check_open()
        if not prefix:
            raise ValueError("a stream prefix cannot be empty")
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # the first string past every match
        # A loose scan of the (stream, stream_seq) index: one probe per stream, not per event.
        rows = await self._query(
            "WITH RECURSIVE names(name) AS ("
            " SELECT (SELECT MIN(stream) FROM events WHERE stream >= $1)"
            " UNION ALL"
            " SELECT (SELECT MIN(stream) FROM events WHERE stream > name) FROM names"
            " WHERE name < $2"
            ") SELECT name FROM names WHERE name IS NOT NULL AND name < $2",
            prefix,
            end,
        )
        return [name for (name,) in rows]

    async def streams(self) -> dict[str, int]:
        rows = await self._query(
            "SELECT stream, MAX(stream_seq) FROM events GROUP BY stream ORDER BY stream"
        )
        return {stream: int(length) for stream, length in rows}

    async def stream_heads(self, after_seq: int = 0) -> dict[str, StreamHead]:
        rows = await self._query(
            "SELECT stream, MAX(seq), MAX(stream_seq) FROM events WHERE seq > $1 GROUP BY stream",
            after_seq,
        )
        return {stream: StreamHead(int(seq), int(n)) for stream, seq, n in rows}

    # Change feed

    def subscribe(self, after_seq: int) -> Subscription:
        self._check_open()
        if after_seq < 0:
            raise ValueError(f"after_seq must be >= 0, not {after_seq}")
        return self._feed.subscribe(after_seq)

    async def _listen(self, check: Callable[[], Awaitable[None]], stop: asyncio.Event) -> None:
        """Hear of commits until ``stop``: LISTEN on a connection of its own, and read what
        follows the last known event at each notification, and after every (re)connection."""
        pause = RECONNECT_FIRST_S
        while not stop.is_set():
            heard = asyncio.Event()
            lost = asyncio.Event()
            try:
                listener = await _connect(self.url, {"application_name": "pact-tui feed"}, 10.0)
            except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError, TimeoutError):
                await _wait_any(stop, timeout=pause)
                pause = min(pause * 2, RECONNECT_MOST_S)
                continue
            try:
                listener.add_termination_listener(lambda _connection, lost=lost: lost.set())
                await listener.add_listener(
                    CHANNEL, lambda *_notification, heard=heard: heard.set()
                )
                pause = RECONNECT_FIRST_S
                # What was committed while nobody listened (or before we began): read it now.
                await check()
                while not (stop.is_set() or lost.is_set()):
                    await _wait_any(stop, lost, heard)
                    if heard.is_set():
                        heard.clear()
                        await check()
            except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError, StorageFailure):
                # The connection, or the server, went away under a read: connect again.
                await _wait_any(stop, timeout=pause)
            finally:
                with contextlib.suppress(Exception):
                    await listener.close(timeout=1)

    # Checkpoints

    async def save_checkpoint(
        self, name: str, seq: int, data: bytes, *, replacing: Collection[str] = ()
    ) -> None:
        self._check_writable()
        head = await self.head()
        if not 0 <= seq <= head:
            raise InvalidCheckpoint(
                f"checkpoint {name!r} at seq {seq}, but the store holds events 1..{head}",
                path=self._where,
                name=name,
                seq=seq,
            )
        generation = secrets.token_hex(8)
        first_id: int | None = None
        try:
            for chunk, offset in enumerate(range(0, len(data), CHECKPOINT_CHUNK_BYTES)):
                piece = data[offset : offset + CHECKPOINT_CHUNK_BYTES]
                piece_id = await self._write(_chunk_writer(name, generation, chunk, piece))
                first_id = piece_id if first_id is None else first_id
            saved = _SavedGeneration(
                name,
                seq,
                generation,
                first_id,
                pieces=-(-len(data) // CHECKPOINT_CHUNK_BYTES),
                size=len(data),
                digest=hashlib.sha256(data).hexdigest(),
                saved_ns=self._clock(),
                replacing=tuple(other for other in replacing if other != name),
            )
            await self._write(
                lambda connection: _publish_checkpoint(connection, saved, self._where)
            )
        except BaseException:
            # Best effort: pieces of a checkpoint that was never published are dead weight.
            with contextlib.suppress(StoreError):
                await self._write(
                    lambda connection: _delete_generation(connection, name, generation)
                )
            raise

    async def load_checkpoint(self, name: str) -> Checkpoint | None:
        # One statement, so one snapshot: the checkpoint, its pieces, the log's end and its
        # event at the checkpoint's place, all as of the same moment.
        rows = await self._query(
            f"SELECT c.seq, c.size, c.sha256, c.event_hash, e.hash, ({HEAD_SQL}), k.data"
            " FROM checkpoints AS c"
            " LEFT JOIN events AS e ON e.seq = c.seq"
            " LEFT JOIN checkpoint_chunks AS k ON k.name = c.name AND k.generation = c.generation"
            " WHERE c.name = $1 ORDER BY k.chunk",
            name,
        )
        return checkpoint_from_rows(name, rows, self._where)

    async def checkpoints(self) -> dict[str, int]:
        rows = await self._query("SELECT name, seq FROM checkpoints ORDER BY name")
        return {name: int(seq) for name, seq in rows}

    async def checkpoint_sizes(self) -> dict[str, int]:
        rows = await self._query("SELECT name, size FROM checkpoints ORDER BY name")
        return {name: int(size) for name, size in rows}

    async def delete_checkpoint(self, name: str) -> None:
        self._check_writable()

        async def delete(connection: Connection) -> None:
            await connection.execute("DELETE FROM checkpoints WHERE name = $1", name)
            await connection.execute("DELETE FROM checkpoint_chunks WHERE name = $1", name)

        await self._write(delete)

    # Integrity

    async def verify(self) -> VerifyResult:
        """Walk the chain as of one moment (one repeatable-read transaction), in batches from
        a server-side cursor; the hashing runs in a worker thread."""
        self._check_open()
        try:
            async with (
                self._readers.acquire() as reader,
                reader.transaction(isolation="repeatable_read", readonly=True),
            ):
                rows = await reader.cursor(f"SELECT {CHAIN_COLUMNS} FROM events ORDER BY seq")
                after, checked = ChainHead(), 0
                while batch := await rows.fetch(VERIFY_BATCH):
                    result = await asyncio.to_thread(verify_rows, batch, after=after)
                    if not result.ok:
                        return VerifyResult(
                            checked + result.checked,
                            result.broken_seq,
                            result.problem,
                            result.detail,
                        )
                    checked += result.checked
                    last = batch[-1]
                    after.seq, after.hash = int(last[0]), str(last[8])
                    after.stream_lengths.update((row[1], row[2]) for row in batch)
                return VerifyResult(checked)
        except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError) as error:
            raise translate_postgres_error(error, self._where) from error

    # Lifecycle

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._feed.close()
        if self._writer_or_none is not None:
            async with self._write_lock:  # let a command in flight finish
                await self._writer_or_none.close()
        await self._readers.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosed("the store is closed", path=self._where)

    def _check_writable(self) -> None:
        self._check_open()
        if self._writer_or_none is None:
            raise self._read_only_error()
        if self._broken_tail is not None:
            raise self._broken_tail


def translate_postgres_error(error: BaseException, where: str) -> StoreError:
    """The typed store error for what the server (or the way to it) reported about ``where``."""
    if isinstance(error, StoreError):
        return error
    message = str(error).strip() or type(error).__name__
    if isinstance(error, asyncpg.InvalidCatalogNameError):
        return WorkspaceNotFound(f"no such database ({message})", path=where)
    if isinstance(
        error,
        (
            asyncpg.InvalidAuthorizationSpecificationError,
            asyncpg.InvalidPasswordError,
            asyncpg.InsufficientPrivilegeError,
        ),
    ):
        return WorkspaceUnreadable(f"the server refused this user ({message})", path=where)
    if isinstance(error, asyncpg.LockNotAvailableError):
        return WorkspaceLocked(
            f"another process held the workspace's lock too long ({message})", path=where
        )
    if isinstance(error, asyncpg.ReadOnlySQLTransactionError):
        return ReadOnlyWorkspace(f"the session is read-only ({message})", path=where)
    if isinstance(error, (OSError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError)):
        return StorageFailure(f"cannot reach the database server ({message})", path=where)
    sqlstate = getattr(error, "sqlstate", "") or ""
    return StorageFailure(message, path=where, sqlstate=sqlstate)


async def _connect(url: str, settings: dict[str, str], busy_timeout: float) -> Connection:
    server_settings = {**settings, "lock_timeout": f"{max(1, int(busy_timeout * 1000))}ms"}
    connection: Connection = await asyncpg.connect(
        url, server_settings=server_settings, timeout=max(busy_timeout, 10.0)
    )
    return connection


async def _wait_any(*events: asyncio.Event, timeout: float | None = None) -> None:
    waits = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
        await asyncio.gather(*waits, return_exceptions=True)


# Opening: the workspace's identity and schema


async def _identity(connection: Connection) -> tuple[int, int] | None:
    """The workspace's application id and schema version; None for a database with no tables
    in its schema; ForeignDatabase's details for one with other tables."""
    if await connection.fetchval("SELECT to_regclass('pact_workspace')") is None:
        tables = await connection.fetchval(
            "SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema()"
        )
        if tables:
            return (0, 0)
        return None
    row = await connection.fetchrow(
        "SELECT application_id, schema_version FROM pact_workspace WHERE id = 1"
    )
    if row is None:
        return (0, 0)
    return int(row[0]), int(row[1])


def _checked_identity(identity: tuple[int, int], where: str) -> int:
    application_id, version = identity
    if application_id != APPLICATION_ID:
        raise ForeignDatabase(
            "a PostgreSQL database of another application (it has tables, but no pact-tui "
            "workspace row)",
            path=where,
            application_id=application_id,
        )
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"written by a newer version of pact-tui (schema {version}; this version reads "
            f"up to {SCHEMA_VERSION}): upgrade pact-tui to open it",
            path=where,
            found_version=version,
            supported_version=SCHEMA_VERSION,
        )
    return version


async def _migrate(connection: Connection, where: str, *, create: bool) -> int:
    """Bring the tables to SCHEMA_VERSION (with ``create``, make them in an empty database)."""
    identity = await _identity(connection)
    if identity is not None and _checked_identity(identity, where) == SCHEMA_VERSION:
        return SCHEMA_VERSION
    if identity is None and not create:
        raise WorkspaceNotFound(
            "the database holds no workspace (create one with `pact-tui init URL`)", path=where
        )
    async with connection.transaction():
        # One migration at a time, whichever process starts it; read again under the lock.
        await connection.execute("SELECT pg_advisory_xact_lock($1)", APPLICATION_ID)
        identity = await _identity(connection)
        version = FIRST_VERSION - 1 if identity is None else _checked_identity(identity, where)
        for step in range(max(version + 1, FIRST_VERSION), SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[step]:
                await connection.execute(statement)
        await connection.execute("UPDATE pact_workspace SET schema_version = $1", SCHEMA_VERSION)
    return SCHEMA_VERSION


async def _readable_version(connection: Connection, where: str) -> int:
    identity = await _identity(connection)
    if identity is None:
        raise WorkspaceNotFound("the database holds no workspace", path=where)
    version = _checked_identity(identity, where)
    if version < FIRST_VERSION:
        raise SchemaTooOld(
            f"its tables are unfinished (schema {version}): open it once for writing",
            path=where,
            found_version=version,
            supported_version=SCHEMA_VERSION,
        )
    return version


async def _broken_tail(connection: Connection, where: str) -> BrokenTail | None:
    """The error that refuses writes if the log's last event does not verify (two index
    reads, whatever the length of the log)."""
    rows = await connection.fetch(f"SELECT {CHAIN_COLUMNS} FROM events ORDER BY seq DESC LIMIT 2")
    if not rows:
        return None
    last: ChainRow = tuple(rows[0])
    before: ChainRow | None = tuple(rows[1]) if len(rows) > 1 else None
    length = await connection.fetchval(
        "SELECT COALESCE(MAX(stream_seq), 0) FROM events WHERE stream = $1 AND seq < $2",
        last[1],
        last[0],
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


# Commands: each runs in the writer's transaction, after LOCK_WORKSPACE


def _encode(events: Sequence[object], where: str) -> tuple[list[NewEvent], list[str]]:
    """:func:`~engine.store.chain.encode_events`, and what PostgreSQL's text cannot hold: a
    NUL character, or half of a surrogate pair, in a stream, a type or an actor (a payload's
    canonical JSON escapes both)."""
    checked, payloads = encode_events(events, where)
    for index, event in enumerate(checked):
        for field in ("stream", "type", "actor"):
            value: str = getattr(event, field)
            if "\x00" in value or (not value.isascii() and not _encodable(value)):
                raise InvalidEvent(
                    f"event {index}: its {field} holds a NUL character or half of a surrogate"
                    " pair, which PostgreSQL cannot store",
                    path=where,
                    index=index,
                )
    return checked, payloads


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


async def _current_chain_head(
    connection: Connection, cached: ChainHead | None
) -> tuple[ChainHead, list[StoredEvent]]:
    """The chain head as of now (the workspace's row locked), and the events it moved past."""
    if cached is not None:
        unseen = await _select_events(connection, cached.seq, CACHED_HEAD_CATCH_UP_LIMIT + 1)
        if len(unseen) <= CACHED_HEAD_CATCH_UP_LIMIT:
            cached.record(unseen)
            return cached, unseen
    row = await connection.fetchrow("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1")
    if row is None:
        return ChainHead(), []
    return ChainHead(seq=int(row[0]), hash=str(row[1])), []


async def _select_events(
    connection: Connection, after_seq: int, limit: int | None = None
) -> list[StoredEvent]:
    rows = await connection.fetch(
        f"SELECT {CHAIN_COLUMNS} FROM events WHERE seq > $1 ORDER BY seq LIMIT $2",
        after_seq,
        limit,
    )
    return [event_from_row(row) for row in rows]


async def _insert(
    connection: Connection,
    head: ChainHead,
    events: Sequence[NewEvent],
    payloads: Sequence[str],
    clock: Clock,
) -> list[StoredEvent]:
    """Link ``events`` after ``head`` (left unchanged), insert them, and notify listeners (at
    commit)."""
    if not events:
        return []
    unknown = {event.stream for event in events} - head.stream_lengths.keys()
    if unknown:
        head.stream_lengths.update(await _stream_lengths(connection, unknown))
    stored, rows = head.link(events, payloads, clock())
    await connection.executemany(_INSERT_EVENT, rows)
    await connection.execute("SELECT pg_notify($1, $2)", CHANNEL, str(stored[-1].seq))
    return stored


async def _stream_lengths(connection: Connection, streams: set[str]) -> dict[str, int]:
    names = sorted(streams)
    rows = await connection.fetch(
        "SELECT stream, MAX(stream_seq) FROM events WHERE stream = ANY($1::text[]) GROUP BY stream",
        names,
    )
    lengths = dict.fromkeys(names, 0)
    lengths.update((stream, int(length)) for stream, length in rows)
    return lengths


# Checkpoints


def _chunk_writer(
    name: str, generation: str, chunk: int, data: bytes
) -> Callable[[Connection], Awaitable[int]]:
    async def write(connection: Connection) -> int:
        piece_id = await connection.fetchval(
            "INSERT INTO checkpoint_chunks (name, generation, chunk, data)"
            " VALUES ($1, $2, $3, $4) RETURNING id",
            name,
            generation,
            chunk,
            data,
        )
        return int(piece_id)

    return write


@dataclass(frozen=True, slots=True)
class _SavedGeneration:
    """A checkpoint whose pieces are written, to publish (see the SQLite store's twin)."""

    name: str
    seq: int
    generation: str
    first_id: int | None
    pieces: int
    size: int
    digest: str
    saved_ns: int
    replacing: tuple[str, ...] = ()  # checkpoints forgotten as this one is published


async def _publish_checkpoint(connection: Connection, saved: _SavedGeneration, where: str) -> None:
    """Point checkpoint ``saved.name`` at the saved generation, unless the stored one is at a
    later event the log vouches for; then remove the generations of that name begun before
    this one (as the SQLite store does, with the pieces' ids for its rowids)."""
    await connection.execute(LOCK_WORKSPACE)  # publications of one name, one at a time
    name, seq = saved.name, saved.seq
    event = await connection.fetchval("SELECT hash FROM events WHERE seq = $1", seq)
    if seq > 0 and event is None:
        raise InvalidCheckpoint(
            f"checkpoint {name!r} at seq {seq}, but the log no longer holds event {seq}",
            path=where,
            name=name,
            seq=seq,
        )
    event_hash = GENESIS_HASH if seq == 0 else str(event)
    pieces, size = await connection.fetchrow(
        "SELECT COUNT(*), COALESCE(SUM(LENGTH(data)), 0) FROM checkpoint_chunks"
        " WHERE name = $1 AND generation = $2",
        name,
        saved.generation,
    )
    complete = (int(pieces), int(size)) == (saved.pieces, saved.size)
    current = await connection.fetchrow(
        f"SELECT c.seq, c.generation, c.event_hash, e.hash, ({HEAD_SQL}) FROM checkpoints AS c"
        " LEFT JOIN events AS e ON e.seq = c.seq WHERE c.name = $1",
        name,
    )
    kept = False
    if current is not None:
        current_seq, _, recorded, found, head = current
        kept = current_seq > seq and not_vouched(current_seq, recorded, found, head) is None
    if complete and not kept:
        await connection.execute(
            "INSERT INTO checkpoints (name, seq, generation, size, sha256, saved_ns, event_hash)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (name) DO UPDATE SET"
            " seq = EXCLUDED.seq, generation = EXCLUDED.generation, size = EXCLUDED.size,"
            " sha256 = EXCLUDED.sha256, saved_ns = EXCLUDED.saved_ns,"
            " event_hash = EXCLUDED.event_hash",
            name,
            seq,
            saved.generation,
            saved.size,
            saved.digest,
            saved.saved_ns,
            event_hash,
        )
        published = saved.generation
    else:
        published = current[1] if current is not None else ""
    began = saved.first_id
    if began is None:
        began = int(
            await connection.fetchval("SELECT COALESCE(MAX(id), 0) + 1 FROM checkpoint_chunks")
        )
    await connection.execute(
        "DELETE FROM checkpoint_chunks WHERE name = $1 AND generation != $2 AND (generation = $3"
        " OR generation IN (SELECT generation FROM checkpoint_chunks WHERE name = $1"
        " GROUP BY generation HAVING MIN(id) < $4))",
        name,
        published,
        saved.generation,
        began,
    )
    for other in saved.replacing:
        await connection.execute("DELETE FROM checkpoints WHERE name = $1", other)
        await connection.execute("DELETE FROM checkpoint_chunks WHERE name = $1", other)


async def _delete_generation(connection: Connection, name: str, generation: str) -> None:
    """Remove the pieces of a save that failed (never those of a published checkpoint)."""
    await connection.execute(
        "DELETE FROM checkpoint_chunks WHERE name = $1 AND generation = $2"
        " AND NOT EXISTS (SELECT 1 FROM checkpoints WHERE name = $1 AND generation = $2)",
        name,
        generation,
    )
