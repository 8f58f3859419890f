"""A separate process that runs workspace commands, for the multi-process and crash tests.

    python writer_process.py WORKSPACE WRITER COMMANDS [--wait-for-go [--halfway]] [--lazy]
        [--checkpoint-every N --archive-every M]

Runs commands ``0 .. COMMANDS-1`` of ``script(WRITER, n)`` (COMMANDS 0: until killed) through
``Workspace.run`` on the contexts ``shared`` and ``common``, which must exist. Every command of
the script succeeds whatever other writers do meanwhile. After each commit it prints
``committed <n>``; at the end, ``done``. With ``--wait-for-go`` it first opens the workspace,
prints ``ready`` and waits for a line on stdin, so that writers start together; with
``--halfway`` also after half its commands (it prints ``half``), so that two writers surely take
turns however the machine schedules them. With ``--lazy``
it opens the workspace as the command line does, loading each context when it first runs a
command on it.

Each script cycle inserts a group of permanent items tagged ``<writer>-g<cycle>`` one command at
a time, then deletes the whole group with one command: the group's live items must always number
either as many inserts of it as the log holds, or none once its delete is in the log.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
from typing import Any

CONTEXTS = ("shared", "common")
CYCLE = 8


def group(writer: str, number: int) -> str:
    return f"{writer}-g{number // CYCLE}"


def script(writer: str, number: int) -> tuple[str, dict[str, Any]]:
    """Command ``number`` of ``writer``: the context it runs on, and the command."""
    name = CONTEXTS[(number // CYCLE) % len(CONTEXTS)]
    label, tag = f"{writer}-{number}", group(writer, number)
    step = number % CYCLE
    commands: list[dict[str, Any]] = [
        {"op": "message", "role": "user", "text": label},
        {"op": "insert", "selector": "d0, 1, 0", "component": {"content": label, "tags": [tag]}},
        {
            "op": "insert",
            "selector": "d0, 2, 0",
            "component": {"content": label, "key": tag, "tags": [tag, "marked"]},
        },
        {"op": "update", "selector": "d0, 1", "mode": "append", "component": {"content": label}},
        {"op": "message", "role": "assistant", "text": label},
        {"op": "insert", "selector": "d0, 3, 0", "component": {"content": label, "ttl": 1}},
        {"op": "delete", "selector": f"+{tag}"},
        {"op": "advance"} if number % (2 * CYCLE) < CYCLE else {"op": "seal", "trigger": label},
    ]
    command = commands[step]
    if command["op"] == "update":  # appended items are in the group too
        command["component"]["tags"] = [tag]
    return name, command


async def run(
    path: str,
    writer: str,
    commands: int,
    wait_for_go: bool,
    intervals: tuple[int, int] | None,
    lazy: bool = False,
    halfway: bool = False,
) -> int:
    from engine.context import ContextError
    from engine.workspace import Workspace, cadence

    if intervals is not None:
        every, archive_every = intervals
        cadence.INTERVALS["context"] = cadence.Intervals(every, archive_every)
        cadence.INTERVALS["document"] = cadence.Intervals(every, None)
    async with await Workspace.open(path, watch=False, lazy=lazy) as ws:
        if wait_for_go:
            print("ready", flush=True)
            sys.stdin.readline()
        for number in itertools.count() if commands == 0 else range(commands):
            if halfway and number == commands // 2:
                print("half", flush=True)
                sys.stdin.readline()
            name, command = script(writer, number)
            try:
                await ws.run(name, command, actor=writer)
            except ContextError as error:
                print(f"refused {number} {error}", flush=True)
                return 1
            print(f"committed {number}", flush=True)
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("workspace")
    parser.add_argument("writer")
    parser.add_argument("commands", type=int)
    parser.add_argument("--wait-for-go", action="store_true")
    parser.add_argument("--halfway", action="store_true")
    parser.add_argument("--lazy", action="store_true")
    parser.add_argument("--checkpoint-every", type=int)
    parser.add_argument("--archive-every", type=int)
    args = parser.parse_args()
    every = (args.checkpoint_every, args.archive_every) if args.checkpoint_every else None
    sys.exit(
        asyncio.run(
            run(
                args.workspace,
                args.writer,
                args.commands,
                args.wait_for_go,
                every,
                args.lazy,
                args.halfway,
            )
        )
    )
