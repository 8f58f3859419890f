"""The hash chain: canonical JSON, event hashes, and verification over stored rows.

An event's hash is the SHA-256 (hex) of the canonical JSON of all its other fields, its
``prev_hash`` included::

    {"actor":..,"payload":{..},"prev_hash":..,"seq":..,"stream":..,"stream_seq":..,
     "time_ns":..,"type":..}

Canonical JSON is ``json.dumps(..., sort_keys=True, separators=(",", ":"), ensure_ascii=True)``,
so any program can recompute a hash from the stored columns. Each event links to the previous
event of the whole log (the first to :data:`GENESIS_HASH`), which orders the streams too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii
from typing import Any

from engine.store.base import ChainProblem, NewEvent, StoredEvent, VerifyResult
from engine.store.errors import InvalidEvent

GENESIS_HASH = "0" * 64

# Rows as stored, in this column order.
ChainRow = tuple[int, str, int, str, int, str, str, str, str]
CHAIN_COLUMNS = "seq, stream, stream_seq, type, time_ns, actor, payload, prev_hash, hash"

# The C string encoder behind json.dumps(..., ensure_ascii=True), without its per-call setup.
_quote = encode_basestring_ascii


def _not_json(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# json.dumps builds a C encoder for every call, which costs as much as encoding a small payload:
# on CPython the same encoder is built once here. It keeps no table of the containers it is in
# (json's check for circular references), so a circular value ends in RecursionError, which
# canonical_json turns into the ValueError json.dumps raises.
_encode_chunks: Callable[[object, int], Iterable[str]]
try:
    from _json import make_encoder
except ImportError:  # not CPython: json's own encoder
    _json_encoder = json.JSONEncoder(
        sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )
    _encode_chunks = lambda value, _indent_level: (_json_encoder.encode(value),)  # noqa: E731
else:
    _encode_chunks = make_encoder(None, _not_json, _quote, None, ":", ",", True, False, False)


def canonical_json(value: Mapping[str, Any]) -> str:
    """Raises ``TypeError`` or ``ValueError`` for values JSON cannot represent (NaN included)."""
    try:
        return "".join(_encode_chunks(value, 0))
    except RecursionError as error:
        raise ValueError("Circular reference detected (or nesting too deep)") from error


def event_hash(
    seq: int,
    stream: str,
    stream_seq: int,
    type: str,
    time_ns: int,
    actor: str,
    payload_json: str,
    prev_hash: str,
) -> str:
    # Spelled out rather than canonical_json(a dict): the payload is already canonical text, and
    # encoding it again for every hash would cost as much as the rest of an append. The keys are
    # written in sorted order; a test checks this equals canonical_json of the whole envelope.
    envelope = (
        f'{{"actor":{_quote(actor)},"payload":{payload_json},"prev_hash":{_quote(prev_hash)},'
        f'"seq":{seq},"stream":{_quote(stream)},"stream_seq":{stream_seq},'
        f'"time_ns":{time_ns},"type":{_quote(type)}}}'
    )
    return hashlib.sha256(envelope.encode()).hexdigest()


@dataclass(slots=True)
class ChainHead:
    """What the next event links to: the last event's seq and hash, and stream lengths.

    ``stream_lengths`` holds the streams whose length is known; any other stream must be looked
    up before appending to it. Kept current by :meth:`record`-ing every later event.
    """

    seq: int = 0
    hash: str = GENESIS_HASH
    stream_lengths: dict[str, int] = field(default_factory=dict)

    def record(self, events: Iterable[StoredEvent]) -> None:
        """Move the head past ``events``, the committed events that follow it, in order."""
        for event in events:
            self.seq = event.seq
            self.hash = event.hash
            self.stream_lengths[event.stream] = event.stream_seq

    def link(
        self, events: Sequence[NewEvent], payloads: Sequence[str], now_ns: int
    ) -> tuple[list[StoredEvent], list[ChainRow]]:
        """Give ``events`` their positions, times and hashes after this head, left unchanged.

        ``payloads`` are the events' payloads from :func:`encode_payloads`. Returns the stored
        events and the same as rows to insert. The length of every stream in ``events`` must be
        known.
        """
        stored: list[StoredEvent] = []
        rows: list[ChainRow] = []
        known_lengths = self.stream_lengths
        appended_lengths: dict[str, int] = {}
        seq, prev_hash = self.seq, self.hash
        for event, payload_json in zip(events, payloads, strict=True):
            seq += 1
            stream, type_, actor = event.stream, event.type, event.actor
            stream_seq = appended_lengths.get(stream, known_lengths[stream]) + 1
            appended_lengths[stream] = stream_seq
            time_ns = now_ns if event.time_ns is None else event.time_ns
            hash_ = event_hash(
                seq, stream, stream_seq, type_, time_ns, actor, payload_json, prev_hash
            )
            # The payload object is shared, not decoded again from payload_json: for JSON-native
            # payloads (the only kind canonical_json accepts unchanged) the two are equal.
            stored.append(
                _stored_event(
                    (
                        seq,
                        stream,
                        stream_seq,
                        type_,
                        time_ns,
                        actor,
                        event.payload,
                        prev_hash,
                        hash_,
                    )
                )
            )
            rows.append(
                (seq, stream, stream_seq, type_, time_ns, actor, payload_json, prev_hash, hash_)
            )
            prev_hash = hash_
        return stored, rows


def _stored_event(fields: tuple[Any, ...]) -> StoredEvent:
    """StoredEvent(*fields) without the NamedTuple's Python-level __new__: half the cost."""
    return tuple.__new__(StoredEvent, fields)


def encode_payloads(events: Sequence[object], where: str | None = None) -> list[str]:
    """Check that ``events`` can be stored and return their payloads as canonical JSON.

    This part of linking does not depend on where the events land in the log, so it can run
    before the write lock is taken. Raises :class:`InvalidEvent` naming the first bad event.
    """
    payloads: list[str] = []
    for index, event in enumerate(events):
        if not isinstance(event, NewEvent):
            raise InvalidEvent(
                f"event {index}: commands must return NewEvent objects, not {type(event).__name__}",
                path=where,
                index=index,
            )
        if not event.stream or not event.type:
            raise InvalidEvent(
                f"event {index}: stream and type must be non-empty", path=where, index=index
            )
        try:
            payloads.append(canonical_json(event.payload))
        except (TypeError, ValueError) as error:
            raise InvalidEvent(
                f"event {index} ({event.type!r}): the payload is not JSON: {error}",
                path=where,
                index=index,
            ) from error
    return payloads


def verify_rows(rows: Iterable[ChainRow]) -> VerifyResult:
    """Walk rows in ``seq`` order and report the first one that breaks the chain.

    Streaming: holds one row and the last ``stream_seq`` of each stream, never the whole log.
    """
    expected_seq = 1
    prev_hash = GENESIS_HASH
    stream_lengths: dict[str, int] = {}
    checked = 0
    for seq, stream, stream_seq, type_, time_ns, actor, payload, stored_prev, stored_hash in rows:
        if seq != expected_seq:
            return VerifyResult(
                checked, seq, ChainProblem.SEQ_GAP, f"expected seq {expected_seq}, found {seq}"
            )
        if stored_prev != prev_hash:
            return VerifyResult(
                checked,
                seq,
                ChainProblem.PREV_HASH_MISMATCH,
                f"prev_hash {stored_prev} does not match the hash of event {seq - 1}",
            )
        recomputed = event_hash(
            seq, stream, stream_seq, type_, time_ns, actor, payload, stored_prev
        )
        if recomputed != stored_hash:
            return VerifyResult(
                checked,
                seq,
                ChainProblem.HASH_MISMATCH,
                f"stored hash {stored_hash} but the event's fields hash to {recomputed}",
            )
        expected_stream_seq = stream_lengths.get(stream, 0) + 1
        if stream_seq != expected_stream_seq:
            return VerifyResult(
                checked,
                seq,
                ChainProblem.STREAM_SEQ_GAP,
                f"stream {stream!r}: expected stream_seq {expected_stream_seq}, found {stream_seq}",
            )
        stream_lengths[stream] = stream_seq
        prev_hash = stored_hash
        expected_seq += 1
        checked += 1
    return VerifyResult(checked)
