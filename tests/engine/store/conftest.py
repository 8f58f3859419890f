"""The store's tests run on both stores: each test that takes ``backend`` or ``store`` runs once
on an SQLite file and once on a PostgreSQL database (one abstract test, two backends, as
eventsourcing's ``tests/persistence.py`` does). A backend also reaches its database behind the
store's back, to damage it as a crash or a hand edit would."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import subprocess
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from engine.store import EventStore, NewEvent
from engine.store.opening import open_store
from tests.processes import start_script

HELPERS = Path(__file__).resolve().parent


class SteppingClock:
    """Deterministic nanoseconds: 1000, 2000, 3000..."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        self.now += 1000
        return self.now


class Backend(ABC):
    """Where a test's workspace lives, and a way into it that bypasses the store."""

    name: str
    where: str | Path  # what open_store() and the helper processes are given

    async def open(self, **options: Any) -> EventStore:
        return await open_store(self.where, **options)

    @abstractmethod
    async def rows(self, query: str, *parameters: Any) -> list[tuple[Any, ...]]:
        """Rows of ``query`` (``?`` placeholders), read behind the store's back."""

    @abstractmethod
    async def edit(self, statement: str, *parameters: Any) -> None:
        """Run ``statement`` (``?`` placeholders) and commit, behind the store's back."""

    @abstractmethod
    async def write_lock_is_free(self) -> bool:
        """Whether another connection could take the workspace's write lock at once."""


class SqliteBackend(Backend):
    name = "sqlite"

    def __init__(self, path: Path) -> None:
        self.where = path

    async def rows(self, query: str, *parameters: Any) -> list[tuple[Any, ...]]:
        with contextlib.closing(sqlite3.connect(self.where)) as connection:
            return [tuple(row) for row in connection.execute(query, parameters)]

    async def edit(self, statement: str, *parameters: Any) -> None:
        with contextlib.closing(sqlite3.connect(self.where)) as connection:
            connection.execute(statement, parameters)
            connection.commit()

    async def write_lock_is_free(self) -> bool:
        with contextlib.closing(sqlite3.connect(self.where, timeout=0)) as other:
            try:
                other.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                return False
            other.execute("ROLLBACK")
        return True


def _numbered(sql: str) -> str:
    """``?`` placeholders as PostgreSQL's ``$1, $2...``."""
    count = iter(range(1, 1000))
    return re.sub(r"\?", lambda _match: f"${next(count)}", sql)


class PostgresBackend(Backend):
    name = "postgres"

    def __init__(self, url: str) -> None:
        self.where = url

    async def rows(self, query: str, *parameters: Any) -> list[tuple[Any, ...]]:
        connection = await asyncpg.connect(self.where)
        try:
            return [tuple(row) for row in await connection.fetch(_numbered(query), *parameters)]
        finally:
            await connection.close()

    async def edit(self, statement: str, *parameters: Any) -> None:
        connection = await asyncpg.connect(self.where)
        try:
            await connection.execute(_numbered(statement), *parameters)
        finally:
            await connection.close()

    async def write_lock_is_free(self) -> bool:
        connection = await asyncpg.connect(self.where)
        try:
            async with connection.transaction():
                await connection.execute("SET LOCAL lock_timeout = '1ms'")
                try:
                    await connection.execute(
                        "SELECT 1 FROM pact_workspace WHERE id = 1 FOR UPDATE NOWAIT"
                    )
                except asyncpg.LockNotAvailableError:
                    return False
            return True
        finally:
            await connection.close()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "sqlite":
        return SqliteBackend(tmp_path / "workspace.pact")
    return PostgresBackend(request.getfixturevalue("postgres_url"))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An SQLite workspace's path, for the tests of what only a file has."""
    return tmp_path / "workspace.pact"


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[EventStore]:
    opened = await backend.open(create=True, clock=SteppingClock())
    yield opened
    await opened.close()


def events(stream: str, count: int, start: int = 0) -> list[NewEvent]:
    return [
        NewEvent(stream, "noted", {"n": n, "text": f"note {n}"}, actor="tester")
        for n in range(start, start + count)
    ]


def start_helper(script: str, *args: object) -> subprocess.Popen[str]:
    """Start one of the helper scripts in this folder as a separate Python process."""
    return start_script(HELPERS / script, *args)
