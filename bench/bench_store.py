"""Event-store benchmarks (issue 3). Run: ``python -m bench.bench_store``.

Each figure is printed next to an anchor measured in the same run on the same machine:

1. batched appends ÷ the same rows made by hand, one transaction: throughput ratio ≥ 0.9. The
   anchor is what a careful user of the format would write: a plain loop over the same events
   that makes each row with canonical ``json.dumps`` and ``hashlib.sha256`` (the payload's text
   spliced into the envelope, as the store does; the warm-up checks the rows are the store's),
   then one ``executemany`` in one transaction, on a fresh file with the store's schema and
   pragmas. Both sides do the same JSON and hashing, so the ratio is the store's own overhead
   (checks, the writer thread, the chain head, the feed). "Batched" is the 10,000 events in
   one ``store.append``, the store's public path. Printed beside it without targets: raw
   ``executemany`` of the rows already made (the least any writer pays), batches of 1,000, and
   commands of 100 through ``store.execute`` (per-command overhead). After one untimed warm-up
   round of each, the medians of nine interleaved runs;
2. one command's append latency, median and p95, next to a raw sqlite3 single-row
   INSERT + COMMIT with the same pragmas;
3. reopening a 1,000,000-event store with a checkpoint (load it, replay the tail) ÷ a full
   replay, for a trivial fold: ≤ 0.1;
4. change-feed latency from a commit in this process to delivery in another: p95 ≤ 100 ms,
   next to the raw watchfiles latency for a plain file append.

The module is also the other process of benchmark 4: ``python -m bench.bench_store follow …``.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from bench.common import (
    WARM_UP,
    fmt,
    monotonic_ns,
    percentile,
    raw_watch_round_trips,
    received_at,
    report_feed,
    report_ratio,
    sized,
    start_follower,
)
from engine.canonical import canonical_json
from engine.store import NewEvent, SqliteEventStore, StoredEvent
from engine.store.chain import CHAIN_COLUMNS, GENESIS_HASH, ChainRow, event_hash
from engine.store.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION

INSERT = (
    "INSERT INTO events (seq, stream, stream_seq, type, time_ns, actor, payload, prev_hash, hash)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def raw_connection(path: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection set up as the store sets up its writer, with its schema."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    for version in range(1, SCHEMA_VERSION + 1):  # every step, as a new file gets them
        for statement in MIGRATIONS[version]:
            connection.execute(statement)
    connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return connection


def sample_events(count: int) -> list[NewEvent]:
    """Context-sized events: ten streams, a node id, a line of text, a few numbers."""
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


# 1. Batched appends


def bench_batched_appends(directory: Path) -> None:
    total, small_batch, per_command = sized(10_000, 200), sized(1_000, 20), sized(100, 10)
    repeat = sized(9, 1)
    print(
        f"1. batched appends: {total:,} events as one batch (one store.append, one transaction)"
        " vs the same rows made by hand (json.dumps + hashlib + executemany, one transaction)"
    )
    events = sample_events(total)
    times: dict[str, list[float]] = {}

    def measure(label: str, run: Callable[..., float], *args: Any) -> None:
        gc.collect()  # untimed: every run starts from the same heap, whatever ran before it
        times.setdefault(label, []).append(run(*args))

    # One untimed round first, for every side: the first store of a process starts its writer
    # thread, the first file warms the page cache, and either cold start would otherwise land
    # in the figures. It also checks that the anchor makes the rows the store makes.
    _warm_up(directory, events, total)

    def in_store(write: Callable[..., Coroutine[Any, Any, float]], *args: Any) -> float:
        return asyncio.run(write(*args))

    for run in range(repeat):
        path = directory / f"batch-{run}.pact"
        measure("batch", in_store, _append_with_store, path, events, total)
        measure("by hand", _make_rows_and_insert, directory / f"hand-{run}.db", events)
        rows = _stored_rows(path)
        # Context: a fresh file like the store's, the same schema and pragmas, the rows as the
        # store wrote them (hashes included), only inserted.
        measure("raw", _insert_raw, directory / f"raw-{run}.db", rows, total)
        for size in (small_batch, per_command):
            measure(f"raw {size}", _insert_raw, directory / f"raw{size}-{run}.db", rows, size)
        measure(
            f"batch {small_batch}",
            in_store,
            _append_with_store,
            directory / f"batches-{run}.pact",
            events,
            small_batch,
        )
        measure(
            "commands",
            in_store,
            _execute_with_store,
            directory / f"commands-{run}.pact",
            events,
            per_command,
        )
    median = {label: statistics.median(samples) for label, samples in times.items()}

    store_s, hand_s, raw_s = median["batch"], median["by hand"], median["raw"]
    print(f"  store.append, one batch of {total:,}: {fmt(store_s)} = {total / store_s:,.0f} ev/s")
    print(
        f"  by hand, the same rows made in a plain loop, one transaction: {fmt(hand_s)}"
        f" = {total / hand_s:,.0f} ev/s"
    )
    report_ratio(
        "batched appends, throughput vs the same rows made by hand",
        total / store_s,
        total / hand_s,
        0.9,
        at_most=False,
        unit=lambda rate: f"{rate:,.0f} ev/s",
        anchor_label="by hand",
    )
    print(
        f"  context: raw executemany of the rows already made, one transaction: {fmt(raw_s)}"
        f" = {total / raw_s:,.0f} ev/s (store ratio to it {raw_s / store_s:.2f},"
        f" by hand {raw_s / hand_s:.2f})"
    )
    # Context, no targets: smaller transactions.
    for label, raw_label, what in (
        (
            f"batch {small_batch}",
            f"raw {small_batch}",
            f"store.append in batches of {small_batch:,}",
        ),
        ("commands", f"raw {per_command}", f"store.execute, commands of {per_command}"),
    ):
        size = int(raw_label.split()[1])
        print(
            f"  context: {what} ({total // size} transactions): {fmt(median[label])}"
            f" (ratio to raw one transaction {raw_s / median[label]:.2f}; raw, {size:,} rows per"
            f" transaction: {fmt(median[raw_label])}, ratio to it"
            f" {median[raw_label] / median[label]:.2f})"
        )


def _warm_up(directory: Path, events: list[NewEvent], total: int) -> None:
    path = directory / "warm-up.pact"
    asyncio.run(_append_with_store(path, events, total))
    rows = _stored_rows(path)
    _insert_raw(directory / "warm-up.db", rows, total)
    # The anchor, given the time the store stamped, must make exactly the store's rows.
    by_hand = directory / "warm-up-hand.db"
    _make_rows_and_insert(by_hand, events, now=rows[0][4])
    assert _stored_rows(by_hand) == rows, "the anchor does not make the store's rows"


def _stored_rows(path: Path) -> list[Any]:
    with closing(sqlite3.connect(path)) as source:
        return source.execute(f"SELECT {CHAIN_COLUMNS} FROM events ORDER BY seq").fetchall()


async def _append_with_store(path: Path, events: list[NewEvent], per_batch: int) -> float:
    """``store.append`` of ``events`` in batches of ``per_batch``, one transaction each."""
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        start = time.perf_counter()
        for first in range(0, len(events), per_batch):
            await store.append(events[first : first + per_batch])
        return time.perf_counter() - start


def returning(events: list[NewEvent]) -> Callable[[Sequence[StoredEvent]], list[NewEvent]]:
    """A command's ``decide`` that appends ``events``, whatever others appended."""
    return lambda _others: events


async def _execute_with_store(path: Path, events: list[NewEvent], per_command: int) -> float:
    """``store.execute`` commands whose decide returns ``per_command`` events each."""
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        start = time.perf_counter()
        for first in range(0, len(events), per_command):
            await store.execute(returning(events[first : first + per_command]))
        return time.perf_counter() - start


def _insert_raw(path: Path, rows: list[Any], per_transaction: int) -> float:
    with closing(raw_connection(path)) as connection:
        start = time.perf_counter()
        for first in range(0, len(rows), per_transaction):
            connection.execute("BEGIN IMMEDIATE")
            connection.executemany(INSERT, rows[first : first + per_transaction])
            connection.execute("COMMIT")
        return time.perf_counter() - start


# The canonical options of json.dumps (docs/workspace.md), as a user of the format writes them.
CANONICAL: dict[str, Any] = {
    "sort_keys": True,
    "separators": (",", ":"),
    "ensure_ascii": True,
    "allow_nan": False,
}


def _make_rows_and_insert(path: Path, events: list[NewEvent], now: int | None = None) -> float:
    """The anchor of benchmark 1: the rows made by hand, in a plain loop, then one executemany
    in one transaction. Nothing of the store's code: json, hashlib and sqlite3 only."""
    with closing(raw_connection(path)) as connection:
        start = time.perf_counter()
        now = time.time_ns() if now is None else now
        rows, lengths, prev_hash = [], dict[str, int](), "0" * 64
        for seq, event in enumerate(events, start=1):
            stream_seq = lengths[event.stream] = lengths.get(event.stream, 0) + 1
            payload = json.dumps(event.payload, **CANONICAL)
            # The envelope's canonical JSON, keys in order, with the payload's text spliced in.
            envelope = (
                f'{{"actor":{json.dumps(event.actor)},"payload":{payload},'
                f'"prev_hash":{json.dumps(prev_hash)},"seq":{seq},'
                f'"stream":{json.dumps(event.stream)},"stream_seq":{stream_seq},'
                f'"time_ns":{now},"type":{json.dumps(event.type)}}}'
            )
            hash_ = hashlib.sha256(envelope.encode()).hexdigest()
            row = (seq, event.stream, stream_seq, event.type, now, event.actor, payload)
            rows.append((*row, prev_hash, hash_))
            prev_hash = hash_
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany(INSERT, rows)
        connection.execute("COMMIT")
        return time.perf_counter() - start


# 2. One command's latency


def bench_command_latency(directory: Path) -> None:
    commands = sized(1_000, 20)
    print(f"2. one command's append latency ({commands:,} commands of one event)")
    store_samples = asyncio.run(_store_latencies(directory / "latency.pact", commands))
    raw_samples = []
    with closing(raw_connection(directory / "latency-raw.db")) as connection:
        prev_hash = GENESIS_HASH
        for seq, event in enumerate(sample_events(commands), start=1):
            payload = canonical_json(event.payload)
            hash_ = event_hash(
                seq, event.stream, seq, event.type, 0, event.actor, payload, prev_hash
            )
            row = (seq, event.stream, seq, event.type, 0, event.actor, payload, prev_hash, hash_)
            start = time.perf_counter()
            connection.execute("BEGIN IMMEDIATE")
            connection.execute(INSERT, row)
            connection.execute("COMMIT")
            raw_samples.append(time.perf_counter() - start)
            prev_hash = hash_
    for label, samples in (("store.execute", store_samples), ("raw INSERT + COMMIT", raw_samples)):
        print(
            f"  {label}: median {fmt(statistics.median(samples))},"
            f" p95 {fmt(percentile(samples, 0.95))}"
        )
    ratio = statistics.median(store_samples) / statistics.median(raw_samples)
    print(f"  ratio of medians {ratio:.1f} (printed, no target)")


async def _store_latencies(path: Path, commands: int) -> list[float]:
    samples = []
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        for event in sample_events(commands):
            start = time.perf_counter()
            await store.execute(returning([event]))
            samples.append(time.perf_counter() - start)
    return samples


# 3. Reopening a large store: checkpoint + tail vs full replay


class EventCounts:
    """The trivial fold: events and the sum of a payload field, per stream."""

    def __init__(self, state: dict[str, list[int]] | None = None) -> None:
        self.state = state or {}
        self.seq = 0

    def apply(self, event: StoredEvent) -> None:
        counts = self.state.setdefault(event.stream, [0, 0])
        counts[0] += 1
        counts[1] += event.payload["n"]
        self.seq = event.seq

    def dump(self) -> bytes:
        return json.dumps(self.state, sort_keys=True).encode()


def bench_reopen(directory: Path) -> None:
    total, tail = sized(1_000_000, 2_000), sized(1_000, 100)
    print(f"3. reopening a store of {total:,} events: checkpoint + {tail:,}-event tail vs replay")
    path = directory / "large.pact"
    start = time.perf_counter()
    write_large_store(path, total)
    print(f"  (built with executemany in {fmt(time.perf_counter() - start)})")

    async def full_replay(checkpoint_at: int | None) -> tuple[float, EventCounts]:
        start = time.perf_counter()
        async with await SqliteEventStore.open(path, watch=False) as store:
            fold = EventCounts()
            async for batch in store.scan(0):
                for event in batch:
                    fold.apply(event)
                    if event.seq == checkpoint_at:
                        await store.save_checkpoint("counts", event.seq, fold.dump())
        return time.perf_counter() - start, fold

    async def reopen_from_checkpoint() -> tuple[float, EventCounts]:
        start = time.perf_counter()
        async with await SqliteEventStore.open(path, watch=False) as store:
            checkpoint = await store.load_checkpoint("counts")
            assert checkpoint is not None
            fold = EventCounts(json.loads(checkpoint.data))
            async for batch in store.scan(checkpoint.seq):
                for event in batch:
                    fold.apply(event)
        return time.perf_counter() - start, fold

    async def verify() -> float:
        start = time.perf_counter()
        async with await SqliteEventStore.open(path, watch=False) as store:
            result = await store.verify()
        assert result.ok and result.checked == total, result
        return time.perf_counter() - start

    # The first full replay also saves the checkpoint (untimed share: one save of a small blob).
    asyncio.run(full_replay(checkpoint_at=total - tail))
    replay_s, replayed = asyncio.run(full_replay(checkpoint_at=None))
    reopen_runs = [asyncio.run(reopen_from_checkpoint()) for _ in range(sized(3, 1))]
    reopen_s = statistics.median(seconds for seconds, _ in reopen_runs)
    assert all(fold.state == replayed.state for _, fold in reopen_runs)
    report_ratio(
        "reopen with checkpoint vs full replay", reopen_s, replay_s, 0.1, anchor_label="full replay"
    )
    verify_s = asyncio.run(verify())
    print(f"  verify() over {total:,} events (streamed, in a worker thread): {fmt(verify_s)}")


def write_large_store(path: Path, total: int) -> None:
    """A valid store (hash chain included) written directly with executemany: fast to build."""
    with closing(raw_connection(path)) as connection:
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany(INSERT, _chained_rows(total))
        connection.execute("COMMIT")


def _chained_rows(total: int) -> Iterator[ChainRow]:
    prev_hash, lengths = GENESIS_HASH, dict[str, int]()
    for seq in range(1, total + 1):
        stream = f"ctx:{seq % 100}"
        stream_seq = lengths[stream] = lengths.get(stream, 0) + 1
        payload = f'{{"n":{seq}}}'
        hash_ = event_hash(seq, stream, stream_seq, "noted", seq, "bench", payload, prev_hash)
        yield seq, stream, stream_seq, "noted", seq, "bench", payload, prev_hash, hash_
        prev_hash = hash_


# 4. Change-feed latency across processes


def bench_feed_latency(directory: Path) -> None:
    rounds, burst = sized(200, 5), sized(500, 10)
    print(f"4. change-feed latency, commit here to delivery in another process ({rounds} commits)")
    feed_ms = asyncio.run(_feed_round_trips(directory / "feed.pact", rounds))
    watch_ms = asyncio.run(raw_watch_round_trips(directory / "raw-watch", rounds))
    burst_ms = asyncio.run(_feed_burst(directory / "burst.pact", burst))
    labels = (
        "change feed, one commit at a time",
        "raw watchfiles, one file append at a time (anchor)",
        f"change feed, {burst} commits back to back",
    )
    report_feed("change-feed latency", feed_ms, burst_ms, watch_ms, labels)


async def _feed_round_trips(path: Path, rounds: int) -> list[float]:
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        follower = await start_follower("bench.bench_store", "follow", path, WARM_UP + rounds)
        latencies = []
        for round_ in range(WARM_UP + rounds):
            committing = monotonic_ns()  # taken before the commit, so it includes it
            [event] = await store.append(sample_events(1))
            seq, delivered = await received_at(follower)
            assert seq == event.seq
            if round_ >= WARM_UP:
                latencies.append((delivered - committing) / 1e6)
        await follower.wait()
    return latencies


async def _feed_burst(path: Path, commits: int) -> list[float]:
    async with await SqliteEventStore.open(path, create=True, watch=False) as store:
        follower = await start_follower("bench.bench_store", "follow", path, WARM_UP + commits)
        for _ in range(WARM_UP):
            await store.append(sample_events(1))
            await received_at(follower)
        committing = {}
        for seq, event in enumerate(sample_events(commits), start=WARM_UP + 1):
            committing[seq] = monotonic_ns()
            await store.append([event])
        latencies = []
        for _ in range(commits):
            seq, delivered = await received_at(follower)
            latencies.append((delivered - committing[seq]) / 1e6)
        await follower.wait()
    return latencies


async def follow(path: str, count: int) -> None:
    """The other process of benchmark 4: print each event's seq and arrival time."""
    async with (
        await SqliteEventStore.open(path) as store,
        store.subscribe(await store.head()) as events,
    ):
        print("ready", flush=True)
        received = 0
        async for event in events:
            print(event.seq, monotonic_ns(), flush=True)
            received += 1
            if received == count:
                return


def main() -> None:
    print("Event store (engine/store)")
    with tempfile.TemporaryDirectory(prefix="bench-store-") as scratch:
        directory = Path(scratch)
        for benchmark in (
            bench_batched_appends,
            bench_command_latency,
            bench_reopen,
            bench_feed_latency,
        ):
            start = time.perf_counter()
            benchmark(directory)
            print(f"  ({fmt(time.perf_counter() - start)} for this benchmark)")


ROLES: dict[str, Callable[[str, int], Any]] = {"follow": follow}

if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] in ROLES:
        asyncio.run(ROLES[sys.argv[1]](sys.argv[2], int(sys.argv[3])))
    else:
        main()
