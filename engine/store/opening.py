"""Which store a workspace lives in: a path is an SQLite file, a ``postgresql://`` URL a
PostgreSQL database. The one place that tells them apart."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from engine.store.base import EventStore
from engine.store.postgres_schema import is_url, shown_url

__all__ = ["is_url", "open_store", "where_shown"]


def where_shown(where: str | os.PathLike[str]) -> Path | str:
    """``where`` as messages name it: a path as a Path, a URL without its password."""
    return shown_url(str(where)) if is_url(where) else Path(where)


async def open_store(where: str | os.PathLike[str], **options: Any) -> EventStore:
    """Open the workspace at ``where`` (a path or a URL); ``options`` are those both stores'
    ``open`` take (``create``, ``read_only``, ``clock``, ``busy_timeout``, ``watch``)."""
    if is_url(where):
        # Imported here: a process on an SQLite file never loads the PostgreSQL driver.
        from engine.store.postgres import PostgresEventStore

        return await PostgresEventStore.open(str(where), **options)
    from engine.store.sqlite import SqliteEventStore

    return await SqliteEventStore.open(where, **options)
