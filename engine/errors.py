"""The base of the engine's typed errors that name a file: a stable ``code`` for scripts, a
message for people, the ``path`` it concerns, and any details, all in :meth:`to_dict`."""

from __future__ import annotations

from typing import Any


class CodedError(Exception):
    """``code`` is stable and machine-readable, ``message`` is for people."""

    code: str = "ERROR"

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
