"""A separate process that saves a checkpoint and stops halfway, to be killed there.

    python checkpoint_process.py WORKSPACE NAME SIZE

Saves a checkpoint NAME of SIZE bytes at the store's last event, in the workspace at WORKSPACE
(a path or a URL). Once the first piece is committed it prints ``piece 0 written`` and waits
for a line on stdin before writing the next, so that a test can kill it between two pieces of
one save, as a crash would.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from engine.store.opening import open_store


def stop_after_the_first_piece(store: Any) -> None:
    """Both stores write each piece of a checkpoint as one ``_write`` of its own, committed
    when it returns."""
    real, pieces = store._write, 0

    async def write(step: Any) -> Any:
        nonlocal pieces
        written = await real(step)
        pieces += 1
        if pieces == 1:
            print("piece 0 written", flush=True)
            sys.stdin.readline()  # blocks the event loop: nothing else is written meanwhile
        return written

    store._write = write


async def run(path: str, name: str, size: int) -> None:
    async with await open_store(path, watch=False) as store:
        stop_after_the_first_piece(store)
        await store.save_checkpoint(name, await store.head(), os.urandom(size))
    print("saved", flush=True)


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], sys.argv[2], int(sys.argv[3])))
