"""Fixtures every test folder may use: a real PostgreSQL server, one database per test."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import asyncpg
import pytest

from tests.postgres_server import PostgresServer, binaries_missing

_databases = itertools.count()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One server per test process (each xdist worker starts its own, in its own folder)."""
    missing = binaries_missing()
    if missing is not None:
        pytest.skip(missing)
    with PostgresServer() as server:
        yield server


@pytest.fixture
async def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database of its own (dropped with the server)."""
    name = f"test_{os.getpid()}_{next(_databases)}"
    connection = await asyncpg.connect(postgres_server.url())
    try:
        await connection.execute(f"CREATE DATABASE {name} TEMPLATE template0")
    finally:
        await connection.close()
    return postgres_server.url(name)
