"""An item's story, observed operation by operation: born, moved (moves alike told once),
replaced, staged, and what is due."""

from __future__ import annotations

from collections.abc import Callable

from engine.context import Context, Pos, TextContent
from engine.context.timeline import ItemStory

from .conftest import new_context


def told(ctx: Context, item_id: str, steps: list[tuple[str, Callable[[], object]]]) -> ItemStory:
    """Run ``steps`` (op name, call), observing the item after each, as a replay does."""
    story = ItemStory(item_id)
    story.observe(ctx, op="insert", seq=0)
    for seq, (op, step) in enumerate(steps, 1):
        step()
        story.observe(ctx, op=op, seq=seq)
    return story


def lines(story: ItemStory, ctx: Context) -> list[tuple[int, str, str, int]]:
    node = ctx.find(story.item_id)
    return [(e.episode, e.what, e.detail, e.times) for e in story.told(node)]


def test_a_note_is_born_moved_by_messages_told_once_and_replaced() -> None:
    ctx = new_context()
    ctx.add_user("hi")
    note = ctx.pact_insert("d0, 1, 0", TextContent("note", key="k"))
    story = told(
        ctx,
        note.id,
        [
            ("advance", ctx.advance),
            ("message", lambda: ctx.add_user("again")),
            ("message", lambda: ctx.add_user("and again")),
            ("advance", ctx.advance),
            ("update", lambda: ctx.pact_update("d2, 1, 0", TextContent("note v2", key="k"))),
        ],
    )
    events = lines(story, ctx)
    assert events[0] == (0, "born", "(0,1,0) · inserted", 1)
    assert events[1] == (1, "moved", "(0,1,0) → (2,1,0) · a new message", 2)  # two, told once
    assert events[2][:2] == (2, "replaced")
    assert len(events) == 3


def test_moves_since_the_last_snapshot_are_in_the_story() -> None:
    ctx = new_context()
    ctx.add_user("hi")
    note = ctx.pact_insert("d0, 1, 0", TextContent("note"))
    ctx.seal()
    story = told(ctx, note.id, [("message", lambda: ctx.add_user("no snapshot after this"))])
    assert [(e.what, e.detail) for e in story.told()][-1] == (
        "moved",
        "(0,1,0) → (1,1,0) · a new message",
    )


def test_a_temporary_item_shows_when_it_expires() -> None:
    ctx = new_context()
    ctx.advance()
    ctx.add_user("hi")
    temp = ctx.pact_insert("d0, 2, 0", TextContent("soon gone", ttl=3))
    story = told(ctx, temp.id, [("advance", ctx.advance)])
    assert lines(story, ctx) == [(1, "born", "(0,2,0) · inserted", 1), (4, "expires", "", 1)]


def test_a_cyclic_item_shows_its_next_rehydration() -> None:
    ctx = new_context()
    ctx.add_user("hi")
    cyclic = ctx.pact_insert("d0, 1, 0", TextContent("check in", ttl=2, cadence=5))
    assert lines(told(ctx, cyclic.id, []), ctx) == [
        (0, "born", "(0,1,0) · inserted", 1),
        (2, "expires", "", 1),
        (5, "rehydrates", "a fresh instance replaces it", 1),
    ]


def test_render_stages_are_told_as_stages_not_as_replacements() -> None:
    ctx = new_context()
    ctx.add_user("m")
    alert = ctx.pact_insert(
        "d0, 1, 0",
        TextContent("alert").render_lifecycle([Pos("d0, 1, 0", ttl=1), Pos("d0, 2, 0")]),
    )
    story = told(ctx, alert.id, [("advance", ctx.advance)])
    assert [(e.what, e.detail) for e in story.told()] == [
        ("born", "(0,1,0) · inserted"),
        ("staged", "stage 1 → 2 of 2 · (0,2,0)"),
    ]


def test_the_story_up_to_an_event_leaves_out_what_came_after() -> None:
    ctx = new_context()
    ctx.add_user("hi")
    note = ctx.pact_insert("d0, 1, 0", TextContent("note"))
    story = told(ctx, note.id, [("advance", ctx.advance), ("message", lambda: ctx.add_user("x"))])
    assert [e.what for e in story.told(until=1)] == ["born"]
    assert [e.what for e in story.told()] == ["born", "moved"]


def test_an_item_not_born_yet_has_no_story() -> None:
    ctx = new_context()
    story = ItemStory("n999")
    story.observe(ctx, op="advance", seq=1)
    assert story.told() == []
