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
import contextlib
import functools
import queue
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

_Call = tuple["asyncio.Future[Any]", Callable[[], Any]]


class WriterThread:
    """Open with ``await WriterThread.connect(path, timeout)``; close with ``await close()``."""

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._connection: sqlite3.Connection | None = None
        # A daemon: a process that exits without closing its store is not held up by it
        # (SQLite treats that like a crash: the last committed state stays).
        self._thread = threading.Thread(target=self._serve, name="event-store-writer", daemon=True)
        self._thread.start()

    @classmethod
    async def connect(cls, path: Path, timeout: float) -> WriterThread:
        """``timeout`` is SQLite's busy timeout: how long to wait for another connection's lock."""
        writer = cls()
        try:
            # Made in the thread that uses it, as sqlite3 requires. isolation_level=None: no
            # implicit BEGINs; the store issues BEGIN IMMEDIATE itself.
            writer._connection = await writer._call(
                functools.partial(sqlite3.connect, path, isolation_level=None, timeout=timeout)
            )
        except BaseException:
            writer._calls.put(None)
            raise
        return writer

    async def run(
        self,
        function: Callable[Concatenate[sqlite3.Connection, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """``function(connection, *args, **kwargs)``, called in the connection's thread."""
        if self._connection is None:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        return await self._call(functools.partial(function, self._connection, *args, **kwargs))

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        try:
            await self._call(connection.close)
        finally:
            self._calls.put(None)  # the thread ends once the calls before this are done

    def _call(self, call: Callable[[], T]) -> asyncio.Future[T]:
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._calls.put((future, call))
        return future

    def _serve(self) -> None:
        while (item := self._calls.get()) is not None:
            future, call = item
            settle: Callable[[], None]
            try:
                settle = functools.partial(_set_result, future, call())
            except BaseException as error:
                settle = functools.partial(_set_exception, future, error)
            # The loop may be gone: a cancelled caller's loop can stop before the call ends.
            with contextlib.suppress(RuntimeError):
                future.get_loop().call_soon_threadsafe(settle)


def _set_result(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():  # a cancelled caller no longer waits for it
        future.set_result(result)


def _set_exception(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)
