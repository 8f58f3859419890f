"""Typed errors of the master-log reader: a stable ``code`` for scripts, a message for people."""

from __future__ import annotations

from engine.errors import CodedError


class MasterLogError(CodedError):
    """Base class: ``code`` is stable and machine-readable, ``message`` names what and where."""

    code: str = "MASTERLOG_ERROR"


class NotAConversation(MasterLogError):
    """The directory is missing, or holds no ``conversation.jsonl``."""

    code = "NOT_A_CONVERSATION"


class BadReference(MasterLogError):
    """Reference text that is not the four-line form, or a byte range that is not ``A-B``."""

    code = "BAD_REFERENCE"


class BadRange(MasterLogError):
    """A byte range outside the file, or empty."""

    code = "BAD_RANGE"


class CacheError(MasterLogError):
    """The index cache could not be opened or written (it is derived data: delete it to rebuild)."""

    code = "CACHE_ERROR"


class ForeignCache(CacheError):
    """The cache file is an SQLite database of another application: it is left untouched."""

    code = "FOREIGN_DATABASE"


class LogUnreadable(MasterLogError):
    """A log, a saved tool output, or a folder of the conversation this user may not read."""

    code = "PERMISSION_DENIED"


class LogGone(MasterLogError):
    """A log removed while it was being read."""
