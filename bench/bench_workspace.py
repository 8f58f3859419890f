"""Workspace benchmarks (issue 3). Run: ``python -m bench workspace``.

Each figure is printed next to an anchor measured in the same run on the same machine:

1. reopening a workspace of 1,000,000 events with its checkpoint (load it, replay the tail) ÷
   a full replay of the same workspace with checkpoint loading disabled: ≤ 0.1;
2. one ``Workspace.run`` command's latency, median and p95, next to the raw store append of
   one event of the same size (printed, no target);
3. change-feed latency from a ``Workspace.run`` commit here to ``Workspace.changes()`` delivery
   in another process: p95 ≤ 100 ms, next to the raw watchfiles latency for a plain file append;
4. one ``pact-tui ctx`` command as a whole process on a workspace holding a 100,000-item
   context, next to the same command on a workspace holding only a 10-item context: (a) ``ctx
   user`` on a small context of the big workspace: ≤ 2.0; (b) ``ctx user`` on the 100,000-item
   context itself (printed, with where its time goes); (c) ``ctx list`` (printed). Each is the
   median of several commands in a row (the steady state); the first command after building is
   printed apart.

The workspace of benchmark 1 is what agents leave behind: eight contexts cycling through a user
message, a retrieved document that lives two episodes, an assistant message and an episode
advance, sealing a snapshot every tenth cycle, with a sticky status in the system region. Two
agents keep their whole conversation; six keep a window of twenty exchanges (deleting the oldest
turns as they go). It is built through ``Workspace.run_many`` in batches of a few hundred
commands, one event each, so it is a real workspace that ``Workspace.open`` replays. Its last
checkpoint is 2,500 events old: half the checkpoint interval, the average tail. Building it and
each opening run in processes of their own, each with a clean heap as a user's process has.

The module is also those processes, and the other process of benchmark 3:
``python -m bench.bench_workspace build|open|follow|build-scaled|breakdown …``;
``python -m bench.bench_workspace commands`` runs benchmark 4 alone. ``python -m bench --tiny
workspace`` runs every step at tiny sizes (3,000 events, a 1,000-item context; CI's smoke run:
the figures mean nothing there).
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import hashlib
import itertools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import engine.workspace.checkpoints as checkpoints_module
import engine.workspace.index as index_role
import engine.workspace.loading as loading_role
import engine.workspace.projection as projection_module
from bench.common import (
    WARM_UP,
    fmt,
    in_a_fresh_process,
    monotonic_ns,
    pact_tui_seconds,
    percentile,
    raw_watch_round_trips,
    received_at,
    report_feed,
    report_limit,
    report_ratio,
    sized,
    start_follower,
)
from engine.canonical import canonical_json
from engine.context import Placed
from engine.context.compact import load_compact
from engine.store import NewEvent, SqliteEventStore
from engine.workspace import CONTEXT_CHECKPOINT, Workspace, cadence

NEVER = 10**12
ROLE_MODULE = "bench.bench_workspace"  # its roles run as processes of their own

TEXT = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 2
AGENTS, GROWING = 8, 2  # contexts, and how many of them keep their whole conversation
WINDOW = 20  # exchanges a windowed agent keeps: two turns each, depths 0-39 once it is full
CYCLES_PER_BATCH = 50
# Tiny (``python -m bench --tiny``): past every windowed agent's twentieth exchange.
TOTAL_EVENTS, TAIL = sized(1_000_000, 3_000), sized(2_500, 500)


@contextmanager
def checkpoints(**settings: Any) -> Iterator[None]:
    """Override the workspace's checkpoint settings (CHECKPOINT_EVERY, INDEX_CHECKPOINT, ...),
    each where the workspace reads it: the cadence in ``cadence`` (CHECKPOINT_EVERY: every
    kind's in ``cadence.INTERVALS``), a checkpoint's name in the role that loads and saves it."""
    where = {"INDEX_CHECKPOINT": index_role, "CONTEXT_CHECKPOINT": loading_role}
    with ExitStack() as stack:
        for setting, value in settings.items():
            if setting == "CHECKPOINT_EVERY":
                every = {
                    kind: dataclasses.replace(intervals, checkpoint_every=value)
                    for kind, intervals in cadence.INTERVALS.items()
                }
                stack.enter_context(mock.patch.dict(cadence.INTERVALS, every))
                continue
            module = where.get(setting, cadence)
            stack.enter_context(mock.patch.object(module, setting, value))
        yield


# 1. Reopening a large workspace


def agent_setup() -> list[dict[str, Any]]:
    return [
        {"op": "insert", "selector": "d-1, 0, 0", "component": {"content": "You are an agent."}},
        {
            "op": "insert",
            "selector": "d-1, 1, 0",
            "component": {"content": "status: working", "key": "status", "ttl": 1, "cad": 1},
        },
    ]


def agent_cycle(number: int, windowed: bool) -> list[dict[str, Any]]:
    """One exchange: question, a retrieved document for two episodes, answer, next episode."""
    commands: list[dict[str, Any]] = [
        {"op": "message", "role": "user", "text": f"question {number}: {TEXT}"},
        {
            "op": "insert",
            "selector": "d0, 1, 0",
            "component": {"content": f"document {number}: {TEXT}", "ttl": 2, "tags": ["doc"]},
        },
        {"op": "message", "role": "assistant", "text": f"answer {number}: {TEXT}"},
        {"op": "advance"},
    ]
    if number % 10 == 9:
        commands.append({"op": "seal", "trigger": "checkpoint"})
    if windowed and number >= WINDOW:  # two turns an exchange: keep twenty exchanges
        # Only once the window is full: before the twentieth exchange nothing is at depths
        # 40-41, and a delete that matches nothing is refused (NOT_FOUND).
        commands.append({"op": "delete", "selector": "d40-41, *, *"})
    return commands


def agent_batches(names: list[str]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Each agent in turn, a batch of its exchanges at a time, for ever."""
    for first in itertools.count(0, CYCLES_PER_BATCH):
        for index, name in enumerate(names):
            cycles = range(first, first + CYCLES_PER_BATCH)
            yield name, [c for n in cycles for c in agent_cycle(n, windowed=index >= GROWING)]


async def build_large_workspace(path: Path, total: int, tail: int) -> None:
    # The one checkpoint is taken by hand, ``tail`` events before the end.
    with checkpoints(CHECKPOINT_EVERY=NEVER, CHECKPOINT_ON_CLOSE=NEVER, INDEX_EVERY=NEVER):
        async with await Workspace.open(path, create=True, watch=False) as ws:
            names = [f"agent-{n}" for n in range(AGENTS)]
            for name in names:
                await ws.create_context(name)
                await ws.run_many(name, agent_setup(), actor=name)
            batches = agent_batches(names)
            # A batch cut at the checkpoint goes on after it: each agent's script runs whole and
            # in order (its window is full from its twentieth exchange, as agent_cycle counts).
            left: tuple[str, list[dict[str, Any]]] | None = None
            for until in (total - tail, total):
                while ws.head < until:
                    name, batch = left or next(batches)
                    cut = until - ws.head
                    await ws.run_many(name, batch[:cut], actor=name)
                    left = (name, batch[cut:]) if batch[cut:] else None
                if until < total:
                    await ws.checkpoint()


async def timed_open(path: str, mode: str) -> dict[str, Any]:
    """How long ``Workspace.open`` takes (``mode``: "checkpoint" or "replay", with checkpoint
    loading disabled), and what it arrives at."""
    disabled = {
        "INDEX_CHECKPOINT": "bench:loading-disabled",
        "CONTEXT_CHECKPOINT": "bench:loading-disabled:",
    }
    loading = {} if mode == "checkpoint" else disabled
    # Every opening sees the same tail: nothing is saved on closing.
    with checkpoints(CHECKPOINT_ON_CLOSE=NEVER, **loading):
        start = time.perf_counter()
        ws = await Workspace.open(path, watch=False)
        seconds = time.perf_counter() - start
        try:
            infos = ws.contexts()
            exports = [ws.context(info.name).model_dump_json() for info in infos]
            saved = [
                await ws.store.load_checkpoint(CONTEXT_CHECKPOINT + info.name) for info in infos
            ]
            sizes = [len(c.data) for c in saved if c is not None]
            seqs = [c.seq for c in saved if c is not None]
            return {
                "seconds": seconds,
                "head": ws.head,
                "digest": hashlib.sha256("\n".join(exports).encode()).hexdigest(),
                "contexts": len(infos),
                "items": [info.items for info in infos],
                "snapshots": sum(info.snapshots for info in infos),
                "checkpoint": [sum(sizes), max(seqs)] if seqs else None,
            }
        finally:
            await ws.store.close()  # not the workspace: nothing saved, not even the index


def bench_reopen(directory: Path) -> Path:
    total, tail = TOTAL_EVENTS, TAIL
    print(
        f"1. reopening a workspace of {total:,} events:"
        f" checkpoint + {tail:,}-event tail vs full replay"
    )
    path = directory / "large.pact"
    start = time.perf_counter()
    in_a_fresh_process(ROLE_MODULE, "build", path, total, tail)
    print(
        f"  (built through Workspace.run_many in {fmt(time.perf_counter() - start)};"
        f" file {path.stat().st_size / 1e6:.0f} MB)"
    )
    # Each opening in a process of its own, the replay between the reopenings.
    first = in_a_fresh_process(ROLE_MODULE, "open", path, "checkpoint")
    replay = in_a_fresh_process(ROLE_MODULE, "open", path, "replay")
    reopens = [first, in_a_fresh_process(ROLE_MODULE, "open", path, "checkpoint")]
    reopens.append(in_a_fresh_process(ROLE_MODULE, "open", path, "checkpoint"))
    assert replay["head"] == total
    for run in reopens:  # the same state either way
        assert (run["head"], run["digest"]) == (replay["head"], replay["digest"])
    size, seq = first["checkpoint"]
    print(
        f"  {first['contexts']} contexts, {sum(first['items']):,} live items"
        f" (largest {max(first['items']):,}), {first['snapshots']:,} snapshots;"
        f" checkpoints {size / 1e6:.1f} MB, the latest at event {seq:,}"
    )
    reopen_s = statistics.median(run["seconds"] for run in reopens)
    report_ratio(
        "reopen with checkpoint vs full replay",
        reopen_s,
        replay["seconds"],
        0.1,
        anchor_label="full replay",
    )
    return path


# 2. One command's latency


def bench_run_latency(directory: Path, large: Path) -> None:
    commands = sized(1_000, 30)
    print(f"2. one Workspace.run command's latency ({commands:,} commands)")
    run_samples, sizes = asyncio.run(_run_latencies(directory / "latency.pact", commands))
    append_samples = asyncio.run(_append_latencies(directory / "append.pact", sizes))
    on_large = f"context: on the {TOTAL_EVENTS:,}-event workspace"
    rows = [
        ("Workspace.run", run_samples),
        ("raw store.append of one event of the same size (anchor)", append_samples),
    ]
    with checkpoints(CHECKPOINT_ON_CLOSE=NEVER):  # leave its checkpoint as it is
        for name, kind in (("agent-0", "keeping everything"), (f"agent-{AGENTS - 1}", "windowed")):
            samples, _ = asyncio.run(_run_latencies(large, sized(300, 10), name=name, fresh=False))
            rows.append((f"{on_large}, {name} ({kind})", samples))
    for label, samples in rows:
        print(
            f"  {label}: median {fmt(statistics.median(samples))},"
            f" p95 {fmt(percentile(samples, 0.95))}"
        )
    ratio = statistics.median(run_samples) / statistics.median(append_samples)
    print(f"  Workspace.run ÷ raw append, ratio of medians {ratio:.1f} (printed, no target)")


async def _run_latencies(
    path: Path, commands: int, *, name: str = "agent-0", fresh: bool = True
) -> tuple[list[float], list[int]]:
    """Seconds of each ``Workspace.run`` of an agent's script, and each event's payload size."""
    samples, sizes = [], []
    async with await Workspace.open(path, create=fresh, watch=False) as ws:
        if fresh:
            await ws.create_context(name)
            await ws.run_many(name, agent_setup())
        windowed = fresh or int(name.removeprefix("agent-")) >= GROWING
        # On the built workspace the agent's window is already full: it deletes from the start.
        first = 0 if fresh else WINDOW
        script = (c for number in itertools.count(first) for c in agent_cycle(number, windowed))
        for command in itertools.islice(script, commands):
            start = time.perf_counter()
            result = await ws.run(name, command)
            samples.append(time.perf_counter() - start)
            sizes.append(len(canonical_json({"command": command, "result": result.to_json()})))
    return samples, sizes


async def _append_latencies(path: Path, sizes: list[int]) -> list[float]:
    samples = []
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        for size in sizes:
            event = NewEvent("ctx:agent-0", "context.insert", {"text": "x" * size}, "agent-0")
            start = time.perf_counter()
            await store.append([event])
            samples.append(time.perf_counter() - start)
    return samples


# 3. Change-feed latency across processes


def bench_feed_latency(directory: Path) -> None:
    rounds, burst = sized(200, 5), sized(500, 10)
    print(
        "3. change-feed latency, Workspace.run here to Workspace.changes() in another process"
        f" ({rounds} commands)"
    )
    feed_ms = asyncio.run(_feed_round_trips(directory / "feed.pact", rounds))
    burst_ms = asyncio.run(_feed_burst(directory / "burst.pact", burst))
    watch_ms = asyncio.run(raw_watch_round_trips(directory / "raw-watch", rounds))
    labels = (
        "Workspace.run to changes(), one command at a time",
        "raw watchfiles, one file append at a time (anchor)",
        f"Workspace.run to changes(), {burst} commands back to back",
    )
    report_feed("workspace change-feed latency", feed_ms, burst_ms, watch_ms, labels)


async def _open_with_context(path: Path) -> tuple[Workspace, Iterator[dict[str, Any]]]:
    ws = await Workspace.open(path, create=True, watch=False)
    await ws.create_context("agent")
    script = (c for number in itertools.count() for c in agent_cycle(number, windowed=True))
    return ws, script


async def _feed_round_trips(path: Path, rounds: int) -> list[float]:
    ws, script = await _open_with_context(path)
    try:
        follower = await start_follower("bench.bench_workspace", "follow", path, WARM_UP + rounds)
        latencies = []
        for round_ in range(WARM_UP + rounds):
            committing = monotonic_ns()  # taken before the command, so it includes it all
            await ws.run("agent", next(script))
            seq, delivered = await received_at(follower)
            assert seq == ws.head
            if round_ >= WARM_UP:
                latencies.append((delivered - committing) / 1e6)
        await follower.wait()
    finally:
        await ws.close()
    return latencies


async def _feed_burst(path: Path, commands: int) -> list[float]:
    ws, script = await _open_with_context(path)
    try:
        follower = await start_follower("bench.bench_workspace", "follow", path, WARM_UP + commands)
        for _ in range(WARM_UP):
            await ws.run("agent", next(script))
            await received_at(follower)
        committing = {}
        for _ in range(commands):
            started = monotonic_ns()
            await ws.run("agent", next(script))
            committing[ws.head] = started
        latencies = []
        for _ in range(commands):
            seq, delivered = await received_at(follower)
            latencies.append((delivered - committing[seq]) / 1e6)
        await follower.wait()
    finally:
        await ws.close()
    return latencies


async def follow(path: str, count: int) -> None:
    """The other process of benchmark 3: each event's seq and arrival time, via changes()."""
    async with await Workspace.open(path) as ws:
        start = ws.head
        print("ready", flush=True)
        received = 0
        async for change in ws.changes(after=start):
            at = monotonic_ns()
            for event in change.events:
                print(event.seq, at, flush=True)
            received += len(change.events)
            if received >= count:
                return


# 4. One command on a big workspace, as a whole process


SCALED_ITEMS = sized(100_000, 1_000)
COMMAND_RUNS = sized(9, 1)  # commands in a row on each workspace after the first (steady state)
SMALL_CONTEXT: list[dict[str, Any]] = [
    {"op": "insert", "selector": "d-1, 0, 0", "component": {"content": "You are brief."}},
    *(
        command
        for n in range(4)
        for command in (
            {"op": "message", "role": "user", "text": f"question {n}"},
            {"op": "message", "role": "assistant", "text": f"answer {n}"},
        )
    ),
    {"op": "insert", "selector": "d0, 1, 0", "component": {"content": "a note", "key": "note"}},
]  # ten items


def commands_in_a_row(
    commands: Mapping[str, tuple[object, ...]], runs: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Each command once (the first after building), then ``runs`` more times, taking turns so
    that the machine's ups and downs fall on all alike: the first times, and the medians."""
    first = {label: pact_tui_seconds(*args) for label, args in commands.items()}
    samples: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, args in commands.items():
            samples[label].append(pact_tui_seconds(*args))
    return first, {label: statistics.median(times) for label, times in samples.items()}


def bench_one_command(directory: Path) -> None:
    print(
        f"4. one pact-tui ctx command, as a whole process, on a workspace holding a"
        f" {SCALED_ITEMS:,}-item context and a 10-item one vs a workspace holding only the"
        " 10-item one"
    )
    big, small = directory / "scaled.pact", directory / "small.pact"
    start = time.perf_counter()
    in_a_fresh_process(ROLE_MODULE, "build-scaled", big, SCALED_ITEMS)
    in_a_fresh_process(ROLE_MODULE, "build-scaled", small, 0)
    print(
        f"  (built in {fmt(time.perf_counter() - start)}: {big.stat().st_size / 1e6:.0f} MB"
        f" and {small.stat().st_size / 1e6:.2f} MB)"
    )
    commands = {
        "small on small": ("ctx", "user", small, "small", "one more question"),
        "small on big": ("ctx", "user", big, "small", "one more question"),
        "big on big": ("ctx", "user", big, "researcher", "one more question"),
        "list on small": ("ctx", "list", small),
        "list on big": ("ctx", "list", big),
    }
    first, median = commands_in_a_row(commands, COMMAND_RUNS)
    print(
        "  first command after building (not in the figures): "
        + ", ".join(f"{label} {fmt(seconds)}" for label, seconds in first.items())
    )
    print(f"  medians of {COMMAND_RUNS} commands in a row on each:")
    anchor = "ctx user on the 10-item workspace"
    report_ratio(
        "(a) ctx user on the 10-item context of the big workspace",
        median["small on big"],
        median["small on small"],
        2.0,
        anchor_label=anchor,
    )
    ratio = median["big on big"] / median["small on small"]
    print(
        f"  (b) ctx user on the {SCALED_ITEMS:,}-item context: {fmt(median['big on big'])}"
        f"  ÷  {anchor} {fmt(median['small on small'])}  =  {ratio:.2f}  (printed, no target)"
    )
    phases = [
        in_a_fresh_process(ROLE_MODULE, "breakdown", big, "researcher") for _ in range(sized(3, 1))
    ]
    in_process = statistics.median(sum(p.values()) for p in phases)
    parts = [(name, statistics.median(p[name] for p in phases)) for name in phases[0]]
    parts.append(("the rest: interpreter, imports, arguments", median["big on big"] - in_process))
    print("      where its time goes: " + ", ".join(f"{n} {fmt(t)}" for n, t in parts))
    saving = in_a_fresh_process(ROLE_MODULE, "breakdown", big, "researcher", "save")
    print(
        f"      one command in {cadence.CHECKPOINT_ON_CLOSE} also saves the context's"
        f" checkpoint on closing: close {fmt(saving['close (index, checkpoint)'])} then"
        " (not in the median above)"
    )
    ratio = median["list on big"] / median["list on small"]
    print(
        f"  (c) ctx list on the big workspace: {fmt(median['list on big'])}"
        f"  ÷  on the 10-item workspace {fmt(median['list on small'])}  =  {ratio:.2f}"
        "  (printed, no target)"
    )
    told = in_a_fresh_process(ROLE_MODULE, "story", big, "researcher")
    print(
        f"  (d) an item's story read from the story index on the {SCALED_ITEMS:,}-item context"
        " (issue 27: 18.3 s for the oldest item when it was replayed):"
    )
    print(
        f"      the story index decoded (the app does it while idle) {fmt(told['decode'])};"
        f" the oldest item {fmt(told['oldest'])};"
        f" the newest {fmt(told['newest'])}; an item placed now {fmt(told['placed'])}, again"
        f" after one more command {fmt(told['again'])}"
    )
    read = f"one event read from the log {fmt(told['read'])}"
    report_limit(
        "(d) any item's story, slowest of all these",
        1e3
        * max(
            told[label] for label in ("oldest", "newest", "median", "slowest", "placed", "again")
        ),
        50,
        "ms",
        anchor_text=f"median of 50 items {fmt(told['median'])}; {read}",
    )
    oldest = "#finding_0"  # the researcher's first round
    story_args = ("ctx", "story", big, "researcher", oldest)
    select_args = ("ctx", "select", big, "researcher", oldest)
    _, processes = commands_in_a_row({"story": story_args, "select": select_args}, COMMAND_RUNS)
    report_ratio(
        f"(e) pact-tui ctx story {oldest} (the oldest item) ÷ pact-tui ctx select of it, whole"
        f" processes, median of {COMMAND_RUNS}",
        processes["story"],
        processes["select"],
        1.2,
        anchor_label="ctx select",
    )


async def build_scaled(path: Path, items: int) -> None:
    """Benchmark 4's workspaces: the demo's researcher context scaled to ``items`` items (none:
    left out), and a 10-item context ``small``, each written by commands as an agent would."""
    from pact_tui.demo import create_scaled_demo

    gc.disable()  # setup, not a figure: see build()
    if items:
        await create_scaled_demo(path, items)
    async with await Workspace.open(path, create=True, watch=False, lazy=True) as ws:
        await ws.create_context("small")
        await ws.run_many("small", SMALL_CONTEXT)


async def breakdown(path: str, name: str, save: bool = False) -> dict[str, float]:
    """Seconds of each phase of one ``ctx user`` command in this process, done as the command
    line does it: open lazily, load the context, run, close (with ``save``, as the command that
    brings the context CHECKPOINT_ON_CLOSE events past its checkpoint, which saves it)."""
    from engine.context.compact import PackedTurn
    from engine.context.context import Context

    spent: dict[str, float] = {}
    running: list[str] = []  # the timed phases under way, outermost first

    def timed(label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            running.append(label)
            try:
                return function(*args, **kwargs)
            finally:
                running.pop()
                took = time.perf_counter() - start
                spent[label] = spent.get(label, 0.0) + took
                if label == "unpack turns" and "index" in running:  # counted in "index" too
                    spent["unpack in index"] = spent.get("unpack in index", 0.0) + took

        return wrapper

    with (
        mock.patch.object(
            cadence, "CHECKPOINT_ON_CLOSE", 1 if save else cadence.CHECKPOINT_ON_CLOSE
        ),
        # Decoded where the index and a context's checkpoint are read (decode_checkpoint
        # splits first, too).
        mock.patch.object(
            checkpoints_module,
            "split_checkpoint",
            timed("decode (orjson)", checkpoints_module.split_checkpoint),
        ),
        # A context's turns are restored packed and decoded when first read: by indexing.
        mock.patch.object(PackedTurn, "unpack", timed("unpack turns", PackedTurn.unpack)),
        mock.patch(  # where the projection looks it up
            f"{projection_module.__name__}.load_compact",
            timed("load (compact form)", load_compact),
        ),
        mock.patch.object(Context, "_ensure_indexed", timed("index", Context._ensure_indexed)),
    ):
        start = time.perf_counter()
        ws = await Workspace.open(path, watch=False, lazy=True)
        opened = time.perf_counter()
        await ws.load(name)
        loaded = time.perf_counter()
        at_load = dict(spent)  # the phases below, as far as loading went
        await ws.run(name, {"op": "message", "role": "user", "text": "one more question"})
        ran = time.perf_counter()
        await ws.close()
        closed = time.perf_counter()
    decoded, unpacked = spent["decode (orjson)"], spent["load (compact form)"]
    # Turns are decoded as they are restored (those drawn first: in "load"), by indexing
    # during the tail's replay, and before the command (``Workspace.run_many``).
    turns = spent.get("unpack turns", 0.0)
    in_index = spent.get("unpack in index", 0.0)
    indexed = spent.get("index", 0.0)  # during the tail's replay or the command
    loading = sum(at_load.get(label, 0.0) for label in ("decode (orjson)", "load (compact form)"))
    indexed_loading = at_load.get("index", 0.0)
    unpacked_running = (turns - at_load.get("unpack turns", 0.0)) - (
        in_index - at_load.get("unpack in index", 0.0)
    )  # before the command, outside the indexing
    return {
        "open": opened - start,
        "read checkpoint and tail": loaded - opened - loading - indexed_loading,
        "decode (orjson)": decoded,
        "load (compact form)": unpacked,
        "unpack turns": turns,
        "index (without unpacking)": indexed - in_index,
        "command": ran - loaded - (indexed - indexed_loading) - unpacked_running,
        "close (index, checkpoint)": closed - ran,
    }


async def story(path: str, name: str) -> dict[str, float]:
    """Seconds to decode the context's story index (as the app does when idle), then to tell
    the story of the context's oldest item, of its newest, of 50 items spread over it (their
    median and slowest), of an item placed now (after the context's checkpoint) and of that
    one again after one more command; and, as the anchor, reading one event from the log
    (what a story reads a few of)."""
    ws = await Workspace.open(path, watch=False, lazy=True)
    try:
        await ws.load(name)
        ws.context(name).build_indexes()  # as the app does once the tree is shown
        items = sorted(
            (node for node in ws.context(name).select("*") if node.item is not None),
            key=lambda node: node.creation_index or 0,
        )
        start = time.perf_counter()
        ws.read_story_index(name)  # as the app does once the tree is shown
        timings: dict[str, float] = {"decode": time.perf_counter() - start}
        for label, item_id in (("oldest", items[0].id), ("newest", items[-1].id)):
            start = time.perf_counter()
            await ws.item_story(name, item_id)
            timings[label] = time.perf_counter() - start
        spread = []
        for node in items[:: max(1, len(items) // 50)]:
            start = time.perf_counter()
            await ws.item_story(name, node.id)
            spread.append(time.perf_counter() - start)
        timings["median"], timings["slowest"] = statistics.median(spread), max(spread)
        placed = await ws.run(name, {"op": "message", "role": "user", "text": "a new one"})
        assert isinstance(placed, Placed)
        start = time.perf_counter()
        await ws.item_story(name, placed.id)
        timings["placed"] = time.perf_counter() - start
        await ws.run(name, {"op": "advance"})
        start = time.perf_counter()
        await ws.item_story(name, placed.id)
        timings["again"] = time.perf_counter() - start
        reads = []
        for node in items[:: max(1, len(items) // 50)]:
            stories = ws._projection(name).stories
            assert stories is not None  # read above
            seq = stories.events(node.id)[0]
            start = time.perf_counter()
            await ws.store.read(seq - 1, limit=1)
            reads.append(time.perf_counter() - start)
        timings["read"] = statistics.median(reads)
        return timings
    finally:
        await ws.close()


async def story_role(path: str, name: str) -> None:
    print(json.dumps(await story(path, name)))


def main() -> None:
    print("Workspace (engine/workspace.py)")
    with tempfile.TemporaryDirectory(prefix="bench-workspace-") as scratch:
        directory = Path(scratch)
        start = time.perf_counter()
        large = bench_reopen(directory)
        print(f"  ({fmt(time.perf_counter() - start)} for this benchmark)")
        benchmarks = (lambda d: bench_run_latency(d, large), bench_feed_latency, bench_one_command)
        for benchmark in benchmarks:
            start = time.perf_counter()
            benchmark(directory)
            print(f"  ({fmt(time.perf_counter() - start)} for this benchmark)")


async def build(path: str, total: str, tail: str) -> None:
    """The process that builds benchmark 1's workspace. Building is setup, not a figure: the
    collector would only rescan the growing heap, so it is off."""
    gc.disable()
    await build_large_workspace(Path(path), int(total), int(tail))
    # Nor is the collection the interpreter makes on exiting: the heap dies with the process.
    gc.freeze()
    print(json.dumps({"built": path}))


async def open_role(path: str, mode: str) -> None:
    print(json.dumps(await timed_open(path, mode)))


async def build_scaled_role(path: str, items: str) -> None:
    await build_scaled(Path(path), int(items))
    print(json.dumps({"built": path}))


async def breakdown_role(path: str, name: str, save: str = "") -> None:
    print(json.dumps(await breakdown(path, name, save == "save")))


def commands_only() -> None:
    """Benchmark 4 alone: ``python -m bench.bench_workspace commands``."""
    print("Workspace (engine/workspace.py), benchmark 4 only")
    with tempfile.TemporaryDirectory(prefix="bench-workspace-") as scratch:
        start = time.perf_counter()
        bench_one_command(Path(scratch))
        print(f"  ({fmt(time.perf_counter() - start)} for this benchmark)")


ROLES: dict[str, Callable[..., Coroutine[Any, Any, None]]] = {
    "follow": lambda path, count: follow(path, int(count)),
    "build": build,
    "open": open_role,
    "build-scaled": build_scaled_role,
    "breakdown": breakdown_role,
    "story": story_role,
}

if __name__ == "__main__":
    if sys.argv[1:] == ["commands"]:
        commands_only()
    elif len(sys.argv) > 2 and sys.argv[1] in ROLES:
        asyncio.run(ROLES[sys.argv[1]](*sys.argv[2:]))
    else:
        main()
