"""An item's story across snapshots (the detail pane's history): born, moved, replaced, gone,
and what is scheduled."""

from __future__ import annotations

from engine.context import TextContent
from engine.context.timeline import item_timeline

from .conftest import new_context


def story(events: list) -> list[tuple[int, str, str]]:  # type: ignore[type-arg]
    return [(e.episode, e.what, e.detail) for e in events]


def test_a_permanent_note_is_born_moved_by_odi_and_replaced() -> None:
    ctx = new_context()
    ctx.add_user("hi")
    note = ctx.pact_insert("d0, 1, 0", TextContent("note", key="k"))
    ctx.advance()  # episode 1: snapshot with the note at (0,1,0)
    ctx.add_user("again")  # ODI: (0,1,0) → (1,1,0)
    ctx.advance()  # episode 2
    ctx.pact_update("d1, 1, 0", TextContent("note v2", key="k"))
    ctx.advance()  # episode 3
    events = story(item_timeline(ctx, note.id))
    assert events[0] == (0, "born", "at (0,1,0) by episode 1")
    assert events[1] == (2, "moved", "(0,1,0) → (1,1,0)")
    assert events[2][:2] == (3, "replaced")
    assert len(events) == 3


def test_a_temporary_item_shows_when_it_expires() -> None:
    ctx = new_context()
    ctx.advance()
    ctx.add_user("hi")
    temp = ctx.pact_insert("d0, 2, 0", TextContent("soon gone", ttl=3))
    ctx.advance()
    events = story(item_timeline(ctx, temp.id))
    assert events == [(1, "born", "at (0,2,0) by episode 2"), (4, "expires", "")]


def test_a_cyclic_item_shows_its_next_rehydration_and_a_gone_item_has_no_story() -> None:
    ctx = new_context()
    ctx.add_user("hi")
    cyclic = ctx.pact_insert("d0, 1, 0", TextContent("check in", ttl=2, cadence=5))
    events = story(item_timeline(ctx, cyclic.id))
    assert events == [
        (0, "born", "(0,1,0)"),
        (2, "expires", ""),
        (5, "rehydrates", "a fresh instance replaces it"),
    ]
    ctx.advance()
    ctx.advance()  # episode 2: expired
    assert item_timeline(ctx, cyclic.id) == []


def test_a_snapshot_view_tells_the_story_up_to_its_own_episode() -> None:
    ctx = new_context()
    ctx.add_user("hi")
    note = ctx.pact_insert("d0, 1, 0", TextContent("note"))
    ctx.advance()
    early = ctx.seal("early")
    ctx.add_user("again")
    ctx.advance()
    past = ctx.history.at_snapshot(early)
    events = story(item_timeline(past, note.id))
    assert [e[1] for e in events] == ["born"]  # the later move is not part of that past


def test_a_past_view_does_not_see_what_was_sealed_later_in_its_episode() -> None:
    ctx = new_context()
    ctx.add_user("hi")
    note = ctx.pact_insert("d0, 1, 0", TextContent("note"))
    ctx.advance()  # episode 1
    before = ctx.seal("before")
    ctx.pact_update("d0, 1, 0", TextContent("note v2"))
    ctx.seal("after")  # same episode, later
    past = ctx.history.at_snapshot(before)
    assert [e[1] for e in story(item_timeline(past, note.id))] == ["born"]
    assert [e[1] for e in story(item_timeline(ctx, note.id))] == ["born", "replaced"]
