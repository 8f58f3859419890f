"""The story index: which events named each item, and the shifts, kept across its saved form."""

from __future__ import annotations

from typing import Any

from engine.context.story_index import StoryIndex


def changes(op: str, *ids: str, shift: tuple[int, int, int, int] | None = None) -> dict[str, Any]:
    entries = [{"kind": "inserted", "id": item_id} for item_id in ids]
    shifts = []
    if shift is not None:
        by, low, high, items = shift
        listed = [{"kind": "moved", "id": "n1"}] if items <= 20 else []
        shifts.append({"by": by, "depths": [low, high], "items": items, "listed": listed})
    return {"op": op, "episode": 3, "entries": entries, "shifts": shifts}


def test_events_before_and_after_the_saved_form_are_kept_in_order() -> None:
    index = StoryIndex()
    index.note(5, changes("insert", "n1"))
    index.note(6, changes("message", "n2", shift=(1, 0, 4, 99)))
    again = StoryIndex(index.pack())
    again.note(9, changes("update", "n1"))
    again.note(10, changes("message", "n3", shift=(1, 0, 5, 3)))  # lists n1 (few moved)
    assert again.events("n1") == (5, 9, -10)
    assert again.events("n2") == (6,)
    assert again.events("nothing") == ()
    assert list(again.shifts(5, None)) == [(6, 3, 1, 0, 4, 3, 0), (10, 3, 1, 0, 5, 3, 1)]
    assert list(again.shifts(6, 9)) == []
    assert StoryIndex(again.pack()).events("n1") == (5, 9, -10)


def test_an_index_read_and_not_changed_is_saved_as_it_was_read() -> None:
    index = StoryIndex()
    index.note(5, changes("insert", "n1", shift=(1, 0, 0, 50)))
    packed = index.pack()
    kept = StoryIndex(packed)
    assert kept.pack() is packed


def test_an_event_naming_an_item_twice_is_one_event() -> None:
    index = StoryIndex()
    index.note(7, {"op": "advance", "episode": 2, "entries": [
        {"kind": "stage", "id": "n4"}, {"kind": "rehydrated", "id": "n9", "replaced": "n4"},
    ]})  # fmt: skip
    assert index.events("n4") == (7,)
    assert index.events("n9") == (7,)


def test_a_saved_form_that_cannot_be_read_is_a_value_error() -> None:
    for packed in ("{", '{"items": {}, "shifts": [1, 2]}', '{"items": [], "shifts": ""}', "[]"):
        index = StoryIndex(packed)
        try:
            index.events("n1")
        except ValueError:
            continue
        raise AssertionError(packed)
