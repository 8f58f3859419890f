"""What each operation records in its changelog (``Context.last_changes``), checked against the
context itself: coordinates read with ``find`` before and after, ids against ``diff_views``."""

from __future__ import annotations

import contextlib
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.context import (
    ChangeEntry,
    Changelog,
    Context,
    ContextError,
    Pos,
    TextContent,
)
from engine.context.changelog import LIST_LIMIT
from engine.context.commands import apply_command, parse_command
from engine.context.history import diff_views

from .conftest import check_changelog, coords, new_context


def frozen(ctx: Context) -> Context:
    """A copy of the state as it is now (ids and coordinates kept), to compare with later."""
    return Context.load(ctx.model_dump())


def changes(ctx: Context) -> Changelog:
    log = ctx.last_changes
    assert log is not None
    assert Changelog.from_json(log.to_json()) == log  # every one read back equal
    return log


def only(log: Changelog, kind: str) -> ChangeEntry:
    [entry] = [e for e in log.entries if e.kind == kind]
    return entry


def turn_ids(ctx: Context) -> dict[str, int]:
    return {turn.id: depth for depth, turn in ctx.iter_turns()}


# ------------------------------------------------------------------------------------------
# placement
# ------------------------------------------------------------------------------------------
def test_insert_records_the_item_where_it_landed(ctx: Context) -> None:
    node = ctx.pact_insert("d0, 1, 0", TextContent("first line\nsecond", key="note"))
    log = changes(ctx)
    assert (log.op, log.episode, log.shifts) == ("insert", 0, ())
    assert log.entries == (
        ChangeEntry(
            kind="inserted",
            id=node.id,
            key="note",
            node_type="text",
            preview="first line…",
            before=None,
            after=node.coordinates,
        ),
    )
    assert log.summary() == "inserted #note"


def test_insert_at_the_active_message_pushes_a_turn_and_says_so(ctx: Context) -> None:
    first = ctx.add_user("hello")
    extra = ctx.pact_insert("d0, 1, 0", TextContent("beside it"))
    before = frozen(ctx)
    node = ctx.pact_insert("d0, 0, 0", TextContent("a new message"))
    log = changes(ctx)
    assert log.op == "insert"
    assert only(log, "inserted").after == coords(ctx, node.id) == (0, 0, 0)
    [shift] = log.shifts
    assert (shift.by, shift.turns, shift.items, shift.depths) == (1, 1, 2, (0, 0))
    assert [(e.id, e.before, e.after) for e in shift.listed] == [
        (i, coords(before, i), coords(ctx, i)) for i in (first.id, extra.id)
    ]
    assert coords(ctx, first.id) == (1, 0, 0)


def test_replace_names_the_new_content_at_the_same_place(ctx: Context) -> None:
    old = ctx.pact_insert("d0, 1, 0", TextContent("old", key="k"))
    ctx.pact_update("d0, 1, 0", TextContent("new", key="k2"))
    entry = only(changes(ctx), "replaced")
    assert (entry.id, entry.key, entry.preview) == (old.id, "k2", "new")
    assert entry.before == entry.after == coords(ctx, old.id)


def test_append_is_an_insert_of_the_update(ctx: Context) -> None:
    ctx.pact_insert("d0, 1, 0", TextContent("a"))
    node = ctx.pact_update("d0, 1", TextContent("b"), mode="append")
    log = changes(ctx)
    assert log.op == "update"
    assert only(log, "inserted").after == coords(ctx, node.id) == (0, 1, 1)


def test_delete_by_query_lists_each_item_where_it_was(ctx: Context) -> None:
    ids = [ctx.pact_insert(f"d0, {p}, 0", TextContent(f"x{p}", tags=["t"])).id for p in (1, 2)]
    keep = ctx.pact_insert("d0, 3, 0", TextContent("keep")).id
    before = frozen(ctx)
    assert ctx.pact_delete("+t") == ids
    log = changes(ctx)
    assert [(e.kind, e.id, e.before, e.after) for e in log.entries] == [
        ("deleted", i, coords(before, i), None) for i in ids
    ]
    assert log.summary() == "deleted text (0,1,0), text (0,2,0)"
    assert coords(ctx, keep) == (0, 3, 0)


def test_deleting_a_schedule_with_no_instance_says_the_schedule_ended(ctx: Context) -> None:
    first = ctx.pact_insert("d0, 1, 0", TextContent("mode", key="mode", ttl=1, cadence=3))
    ctx.advance()  # expired, comes back at episode 3
    assert ctx.select("#mode") == []
    ctx.pact_delete(key="mode")
    entry = only(changes(ctx), "deleted")
    assert (entry.id, entry.template, entry.before, entry.after) == (first.id, first.id, None, None)
    assert "schedule" in entry.reasons()


# ------------------------------------------------------------------------------------------
# episodes
# ------------------------------------------------------------------------------------------
def test_expiry_records_age_and_ttl(ctx: Context) -> None:
    ctx.add_user("hi")
    node = ctx.pact_insert("d0, 1, 0", TextContent("Submit by Friday", key="deadline", ttl=3))
    ctx.advance()
    ctx.advance()
    assert changes(ctx).entries == ()
    where = coords(ctx, node.id)
    ctx.advance()
    log = changes(ctx)
    assert (log.op, log.episode) == ("advance", 3)
    entry = only(log, "expired")
    assert (entry.id, entry.age, entry.ttl, entry.before, entry.after) == (
        node.id,
        3,
        3,
        where,
        None,
    )
    assert log.summary() == "expired #deadline (ttl 3)"


def test_rehydration_of_an_expired_instance_replaces_nothing(ctx: Context) -> None:
    first = ctx.pact_insert(
        "d0, 2, 0", TextContent("research", key="current_mode", ttl=1, cadence=1)
    )
    where = coords(ctx, first.id)
    ctx.advance()
    log = changes(ctx)
    expired = only(log, "expired")
    fresh = only(log, "rehydrated")
    [now] = ctx.select("#current_mode")
    assert (expired.id, expired.before) == (first.id, where)
    assert (fresh.id, fresh.template, fresh.replaced, fresh.before) == (
        now.id,
        first.id,
        None,
        None,
    )
    assert fresh.after == now.coordinates and now.id != first.id
    assert log.summary() == "expired #current_mode (ttl 1) · rehydrated #current_mode"


def test_rehydration_of_a_live_instance_names_the_one_it_replaced(ctx: Context) -> None:
    first = ctx.pact_insert("d0, 2, 0", TextContent("status", key="status", ttl=5, cadence=2))
    ctx.advance()
    where = coords(ctx, first.id)
    ctx.advance()  # due at episode 2, the first instance still alive (age 2 < ttl 5)
    log = changes(ctx)
    fresh = only(log, "rehydrated")
    [now] = ctx.select("#status")
    assert (fresh.id, fresh.template, fresh.replaced) == (now.id, first.id, first.id)
    assert (fresh.before, fresh.after) == (where, now.coordinates)
    assert coords(ctx, first.id) is None
    assert not log.of_kind("expired", "deleted")


def test_render_lifecycle_moves_a_stage_then_ends(ctx: Context) -> None:
    stages = [Pos("d0, 4, 0", ttl=1), Pos("d0, 5, 0", ttl=1)]
    node = ctx.pact_insert("d0, 4, 0", TextContent("draft", key="alert").render_lifecycle(stages))
    ctx.advance()
    entry = only(changes(ctx), "stage")
    assert (entry.id, entry.stage, entry.stages, entry.cycled) == (node.id, (1, 2), 2, False)
    assert (
        (entry.before, entry.after) == ((0, 4, 0), coords(ctx, node.id)) == ((0, 4, 0), (0, 5, 0))
    )
    assert (entry.age, entry.ttl) == (1, 1)
    assert changes(ctx).summary() == "#alert stage 1→2"
    ctx.advance()
    entry = only(changes(ctx), "stage")
    assert (entry.stage, entry.before, entry.after, entry.ended) == (
        (2, None),
        (0, 5, 0),
        None,
        True,
    )
    assert coords(ctx, node.id) is None
    assert changes(ctx).summary() == "#alert stage 2 ended"


def test_render_lifecycle_that_cycles_says_so(ctx: Context) -> None:
    stages = [Pos("d0, 4, 0", ttl=1), Pos("d0, 5, 0", ttl=1)]
    node = ctx.pact_insert(
        "d0, 4, 0", TextContent("loop", key="loop").render_lifecycle(stages, cycle=True)
    )
    ctx.advance()
    ctx.advance()
    entry = only(changes(ctx), "stage")
    assert (entry.stage, entry.cycled, entry.after) == ((2, 1), True, coords(ctx, node.id))
    assert "(cycled)" in changes(ctx).summary()


def test_a_turn_emptied_by_expiry_goes_and_the_deeper_turns_come_up(ctx: Context) -> None:
    one = ctx.add_user("one")
    ctx.add_user("two")
    ctx.add_user("three")
    temp = ctx.pact_insert("d1, 1, 0", TextContent("brief", ttl=1))
    ctx.pact_delete("d1, 0, 0")  # the turn of "two" now holds only the temporary item
    before = frozen(ctx)
    emptied = before.turn_at(1)
    assert emptied is not None
    ctx.advance()
    log = changes(ctx)
    assert only(log, "expired").id == temp.id
    removed = only(log, "turn_removed")
    assert (removed.id, removed.before, removed.after) == (emptied.id, (1,), None)
    assert emptied.id not in turn_ids(ctx)
    [shift] = log.shifts
    assert (shift.by, shift.turns, shift.items, shift.depths) == (-1, 1, 1, (2, 2))
    assert [(e.id, e.before, e.after) for e in shift.listed] == [
        (one.id, coords(before, one.id), coords(ctx, one.id))
    ]
    assert coords(ctx, one.id) == (1, 0, 0)
    assert (
        log.summary()
        == "expired text (1,1,0) (ttl 1) · ODI: 1 item one shallower · turn d1 removed"
    )


def test_an_item_that_keeps_its_depth_comes_up_when_its_depth_is_gone(ctx: Context) -> None:
    ctx.add_user("one")
    ctx.add_user("two")
    ctx.add_user("three")
    temp = ctx.pact_insert("d2, 1, 0", TextContent("held", ttl=9))
    ctx.pact_delete("d1, 0, 0")  # the turn of "two" goes: the history is one turn shorter
    entry = only(changes(ctx), "moved")
    assert (entry.id, entry.before, entry.after) == (temp.id, (2, 1, 0), coords(ctx, temp.id))
    assert entry.after == (1, 1, 0)


# ------------------------------------------------------------------------------------------
# ODI at scale
# ------------------------------------------------------------------------------------------
def busy_context(turns: int) -> Context:
    """``turns`` turns of a message and two permanent items, a temporary and a cyclic item
    (they keep their depth), and two system items (they never move)."""
    ctx = new_context()
    ctx.pact_insert("d-1, 0, 0", TextContent("system"))
    ctx.pact_insert("d-1, 1, 0", TextContent("tools"))
    for n in range(turns):
        ctx.add_user(f"message {n}")
        ctx.pact_insert("d0, 1, 0", TextContent(f"note {n}"))
        ctx.pact_insert("d0, 1, 1", TextContent(f"more {n}"))
    deepest = ctx.history_depth
    ctx.pact_insert(f"d{min(3, deepest)}, 2, 0", TextContent("temporary", ttl=50))
    ctx.pact_insert(f"d{min(5, deepest)}, 3, 0", TextContent("cyclic", ttl=4, cadence=9))
    return ctx


def moved_by(before: Context, after: Context, by: int) -> set[str]:
    """The ids of items whose depth changed by ``by`` between the two states."""
    diff = diff_views(before, after)
    return {c.id for c in diff.changed if c.depth is not None and c.depth[1] - c.depth[0] == by}


def test_odi_of_thousands_is_counted_not_listed() -> None:
    ctx = busy_context(1_000)
    before = frozen(ctx)
    ctx.add_user("the next one")
    log = changes(ctx)
    [shift] = log.shifts
    moved = moved_by(before, ctx, 1)
    assert shift.items == len(moved) == 3_000
    assert (shift.by, shift.turns, shift.depths) == (1, 1_000, (0, 999))
    assert shift.listed == ()
    assert log.summary() == "inserted text (0,0,0) · ODI: 3,000 items one deeper"


def test_odi_of_a_few_lists_each_move_with_its_coordinates() -> None:
    ctx = busy_context(3)
    before = frozen(ctx)
    ctx.add_user("the next one")
    [shift] = changes(ctx).shifts
    moved = moved_by(before, ctx, 1)
    assert shift.items == len(moved) == 9 <= LIST_LIMIT
    assert {e.id for e in shift.listed} == moved
    for entry in shift.listed:
        assert entry.kind == "moved"
        assert entry.before == coords(before, entry.id)
        assert entry.after == coords(ctx, entry.id)


def test_removed_turns_count_the_items_that_come_up_by_how_far() -> None:
    ctx = busy_context(40)  # a temporary item at d3, a cyclic one at d5: they keep their depth
    before = frozen(ctx)
    removed = [before.turn_at(d) for d in (1, 4)]
    ctx.pact_delete("(d1, *, *), (d4, *, *)")
    log = changes(ctx)
    assert [(e.id, e.before) for e in log.of_kind("turn_removed")] == [
        (turn.id, (depth,)) for turn, depth in zip(removed, (1, 4), strict=True) if turn
    ]
    one, two = log.shifts
    # Between the two removed turns the items come up one; past the second, two.
    assert (one.by, one.turns, one.depths) == (-1, 2, (2, 3))
    assert (two.by, two.turns, two.depths) == (-2, 35, (5, 39))
    assert one.items == len(moved_by(before, ctx, -1)) == 6
    assert two.items == len(moved_by(before, ctx, -2)) == 35 * 3
    assert {e.id for e in one.listed} == moved_by(before, ctx, -1)
    assert two.listed == ()
    assert log.summary() == (
        "deleted 6 items · ODI: 6 items one shallower, 105 items two shallower"
        " · turn d1 removed · turn d4 removed"
    )


def test_seal_records_an_empty_changelog(ctx: Context) -> None:
    ctx.add_user("x")
    ctx.seal("mine")
    log = changes(ctx)
    assert (log.op, log.entries, log.shifts, bool(log)) == ("seal", (), (), False)


def test_a_refused_operation_leaves_the_last_changelog(ctx: Context) -> None:
    ctx.add_user("x")
    log = changes(ctx)
    with contextlib.suppress(ContextError):
        ctx.pact_delete("d0, 7, 0")
    assert ctx.last_changes is log


def test_recording_can_be_switched_off_and_the_state_is_the_same() -> None:
    on, off = busy_context(4), busy_context(4)
    off.record_changes = False
    for ctx in (on, off):
        ctx.add_user("again")
        ctx.advance()
    assert off.last_changes is None and on.last_changes is not None
    assert on.model_dump_json() == off.model_dump_json()


# ------------------------------------------------------------------------------------------
# property: replayed commands give equal changelogs, which agree with the diff
# ------------------------------------------------------------------------------------------
SELECTORS = ["d0, 1, 0", "d0, 2, 0", "d1, 1, 0", "d0, 0, 0", "d1, 2, -1", "d-1, 1, 0", "d2, 1, 0"]
COMPONENTS = [
    {"content": "plain"},
    {"content": "temp", "ttl": 2},
    {"content": "brief", "ttl": 1},
    {"content": "sticky", "ttl": 1, "cad": 1, "key": "sticky"},
    {"content": "cyclic", "ttl": 2, "cad": 3, "key": "cyc"},
    {"content": "status", "ttl": 4, "cad": 2, "key": "status"},
    {
        "content": "staged",
        "key": "staged",
        "render_lifecycle": {
            "stages": [{"selector": "d0, 4, 0", "ttl": 1}, {"selector": "d1, 5, 0", "ttl": 2}],
            "cycle": 2,
        },
    },
]
DELETES = [*SELECTORS, "[temporary]", "d1-9, *, *", "d1, 0, 0", "d2, 0, 0"]


def random_command(rng: random.Random) -> dict[str, Any]:
    """One command, drawn so that expiry, rehydration, stages and turn removal all happen."""
    kind = rng.choices(
        ["insert", "message", "advance", "update", "seal", "delete", "delete_key"],
        weights=[30, 20, 25, 5, 3, 12, 5],
    )[0]
    if kind == "insert":
        component = rng.choice(COMPONENTS)
        return {"op": "insert", "selector": rng.choice(SELECTORS), "component": component}
    if kind == "message":
        text = rng.choice(["hi", "a longer message\nwith a second line", "x" * 90])
        return {"op": "message", "role": rng.choice(["user", "assistant"]), "text": text}
    if kind == "update":
        component = rng.choice(COMPONENTS[:3])
        return {"op": "update", "selector": rng.choice(SELECTORS), "component": component}
    if kind == "delete":
        return {"op": "delete", "selector": rng.choice(DELETES)}
    if kind == "delete_key":
        return {"op": "delete", "key": rng.choice(["sticky", "cyc", "status"])}
    return {"op": kind}


COMMANDS = st.builds(
    lambda seed, n: [random_command(random.Random(seed * 1000 + i)) for i in range(n)],
    st.integers(0, 2**32),
    st.integers(1, 40),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(COMMANDS)
def test_replayed_commands_give_equal_changelogs_that_agree_with_the_diff(
    commands: list[dict[str, Any]],
) -> None:
    live, replay = new_context(), new_context()
    results: list[dict[str, Any]] = []
    done: list[Any] = []
    for data in commands:
        command, _ = parse_command(data)
        before = frozen(live)
        try:
            result = apply_command(live, command)
        except ContextError:
            continue
        log = Changelog.from_json(result.to_json()["changes"])
        assert log == live.last_changes
        check_changelog(before, live, log)
        results.append(result)
        done.append(command)
    assert [apply_command(replay, command) for command in done] == results
