"""Canonical JSON and the hash formula: the chain's format, which must never move.

Hashes are defined over json.dumps(..., sort_keys=True, separators=(",", ":"), ensure_ascii=True,
allow_nan=False), so that any program can recompute them. These tests pin that form byte for
byte, and what the store refuses to hash.
"""

from __future__ import annotations

import enum
import hashlib
import json
import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.canonical import canonical_json
from engine.store import NewEvent
from engine.store.chain import ChainHead, encode_events, event_hash
from engine.store.errors import InvalidEvent

from .conftest import Backend

pytestmark = pytest.mark.filterwarnings("error")


def stable_repr(value: Any) -> str:
    """A test id that is the same in every process: repr without memory addresses (pytest-xdist
    compares the ids its workers collect)."""
    return re.sub(r" at 0x[0-9a-f]+", "", repr(value))


def reference(value: object) -> str:
    """The documented canonical form."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        # Keys sorted by code point (past ASCII too), no spaces after ":" or ",".
        ({"b": 1, "a": [1, 2], "B": {}, "é": None, "\U0001f600": 0, "\uffff": 1},
         '{"B":{},"a":[1,2],"b":1,"\\u00e9":null,"\\uffff":1,"\\ud83d\\ude00":0}'),
        # Everything past ASCII, DEL and the controls escaped; "/" is not.
        ('naïve ☃ \U0001f600 \x7f \x00\x1f \t\n "q" \\ / \u2028 \ud800',
         '"na\\u00efve \\u2603 \\ud83d\\ude00 \\u007f \\u0000\\u001f \\t\\n \\"q\\" \\\\ / '
         '\\u2028 \\ud800"'),
        # Numbers as Python's repr writes them.
        ([0, -1, 2**70, 0.1, -0.0, 1e-7, 1.5e16, 1e22, 5e-324, 123456.789, True, False, None],
         '[0,-1,1180591620717411303424,0.1,-0.0,1e-07,1.5e+16,1e+22,5e-324,123456.789,'
         "true,false,null]"),
        # What json converts: tuples are arrays, int, float, bool and None keys are strings.
        ({"t": (1, "x")}, '{"t":[1,"x"]}'),
        ({2: "a", 10: "b"}, '{"2":"a","10":"b"}'),  # sorted as ints, then written as strings
        ({None: 1}, '{"null":1}'),
    ],
)  # fmt: skip
def test_the_canonical_form(value: object, text: str) -> None:
    assert canonical_json(value) == text == reference(value)


class Level(enum.IntEnum):
    LOW = 1


class Mode(enum.StrEnum):
    FAST = "fast"


def test_int_and_str_enums_are_written_as_their_int_and_str() -> None:
    assert canonical_json({"level": Level.LOW, Mode.FAST: Mode.FAST}) == '{"fast":"fast","level":1}'


circular: list[object] = []
circular.append(circular)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (math.nan, ValueError),
        ({"x": [math.inf]}, ValueError),
        (-math.inf, ValueError),
        (circular, ValueError),
        ({1, 2}, TypeError),
        (b"bytes", TypeError),
        ({"a": object()}, TypeError),
        ({1: "a", "b": 2}, TypeError),  # int and str keys cannot be sorted together
    ],
    ids=stable_repr,
)
def test_what_json_cannot_represent_is_refused(value: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        canonical_json(value)


# Characters JSON escapes, or that sit on the boundaries of its escapes: controls, quote,
# backslash, DEL, Latin-1, line separators, the BOM, the last BMP character, astral characters,
# lone surrogates.
TRICKY_CHARACTERS = [
    *map(chr, range(0x20)),
    '"', "\\", "/", "\x7f", "\x80", "\xe9", "\xff", "\u2028", "\u2029", "\ufeff", "\uffff",
    "\U0001f600", "\U0010ffff", "\ud800", "\udfff", "\ud83d",
]  # fmt: skip
texts = st.text(
    st.one_of(st.sampled_from(TRICKY_CHARACTERS), st.characters(exclude_categories=())),
    max_size=12,
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), texts
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(texts, children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_canonical_text_is_ascii_and_reads_back_as_itself(value: object) -> None:
    text = canonical_json(value)
    assert text.isascii()
    assert json.loads(text) == value
    # A fixed point: what a reader of the log decodes encodes to the same bytes, which is
    # what lets anyone recompute a hash from the stored payload.
    assert canonical_json(json.loads(text)) == text


def nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "payload",
    [
        {"b": math.nan},
        {"b": math.inf},
        {"b": {1, 2}},
        {1: "a", "b": 2},
        circular,
        pytest.param(nested(100_000), id="nested 100,000 deep"),
    ],
    ids=stable_repr,
)
def test_a_payload_that_is_not_json_is_an_invalid_event_naming_it(payload: Any) -> None:
    with pytest.raises(InvalidEvent) as invalid:
        encode_events([NewEvent("s", "t", {"a": 1}), NewEvent("s", "t", payload)])
    assert invalid.value.details["index"] == 1
    assert "event 1 ('t'): the payload is not JSON" in str(invalid.value)


def test_payloads_are_stored_as_their_canonical_json() -> None:
    payloads: list[dict[str, Any]] = [{"n": n, "text": f"note {n} é", "x": 1e-7} for n in range(50)]
    checked, texts = encode_events([NewEvent("s", "t", payload) for payload in payloads])
    assert texts == [reference(payload) for payload in payloads]
    assert [event.payload for event in checked] == payloads


streams = st.text(
    st.one_of(st.sampled_from(TRICKY_CHARACTERS), st.characters(exclude_categories=("Cs",))),
    min_size=1,
    max_size=8,
)
int64 = st.integers(-(2**63), 2**63 - 1)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.builds(
            NewEvent,
            stream=st.sampled_from(["ctx:a", "ctx:b"]) | streams,
            type=streams,
            payload=st.dictionaries(texts, json_values, max_size=4),
            actor=st.just("") | streams,
            time_ns=st.none() | int64,
        ),
        min_size=1,
        max_size=6,
    ),
    st.integers(0, 2**40),
    st.sampled_from(["0" * 64, "ab" * 32, 'odd "head" \u00e9']),
    int64,
)
@pytest.mark.slow
def test_envelope_hashes_are_sha256_of_json_of_the_envelope(
    events: list[NewEvent], head_seq: int, head_hash: str, now_ns: int
) -> None:
    head = ChainHead(head_seq, head_hash, {event.stream: 5 for event in events})
    checked, payloads = encode_events(events)
    stored, rows = head.link(checked, payloads, now_ns)

    prev_hash = head_hash
    lengths = {event.stream: 5 for event in events}
    for index, (event, stored_event, row) in enumerate(zip(events, stored, rows, strict=True)):
        lengths[event.stream] += 1
        envelope = {
            "seq": head_seq + 1 + index, "stream": event.stream,
            "stream_seq": lengths[event.stream], "type": event.type,
            "time_ns": now_ns if event.time_ns is None else event.time_ns,
            "actor": event.actor, "payload": event.payload, "prev_hash": prev_hash,
        }  # fmt: skip
        expected = hashlib.sha256(reference(envelope).encode("ascii")).hexdigest()
        assert row == (
            envelope["seq"], event.stream, envelope["stream_seq"], event.type,
            envelope["time_ns"], event.actor, reference(event.payload), prev_hash, expected,
        )  # fmt: skip
        assert tuple(stored_event) == (*row[:6], event.payload, *row[7:])
        assert event_hash(*row[:8]) == expected
        prev_hash = expected
    assert (head.seq, head.hash) == (head_seq, head_hash)  # link leaves the head as it was


def test_fields_of_str_and_int_subclasses_are_stored_as_plain_str_and_int() -> None:
    class Stream(enum.StrEnum):
        CONTEXT = "ctx:a"

    [event], _ = encode_events([NewEvent(Stream.CONTEXT, "t", time_ns=Level.LOW)])
    assert type(event.stream) is str and event.stream == "ctx:a"
    assert type(event.time_ns) is int and event.time_ns == 1


@pytest.mark.parametrize(
    "event",
    [
        NewEvent("s", "t", actor=7),  # type: ignore[arg-type]
        NewEvent(b"s", "t"),  # type: ignore[arg-type]
        NewEvent("s", "t", time_ns=True),
        NewEvent("s", "t", time_ns=1.5),  # type: ignore[arg-type]
        NewEvent("s", "t", time_ns=2**63),
        NewEvent("s", ""),
    ],
    ids=stable_repr,
)
def test_fields_that_cannot_be_hashed_and_stored_as_given_are_refused(event: NewEvent) -> None:
    with pytest.raises(InvalidEvent) as invalid:
        encode_events([NewEvent("s", "t"), event])
    assert invalid.value.details["index"] == 1


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_a_stored_payload_reads_back_as_itself(value: object) -> None:
    """The store reads payloads with orjson, and with json what orjson refuses (integers past
    64 bits, lone surrogates): either way, what was stored."""
    from engine.store.rules import event_from_row, payload_of

    row = (1, "s", 1, "t", 0, "a", canonical_json(value), "h0", "h1")
    assert event_from_row(row).payload == value
    assert payload_of(1, canonical_json(value)) == value  # the payloads alone, read as fast


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, st.sampled_from([None, 0, 2]))
def test_any_json_text_of_a_payload_reads_back_as_its_value(
    value: object, indent: int | None
) -> None:
    """Not only the store's compact text: JSON's whitespace before a long number, or a payload
    that is one bare number, still reads the integer back whole (not as a float)."""
    from engine.store.rules import event_from_row, payload_of

    text = json.dumps(value, indent=indent, separators=None if indent else (", ", ": "))
    row = (1, "s", 1, "t", 0, "a", text, "h0", "h1")
    assert event_from_row(row).payload == value
    assert payload_of(1, text) == value


@pytest.mark.parametrize(
    "text",
    [
        "12345678901234567890",
        '{"a": [1,\n  -98765432109876543210]}',
        "[ 2e3, 99999999999999999999]",
        '{"flat": 1, "big": 123456789012345678901}',
        '{"flat": -12345678901234567890123}',
    ],
)
def test_a_long_integer_after_whitespace_or_alone_is_read_exactly(text: str) -> None:
    from engine.store.rules import event_from_row, payload_of

    row = (1, "s", 1, "t", 0, "a", text, "h0", "h1")
    assert event_from_row(row).payload == json.loads(text)
    assert payload_of(1, text) == json.loads(text)


async def test_big_integers_and_lone_surrogates_survive_a_real_store(backend: Backend) -> None:
    payload = {"big": 2**70, "neg": -(2**65), "lone": "\ud800x", "pair": "\U0001f600"}
    async with await backend.open(create=True, watch=False) as store:
        await store.append([NewEvent("s", "t", payload)])
        [event] = await store.read_stream("s")
        [(_, alone)] = await store.read_stream_payloads("s")
    assert event.payload == payload
    assert alone == payload


async def test_a_part_of_payloads_reads_back_exactly_in_a_real_store(backend: Backend) -> None:
    """``read_stream_part`` (SQLite reads the part out with its own JSON): long integers and
    lone surrogates come back as stored, as they do from ``read_stream``."""
    part = {"big": 2**70, "neg": -(2**65), "lone": "\ud800x", "list": [1, 2**64]}
    async with await backend.open(create=True, watch=False) as store:
        await store.append([NewEvent("s", "t", {"text": "x" * 5000, "result": {"changes": part}})])
        [(seq, stream_seq, type_, read)] = await store.read_stream_part("s", ("result", "changes"))
    assert (seq, stream_seq, type_) == (1, 1, "t")
    assert read == part
    assert type(read["big"]) is int and type(read["list"][1]) is int
