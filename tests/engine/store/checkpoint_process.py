"""A separate process that saves a checkpoint and stops halfway, to be killed there.

    python checkpoint_process.py WORKSPACE NAME SIZE

Saves a checkpoint NAME of SIZE bytes at the store's last event. Once the first piece is
committed it prints ``piece 0 written`` and waits for a line on stdin before writing the next,
so that a test can kill it between two pieces of one save, as a crash would.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import engine.store.sqlite as sqlite_store
from engine.store import SqliteEventStore


def stop_after_the_first_piece() -> None:
    real = sqlite_store._insert_checkpoint_chunk

    def insert(connection: Any, name: str, generation: str, chunk: int, data: bytes) -> Any:
        written = real(connection, name, generation, chunk, data)
        if chunk == 0:
            print("piece 0 written", flush=True)
            sys.stdin.readline()  # runs in the store's writer thread: nothing else is written
        return written

    sqlite_store._insert_checkpoint_chunk = insert  # type: ignore[assignment]


async def run(path: str, name: str, size: int) -> None:
    stop_after_the_first_piece()
    async with await SqliteEventStore.open(path, watch=False) as store:
        await store.save_checkpoint(name, await store.head(), os.urandom(size))
    print("saved", flush=True)


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], sys.argv[2], int(sys.argv[3])))
