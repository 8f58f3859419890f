"""The C extension (engine/store/_chain_c.c) does exactly what the Python code in chain.py does.

link_python and marshal are the reference; the C versions are only used because they agree,
byte for byte and object for object. Skipped where the extension is not built (installed
without a C compiler), where the store runs on the Python code alone.

PACT_STORE_PURE_PYTHON=1 runs the whole suite (and its helper processes) on the Python code.
"""

from __future__ import annotations

import enum
import gc
import hashlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.store import NewEvent, SqliteEventStore, StoredEvent, chain
from engine.store.chain import GENESIS_HASH, link_python

from .conftest import SteppingClock, events
from .test_canonical_json import TRICKY_CHARACTERS, is_json, json_like, reference

_chain_c = pytest.importorskip(
    "engine.store._chain_c",
    reason="the C extension is not built (installed without a C compiler): Python code only",
)

pytestmark = pytest.mark.filterwarnings("error")
EXAMPLES = int(os.environ.get("PACT_PROPERTY_EXAMPLES", "500"))


def link_c(*args: Any) -> tuple[list[StoredEvent], list[chain.ChainRow]]:
    return _chain_c.link(*args, StoredEvent)


def test_the_store_uses_the_c_code_unless_told_not_to() -> None:
    # When the extension disagrees, it is left unused (tests/engine/store/test_chain.py): here
    # it must not.
    assert chain.link_c is not None, "the extension is built but failed its check at import"
    pure = bool(os.environ.get("PACT_STORE_PURE_PYTHON"))
    assert (chain.linker is link_python) == pure
    assert (chain._exact_builtins is chain._marshal_takes) == pure


# Text as the envelope must escape it: controls, quotes, backslashes, DEL, past ASCII, astral
# characters (written as surrogate pairs) and lone surrogates.
texts = st.text(
    st.one_of(st.sampled_from(TRICKY_CHARACTERS), st.characters(exclude_categories=())),
    max_size=10,
)
# Ints past 64 bits are written by str(), below by the C code's own digits.
ints = st.one_of(
    st.integers(),
    st.integers(-(2**64), 2**64),
    st.sampled_from([0, -1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 10**30]),
)
new_events = st.builds(
    NewEvent,
    stream=st.sampled_from(["ctx:a", "ctx:b"]) | texts,
    type=texts,
    payload=json_like.filter(is_json),
    actor=texts,
    time_ns=st.none() | ints,
)


def reference_hash(envelope: dict[str, Any]) -> str:
    canonical = json.dumps(envelope, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def assert_same_objects(c: Sequence[tuple[Any, ...]], python: Sequence[tuple[Any, ...]]) -> None:
    assert c == python
    for c_tuple, python_tuple in zip(c, python, strict=True):
        assert type(c_tuple) is type(python_tuple)
        assert [*map(type, c_tuple)] == [*map(type, python_tuple)]


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(
    batch=st.lists(new_events, max_size=8),
    head_seq=st.integers(0, 2**63 - 9) | st.sampled_from([0, 2**63 - 9]),
    head_hash=st.sampled_from([GENESIS_HASH, "ab" * 32]) | texts,
    now_ns=ints,
    known=st.lists(ints, min_size=3, max_size=3),
)
def test_c_links_exactly_as_python_does(
    batch: list[NewEvent], head_seq: int, head_hash: str, now_ns: int, known: list[int]
) -> None:
    # Known lengths of any size, as link takes them: a few shared ones, so that streams repeat.
    lengths = {event.stream: known[len(event.stream) % 3] for event in batch}
    payloads = [reference(event.payload) for event in batch]
    args = (batch, payloads, head_seq, head_hash, now_ns, lengths)
    lengths_before = dict(lengths)

    c_stored, c_rows = link_c(*args)
    python_stored, python_rows = link_python(*args)

    assert_same_objects(c_stored, python_stored)
    assert_same_objects(c_rows, python_rows)
    assert lengths == lengths_before  # the head's stream lengths are left alone
    prev_hash = head_hash
    for event, stored, row in zip(batch, c_stored, c_rows, strict=True):
        assert stored.payload is event.payload  # shared, as link_python shares it
        assert row[6] == reference(event.payload)
        time_ns = now_ns if event.time_ns is None else event.time_ns
        envelope = {
            "seq": stored.seq, "stream": event.stream, "stream_seq": stored.stream_seq,
            "type": event.type, "time_ns": time_ns, "actor": event.actor,
            "payload": event.payload, "prev_hash": prev_hash,
        }  # fmt: skip
        assert stored.hash == reference_hash(envelope)
        prev_hash = stored.hash


async def test_a_store_appends_the_same_chain_through_either_linker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    chains = []
    for name, linker in (("python", link_python), ("c", chain.link_c)):
        monkeypatch.setattr(chain, "linker", linker)
        async with await SqliteEventStore.open(
            tmp_path / f"{name}.pact", create=True, clock=SteppingClock()
        ) as store:
            await store.append(events("ctx:a", 3) + events("ctx:\u00e9", 2))
            await store.execute(lambda _others: events("ctx:a", 2, start=3))
            assert (await store.verify()).ok
            chains.append(await store.read())
    assert chains[0] == chains[1]
    assert [event.stream_seq for event in chains[0]] == [1, 2, 3, 1, 2, 4, 5]


def raised(call: Callable[[], object]) -> tuple[type[BaseException], tuple[Any, ...]]:
    with pytest.raises(Exception) as error:
        call()
    return type(error.value), error.value.args


@pytest.mark.parametrize(
    "case",
    [
        "unknown stream",
        "fewer payloads",
        "more payloads",
        "actor not str",
        "payload json not str",
        "time an int subclass",
        "bool time",
    ],
)
def test_c_raises_or_formats_as_python_does_on_odd_input(case: str) -> None:
    class Level(enum.IntEnum):
        LOW = 1

    good = NewEvent("s", "t", {"n": 1}, "a")
    batch: list[Any] = [good, good]
    payloads: list[Any] = ['{"n":1}', '{"n":1}']
    lengths = {"s": 0}
    if case == "unknown stream":
        batch[1] = NewEvent("elsewhere", "t")
    elif case == "fewer payloads":
        payloads.pop()
    elif case == "more payloads":
        payloads.append("{}")
    elif case == "actor not str":
        batch[1] = NewEvent("s", "t", actor=7)  # type: ignore[arg-type]
    elif case == "payload json not str":
        payloads[1] = 12
    elif case == "time an int subclass":
        batch[1] = NewEvent("s", "t", time_ns=Level.LOW)
    elif case == "bool time":
        batch[1] = NewEvent("s", "t", time_ns=True)
    args = (batch, payloads, 0, GENESIS_HASH, 5, lengths)
    try:
        expected = link_python(*args)
    except Exception as error:
        kind = type(error)
        assert raised(lambda: link_c(*args))[0] is kind
        if kind is not TypeError:  # TypeError's wording comes from different code
            assert raised(lambda: link_c(*args)) == (kind, error.args)
    else:
        c = link_c(*args)
        assert_same_objects(c[0], expected[0])
        assert_same_objects(c[1], expected[1])


def test_c_keeps_no_references_behind() -> None:
    stream, payload = "ctx:" + "x" * 30, {"n": [1, 2]}
    batch = [NewEvent(stream, "t", payload, "a") for _ in range(50)]
    payloads = [reference(payload)] * 50
    lengths = {stream: 0}
    args = (batch, payloads, 0, GENESIS_HASH, 5, lengths)
    watched = [stream, payload, payloads[0], lengths]
    gc.collect()
    before = [*map(sys.getrefcount, watched)]
    for _ in range(3):
        stored, rows = link_c(*args)
        del stored, rows
        with pytest.raises(KeyError):  # fails on the last event: everything made is let go
            link_c(
                [*batch, NewEvent("unknown", "t")], [*payloads, "{}"], 0, GENESIS_HASH, 5, lengths
            )
    gc.collect()
    assert [*map(sys.getrefcount, watched)] == before


def test_sha256_by_both_c_implementations_is_hashlibs_at_every_length() -> None:
    data = bytes(range(256)) * 2  # every way the last block and the padding can fall, and more
    for size in [*range(len(data) + 1), 1_000_003]:
        message = (data * (1 + size // len(data)))[:size]
        expected = hashlib.sha256(message).hexdigest()
        assert _chain_c.sha256_hex(message) == expected, size
        assert _chain_c.sha256_hex(message, portable=True) == expected, size


@settings(max_examples=EXAMPLES)
@given(st.binary(max_size=300))
def test_sha256_by_both_c_implementations_is_hashlibs(data: bytes) -> None:
    expected = hashlib.sha256(data).hexdigest()
    assert _chain_c.sha256_hex(data) == expected
    assert _chain_c.sha256_hex(data, portable=True) == expected


class Text(str):
    pass


class Flag(enum.IntFlag):
    ON = 1


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


plain_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text()),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(st.text() | st.integers(), children, max_size=4),
    ),
    max_leaves=20,
)
# What marshal takes and orjson refuses (or writes its own way), and what neither takes.
odd_values = st.sampled_from(
    [b"bytes", bytearray(b"x"), {1}, frozenset(), 1j, ..., Text("s"), Flag.ON, object()]
)
mixed_values = st.recursive(
    plain_values | odd_values,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(), children),
    max_leaves=10,
)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(plain_values)
def test_plain_values_pass_the_c_type_check_as_they_pass_marshal(value: object) -> None:
    assert _chain_c.plain_json_types(value) is True
    assert chain._marshal_takes(value)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_values)
def test_what_the_c_type_check_takes_marshal_takes(value: object) -> None:
    # The other way round need not hold: marshal takes bytes, sets and complex numbers, which
    # orjson refuses, so that json's encoder writes them (or refuses them) either way.
    if _chain_c.plain_json_types(value):
        assert chain._marshal_takes(value)


def test_the_c_type_check_refuses_nesting_orjson_refuses() -> None:
    assert _chain_c.plain_json_types(nested(256))
    assert not _chain_c.plain_json_types(nested(257))
    looped: list[Any] = []
    looped.append(looped)
    assert not _chain_c.plain_json_types(looped)
    assert chain.canonical_json_batch([nested(257)]) is None
