"""Appending, reading back, reopening: what goes in comes out, in order, without gaps."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.store import (
    EventStore,
    InvalidEvent,
    NewEvent,
    StoreClosed,
    StoredEvent,
    StreamHead,
)
from engine.store.chain import GENESIS_HASH
from engine.store.errors import CorruptEvent

from .conftest import Backend, SqliteBackend, SteppingClock, events

pytestmark = pytest.mark.filterwarnings("error")


async def test_appended_events_read_back_equal_and_survive_reopening(
    store: EventStore, backend: Backend
) -> None:
    appended = await store.append(events("ctx:a", 3))
    appended += await store.append(events("ctx:b", 2) + events("ctx:a", 2, start=3))

    assert [event.seq for event in appended] == [1, 2, 3, 4, 5, 6, 7]
    assert [(e.stream, e.stream_seq) for e in appended] == [
        ("ctx:a", 1), ("ctx:a", 2), ("ctx:a", 3), ("ctx:b", 1), ("ctx:b", 2),
        ("ctx:a", 4), ("ctx:a", 5),
    ]  # fmt: skip
    assert appended[0].prev_hash == GENESIS_HASH
    assert all(e.prev_hash == before.hash for before, e in itertools.pairwise(appended))
    assert await store.read() == appended
    await store.close()

    async with await backend.open() as reopened:
        assert await reopened.read() == appended
        assert await reopened.head() == 7
        assert await reopened.streams() == {"ctx:a": 5, "ctx:b": 2}
        assert (await reopened.verify()).ok


async def test_read_ranges_and_streams(store: EventStore) -> None:
    await store.append(events("ctx:a", 5) + events("ctx:b", 5))

    assert [e.seq for e in await store.read(after_seq=3, limit=4)] == [4, 5, 6, 7]
    assert [e.stream_seq for e in await store.read(stream="ctx:b", after_seq=7)] == [3, 4, 5]
    assert await store.read(after_seq=10) == []
    batches = [batch async for batch in store.scan(after_seq=2, batch_size=3)]
    assert [[e.seq for e in batch] for batch in batches] == [[3, 4, 5], [6, 7, 8], [9, 10]]


async def test_a_stream_read_from_a_place_in_it_and_where_streams_end(
    store: EventStore,
) -> None:
    await store.append(events("ctx:a", 3) + events("ctx:b", 2))
    await store.append(events("ctx:a", 2, start=3) + events("ctx:c", 1))
    a = await store.read(stream="ctx:a")

    assert await store.read_stream("ctx:a") == a
    assert [e.stream_seq for e in await store.read_stream("ctx:a", 2)] == [3, 4, 5]
    assert await store.read_stream("ctx:a", 1, limit=2) == a[1:3]
    assert await store.read_stream_payloads("ctx:a", 1, limit=2) == [
        (e.stream_seq, e.payload) for e in a[1:3]
    ]
    assert await store.read_stream("ctx:a", 5) == []
    assert await store.read_stream_part("ctx:a", ("text",), 1, limit=2) == [
        (e.seq, e.stream_seq, e.type, e.payload["text"]) for e in a[1:3]
    ]
    assert await store.read_stream("ctx:none") == []
    # Where each stream ends: all of them, or those with events after a seq.
    assert await store.stream_heads() == {
        "ctx:a": StreamHead(7, 5),
        "ctx:b": StreamHead(5, 2),
        "ctx:c": StreamHead(8, 1),
    }
    assert await store.stream_heads(5) == {"ctx:a": StreamHead(7, 5), "ctx:c": StreamHead(8, 1)}
    assert await store.stream_heads(7) == {"ctx:c": StreamHead(8, 1)}
    assert await store.stream_heads(8) == {}


async def test_fields_are_stored_as_given(store: EventStore) -> None:
    payload = {"text": 'naïve ☃ \u0000 "quoted"', "nested": {"b": [1, 2.5, None, True]}, "a": {}}
    [stored] = await store.append([NewEvent("ctx:ü", "déjà", payload, actor="agent ☃")])
    [read_back] = await store.read()

    assert read_back == stored
    assert read_back.payload == payload
    assert (read_back.stream, read_back.type, read_back.actor) == ("ctx:ü", "déjà", "agent ☃")
    assert read_back.time_ns == 1000  # from the injected clock


async def test_a_command_takes_one_time_unless_its_events_carry_their_own(
    backend: Backend,
) -> None:
    async with await backend.open(create=True, clock=SteppingClock()) as store:
        first = await store.append(events("ctx:a", 3))
        second = await store.append([NewEvent("ctx:a", "noted", time_ns=42)])

    assert [e.time_ns for e in first] == [1000, 1000, 1000]
    assert second[0].time_ns == 42


async def test_stream_sequences_are_gapless_across_many_commands(store: EventStore) -> None:
    for round_ in range(20):
        await store.append(events(f"ctx:{round_ % 3}", round_ % 4 + 1))

    for stream, length in (await store.streams()).items():
        assert [e.stream_seq for e in await store.read(stream=stream)] == list(range(1, length + 1))
    assert [e.seq for e in await store.read()] == list(range(1, await store.head() + 1))


async def test_a_refused_command_writes_nothing_and_the_store_carries_on(
    store: EventStore,
) -> None:
    class SectionLocked(Exception):
        pass

    await store.append(events("ctx:a", 2))

    def refuse(_others: Sequence[StoredEvent]) -> list[NewEvent]:
        raise SectionLocked("held by agent-2")

    with pytest.raises(SectionLocked):
        await store.execute(refuse)
    assert await store.head() == 2

    with pytest.raises(InvalidEvent) as invalid:
        await store.append([*events("ctx:a", 1), NewEvent("ctx:a", "bad", {"x": {1, 2}})])
    assert invalid.value.code == "INVALID_EVENT"
    assert invalid.value.details["index"] == 1
    with pytest.raises(InvalidEvent):
        await store.append([NewEvent("ctx:a", "bad", {"x": float("nan")})])
    with pytest.raises(InvalidEvent):
        await store.append([NewEvent("", "no stream")])
    assert await store.head() == 2

    [after] = await store.append(events("ctx:a", 1))
    assert (after.seq, after.stream_seq) == (3, 3)
    assert (await store.verify()).ok


async def test_execute_shows_decide_what_others_appended_since_the_cursor(
    backend: Backend,
) -> None:
    async with (
        await backend.open(create=True, watch=False) as mine,
        await backend.open(watch=False) as theirs,
    ):
        seen: list[list[int]] = []

        def note_and_append(others: Sequence[StoredEvent]) -> list[NewEvent]:
            seen.append([e.seq for e in others])
            return events("ctx:mine", 1)

        await mine.execute(note_and_append)  # appends 1
        await theirs.append(events("ctx:theirs", 2))  # appends 2, 3
        await mine.execute(note_and_append)  # sees 2, 3, appends 4
        await mine.execute(note_and_append)  # sees nothing new, appends 5
        assert seen == [[], [2, 3], []]
        assert mine.cursor == 5

        # append() does not move the cursor: the owner has not applied those events.
        await mine.append(events("ctx:mine", 1))  # 6
        await mine.execute(note_and_append)  # sees 6, appends 7
        assert seen[-1] == [6]

        # An owner that rebuilt its state from a checkpoint moves the cursor back to it.
        mine.cursor = 3
        await mine.execute(lambda others: seen.append([e.seq for e in others]) or [])
        assert seen[-1] == [4, 5, 6, 7]
        assert mine.cursor == 7


async def test_a_closed_store_refuses_to_work(backend: Backend) -> None:
    store = await backend.open(create=True)
    await store.close()
    await store.close()  # closing twice is harmless

    with pytest.raises(StoreClosed):
        await store.append(events("ctx:a", 1))
    with pytest.raises(StoreClosed):
        await store.read()
    with pytest.raises(StoreClosed):
        store.subscribe(0)


async def test_events_shown_to_a_refusing_decide_are_not_shown_again(backend: Backend) -> None:
    class Refused(Exception):
        pass

    async with (
        await backend.open(create=True, watch=False) as mine,
        await backend.open(watch=False) as theirs,
    ):
        shown: list[list[int]] = []

        def apply_then_refuse(others: Sequence[StoredEvent]) -> list[NewEvent]:
            shown.append([e.seq for e in others])  # the owner applies them, then validates
            raise Refused

        await theirs.append(events("ctx:theirs", 2))
        with pytest.raises(Refused):
            await mine.execute(apply_then_refuse)
        with pytest.raises(Refused):
            await mine.execute(apply_then_refuse)
        assert shown == [[1, 2], []]
        assert mine.cursor == 2


async def test_a_store_quiet_while_others_append_a_lot_continues_the_chain(
    backend: Backend,
) -> None:
    async with (
        await backend.open(create=True, watch=False) as quiet,
        await backend.open(watch=False) as busy,
    ):
        await quiet.append(events("ctx:shared", 1))
        await busy.append(events("ctx:shared", 1500) + events("ctx:busy", 1500))

        [appended] = await quiet.append(events("ctx:shared", 1))
        assert (appended.seq, appended.stream_seq) == (3002, 1502)

        await busy.append(events("ctx:shared", 1200))
        shown: list[int] = []

        def count_and_append(others: Sequence[StoredEvent]) -> list[NewEvent]:
            shown.append(len(others))
            return events("ctx:shared", 1)

        [appended] = await quiet.execute(count_and_append)
        # The cursor was the head at opening (0): everything since then, its own appends too.
        assert shown == [4202]
        assert (appended.seq, appended.stream_seq) == (4203, 2703)
        assert (await quiet.verify()).ok


async def test_a_cancelled_command_is_whole_or_absent_and_frees_the_lock(
    store: EventStore, backend: Backend
) -> None:
    await store.append(events("ctx:a", 1))
    # Cancelled at different points: waiting for the writer, catching up, deciding, inserting.
    # The delays only spread where the cancel lands; nothing waits on them, and what is checked
    # (whole or absent, lock free) must hold wherever it lands.
    for delay in (0, 0, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01):
        for command in (
            lambda: store.execute(lambda _others: events("ctx:a", 300)),
            lambda: store.append(events("ctx:a", 300)),
        ):
            task = asyncio.create_task(command())
            await asyncio.sleep(delay)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            # No transaction left open: another connection takes the write lock at once.
            assert await backend.write_lock_is_free()

    [last] = await store.append(events("ctx:a", 1))
    assert (last.stream_seq - 2) % 300 == 0  # only whole commands before it
    assert [e.seq for e in await store.read()] == list(range(1, last.seq + 1))
    assert (await store.verify()).ok


async def test_a_part_of_each_payload_is_what_it_holds_there_or_none(store: EventStore) -> None:
    payloads: list[dict[str, Any]] = [
        {"result": {"changes": {"op": "message", "entries": [1, 2]}}, "text": "big " * 1000},
        {"result": {"changes": None}},  # null: none
        {"result": {"other": 1}},  # no such key
        {"result": ["changes"]},  # a key on the way is a list's
        {"result": "changes"},  # ... or a string's
        {"result": {"changes": "a string"}},
        {"result": {"changes": 7}},
        {"result": {"changes": []}},
        {},
    ]
    await store.append([NewEvent("ctx:a", f"t{n}", p) for n, p in enumerate(payloads)])

    parts = await store.read_stream_part("ctx:a", ("result", "changes"))

    assert parts == [
        (1, 1, "t0", {"op": "message", "entries": [1, 2]}),
        (2, 2, "t1", None),
        (3, 3, "t2", None),
        (4, 4, "t3", None),
        (5, 5, "t4", None),
        (6, 6, "t5", "a string"),
        (7, 7, "t6", 7),
        (8, 8, "t7", []),
        (9, 9, "t8", None),
    ]
    assert await store.read_stream_part("ctx:a", ()) == [
        (e.seq, e.stream_seq, e.type, e.payload) for e in await store.read_stream("ctx:a")
    ]
    assert await store.read_stream_part("ctx:a", ("result",), 7, limit=1) == [
        (8, 8, "t7", {"changes": []})
    ]
    assert await store.read_stream_part("ctx:none", ("result",)) == []


async def test_a_part_of_a_payload_that_is_not_json_is_refused_as_the_payload_is(
    workspace: Path,
) -> None:
    """A payload changed outside the store into something that is not JSON: the part is
    refused with the error ``read_stream`` gives, not read as if there were none."""
    backend = SqliteBackend(workspace)
    async with await backend.open(create=True, watch=False) as store:
        await store.append([NewEvent("ctx:a", "t", {"result": {"changes": {"op": "x"}}})])
    await backend.edit("UPDATE events SET payload = ? WHERE seq = 1", '{"result": {"changes": ')
    async with await backend.open(watch=False) as store:
        with pytest.raises(CorruptEvent) as whole:
            await store.read_stream("ctx:a")
        with pytest.raises(CorruptEvent) as part:
            await store.read_stream_part("ctx:a", ("result", "changes"))
    assert str(part.value) == str(whole.value)


async def test_every_store_refuses_a_path_key_holding_a_double_quote(store: EventStore) -> None:
    """SQLite's JSON path quotes keys with ``"``: the stores refuse such a key alike, before
    reading anything, rather than one reading it and another refusing it."""
    await store.append([NewEvent("ctx:a", "t", {'a"b': {"c": 1}})])

    with pytest.raises(ValueError, match="double quote"):
        await store.read_stream_part("ctx:a", ('a"b', "c"))
    assert await store.read_stream_part("ctx:a", ("a",)) == [(1, 1, "t", None)]
