"""What both stores decide alike: reading a stored row back as an event, and whether the log
vouches for a checkpoint."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

import orjson

from engine.store.base import Checkpoint, StoredEvent
from engine.store.chain import GENESIS_HASH
from engine.store.errors import CheckpointNotInLog, CorruptCheckpoint, CorruptEvent
from engine.store.schema import NOT_IN_LOG_AT_UPGRADE

# An integer of 19 digits or more outside a string: after ``:``, ``,`` or ``[`` (and JSON's
# whitespace, a sign). The separator first lets the regex engine skip to candidates instead of
# trying a run of digits at every character: half the time of ``[0-9]{19}`` on the store's
# payloads, which every replay, audit and page of events reads. A digit run inside a string
# may match too: it only sends that payload the slow, always-right way.
LONG_NUMBER = re.compile(r"[:,\[][ \t\n\r]*-?[0-9]{19}")
_CONTAINERS = ("{", "[")  # a payload of one bare number reads the slow way


def event_from_row(row: Any) -> StoredEvent:
    seq, stream, stream_seq, type_, time_ns, actor, payload, prev_hash, hash_ = row
    decoded = decoded_json(seq, payload)
    return StoredEvent(seq, stream, stream_seq, type_, time_ns, actor, decoded, prev_hash, hash_)


def decoded_json(seq: int, text: Any) -> Any:
    """The JSON ``text`` of event ``seq``'s payload (or a part of it) read back as stored."""
    try:
        # orjson reads a payload in a third of json's time (the store reads every event a
        # replay, an audit or a page of the events view sees). json reads what orjson refuses
        # (lone surrogates) and any payload holding 19 digits in a row: orjson reads an
        # integer just past 64 bits as a float, and the payload must read back as stored.
        if text[:1] in _CONTAINERS and LONG_NUMBER.search(text) is None:
            return orjson.loads(text)
        return json_of(seq, text)
    except (orjson.JSONDecodeError, TypeError):
        return json_of(seq, text)


_PLAIN = frozenset({str, int, bool, type(None)})


def payload_of(seq: int, payload: Any) -> Any:
    """The stored ``payload`` text of event ``seq``, read back as stored (what
    ``event_from_row`` reads), the common case without the search for long numbers: an object
    whose values are all strings, integers, booleans or null (a document's envelope, whose
    own payload is a string in it) reads with orjson alone, since orjson gives a float for an
    integer it cannot hold, and such an object holds none. Anything else is read as
    ``event_from_row`` reads it."""
    try:
        decoded = orjson.loads(payload)
    except (orjson.JSONDecodeError, TypeError):
        return json_of(seq, payload)
    if type(decoded) is dict and _PLAIN.issuperset(map(type, decoded.values())):
        return decoded
    if payload[:1] in _CONTAINERS and LONG_NUMBER.search(payload) is None:
        return decoded
    return json_of(seq, payload)


def json_of(seq: int, payload: Any) -> Any:
    try:
        return json.loads(payload)
    except (TypeError, ValueError):
        raise CorruptEvent(
            f"event {seq}: its stored payload is not JSON; the log was changed outside the "
            "store (verify names the first broken event)",
            seq=seq,
        ) from None


def not_vouched(seq: int, recorded: str | None, found: str | None, head: int) -> str | None:
    """Why the log does not vouch for a checkpoint at event ``seq`` whose event had hash
    ``recorded`` (None: saved by a release that recorded none) when the log's event ``seq``
    has hash ``found`` (None: no such event) and its last event is ``head``; None if it does."""
    if seq > head:
        return f"is at event {seq}, past the log's last event {head}"
    expected = GENESIS_HASH if seq == 0 else found
    if recorded == NOT_IN_LOG_AT_UPGRADE:
        return f"is at event {seq}, which was past the log's end when the file was upgraded"
    if recorded is not None and recorded != expected:
        return (
            f"was taken at event {seq} when its hash was {recorded[:16]}…, but the log's event "
            f"{seq} has hash {str(expected)[:16]}… (the log lost events and grew again, or the "
            "checkpoint was changed)"
        )
    return None


def checkpoint_from_rows(name: str, rows: Sequence[Sequence[Any]], where: str) -> Checkpoint | None:
    """Checkpoint ``name`` from the rows of the one query both stores read it by (each row: its
    seq, size, digest, the event hash recorded with it, the log's hash at its seq, the log's
    last seq, then one piece of its data, in order); None for no rows. Raises
    ``CheckpointNotInLog`` if the log does not vouch for it, ``CorruptCheckpoint`` if its bytes
    do not match its digest."""
    if not rows:
        return None
    seq, size, digest, recorded, found, head = rows[0][:6]
    why = not_vouched(seq, recorded, found, head)
    if why is not None:
        raise CheckpointNotInLog(
            f"checkpoint {name!r} {why}: the log does not vouch for it",
            path=where,
            name=name,
            seq=seq,
            head=head,
        )
    data = b"".join(row[6] for row in rows if row[6] is not None)
    if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
        raise CorruptCheckpoint(
            f"checkpoint {name!r} does not match its digest: rebuild it by replaying",
            path=where,
            name=name,
        )
    return Checkpoint(int(seq), data)
