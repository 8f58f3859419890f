"""A context checkpoint whose packed turns are forged as someone who can write the file could:
one turn's record made malformed in place, the index beside it left as it was, and the
checkpoint's digest fixed. Only decoding that turn can tell (``compact.PackedTurn``)."""

from __future__ import annotations

import hashlib
import itertools
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from engine.workspace import CONTEXT_CHECKPOINT, encode_checkpoint
from engine.workspace.checkpoints import split_checkpoint


def rewrite_checkpoint(path: Path, name: str, forge: Callable[[bytes], bytes]) -> None:
    """Replace checkpoint ``name``'s bytes (one chunk) with ``forge`` of them, and fix its
    digest and size: as someone who can write the file could; only reading it can tell."""
    with closing(sqlite3.connect(path)) as connection:
        chunks = connection.execute(
            "SELECT k.data FROM checkpoint_chunks AS k JOIN checkpoints AS c"
            " ON k.name = c.name AND k.generation = c.generation WHERE c.name = ?",
            (name,),
        ).fetchall()
        assert len(chunks) == 1, "a checkpoint small enough to be one chunk"
        data = chunks[0][0]
        forged = forge(data)
        assert forged != data
        connection.execute("UPDATE checkpoint_chunks SET data = ? WHERE name = ?", (forged, name))
        connection.execute(
            "UPDATE checkpoints SET size = ?, sha256 = ? WHERE name = ?",
            (len(forged), hashlib.sha256(forged).hexdigest(), name),
        )
        connection.commit()


def rewrite_packed_turns(
    path: Path, context: str, change: Callable[[dict[str, Any], list[bytes]], str]
) -> str:
    """Rewrite context ``context``'s packed checkpoint by hand: ``change`` is given the turns'
    index (its columns) and each turn's record, changes them in place and returns a turn's id;
    the checkpoint is written back with its digest fixed. The id ``change`` returned."""
    ids: list[str] = []

    def forge(data: bytes) -> bytes:
        head, packed = split_checkpoint(data)
        assert packed is not None, "a packed checkpoint"
        index = head["context"]["turns"]
        ends = list(itertools.accumulate(index["length"]))
        records = [bytes(packed[start:end]) for start, end in itertools.pairwise([0, *ends])]
        ids.append(change(index, records))
        return encode_checkpoint(head, b"".join(records))

    rewrite_checkpoint(path, CONTEXT_CHECKPOINT + context, forge)
    return ids[0]


def forge_packed_turn(path: Path, context: str, turn: int) -> str:
    """Make the record of packed turn ``turn`` (0: the first after the system region; -1: the
    last) of context ``context``'s checkpoint malformed (as many bytes, not JSON), and fix the
    checkpoint's digest; the id of that turn."""

    def change(index: dict[str, Any], records: list[bytes]) -> str:
        place = turn % len(records)
        records[place] = b"x" * len(records[place])
        turn_id: str = index["id"][place]
        return turn_id

    return rewrite_packed_turns(path, context, change)


def forge_duplicate_ids(path: Path, context: str, source: int, target: int) -> str:
    """Make packed turn ``target`` of context ``context``'s checkpoint hold a copy of packed
    turn ``source``'s record (its counts and length in the index too), so that each decodes
    but their items share ids, and fix the checkpoint's digest; the id of the target turn."""

    def change(index: dict[str, Any], records: list[bytes]) -> str:
        copied, into = source % len(records), target % len(records)
        records[into] = records[copied]
        for column in ("slots", "items", "length"):
            index[column][into] = index[column][copied]
        turn_id: str = index["id"][into]
        return turn_id

    return rewrite_packed_turns(path, context, change)
