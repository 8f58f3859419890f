"""A separate process that keeps a workspace open for writing, as an owner at work does.

    python holder_process.py WORKSPACE

Opens WORKSPACE, adds a user message to its context ``agent`` and prints ``appended 1``; adds
another, and prints the same, for each line read on stdin; closes the workspace at the end of
stdin.
"""

from __future__ import annotations

import asyncio
import sys

from engine.workspace import Workspace


async def run(path: str) -> None:
    async with await Workspace.open(path, watch=False, lazy=True) as ws:
        await ws.run("agent", {"op": "message", "role": "user", "text": "at work"})
        print("appended 1", flush=True)
        for _line in sys.stdin:
            await ws.run("agent", {"op": "message", "role": "user", "text": "still at work"})
            print("appended 1", flush=True)


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1]))
