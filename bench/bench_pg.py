"""The workspace on PostgreSQL (issue 29). Run: ``python -m bench pg``.

A PostgreSQL 15 server is started for the run from the machine's binaries (as for the tests,
``tests/postgres_server.py``), with its durability settings on (fsync, synchronous commit), on a
unix socket. Each figure is printed next to an anchor measured in the same run:

1. batched appends: 10,000 events in one ``store.append`` ÷ raw asyncpg ``executemany`` of the
   same rows (already linked and hashed) in one transaction into the same table: throughput
   ratio ≥ 0.4. Medians of five interleaved runs after an untimed warm-up, each on a fresh
   database;
2. one command's append latency (one event, ``store.append``), p50 and p95, printed beside the
   SQLite store's on a file (no target: SQLite's ``synchronous=NORMAL`` syncs at checkpoints,
   PostgreSQL's commit waits for its WAL flush);
3. a commit in this process (timed from before it) to its delivery by another process's change
   feed (LISTEN/NOTIFY): p95 ≤ 50 ms, with two anchors from here to a raw ``LISTEN`` there: a
   raw ``NOTIFY``, and a raw commit of one row with its ``NOTIFY`` (the WAL flush a commit waits
   for is in the feed's figure too);
4. reopening a workspace of ``PACT_BENCH_PG_EVENTS`` events (1,000,000 unless set) from its
   checkpoint ÷ a full replay, both on PostgreSQL: ≤ 0.1. The workspace is built through
   ``Workspace.run_many`` on a file (the agents of ``bench.bench_workspace``; ``build`` says
   why its collector is paused), then copied into the database with ``pact-tui backup``'s copy
   (``COPY``); each opening is ``bench.bench_workspace open`` in a fresh process.

``python -m bench --tiny`` runs each benchmark once at a few hundred events (2,000 for 4).

The module is also the other process of benchmark 3: ``python -m bench.bench_pg follow URL N``.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg

from bench.common import (
    WARM_UP,
    fmt,
    in_a_fresh_process,
    monotonic_ns,
    percentile,
    report_limit,
    report_ratio,
    sized,
    start_follower,
)
from engine.store import NewEvent, SqliteEventStore
from engine.store.chain import CHAIN_COLUMNS, ChainHead, ChainRow, encode_events
from engine.store.copy import copy_workspace
from engine.store.postgres import PostgresEventStore
from tests.postgres_server import PostgresServer, binaries_missing

ANCHOR_CHANNEL = "bench_anchor"
_databases = iter(range(1, 10**6))


@contextmanager
def server() -> Iterator[PostgresServer]:
    missing = binaries_missing()
    if missing is not None:
        raise SystemExit(f"cannot run: {missing}")
    with PostgresServer(fsync=True) as started:
        yield started


async def new_database(server: PostgresServer) -> str:
    name = f"bench_{next(_databases)}"
    connection = await asyncpg.connect(server.url())
    try:
        await connection.execute(f"CREATE DATABASE {name} TEMPLATE template0")
    finally:
        await connection.close()
    return server.url(name)


def sample_events(count: int) -> list[NewEvent]:
    """Context-sized events, as bench_store makes them."""
    return [
        NewEvent(
            stream=f"ctx:agent-{n % 10}",
            type="node_inserted",
            payload={
                "node": f"n{n}",
                "text": "a component of the agent's context " * 2,
                "slot": n % 7,
                "tags": ["bench", f"p{n % 3}"],
            },
            actor=f"agent-{n % 10}",
        )
        for n in range(count)
    ]


def linked_rows(events: list[NewEvent]) -> list[ChainRow]:
    """The rows the store would insert for ``events`` into an empty log."""
    checked, payloads = encode_events(events)
    head = ChainHead(stream_lengths={event.stream: 0 for event in checked})
    _stored, rows = head.link(checked, payloads, time.time_ns())
    return rows


# 1. Batched appends


async def _store_batch(url: str, events: list[NewEvent]) -> float:
    async with await PostgresEventStore.open(url, create=True, watch=False) as store:
        gc.collect()
        start = time.perf_counter()
        await store.append(events)
        return time.perf_counter() - start


async def _raw_batch(url: str, rows: list[ChainRow]) -> float:
    async with await PostgresEventStore.open(url, create=True, watch=False):
        pass  # the same table, made by the store
    connection = await asyncpg.connect(url)
    try:
        placeholders = ", ".join(f"${n}" for n in range(1, 10))
        gc.collect()
        start = time.perf_counter()
        async with connection.transaction():
            await connection.executemany(
                f"INSERT INTO events ({CHAIN_COLUMNS}) VALUES ({placeholders})", rows
            )
        return time.perf_counter() - start
    finally:
        await connection.close()


async def bench_batched_appends(server: PostgresServer) -> None:
    total, repeat = sized(10_000, 200), sized(5, 1)
    print(
        f"1. batched appends: {total:,} events in one store.append vs raw asyncpg executemany"
        " of the same rows, one transaction"
    )
    events = sample_events(total)
    rows = linked_rows(events)
    await _store_batch(await new_database(server), events)  # warm-up, untimed
    await _raw_batch(await new_database(server), rows)
    store_s, raw_s = [], []
    for _ in range(repeat):
        store_s.append(await _store_batch(await new_database(server), events))
        raw_s.append(await _raw_batch(await new_database(server), rows))
    store_rate = total / statistics.median(store_s)
    raw_rate = total / statistics.median(raw_s)
    report_ratio(
        "batched appends vs raw executemany",
        store_rate,
        raw_rate,
        0.4,
        at_most=False,
        unit=lambda rate: f"{rate:,.0f} events/s",
        anchor_label="raw executemany",
    )


# 2. One command's append latency


async def _latencies(store: Any, count: int) -> list[float]:
    for _ in range(WARM_UP):
        await store.append(sample_events(1))
    samples = []
    for event in sample_events(count):
        start = time.perf_counter()
        await store.append([event])
        samples.append(time.perf_counter() - start)
    return samples


async def bench_append_latency(server: PostgresServer, directory: Path) -> None:
    count = sized(500, 10)
    print(f"2. one command's append latency ({count} appends of one event)")
    async with await PostgresEventStore.open(
        await new_database(server), create=True, watch=False
    ) as store:
        postgres = await _latencies(store, count)
    async with await SqliteEventStore.open(
        directory / "latency.pact", create=True, watch=False
    ) as store:
        sqlite = await _latencies(store, count)
    for label, samples in (("PostgreSQL", postgres), ("SQLite (beside it)", sqlite)):
        print(
            f"  {label}: p50 {fmt(statistics.median(samples))},"
            f" p95 {fmt(percentile(samples, 0.95))}, max {fmt(max(samples))}"
        )


# 3. Commit here → another process's feed


async def follow(url: str, count: str) -> None:
    """The other process of benchmark 3: print ``<seq> <ns>`` for each event its feed hands
    out, and ``anchor <ns>`` for each raw notification on ANCHOR_CHANNEL (two a round); it ends
    once it has printed ``count`` of each kind (the last round's anchors come after its event:
    ending at the event left them unanswered, now and then)."""
    anchors = 0
    all_anchors = asyncio.Event()

    def anchored(*_args: object) -> None:
        nonlocal anchors
        print("anchor", monotonic_ns(), flush=True)
        anchors += 1
        if anchors == 2 * int(count):
            all_anchors.set()

    listener = await asyncpg.connect(url)
    await listener.add_listener(ANCHOR_CHANNEL, anchored)
    async with (
        await PostgresEventStore.open(url) as store,
        store.subscribe(await store.head()) as events,
    ):
        await asyncio.sleep(0)  # the feed's listener starts with the first wait below
        print("ready", flush=True)
        received = 0
        async for event in events:
            print(event.seq, monotonic_ns(), flush=True)
            received += 1
            if received == int(count):
                break
    async with asyncio.timeout(30):  # failure guard
        await all_anchors.wait()
    await listener.close()


async def _line(process: asyncio.subprocess.Process) -> list[bytes]:
    assert process.stdout is not None
    async with asyncio.timeout(30):  # failure guard
        return (await process.stdout.readline()).split()


async def bench_feed_latency(server: PostgresServer) -> None:
    rounds = sized(300, 5)
    print(
        f"3. a commit here to another process's change feed ({rounds} commits, one at a time),"
        " timed from before the commit; anchors from this process to a raw LISTEN in that one:"
        " a raw NOTIFY, and a raw commit of one row with its NOTIFY (the same WAL flush)"
    )
    url = await new_database(server)
    async with await PostgresEventStore.open(url, create=True, watch=False) as store:
        notifier = await asyncpg.connect(url)
        await notifier.execute("CREATE TABLE bench_anchor (n integer)")
        follower = await start_follower("bench.bench_pg", "follow", url, WARM_UP + rounds)
        feed_ms: list[float] = []
        raw_ms: list[float] = []
        commit_ms: list[float] = []

        async def anchor(samples: list[float], durable: bool, keep: bool) -> None:
            sent = monotonic_ns()
            if durable:
                async with notifier.transaction():
                    await notifier.execute("INSERT INTO bench_anchor VALUES (1)")
                    await notifier.execute(f"NOTIFY {ANCHOR_CHANNEL}")
            else:
                await notifier.execute(f"NOTIFY {ANCHOR_CHANNEL}")
            word, at = await _line(follower)
            assert word == b"anchor"
            if keep:
                samples.append((int(at) - sent) / 1e6)

        try:
            for round_ in range(WARM_UP + rounds):
                keep = round_ >= WARM_UP
                sent = monotonic_ns()
                [stored] = await store.append(sample_events(1))
                seq, at = await _line(follower)
                assert int(seq) == stored.seq
                if keep:
                    feed_ms.append((int(at) - sent) / 1e6)
                await anchor(raw_ms, durable=False, keep=keep)
                await anchor(commit_ms, durable=True, keep=keep)
        finally:
            await notifier.close()
            await follower.wait()
    for label, samples in (
        ("feed", feed_ms),
        ("raw NOTIFY (anchor)", raw_ms),
        ("raw commit + NOTIFY (anchor)", commit_ms),
    ):
        print(
            f"  {label}: p50 {statistics.median(samples):.1f} ms,"
            f" p95 {percentile(samples, 0.95):.1f} ms, max {max(samples):.1f} ms"
        )
    report_limit(
        "commit to another process's feed p95",
        percentile(feed_ms, 0.95),
        50,
        "ms",
        anchor_text=f"raw NOTIFY p95 {percentile(raw_ms, 0.95):.1f} ms, raw commit + NOTIFY"
        f" p95 {percentile(commit_ms, 0.95):.1f} ms",
    )


# 4. Reopening from the checkpoint vs a full replay


def bench_reopen(server: PostgresServer, directory: Path) -> None:
    total = int(os.environ.get("PACT_BENCH_PG_EVENTS", sized(1_000_000, 2_000)))
    tail = sized(2_500, 100)
    scaled = "" if total == 1_000_000 else " (scaled down from 1,000,000)"
    print(
        f"4. reopening a workspace of {total:,} events on PostgreSQL: checkpoint +"
        f" {tail:,}-event tail vs full replay{scaled}"
    )
    path = directory / "large.pact"
    start = time.perf_counter()
    in_a_fresh_process("bench.bench_pg", "build", path, total, tail)
    built = time.perf_counter() - start
    url = asyncio.run(new_database(server))
    start = time.perf_counter()
    copied = asyncio.run(copy_workspace(path, url, replace=False))
    print(
        f"  (built on a file in {fmt(built)}; copied into the database in"
        f" {fmt(time.perf_counter() - start)}, {copied.size / 1e6:.0f} MB)"
    )
    first = in_a_fresh_process("bench.bench_workspace", "open", url, "checkpoint")
    replay = in_a_fresh_process("bench.bench_workspace", "open", url, "replay")
    reopens = [first, in_a_fresh_process("bench.bench_workspace", "open", url, "checkpoint")]
    reopens.append(in_a_fresh_process("bench.bench_workspace", "open", url, "checkpoint"))
    assert replay["head"] == total
    for run in reopens:  # the same state either way
        assert (run["head"], run["digest"]) == (replay["head"], replay["digest"])
    report_ratio(
        "reopen with checkpoint vs full replay (PostgreSQL)",
        statistics.median(run["seconds"] for run in reopens),
        replay["seconds"],
        0.1,
        anchor_label="full replay",
    )


async def build(path: str, total: str, tail: str) -> None:
    """The large workspace of benchmark 4 (in a process of its own): bench_workspace's agents,
    its windowed ones deleting their oldest exchange once they have twenty; the one checkpoint
    taken ``tail`` events before the end.

    Every event is made by ``Workspace.run_many``, as an agent's process makes it. The cyclic
    collector is paused during each batch and what the batch left alive is frozen after it
    (``heap.collector_paused``, as loading does): a collection walked the whole growing heap
    again and again, 36% of the CPU time at 60,000 events, most of it near 1,000,000 (the build
    had reached 276k events in 12 minutes). Which events are made is unchanged, and each
    opening measured runs in a process of its own."""
    from bench.bench_workspace import AGENTS, GROWING, NEVER, agent_cycle, agent_setup
    from bench.bench_workspace import checkpoints as checkpoint_settings
    from engine.heap import collector_paused
    from engine.workspace import Workspace

    names = [f"agent-{n}" for n in range(AGENTS)]

    def batches() -> Iterator[tuple[str, list[dict[str, Any]]]]:
        for first in itertools.count(0, 50):
            for index, name in enumerate(names):
                yield (
                    name,
                    [
                        command
                        for n in range(first, first + 50)
                        for command in agent_cycle(n, windowed=index >= GROWING and n >= 20)
                    ],
                )

    with checkpoint_settings(CHECKPOINT_EVERY=NEVER, CHECKPOINT_ON_CLOSE=NEVER, INDEX_EVERY=NEVER):
        async with await Workspace.open(path, create=True, watch=False) as ws:
            for name in names:
                await ws.create_context(name)
                await ws.run_many(name, agent_setup(), actor=name)
            made = batches()
            for until in (int(total) - int(tail), int(total)):
                while ws.head < until:
                    name, batch = next(made)
                    with collector_paused(freeze=True):
                        await ws.run_many(name, batch[: until - ws.head], actor=name)
                if until < int(total):
                    await ws.checkpoint()
    print("{}")


def main() -> None:
    print("The workspace on PostgreSQL (engine/store/postgres.py)")
    with server() as started, tempfile.TemporaryDirectory(prefix="bench-pg-") as scratch:
        directory = Path(scratch)
        benchmarks: tuple[tuple[str, Callable[[], object]], ...] = (
            ("1", lambda: asyncio.run(bench_batched_appends(started))),
            ("2", lambda: asyncio.run(bench_append_latency(started, directory))),
            ("3", lambda: asyncio.run(bench_feed_latency(started))),
            ("4", lambda: bench_reopen(started, directory)),
        )
        for name, run in benchmarks:
            if os.environ.get("PACT_BENCH_PG_ONLY", name) != name:
                continue
            start = time.perf_counter()
            run()
            print(f"  ({fmt(time.perf_counter() - start)} for this benchmark)")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "follow":
        asyncio.run(follow(sys.argv[2], sys.argv[3]))
    elif len(sys.argv) == 5 and sys.argv[1] == "build":
        asyncio.run(build(*sys.argv[2:]))
    else:
        main()
