"""A separate process that runs protocol commands on a document, for the multi-process tests.

    python document_writer_process.py WORKSPACE AGENT ROUNDS --later-s S

Opens the workspace, loads document ``plan`` (``AGENT`` must have joined it), prints ``ready``
and waits for a line on stdin, so that writers start together. Then, as ``AGENT``, it proposes
new content for ``sec:shared`` and declares ``ROUNDS`` intents on it, printing each result as one
JSON line: ``{"op": ..., "result": ...}``. Its clock runs ``S`` seconds ahead of the real one, so
the due work the test left (a lock) is due for every writer at once. Last it prints
``{"sequence": N, "markdown": ...}``: its own projection of the document once it has caught up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time


async def run(path: str, agent: str, rounds: int, later_s: float) -> int:
    from engine.protocol.commands import Actor
    from engine.protocol.errors import ProtocolError
    from engine.workspace import Workspace

    def clock() -> int:
        return time.time_ns() + int(later_s * 1e9)

    actor = Actor.agent(agent)
    async with await Workspace.open(path, watch=False, lazy=True, clock=clock) as ws:
        await ws.load_document("plan")
        print("ready", flush=True)
        sys.stdin.readline()
        commands = [
            {
                "op": "propose",
                "sectionId": "sec:shared",
                "newContent": f"## Shared\n\n{agent} rewrote this.\n",
            },
            *(
                {"op": "intent", "sectionId": "sec:shared", "goal": f"{agent} goal {n}"}
                for n in range(rounds)
            ),
        ]
        for command in commands:
            try:
                decision = await ws.run_document("plan", command, actor)
            except ProtocolError as refused:
                print(json.dumps({"op": command["op"], "refused": refused.wire()}), flush=True)
                return 1
            print(json.dumps({"op": command["op"], "result": decision.answer()}), flush=True)
        await ws.tick_document("plan")  # catch up with the other writer's events
        doc = ws.document("plan")
        print(json.dumps({"sequence": doc.sequence, "markdown": doc.markdown()}), flush=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("workspace")
    parser.add_argument("agent")
    parser.add_argument("rounds", type=int)
    parser.add_argument("--later-s", type=float, default=0.0)
    args = parser.parse_args()
    sys.exit(asyncio.run(run(args.workspace, args.agent, args.rounds, args.later_s)))
