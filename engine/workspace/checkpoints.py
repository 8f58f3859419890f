"""Checkpoints' bytes, the workspace index's entries, and the projection a context's checkpoint
or archive holds."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import orjson

from engine.context.compact import unpacked
from engine.store import Checkpoint, EventStore, InvalidCheckpoint
from engine.workspace.checks import check_context_name
from engine.workspace.keys import ARCHIVE_PREFIX, CHECKPOINT_VERSION
from engine.workspace.pieces import stored_pieces
from engine.workspace.projection import ContextProjection
from engine.workspace.repository import decompressed
from engine.workspace.types import ForkOrigin


def encode_checkpoint(data: dict[str, Any], packed: bytes | None = None) -> bytes:
    """A checkpoint's bytes: JSON by orjson (ten times json's speed); for what orjson refuses
    (integers beyond 64 bits in some content) json's, marked with a leading ``J`` because
    orjson would read those integers back as floats. With ``packed`` (a context's turns,
    ``ContextProjection.dump_packed``): ``P``, the JSON's length and a colon, the JSON, then
    ``packed`` as it is."""
    try:
        head = orjson.dumps(data)
    except TypeError:
        head = b"J" + json.dumps(data, separators=(",", ":")).encode()
    if packed is None:
        return head
    return b"P%d:" % len(head) + head + packed


def split_checkpoint(data: bytes) -> tuple[Any, memoryview | None]:
    """What ``encode_checkpoint`` made (kept compressed or not: ``repository.compressed``): its
    data decoded, and the packed bytes after it (None: none), not copied; ``InvalidCheckpoint``
    if compressed bytes do not decompress."""
    data = decompressed(data)
    if data[:1] != b"P":
        return _decoded(data), None
    colon = data.find(b":", 1, 24)
    if colon < 0:
        raise InvalidCheckpoint("a packed checkpoint without its length")
    start = colon + 1
    end = start + int(data[1:colon])
    if end > len(data):
        raise InvalidCheckpoint(f"a packed checkpoint of {len(data)} bytes says {end}")
    view = memoryview(data)
    return _decoded(view[start:end]), view[end:]


def _decoded(data: bytes | memoryview) -> Any:
    return json.loads(bytes(data[1:])) if data[:1] == b"J" else orjson.loads(data)


def decode_checkpoint(data: bytes) -> Any:
    """What ``encode_checkpoint`` made, decoded as plain data (a context checkpoint's packed
    turns as ``dump_compact`` writes them); ``InvalidCheckpoint`` if compressed bytes do not
    decompress, or for a context checkpoint whose turns are in pieces (read it with
    ``context_checkpoint_projection`` and its store)."""
    decoded, packed = split_checkpoint(data)
    if packed is not None:
        if not isinstance(decoded, dict) or not isinstance(decoded.get("context"), dict):
            raise InvalidCheckpoint("packed turns beside no context")
        stored_pieces(None, str(decoded.get("name")), decoded)  # one in pieces: refused, why
        decoded["context"] = unpacked(decoded["context"], packed)
    return decoded


def context_checkpoint_projection(
    name: str, checkpoint: Checkpoint, store: EventStore | None = None
) -> ContextProjection:
    """The projection context ``name``'s own checkpoint holds (its turns kept in pieces read
    from ``store`` when needed); raises ``InvalidCheckpoint`` (or KeyError, ...) if it is
    malformed, of another context, or not at its recorded event."""
    data, packed = split_checkpoint(checkpoint.data)
    if not isinstance(data, dict):
        raise InvalidCheckpoint(f"a {type(data).__name__}, not a context's state")
    if data.get("version") != CHECKPOINT_VERSION or data.get("name") != name:
        raise InvalidCheckpoint(f"version {data.get('version')!r} of context {data.get('name')!r}")
    projection = restored_projection(checkpoint, data, packed, store)
    projection.unpacked = packed is None  # written before turns were packed: packed on close
    return projection


def restored_projection(
    checkpoint: Checkpoint,
    data: Any = None,
    packed: memoryview | None = None,
    store: EventStore | None = None,
) -> ContextProjection:
    """The projection a context's checkpoint or archive holds (``data``: its decoded bytes, if
    decoded already, ``packed`` the packed turns after them, those in pieces read from
    ``store``); raises ``InvalidCheckpoint`` (or KeyError, ...) if malformed, or if its state
    is not at the event the checkpoint is recorded at."""
    if data is None:
        data, packed = split_checkpoint(checkpoint.data)
    if not isinstance(data, dict):
        raise InvalidCheckpoint(f"a {type(data).__name__}, not a context's state")
    pieces = stored_pieces(store, str(data.get("name")), data) if packed is not None else None
    projection = ContextProjection.restore(data, packed, pieces)
    if projection.seq != checkpoint.seq or projection.stream_seq < 1:
        raise InvalidCheckpoint(
            f"its state is at event {projection.seq}, its record at {checkpoint.seq}"
        )
    return projection


def parse_index(data: Any) -> dict[str, list[Any]]:
    """The entries of a stored index (see ``Workspace._index_entries``), checked for shape;
    raises ``InvalidCheckpoint`` (or KeyError, TypeError, ValueError) if malformed."""
    if not isinstance(data, dict) or data.get("version") != CHECKPOINT_VERSION:
        raise InvalidCheckpoint("not a version-3 workspace index")
    if not isinstance(data.get("contexts"), dict):
        raise InvalidCheckpoint("the index has no table of contexts")
    entries: dict[str, list[Any]] = {}
    for name, (seq, stream_seq, summary) in data["contexts"].items():
        check_context_name(name)
        numbers = [] if summary is None else summary
        if summary is not None and (not isinstance(summary, list) or len(summary) != 5):
            raise InvalidCheckpoint(f"context {name!r}: its numbers are {summary!r}")
        if not all(type(n) is int and n >= 0 for n in (seq, stream_seq, *numbers)):
            raise InvalidCheckpoint(f"context {name!r}: {[seq, stream_seq, summary]!r}")
        if stream_seq < 1 or seq < stream_seq or (summary is not None and summary[0] > stream_seq):
            raise InvalidCheckpoint(f"context {name!r}: {[seq, stream_seq, summary]!r}")
        entries[name] = [seq, stream_seq, summary]
    return entries


def parse_origins(data: Any) -> dict[str, ForkOrigin]:
    """The forks' origins a stored index carries (an index written before forks has none;
    one that cannot be read is left out: the context says where it came from once loaded)."""
    origins = data.get("origins") if isinstance(data, dict) else None
    out: dict[str, ForkOrigin] = {}
    for name, origin in (origins if isinstance(origins, dict) else {}).items():
        with contextlib.suppress(ValueError):
            out[name] = ForkOrigin.from_json(origin)
    return out


def merge_index(ours: dict[str, list[Any]], theirs: dict[str, list[Any]]) -> None:
    """Fold another process's index entries into ``ours``: for each context, the later end of
    its stream and the later numbers (both only grow, so the later is the truer)."""
    for name, (seq, stream_seq, summary) in theirs.items():
        mine = ours.setdefault(name, [seq, stream_seq, summary])
        if stream_seq > mine[1]:
            mine[0], mine[1] = seq, stream_seq
        if summary is not None and (mine[2] is None or summary[0] > mine[2][0]):
            mine[2] = summary


def archive_name(name: str, stream_seq: int) -> str:
    return f"{ARCHIVE_PREFIX}{name}:{stream_seq}"
