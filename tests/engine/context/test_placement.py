"""Placement (spec §2) and ODI (spec §4): dense offsets, sparse positions, turns moving.

Decisions tested as stated: offsets are dense by construction and past-the-end inserts clamp;
``add_user`` starts a new turn unless the active turn holds no message and no permanent/sticky
item; ``pact_insert("d0, 0, 0")`` starts one only when slot 0 is non-empty; temporary and cyclic
items keep (depth, position) and are re-seated by the placement rules; a history turn left with no
items is removed and older turns move up.
"""

from __future__ import annotations

import pytest

from engine.context import Context, TextContent
from engine.context.errors import NotFound

from .conftest import (
    check_structure,
    coords,
    empty_history_depths,
    layout,
    new_context,
    slot_layout,
)


def slot_with(ctx: Context, offsets_contents: list[tuple[int, str]]) -> None:
    """Fill slot (0, 1) by inserting in the given order."""
    for offset, content in offsets_contents:
        ctx.pact_insert(f"d0, 1, {offset}", TextContent(content))


# ------------------------------------------------------------------------------------------
# offsets inside a slot
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("asked", [0, 1, 5, -1, -7])
def test_first_item_of_a_slot_is_the_core_whatever_offset_was_asked(
    ctx: Context, asked: int
) -> None:
    node = ctx.pact_insert(f"d0, 1, {asked}", TextContent("first"))
    assert node.coordinates == (0, 1, 0)
    assert slot_layout(ctx, 0, 1) == {0: "first"}


def test_insert_at_core_makes_new_core_and_pushes_post_side(ctx: Context) -> None:
    slot_with(ctx, [(0, "c"), (1, "p1"), (2, "p2"), (-1, "m1")])
    assert slot_layout(ctx, 0, 1) == {-1: "m1", 0: "c", 1: "p1", 2: "p2"}
    new = ctx.pact_insert("d0, 1, 0", TextContent("new core"))
    assert new.coordinates == (0, 1, 0)
    assert slot_layout(ctx, 0, 1) == {-1: "m1", 0: "new core", 1: "c", 2: "p1", 3: "p2"}


def test_insert_positive_offset_pushes_items_at_and_after_it(ctx: Context) -> None:
    slot_with(ctx, [(0, "c"), (1, "p1"), (2, "p2"), (-1, "m1")])
    ctx.pact_insert("d0, 1, 2", TextContent("x"))
    assert slot_layout(ctx, 0, 1) == {-1: "m1", 0: "c", 1: "p1", 2: "x", 3: "p2"}


def test_insert_negative_offset_pushes_items_at_and_before_it(ctx: Context) -> None:
    slot_with(ctx, [(0, "c"), (-1, "m1"), (-2, "m2"), (1, "p1")])
    assert slot_layout(ctx, 0, 1) == {-2: "m2", -1: "m1", 0: "c", 1: "p1"}
    ctx.pact_insert("d0, 1, -1", TextContent("x"))
    assert slot_layout(ctx, 0, 1) == {-3: "m2", -2: "m1", -1: "x", 0: "c", 1: "p1"}


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        (3, {-1: "m1", 0: "c", 1: "p1", 2: "x"}),
        (50, {-1: "m1", 0: "c", 1: "p1", 2: "x"}),
        (-2, {-2: "x", -1: "m1", 0: "c", 1: "p1"}),
        (-40, {-2: "x", -1: "m1", 0: "c", 1: "p1"}),
    ],
)
def test_past_the_end_inserts_clamp_to_the_end(
    ctx: Context, asked: int, expected: dict[int, str]
) -> None:
    slot_with(ctx, [(0, "c"), (1, "p1"), (-1, "m1")])
    node = ctx.pact_insert(f"d0, 1, {asked}", TextContent("x"))
    assert node.coordinates == (0, 1, next(o for o, v in expected.items() if v == "x"))
    assert slot_layout(ctx, 0, 1) == expected


def test_delete_post_side_closes_the_gap(ctx: Context) -> None:
    slot_with(ctx, [(0, "c"), (1, "p1"), (2, "p2"), (3, "p3"), (-1, "m1")])
    ctx.pact_delete("d0, 1, 2")
    assert slot_layout(ctx, 0, 1) == {-1: "m1", 0: "c", 1: "p1", 2: "p3"}


def test_delete_pre_side_closes_the_gap(ctx: Context) -> None:
    slot_with(ctx, [(0, "c"), (-1, "m1"), (-2, "m2"), (-3, "m3"), (1, "p1")])
    ctx.pact_delete("d0, 1, -2")
    assert slot_layout(ctx, 0, 1) == {-2: "m3", -1: "m1", 0: "c", 1: "p1"}


def test_delete_core_promotes_plus_one(ctx: Context) -> None:
    slot_with(ctx, [(0, "c"), (1, "p1"), (2, "p2"), (-1, "m1")])
    ctx.pact_delete("d0, 1, 0")
    assert slot_layout(ctx, 0, 1) == {-1: "m1", 0: "p1", 1: "p2"}


def test_delete_core_without_post_side_promotes_minus_one(ctx: Context) -> None:
    slot_with(ctx, [(0, "c"), (-1, "m1"), (-2, "m2")])
    ctx.pact_delete("d0, 1, 0")
    assert slot_layout(ctx, 0, 1) == {-1: "m2", 0: "m1"}


def test_slot_left_empty_disappears_and_positions_never_renumber(ctx: Context) -> None:
    ctx.add_user("m")
    ctx.pact_insert("d0, 3, 0", TextContent("three"))
    ctx.pact_insert("d0, -2, 0", TextContent("minus two"))
    ctx.pact_insert("d0, 1, 0", TextContent("one"))
    assert [n.coordinates for n in ctx.select(".slot")] == [(0, -2), (0, 0), (0, 1), (0, 3)]
    ctx.pact_delete("d0, 1, 0")
    assert [n.coordinates for n in ctx.select(".slot")] == [(0, -2), (0, 0), (0, 3)]
    assert ctx["d0, 3, 0"].content == "three"  # type: ignore[union-attr]
    assert ctx["d0, -2, 0"].content == "minus two"  # type: ignore[union-attr]
    check_structure(ctx)


def test_insert_into_history_and_system(ctx: Context) -> None:
    ctx.add_user("a")
    ctx.add_user("b")
    ctx.add_user("c")
    hist = ctx.pact_insert("d2, 1, 0", TextContent("on a"))
    system = ctx.pact_insert("d-1, 2, 0", TextContent("sys component"))
    assert hist.coordinates == (2, 1, 0)
    assert system.coordinates == (-1, 2, 0)
    assert [n.content for n in ctx.select("d2")] == ["a", "on a"]
    # a history message slot: insert before the core of d1's message
    ctx.pact_insert("d1, 0, -1", TextContent("before b"))
    assert slot_layout(ctx, 1, 0) == {-1: "before b", 0: "b"}


# ------------------------------------------------------------------------------------------
# replace and append
# ------------------------------------------------------------------------------------------
def test_replace_keeps_id_position_offset_and_neighbours(ctx: Context) -> None:
    slot_with(ctx, [(0, "c"), (1, "p1"), (-1, "m1")])
    target = ctx["d0, 1, 1"]
    assert target is not None
    new = ctx.pact_update("d0, 1, 1", TextContent("P1", key="k", tags=["t"]), mode="replace")
    assert (new.id, new.coordinates) == (target.id, (0, 1, 1))
    assert (new.key, new.tags) == ("k", ["t"])
    assert slot_layout(ctx, 0, 1) == {-1: "m1", 0: "c", 1: "P1"}


def test_replace_default_mode_is_replace(ctx: Context) -> None:
    node = ctx.pact_insert("d0, 1, 0", TextContent("old"))
    assert ctx.pact_update("d0, 1, 0", TextContent("new")).id == node.id
    assert layout(ctx) == [((0, 1, 0), "new")]


def test_append_on_history_slot_and_on_missing_slot(ctx: Context) -> None:
    ctx.add_user("a")
    ctx.pact_insert("d0, 2, 0", TextContent("x"))
    ctx.pact_insert("d0, 2, -1", TextContent("w"))
    ctx.add_user("b")
    assert ctx.pact_update("d1, 2", TextContent("y"), mode="append").coordinates == (1, 2, 1)
    assert ctx.pact_update("d1, 2", TextContent("z"), mode="append").coordinates == (1, 2, 2)
    assert ctx.pact_update("d1, 5", TextContent("new"), mode="append").coordinates == (1, 5, 0)
    assert ctx.pact_update("d-1, 0", TextContent("s"), mode="append").coordinates == (-1, 0, 0)
    assert slot_layout(ctx, 1, 2) == {-1: "w", 0: "x", 1: "y", 2: "z"}


def test_replace_sticky_with_permanent_ends_the_schedule(ctx: Context) -> None:
    ctx.pact_insert("d0, 1, 0", TextContent("sticky", ttl=1, cadence=1, key="s"))
    ctx.pact_update("d0, 1, 0", TextContent("permanent now", key="s"))
    assert ctx.model_dump()["templates"] == []
    for _ in range(3):
        ctx.advance()
    assert [(n.content, n.lifecycle) for n in ctx.select("#s")] == [("permanent now", "permanent")]


def test_replace_permanent_with_sticky_starts_a_schedule(ctx: Context) -> None:
    original = ctx.pact_insert("d0, 1, 0", TextContent("plain"))
    ctx.pact_update("d0, 1, 0", TextContent("status", ttl=1, cadence=1, key="s"))
    ctx.advance()
    live = ctx.select("#s")
    assert [(n.content, n.coordinates, n.born_episode) for n in live] == [("status", (0, 1, 0), 1)]
    assert live[0].id != original.id
    check_structure(ctx)


# ------------------------------------------------------------------------------------------
# delete: by query, by key, schedules
# ------------------------------------------------------------------------------------------
def test_delete_by_query_deletes_every_match_in_canonical_order(ctx: Context) -> None:
    ctx.add_user("a")
    x1 = ctx.pact_insert("d0, 1, 0", TextContent("x1", tags=["x"]))
    ctx.add_user("b")
    x2 = ctx.pact_insert("d0, 1, 0", TextContent("x2", tags=["x"]))
    sys_x = ctx.pact_insert("d-1, 1, 0", TextContent("sx", tags=["x"]))
    keep = ctx.pact_insert("d0, 2, 0", TextContent("keep"))
    assert ctx.pact_delete("+x") == [sys_x.id, x1.id, x2.id]
    assert ctx.select("+x") == []
    assert ctx.find(keep.id) is not None
    before = ctx.model_dump()
    with pytest.raises(NotFound, match="nothing matches '\\+x' to delete"):
        ctx.pact_delete("+x")  # a query that matches nothing is refused, changing nothing
    assert ctx.model_dump() == before
    assert ctx.pact_delete("d0, 1-3, *") == [keep.id]


def test_delete_by_key_deletes_all_items_with_that_key(ctx: Context) -> None:
    ctx.add_user("a")
    one = ctx.pact_insert("d0, 1, 0", TextContent("1", key="dup"))
    two = ctx.pact_insert("d-1, 1, 0", TextContent("2", key="dup"))
    three = ctx.pact_insert("d0, 2, 0", TextContent("3", key="dup"))
    other = ctx.pact_insert("d0, 3, 0", TextContent("other", key="other"))
    assert ctx.pact_delete(key="dup") == [two.id, one.id, three.id]
    assert [n.id for n in ctx.select("*")] == [ctx["d0, 0, 0"].id, other.id]  # type: ignore[union-attr]


def test_deleting_an_instance_ends_its_schedule(ctx: Context) -> None:
    ctx.pact_insert("d0, 1, 0", TextContent("cyc", ttl=2, cadence=3, key="c"))
    ctx.advance()
    assert ctx.pact_delete("d0, 1, 0") != []
    assert ctx.model_dump()["templates"] == []
    for _ in range(10):
        ctx.advance()
        assert ctx.select("#c") == []


def test_delete_by_key_removes_a_hidden_schedule(ctx: Context) -> None:
    first = ctx.pact_insert("d0, 1, 0", TextContent("cyc", ttl=2, cadence=5, key="c"))
    for _ in range(3):
        ctx.advance()
    assert ctx.select("#c") == []  # hidden at episode 3
    assert [t["id"] for t in ctx.model_dump()["templates"]] == [first.id]
    assert ctx.pact_delete(key="c") == []
    assert ctx.model_dump()["templates"] == []
    for _ in range(10):
        ctx.advance()
    assert ctx.select("#c") == []


def test_delete_by_key_schedule_only_uses_the_prototype_key(ctx: Context) -> None:
    ctx.pact_insert("d0, 1, 0", TextContent("sticky", ttl=1, cadence=1, key="s"))
    other = ctx.pact_insert("d0, 2, 0", TextContent("other", ttl=2, cadence=4, key="o"))
    ctx.pact_delete(key="s")
    assert [t["id"] for t in ctx.model_dump()["templates"]] == [other.id]


# ------------------------------------------------------------------------------------------
# turns: when a message starts a turn
# ------------------------------------------------------------------------------------------
def test_first_message_fills_the_fresh_active_turn(ctx: Context) -> None:
    ctx.add_user("hi")
    assert ctx.history_depth == 0
    ctx.add_assistant("hello")
    assert ctx.history_depth == 1
    assert layout(ctx) == [((1, 0, 0), "hi"), ((0, 0, 0), "hello")]


def test_message_fills_turn_holding_only_temporary_items(ctx: Context) -> None:
    reminder = ctx.pact_insert("d0, 1, 0", TextContent("reminder", ttl=3))
    cyclic = ctx.pact_insert("d0, 2, 0", TextContent("cyclic", ttl=1, cadence=4))
    ctx.add_user("hi")
    assert ctx.history_depth == 0
    assert coords(ctx, reminder.id) == (0, 1, 0)
    assert coords(ctx, cyclic.id) == (0, 2, 0)


@pytest.mark.parametrize(
    "component",
    [TextContent("perm"), TextContent("sticky", ttl=1, cadence=1)],
    ids=["permanent", "sticky"],
)
def test_message_after_a_follower_starts_a_new_turn(ctx: Context, component: TextContent) -> None:
    node = ctx.pact_insert("d0, 1, 0", component)
    ctx.add_user("hi")
    assert ctx.history_depth == 1
    assert coords(ctx, node.id) == (1, 1, 0)
    assert ctx["d0, 0, 0"].content == "hi"  # type: ignore[union-attr]


def test_pact_insert_at_message_core_starts_a_turn_only_over_a_message(ctx: Context) -> None:
    ctx.pact_insert("d0, 1, 0", TextContent("component"))
    first = ctx.pact_insert("d0, 0, 0", TextContent("message one"))
    assert ctx.history_depth == 0  # slot 0 was empty: the insert became the message
    assert first.coordinates == (0, 0, 0)
    second = ctx.pact_insert("d0, 0, 0", TextContent("message two"))
    assert ctx.history_depth == 1
    assert second.coordinates == (0, 0, 0)
    assert layout(ctx) == [
        ((1, 0, 0), "message one"),
        ((1, 1, 0), "component"),
        ((0, 0, 0), "message two"),
    ]
    # other offsets of slot 0 do not start a turn
    ctx.pact_insert("d0, 0, 1", TextContent("more"))
    assert ctx.history_depth == 1


# ------------------------------------------------------------------------------------------
# ODI
# ------------------------------------------------------------------------------------------
def test_odi_lifecycles_follow_or_stay(ctx: Context) -> None:
    ctx.add_user("first")
    perm = ctx.pact_insert("d0, 1, 0", TextContent("perm"))
    sticky = ctx.pact_insert("d0, 2, 0", TextContent("sticky", ttl=1, cadence=1, key="s"))
    temp = ctx.pact_insert("d0, 3, 0", TextContent("temp", ttl=5))
    cyclic = ctx.pact_insert("d0, 4, 0", TextContent("cyclic", ttl=2, cadence=3, key="c"))
    system = ctx.pact_insert("d-1, 1, 0", TextContent("sys", ttl=4))
    ctx.add_user("second")
    assert coords(ctx, perm.id) == (1, 1, 0)
    assert coords(ctx, sticky.id) == (1, 2, 0)
    assert coords(ctx, temp.id) == (0, 3, 0)  # stays on the current message
    assert coords(ctx, cyclic.id) == (0, 4, 0)
    assert coords(ctx, system.id) == (-1, 1, 0)
    ctx.add_assistant("third")
    assert coords(ctx, perm.id) == (2, 1, 0)
    assert coords(ctx, sticky.id) == (2, 2, 0)
    assert coords(ctx, temp.id) == (0, 3, 0)
    # rehydration: the sticky comes back with its message, the cyclic at its depth
    ctx.advance()
    ctx.advance()
    ctx.advance()
    assert [n.coordinates for n in ctx.select("#s")] == [(2, 2, 0)]
    assert [n.coordinates for n in ctx.select("#c")] == [(0, 4, 0)]
    ctx.add_user("fourth")
    assert [n.coordinates for n in ctx.select("#c")] == [(0, 4, 0)]
    assert [n.coordinates for n in ctx.select("#s")] == [(3, 2, 0)]
    check_structure(ctx)


def test_odi_temporary_items_alone_in_a_slot_keep_their_offsets(ctx: Context) -> None:
    ctx.add_user("first")
    for offset, name in [(0, "c"), (1, "p1"), (2, "p2"), (-1, "m1")]:
        ctx.pact_insert(f"d0, 5, {offset}", TextContent(name, ttl=9))
    before = slot_layout(ctx, 0, 5)
    ctx.add_user("second")
    assert slot_layout(ctx, 0, 5) == before == {-1: "m1", 0: "c", 1: "p1", 2: "p2"}
    assert ctx.select("d1, 5, *") == []


def test_odi_slot_of_temporaries_moved_whole_leaves_held_states_as_they_were(
    ctx: Context,
) -> None:
    """A slot holding only items that keep their depth moves whole to the new turn (issue 27):
    the states held before (a hold, a sealed snapshot) still show it where it was."""
    ctx.add_user("first")
    for offset, name in [(0, "c"), (1, "p1"), (-1, "m1")]:
        ctx.pact_insert(f"d0, 5, {offset}", TextContent(name, ttl=9))
    held, sealed = ctx.hold(), ctx.seal()
    before = held.model_dump_json()
    ctx.add_user("second")
    ctx.pact_insert("d0, 5, 1", TextContent("p0", ttl=9))
    ctx.pact_delete("d0, 5, -1")
    assert slot_layout(ctx, 0, 5) == {0: "c", 1: "p0", 2: "p1"}
    assert held.model_dump_json() == before
    snapshot = ctx.history.at_snapshot(sealed)
    assert [n.content for n in snapshot.select("d0, 5, *")] == ["m1", "c", "p1"]
    check_structure(ctx)


def test_odi_mixed_slot_is_repacked(ctx: Context) -> None:
    """The documented exception: a slot a temporary item leaves or joins is re-packed.

    Source slot (0,1) = [T at 0, P at +1]: T stays at depth 0, so P is promoted to core in
    its slot; P's offset changes 1 → 0 while its depth becomes 1.
    Destination slot (1,2) receives T2 (a temporary item that was at (1,2,0)); the follower Q
    arriving from (0,2,0) is pushed to +1 because T2 is re-seated at offset 0 (a new core).
    """
    ctx.add_user("a")
    t2 = ctx.pact_insert("d0, 2, 0", TextContent("T2", ttl=9))
    ctx.add_user("b")  # T2 keeps (0,2,0): it is now on b
    ctx.pact_delete("d0, 2, 0")
    ctx.pact_insert("d1, 2, 0", TextContent("T2 again", ttl=9))
    t_again = ctx["d1, 2, 0"]
    assert t_again is not None and ctx.find(t2.id) is None
    temp = ctx.pact_insert("d0, 1, 0", TextContent("T", ttl=9))
    perm = ctx.pact_insert("d0, 1, 1", TextContent("P"))
    q = ctx.pact_insert("d0, 2, 0", TextContent("Q"))
    assert layout(ctx) == [
        ((1, 0, 0), "a"),
        ((1, 2, 0), "T2 again"),
        ((0, 0, 0), "b"),
        ((0, 1, 0), "T"),
        ((0, 1, 1), "P"),
        ((0, 2, 0), "Q"),
    ]
    ctx.add_user("c")
    assert coords(ctx, perm.id) == (1, 1, 0)  # re-packed: was offset +1
    assert coords(ctx, temp.id) == (0, 1, 0)
    assert coords(ctx, q.id) == (1, 2, 1)  # pushed by the re-seated T2
    assert coords(ctx, t_again.id) == (1, 2, 0)
    check_structure(ctx)


def test_odi_temporary_items_without_a_core_are_repacked_densely(ctx: Context) -> None:
    """When the core of a mixed slot follows its message, the temporary items left behind
    cannot keep +1/+2 (offsets are dense): they are re-seated core first, +1.., then -1.."""
    ctx.add_user("a")
    slot_with(ctx, [(0, "P")])
    ctx.pact_insert("d0, 1, -1", TextContent("Tm", ttl=5))
    ctx.pact_insert("d0, 1, 1", TextContent("Tp", ttl=5))
    ctx.pact_insert("d0, 1, 2", TextContent("Tp2", ttl=5))
    ctx.add_user("b")
    assert slot_layout(ctx, 1, 1) == {0: "P"}
    assert slot_layout(ctx, 0, 1) == {-1: "Tm", 0: "Tp", 1: "Tp2"}


def test_turn_removed_when_emptied_older_turns_move_up(ctx: Context) -> None:
    for name in ("a", "b", "c", "d"):
        ctx.add_user(name)
        ctx.pact_insert("d0, 1, 0", TextContent(f"perm {name}"))
    sys_item = ctx.pact_insert("d-1, 1, 0", TextContent("sys"))
    temp_deep = ctx.pact_insert("d3, 2, 0", TextContent("temp on a", ttl=9))
    temp_mid = ctx.pact_insert("d1, 2, 0", TextContent("temp on c", ttl=9))
    assert ctx.history_depth == 3
    ctx.pact_delete("d2, 1, 0")
    assert ctx.history_depth == 3  # b still has its message
    ctx.pact_delete("d2, 0, 0")
    assert ctx.history_depth == 2  # b is gone; a moves up
    assert [n.content for n in ctx.select("d2")] == ["a", "perm a", "temp on a"]
    assert [n.content for n in ctx.select("d*, 0, 0")] == ["a", "c", "d"]
    assert coords(ctx, sys_item.id) == (-1, 1, 0)
    # temporary items keep their depth; one deeper than the history is clamped to the deepest
    assert coords(ctx, temp_mid.id) == (1, 2, 0)
    assert coords(ctx, temp_deep.id) == (2, 2, 0)
    check_structure(ctx)


def test_turn_removed_when_its_last_item_expires(ctx: Context) -> None:
    ctx.add_user("a")
    ctx.add_user("b")
    ctx.pact_insert("d1, 1, 0", TextContent("short", ttl=2))
    ctx.pact_delete("d1, 0, 0")
    assert ctx.history_depth == 1
    ctx.advance()
    assert ctx.history_depth == 1
    ctx.advance()
    assert ctx.history_depth == 0
    assert layout(ctx) == [((0, 0, 0), "b")]


def test_active_turn_is_never_removed(ctx: Context) -> None:
    ctx.add_user("a")
    ctx.add_user("b")
    ctx.pact_delete("d0, 0, 0")
    assert ctx.history_depth == 1
    assert ctx.select("d0") == []
    assert [n.coordinates for n in ctx.select(".turn")] == [(1,), (0,)]
    ctx.add_user("c")  # fills the empty active turn
    assert layout(ctx) == [((1, 0, 0), "a"), ((0, 0, 0), "c")]


def test_odi_does_not_leave_an_empty_history_turn() -> None:
    ctx = new_context()
    ctx.add_user("a")
    ctx.add_user("b")
    ctx.pact_insert("d1, 1, 0", TextContent("temp", ttl=5))
    ctx.pact_delete("d1, 0, 0")  # turn a now holds only the temporary item
    ctx.add_user("c")  # temp keeps depth 1 (moves onto b); a, at depth 2, holds nothing
    assert empty_history_depths(ctx) == []
    assert ctx.history_depth == 1
    assert layout(ctx) == [((1, 0, 0), "b"), ((1, 1, 0), "temp"), ((0, 0, 0), "c")]
    check_structure(ctx)


def test_odi_past_a_temporary_message_removes_the_turn_it_leaves() -> None:
    """A temporary message keeps (0, 0, 0): a new message takes its turn's core and pushes it
    to +1, and the turn it came from, left with nothing, does not linger in the history."""
    ctx = new_context()
    ctx.add_user("a")
    ctx.pact_insert("d0, 0, 0", TextContent("flash", ttl=1))  # message slot full: a new turn
    assert layout(ctx) == [((1, 0, 0), "a"), ((0, 0, 0), "flash")]
    ctx.add_user("b")
    assert layout(ctx) == [((1, 0, 0), "a"), ((0, 0, 0), "b"), ((0, 0, 1), "flash")]
    assert ctx.history_depth == 1
    check_structure(ctx)


def test_odi_that_removes_the_turn_it_leaves_keeps_a_deeper_mixed_slot() -> None:
    """Issue 27, exact 1: a message leaves the active turn holding only a temporary item, so
    the operation pushes a turn and removes the emptied one. The deeper slot holding P
    (permanent) and C (temporary) comes out as it went in: P's offset never changes, C keeps
    its coordinates (it was lifted once, not once per step, so it is not seated twice)."""
    ctx = new_context()
    for text in ("u1", "u2", "u3"):
        ctx.add_user(text)
    perm = ctx.pact_insert("d2, 1, 0", TextContent("P"))
    temp = ctx.pact_insert("d2, 1, 1", TextContent("C", ttl=5))
    ctx.pact_delete("d0, 0, 0")
    ctx.pact_insert("d0, 0, 0", TextContent("T", ttl=5))
    ctx.add_user("u4")
    assert coords(ctx, perm.id) == (2, 1, 0)
    assert coords(ctx, temp.id) == (2, 1, 1)
    assert layout(ctx) == [
        ((2, 0, 0), "u1"),
        ((2, 1, 0), "P"),
        ((2, 1, 1), "C"),
        ((1, 0, 0), "u2"),
        ((0, 0, 0), "u4"),
        ((0, 0, 1), "T"),
    ]
    check_structure(ctx)
