"""How the inspector draws the engine's diff (``TreeDiff``): its ghosts laid out where they
were, each once, and each change said as people say it. That the diff itself says what the
plain ``diff_views`` says: tests/engine/context/test_tree_diff.py."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.context import Context, ContextView, SequentialIds, SteppingClock, TextContent
from engine.context.tree_diff import TreeDiff
from pact_tui.tree_diff import change_note, ghosts_of, note_of
from pact_tui.tree_layout import TreeLayout

from .test_layout import OPS, _apply


def _views(ops: list[tuple]) -> list[ContextView]:
    """Every state the operations pass through that a diff can compare: each snapshot, a held
    state now and then, and the live context at the end."""
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    layout = TreeLayout()
    held: list[ContextView] = []
    for number, op in enumerate(ops):
        _apply(context, layout, op)
        if number % 3 == 2:
            held.append(context.hold())
    snapshots = [context.history.at_snapshot(s.id) for s in context.history]
    return [*snapshots, *held, context]


@settings(max_examples=120, deadline=None)
@given(OPS, st.data(), st.booleans())
def test_ghosts_are_laid_out_once_each_among_the_rows(
    ops: list[tuple], data: st.DataObject, headers: bool
) -> None:
    views = _views(ops)
    older = data.draw(st.sampled_from(views))
    newer = data.draw(st.sampled_from(views))
    shown_is_newer = data.draw(st.booleans())
    diff = TreeDiff.between(older, newer)
    ghosts = ghosts_of(diff, shown_is_newer)
    shown = newer if shown_is_newer else older
    layout = TreeLayout(headers=headers)
    layout.sync(shown)
    layout.set_ghosts(ghosts)
    rows = list(layout.rows(0, layout.line_count))
    assert sorted(r.node_id for r in rows if r.kind == "ghost") == sorted(g.id for g in ghosts)
    items = [r.node_id for r in rows if r.kind == "item"]
    assert items == [item.id for item, *_ in shown.iter_items()]  # their order is kept
    for line, row in enumerate(rows):
        if row.kind == "ghost":
            assert layout.line_of_ghost(row.node_id) == line
            assert row.ghost is not None
            if row.ghost.same_turn:
                assert (
                    row.turn.seq
                    == diff.removed.get(row.node_id, diff.added.get(row.node_id)).turn_seq
                )
        elif row.kind == "item":
            assert row.slot is not None and row.offset is not None
            assert layout.line_of(row.depth, row.slot.position, row.offset) == line
    layout.set_ghosts(())
    assert [r.kind for r in layout.rows(0, layout.line_count)].count("ghost") == 0


def test_a_ghost_follows_the_neighbour_it_followed() -> None:
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    context.add_user("hello")
    for text in ("a", "b", "c"):
        context.pact_update("d0, 1", TextContent(text), mode="append")
    before = context.hold()
    context.pact_delete("d0, 1, 1")  # "b"
    diff = TreeDiff.between(before, context)
    (ghost,) = ghosts_of(diff, shown_is_newer=True)
    a = context.select("d0, 1, 0")[0]
    assert ghost.after == a.id and ghost.coordinates == "(0,1,1)" and ghost.mark == "removed"
    layout = TreeLayout()
    layout.sync(context)
    layout.set_ghosts([ghost])
    contents = [
        (r.kind, (r.ghost.item if r.ghost else r.item).content)  # type: ignore[union-attr]
        for r in layout.rows(0, layout.line_count)
        if r.kind in ("item", "ghost")
    ]
    assert contents == [("item", "hello"), ("item", "a"), ("ghost", "b"), ("item", "c")]


def test_a_note_says_what_changed_with_the_values() -> None:
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    context.add_user("hello")
    context.pact_insert("d0, 1, 0", TextContent("note"))
    context.pact_insert("d0, 2, 0", TextContent("timer", ttl=3))  # follows the message
    before = context.hold()
    context.pact_update("d0, 1, 0", TextContent("note two"), mode="replace")
    context.pact_update("d0, 2, 0", TextContent("timer", ttl=2), mode="replace")
    context.add_user("again")  # the first turn one deeper
    diff = TreeDiff.between(before, context)
    note = context.select("d1, 1, 0")[0]
    assert change_note(diff.changed[note.id]) == "depth 0→1 · content"
    timer = context.select("d0, 2, 0")[0]
    assert change_note(diff.changed[timer.id]) == "ttl 3→2"
    turn = context.turn_at(1)
    assert turn is not None
    assert diff.mark_of(note.id, turn.seq) == "changed"
    hello = context.select("d1, 0, 0")[0]
    assert diff.mark_of(hello.id, turn.seq) == "moved"
    assert note_of(diff, hello.id, turn.seq) == "depth 0→1"
