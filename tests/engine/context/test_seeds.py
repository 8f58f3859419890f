"""Every example of the two seeds that concerns the context, as an acceptance test.

Seed 000 is the PACT architecture page, seed 002 the context-management page; spec §3 and §5
turn their timelines into exact rules, and the comments quote the seed lines each test checks.
"""

from __future__ import annotations

import json

import pytest

from engine.context import Context, ContextExplorer, Node, Pos, TextContent

from .conftest import check_structure, coords, layout, slot_layout


def alive_episodes(context: Context, item_id_or_key: str, until: int) -> list[int]:
    """Advance to ``until`` and list the episodes at which ``#key`` has a live item."""
    seen = []
    while True:
        if context.select(f"#{item_id_or_key}"):
            seen.append(context.current_episode)
        if context.current_episode == until:
            return seen
        context.advance()


# ------------------------------------------------------------------------------------------
# seed 000: coordinates, ODI, selectors
# ------------------------------------------------------------------------------------------
def test_odi_walk_note_follows_its_message(ctx: Context) -> None:
    # Turn 1: Add a note / Turn 2: User sends "Hello" → note moves (0,1,0) → (1,1,0)
    note = ctx.pact_insert("d0, 1, 0", TextContent("User prefers formal tone"))
    assert note.coordinates == (0, 1, 0)
    hello = ctx.add_user("Hello")
    assert coords(ctx, note.id) == (1, 1, 0)
    # "Hello" message is now at (0,0,0)
    assert hello.coordinates == (0, 0, 0)
    assert ctx["d0, 0, 0"] is not None and ctx["d0, 0, 0"].content == "Hello"
    # Turn 3: Another message → metadata moves to (2, 1, 0)
    ctx.add_user("How are you?")
    assert coords(ctx, note.id) == (2, 1, 0)
    assert coords(ctx, hello.id) == (1, 0, 0)
    assert ctx["d0, 0, 0"].content == "How are you?"  # type: ignore[union-attr]
    assert ctx["d2, 1, 0"].id == note.id  # type: ignore[union-attr]
    assert ctx.history_depth == 2
    check_structure(ctx)


def test_odi_walk_with_agent_style_calls(ctx: Context) -> None:
    # agent.context.pact_insert("d0, 1, 0", metadata) ; agent.call("Hello") ; agent.call("How…")
    metadata = ctx.pact_insert("d0, 1, 0", TextContent("Important context"))
    walk = [coords(ctx, metadata.id)]
    ctx.add_user("Hello")
    ctx.add_assistant("Hi!")
    walk.append(coords(ctx, metadata.id))
    ctx.add_user("How are you?")
    walk.append(coords(ctx, metadata.id))
    assert walk == [(0, 1, 0), (2, 1, 0), (3, 1, 0)]
    assert [n.content for n in ctx.select("d*, 0, 0")] == ["Hello", "Hi!", "How are you?"]
    assert [n.role for n in ctx.select("d*, 0, 0")] == ["user", "assistant", "user"]


def test_odi_changes_depth_never_position_or_offset(ctx: Context) -> None:
    # Before ODI: (0, 1, -2)  After ODI: (1, 1, -2) ← Only depth changed
    ctx.add_user("first")
    ctx.pact_insert("d0, 1, 0", TextContent("core"))
    ctx.pact_insert("d0, 1, -1", TextContent("minus one"))
    item = ctx.pact_insert("d0, 1, -2", TextContent("minus two"))
    after_one = ctx.pact_insert("d0, 1, 1", TextContent("plus one"))
    assert item.coordinates == (0, 1, -2)
    ctx.add_user("second")
    assert coords(ctx, item.id) == (1, 1, -2)
    assert coords(ctx, after_one.id) == (1, 1, 1)
    assert slot_layout(ctx, 1, 1) == {
        -2: "minus two",
        -1: "minus one",
        0: "core",
        1: "plus one",
    }


def test_system_depth_never_moves(ctx: Context) -> None:
    # context.pact_insert("d-1, 1, 0", system_note) # Stays at depth -1 forever
    system = ctx.pact_insert("d-1, 0, 0", TextContent("You are helpful"))
    note = ctx.pact_insert("d-1, 1, 0", TextContent("Always be concise", key="concise_instruction"))
    for step in range(6):
        if step % 2:
            ctx.add_assistant(f"answer {step}")
        else:
            ctx.add_user(f"question {step}")
        ctx.advance()
        assert coords(ctx, note.id) == (-1, 1, 0)
        assert coords(ctx, system.id) == (-1, 0, 0)
    assert ctx["d-1, 0, 0"].content == "You are helpful"  # type: ignore[union-attr]
    assert ctx.get_by_key("concise_instruction").coordinates == (-1, 1, 0)  # type: ignore[union-attr]
    assert ctx.history_depth == 5


def test_depth_examples_address_the_history(ctx: Context) -> None:
    # context["d-1, 0, 0"] system, ["d0, 0, 0"] current, ["d1, 0, 0"] previous, ["d5, 0, 0"]
    ctx.pact_insert("d-1, 0, 0", TextContent("system instructions"))
    for n in range(7):
        ctx.add_user(f"message {n}")
    assert ctx["d-1, 0, 0"].content == "system instructions"  # type: ignore[union-attr]
    assert ctx["d0, 0, 0"].content == "message 6"  # type: ignore[union-attr]
    assert ctx["d1, 0, 0"].content == "message 5"  # type: ignore[union-attr]
    assert ctx["d5, 0, 0"].content == "message 1"  # type: ignore[union-attr]
    assert ctx["d7, 0, 0"] is None


def test_position_and_offset_examples(ctx: Context) -> None:
    # Message Container Pattern: d0,0,0 message text, d0,0,1 / d0,0,-1 more message content,
    # d0,1,0 metadata component, d0,1,1 another component, d0,2,0 additional attachment
    ctx.add_user("User/Assistant message text")
    ctx.pact_insert("d0, 0, 1", TextContent("Additional message content"))
    ctx.pact_insert("d0, 0, -1", TextContent("Alternative content"))
    ctx.pact_insert("d0, 1, 0", TextContent("Metadata component"))
    ctx.pact_insert("d0, 1, 1", TextContent("Another component"))
    ctx.pact_insert("d0, 2, 0", TextContent("Additional attachment"))
    ctx.pact_insert("d0, 1, -2", TextContent("Component at offset -2"))
    assert layout(ctx) == [
        ((0, 0, -1), "Alternative content"),
        ((0, 0, 0), "User/Assistant message text"),
        ((0, 0, 1), "Additional message content"),
        ((0, 1, -1), "Component at offset -2"),  # dense: nothing sat at -1
        ((0, 1, 0), "Metadata component"),
        ((0, 1, 1), "Another component"),
        ((0, 2, 0), "Additional attachment"),
    ]
    message = ctx["d0, 0, 0"]
    metadata = ctx["d0, 1, 0"]
    notes = ctx["d0, 1, 1"]
    assert message is not None and message.content == "User/Assistant message text"
    assert metadata is not None and metadata.content == "Metadata component"
    assert notes is not None and notes.content == "Another component"


def test_indexing_forms(ctx: Context) -> None:
    # component = context[0, 1]; context[0, 1, 0]; context["d0, 1, 0"]; context.select("d0, 1, 0")
    ctx.add_user("hi")
    meta = ctx.pact_insert("d0, 1, 0", TextContent("metadata", key="metadata"))
    ctx.pact_insert("d0, 1, 1", TextContent("second"))
    by_pair = ctx[0, 1]
    by_triple = ctx[0, 1, 0]
    by_string = ctx["d0, 1, 0"]
    by_select = ctx.select("d0, 1, 0")
    assert isinstance(by_pair, Node)
    assert by_pair.id == meta.id
    assert by_triple is not None and by_triple.id == meta.id
    assert by_string is not None and by_string.id == meta.id
    assert [n.id for n in by_select] == [meta.id]
    assert ctx["(d0, 1, 0)"].id == meta.id  # type: ignore[union-attr]
    assert ctx[0, 1, 1].content == "second"  # type: ignore[union-attr]
    assert ctx[0, 1, 2] is None
    assert ctx[0, 9] is None
    assert ctx["d3, 1, 0"] is None
    assert ctx.get_by_key("metadata").id == meta.id  # type: ignore[union-attr]


def test_range_query_over_three_recent_messages(ctx: Context) -> None:
    # components = context.select("d1-3, 1, *")  # All components at depths 1-3, position 1
    for n in range(5):
        ctx.add_user(f"m{n}")
        ctx.pact_insert("d0, 1, 0", TextContent(f"c{n}"))
        ctx.pact_insert("d0, 1, 1", TextContent(f"c{n}+1"))
        ctx.pact_insert("d0, 2, 0", TextContent(f"other{n}"))
    got = ctx.select("d1-3, 1, *")
    assert [(n.coordinates, n.content) for n in got] == [
        ((3, 1, 0), "c1"),
        ((3, 1, 1), "c1+1"),
        ((2, 1, 0), "c2"),
        ((2, 1, 1), "c2+1"),
        ((1, 1, 0), "c3"),
        ((1, 1, 1), "c3+1"),
    ]


# ------------------------------------------------------------------------------------------
# seed 002: operations
# ------------------------------------------------------------------------------------------
def test_insert_with_key_and_tags_shifts_existing(ctx: Context) -> None:
    # component = TextContent(content="User prefers concise responses"); pact_insert("d0, 1, 0")
    # tagged_component = TextContent(..., key="metadata", tags=[...]); pact_insert("d0, 1, 1")
    ctx.add_user("hello")
    first = ctx.pact_insert("d0, 1, 0", TextContent(content="User prefers concise responses"))
    tagged = ctx.pact_insert(
        "d0, 1, 1",
        TextContent(content="Important metadata", key="metadata", tags=["user", "preferences"]),
    )
    assert (first.coordinates, tagged.coordinates) == ((0, 1, 0), (0, 1, 1))
    assert tagged.key == "metadata" and tagged.tags == ["user", "preferences"]
    # "Shifts existing components if needed"
    pushed = ctx.pact_insert("d0, 1, 1", TextContent("in between"))
    assert pushed.coordinates == (0, 1, 1)
    assert coords(ctx, tagged.id) == (0, 1, 2)
    assert coords(ctx, first.id) == (0, 1, 0)


def test_update_replace_swaps_content_keeps_id_and_coordinates(ctx: Context) -> None:
    # context.pact_update("d0, 1, 0", updated_component, mode="replace")
    ctx.add_user("hello")
    original = ctx.pact_insert("d0, 1, 0", TextContent("old", key="k"))
    ctx.pact_insert("d0, 1, 1", TextContent("neighbour"))
    updated = ctx.pact_update("d0, 1, 0", TextContent("new", key="k2"), mode="replace")
    assert updated.id == original.id
    assert updated.coordinates == (0, 1, 0)
    assert ctx["d0, 1, 0"].content == "new"  # type: ignore[union-attr]
    assert ctx["d0, 1, 0"].key == "k2"  # type: ignore[union-attr]
    assert slot_layout(ctx, 0, 1) == {0: "new", 1: "neighbour"}
    assert ctx.get_by_key("k") is None


def test_update_append_uses_next_free_offset(ctx: Context) -> None:
    # context.pact_update("d0, 1", new_component, mode="append")
    ctx.add_user("hello")
    ctx.pact_insert("d0, 1, 0", TextContent("core"))
    ctx.pact_insert("d0, 1, -1", TextContent("before"))
    a = ctx.pact_update("d0, 1", TextContent("appended 1"), mode="append")
    b = ctx.pact_update("d0, 1", TextContent("appended 2"), mode="append")
    assert (a.coordinates, b.coordinates) == ((0, 1, 1), (0, 1, 2))
    # on an empty slot, append places the core
    c = ctx.pact_update("d0, 4", TextContent("first of slot 4"), mode="append")
    assert c.coordinates == (0, 4, 0)
    assert slot_layout(ctx, 0, 1) == {-1: "before", 0: "core", 1: "appended 1", 2: "appended 2"}


def test_delete_by_coordinates_and_by_key(ctx: Context) -> None:
    # context.pact_delete("d0, 1, 0"); context.pact_delete(key="metadata")
    ctx.add_user("hello")
    a = ctx.pact_insert("d0, 1, 0", TextContent("a"))
    ctx.pact_insert("d0, 1, 1", TextContent("b"))
    meta = ctx.pact_insert("d0, 2, 0", TextContent("Important metadata", key="metadata"))
    assert ctx.pact_delete("d0, 1, 0") == [a.id]
    assert slot_layout(ctx, 0, 1) == {0: "b"}  # +1 promoted to core
    assert ctx.pact_delete(key="metadata") == [meta.id]
    assert ctx.get_by_key("metadata") is None
    assert ctx[0, 2] is None
    assert layout(ctx) == [((0, 0, 0), "hello"), ((0, 1, 0), "b")]


def test_deleting_the_only_core_removes_the_container(ctx: Context) -> None:
    # "If it empties the container, the entire container may cease to exist."
    ctx.add_user("hello")
    ctx.pact_insert("d0, 3, 0", TextContent("lonely"))
    ctx.pact_delete("d0, 3, 0")
    assert ctx.select(".slot[position=3]") == []
    assert [n.coordinates for n in ctx.select(".slot")] == [(0, 0)]


def test_get_by_key_and_tags(ctx: Context) -> None:
    # component = context.get_by_key("metadata"); context.get_by_tags(["user", "important"])
    ctx.add_user("hi")
    prefs = ctx.pact_insert(
        "d0, 1, 0",
        TextContent(content="Data", key="user_prefs", tags=["user", "important", "settings"]),
    )
    user_only = ctx.pact_insert("d0, 2, 0", TextContent("u", tags=["user"]))
    important_only = ctx.pact_insert("d-1, 1, 0", TextContent("i", tags=["important"]))
    assert ctx.get_by_key("user_prefs").id == prefs.id  # type: ignore[union-attr]
    assert [n.id for n in ctx.get_by_tags(["user", "important"])] == [prefs.id]
    assert [n.id for n in ctx.get_by_tags(["user"])] == [prefs.id, user_only.id]
    assert [n.id for n in ctx.get_by_tags(["important"])] == [important_only.id, prefs.id]
    assert ctx.get_by_tags(["user", "important", "settings", "nope"]) == []
    assert ctx.get_by_tags(["nothing"]) == []


def test_canonical_fields_on_component_dump(ctx: Context) -> None:
    # class PACTNode: id, parent_id, offset, ttl, cad, created_at_ns, creation_index, key, tags,
    # content; component_dict = component.model_dump()
    node = ctx.pact_insert(
        "d0, 1, 0", TextContent(content="User preferences", key="user_prefs", tags=["a"])
    )
    dumped = node.model_dump()
    for field in (
        "id",
        "parent_id",
        "offset",
        "ttl",
        "cad",
        "created_at_ns",
        "creation_index",
        "key",
        "tags",
        "content",
        "node_type",
        "priority",
        "born_episode",
        "content_hash",
    ):
        assert field in dumped, field
    assert dumped["id"] == node.id
    assert dumped["offset"] == 0
    assert dumped["ttl"] is None and dumped["cad"] is None
    assert dumped["key"] == "user_prefs" and dumped["tags"] == ["a"]
    assert dumped["content"] == "User preferences"
    assert dumped["node_type"] == "text" and dumped["priority"] == 0
    assert dumped["parent_id"] == ctx.select(".slot[position=1]")[0].id
    json.dumps(dumped)  # plain JSON
    whole = ctx.model_dump()
    assert json.loads(json.dumps(whole)) == whole


def test_seal_checkpoint_and_at_snapshot(ctx: Context) -> None:
    # snapshot_id = context.seal(trigger="checkpoint"); agent.history.at_snapshot(snapshot_id)
    ctx.add_user("before")
    snapshot_id = ctx.seal(trigger="checkpoint")
    ctx.add_user("after")
    past = ctx.history.at_snapshot(snapshot_id)
    assert past["d0, 0, 0"].content == "before"  # type: ignore[union-attr]
    assert past["d1, 0, 0"] is None
    assert ctx["d1, 0, 0"].content == "before"  # type: ignore[union-attr]
    assert ctx.history.latest is not None and ctx.history.latest.trigger == "checkpoint"


# ------------------------------------------------------------------------------------------
# lifecycle timelines (spec §3, verbatim)
# ------------------------------------------------------------------------------------------
def test_permanent_is_always_alive(ctx: Context) -> None:
    note = ctx.pact_insert("d0, 1, 0", TextContent("User's name is Alice", ttl=None, key="p"))
    assert alive_episodes(ctx, "p", 30) == list(range(31))
    assert coords(ctx, note.id) == (0, 1, 0)
    assert ctx.find(note.id).lifecycle == "permanent"  # type: ignore[union-attr]


def test_temporary_ttl3_inserted_at_episode_10(ctx: Context) -> None:
    # created_at_episode = 10; Episode 11: alive; 12: alive; 13: EXPIRES
    for _ in range(10):
        ctx.advance()
    reminder = ctx.pact_insert(
        "d0, 1, 0", TextContent("Ask about follow-up in 3 turns", ttl=3, key="reminder")
    )
    assert reminder.born_episode == 10
    assert (reminder.age, reminder.remaining, reminder.expires_at_episode) == (0, 3, 13)
    assert reminder.lifecycle == "temporary"
    timers = []
    while ctx.current_episode < 12:
        ctx.advance()
        node = ctx.find(reminder.id)
        assert node is not None
        timers.append((ctx.current_episode, node.age, node.remaining))
    assert timers == [(11, 1, 2), (12, 2, 1)]
    ctx.advance()
    assert ctx.current_episode == 13
    assert ctx.find(reminder.id) is None
    assert ctx.select("#reminder") == []
    assert alive_episodes(ctx, "reminder", 20) == []


def test_sticky_exactly_one_live_instance_with_a_new_id_each_episode(ctx: Context) -> None:
    sticky = ctx.pact_insert(
        "d0, 1, 0", TextContent("Current task: Research", ttl=1, cadence=1, key="task")
    )
    assert sticky.lifecycle == "sticky"
    assert sticky.next_rehydration_episode == 1
    ids = [sticky.id]
    for episode in range(1, 12):
        assert ctx.advance() == episode
        live = ctx.select("#task")
        assert len(live) == 1
        assert live[0].coordinates == (0, 1, 0)
        assert live[0].content == "Current task: Research"
        assert live[0].born_episode == episode
        assert live[0].next_rehydration_episode == episode + 1
        ids.append(live[0].id)
    assert len(set(ids)) == len(ids)


def test_cyclic_ttl2_cad5_alive_and_hidden_episodes(ctx: Context) -> None:
    # alive at 0, 1, 5, 6, 10, 11 …; hidden at 2-4, 7-9
    first = ctx.pact_insert(
        "d0, 1, 0", TextContent("Check in with user", ttl=2, cadence=5, key="c")
    )
    assert first.lifecycle == "cyclic"
    assert first.next_rehydration_episode == 5
    assert alive_episodes(ctx, "c", 21) == [0, 1, 5, 6, 10, 11, 15, 16, 20, 21]


def test_cyclic_rehydration_is_a_new_instance_with_same_content(ctx: Context) -> None:
    # "Rehydration creates a new component with the same content at the same coordinates.
    #  The original component is permanently removed."
    first = ctx.pact_insert(
        "d0, 1, 0", TextContent("Cyclic", ttl=2, cadence=5, key="c", tags=["t"])
    )
    for _ in range(5):
        ctx.advance()
    again = ctx.get_by_key("c")
    assert again is not None
    assert again.id != first.id
    assert ctx.find(first.id) is None
    assert (again.content, again.tags, again.ttl, again.cad) == ("Cyclic", ["t"], 2, 5)
    assert again.coordinates == (0, 1, 0)
    assert (again.born_episode, again.age, again.remaining) == (5, 0, 2)
    ctx.advance()
    assert (ctx.get_by_key("c").age, ctx.get_by_key("c").remaining) == (1, 1)  # type: ignore[union-attr]
    ctx.advance()
    assert ctx.get_by_key("c") is None  # Episode 7: EXPIRES (age=2)


def test_temporary_seed_walk_expires_on_fourth_turn(ctx: Context) -> None:
    # Turn 1: age=0, still alive / Turn 2: age=1 / Turn 3: age=2 / Turn 4: age=3, EXPIRES
    reminder = ctx.pact_insert("d0, 1, 0", TextContent("Ask in 3 turns", ttl=3))
    ages = []
    for _ in range(3):
        node = ctx.find(reminder.id)
        assert node is not None
        ages.append(node.age)
        ctx.advance()
    assert ages == [0, 1, 2]
    assert ctx.find(reminder.id) is None


def test_update_status_by_replace_with_a_sticky(ctx: Context) -> None:
    # status = TextContent("Current Mode: Research", ttl=1, cadence=1, key="current_mode")
    # new_status = TextContent("Current Mode: Writing", ttl=1, cadence=1, key="current_mode")
    # context.pact_update("d0, 1, 0", new_status, mode="replace")
    ctx.add_user("let's research")
    status = ctx.pact_insert(
        "d0, 1, 0",
        TextContent("Current Mode: Research", ttl=1, cadence=1, key="current_mode"),
    )
    ctx.advance()
    ctx.advance()
    live = ctx.select("#current_mode")
    assert [n.content for n in live] == ["Current Mode: Research"]
    new_status = TextContent("Current Mode: Writing", ttl=1, cadence=1, key="current_mode")
    replaced = ctx.pact_update("d0, 1, 0", new_status, mode="replace")
    assert replaced.id == live[0].id
    assert replaced.content == "Current Mode: Writing"
    assert [n.content for n in ctx.select("#current_mode")] == ["Current Mode: Writing"]
    # the schedule carries the new content from now on, still one live instance
    for episode in range(3, 7):
        ctx.advance()
        now = ctx.select("#current_mode")
        assert [(n.content, n.coordinates, n.born_episode) for n in now] == [
            ("Current Mode: Writing", (0, 1, 0), episode)
        ]
    assert ctx.find(status.id) is None
    # and it follows its message (sticky items participate in ODI)
    ctx.add_user("now write")
    assert [n.coordinates for n in ctx.select("#current_mode")] == [(1, 1, 0)]
    ctx.advance()
    assert [(n.coordinates, n.content) for n in ctx.select("#current_mode")] == [
        ((1, 1, 0), "Current Mode: Writing")
    ]
    check_structure(ctx)


# ------------------------------------------------------------------------------------------
# render lifecycle (spec §5)
# ------------------------------------------------------------------------------------------
def test_render_lifecycle_example_plus1_minus1_minus2(ctx: Context) -> None:
    # Turn 1-2: At offset 1 / Turn 3-5: Moves to offset -1 / Turn 6+: offset -2 permanently.
    # A permanent neighbour at d0,0,-1 makes the final stage's -2 exact (offsets are dense).
    ctx.add_user("the message")
    ctx.pact_insert("d0, 0, -1", TextContent("neighbour"))
    ctx.advance()
    alert = TextContent(content="Important alert").render_lifecycle(
        [
            Pos("d0, 0, 1", ttl=2),  # Stage 1: Offset +1 for 2 turns
            Pos("d0, 0, -1", ttl=3),  # Stage 2: Offset -1 for 3 turns
            Pos("d0, 0, -2"),  # Stage 3: Offset -2 (permanent)
        ]
    )
    node = ctx.pact_insert("d0, 0, 1", alert)
    assert ctx.current_episode == 1
    timeline = {1: node.offset}
    stages = {1: node.stage}
    while ctx.current_episode < 10:
        ctx.advance()
        moved = ctx.find(node.id)
        assert moved is not None, "the alert keeps its id through every stage"
        timeline[ctx.current_episode] = moved.offset
        stages[ctx.current_episode] = moved.stage
    assert timeline == {1: 1, 2: 1, 3: -1, 4: -1, 5: -1, 6: -2, 7: -2, 8: -2, 9: -2, 10: -2}
    assert stages == {1: 0, 2: 0, 3: 1, 4: 1, 5: 1, 6: 2, 7: 2, 8: 2, 9: 2, 10: 2}
    final = ctx.find(node.id)
    assert final is not None
    assert final.born_episode == 6  # born_episode reset at each stage
    assert final.ttl is None and final.lifecycle == "permanent"
    assert slot_layout(ctx, 0, 0) == {-2: "Important alert", -1: "neighbour", 0: "the message"}


def test_render_lifecycle_stage_timers(ctx: Context) -> None:
    ctx.add_user("m")
    node = ctx.pact_insert(
        "d0, 0, 1",
        TextContent("a").render_lifecycle([Pos("d0, 0, 1", ttl=2), Pos("d0, 0, -1", ttl=3)]),
    )
    assert (node.ttl, node.remaining, node.expires_at_episode, node.lifecycle) == (
        2,
        2,
        2,
        "temporary",
    )
    ctx.advance()
    ctx.advance()
    moved = ctx.find(node.id)
    assert moved is not None
    assert (moved.ttl, moved.born_episode, moved.remaining, moved.expires_at_episode) == (
        3,
        2,
        3,
        5,
    )
    # cycle=False: after the last timed stage the item is removed
    for _ in range(3):
        ctx.advance()
    assert ctx.current_episode == 5
    assert ctx.find(node.id) is None


def test_render_lifecycle_cycle_true_repeats_forever(ctx: Context) -> None:
    # indicator.render_lifecycle([Pos("d0, 0, 1", ttl=1), Pos("d0, 0, -1", ttl=1)], cycle=True)
    ctx.add_user("m")
    indicator = TextContent(content="Status").render_lifecycle(
        [Pos("d0, 0, 1", ttl=1), Pos("d0, 0, -1", ttl=1)], cycle=True
    )
    node = ctx.pact_insert("d0, 0, 1", indicator)
    offsets = [node.offset]
    for _ in range(40):
        ctx.advance()
        moved = ctx.find(node.id)
        assert moved is not None
        offsets.append(moved.offset)
    assert offsets == [1, -1] * 20 + [1]


@pytest.mark.parametrize("cycles", [1, 2, 3])
def test_render_lifecycle_cycle_n_stops_after_n_passes(ctx: Context, cycles: int) -> None:
    # cycle=3: "Stops after 3 complete cycles"
    ctx.add_user("m")
    indicator = TextContent(content="Status").render_lifecycle(
        [Pos("d0, 0, 1", ttl=1), Pos("d0, 0, -1", ttl=1)], cycle=cycles
    )
    node = ctx.pact_insert("d0, 0, 1", indicator)
    offsets: list[int | None] = [node.offset]
    for _ in range(2 * cycles + 2):
        ctx.advance()
        moved = ctx.find(node.id)
        offsets.append(None if moved is None else moved.offset)
    assert offsets == [1, -1] * cycles + [None] * 3
    assert slot_layout(ctx, 0, 0) == {0: "m"}


# ------------------------------------------------------------------------------------------
# ContextExplorer (seed 002, "Debugging Context")
# ------------------------------------------------------------------------------------------
def test_explorer_print_step_render_print(ctx: Context, capsys: pytest.CaptureFixture[str]) -> None:
    # explorer = ContextExplorer(context); explorer.print(); explorer.step("render"); print()
    ctx.add_user("hello")
    ctx.pact_insert("d0, 1, 0", TextContent("expires soon", ttl=1, key="soon"))
    explorer = ContextExplorer(ctx)
    before = explorer.print()
    out = capsys.readouterr().out
    assert out == before + "\n"
    assert "expires soon" in before and "remaining=1" in before
    assert explorer.step("render") == 1
    after = explorer.print()
    assert "expires soon" not in after
    assert "episode 1" in after
    assert ctx.current_episode == 1
