"""Typed errors of the event store.

Every failure carries a stable ``code``, a message for people that names the offending file,
and the ``path`` of the workspace. A store operation that raises one of these has written
nothing: opening a bad file leaves its bytes untouched, a refused command rolls back whole.
"""

from __future__ import annotations

from engine.errors import CodedError


class StoreError(CodedError):
    """Base class: ``code`` is stable and machine-readable, ``message`` is for people."""

    code: str = "STORE_ERROR"


# Opening a workspace file


class WorkspaceNotFound(StoreError):
    """No file at the path, and the caller did not ask to create one."""

    code = "WORKSPACE_NOT_FOUND"


class EmptyWorkspaceFile(StoreError):
    """A 0-byte file, and the caller did not ask to create a workspace in it."""

    code = "EMPTY_FILE"


class NotADatabase(StoreError):
    """The file does not start with the SQLite header (a text file, an image, a directory...)."""

    code = "NOT_A_DATABASE"


class CorruptEvent(StoreError):
    """A stored event that cannot be read back (its payload is not JSON): edited by hand."""

    code = "CORRUPT_EVENT"


class CorruptDatabase(StoreError):
    """An SQLite file that SQLite itself cannot read consistently."""

    code = "CORRUPT_DATABASE"


class TruncatedDatabase(CorruptDatabase):
    """An SQLite file shorter than its own header says it is."""

    code = "TRUNCATED_DATABASE"


class ForeignDatabase(StoreError):
    """A valid SQLite file that belongs to another application (a different application_id)."""

    code = "FOREIGN_DATABASE"


class WorkspaceUnreadable(StoreError):
    """The file (or a folder on its path) may not be read by this process."""

    code = "PERMISSION_DENIED"


class SeveralLinks(StoreError):
    """The file has more than one hard link: SQLite keeps its write-ahead log beside the name
    a process opened, so processes opening it by different names would each keep their own."""

    code = "SEVERAL_LINKS"


class SchemaTooNew(StoreError):
    """A workspace written by a newer version of this program: opening it could corrupt it."""

    code = "SCHEMA_TOO_NEW"


class SchemaTooOld(StoreError):
    """A workspace written by an older version, opened read-only: upgrading it is a write."""

    code = "SCHEMA_TOO_OLD"


# Using an open workspace


class ReadOnlyWorkspace(StoreError):
    """A command or a checkpoint was asked of a store opened read-only."""

    code = "READ_ONLY"


class WorkspaceLocked(StoreError):
    """Another process held the write lock for longer than the busy timeout."""

    code = "WORKSPACE_LOCKED"


class StoreClosed(StoreError):
    """The store, or the subscription, was used after ``close()``."""

    code = "STORE_CLOSED"


class InvalidEvent(StoreError):
    """An event a command tried to append cannot be stored (a payload that is not JSON, ...)."""

    code = "INVALID_EVENT"


class InvalidCheckpoint(StoreError):
    """A checkpoint that names a position the store does not have."""

    code = "INVALID_CHECKPOINT"


class CorruptCheckpoint(StoreError):
    """A stored checkpoint whose bytes no longer match its digest: replay from the start."""

    code = "CORRUPT_CHECKPOINT"


class CheckpointNotInLog(StoreError):
    """A stored checkpoint the log does not vouch for: its event is past the log's end, or the
    log's event at its place is not the one it was taken at (the log lost its tail and grew
    again, or the checkpoint was changed). A cache to ignore: replay from the log instead."""

    code = "CHECKPOINT_NOT_IN_LOG"


class BrokenTail(StoreError):
    """The log's last event does not verify (checked when the store opens): appending after it
    would extend a broken chain, so writes are refused; reads still work."""

    code = "BROKEN_TAIL"


class DestinationExists(StoreError):
    """A backup's destination (or a file SQLite keeps beside it) is already there, and the
    caller did not ask to replace it."""

    code = "DESTINATION_EXISTS"


class InvalidDestination(StoreError):
    """A backup's destination that cannot be one: a folder, the workspace itself, a path in
    no folder there is."""

    code = "INVALID_DESTINATION"


class ChangeFeedFailed(StoreError):
    """The change feed stopped on an error; the subscription cannot continue."""

    code = "CHANGE_FEED_FAILED"


class StorageFailure(StoreError):
    """Any other failure of the storage engine (disk full, I/O error, ...)."""

    code = "STORAGE_FAILURE"
