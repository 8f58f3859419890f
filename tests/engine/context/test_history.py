"""Snapshots, time-qualified selectors and diffs (spec §7)."""

from __future__ import annotations

import json

import pytest

from engine.context import (
    Context,
    Diff,
    ItemChange,
    Pos,
    ReadOnlySelector,
    SnapshotContext,
    TextContent,
    UnknownSnapshot,
)

from .conftest import new_context, raises_unchanged


def without_counters(dump_json: str) -> dict:
    data = json.loads(dump_json)
    data.pop("counters")
    return data


# ------------------------------------------------------------------------------------------
# seal and at_snapshot
# ------------------------------------------------------------------------------------------
def test_seal_returns_an_id_and_records_the_trigger(ctx: Context) -> None:
    ctx.add_user("a")
    first = ctx.seal()
    second = ctx.seal(trigger="before-tool-call")
    assert first != second
    assert [(s.id, s.trigger, s.episode, s.index) for s in ctx.history] == [
        (first, "checkpoint", 0, 0),
        (second, "before-tool-call", 0, 1),
    ]
    assert ctx.history.latest is not None and ctx.history.latest.id == second
    assert len(ctx.history) == 2


def test_seal_does_not_change_the_exported_state(ctx: Context) -> None:
    ctx.add_user("a")
    ctx.pact_insert("d0, 1, 0", TextContent("x", ttl=2, cadence=3))
    before = ctx.model_dump_json()
    ctx.seal()
    assert ctx.model_dump_json() == before


def test_hold_keeps_the_state_as_it_is_without_a_snapshot(ctx: Context) -> None:
    ctx.add_user("a")
    ctx.pact_insert("d0, 1, 0", TextContent("x", ttl=2, cadence=3))
    before = ctx.model_dump_json()
    counters = ctx.counters()
    held = ctx.hold()
    assert ctx.model_dump_json() == before and ctx.counters() == counters  # no id taken
    assert len(ctx.history) == 0  # nothing recorded
    ctx.pact_update("d0, 1, 0", TextContent("y"), mode="replace")
    ctx.add_user("b")
    ctx.advance()
    assert without_counters(held.model_dump_json()) == without_counters(before)
    assert [item.content for item, *_ in held.iter_items()] == ["a", "x"]
    with pytest.raises(ReadOnlySelector):
        held.add_user("c")  # type: ignore[attr-defined]


def test_snapshot_reads_like_a_context(ctx: Context) -> None:
    ctx.pact_insert("d-1, 0, 0", TextContent("sys"))
    ctx.add_user("a")
    ctx.pact_insert("d0, 1, 0", TextContent("note", key="n", tags=["t"]))
    sid = ctx.seal()
    ctx.add_user("b")
    ctx.pact_delete(key="n")
    ctx.advance()
    past = ctx.history.at_snapshot(sid)
    assert isinstance(past, SnapshotContext)
    assert past.current_episode == 0
    assert past.history_depth == 0
    assert past["d0, 1, 0"].content == "note"  # type: ignore[union-attr]
    assert past[0, 1].content == "note"  # type: ignore[union-attr]
    assert past.get_by_key("n").coordinates == (0, 1, 0)  # type: ignore[union-attr]
    assert [n.content for n in past.get_by_tags(["t"])] == ["note"]
    assert [n.content for n in past.select("*")] == ["sys", "a", "note"]
    assert past.render_provider() == [
        {"content": "sys", "role": "system"},
        {"content": "a", "role": "user"},
        {"content": "note", "role": "user"},
    ]
    # the working context moved on
    assert ctx.get_by_key("n") is None
    assert [n.content for n in ctx.select("*")] == ["sys", "a", "b"]


@pytest.mark.parametrize(
    "write",
    [
        lambda s: s.pact_insert("d0, 1, 0", TextContent("x")),
        lambda s: s.pact_update("d0, 0, 0", TextContent("x")),
        lambda s: s.pact_delete("d0, 0, 0"),
        lambda s: s.add_user("x"),
        lambda s: s.add_assistant("x"),
        lambda s: s.advance(),
        lambda s: s.seal(),
    ],
    ids=["insert", "update", "delete", "add_user", "add_assistant", "advance", "seal"],
)
def test_snapshot_is_read_only(ctx: Context, write) -> None:  # type: ignore[no-untyped-def]
    ctx.add_user("a")
    sid = ctx.seal()
    past = ctx.history.at_snapshot(sid)
    before = past.model_dump_json()
    with pytest.raises(ReadOnlySelector) as info:
        write(past)
    assert info.value.code == "READ_ONLY"
    assert sid in info.value.message
    assert past.model_dump_json() == before


def test_unknown_snapshot_id(ctx: Context) -> None:
    ctx.seal()
    error = raises_unchanged(
        ctx, UnknownSnapshot, "UNKNOWN_SNAPSHOT", lambda: ctx.history.at_snapshot("zz9"), "zz9"
    )
    assert error.details["snapshot"] == "zz9"


# ------------------------------------------------------------------------------------------
# time-qualified selectors
# ------------------------------------------------------------------------------------------
@pytest.fixture
def timeline() -> tuple[Context, dict[str, str]]:
    """Episode 0: "v0" at d0,1,0, sealed as "start"; episode 1 (auto snapshot): "v1";
    two seals during episode 1 ("mid" with "v1b"); episode 2 (auto snapshot): "v2"."""
    ctx = new_context()
    ctx.add_user("m")
    ctx.pact_insert("d0, 1, 0", TextContent("v0", key="v"))
    ids = {"start": ctx.seal("start")}
    ctx.advance()
    ids["e1"] = ctx.history.latest.id  # type: ignore[union-attr]
    ctx.pact_update("d0, 1, 0", TextContent("v1", key="v"))
    ids["mid"] = ctx.seal("mid")
    ctx.pact_update("d0, 1, 0", TextContent("v1b", key="v"))
    ids["late"] = ctx.seal("late")
    ctx.advance()
    ids["e2"] = ctx.history.latest.id  # type: ignore[union-attr]
    ctx.pact_update("d0, 1, 0", TextContent("v2", key="v"))
    return ctx, ids


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("", "v2"),
        ("@t0 ", "v2"),
        ("@t-1 ", "v1b"),  # the newest snapshot (episode 2's) was taken before the last update
        ("@t-2 ", "v1b"),
        ("@t-3 ", "v1"),
        ("@t-4 ", "v0"),  # episode 1's automatic snapshot, before "v1"
        ("@t-5 ", "v0"),
        ("@e1 ", "v0"),
        ("@e2 ", "v1b"),
        ("@e0 ", "v0"),  # no automatic snapshot of episode 0: the first seal taken during it
    ],
)
def test_time_prefixes(
    timeline: tuple[Context, dict[str, str]], prefix: str, expected: str
) -> None:
    ctx, _ = timeline
    before = ctx.model_dump_json()
    assert [n.content for n in ctx.select(f"{prefix}#v")] == [expected]
    assert ctx[f"{prefix}d0, 1, 0"].content == expected  # type: ignore[union-attr]
    assert ctx.model_dump_json() == before


def test_snap_prefix(timeline: tuple[Context, dict[str, str]]) -> None:
    ctx, ids = timeline
    got = {name: ctx[f"@snap:{sid} d0, 1, 0"].content for name, sid in ids.items()}  # type: ignore[union-attr]
    assert got == {"start": "v0", "e1": "v0", "mid": "v1", "late": "v1b", "e2": "v1b"}


def test_snapshot_nodes_report_the_snapshot_episode(
    timeline: tuple[Context, dict[str, str]],
) -> None:
    ctx, ids = timeline
    (node,) = ctx.select(f"@snap:{ids['start']} #v")
    assert node.age == 0 and node.born_episode == 0
    # "v1b" replaced "v1" during episode 1 (a replacement is born when it is made)
    (then,) = ctx.select(f"@snap:{ids['e2']} #v")
    assert (then.content, then.born_episode, then.age) == ("v1b", 1, 1)
    (now,) = ctx.select("#v")
    assert (now.content, now.born_episode, now.age) == ("v2", 2, 0)


@pytest.mark.parametrize(
    ("selector", "token"),
    [("@t-9 #v", "@t-9"), ("@e7 #v", "episode 7"), ("@snap:nope #v", "'nope'")],
)
def test_unknown_time_is_a_typed_error(
    timeline: tuple[Context, dict[str, str]], selector: str, token: str
) -> None:
    ctx, _ = timeline
    error = raises_unchanged(ctx, UnknownSnapshot, "UNKNOWN_SNAPSHOT", lambda: ctx.select(selector))
    assert token in error.message


# ------------------------------------------------------------------------------------------
# diff
# ------------------------------------------------------------------------------------------
def test_diff_added_removed_changed(ctx: Context) -> None:
    ctx.add_user("a")
    keep = ctx.pact_insert("d0, 1, 0", TextContent("keep"))
    gone = ctx.pact_insert("d0, 2, 0", TextContent("gone", ttl=1))
    edit = ctx.pact_insert("d0, 3, 0", TextContent("edit me"))
    sid = ctx.seal()
    ctx.pact_insert("d0, 1, 0", TextContent("pushes keep"))
    new_sys = ctx.pact_insert("d-1, 0, 0", TextContent("sys"))
    ctx.pact_update("d0, 3, 0", TextContent("edited", key="k", tags=["t"]))
    ctx.advance()  # gone expires
    b = ctx.add_user("b")
    pushed = ctx["d1, 1, 0"]
    assert pushed is not None
    diff = ctx.diff(sid)
    assert diff.to_dict() == {  # the spec's JSON form
        "added": [new_sys.id, pushed.id, b.id],
        "removed": [gone.id],
        "changed": [
            {"id": ctx["d1, 0, 0"].id, "fields": [], "depth_changed": [0, 1]},  # type: ignore[union-attr]
            {"id": keep.id, "fields": [], "offset_changed": [0, 1], "depth_changed": [0, 1]},
            {"id": edit.id, "fields": ["content", "key", "tags"], "depth_changed": [0, 1]},
        ],
    }
    # typed: each move is (before, after), or None where that coordinate stayed
    change = diff.change_of(keep.id)
    assert change == ItemChange(keep.id, (), depth=(0, 1), offset=(0, 1))
    assert change.moves() == {"depth": (0, 1), "offset": (0, 1)}
    assert diff.change_of(b.id) is None
    assert diff.counts == (3, 1, 3)
    # None means the working state on either side; the reverse diff swaps added and removed
    assert ctx.diff(sid, None) == diff
    reverse = ctx.diff(None, sid)
    assert reverse.added == (gone.id,)
    assert sorted(reverse.removed) == sorted(diff.added)
    assert ctx.diff(sid, sid) == Diff()
    assert ctx.diff(None, None).to_dict() == {"added": [], "removed": [], "changed": []}


def test_diff_between_two_snapshots_and_position_change(ctx: Context) -> None:
    ctx.add_user("m")
    mover = ctx.pact_insert(
        "d0, 1, 0",
        TextContent("mover").render_lifecycle([Pos("d0, 1, 0", ttl=1), Pos("d0, 2, 0")]),
    )
    first = ctx.seal()
    ctx.advance()
    second = ctx.history.latest.id  # type: ignore[union-attr]
    assert ctx.diff(first, second).to_dict() == {
        "added": [],
        "removed": [],
        "changed": [
            {
                "id": mover.id,
                "fields": ["ttl", "born_episode", "stage"],
                "position_changed": [1, 2],
            }
        ],
    }


def test_replace_shows_as_a_change_with_the_same_id(ctx: Context) -> None:
    node = ctx.pact_insert("d0, 1, 0", TextContent("old"))
    sid = ctx.seal()
    ctx.pact_update("d0, 1, 0", TextContent("new"))
    assert ctx.diff(sid) == Diff(changed=(ItemChange(node.id, ("content",)),))


def test_sticky_renewal_is_removed_plus_added(ctx: Context) -> None:
    first = ctx.pact_insert("d0, 1, 0", TextContent("s", ttl=1, cadence=1))
    sid = ctx.seal()
    ctx.advance()
    renewed = ctx["d0, 1, 0"]
    assert renewed is not None
    assert ctx.diff(sid) == Diff(added=(renewed.id,), removed=(first.id,))


def test_unknown_snapshot_in_diff(ctx: Context) -> None:
    raises_unchanged(ctx, UnknownSnapshot, "UNKNOWN_SNAPSHOT", lambda: ctx.diff("nope"), "nope")


# ------------------------------------------------------------------------------------------
# immutability (copy-on-write)
# ------------------------------------------------------------------------------------------
def test_snapshot_state_equals_the_state_when_taken_and_never_changes(ctx: Context) -> None:
    taken: list[tuple[str, str]] = []

    def seal() -> None:
        sid = ctx.seal()
        taken.append((sid, ctx.model_dump_json()))

    ctx.pact_insert("d-1, 0, 0", TextContent("sys"))
    ctx.add_user("a")
    ctx.pact_insert("d0, 1, 0", TextContent("p"))
    ctx.pact_insert("d0, 1, 1", TextContent("t", ttl=2))
    ctx.pact_insert("d0, 2, 0", TextContent("s", ttl=1, cadence=1))
    seal()
    ctx.pact_insert("d0, 1, 0", TextContent("pushes"))  # same slot, in place
    seal()
    ctx.add_user("b")  # ODI re-seats the temporary item
    seal()
    ctx.pact_update("d1, 1, 0", TextContent("replaced"))
    ctx.pact_delete("d-1, 0, 0")
    seal()
    ctx.advance()  # expiry and rehydration
    ctx.advance()
    seal()
    ctx.pact_delete("d1, 0, 0")
    ctx.pact_delete("d1, 1, 0")
    ctx.pact_update("d1, 1", TextContent("appended"), mode="append")
    ctx.add_assistant("c")
    for sid, dumped in taken:
        past = ctx.history.at_snapshot(sid)
        assert without_counters(past.model_dump_json()) == without_counters(dumped)
    # the automatic episode snapshots too
    episode_snaps = [s for s in ctx.history if s.trigger == "episode"]
    assert [s.episode for s in episode_snaps] == [1, 2]
    assert [n.content for n in ctx.select("@e1 *")] != [n.content for n in ctx.select("*")]
