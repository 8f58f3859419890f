"""A separate process that follows a workspace's change feed, for the multi-process tests.

    python subscriber_process.py WORKSPACE AFTER_SEQ COUNT OUTPUT

Subscribes after AFTER_SEQ, prints ``ready``, then writes one JSON line per event it receives
to OUTPUT and exits once it has received COUNT events. Exits with status 2 if they do not all
arrive within a generous time limit (a failure guard, not a synchronisation).
"""

from __future__ import annotations

import asyncio
import json
import sys

from engine.store.opening import open_store

TIME_LIMIT_S = 60


async def run(path: str, after_seq: int, count: int, output: str) -> int:
    async with await open_store(path) as store:
        received = 0
        with open(output, "w") as lines:
            async with store.subscribe(after_seq) as subscription:
                print("ready", flush=True)
                try:
                    async with asyncio.timeout(TIME_LIMIT_S):
                        async for event in subscription:
                            record = [event.seq, event.stream, event.stream_seq, event.hash]
                            lines.write(json.dumps(record) + "\n")
                            received += 1
                            if received == count:
                                break
                except TimeoutError:
                    print(f"timed out after {received} of {count} events", flush=True)
                    return 2
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    workspace, after, expected, output_path = sys.argv[1:5]
    sys.exit(asyncio.run(run(workspace, int(after), int(expected), output_path)))
