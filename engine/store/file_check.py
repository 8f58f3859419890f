"""Decide whether a file may be opened as a workspace, without writing to it.

Runs before any read-write connection exists, because SQLite itself writes to a file the moment
it opens it read-write (switching to WAL mode, recovering a journal). First the 100-byte header is
read with plain file I/O: that rejects text files, truncated files, foreign SQLite files and
newer schemas. Then a read-only connection confirms the same from SQLite's point of view, which
also sees changes still in the write-ahead log that the header does not show yet.

Synchronous: the store runs it in a worker thread.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from engine.store.errors import (
    CorruptDatabase,
    EmptyWorkspaceFile,
    ForeignDatabase,
    NotADatabase,
    SchemaTooNew,
    SeveralLinks,
    TruncatedDatabase,
    WorkspaceNotFound,
    WorkspaceUnreadable,
)
from engine.store.schema import APPLICATION_ID, SCHEMA_VERSION
from engine.store.sqlite_errors import translate_sqlite_error

SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_SIZE = 100


@dataclass(frozen=True, slots=True)
class SqliteHeader:
    page_size: int
    page_count: int | None  # None when the header's size field is stale (old writers)
    user_version: int
    application_id: int

    @classmethod
    def parse(cls, data: bytes) -> SqliteHeader:
        (raw_page_size,) = struct.unpack_from(">H", data, 16)
        change_counter, page_count = struct.unpack_from(">II", data, 24)
        (user_version,) = struct.unpack_from(">i", data, 60)
        (application_id,) = struct.unpack_from(">i", data, 68)
        (valid_for,) = struct.unpack_from(">I", data, 92)
        return cls(
            page_size=65536 if raw_page_size == 1 else raw_page_size,
            page_count=page_count if valid_for == change_counter and page_count else None,
            user_version=user_version,
            application_id=application_id,
        )


def inspect_workspace_file(path: Path, *, create: bool) -> None:
    """Raise the :class:`StoreError` that describes why ``path`` is not a usable workspace
    (returning means: one of ours, or missing, empty or blank with ``create``)."""
    where = str(path)
    try:
        status = path.stat()
    except FileNotFoundError:
        if create:
            return
        raise WorkspaceNotFound(
            "no workspace at this path (pact-tui ctx create PATH NAME makes one)",
            path=where,
        ) from None
    except PermissionError:
        raise WorkspaceUnreadable(
            "permission denied: a folder on the path may not be searched by this user",
            path=where,
        ) from None
    except OSError as error:
        # Symbolic links in a loop (ELOOP), a file where the path needs a folder (ENOTDIR), a
        # name too long: no file can be there, nor be made there.
        raise WorkspaceNotFound(
            f"the path leads to no file: {error.strerror or error}", path=where
        ) from None
    if not path.is_file():
        raise NotADatabase("not a regular file", path=where)
    if status.st_nlink > 1:
        raise SeveralLinks(
            f"the file has {status.st_nlink} hard links. SQLite keeps a workspace's "
            "write-ahead log beside the name it was opened by, so processes opening it by "
            "different names would each keep their own and lose each other's commits. Open "
            "it by one name only: remove the other links, or copy the file",
            path=where,
            links=status.st_nlink,
        )
    if status.st_size == 0:
        if create:
            return
        raise EmptyWorkspaceFile(
            "the file is empty, not a workspace (pact-tui ctx create PATH NAME makes one in it)",
            path=where,
        )

    try:
        with path.open("rb") as file:
            header_bytes = file.read(HEADER_SIZE)
    except PermissionError:
        raise WorkspaceUnreadable(
            "permission denied: this user may not read the file", path=where
        ) from None
    if not header_bytes.startswith(SQLITE_MAGIC):
        if SQLITE_MAGIC.startswith(header_bytes):
            raise TruncatedDatabase(
                f"the file ends inside the SQLite header ({len(header_bytes)} bytes)", path=where
            )
        raise NotADatabase(
            "the file does not start with the SQLite header 'SQLite format 3'", path=where
        )
    if len(header_bytes) < HEADER_SIZE:
        raise TruncatedDatabase(
            f"the file ends inside the SQLite header ({len(header_bytes)} bytes)", path=where
        )

    header = SqliteHeader.parse(header_bytes)
    # Committed transactions that are still in the write-ahead log are not reflected in the
    # main file yet: only without them do the file's size and header fields tell the truth.
    header_is_current = _write_ahead_log_size(path) == 0
    if header_is_current:
        expected_size = (header.page_count or 0) * header.page_size
        if status.st_size < expected_size or status.st_size % header.page_size:
            raise TruncatedDatabase(
                f"the file is {status.st_size} bytes but its header describes "
                f"{header.page_count} pages of {header.page_size} bytes",
                path=where,
            )
        # Without an application_id, only the schema table tells a blank file from a foreign
        # one: the read-only probe below decides those.
        if header.application_id != 0:
            _refuse_unless_usable(
                where, create, header.application_id, header.user_version, schema_objects=1
            )
    _probe_read_only(path, create, immutable=header_is_current)


def _write_ahead_log_size(path: Path) -> int:
    try:
        return path.with_name(path.name + "-wal").stat().st_size
    except FileNotFoundError:  # none, or the last connection just removed it
        return 0


def _probe_read_only(path: Path, create: bool, *, immutable: bool) -> None:
    # immutable=1 when the main file is the whole truth: SQLite then creates no -wal or -shm
    # beside a file we may be about to refuse.
    uri = path.absolute().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
    where = str(path)
    try:
        connection = sqlite3.connect(uri, uri=True)
        try:
            (application_id,) = connection.execute("PRAGMA application_id").fetchone()
            (user_version,) = connection.execute("PRAGMA user_version").fetchone()
            # Reading the schema table also makes SQLite parse it: a damaged one fails here.
            schema_objects = len(connection.execute("SELECT name FROM sqlite_master").fetchall())
        finally:
            connection.close()
    except sqlite3.Error as error:
        raise translate_sqlite_error(error, where) from error
    _refuse_unless_usable(where, create, application_id, user_version, schema_objects)


def _refuse_unless_usable(
    where: str,
    create: bool,
    application_id: int,
    user_version: int,
    schema_objects: int,
) -> None:
    """Pass ours and, with ``create``, a blank one (no tables yet); refuse the rest."""
    if application_id == APPLICATION_ID:
        if user_version < 1:
            # pact-tui sets its application_id and schema version in the same transaction
            # that makes its tables: a file with the one and not the other was made otherwise.
            raise CorruptDatabase(
                f"it carries pact-tui's application_id but schema version {user_version} "
                "(PRAGMA user_version), which no version of pact-tui writes",
                path=where,
            )
        if user_version > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"written by a newer version of pact-tui (schema {user_version}; this version "
                f"reads up to {SCHEMA_VERSION}): upgrade pact-tui to open it",
                path=where,
                found_version=user_version,
                supported_version=SCHEMA_VERSION,
            )
        return
    if application_id == 0 and schema_objects == 0:
        if create:
            return
        raise EmptyWorkspaceFile(
            "an SQLite database with nothing in it, not a workspace "
            "(pact-tui ctx create PATH NAME makes one in it)",
            path=where,
        )
    raise ForeignDatabase(
        f"an SQLite database of another application (application_id {application_id:#x}, "
        f"a workspace has {APPLICATION_ID:#x})",
        path=where,
        application_id=application_id,
    )


def can_write(path: Path) -> bool:
    """Whether this process may write the workspace at ``path``: the file, and the folder, where
    SQLite makes its write-ahead log and shared-memory files (unless both are there already and
    writable). What the operating system says, a read-only file system included."""
    path = path.resolve()  # the log is made beside the file a link leads to
    if not os.access(path, os.W_OK):
        return False
    if os.access(path.parent, os.W_OK | os.X_OK):
        return True
    sidecars = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    return all(os.access(sidecar, os.W_OK) for sidecar in sidecars)


# Files SQLite makes beside a database.
SIDECARS = ("-wal", "-shm", "-journal")


@contextlib.contextmanager
def made_or_nothing(path: Path) -> Iterator[None]:
    """Around making a workspace at ``path``: when what runs inside fails, the files it made are
    removed again (and a file that was empty is emptied again), so a failed create leaves
    nothing behind. A file that held anything before is never touched, and neither is one that
    holds events by then: another process made it meanwhile."""
    try:
        file = path.resolve()
    except (OSError, RuntimeError):  # symbolic links in a loop: nothing can be made there
        yield
        return
    names = [file, *(file.with_name(file.name + suffix) for suffix in SIDECARS)]
    existed = {name for name in names if name.exists()}
    was_empty = file in existed and file.is_file() and file.stat().st_size == 0
    try:
        yield
    except BaseException:
        if (file not in existed or was_empty) and not _holds_events(file):
            for name in names:
                if name not in existed and name.is_file():
                    name.unlink(missing_ok=True)
            if was_empty:
                os.truncate(file, 0)
        raise


def _holds_events(file: Path) -> bool:
    if not file.is_file() or file.stat().st_size == 0:
        return False
    try:
        connection = sqlite3.connect(file.as_uri() + "?mode=ro", uri=True)
        try:
            return bool(connection.execute("SELECT EXISTS (SELECT 1 FROM events)").fetchone()[0])
        finally:
            connection.close()
    except sqlite3.Error:
        return False  # no events table, or nothing SQLite can read: nothing anyone made
