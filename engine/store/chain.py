"""The hash chain: event hashes, linking new events, and verification over stored rows.

An event's hash is the SHA-256 (hex) of the canonical JSON (:mod:`engine.canonical`) of all its
other fields, its ``prev_hash`` included::

    {"actor":..,"payload":{..},"prev_hash":..,"seq":..,"stream":..,"stream_seq":..,
     "time_ns":..,"type":..}

Canonical JSON is ``json.dumps(..., sort_keys=True, separators=(",", ":"), ensure_ascii=True,
allow_nan=False)``, so any program can recompute a hash from the stored columns; the payload
column holds the payload's canonical JSON. Each event links to the previous event of the whole
log (the first to :data:`GENESIS_HASH`), which orders the streams too.
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from engine.canonical import canonical_json
from engine.store.base import ChainProblem, NewEvent, StoredEvent, VerifyResult
from engine.store.errors import InvalidEvent

GENESIS_HASH = "0" * 64

# Rows as stored, in this column order.
ChainRow = tuple[int, str, int, str, int, str, str, str, str]
CHAIN_COLUMNS = "seq, stream, stream_seq, type, time_ns, actor, payload, prev_hash, hash"


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
    """The hash of an event from its stored columns: ``payload_json`` is the payload's canonical
    JSON, as stored.

    The envelope's canonical JSON is put together here rather than by encoding a dict, since
    the payload is already canonical text and decoding it only to encode it again would cost as
    much as the rest of an append. An object's canonical JSON is its members in key order, each
    key and value canonical, and ints are written as ``str`` writes them: the keys below are in
    that order, and a test checks the result against ``canonical_json`` of the whole envelope.
    """
    envelope = (
        f'{{"actor":{canonical_json(actor)},"payload":{payload_json},'
        f'"prev_hash":{canonical_json(prev_hash)},"seq":{seq},"stream":{canonical_json(stream)},'
        f'"stream_seq":{stream_seq},"time_ns":{time_ns},"type":{canonical_json(type)}}}'
    )
    return hashlib.sha256(envelope.encode()).hexdigest()


_stream_and_length = operator.itemgetter(1, 2)  # of a StoredEvent


@dataclass(slots=True)
class ChainHead:
    """What the next event links to: the last event's seq and hash, and stream lengths.

    ``stream_lengths`` holds the streams whose length is known; any other stream must be looked
    up before appending to it. Kept current by :meth:`record`-ing every later event.
    """

    seq: int = 0
    hash: str = GENESIS_HASH
    stream_lengths: dict[str, int] = field(default_factory=dict)

    def record(self, events: Sequence[StoredEvent]) -> None:
        """Move the head past ``events``, the committed events that follow it, in order."""
        if events:
            self.seq, self.hash = events[-1].seq, events[-1].hash
            self.stream_lengths.update(map(_stream_and_length, events))

    def link(
        self, events: Sequence[NewEvent], payloads: Sequence[str], now_ns: int
    ) -> tuple[list[StoredEvent], list[ChainRow]]:
        """Give ``events`` their positions, times and hashes after this head, left unchanged.

        ``events`` and ``payloads`` come from :func:`encode_events`; events without a time get
        ``now_ns``. Returns the stored events and the same as rows to insert. The length of
        every stream in ``events`` must be known.
        """
        if type(now_ns) is not int:
            raise TypeError(f"the clock returned {now_ns!r}, not an int")
        seq, prev_hash = self.seq, self.hash
        lengths: dict[str, int] = {}  # of the streams appended to, as of the last event linked
        stored: list[StoredEvent] = []
        rows: list[ChainRow] = []
        for event, payload_json in zip(events, payloads, strict=True):
            seq += 1
            stream, type_, actor = event.stream, event.type, event.actor
            stream_seq = lengths[stream] = lengths.get(stream, self.stream_lengths[stream]) + 1
            time_ns = now_ns if event.time_ns is None else event.time_ns
            hash_ = event_hash(
                seq, stream, stream_seq, type_, time_ns, actor, payload_json, prev_hash
            )
            # The payload object is shared, not decoded again from payload_json: for payloads
            # that are JSON-native (the only kind canonical JSON writes unchanged) they are equal.
            stored.append(
                StoredEvent(
                    seq, stream, stream_seq, type_, time_ns, actor, event.payload, prev_hash, hash_
                )
            )
            rows.append(
                (seq, stream, stream_seq, type_, time_ns, actor, payload_json, prev_hash, hash_)
            )
            prev_hash = hash_
        return stored, rows


# SQLite's INTEGER range, for times given with an event.
_MIN_INT64, _MAX_INT64 = -(2**63), 2**63 - 1


def encode_events(
    events: Iterable[object], where: str | None = None
) -> tuple[list[NewEvent], list[str]]:
    """Check that ``events`` can be stored; return them and their payloads' canonical JSON.

    Events come back as given, but for fields of a subclass of str or int (a StrEnum stream, an
    IntEnum time), which come back as the plain str or int that is hashed, stored and read back.
    This part of linking does not depend on where the events land in the log, so it can run
    before the write lock is taken. Raises :class:`InvalidEvent` naming the first bad event.
    """
    checked: list[NewEvent] = []
    payloads: list[str] = []
    for index, event in enumerate(events):
        if not (
            type(event) is NewEvent
            and type(event.stream) is str
            and type(event.type) is str
            and type(event.actor) is str
            and event.stream
            and event.type
            and (event.time_ns is None or _is_int64(event.time_ns))
        ):
            event = _checked_event(index, event, where)
        checked.append(event)
        payloads.append(_payload_json(index, event, where))
    return checked, payloads


def _payload_json(index: int, event: NewEvent, where: str | None) -> str:
    try:
        return canonical_json(event.payload)
    except (TypeError, ValueError, RecursionError) as error:
        problem = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise InvalidEvent(
            f"event {index} ({event.type!r}): the payload is not JSON: {problem}",
            path=where,
            index=index,
        ) from error


def _is_int64(value: object) -> bool:
    return type(value) is int and _MIN_INT64 <= value <= _MAX_INT64


def _checked_event(index: int, event: object, where: str | None) -> NewEvent:
    """``event`` with plain str and int fields, or InvalidEvent saying what is wrong with it."""

    def invalid(problem: str) -> InvalidEvent:
        return InvalidEvent(f"event {index}: {problem}", path=where, index=index)

    if not isinstance(event, NewEvent):
        raise invalid(f"commands must return NewEvent objects, not {type(event).__name__}")
    texts = []
    for name in ("stream", "type", "actor"):
        value = getattr(event, name)
        if not isinstance(value, str):
            raise invalid(f"{name} must be a str, not {type(value).__name__}")
        texts.append(str.__str__(value))
    stream, type_, actor = texts
    if not stream or not type_:
        raise invalid("stream and type must be non-empty")
    time_ns = event.time_ns
    if time_ns is not None:
        if isinstance(time_ns, bool) or not isinstance(time_ns, int):
            raise invalid(f"time_ns must be an int or None, not {type(time_ns).__name__}")
        time_ns = int.__index__(time_ns)
        if not _is_int64(time_ns):
            raise invalid(f"time_ns {time_ns} is out of SQLite's 64-bit integer range")
    return NewEvent(stream, type_, event.payload, actor, time_ns)


def verify_tail(last: ChainRow, before: ChainRow | None, stream_length_before: int) -> VerifyResult:
    """Check the log's last event alone: its hash, its link to the event ``before`` it (None:
    it is the first), and its place in its stream (``stream_length_before`` events of its
    stream come before it). Costs the same however long the log is."""
    if before is None:
        return verify_rows([last])
    seq, _, _, _, _, _, _, _, hash_ = before
    stream = last[1]
    return verify_rows([last], after=ChainHead(seq, hash_, {stream: stream_length_before}))


def verify_rows(rows: Iterable[ChainRow], *, after: ChainHead | None = None) -> VerifyResult:
    """Walk rows in ``seq`` order and report the first one that breaks the chain.

    The rows follow ``after`` (the seq and hash of the event before them, and the lengths of
    their streams then), or begin the log if None.
    Streaming: holds one row and the last ``stream_seq`` of each stream, never the whole log.
    """
    start = ChainHead() if after is None else after
    expected_seq = start.seq + 1
    prev_hash = start.hash
    stream_lengths: dict[str, int] = dict(start.stream_lengths)
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
