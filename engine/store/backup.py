"""A copy of a workspace taken with SQLite's online backup API, while other processes write.

``sqlite3.Connection.backup`` copies every page of the database in one step, inside one read
transaction on the source: in WAL mode writers go on meanwhile, and the copy is the database as
of one moment, every event committed before it and none after (a copy of the file with ``cp``
can miss what is still in the ``-wal`` file, or catch a page half written). The copy is written
beside the destination under a temporary name, switched to a rollback journal so that it is
one self-contained file (pact-tui switches it back to WAL when it opens it), its chain is
verified, and only then is it renamed into place. An existing destination is refused unless
``replace`` is given; a failed backup leaves nothing behind.

Blocking: the store runs it in a worker thread.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from engine.store.base import VerifyResult
from engine.store.chain import CHAIN_COLUMNS, verify_rows
from engine.store.errors import DestinationExists, InvalidDestination, StorageFailure
from engine.store.read_access import read_as_of_one_moment

# Files SQLite keeps beside a database: one left from another database would be applied to
# the new one at its next opening.
SIDE_FILES = ("-wal", "-shm", "-journal")


@dataclass(frozen=True, slots=True)
class BackupResult:
    """What was copied: the copy's path and size, its events' chain, its checkpoints."""

    path: Path | str  # a file, or a database's URL (without its password)
    size: int
    chain: VerifyResult
    checkpoints: int


def backup_file(source: Path, destination: Path, *, replace: bool) -> BackupResult:
    """Copy the workspace at ``source`` to ``destination`` (see the module's docstring)."""
    where = str(destination)
    check_destination(source, destination, replace=replace)
    partial = partial_beside(destination)
    try:
        chain, checkpoints = _copy(source, partial)
        size = partial.stat().st_size
        put_in_place(partial, destination)
    except (OSError, sqlite3.Error) as error:
        why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise StorageFailure(f"cannot write the backup: {why}", path=where) from error
    finally:
        for leftover in _with_side_files(partial):
            leftover.unlink(missing_ok=True)
    return BackupResult(destination, size, chain, checkpoints)


def check_destination(source: Path | None, destination: Path, *, replace: bool) -> None:
    """Refuse a destination that cannot be a backup's (a folder, a path in no folder, the
    workspace itself), or one already there unless ``replace``."""
    where = str(destination)
    if destination.is_dir():
        raise InvalidDestination("the backup's destination is a folder: name a file", path=where)
    if not destination.parent.is_dir():
        raise InvalidDestination(
            "the folder of the backup's destination does not exist", path=where
        )
    if source is not None and _same_file(source, destination):
        raise InvalidDestination("the backup's destination is the workspace itself", path=where)
    present = [p.name for p in _with_side_files(destination) if p.exists()]
    if present and not replace:
        raise DestinationExists(
            f"{', '.join(present)} already there: pass --force to replace it", path=where
        )


def partial_beside(destination: Path) -> Path:
    """Where a backup is written before it is put in place (removed if it fails)."""
    return destination.with_name(f".{destination.name}.{secrets.token_hex(4)}.partial")


def remove_partial(partial: Path) -> None:
    for leftover in _with_side_files(partial):
        leftover.unlink(missing_ok=True)


def put_in_place(partial: Path, destination: Path) -> None:
    """Rename the finished copy over ``destination`` (with no file SQLite kept beside an old
    one left), durably."""
    for stale in _with_side_files(destination)[1:]:
        stale.unlink(missing_ok=True)
    os.replace(partial, destination)
    _sync_folder(destination.parent)


def _copy(source: Path, partial: Path) -> tuple[VerifyResult, int]:
    """Copy ``source`` into the new file ``partial``, as one file on the disk; the copy's chain
    and how many checkpoints it holds."""

    def copy_into_partial(reader: sqlite3.Connection) -> None:
        copy = sqlite3.connect(partial, isolation_level=None)
        try:
            reader.backup(copy)  # every page in one step: one read transaction, one moment
        finally:
            copy.close()

    read_as_of_one_moment(source.resolve(), copy_into_partial)
    copy = sqlite3.connect(partial, isolation_level=None)
    try:
        copy.execute("PRAGMA journal_mode = DELETE")
        chain = verify_rows(copy.execute(f"SELECT {CHAIN_COLUMNS} FROM events ORDER BY seq"))
        [(checkpoints,)] = copy.execute("SELECT COUNT(*) FROM checkpoints")
    finally:
        copy.close()
    with partial.open("rb+") as file:  # on the disk before it is renamed into place
        os.fsync(file.fileno())
    return chain, int(checkpoints)


def _with_side_files(path: Path) -> list[Path]:
    return [path, *(path.with_name(path.name + suffix) for suffix in SIDE_FILES)]


def _same_file(source: Path, destination: Path) -> bool:
    with contextlib.suppress(OSError):
        return os.path.samefile(source, destination)
    return source.absolute() == destination.absolute()


def _sync_folder(folder: Path) -> None:
    """Make the rename durable (where the platform allows opening a folder)."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
