"""The episode changelog (issue 14). Run: ``python -m bench changes``.

1. What recording the changelog costs an operation: ``add_user`` + ``advance`` on the
   100,000-item context of ``bench_context`` (10 items a turn, a temporary reminder, a sticky
   status that rehydrates every episode, a cyclic check-in), with the changelog recorded and
   built (``Context.last_changes``) ÷ the same operations with recording switched off
   (``Context.record_changes = False``: the anchor, the same context in the same process, the
   two taking turns step by step so the machine's ups and downs fall on both alike).
2. ``pact-tui ctx changes`` for one episode of a 100,000-item context (the demo's researcher
   scaled, ``create_scaled_demo``), as a whole process ÷ ``pact-tui ctx select`` of one item of
   it, as a whole process: both open the workspace and load the context; the changes are then
   read from the events' stored results, not rebuilt.
3. ``pact-tui ctx diff -1 now`` (what the last step changed) on the same context ÷ the same
   ``ctx select``, whole processes (issue 25: one diff, turn by turn, ``engine.context.tree_diff``);
   printed beside it, from one process: reading the snapshot (kept in the context's checkpoint
   with the newest others, else rebuilt from its nearest archive), the diff itself, what
   ``ctx diff`` lists, every change, and the plain item-by-item ``diff_views`` it replaced.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_context import build
from bench.common import (
    REPO_ROOT,
    fmt,
    in_a_fresh_process,
    pact_tui_seconds,
    report_ratio,
    sized,
)
from engine.context import Context

ITEMS = sized(100_000, 1_000)
STEPS = sized(3_000, 20)  # add_user + advance pairs, each way
PROCESS_RUNS = sized(7, 1)
JSON_RUNS = sized(500, 5)


def step_costs(context: Context, steps: int) -> tuple[float, float]:
    """Median seconds of one add_user + advance with the changelog and without, taking turns
    (which goes first alternates)."""
    counter = iter(range(10**9))
    recorded: list[float] = []
    bare: list[float] = []

    def step(record: bool, into: list[float]) -> None:
        context.record_changes = record
        start = time.perf_counter()
        context.add_user(f"next {next(counter)}")
        context.advance()
        into.append(time.perf_counter() - start)

    for n in range(steps):
        order = [(True, recorded), (False, bare)]
        for record, into in order if n % 2 else order[::-1]:
            step(record, into)
    context.record_changes = True
    return statistics.median(recorded), statistics.median(bare)


def removal_costs(context: Context, repeat: int) -> tuple[float, float, str]:
    """Median seconds of a delete that empties the turn at depth 1, so that every deeper turn
    comes up one (their items counted, not walked item by item), with the changelog and
    without; and what the last one recorded."""
    from engine.context import TextContent

    recorded: list[float] = []
    bare: list[float] = []
    for n in range(repeat):
        order = [(True, recorded), (False, bare)]
        for record, into in order if n % 2 else order[::-1]:
            context.record_changes = record
            context.add_user(f"to delete {n}")
            context.pact_insert("d0, 1, 0", TextContent("and its note"))
            start = time.perf_counter()
            context.pact_delete("d1, *, *")
            into.append(time.perf_counter() - start)
    context.record_changes = True
    context.add_user("to delete, recorded")
    context.pact_delete("d1, *, *")
    summary = context.last_changes.summary() if context.last_changes else ""
    return statistics.median(recorded), statistics.median(bare), summary


def to_json_cost(context: Context, repeat: int) -> float:
    """Median seconds of the JSON form of one step's two changelogs (what a workspace stores
    with each event; printed, not in the figure)."""
    counter = iter(range(10**9))
    samples = []
    for _ in range(repeat):
        context.add_user(f"json {next(counter)}")
        message = context.last_changes
        context.advance()
        advance = context.last_changes
        assert message is not None and advance is not None
        start = time.perf_counter()
        message.to_json()
        advance.to_json()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def bench_recording() -> None:
    print(f"1. add_user + advance on a {ITEMS:,}-item context, with its changelog and without")
    context = build(ITEMS)
    print(f"  ({context.item_count():,} live items, {context.history_depth + 1:,} turns)")
    step_costs(context, sized(200, 5))  # warm up
    recorded, bare = step_costs(context, STEPS)
    context.add_user("one more")
    summary = context.last_changes.summary() if context.last_changes else ""
    context.advance()
    advance = context.last_changes.summary() if context.last_changes else ""
    print(f"  (what a step records: {summary!r}, then {advance!r})")
    report_ratio(
        f"add_user+advance with the changelog at {ITEMS // 1000}k (median of {STEPS:,})",
        recorded,
        bare,
        1.3,
        anchor_label="without (record_changes=False)",
    )
    print(
        f"  (its JSON form, stored with each event: {fmt(to_json_cost(context, JSON_RUNS))}"
        " a step, not in the figure)"
    )
    with_it, without, summary = removal_costs(context, sized(100, 5))
    print(
        f"  (printed, no target) a delete emptying the turn at d1, every deeper turn coming up"
        f" ({summary}): {fmt(with_it)} with the changelog ÷ {fmt(without)} without"
        f" = {with_it / without:.2f}"
    )


async def build_scaled(path: Path, items: int) -> None:
    from pact_tui.demo import create_scaled_demo

    gc.disable()  # setup, not a figure
    await create_scaled_demo(path, items)


def bench_ctx_changes() -> None:
    print(
        f"2. pact-tui ctx changes for one episode of a {ITEMS:,}-item context ÷ pact-tui ctx"
        " select of one item, each a whole process"
    )
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "scaled.pact"
        start = time.perf_counter()
        in_a_fresh_process("bench.bench_changes", "build", path, ITEMS)
        print(
            f"  (built in {fmt(time.perf_counter() - start)}: {path.stat().st_size / 1e6:.0f} MB)"
        )
        listed = subprocess.run(
            [sys.executable, "-m", "pact_tui", "ctx", "snapshots", str(path), "researcher"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        episode = int(listed[len(listed) // 2].split()[3])  # one from the middle
        changes = ("ctx", "changes", path, "researcher", "--episode", episode)
        select = ("ctx", "select", path, "researcher", "#finding_7")
        done = subprocess.run(
            [sys.executable, "-m", "pact_tui", *map(str, changes)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        print(f"  (episode {episode} of {len(listed)}: {done[0]}; {done[-1]})")
        pact_tui_seconds(*changes)  # the first after building: not in the figure
        pact_tui_seconds(*select)
        took: dict[str, list[float]] = {"changes": [], "select": []}
        for _ in range(PROCESS_RUNS):
            took["changes"].append(pact_tui_seconds(*changes))
            took["select"].append(pact_tui_seconds(*select))
        report_ratio(
            f"ctx changes --episode N at {ITEMS // 1000}k (median of {PROCESS_RUNS} processes)",
            statistics.median(took["changes"]),
            statistics.median(took["select"]),
            1.5,
            anchor_label="ctx select of one item",
        )
        bench_ctx_diff(path, select)


def bench_ctx_diff(path: Path, select: tuple[object, ...]) -> None:
    print(
        f"3. pact-tui ctx diff -1 now on the {ITEMS:,}-item context ÷ pact-tui ctx select of one"
        " item, each a whole process"
    )
    diff = ("ctx", "diff", path, "researcher", "-1", "now")
    parts = in_a_fresh_process("bench.bench_changes", "diff-parts", path)
    where = (
        "held from the context's checkpoint (its newest snapshots)"
        if parts["held"]
        else f"rebuilt from its nearest archive ({parts['replayed']:,} events replayed)"
    )
    print(
        f"  (in one process: the snapshot -1 {where} in {fmt(parts['rebuild'])}; the diff"
        f" {fmt(parts['tree_diff'])}, what ctx diff lists {fmt(parts['listed_time'])}"
        f" ({parts['lines']:,} changes and the mass moves counted), every change"
        f" {fmt(parts['every'])} ({parts['listed']:,}), diff_views {fmt(parts['diff_views'])})"
    )
    pact_tui_seconds(*diff)  # the first: not in the figure
    took: dict[str, list[float]] = {"diff": [], "select": []}
    for _ in range(PROCESS_RUNS):
        took["diff"].append(pact_tui_seconds(*diff))
        took["select"].append(pact_tui_seconds(*select))
    report_ratio(
        f"ctx diff -1 now at {ITEMS // 1000}k (median of {PROCESS_RUNS} processes)",
        statistics.median(took["diff"]),
        statistics.median(took["select"]),
        1.5,
        anchor_label="ctx select of one item",
    )


async def diff_parts(path: Path) -> dict[str, float | int | bool]:
    """Where ``ctx diff -1 now``'s time goes, timed in this process."""
    from engine.context.changelog import LIST_LIMIT
    from engine.context.history import diff_views
    from engine.context.tree_diff import TreeDiff
    from engine.workspace import Workspace

    async with await Workspace.open(path, watch=False, lazy=True, read_only=True) as ws:
        await ws.load("researcher")
        now = ws.context("researcher")
        entry = ws.snapshot_at("researcher", -1)
        held = ws.snapshot_in_memory("researcher", entry.id) is not None
        start = time.perf_counter()
        past = await ws.view("researcher", entry.id)
        rebuild = time.perf_counter() - start
        start = time.perf_counter()
        diff = TreeDiff.between(past, now)
        tree_diff = time.perf_counter() - start
        start = time.perf_counter()
        moves = {by for by, n in diff.depth_moves.items() if by and n > LIST_LIMIT}
        lines = sum(1 for _ in diff.located_changes(moves)) + len(diff.added) + len(diff.removed)
        listed_time = time.perf_counter() - start
        start = time.perf_counter()
        listed = diff.to_located()[0]
        every = time.perf_counter() - start
        start = time.perf_counter()
        oracle = diff_views(past, now)
        plain = time.perf_counter() - start
        assert listed == oracle
        prefix = "archive:ctx:researcher:"
        names = await ws.store.checkpoints()
        marks = [int(n[len(prefix) :]) for n in names if n.startswith(prefix)]
        archived = max((m for m in marks if m < entry.stream_seq), default=0)
        return {
            "held": held,
            "rebuild": rebuild,
            "replayed": entry.stream_seq - archived,
            "tree_diff": tree_diff,
            "listed_time": listed_time,
            "lines": lines,
            "every": every,
            "diff_views": plain,
            "listed": len(listed.added) + len(listed.removed) + len(listed.changed),
        }


def main() -> None:
    print("the episode changelog (issue 14)")
    bench_recording()
    bench_ctx_changes()


if __name__ == "__main__":
    if sys.argv[1:2] == ["build"]:
        asyncio.run(build_scaled(Path(sys.argv[2]), int(sys.argv[3])))
        print('{"built": true}')
    elif sys.argv[1:2] == ["diff-parts"]:
        print(json.dumps(asyncio.run(diff_parts(Path(sys.argv[2])))))
    else:
        main()
