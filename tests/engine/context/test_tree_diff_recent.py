"""The recent past a checkpoint keeps (``compact.dump_recent``/``restore_recent``): restored, the
newest snapshots are the states they were, share every turn they shared with the working state
(so the turn-by-turn diff compares only what was written since, as before the checkpoint), stay
what they were while the restored context goes on, and the diff between any two of them, or one
of them and the context, says what the oracle ``history.diff_views`` says."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.context import Context, ContextView, SequentialIds, SteppingClock, TextContent
from engine.context.compact import dump_compact, dump_recent, load_compact, restore_recent
from engine.context.errors import InvalidExport
from engine.context.history import diff_views, located_diff
from engine.context.tree_diff import TreeDiff

from .random_ops import OPS, apply_op


def _restored(context: Context, ids: SequentialIds, count: int) -> Context:
    """The context as a checkpoint keeping ``count`` recent snapshots brings it back (its ids
    going on from ``ids``, the context's, as a workspace's projection's do)."""
    going_on = SequentialIds()
    restored = load_compact(dump_compact(context), ids=going_on, clock=SteppingClock())
    going_on.next = ids.next
    restore_recent(dump_recent(context, count), restored)
    return restored


def _dumps(views: list[ContextView]) -> list[str]:
    return [view.model_dump_json() for view in views]


@settings(max_examples=150, deadline=None)
@given(OPS, OPS, st.integers(min_value=0, max_value=6), st.data())
def test_restored_recent_snapshots_diff_as_the_oracle_says(
    ops: list[tuple], after: list[tuple], count: int, data: st.DataObject
) -> None:
    ids = SequentialIds()
    context = Context(ids=ids, clock=SteppingClock())
    for op in ops:
        apply_op(context, op, updated="y\nz")
    originals = [context.history.at_snapshot(s.id) for s in context.history][-count:][:count]
    restored = _restored(context, ids, count)
    kept = [restored.history.at_snapshot(s.id) for s in restored.history]
    # The same snapshots, in order, as they were.
    assert [s.id for s in restored.history] == [v.snapshot.id for v in originals]
    assert _dumps(kept) == _dumps(originals)
    assert restored.model_dump_json() == context.model_dump_json()
    # Sharing what they shared: comparing them costs what it cost before the checkpoint.
    for original, view in zip(originals, kept, strict=True):
        assert TreeDiff.planned(view, restored).written_items == (
            TreeDiff.planned(original, context).written_items
        )
    # Past states between random positions, the restored context going on meanwhile.
    half = len(after) // 2
    for op in after[:half]:  # nothing held meanwhile (holding freezes the state too)
        apply_op(restored, op, updated="w")
    assert _dumps(kept) == _dumps(originals)  # what they share was frozen, not written over
    views: list[ContextView] = [*kept, restored.hold()]
    for op in after[half:]:
        apply_op(restored, op, updated="v")
        views.append(restored.hold())
    views.append(restored)
    assert _dumps(kept) == _dumps(originals)
    older = data.draw(st.sampled_from(views))
    newer = data.draw(st.sampled_from(views))
    diff = TreeDiff.between(older, newer)
    expected = diff_views(older, newer)
    assert diff.to_diff() == expected
    listed, before, after_at = diff.to_located()
    _, every_before, every_after = located_diff(older, newer)
    assert listed == expected
    assert all(every_before[i] == place for i, place in before.items())
    assert all(every_after[i] == place for i, place in after_at.items())


def test_the_newest_snapshot_restored_shares_all_but_what_came_after() -> None:
    ids = SequentialIds()
    context = Context(ids=ids, clock=SteppingClock())
    for n in range(200):
        context.add_user(f"question {n}")
        context.pact_insert("d0, 1, 0", TextContent(f"note {n}"))
        context.advance()
    context.add_user("one more")  # every turn one deeper
    restored = _restored(context, ids, 2)
    newest = restored.history.at_snapshot(context.history.snapshots[-1].id)
    planned = TreeDiff.planned(newest, restored)
    assert planned.written_items <= 4  # the new turn, and the one it pushed down if written
    diff = planned.finished()
    assert diff.to_diff() == diff_views(newest, restored)
    assert diff.moved == 400 and len(diff.added) == 1


def test_recent_snapshots_that_do_not_fit_the_checkpoint_are_refused() -> None:
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    for n in range(3):
        context.add_user(f"q {n}")
        context.advance()
    rows = dump_recent(context, 2)
    bad = [{**rows[0], "turns": [["=", 0, 10_000]]}]
    twice = [{**rows[0], "turns": [["=", 0, 1], ["=", 0, 1]]}]  # seqs not increasing
    for broken in (bad, twice, [{**rows[0], "turns": [["?", 0]]}], "rows", [{"id": "x"}]):
        fresh = load_compact(dump_compact(context), ids=SequentialIds(), clock=SteppingClock())
        with pytest.raises(InvalidExport):
            restore_recent(broken, fresh)
        assert len(fresh.history) == 0  # nothing adopted
