"""Episodes, TTL, cadence and render lifecycles (spec §3, §5) beyond the seeds' timelines."""

from __future__ import annotations

import pytest

from engine.context import Context, Pos, TextContent

from .conftest import check_structure, coords, new_context, slot_layout


def advance_to(ctx: Context, episode: int) -> None:
    while ctx.current_episode < episode:
        ctx.advance()


def live_by_episode(ctx: Context, key: str, until: int) -> dict[int, list[str]]:
    """``{episode: [ids of live #key items]}`` from now to ``until``."""
    out = {ctx.current_episode: [n.id for n in ctx.select(f"#{key}")]}
    while ctx.current_episode < until:
        ctx.advance()
        out[ctx.current_episode] = [n.id for n in ctx.select(f"#{key}")]
    return out


def test_episodes_start_at_zero_and_advance_by_one(ctx: Context) -> None:
    assert ctx.current_episode == 0
    assert [ctx.advance() for _ in range(3)] == [1, 2, 3]
    assert ctx.current_episode == 3
    node = ctx.pact_insert("d0, 1, 0", TextContent("x"))
    assert node.born_episode == 3
    assert node.age == 0


def test_every_advance_records_an_episode_snapshot(ctx: Context) -> None:
    ctx.advance()
    ctx.seal("mine")
    ctx.advance()
    assert [(s.episode, s.trigger) for s in ctx.history] == [
        (1, "episode"),
        (1, "mine"),
        (2, "episode"),
    ]


@pytest.mark.parametrize(
    ("ttl", "cad", "label"),
    [
        (None, None, "permanent"),
        (3, None, "temporary"),
        (1, None, "temporary"),
        (1, 1, "sticky"),
        (2, 5, "cyclic"),
        (1, 2, "cyclic"),
        (3, 1, "cyclic"),
        (None, 3, "permanent"),
    ],
)
def test_lifecycle_labels(ctx: Context, ttl: int | None, cad: int | None, label: str) -> None:
    node = ctx.pact_insert("d0, 1, 0", TextContent("x", ttl=ttl, cadence=cad))
    assert node.lifecycle == label
    assert [n.id for n in ctx.select(f"[{label}]")] == [node.id]


@pytest.mark.parametrize(("ttl", "alive_until"), [(1, 5), (2, 6), (5, 9)])
def test_ttl_alive_iff_age_below_ttl(ttl: int, alive_until: int) -> None:
    # alive at x iff x - born < N: ttl=1 is this episode only
    ctx = new_context()
    advance_to(ctx, 5)
    node = ctx.pact_insert("d0, 1, 0", TextContent("x", ttl=ttl, key="x"))
    seen = live_by_episode(ctx, "x", 12)
    assert [e for e, ids in seen.items() if ids] == list(range(5, alive_until + 1))
    assert all(ids in ([], [node.id]) for ids in seen.values())


def test_temporary_timers(ctx: Context) -> None:
    advance_to(ctx, 4)
    node = ctx.pact_insert("d0, 1, 0", TextContent("x", ttl=4))
    rows = []
    for _ in range(4):
        now = ctx.find(node.id)
        assert now is not None
        rows.append((ctx.current_episode, now.age, now.remaining, now.expires_at_episode))
        ctx.advance()
    assert rows == [(4, 0, 4, 8), (5, 1, 3, 8), (6, 2, 2, 8), (7, 3, 1, 8)]
    assert ctx.current_episode == 8 and ctx.find(node.id) is None


def test_permanent_has_no_timers(ctx: Context) -> None:
    node = ctx.pact_insert("d0, 1, 0", TextContent("x"))
    advance_to(ctx, 3)
    now = ctx.find(node.id)
    assert now is not None
    assert (now.age, now.remaining, now.expires_at_episode, now.next_rehydration_episode) == (
        3,
        None,
        None,
        None,
    )


def test_cyclic_inserted_late_counts_from_its_birth(ctx: Context) -> None:
    advance_to(ctx, 3)
    ctx.pact_insert("d0, 1, 0", TextContent("c", ttl=2, cadence=5, key="c"))
    seen = live_by_episode(ctx, "c", 19)
    assert [e for e, ids in seen.items() if ids] == [3, 4, 8, 9, 13, 14, 18, 19]


def test_cyclic_next_rehydration_timer(ctx: Context) -> None:
    first = ctx.pact_insert("d0, 1, 0", TextContent("c", ttl=2, cadence=5, key="c"))
    assert (first.next_rehydration_episode, first.expires_at_episode) == (5, 2)
    advance_to(ctx, 1)
    assert ctx.get_by_key("c").next_rehydration_episode == 5  # type: ignore[union-attr]
    advance_to(ctx, 5)
    now = ctx.get_by_key("c")
    assert now is not None
    assert (now.next_rehydration_episode, now.expires_at_episode, now.remaining) == (10, 7, 2)


def test_cadence_longer_ttl_never_two_live_instances(ctx: Context) -> None:
    # ttl 5 outlives the cadence 2: the still-live instance is removed first
    first = ctx.pact_insert("d0, 1, 0", TextContent("c", ttl=5, cadence=2, key="c"))
    seen = live_by_episode(ctx, "c", 9)
    assert all(len(ids) == 1 for ids in seen.values())
    assert seen[0] == seen[1] == [first.id]
    assert seen[2] == seen[3] != seen[1]
    assert len({ids[0] for ids in seen.values()}) == 5  # new ids at 2, 4, 6, 8
    assert ctx.get_by_key("c").born_episode == 8  # type: ignore[union-attr]


def test_permanent_schedule_renews_every_cadence(ctx: Context) -> None:
    first = ctx.pact_insert("d0, 1, 0", TextContent("renewed", cadence=3, key="r"))
    assert first.lifecycle == "permanent"
    seen = live_by_episode(ctx, "r", 7)
    assert all(len(ids) == 1 for ids in seen.values())
    assert [seen[e][0] == first.id for e in range(8)] == [True] * 3 + [False] * 5
    assert seen[3] == seen[4] == seen[5] != seen[6]


def test_ttl_one_with_cadence_appears_only_on_its_episodes(ctx: Context) -> None:
    ctx.pact_insert("d0, 1, 0", TextContent("blink", ttl=1, cadence=3, key="b"))
    seen = live_by_episode(ctx, "b", 9)
    assert [e for e, ids in seen.items() if ids] == [0, 3, 6, 9]


def test_expiry_removes_the_emptied_slot(ctx: Context) -> None:
    ctx.add_user("m")
    ctx.pact_insert("d0, 4, 0", TextContent("x", ttl=1))
    ctx.advance()
    assert [n.coordinates for n in ctx.select(".slot")] == [(0, 0)]


def test_expiry_of_core_promotes_neighbour(ctx: Context) -> None:
    ctx.pact_insert("d0, 1, 0", TextContent("perm"))
    ctx.pact_insert("d0, 1, 0", TextContent("temp core", ttl=1))
    ctx.pact_insert("d0, 1, -1", TextContent("before"))
    assert slot_layout(ctx, 0, 1) == {-1: "before", 0: "temp core", 1: "perm"}
    ctx.advance()
    assert slot_layout(ctx, 0, 1) == {-1: "before", 0: "perm"}


def test_sticky_follows_message_and_rehydrates_there(ctx: Context) -> None:
    ctx.add_user("a")
    ctx.pact_insert("d0, 1, 0", TextContent("sticky", ttl=1, cadence=1, key="s"))
    for step in range(4):
        ctx.add_user(f"m{step}")
        ctx.advance()
        assert [n.coordinates for n in ctx.select("#s")] == [(step + 1, 1, 0)]
    check_structure(ctx)


def test_cyclic_rehydrates_at_its_depth_after_odi(ctx: Context) -> None:
    ctx.add_user("a")
    ctx.pact_insert("d0, 1, 0", TextContent("cyc", ttl=1, cadence=2, key="c"))
    ctx.add_user("b")
    ctx.add_user("c")
    assert [n.coordinates for n in ctx.select("#c")] == [(0, 1, 0)]
    ctx.advance()
    assert ctx.select("#c") == []
    ctx.add_user("d")
    ctx.advance()
    live = ctx.select("#c")
    assert [(n.coordinates, n.born_episode) for n in live] == [((0, 1, 0), 2)]
    assert ctx["d0, 0, 0"].content == "d"  # type: ignore[union-attr]


def test_system_schedule_rehydrates_in_the_system(ctx: Context) -> None:
    ctx.pact_insert("d-1, 1, 0", TextContent("sys tick", ttl=1, cadence=1, key="s"))
    ctx.pact_insert("d-1, 2, 0", TextContent("sys cyc", ttl=1, cadence=2, key="c"))
    for step in range(4):
        ctx.add_user(f"m{step}")
        ctx.advance()
        assert [n.coordinates for n in ctx.select("#s")] == [(-1, 1, 0)]
    assert [n.coordinates for n in ctx.select("#c")] == [(-1, 2, 0)]


# ------------------------------------------------------------------------------------------
# render lifecycles
# ------------------------------------------------------------------------------------------
def test_render_lifecycle_moves_between_slots_keeping_id(ctx: Context) -> None:
    ctx.add_user("m")
    node = ctx.pact_insert(
        "d0, 1, 0",
        TextContent("mover", key="mv").render_lifecycle(
            [Pos("d0, 1, 0", ttl=1), Pos("d0, 2, 0", ttl=1), Pos("d-1, 3, 0")]
        ),
    )
    path = [node.coordinates]
    for _ in range(3):
        ctx.advance()
        path.append(coords(ctx, node.id))
    assert path == [(0, 1, 0), (0, 2, 0), (-1, 3, 0), (-1, 3, 0)]
    assert [n.coordinates for n in ctx.select(".slot")] == [(-1, 3), (0, 0)]


def test_render_lifecycle_one_episode_stage(ctx: Context) -> None:
    ctx.add_user("m")
    node = ctx.pact_insert(
        "d0, 0, 1",
        TextContent("x").render_lifecycle([Pos("d0, 0, 1", ttl=1), Pos("d0, 0, -1", ttl=2)]),
    )
    path = [node.offset]
    for _ in range(4):
        ctx.advance()
        now = ctx.find(node.id)
        path.append(None if now is None else now.offset)
    assert path == [1, -1, -1, None, None]


def test_render_lifecycle_timed_stage_keeps_coordinates_under_odi(ctx: Context) -> None:
    ctx.add_user("a")
    node = ctx.pact_insert(
        "d0, 0, 1",
        TextContent("alert").render_lifecycle([Pos("d0, 0, 1", ttl=2), Pos("d0, 0, -1")]),
    )
    ctx.add_user("b")
    assert coords(ctx, node.id) == (0, 0, 1)  # temporary while timed: stays on the current turn
    assert slot_layout(ctx, 0, 0) == {0: "b", 1: "alert"}
    ctx.advance()
    ctx.advance()
    assert coords(ctx, node.id) == (0, 0, -1)
    assert ctx.find(node.id).lifecycle == "permanent"  # type: ignore[union-attr]
    ctx.add_user("c")  # final stage: follows its message
    assert coords(ctx, node.id) == (1, 0, -1)


def test_render_lifecycle_stage_depth_clamped_to_history(ctx: Context) -> None:
    ctx.add_user("a")
    ctx.add_user("b")
    node = ctx.pact_insert(
        "d0, 2, 0", TextContent("x").render_lifecycle([Pos("d0, 2, 0", ttl=1), Pos("d4, 2, 0")])
    )
    ctx.advance()
    assert coords(ctx, node.id) == (1, 2, 0)


def test_render_lifecycle_item_exports_its_stage(ctx: Context) -> None:
    node = ctx.pact_insert(
        "d0, 0, 1",
        TextContent("x").render_lifecycle([Pos("d0, 0, 1", ttl=1), Pos("d0, 0, -1", ttl=1)], 2),
    )
    ctx.advance()
    ctx.advance()
    dumped = ctx.find(node.id).model_dump()  # type: ignore[union-attr]
    assert dumped["render_lifecycle"] == {
        "stages": [{"selector": "d0, 0, 1", "ttl": 1}, {"selector": "d0, 0, -1", "ttl": 1}],
        "cycle": 2,
        "stage": 0,
        "passes": 1,
    }
    assert dumped["ttl"] == 1 and dumped["born_episode"] == 2


def test_replacement_with_a_ttl_is_never_live_past_its_ttl() -> None:
    ctx = new_context()
    ctx.pact_insert("d0, 1, 0", TextContent("permanent"))
    advance_to(ctx, 10)
    node = ctx.pact_update("d0, 1, 0", TextContent("now temporary", ttl=3))
    # live items satisfy age < ttl (spec §3: alive at x iff x - born_episode < ttl)
    assert node.remaining is not None and node.remaining > 0, (
        node.born_episode,
        node.age,
        node.remaining,
    )


def test_schedule_turned_cyclic_by_replace_survives_its_first_turn() -> None:
    ctx = new_context()
    ctx.add_user("a")
    ctx.pact_insert("d0, 1, 0", TextContent("s", cadence=2, key="s"))
    ctx.pact_update("d0, 1, 0", TextContent("s", ttl=1, cadence=2, key="s"))
    ctx.add_user("b")  # the now-cyclic instance keeps (0,1,0): it sits on b
    assert [n.coordinates for n in ctx.select("#s")] == [(0, 1, 0)]
    ctx.pact_delete("d1, 0, 0")  # a is emptied and removed
    seen = {}
    for _ in range(4):
        ctx.advance()
        seen[ctx.current_episode] = [n.coordinates for n in ctx.select("#s")]
    assert seen == {1: [], 2: [(0, 1, 0)], 3: [], 4: [(0, 1, 0)]}


def test_schedule_turned_sticky_by_replace_follows_its_message() -> None:
    ctx = new_context()
    ctx.add_user("a")
    ctx.pact_insert("d0, 1, 0", TextContent("s", ttl=1, cadence=2, key="s"))
    ctx.pact_update("d0, 1, 0", TextContent("s", ttl=1, cadence=1, key="s"))
    ctx.add_user("b")
    assert [n.coordinates for n in ctx.select("#s")] == [(1, 1, 0)]  # followed a
    ctx.advance()
    assert [n.coordinates for n in ctx.select("#s")] == [(1, 1, 0)]


def test_replacement_is_a_fresh_lease() -> None:
    """docs/context-tree.md: a replacement is born when it is made; its ttl counts from then."""
    ctx = new_context()
    node = ctx.pact_insert("d0, 1, 0", TextContent("first", ttl=3, key="r"))
    advance_to(ctx, 2)
    renewed = ctx.pact_update("d0, 1, 0", TextContent("second", ttl=3, key="r"))
    assert renewed.id == node.id
    assert (renewed.born_episode, renewed.age, renewed.remaining) == (2, 0, 3)
    assert renewed.expires_at_episode == 5
    assert live_by_episode(ctx, "r", 6) == {2: [node.id], 3: [node.id], 4: [node.id], 5: [], 6: []}


def test_replacement_with_a_render_lifecycle_starts_its_first_stage_now() -> None:
    ctx = new_context()
    node = ctx.pact_insert("d0, 1, 0", TextContent("plain"))
    advance_to(ctx, 4)
    ctx.pact_update(
        "d0, 1, 0",
        TextContent("staged").render_lifecycle([Pos("d0, 1, 0", ttl=2), Pos("d0, 2, 0")]),
    )
    ctx.advance()
    assert coords(ctx, node.id) == (0, 1, 0)
    ctx.advance()
    assert coords(ctx, node.id) == (0, 2, 0)


def test_replacing_a_schedule_instance_keeps_the_schedule_phase() -> None:
    """The instance is a fresh lease, the schedule keeps its cadence: cyclic ttl=2, cad=5 from
    episode 0 still renews at 5 and 10 when its instance is replaced at episode 1."""
    ctx = new_context()
    first = ctx.pact_insert("d0, 1, 0", TextContent("v1", ttl=2, cadence=5, key="c"))
    ctx.advance()
    replaced = ctx.pact_update("d0, 1, 0", TextContent("v2", ttl=2, cadence=5, key="c"))
    assert (replaced.id, replaced.born_episode) == (first.id, 1)
    assert (replaced.expires_at_episode, replaced.next_rehydration_episode) == (3, 5)
    seen = {}
    while ctx.current_episode < 11:
        ctx.advance()
        seen[ctx.current_episode] = [n.content for n in ctx.select("#c")]
    assert seen == {
        2: ["v2"],
        3: [],
        4: [],
        5: ["v2"],
        6: ["v2"],
        7: [],
        8: [],
        9: [],
        10: ["v2"],
        11: ["v2"],
    }
    check_structure(ctx)


# ------------------------------------------------------------------------------------------
# renewal in place (issue 27, exact 3) and the order of stages landing together (exact 4)
# ------------------------------------------------------------------------------------------
def test_sticky_renewal_keeps_its_place_and_its_neighbours(ctx: Context) -> None:
    """Seed 002: a sticky item is "always visible at same position". Its expiring instance's
    core place is not handed to the neighbour: the fresh instance takes the place the old one
    leaves, so Note stays before the status and the provider order does not change."""
    mode = ctx.pact_insert("d0, 0, 0", TextContent("Mode", key="mode", ttl=1, cadence=1))
    ctx.pact_insert("d0, 0, -1", TextContent("Note"))
    provider = [e["content"] for e in ctx.render_provider()]
    for _ in range(3):
        ctx.advance()
        assert slot_layout(ctx, 0, 0) == {-1: "Note", 0: "Mode"}
        assert [e["content"] for e in ctx.render_provider()] == provider
    assert ctx.get_by_key("mode").id != mode.id  # type: ignore[union-attr]
    log = ctx.last_changes
    assert log is not None and [e.kind for e in log.entries] == ["expired", "rehydrated"]
    assert log.shifts == ()
    check_structure(ctx)


def test_a_live_instance_is_renewed_where_it_is_now(ctx: Context) -> None:
    """A schedule whose instance is still alive when the next one is due (here a permanent
    schedule) renews it in place, even after a neighbour pushed it off the schedule's offset."""
    ctx.add_user("m")
    first = ctx.pact_insert("d0, 1, 0", TextContent("R", key="r", cadence=2))
    ctx.pact_insert("d0, 1, 0", TextContent("X"))  # R is pushed to +1
    ctx.advance()
    ctx.advance()  # due: a fresh R
    fresh = ctx.get_by_key("r")
    assert fresh is not None and fresh.id != first.id
    assert slot_layout(ctx, 0, 1) == {0: "X", 1: "R"}
    log = ctx.last_changes
    assert log is not None
    [entry] = log.entries
    assert (entry.kind, entry.replaced, entry.before, entry.after) == (
        "rehydrated",
        first.id,
        (0, 1, 1),
        (0, 1, 1),
    )


def test_a_hidden_schedule_comes_back_at_its_coordinates_by_the_insert_rule(
    ctx: Context,
) -> None:
    """With no live instance to renew (a cyclic item between its lives) the fresh instance is
    inserted at the schedule's coordinates, pushing what is there outward."""
    ctx.add_user("m")
    ctx.pact_insert("d0, 1, 0", TextContent("C", key="c", ttl=1, cadence=2))
    ctx.advance()  # C expires: hidden
    ctx.pact_insert("d0, 1, 0", TextContent("X"))
    ctx.advance()  # C comes back at (0, 1, 0)
    assert slot_layout(ctx, 0, 1) == {0: "C", 1: "X"}


def test_items_staged_to_one_target_in_one_advance_land_as_inserted_in_creation_order(
    ctx: Context,
) -> None:
    """The rule written in docs/context-tree.md: render stages that run out in the same advance
    move in the items' creation order, each placed by the insert rule, so at an offset >= 0
    the later-created item ends at the target and the earlier one one step outward (and
    mirrored at a negative offset). Replacing an item keeps its creation order."""
    ctx.add_user("m")
    for name in ("A", "B"):
        ctx.pact_insert(
            "d0, 1, 0",
            TextContent(name).render_lifecycle([Pos("d0, 1, 0", ttl=1), Pos("d0, 2, 0")]),
        )
    ctx.pact_insert("d0, 2, 0", TextContent("X"))
    for name in ("D", "E"):
        ctx.pact_insert(
            "d0, 3, 0",
            TextContent(name).render_lifecycle([Pos("d0, 3, 0", ttl=1), Pos("d0, 4, -1")]),
        )
    ctx.pact_insert("d0, 4, 0", TextContent("Y"))
    ctx.advance()
    assert slot_layout(ctx, 0, 2) == {0: "B", 1: "A", 2: "X"}
    assert slot_layout(ctx, 0, 4) == {-2: "D", -1: "E", 0: "Y"}
