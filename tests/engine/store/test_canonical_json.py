"""The store's fast canonical JSON writes exactly json.dumps's canonical form, or raises with it.

Hashes are defined over json.dumps(..., sort_keys=True, separators=(",", ":"), ensure_ascii=True,
allow_nan=False): any program can recompute them. The store writes that form with orjson where
orjson agrees and falls back to json's encoder elsewhere; one wrong byte would be a hash no one
else can reproduce.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import hashlib
import json
import math
import uuid
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.store import NewEvent, chain
from engine.store.chain import (
    ChainHead,
    canonical_json,
    canonical_json_batch,
    canonical_json_fast,
    encode_events,
    event_hash,
)
from engine.store.errors import InvalidEvent

pytestmark = pytest.mark.filterwarnings("error")


def reference(value: object) -> str:
    """The documented canonical form."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def assert_same_as_reference(value: object) -> None:
    try:
        expected = reference(value)
    except (TypeError, ValueError, RecursionError) as error:
        # json.dumps raises RecursionError for nesting past the interpreter's limit, which
        # canonical_json reports as ValueError; otherwise the same error class.
        kind = ValueError if isinstance(error, RecursionError) else type(error)
        with pytest.raises(kind):
            canonical_json_fast(value)
        with pytest.raises(kind):
            canonical_json(value)
        assert canonical_json_batch([value]) is None
    else:
        assert canonical_json_fast(value) == expected
        assert canonical_json(value) == expected


def is_json(value: object) -> bool:
    try:
        reference(value)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


# Characters where orjson and json part ways, or JSON escapes: controls, quote, backslash, DEL,
# Latin-1, line separators, the BOM, the last BMP character, astral characters, lone surrogates.
TRICKY_CHARACTERS = [
    *map(chr, range(0x20)),
    '"', "\\", "/", "\x7f", "\x80", "\xe9", "\xff", "\u2028", "\u2029", "\ufeff", "\uffff",
    "\U0001f600", "\U0010ffff", "\ud800", "\udfff", "\ud83d", "e", "-", "0", ".", "n",
]  # fmt: skip
texts = st.text(
    st.one_of(st.sampled_from(TRICKY_CHARACTERS), st.characters(exclude_categories=())),
    max_size=12,
) | st.sampled_from(["", "null", "e-7", "0.00001", "1e-07", ",\n0,", "a\\u00e9"])

# Floats where the two libraries' formats differ or nearly do: both sides of 1e-4 and 1e16,
# one- and two-digit exponents, subnormals, extremes, NaN, the infinities, negative zero.
TRICKY_FLOATS = [
    0.0, -0.0, 1.0, -1.5, 0.1, 1e-4, 9.99e-5, 1e-5, 1.5e-5, 1.2345e-6, 1e-7, 1e-9, 1e-10, 1e-99,
    1e-100, 5e-324, 2.2250738585072014e-308, 1e15, 9999999999999998.0, 1e16, 1e22, 1.5e300,
    1.7976931348623157e308, 123456789.123456789, math.nan, math.inf, -math.inf,
]  # fmt: skip
floats = st.one_of(
    st.floats(),
    st.sampled_from(TRICKY_FLOATS),
    # Decimal digits times a power of ten, across the whole range (past it: inf, or 0.0).
    st.builds(lambda digits, exponent: float(f"{digits}e{exponent}"),
              st.integers(-(10**17), 10**17), st.integers(-345, 310)),
)  # fmt: skip
ints = st.one_of(
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**40]),
)
scalars = st.one_of(st.none(), st.booleans(), ints, floats, texts)
# Keys: mostly str; sometimes what json converts (int, float, bool, None) and orjson refuses.
keys = st.one_of(texts, texts, texts, st.none(), st.booleans(), ints, floats)


def containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=5),
        st.lists(children, max_size=5).map(tuple),
        st.dictionaries(texts, children, max_size=5),
        st.dictionaries(keys, children, max_size=4),
    )


json_like = st.recursive(scalars, containers, max_leaves=30)


@settings(max_examples=3000, suppress_health_check=[HealthCheck.too_slow])
@given(json_like)
@example({"é": 1, "e": 2, "\U0001f600": 3, "\uffff": 4})  # key order past ASCII
@example({"a": [1e-7, 1.5e-5, 0.0001, 1e16]})
@example({"x": "DEL \x7f and é"})
@example({"n": None, "f": math.nan})
@example({1: "a", "b": 2})  # json cannot sort int and str keys together: TypeError
@example({2: "a", 10: "b"})  # json sorts them as ints: "2" before "10"
@example({"big": 2**64})
@example({"s": "\ud800"})
def test_the_fast_encoder_writes_what_json_writes(value: object) -> None:
    assert_same_as_reference(value)


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(json_like, max_size=8))
def test_a_batch_is_each_value_encoded_alone_or_none(values: list[object]) -> None:
    texts = canonical_json_batch(values)
    if texts is None:  # some value needs json's encoder or is not JSON: each is encoded alone
        return
    assert texts == [reference(value) for value in values]


def test_ordinary_payloads_take_the_fast_path() -> None:
    payloads = [
        {"node": f"n{n}", "text": "naïve “quoted” ☃ text\x7f", "slot": n, "tags": ["a", "b"]}
        for n in range(100)
    ]
    payloads.append({"parent": None, "score": 0.25, "ids": [1, 2], "at": 1.5e-3})
    assert canonical_json_batch(payloads) == [reference(payload) for payload in payloads]
    # A tuple does not read back equal, so a batch with None and a tuple has no proof that its
    # nulls are all None: one by one, then.
    assert canonical_json_batch([*payloads, {"n": None, "pair": (1, 2)}]) is None


class Color(enum.Enum):
    RED = 1


class Level(enum.IntEnum):
    LOW = 1


class Mode(enum.StrEnum):
    FAST = "fast"


class Labelled(int, enum.Enum):
    """An int enum whose value is not the int: json writes 1, orjson the label."""

    ONE = 1, "one"

    def __new__(cls, number: int, label: str) -> Labelled:
        member = int.__new__(cls, number)
        member._value_ = label
        return member


class Text(str):
    pass


class Number(int):
    pass


class Real(float):
    pass


class Items(dict[str, Any]):
    """A dict whose items() json uses (it is not exactly a dict) and orjson does not."""

    def items(self) -> Any:
        return [("replaced", True)]


@dataclasses.dataclass
class Point:
    x: int


Pair = collections.namedtuple("Pair", "a b")


def nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


def describe(value: object) -> str:
    try:
        return f"{type(value).__name__} {value!r:.40}"
    except Exception:  # Labelled's repr fails: its value is not an int
        return type(value).__name__


circular: list[object] = []
circular.append(circular)


@pytest.mark.parametrize(
    "value",
    [
        # What orjson writes its own way, or json converts or refuses.
        Color.RED,
        Level.LOW,
        Mode.FAST,
        Labelled.ONE,
        {"k": Labelled.ONE},
        {Mode.FAST: 1},
        Text("t"),
        {Text("k"): 1},
        Number(3),
        Real(1.5),
        Items(a=1),
        collections.OrderedDict(b=1, a=2),
        Pair(1, 2),
        Point(1),
        uuid.UUID(int=5),
        orjson.Fragment(b',\n0,"injected"'),
        datetime.date(2020, 1, 1),
        datetime.datetime(2020, 1, 1, 12, 0),
        decimal.Decimal("1.5"),
        b"bytes",
        bytearray(b"x"),
        {1, 2},
        1j,
        ...,
        # Numbers and text where the outputs differ.
        math.nan,
        -math.inf,
        [1e-7, 2.5e-5],
        2**64,
        -(2**63) - 1,
        "\ud800 lone surrogate",
        "é \x7f \U0001f600",
        # Keys.
        {None: 1, True: 2, 1.5: 3},
        {math.nan: 1},
        # Nesting: past orjson's limit (255), past json's (the recursion limit), circular.
        pytest.param(nested(300), id="nested 300 deep"),
        pytest.param(nested(100_000), id="nested 100,000 deep"),
        pytest.param(circular, id="circular"),
    ],
    ids=lambda value: describe(value),
)
def test_the_fast_encoder_falls_back_or_raises_like_json(value: object) -> None:
    assert_same_as_reference(value)


def test_a_batch_with_one_value_json_refuses_is_left_to_the_one_by_one_path() -> None:
    assert canonical_json_batch([{"a": 1}, {"b": math.nan}]) is None
    assert canonical_json_batch([{"a": 1}, {"b": Color.RED}]) is None
    assert canonical_json_batch([]) == []

    with pytest.raises(InvalidEvent) as invalid:
        encode_events([NewEvent("s", "t", {"a": 1}), NewEvent("s", "t", {"b": math.nan})])
    assert invalid.value.details["index"] == 1


def test_payloads_are_encoded_in_batches_and_an_odd_one_slows_only_its_own() -> None:
    payloads: list[dict[str, Any]] = [{"n": n, "text": f"note {n} é"} for n in range(3000)]
    payloads[1500]["tiny"] = 1e-7  # json writes 1e-07: its batch is encoded one by one
    checked, texts = encode_events([NewEvent("s", "t", payload) for payload in payloads])
    assert texts == [reference(payload) for payload in payloads]
    assert [event.payload for event in checked] == payloads

    payloads[2500]["bad"] = math.inf
    with pytest.raises(InvalidEvent) as invalid:
        encode_events([NewEvent("s", "t", payload) for payload in payloads])
    assert invalid.value.details["index"] == 2500


def test_the_installed_orjson_keeps_to_the_checks() -> None:
    # If this fails after an upgrade, the store still writes json's bytes (through json's own
    # encoder, slowly): find what the new orjson writes otherwise and teach the checks.
    assert chain._ORJSON_TRUSTED
    assert chain._orjson_keeps_to_the_checks()


def test_an_orjson_that_writes_numbers_otherwise_is_not_trusted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_dumps = orjson.dumps

    def dumps_without_plus(value: Any, **options: Any) -> bytes:  # 1e+16 as 1e16
        return real_dumps(value, **options).replace(b"e+", b"e")

    monkeypatch.setattr(chain.orjson, "dumps", dumps_without_plus)
    assert not chain._orjson_keeps_to_the_checks()


def test_without_orjson_trusted_everything_goes_through_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(chain, "_ORJSON_TRUSTED", False)
    payloads = [{"a": 1, "b": "é"}, {"c": [None, 1e16]}]
    assert canonical_json_batch(payloads) is None
    assert [canonical_json_fast(payload) for payload in payloads] == list(map(reference, payloads))
    _, texts = encode_events([NewEvent("s", "t", payload) for payload in payloads])
    assert texts == list(map(reference, payloads))


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
            payload=st.dictionaries(texts, json_like, max_size=4).filter(is_json),
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
def test_envelope_hashes_are_sha256_of_json_of_the_envelope(
    events: list[NewEvent], head_seq: int, head_hash: str, now_ns: int
) -> None:
    head = ChainHead(head_seq, head_hash, {event.stream: 5 for event in events})
    checked, payloads = encode_events(events)
    stored, rows = head.link(checked, payloads, now_ns)

    prev_hash = head_hash
    for event, stored_event, row in zip(events, stored, rows, strict=True):
        envelope = {
            "seq": stored_event.seq, "stream": event.stream, "stream_seq": stored_event.stream_seq,
            "type": event.type, "time_ns": now_ns if event.time_ns is None else event.time_ns,
            "actor": event.actor, "payload": event.payload, "prev_hash": prev_hash,
        }  # fmt: skip
        expected = hashlib.sha256(reference(envelope).encode("ascii")).hexdigest()
        assert stored_event.hash == row[8] == expected
        assert row[6] == reference(event.payload)
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
    ids=repr,
)
def test_fields_that_cannot_be_hashed_and_stored_as_given_are_refused(event: NewEvent) -> None:
    with pytest.raises(InvalidEvent) as invalid:
        encode_events([NewEvent("s", "t"), event])
    assert invalid.value.details["index"] == 1
