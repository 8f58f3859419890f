"""A separate process that keeps a workspace open read-only, for the tests of one user looking
at another user's workspace.

    python looker_process.py WORKSPACE

Opens WORKSPACE read-only and prints ``head <seq> unchanging <true|false>``; for each line read
on stdin, reads the log's head and its events again and prints ``head <seq> events <count>``;
closes the store at the end of stdin and prints ``closed``.
"""

from __future__ import annotations

import asyncio
import sys

from engine.store import SqliteEventStore


async def run(path: str) -> None:
    async with await SqliteEventStore.open(path, read_only=True, watch=False) as store:
        print(f"head {await store.head()} unchanging {str(store.unchanging).lower()}", flush=True)
        for _line in sys.stdin:
            head, read = await store.head(), await store.read()
            print(f"head {head} events {len(read)}", flush=True)
    print("closed", flush=True)


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1]))
