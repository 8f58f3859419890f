"""The engine's diff (``tree_diff.TreeDiff``, turn by turn) says what the plain item-by-item
``history.diff_views`` (the oracle) says, between states that share turns (snapshots, held
states, the live context) and states that share nothing (a context rebuilt from its dump), and
says where each item it names was and is as ``history.located_diff`` does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.context import Context, ContextView, SequentialIds, SteppingClock, TextContent
from engine.context.history import diff_views, located_diff
from engine.context.tree import ItemChange
from engine.context.tree_diff import TreeDiff

from .random_ops import OPS, apply_op


def _views(ops: list[tuple]) -> list[ContextView]:
    """Every state the operations pass through that a diff can compare: each snapshot, a held
    state now and then, a rebuilt copy of the context now and then (sharing nothing with it),
    and the live context at the end."""
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    kept: list[ContextView] = []
    for number, op in enumerate(ops):
        rebuilt = apply_op(context, op, updated="y\nz")
        if rebuilt is not None:
            kept.append(rebuilt)
        if number % 3 == 2:
            kept.append(context.hold())
    snapshots = [context.history.at_snapshot(s.id) for s in context.history]
    return [*snapshots, *kept, context]


@settings(max_examples=150, deadline=None)
@given(OPS, st.data())
def test_the_turn_by_turn_diff_says_what_diff_views_says(
    ops: list[tuple], data: st.DataObject
) -> None:
    views = _views(ops)
    older = data.draw(st.sampled_from(views))
    newer = data.draw(st.sampled_from(views))
    diff = TreeDiff.between(older, newer)
    expected, every_before, every_after = located_diff(older, newer)
    assert expected == diff_views(older, newer)
    listed, before, after = diff.to_located()
    assert listed == diff.to_diff() == expected
    named = [*expected.added, *expected.removed, *(change.id for change in expected.changed)]
    assert set(before) | set(after) == set(named)
    assert before == {i: every_before[i] for i in named if i in every_before}
    assert after == {i: every_after[i] for i in named if i in every_after}
    assert diff.counts == expected.counts
    *_, changed, moved = diff.tally
    assert changed + moved == len(expected.changed)
    seq_of = {
        item.id: turn.seq
        for _depth, turn in newer.iter_turns()
        for slot in turn.slots.values()
        for item in slot.items
    }
    for change in expected.changed:
        assert diff.change_of(change.id, seq_of[change.id]) == change
    # Mass moves left out (what ``ctx diff`` counts on one line): the rest, as listed.
    leave_out = set(data.draw(st.lists(st.sampled_from([*diff.depth_moves, 1, -1, 2]))))

    def moved_by(change: ItemChange) -> int | None:
        only_depth = not change.fields and change.moves().keys() == {"depth"}
        return change.depth[1] - change.depth[0] if only_depth and change.depth else None

    kept = [c for c in expected.changed if moved_by(c) not in leave_out]
    rest = list(diff.located_changes(leave_out))
    assert [change for change, _, _ in rest] == kept
    assert all(before[c.id] == was and after[c.id] == now for c, was, now in rest)
    left = [by for c in expected.changed if (by := moved_by(c)) in leave_out]
    assert all(diff.depth_moves.get(by) == left.count(by) for by in set(left))


def test_context_diff_is_the_turn_by_turn_one() -> None:
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    context.add_user("hello")
    context.pact_insert("d0, 1, 0", TextContent("note", ttl=2))
    first = context.seal("first")
    context.add_user("again")  # ODI: the first turn one deeper
    context.advance()
    diff = context.diff(first, None)
    assert diff == diff_views(context.history.at_snapshot(first), context)
    assert diff.counts[0] >= 1 and any(c.depth == (0, 1) for c in diff.changed)
