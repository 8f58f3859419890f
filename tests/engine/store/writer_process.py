"""A separate process that runs commands against a workspace, for the multi-process tests.

    python writer_process.py WORKSPACE NAME COMMANDS EVENTS_PER_COMMAND [--wait-for-go]

Runs COMMANDS commands (0: until killed), each appending EVENTS_PER_COMMAND events to its own
stream and to a stream shared by every writer. Each event's payload names its command, so a test
can check that a command is either wholly present or wholly absent. After each commit it prints
``committed <command id>``; at the end, ``done``. With ``--wait-for-go`` it first opens the
workspace, prints ``ready`` and waits for a line on stdin, so that writers start together.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections.abc import Sequence

from engine.store import NewEvent, StoredEvent
from engine.store.opening import open_store


async def run(
    path: str, name: str, commands: int, events_per_command: int, wait_for_go: bool
) -> None:
    async with await open_store(path, busy_timeout=30.0, watch=False) as store:
        if wait_for_go:
            print("ready", flush=True)
            sys.stdin.readline()
        numbers = itertools.count() if commands == 0 else range(commands)
        for number in numbers:
            command_id = f"{name}-{number}"

            def decide(
                _others: Sequence[StoredEvent], command_id: str = command_id
            ) -> list[NewEvent]:
                return [
                    NewEvent(
                        stream="ctx:shared" if part % 2 else f"ctx:{name}",
                        type="part_written",
                        payload={"command": command_id, "part": part, "of": events_per_command},
                        actor=name,
                    )
                    for part in range(events_per_command)
                ]

            await store.execute(decide)
            print(f"committed {command_id}", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    workspace, writer_name, command_count, per_command = sys.argv[1:5]
    go = sys.argv[5:] == ["--wait-for-go"]
    asyncio.run(run(workspace, writer_name, int(command_count), int(per_command), go))
