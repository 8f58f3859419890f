"""Reading a workspace without writing to it, or beside it (issue 10 §3, issue 23 §5).

A reader of a WAL-mode file needs its ``-wal`` and ``-shm`` files, and SQLite makes them
beside the file when they are not there, even for a connection opened ``mode=ro``. Made by a
user who can write the workspace, they are removed again when that user is done
(:func:`tidy_after_reading`). Made by a user who cannot, they are that user's: the owner can
neither write them nor, in a shared (sticky) folder, delete them, and every command of the
owner's fails until someone does. So a process that cannot write the workspace never lets
SQLite make them:

- it first takes a read lock where SQLite takes its own (:class:`SharedLock`): while it holds
  it, no connection closing deletes the files beside the workspace, so what it sees there
  stays there until it is done;
- with both files there (a writer is open, or one was killed), it reads through them, told not
  to make a ``-shm`` (``readonly_shm=1``), and follows others' commits as any reader does;
- with no ``-wal`` file (or an empty one, and no ``-shm``), the database file holds every
  commit, and no process is writing it (a writer keeps a ``-wal`` open): it is read as an
  unchanging file (``immutable=1``), which makes no file beside it. A writer that starts
  meanwhile makes a ``-wal`` that stays, because of the lock: after each read the reader
  looks again (:meth:`ReadOnlyAccess.still_unchanged`), and if the files beside it changed,
  what it read may mix pages from before and after that writer's checkpoint, so it reads again,
  now through that writer's files;
- a ``-wal`` holding commits without its ``-shm`` is a writer starting (for the moment between
  making the one and the other): it waits, up to the busy timeout, and then refuses.

A folder this user cannot write, with no ``-wal`` there, is read the same way.

Blocking: the store runs these in a worker thread.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from engine.store.errors import StorageFailure, WorkspaceLocked
from engine.store.file_check import can_write
from engine.store.shared_lock import SharedLock

T = TypeVar("T")

# What SQLite reports when a reader of a WAL file cannot make the shared-memory file it needs.
_NO_SHARED_MEMORY = (sqlite3.SQLITE_READONLY_DIRECTORY, sqlite3.SQLITE_READONLY_CANTINIT)
# Between two looks at the files beside a workspace another process is opening or closing.
_RETRY_SECONDS = 0.001

# A file beside the workspace as seen at one moment: (inode, size), or None when absent.
Sidecar = tuple[int, int] | None


@dataclass(slots=True)
class ReadOnlyAccess:
    """How this process reads a workspace file without writing to it or beside it."""

    uri: str
    """The URI to open it by (``mode=ro`` and, when needed, ``immutable`` or ``readonly_shm``)."""
    unchanging: bool
    """Read as a file nobody writes (``immutable=1``): SQLite follows no commits."""
    lock: SharedLock | None = None
    """Held while it is read, by a process that must not let SQLite make files beside it."""
    sidecars: tuple[Sidecar, Sidecar] = (None, None)
    """The ``-wal`` and ``-shm`` files as they were when the lock was taken."""
    file: Path | None = None

    def still_unchanged(self) -> bool:
        """Whether what was read since the file was opened is the file as it was: always, but
        for a file read as unchanging, whose ``-wal`` and ``-shm`` must be as they were (a
        writer that started since made or grew them, and could not remove them)."""
        if not self.unchanging or self.file is None:
            return True
        return _sidecars(self.file) == self.sidecars

    def release(self) -> None:
        """Let go of the lock, once every connection opened by :attr:`uri` is closed."""
        if self.lock is not None:
            self.lock.release()


def read_only_access(file: Path, *, wait: float = 5.0) -> ReadOnlyAccess:
    """How to read ``file`` (resolved) without writing to it or beside it; ``wait`` is how
    long, in seconds, another process opening or closing it may keep it in a state that
    cannot be read so."""
    uri = file.as_uri() + "?mode=ro"
    if not can_write(file):
        return _access_without_writing(file, uri, wait)
    try:
        probe = sqlite3.connect(uri, uri=True)
        try:
            probe.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        finally:
            probe.close()
    except sqlite3.OperationalError as error:
        # The folder (or a read-only file system) keeps SQLite from making the -shm.
        if getattr(error, "sqlite_errorcode", 0) not in _NO_SHARED_MEMORY:
            raise
        return _access_without_writing(file, uri, wait)
    return ReadOnlyAccess(uri, unchanging=False)


def _access_without_writing(file: Path, uri: str, wait: float) -> ReadOnlyAccess:
    deadline = time.monotonic() + wait
    while True:
        try:
            lock = SharedLock.take(file)
        except OSError as error:
            why = error.strerror or str(error)
            raise StorageFailure(f"cannot take a read lock on it: {why}", path=str(file)) from error
        if lock is not None:
            wal, shm = sidecars = _sidecars(file)
            if wal is not None and shm is not None:
                return ReadOnlyAccess(uri + "&readonly_shm=1", False, lock, sidecars, file)
            if wal is None or (wal[1] == 0 and shm is None):
                return ReadOnlyAccess(uri + "&immutable=1", True, lock, sidecars, file)
            lock.release()
        if time.monotonic() >= deadline:
            break
        time.sleep(_RETRY_SECONDS)
    where = str(file)
    if lock is None:
        raise WorkspaceLocked(
            "another process held the workspace's exclusive lock (closing it) for longer than "
            "the busy timeout",
            path=where,
        )
    raise StorageFailure(
        "its write-ahead log (-wal) holds commits but its shared-memory file (-shm) is "
        "missing, and this user cannot write the workspace: reading it would leave a -shm "
        "file that its owner could not use. A command by a user who can write it sets this "
        "right",
        path=where,
    )


def _sidecars(file: Path) -> tuple[Sidecar, Sidecar]:
    return _sidecar(file, "-wal"), _sidecar(file, "-shm")


def _sidecar(file: Path, suffix: str) -> Sidecar:
    try:
        status = file.with_name(file.name + suffix).stat()
    except FileNotFoundError:
        return None
    return status.st_ino, status.st_size


def read_as_of_one_moment(
    file: Path, read: Callable[[sqlite3.Connection], T], *, wait: float = 5.0
) -> T:
    """What ``read`` returns from a read-only connection to ``file`` (resolved), read again
    through the writer's files should a writer have started while it was read as unchanging.
    Blocking."""
    access = read_only_access(file, wait=wait)
    try:
        while True:
            connection = sqlite3.connect(access.uri, uri=True)
            try:
                result = read(connection)
                unchanged = access.still_unchanged()  # before closing: the lock still holds
            finally:
                connection.close()
            if unchanged:
                return result
            newer = read_only_access(file, wait=wait)  # before letting go of the files
            access.release()
            access = newer
    finally:
        access.release()


def sidecars_absent(file: Path) -> bool:
    """Whether neither the ``-wal`` nor the ``-shm`` file is beside ``file``."""
    return not any(file.with_name(file.name + suffix).exists() for suffix in ("-wal", "-shm"))


def tidy_after_reading(file: Path) -> None:
    """Remove the ``-wal`` and ``-shm`` files a read-only connection made beside ``file`` (it
    cannot remove them itself), the way SQLite does: a connection that may write closes, and
    if it is the last one, SQLite deletes them. Only when the log is empty, so that closing
    writes nothing to the file (a checkpoint of no frames); a log holding commits is another
    process's to finish. Blocking."""
    wal = file.with_name(file.name + "-wal")
    try:
        if wal.stat().st_size != 0 or not can_write(file):
            return
        connection = sqlite3.connect(file, isolation_level=None)
        try:
            connection.execute("PRAGMA query_only = ON")
            connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        finally:
            connection.close()
    except (OSError, sqlite3.Error):
        return  # tidying is a courtesy: the files do no harm
