"""The hash chain: anyone can recompute it, and verify() names the first broken event."""

from __future__ import annotations

import hashlib
import json

import pytest

from engine.canonical import canonical_json
from engine.store import ChainProblem, EventStore, NewEvent
from engine.store.chain import GENESIS_HASH, ChainRow, event_hash, verify_rows

from .conftest import Backend, events

pytestmark = pytest.mark.filterwarnings("error")


def test_event_hash_is_sha256_of_the_canonical_json_of_the_other_fields() -> None:
    fields = {
        "seq": 7,
        "stream": "ctx:ü",
        "stream_seq": 3,
        "type": "node_inserted",
        "time_ns": 1_700_000_000_123_456_789,
        "actor": 'agent "one"',
        "payload": {"z": [1, 2.5, None], "a": "naïve ☃", "m": {"y": True, "b": {}}},
        "prev_hash": "ab" * 32,
    }
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    expected = hashlib.sha256(canonical.encode("ascii")).hexdigest()

    payload_json = canonical_json(fields["payload"])  # type: ignore[arg-type]
    assert payload_json == '{"a":"na\\u00efve \\u2603","m":{"b":{},"y":true},"z":[1,2.5,null]}'
    assert (
        event_hash(7, "ctx:ü", 3, "node_inserted", 1_700_000_000_123_456_789, 'agent "one"',
                   payload_json, "ab" * 32)
        == expected
    )  # fmt: skip


async def test_stored_hashes_recompute_from_the_stored_columns(
    store: EventStore, backend: Backend
) -> None:
    await store.append(events("ctx:a", 3) + events("ctx:b", 2))
    rows = await backend.rows(
        "SELECT seq, stream, stream_seq, type, time_ns, actor, payload, prev_hash, hash"
        " FROM events ORDER BY seq"
    )

    prev_hash = GENESIS_HASH
    for seq, stream, stream_seq, type_, time_ns, actor, payload, stored_prev, stored_hash in rows:
        envelope = {
            "seq": seq, "stream": stream, "stream_seq": stream_seq, "type": type_,
            "time_ns": time_ns, "actor": actor, "payload": json.loads(payload),
            "prev_hash": prev_hash,
        }  # fmt: skip
        canonical = json.dumps(envelope, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        assert stored_prev == prev_hash
        assert stored_hash == hashlib.sha256(canonical.encode()).hexdigest()
        prev_hash = stored_hash


async def test_changing_one_payload_byte_is_found_and_named(
    store: EventStore, backend: Backend
) -> None:
    await store.append(events("ctx:a", 10))
    assert (await store.verify()).ok

    [(payload,)] = await backend.rows("SELECT payload FROM events WHERE seq = 7")
    tampered = payload.replace('"n":6', '"n":9')
    assert len(tampered) == len(payload) and tampered != payload
    await backend.edit("UPDATE events SET payload = ? WHERE seq = 7", tampered)

    result = await store.verify()
    assert not result.ok
    assert result.broken_seq == 7
    assert result.problem is ChainProblem.HASH_MISMATCH
    assert result.checked == 6
    assert "event 7" in str(result)


async def test_a_relinked_event_is_found_by_its_prev_hash(
    store: EventStore, backend: Backend
) -> None:
    await store.append(events("ctx:a", 5))
    # Recompute event 4's own hash over a forged prev_hash: its hash checks out, its link
    # does not.
    [row] = await backend.rows(
        "SELECT seq, stream, stream_seq, type, time_ns, actor, payload FROM events WHERE seq=4"
    )
    forged_prev = "f" * 64
    await backend.edit(
        "UPDATE events SET prev_hash = ?, hash = ? WHERE seq = 4",
        forged_prev,
        event_hash(*row, forged_prev),
    )

    result = await store.verify()
    assert (result.broken_seq, result.problem) == (4, ChainProblem.PREV_HASH_MISMATCH)


def chain(*specs: tuple[str, int]) -> list[ChainRow]:
    """Correctly hashed rows for (stream, stream_seq) pairs, whatever the numbering."""
    rows: list[ChainRow] = []
    prev_hash = GENESIS_HASH
    for seq, (stream, stream_seq) in enumerate(specs, start=1):
        hash_ = event_hash(seq, stream, stream_seq, "t", 0, "", "{}", prev_hash)
        rows.append((seq, stream, stream_seq, "t", 0, "", "{}", prev_hash, hash_))
        prev_hash = hash_
    return rows


def test_verify_finds_gaps_in_stream_and_global_sequences() -> None:
    assert verify_rows(chain(("a", 1), ("b", 1), ("a", 2))).ok
    assert verify_rows([]).ok

    gap = verify_rows(chain(("a", 1), ("b", 1), ("a", 3)))
    assert (gap.broken_seq, gap.problem) == (3, ChainProblem.STREAM_SEQ_GAP)

    rows = chain(("a", 1), ("a", 2), ("a", 3))
    missing_middle = verify_rows([rows[0], rows[2]])
    assert (missing_middle.broken_seq, missing_middle.problem) == (3, ChainProblem.SEQ_GAP)


def test_verify_streams_rows_without_holding_them() -> None:
    produced = 0

    def rows():  # a generator: verify must consume it one row at a time
        nonlocal produced
        prev_hash = GENESIS_HASH
        for seq in range(1, 5001):
            hash_ = event_hash(seq, "s", seq, "t", 0, "", "{}", prev_hash)
            produced += 1
            yield (seq, "s", seq, "t", 0, "", "{}", prev_hash, hash_)
            prev_hash = hash_

    assert verify_rows(rows()).checked == 5000 == produced


async def test_non_ascii_text_tampered_into_a_payload_is_a_mismatch_not_a_crash(
    store: EventStore, backend: Backend
) -> None:
    await store.append([NewEvent("ctx:a", "noted", {"text": "plain"})])
    await backend.edit('UPDATE events SET payload = \'{"text":"plaîn"}\' WHERE seq = 1')

    result = await store.verify()
    assert (result.broken_seq, result.problem) == (1, ChainProblem.HASH_MISMATCH)
