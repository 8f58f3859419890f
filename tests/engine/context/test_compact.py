"""The compact checkpoint form: a round trip gives the same context, and bad data is refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.context import (
    Context,
    ContextComponent,
    InvalidExport,
    Pos,
    SequentialIds,
    SteppingClock,
    TextContent,
)
from engine.context.compact import (
    ITEM_FIELDS,
    SLOT_FIELDS,
    TURN_FIELDS,
    dump_compact,
    load_compact,
)
from engine.context.errors import ContextError
from engine.context.nodes import Item, Slot, Turn

from .conftest import new_context


def rich_context() -> Context:
    context = new_context()
    context.pact_insert("d-1, 0, 0", TextContent("system", key="sys", tags=["a"]))
    context.add_user("hello")
    context.pact_insert("d0, 1, 0", TextContent("note", key="n", tags=["x", "y"], priority=3))
    context.pact_insert("d0, 2, 0", TextContent("temp", ttl=3))
    context.pact_insert("d0, 3, 0", TextContent("sticky", ttl=1, cadence=1, key="s"))
    context.pact_insert("d0, -1, 0", TextContent("cyclic", ttl=2, cadence=5, data_source="web"))
    context.pact_insert(
        "d0, 0, 1",
        TextContent("alert").render_lifecycle(
            [Pos("d0, 0, 1", ttl=2), Pos("d0, 0, -1", ttl=3), Pos("d0, 0, -2")], cycle=2
        ),
    )
    context.add_assistant("hi")
    for _ in range(4):
        context.advance()
    context.pact_insert("d1, 1, -1", ContextComponent({"structured": [1, 2]}, role="assistant"))
    return context


def roundtrip(context: Context) -> Context:
    data = json.loads(json.dumps(dump_compact(context)))
    return load_compact(data, ids=SequentialIds(start=10_000), clock=SteppingClock())


def test_a_round_trip_keeps_the_lossless_export() -> None:
    context = rich_context()
    loaded = roundtrip(context)
    assert loaded.model_dump_json() == context.model_dump_json()
    assert loaded.item_count() == context.item_count()


def test_a_loaded_context_goes_on_exactly_like_the_original() -> None:
    original = rich_context()
    loaded = roundtrip(original)
    for context in (original, loaded):
        # Same ids and times from here on, so the two can be compared byte for byte.
        context._ids = SequentialIds(prefix="next")  # type: ignore[attr-defined]
        context._clock = SteppingClock(start=10**6)  # type: ignore[attr-defined]
        context.add_user("again")
        for _ in range(6):
            context.advance()
        context.pact_delete(key="n")
    assert loaded.model_dump_json() == original.model_dump_json()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(["user", "assistant", "temp", "sticky", "advance", "note"]), max_size=30
    )
)
def test_round_trips_after_any_conversation(steps: list[str]) -> None:
    context = new_context()
    for step in steps:
        if step in ("user", "assistant"):
            context.add_message(step, step)  # type: ignore[arg-type]
        elif step == "temp":
            context.pact_insert("d0, 2, 0", TextContent("t", ttl=2))
        elif step == "sticky":
            context.pact_insert("d0, 3, 0", TextContent("s", ttl=1, cadence=1))
        elif step == "note":
            context.pact_insert("d0, 1, 1", TextContent("n", key="k"))
        else:
            context.advance()
    assert roundtrip(context).model_dump_json() == context.model_dump_json()


def mutate(data: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    target: Any = data
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["format"], "pact-context"),
        (["version"], 99),
        (["turns"], []),
        (["turns", 0, 4, 0, 5], []),  # an empty slot
        (["turns", 0, 4, 0, 4], 7),  # the core outside the slot
        (["turns", 0, 1], -1),  # a turn with the system's seq
        (["system", 1], 3),
        (["counters"], [1]),
        (["turns", 0, 4, 0, 5, 0], ["too", "short"]),
        (["turns", 0, 4, 1, 5, 0, 0], "n1"),  # an id used twice
    ],
)
def test_malformed_data_is_refused_with_a_typed_error(path: list[Any], value: Any) -> None:
    context = new_context()
    context.add_user("hello")
    context.pact_insert("d0, 1, 0", TextContent("note"))
    context.add_user("again")
    data = dump_compact(context)
    first_id = data["turns"][0][4][0][5][0][0]
    if value == "n1":
        value = first_id
    with pytest.raises(InvalidExport):
        load_compact(mutate(data, path, value))


@pytest.mark.parametrize("data", [None, [], "x", {"format": "pact-context-compact"}])
def test_things_that_are_not_a_document_are_refused(data: Any) -> None:
    with pytest.raises(ContextError):
        load_compact(data)


def test_the_fast_loaders_fill_every_field_a_record_has() -> None:
    assert frozenset(Item.__slots__) == ITEM_FIELDS
    assert frozenset(Slot.__slots__) == SLOT_FIELDS
    assert frozenset(Turn.__slots__) == TURN_FIELDS


def test_a_loaded_context_builds_its_indexes_on_first_use() -> None:
    context = rich_context()
    loaded = roundtrip(context)
    assert loaded.item_count() == context.item_count()  # known before any index exists
    assert [n.id for n in loaded.get_by_tags(["x"])] == [n.id for n in context.get_by_tags(["x"])]
    assert loaded.get_by_key("s") is not None
    found = loaded.find(context.select("#n")[0].id)
    assert found is not None and found.coordinates == context.select("#n")[0].coordinates
    # And it goes on exactly like the original once an operation needs them.
    for ctx in (context, loaded):
        ctx._ids = SequentialIds(prefix="z")  # type: ignore[attr-defined]
        ctx._clock = SteppingClock(start=10**7)  # type: ignore[attr-defined]
        ctx.advance()
        ctx.pact_delete(key="n")
    assert loaded.model_dump_json() == context.model_dump_json()
