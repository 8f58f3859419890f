"""A separate process that follows a workspace through ``Workspace.changes()``.

    python subscriber_process.py WORKSPACE COUNT OUTPUT

Opens the workspace, prints ``ready <head>``, then follows every change after that head and
writes one JSON line per event (``[seq, stream, stream_seq, hash]``) to OUTPUT. Once COUNT events
have arrived it writes its projections' exports to OUTPUT.exports.json and exits. Exits with
status 2 if they do not all arrive within a generous time limit (a failure guard, not a
synchronisation).
"""

from __future__ import annotations

import asyncio
import json
import sys

from engine.workspace import Workspace

TIME_LIMIT_S = 120


async def run(path: str, count: int, output: str) -> int:
    async with await Workspace.open(path) as ws:
        start = ws.head
        print(f"ready {start}", flush=True)
        received = 0
        with open(output, "w") as lines:
            try:
                async with asyncio.timeout(TIME_LIMIT_S):
                    async for change in ws.changes(after=start):
                        for event in change.events:
                            record = [event.seq, event.stream, event.stream_seq, event.hash]
                            lines.write(json.dumps(record) + "\n")
                        received += len(change.events)
                        if received >= count:
                            break
            except TimeoutError:
                print(f"timed out after {received} of {count} events", flush=True)
                return 2
        exports = {info.name: ws.context(info.name).model_dump_json() for info in ws.contexts()}
        with open(output + ".exports.json", "w") as file:
            json.dump(exports, file)
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    workspace, expected, output_path = sys.argv[1:4]
    sys.exit(asyncio.run(run(workspace, int(expected), output_path)))
