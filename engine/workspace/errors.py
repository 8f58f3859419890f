"""The workspace's errors (each with its code), and what a cache that cannot be used raises."""

from __future__ import annotations

from engine.context import ContextError
from engine.store import StoreError


class WorkspaceError(ContextError):
    code = "WORKSPACE_ERROR"


class UnknownContext(WorkspaceError):
    code = "UNKNOWN_CONTEXT"


class ContextExists(WorkspaceError):
    code = "CONTEXT_EXISTS"


class InvalidName(WorkspaceError):
    code = "INVALID_NAME"


class InvalidActor(WorkspaceError):
    code = "INVALID_ACTOR"


class ContextNotLoaded(WorkspaceError):
    """A synchronous accessor was asked for a context this process has not loaded."""

    code = "CONTEXT_NOT_LOADED"


class ReplayDiverged(WorkspaceError):
    """Replaying an event gave another result than the one recorded (or was refused): the log
    or code changed."""

    code = "REPLAY_DIVERGED"


class BadRange(WorkspaceError):
    """A step asked for in a way that names no step: two ways at once, or a range whose first
    snapshot comes after its second."""

    code = "BAD_RANGE"


class UnreplayableEvent(WorkspaceError):
    """An event that cannot be replayed at all: of a context's stream, its payload holds no
    command this version can read, or no result to check it against, or the stream does not
    begin with the context's creation; of a document's, the fold cannot take it (see
    ``replay_document_event``). The chain may well verify: another program appended it, or
    the start was cut off."""

    code = "UNREPLAYABLE_EVENT"


# What a cache that cannot be used raises: it is then replayed instead.
CACHE_ERRORS = (StoreError, ContextError, ValueError, KeyError, TypeError, AttributeError)


class CheckpointMismatch(Exception):
    """A context's checkpoint says it ends at an event its stream does not have there."""


class DocumentReadAgain(Exception):
    """The document a command was to decide on was read again from the log while it waited
    (``Workspace._decide_document``): it decides again, on the document as read."""
