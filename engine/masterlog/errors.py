"""Typed errors of the master-log reader: a stable ``code`` for scripts, a message for people."""

from __future__ import annotations

from typing import Any


class MasterLogError(Exception):
    """Base class: ``code`` is stable and machine-readable, ``message`` names what and where."""

    code: str = "MASTERLOG_ERROR"

    def __init__(self, message: str, *, path: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "path": self.path, **self.details}

    def __str__(self) -> str:
        where = f" ({self.path})" if self.path else ""
        return f"{self.code}: {self.message}{where}"


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
