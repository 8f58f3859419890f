"""The tree pane's layout: the Fenwick line index, and incremental relayout equal to a rebuild."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.context import Context, SequentialIds, SteppingClock, TextContent
from pact_tui.line_index import LineIndex
from pact_tui.provider import ProviderLayout, provider_totals
from pact_tui.tree_layout import TreeLayout
from tests.engine.context.random_ops import CONTEXT_OPS, apply_op


@given(st.lists(st.integers(0, 6), max_size=60), st.data())
def test_line_index_matches_a_plain_prefix_sum(sizes: list[int], data: st.DataObject) -> None:
    index = LineIndex(sizes[: len(sizes) // 2])
    for size in sizes[len(sizes) // 2 :]:
        index.append(size)
    for _ in range(data.draw(st.integers(0, 10))):
        if sizes:
            i = data.draw(st.integers(0, len(sizes) - 1))
            sizes[i] = data.draw(st.integers(0, 6))
            index.set(i, sizes[i])
    starts = list(itertools.accumulate([0, *sizes]))
    assert index.total == sum(sizes)
    assert [index.start(i) for i in range(len(sizes) + 1)] == starts
    expected = [(i, line) for i, size in enumerate(sizes) for line in range(size)]
    assert [index.find(y) for y in range(index.total)] == expected
    with pytest.raises(IndexError):
        index.find(index.total)


def _rows(layout: TreeLayout) -> list[tuple[str, int, str]]:
    return [(r.kind, r.depth, r.node_id) for r in layout.rows(0, layout.line_count)]


OPS = st.lists(
    st.one_of(
        *CONTEXT_OPS,
        st.tuples(st.just("fold"), st.integers(0, 40)),
        st.tuples(st.just("sync")),
    ),
    max_size=40,
)


def _apply(context: Context, layout: TreeLayout, op: tuple) -> None:
    """One operation of ``OPS`` (a refused one changes nothing, as the engine promises)."""
    if op[0] == "fold":
        if layout.line_count:
            layout.toggle(layout.row(op[1] % layout.line_count))
    elif op[0] == "sync":
        layout.sync(context)
    else:
        apply_op(context, op, updated="y\nz")


@settings(max_examples=150, deadline=None)
@given(OPS, st.booleans())
def test_incremental_layout_equals_a_fresh_one(ops: list[tuple], headers: bool) -> None:
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    live = TreeLayout(headers=headers)
    live.sync(context)
    for op in ops:
        # The layout is synced only now and then (the "sync" op): between syncs, line_count and
        # row must catch up with the journal by themselves.
        _apply(context, live, op)
        fresh = TreeLayout(headers=headers)
        fresh.collapsed = set(live.collapsed)
        fresh.sync(context)
        assert live.line_count == fresh.line_count
        assert _rows(live) == _rows(fresh)


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_the_provider_layouts_kept_totals_equal_a_walk_of_every_message(ops: list[tuple]) -> None:
    """The provider pane's totals are kept per turn and counted again only for the turns a
    change wrote: after any commands, synced now and then, they are those of a walk of every
    message, and its rows those of a plain provider layout."""
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    live = ProviderLayout()
    live.sync(context)
    for op in ops:
        _apply(context, live, op)
        assert live.totals() == provider_totals(context)
        fresh = TreeLayout(headers=False)
        fresh.sync(context)
        assert _rows(live) == _rows(fresh)


def test_provider_layout_lists_items_in_provider_order() -> None:
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    context.pact_insert("d-1, 0, 0", TextContent("system"))
    context.add_user("hello")
    context.pact_insert("d0, 1, 0", TextContent("note"))
    context.pact_insert("d0, -1, 0", TextContent("before"))
    context.add_assistant("hi")
    layout = TreeLayout(headers=False)
    layout.sync(context)
    texts = [row.item.content for row in layout.rows(0, layout.line_count) if row.item]
    assert texts == [entry["content"] for entry in context.render_provider()]
    assert texts == ["system", "before", "hello", "note", "hi"]


def test_line_of_finds_items_and_folded_items_are_not_laid_out() -> None:
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    context.add_user("hello")
    note = context.pact_insert("d0, 1, 0", TextContent("note"))
    context.add_user("again")
    layout = TreeLayout()
    layout.sync(context)
    line = layout.line_of(1, 1, 0)
    assert line is not None and layout.row(line).node_id == note.id
    turn_line = layout.line_of_turn(1)
    assert turn_line is not None
    layout.toggle(layout.row(turn_line))
    assert layout.line_of(1, 1, 0) is None
    assert layout.row(turn_line).collapsed
    layout.reveal(1, 1)
    assert layout.line_of(1, 1, 0) == line


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_measured_heights_match_the_blocks_drawn(ops: list[tuple]) -> None:
    from pact_tui.tree_layout import _Block, _height

    context = Context(ids=SequentialIds(), clock=SteppingClock())
    layout = TreeLayout()
    for op in ops:
        if op[0] not in ("fold", "sync"):
            _apply(context, layout, op)
    layout.sync(context)
    for n, row in enumerate(list(layout.rows(0, layout.line_count))):
        if n % 3 == 0 and row.kind in ("turn", "slot"):
            layout.toggle(row)  # fold some turns and slots
    for headers in (True, False):
        for _depth, turn in context.iter_turns():
            block = _Block(turn, layout.collapsed, headers)
            assert _height(turn, layout.collapsed, headers) == block.height


def test_a_packed_context_is_laid_out_without_decoding_its_turns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from engine.context import compact
    from engine.context.compact import PackedTurn, dump_packed, load_compact

    monkeypatch.setattr(compact, "DRAWN_FIRST", 0)  # none decoded as it is restored
    context = Context(ids=SequentialIds(), clock=SteppingClock())
    for n in range(12):
        context.add_user(f"question {n}")
        context.pact_insert("d0, 1, 0", TextContent(f"note {n}"))
    data, packed = dump_packed(context)
    loaded = load_compact(data, packed=packed)
    turns = [turn for depth, turn in loaded.iter_turns() if depth >= 0]
    assert all(isinstance(turn, PackedTurn) for turn in turns)
    for headers in (True, False):
        layout, expected = TreeLayout(headers=headers), TreeLayout(headers=headers)
        layout.sync(loaded)
        assert all(not turn.decoded for turn in turns)  # type: ignore[attr-defined]
        expected.sync(context)
        assert layout.line_count == expected.line_count
    layout = TreeLayout()
    layout.sync(loaded)
    row = layout.row(layout.line_count - 1)  # the last line: only its turn is read
    assert [turn for turn in turns if turn.decoded] == [row.turn]  # type: ignore[attr-defined]
    assert _rows(layout) == _rows(expected_layout(context))


def expected_layout(context: Context) -> TreeLayout:
    layout = TreeLayout()
    layout.sync(context)
    return layout
