"""Files that are not usable workspaces, for the workspace and the command-line tests.

Each maker writes one kind of bad file at the path it is given and returns the path to open
(for "a directory", the directory itself).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Awaitable, Callable
from contextlib import closing
from pathlib import Path

from engine.store import (
    CorruptDatabase,
    EmptyWorkspaceFile,
    NotADatabase,
    SchemaTooNew,
    SeveralLinks,
    StoreError,
    TruncatedDatabase,
    WorkspaceNotFound,
)
from engine.store.schema import APPLICATION_ID, SCHEMA_VERSION
from engine.workspace import Workspace

from .conftest import EVERY_OPERATION


async def real_workspace(path: Path, rounds: int = 10) -> None:
    """A workspace of a few pages: the script of every operation, several times over."""
    async with await Workspace.open(path, create=True, watch=False) as ws:
        for round_ in range(rounds):
            name = f"agent-{round_}"
            await ws.create_context(name)
            for command in EVERY_OPERATION:
                await ws.run(name, command)


async def text_file(path: Path) -> Path:
    path.write_text("These are my notes, not a workspace.\n" * 40)
    return path


async def empty_file(path: Path) -> Path:
    path.touch()
    return path


async def truncated_database(path: Path) -> Path:
    await real_workspace(path)
    data = path.read_bytes()
    assert len(data) > 4 * 4096, len(data)
    path.write_bytes(data[: len(data) // 2])
    return path


async def future_schema(path: Path) -> Path:
    await real_workspace(path, rounds=1)
    with closing(sqlite3.connect(path)) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        connection.commit()
    return path


async def negative_schema(path: Path) -> Path:
    """``PRAGMA user_version = -1`` on a real workspace (the store once failed: KeyError: 0)."""
    await real_workspace(path, rounds=1)
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA user_version = -1")
        connection.commit()
    return path


async def claims_our_id(path: Path) -> Path:
    """Another program's database that sets pact-tui's application_id but no schema version:
    opening it once added three tables and set user_version, even for ``verify``."""
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        connection.execute("INSERT INTO notes (body) VALUES ('mine')")
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.commit()
    return path


async def second_link(path: Path) -> Path:
    """A workspace with a second hard link: two processes writing through the two names each
    kept their own write-ahead log, and 200 of 400 acknowledged commands were lost."""
    await real_workspace(path, rounds=1)
    os.link(path, path.with_name("the-other-name.pact"))
    return path


async def directory(path: Path) -> Path:
    path.mkdir()
    (path / "inside.txt").write_text("a file in the directory\n")
    return path


async def missing_file(path: Path) -> Path:
    return path


Maker = Callable[[Path], Awaitable[Path]]

# name -> (maker, error type, code, refused even when asked to create)
BAD_FILES: dict[str, tuple[Maker, type[StoreError], str, bool]] = {
    "text-file": (text_file, NotADatabase, "NOT_A_DATABASE", True),
    "empty-file": (empty_file, EmptyWorkspaceFile, "EMPTY_FILE", False),
    "truncated-database": (truncated_database, TruncatedDatabase, "TRUNCATED_DATABASE", True),
    "future-schema": (future_schema, SchemaTooNew, "SCHEMA_TOO_NEW", True),
    "negative-schema": (negative_schema, CorruptDatabase, "CORRUPT_DATABASE", True),
    "claims-our-id": (claims_our_id, CorruptDatabase, "CORRUPT_DATABASE", True),
    "second-link": (second_link, SeveralLinks, "SEVERAL_LINKS", True),
    "directory": (directory, NotADatabase, "NOT_A_DATABASE", True),
    "missing-file": (missing_file, WorkspaceNotFound, "WORKSPACE_NOT_FOUND", False),
}


def state(path: Path) -> tuple[object, ...]:
    """Everything a refused open must leave as it was: the bytes (or the listing of a
    directory), the modification time, and what lies beside the file."""
    beside = sorted(p.name for p in path.parent.iterdir())
    if not path.exists():
        return ("missing", beside)
    if path.is_dir():
        listing = sorted((p.name, p.read_bytes()) for p in path.iterdir())
        return ("directory", listing, path.stat().st_mtime_ns, beside)
    return ("file", path.read_bytes(), path.stat().st_mtime_ns, beside)
