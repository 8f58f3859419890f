"""The journal of written turns: what observers (the TUI's layout) redraw after a change."""

from __future__ import annotations

from engine.context import Context, TextContent
from engine.context.context import JOURNAL_LIMIT

from .conftest import new_context


def seqs_at(context: Context, *depths: int) -> set[int]:
    out = set()
    for depth in depths:
        turn = context.turn_at(depth)
        assert turn is not None
        out.add(turn.seq)
    return out


def test_a_write_names_only_the_turn_it_touched() -> None:
    context = new_context()
    for text in ("one", "two", "three"):
        context.add_user(text)
    token = context.journal_token
    assert context.turns_changed_since(token) == set()
    context.pact_insert("d2, 1, 0", TextContent("note"))
    assert context.turns_changed_since(token) == seqs_at(context, 2)
    token = context.journal_token
    context.pact_insert("d-1, 0, 0", TextContent("system"))
    assert context.turns_changed_since(token) == {-1}


def test_a_new_message_names_the_new_turn_and_repeated_writes_are_not_lost() -> None:
    context = new_context()
    context.add_user("one")
    token = context.journal_token
    context.add_user("two")
    assert context.turns_changed_since(token) == seqs_at(context, 0)
    # Two writes to one turn, with an observer reading in between: the second is still seen.
    context.pact_insert("d0, 1, 0", TextContent("a"))
    token = context.journal_token
    context.pact_insert("d0, 1, 0", TextContent("b"))
    assert context.turns_changed_since(token) == seqs_at(context, 0)


def test_removing_a_turn_asks_observers_to_reread_everything() -> None:
    context = new_context()
    context.add_user("one")
    context.pact_insert("d0, 1, 0", TextContent("note", key="note"))
    context.add_user("two")
    token = context.journal_token
    context.pact_delete("d1, *, *")  # empties the history turn: it is removed
    assert context.history_depth == 0
    assert context.turns_changed_since(token) is None


def test_an_observer_too_far_behind_is_told_to_reread() -> None:
    context = new_context()
    context.add_user("one")
    token = context.journal_token
    for n in range(JOURNAL_LIMIT + 10):
        context.add_user(f"m{n}")
    assert context.turns_changed_since(token) is None
    recent = context.journal_token
    context.add_user("last")
    assert context.turns_changed_since(recent) == seqs_at(context, 0)
    assert context.turns_changed_since(recent + 1000) is None  # a token from the future


def test_item_count_is_the_live_item_count() -> None:
    context = new_context()
    context.add_user("hello")
    context.pact_insert("d0, 1, 0", TextContent("x", ttl=1))
    assert context.item_count() == 2 == sum(1 for _ in context.iter_items())
    context.advance()
    assert context.item_count() == 1 == sum(1 for _ in context.iter_items())
