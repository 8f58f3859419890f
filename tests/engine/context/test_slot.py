"""``Slot.take``: removing several items from a slot in one pass must leave exactly what
removing them one at a time leaves (in any order), and report their offsets from before."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.context import Context, TextContent
from engine.context.nodes import Item, Slot

from .conftest import new_context


def item(n: int) -> Item:
    return Item(
        id=f"i{n}",
        node_type="text",
        content=f"c{n}",
        key=None,
        tags=(),
        ttl=None,
        cad=None,
        priority=0,
        role=None,
        created_at_ns=n,
        creation_index=n,
        born_episode=0,
    )


def remove_one_by_one(items: list[Item], core: int, doomed: list[Item]) -> tuple[list[Item], int]:
    """The rule as spec §2 states it, one item at a time: the gap closes; a removed core is
    replaced by +1, or by -1 when there is no post side."""
    items = list(items)
    for gone in doomed:
        index = items.index(gone)
        del items[index]
        if index < core or (index == core and core >= len(items)):
            core = max(core - 1, 0)
    return items, core


@st.composite
def slots_and_removals(draw: st.DrawFn) -> tuple[list[Item], int, list[Item]]:
    items = [item(n) for n in range(draw(st.integers(1, 12)))]
    core = draw(st.integers(0, len(items) - 1))
    order = draw(st.permutations(items))
    doomed = order[: draw(st.integers(0, len(order)))]
    return items, core, doomed


@given(slots_and_removals())
def test_take_is_removing_one_at_a_time_in_any_order(
    case: tuple[list[Item], int, list[Item]],
) -> None:
    items, core, doomed = case
    slot = Slot(
        id="s", position=1, gen=0, created_at_ns=0, creation_index=0, items=list(items), core=core
    )
    offsets = slot.take(doomed)
    assert offsets == [items.index(gone) - core for gone in doomed]
    assert (slot.items, slot.core) == remove_one_by_one(items, core, doomed)


def test_take_refuses_an_item_the_slot_does_not_hold_and_changes_nothing() -> None:
    items = [item(n) for n in range(3)]
    slot = Slot(
        id="s", position=1, gen=0, created_at_ns=0, creation_index=0, items=list(items), core=1
    )
    with pytest.raises(LookupError, match="i9"):
        slot.take([items[0], item(9)])
    assert (slot.items, slot.core) == (items, 1)


def test_deleting_several_items_of_one_slot_at_once_matches_deleting_them_singly() -> None:
    """Through the public API: a query that takes the core and items on both sides."""

    def build() -> Context:
        ctx = new_context()
        ctx.add_user("hello")
        for offset, tagged in [
            (0, True),
            (1, False),
            (2, True),
            (-1, True),
            (-2, False),
            (-3, True),
        ]:
            ctx.pact_insert(
                f"d0, 1, {offset}", TextContent(f"o{offset}", tags=["x"] if tagged else [])
            )
        return ctx

    together, singly = build(), build()
    deleted = together.pact_delete("+x")
    for node_id in deleted:
        (node,) = [n for n in singly.select("*") if n.id == node_id]
        singly.pact_delete(f"d{node.coordinates[0]}, {node.coordinates[1]}, {node.coordinates[2]}")
    assert len(deleted) == 4
    assert [(n.id, n.coordinates) for n in together.select("d0, 1, *")] == [
        (n.id, n.coordinates) for n in singly.select("d0, 1, *")
    ]
    assert together.model_dump()["turns"] == singly.model_dump()["turns"]
