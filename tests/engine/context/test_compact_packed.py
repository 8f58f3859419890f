"""The packed compact form: each turn's slots encoded apart, decoded when first read; a round
trip gives the same context, and bad data is refused (when read, for a turn's own record)."""

from __future__ import annotations

from typing import Any

import pytest

from engine.context import (
    Context,
    InvalidExport,
    SequentialIds,
    SteppingClock,
    TextContent,
    compact,
)
from engine.context.compact import (
    PackedTurn,
    dump_compact,
    dump_packed,
    load_compact,
    unpack_turns,
    unpacked,
)
from engine.context.nodes import Turn

from .conftest import new_context
from .test_compact import rich_context


@pytest.fixture(autouse=True)
def none_decoded_on_restoring(monkeypatch: pytest.MonkeyPatch) -> None:
    """These small contexts would be decoded whole as they are restored (the turns a reader
    draws first are: ``DRAWN_FIRST`` at each end): none are, to see each turn decoded when
    read (``test_the_turns_a_reader_draws_first_are_decoded_on_restoring`` sets it back)."""
    monkeypatch.setattr(compact, "DRAWN_FIRST", 0)


def packed_roundtrip(context: Context) -> Context:
    data, turns = dump_packed(context)
    return load_compact(data, ids=SequentialIds(start=10_000), clock=SteppingClock(), packed=turns)


def history_turns(context: Context) -> list[PackedTurn]:
    turns = [turn for depth, turn in context.iter_turns() if depth >= 0]
    assert all(isinstance(turn, PackedTurn) for turn in turns)
    return turns  # type: ignore[return-value]


def test_a_packed_round_trip_keeps_the_lossless_export() -> None:
    context = rich_context()
    loaded = packed_roundtrip(context)
    assert loaded.model_dump_json() == context.model_dump_json()
    assert loaded.item_count() == context.item_count()


def test_restoring_decodes_no_turn_and_counts_from_the_index() -> None:
    context = rich_context()
    loaded = packed_roundtrip(context)
    turns = history_turns(loaded)
    assert all(not turn.decoded for turn in turns)
    assert loaded.item_count() == context.item_count()  # counted without decoding
    assert [t.item_count() for t in turns] == [
        t.item_count() for d, t in context.iter_turns() if d >= 0
    ]
    assert all(not turn.decoded for turn in turns)
    first = turns[0]
    assert sorted(first.slots) == sorted(context.turn_at(len(turns) - 1).slots)  # type: ignore[union-attr]
    assert first.decoded and all(not turn.decoded for turn in turns[1:])


def _counted(context: Context) -> tuple[list[int], list[int]]:
    """Each turn's counts, oldest first, counted turn by turn (not from an index)."""
    turns = context.turns_oldest_first()
    return [t.slot_count() for t in turns], [t.item_count() for t in turns]


def test_turn_counts_come_from_the_index_until_a_turn_is_written() -> None:
    context = rich_context()
    loaded = packed_roundtrip(context)
    slots, items = loaded.turn_counts()
    assert (list(slots), list(items)) == _counted(context)
    assert all(not turn.decoded for turn in history_turns(loaded))  # read from the index
    # Each step writes a turn without adding or removing one, or changes the turns: the
    # counts follow (a written turn is counted again, not read from the index).
    steps = [
        lambda c: c.pact_insert("d1, 4, 0", TextContent("a slot more in an old turn")),
        lambda c: c.pact_insert("d1, 1, 0", TextContent("an item more in an old slot")),
        lambda c: c.pact_delete(key="n"),
        lambda c: c.add_user("again"),
        lambda c: c.advance(),
    ]
    for step in steps:
        before = _counted(loaded)
        step(loaded)
        slots, items = loaded.turn_counts()
        assert (list(slots), list(items)) == _counted(loaded) != before


FIELDS = ("id", "seq", "created_at_ns", "creation_index")


def _held(turn: Turn, name: str) -> bool:
    """Whether the turn holds a value for field ``name`` (read through its slot, which does
    not fall back on ``PackedTurn.__getattr__``)."""
    try:
        getattr(Turn, name).__get__(turn, Turn)
    except AttributeError:
        return False
    return True


def test_a_packed_turn_reads_its_fields_from_the_index_when_first_asked() -> None:
    context = rich_context()
    loaded = packed_roundtrip(context)
    turns = history_turns(loaded)
    originals = list(context.turns_oldest_first())
    assert not any(_held(turn, name) for turn in turns for name in FIELDS)  # none made yet
    first, last = turns[0], turns[-1]
    assert first.seq == originals[0].seq and _held(first, "seq")
    assert not _held(first, "id") and not first.decoded
    assert first.gen == 0
    # Decoding keeps the fields not read yet (the index is let go of with the record).
    last.unpack()
    assert last.decoded and all(_held(last, name) for name in FIELDS)
    for turn, original in zip(turns, originals, strict=True):
        assert [getattr(turn, n) for n in FIELDS] == [getattr(original, n) for n in FIELDS]
    with pytest.raises(AttributeError):
        first.no_such_field  # noqa: B018


def test_a_packed_context_goes_on_exactly_like_the_original() -> None:
    original = rich_context()
    loaded = packed_roundtrip(original)
    for context in (original, loaded):
        context._ids = SequentialIds(prefix="next")  # type: ignore[attr-defined]
        context._clock = SteppingClock(start=10**6)  # type: ignore[attr-defined]
        context.add_user("again")
        for _ in range(6):
            context.advance()
        context.pact_delete(key="n")
    assert loaded.model_dump_json() == original.model_dump_json()


def test_turns_never_read_are_packed_again_as_they_were_read() -> None:
    context = rich_context()
    data, turns = dump_packed(context)
    loaded = load_compact(data, packed=turns)
    assert dump_packed(loaded) == (data, turns)
    assert all(not turn.decoded for turn in history_turns(loaded))  # none decoded
    first, second, *_ = history_turns(loaded)
    assert first.seq >= 0 and second.unpack()  # a field read, a turn decoded: the same again
    assert dump_packed(loaded) == (data, turns)


def test_integers_past_64_bits_survive_a_packed_turn() -> None:
    context = new_context()
    context.add_user("hello")
    context.pact_insert("d0, 1, 0", TextContent("big", key="big"))
    context["d0, 1, 0"].item.data = {"big": 2**70}  # type: ignore[union-attr]
    data, turns = dump_packed(context)
    loaded = load_compact(data, packed=turns)
    assert loaded["d0, 1, 0"].item.data == {"big": 2**70}  # type: ignore[union-attr]


def test_unpacked_is_the_plain_form() -> None:
    context = rich_context()
    data, turns = dump_packed(context)
    assert unpacked(data, turns) == dump_compact(context)


def test_the_packed_form_needs_its_turns_and_the_plain_one_none() -> None:
    context = rich_context()
    data, turns = dump_packed(context)
    with pytest.raises(InvalidExport):
        load_compact(data)
    with pytest.raises(InvalidExport):
        load_compact(dump_compact(context), packed=turns)


def two_turns() -> Context:
    context = new_context()
    context.add_user("hello")
    context.pact_insert("d0, 1, 0", TextContent("note"))
    context.add_user("again")
    return context


@pytest.mark.parametrize(
    "damage",
    ["trailing bytes", "short", "counts", "not json", "bad slot", "columns", "not numbers"],
)
def test_malformed_packed_turns_are_refused_with_a_typed_error(damage: str) -> None:
    data, turns = dump_packed(two_turns())
    index = data["turns"]
    length = index["length"][0]
    if damage == "trailing bytes":
        turns += b" "
    elif damage == "short":
        index["length"][0] = length + len(turns)
    elif damage == "counts":
        index["items"][0] += 1
    elif damage == "not json":
        turns = b"[" * length + turns[length:]
    elif damage == "bad slot":
        turns = turns.replace(b'[["', b'[[7,"', 1)
    elif damage == "columns":
        index["seq"].pop()
    else:
        index["slots"][0] = "1"
    with pytest.raises(InvalidExport):
        context = load_compact(data, packed=turns)
        context.build_indexes()  # a turn's own record is read when first read


def test_an_id_used_twice_is_refused_when_the_context_is_indexed() -> None:
    context = two_turns()
    data, turns = dump_packed(context)
    [older, newer] = [turn for depth, turn in context.iter_turns() if depth >= 0]
    twice = turns.replace(newer.slots[0].items[0].id.encode(), older.slots[0].items[0].id.encode())
    loaded = load_compact(data, packed=twice)
    with pytest.raises(InvalidExport, match="more than once"):
        loaded.build_indexes()


def test_unpacking_decodes_every_packed_turn_a_chunk_at_a_time() -> None:
    context = two_turns()
    context.add_user("third")
    data, turns = dump_packed(context)
    loaded = load_compact(data, packed=turns)
    packed = history_turns(loaded)
    assert len(packed) == 3
    assert list(unpack_turns(loaded, 2)) == [1, 0]
    assert all(turn.decoded for turn in packed)
    assert list(unpack_turns(loaded, 2)) == []  # nothing left
    assert loaded.model_dump_json() == context.model_dump_json()


def test_threads_reading_a_packed_turn_at_once_get_the_same_slots() -> None:
    import sys
    import threading

    context = new_context()
    for n in range(40):
        context.add_user(f"question {n}")
        for k in range(30):
            context.pact_insert("d0, 1, 0", TextContent(f"note {n} {k}"))
    data, turns = dump_packed(context)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads swap as often as they can, mid-decode
    try:
        loaded = load_compact(data, packed=turns)
        packed = history_turns(loaded)
        start = threading.Barrier(4)
        seen: list[list[object]] = [[] for _ in range(4)]

        def read(into: list[object]) -> None:
            start.wait()
            into.extend(turn.slots for turn in packed)

        threads = [threading.Thread(target=read, args=(into,)) for into in seen]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    for i, turn in enumerate(packed):
        assert all(into[i] is turn.slots for into in seen)


def ten_turns_packed() -> tuple[Context, tuple[dict[str, Any], bytes]]:
    """A context of ten questions, a turn each, and ``dump_packed`` of it."""
    context = new_context()
    for n in range(10):
        context.add_user(f"question {n}")
    return context, dump_packed(context)


def test_the_turns_a_reader_draws_first_are_decoded_on_restoring(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compact, "DRAWN_FIRST", 3)
    context, (data, turns) = ten_turns_packed()
    loaded = load_compact(data, packed=turns)
    decoded = [turn.decoded for turn in history_turns(loaded)]
    assert decoded == [True] * 3 + [False] * 4 + [True] * 3
    assert loaded.model_dump_json() == context.model_dump_json()


@pytest.mark.parametrize(("turn", "at_restoring"), [(0, True), (4, False), (9, True)])
def test_a_malformed_turn_a_reader_draws_first_is_refused_on_restoring(
    monkeypatch: pytest.MonkeyPatch, turn: int, at_restoring: bool
) -> None:
    monkeypatch.setattr(compact, "DRAWN_FIRST", 3)
    _context, (data, turns) = ten_turns_packed()
    lengths = data["turns"]["length"]
    start = sum(lengths[:turn])
    forged = turns[:start] + b"x" * lengths[turn] + turns[start + lengths[turn] :]
    turn_id = data["turns"]["id"][turn]
    if at_restoring:
        with pytest.raises(InvalidExport, match=repr(turn_id)):
            load_compact(data, packed=forged)
    else:
        loaded = load_compact(data, packed=forged)
        with pytest.raises(InvalidExport, match=repr(turn_id)):
            loaded.build_indexes()
