"""A workspace's log forged as someone who can write the file could: events appended through
the store (so the chain links them), or rows edited with SQL and the whole chain recomputed
after them, checkpoints' event hashes included. The chain then verifies; only a replay can
tell. Real SQLite files, edited the way any program could."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from engine.store import NewEvent, SqliteEventStore, StoredEvent
from engine.store.chain import CHAIN_COLUMNS, GENESIS_HASH, event_hash


async def append_envelope(
    path: Path, stream: str, change: Callable[[dict[str, Any]], None]
) -> StoredEvent:
    """Append to document stream ``stream`` a copy of its last event made the next one (a new
    id, the next ``sequenceNumber``), then changed by ``change``: the store chains it."""
    async with await SqliteEventStore.open(path, watch=False) as store:
        events = await store.read_stream(stream, 0)
        envelope = dict(events[-1].payload)
        envelope["id"] = f"forged-{len(events)}"
        envelope["sequenceNumber"] = len(events)
        change(envelope)
        [stored] = await store.append([NewEvent(stream, events[-1].type, envelope, "forger")])
    return stored


def swap_events(path: Path, first: int, second: int) -> None:
    """Swap what events ``first`` and ``second`` (global seqs) hold, their places staying, and
    recompute the chain."""
    with closing(sqlite3.connect(path)) as connection:
        fields = "type, time_ns, actor, payload"
        rows = {
            seq: connection.execute(f"SELECT {fields} FROM events WHERE seq = ?", (seq,)).fetchone()
            for seq in (first, second)
        }
        for seq, other in ((first, second), (second, first)):
            connection.execute(
                "UPDATE events SET type = ?, time_ns = ?, actor = ?, payload = ? WHERE seq = ?",
                (*rows[other], seq),
            )
        connection.commit()
    rechain(path)


def rechain(path: Path) -> None:
    """Recompute every event's hash and link, and each checkpoint's event hash, from the stored
    columns: what a forger who edited rows does so that ``verify`` passes."""
    with closing(sqlite3.connect(path)) as connection:
        previous = GENESIS_HASH
        rows = connection.execute(f"SELECT {CHAIN_COLUMNS} FROM events ORDER BY seq").fetchall()
        for seq, stream, stream_seq, type_, time_ns, actor, payload, _prev, _hash in rows:
            hash_ = event_hash(seq, stream, stream_seq, type_, time_ns, actor, payload, previous)
            connection.execute(
                "UPDATE events SET prev_hash = ?, hash = ? WHERE seq = ?", (previous, hash_, seq)
            )
            previous = hash_
        connection.execute(
            "UPDATE checkpoints SET event_hash ="
            " (SELECT hash FROM events WHERE events.seq = checkpoints.seq) WHERE seq > 0"
        )
        connection.commit()
