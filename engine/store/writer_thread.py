"""The store's writer: one sqlite3 connection in a thread of its own, driven from asyncio.

aiosqlite (which the reader uses) makes one trip to its thread and back per statement. A command
is several statements with work in between: BEGIN IMMEDIATE, the catch-up read, linking and
hashing the new events, the inserts, COMMIT. Here each step of a command is one function run in
the connection's thread, so a command costs one or two trips instead of five.

Calls run one at a time, in the order they were made, and every call runs to its end even if
its caller is cancelled meanwhile (as with aiosqlite): a ROLLBACK asked for by a cancelled
command still happens, after whatever that command had already started.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class WriterThread:
    """Open with ``await WriterThread.connect(path, timeout)``; close with ``await close()``."""

    def __init__(self, executor: ThreadPoolExecutor, connection: sqlite3.Connection) -> None:
        self._executor = executor
        self._connection = connection
        self._closed = False

    @classmethod
    async def connect(cls, path: Path, timeout: float) -> WriterThread:
        """``timeout`` is SQLite's busy timeout: how long to wait for another connection's lock."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="event-store-writer")
        # Made in the thread that uses it, as sqlite3 requires. isolation_level=None: no
        # implicit BEGINs; the store issues BEGIN IMMEDIATE itself.
        connect = functools.partial(sqlite3.connect, path, isolation_level=None, timeout=timeout)
        try:
            connection = await asyncio.get_running_loop().run_in_executor(executor, connect)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(executor, connection)

    async def run(
        self,
        function: Callable[Concatenate[sqlite3.Connection, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """``function(connection, *args, **kwargs)``, called in the connection's thread."""
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        call = functools.partial(function, self._connection, *args, **kwargs)
        # Shielded: cancelling the caller must not take back a call that is queued.
        return await asyncio.shield(
            asyncio.get_running_loop().run_in_executor(self._executor, call)
        )

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, self._connection.close)
        finally:
            self._executor.shutdown(wait=False)
