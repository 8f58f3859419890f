"""SQLite's error codes, translated into the store's typed errors."""

from __future__ import annotations

import sqlite3

from engine.store.errors import (
    CorruptDatabase,
    NotADatabase,
    StorageFailure,
    StoreError,
    WorkspaceLocked,
)


def is_busy(error: sqlite3.Error) -> bool:
    """Whether another connection holds a lock this one needs."""
    primary_code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    return primary_code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def translate_sqlite_error(error: sqlite3.Error, where: str) -> StoreError:
    """The typed store error for an error SQLite reported about ``where``."""
    primary_code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    message = str(error)
    if is_busy(error):
        return WorkspaceLocked(
            f"another process holds the workspace's write lock ({message})", path=where
        )
    if primary_code == sqlite3.SQLITE_NOTADB:
        return NotADatabase(f"SQLite cannot read it as a database ({message})", path=where)
    if primary_code == sqlite3.SQLITE_CORRUPT:
        return CorruptDatabase(f"SQLite reports corruption ({message})", path=where)
    return StorageFailure(message, path=where, sqlite_error=getattr(error, "sqlite_errorname", ""))
