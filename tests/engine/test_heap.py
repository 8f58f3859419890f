"""The loaded heap out of the collector's sight: once a reader has built what opening a context
left for later (``Workspace.build_indexes``), nothing the context holds is walked by a full
collection, and full collections are rarer (``heap.THRESHOLDS``).

Each check runs in a fresh interpreter: freezing and the thresholds are the whole process's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engine.workspace import Workspace
from tests.processes import REPO_ROOT

CHECK = """
import asyncio, gc, sys
from engine.workspace import Workspace
from engine.heap import THRESHOLDS

async def main():
    async with await Workspace.open(sys.argv[1], watch=False) as workspace:
        workspace.build_indexes("c")
        held = [item for item, *_ in workspace.context("c").iter_items()]
        walked = {id(o) for o in gc.get_objects()}  # generations 0-2: not the frozen ones
        print(sum(id(item) in walked for item in held), len(held), gc.get_threshold() == THRESHOLDS)

asyncio.run(main())
"""


async def test_what_a_shown_context_holds_is_frozen_and_full_collections_are_rarer(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.pact"
    async with await Workspace.open(path, create=True, watch=False) as workspace:
        await workspace.create_context("c")
        for n in range(50):
            await workspace.run("c", {"op": "message", "role": "user", "text": f"m{n}"})
    done = subprocess.run(
        [sys.executable, "-c", CHECK, str(path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    walked, held, tuned = done.stdout.split()
    assert int(held) >= 50
    assert walked == "0"
    assert tuned == "True"
