"""Property tests: random operation sequences against the invariants of spec §1-§8.

A hypothesis state machine drives one context with random inserts (every lifecycle type,
render lifecycles included), messages, advances, seals, replaces, appends and deletes, plus
operations that must fail. After every step it checks:

- offsets are dense in every slot and every non-empty slot has a core (``check_structure``);
- never two live instances of one template;
- every live item with a ttl satisfies ``age < ttl``;
- ``model_dump -> load -> model_dump`` is byte-identical;
- the provider rendering is the items' contents in canonical order;

after each operation, what that operation promises:

- ODI (a message that starts a turn): every permanent/sticky item goes one deeper keeping its
  position; its offset is unchanged unless its source slot held a temporary/cyclic item or its
  destination slot receives one; temporary/cyclic items keep depth and position (and their offset
  when their slot held only such items and no follower arrives); the system never moves; a
  message that fills the active turn moves nothing;
- placement: an insert/append lands where the Core Offset Layout Rule says and shifts exactly
  the items it should; a delete closes the gap by the same rule; a replace moves nothing;
- whenever turns come or go (messages, deletes, expiry), permanent/sticky items stay with their
  message and temporary/cyclic items keep their depth (clamped to the history) and position;
- an advance rehydrates every due schedule where it belongs (a sticky or permanent schedule with
  its message, a cyclic one at its depth) and records an ``episode`` snapshot equal to the state;
- a failing operation raises the expected typed error and changes nothing;
- its changelog is exact (``check_changelog``): every entry's ``before`` is where the item was
  before the operation and its ``after`` where it is after, nothing is listed twice, and the
  ids and depth moves agree with the engine's diff;

and at the end:

- replaying the recorded operations on a fresh context with fresh ``SequentialIds`` and
  ``SteppingClock`` gives byte-identical exports and snapshot summaries, and so does replaying
  only the operations that succeeded (a failed call spends no id or clock reading);
- every snapshot still exports exactly what it exported when it was taken (copy-on-write);
- a context loaded mid-way and driven by the remaining operations ends byte-identical.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
)

from engine.context import (
    Context,
    ContextError,
    InvalidCoordinate,
    InvalidLifecycle,
    InvalidSelector,
    InvalidUpdateMode,
    NoSuchDepth,
    NotFound,
    Pos,
    ReadOnlySelector,
    TextContent,
    UnknownKey,
)

from .conftest import (
    CountingClock,
    CountingIds,
    check_changelog,
    check_structure,
    load_continuing,
    new_context,
)

# ------------------------------------------------------------------------------------------
# operations: plain tuples, so a run can be replayed on a fresh context
# ------------------------------------------------------------------------------------------
# spec = (content, key, tags, ttl, cad, lifecycle); lifecycle = None | (((sel, ttl), ...), cycle)
Spec = tuple[str, str | None, tuple[str, ...], int | None, int | None, Any]
Op = tuple[Any, ...]

KEYS = [None, "k1", "k2", "k3"]
TAGS = ["t1", "t2"]


def build(spec: Spec) -> TextContent:
    content, key, tags, ttl, cad, lifecycle = spec
    component = TextContent(content, key=key, tags=list(tags), ttl=ttl, cadence=cad)
    if lifecycle is not None:
        stages, cycle = lifecycle
        component.render_lifecycle([Pos(sel, ttl=t) for sel, t in stages], cycle)
    return component


def apply(ctx: Context, op: Op) -> Any:
    kind = op[0]
    if kind == "insert":
        return ctx.pact_insert(op[1], build(op[2]))
    if kind == "add":
        return ctx.add_user(op[2]) if op[1] == "user" else ctx.add_assistant(op[2])
    if kind == "advance":
        return ctx.advance()
    if kind == "seal":
        return ctx.seal(op[1])
    if kind == "update":
        return ctx.pact_update(op[1], build(op[2]), mode=op[3])
    if kind == "delete":
        return ctx.pact_delete(op[1])
    if kind == "delete_key":
        return ctx.pact_delete(key=op[1])
    raise AssertionError(op)


def replay(ops: list[tuple[Op, bool]], *, skip_failed: bool) -> Context:
    ctx = new_context()
    for op, ok in ops:
        if ok:
            apply(ctx, op)
        elif not skip_failed:
            try:
                apply(ctx, op)
            except ContextError:
                pass
            else:
                raise AssertionError(f"{op} succeeded on replay")
    return ctx


# ------------------------------------------------------------------------------------------
# strategies
# ------------------------------------------------------------------------------------------
stage = st.tuples(
    st.integers(-1, 1), st.integers(-2, 2), st.integers(-2, 2), st.integers(1, 3)
).map(lambda t: (f"d{t[0]}, {t[1]}, {t[2]}", t[3]))


@st.composite
def render_lifecycles(draw: st.DrawFn) -> Any:
    stages = draw(st.lists(stage, min_size=1, max_size=3))
    if draw(st.booleans()):
        stages[-1] = (stages[-1][0], None)  # an untimed final stage
    cycle = draw(st.sampled_from([False, True, 1, 2]))
    return (tuple(stages), cycle)


lifecycles = st.one_of(
    st.just((None, None, None)),  # permanent
    st.tuples(st.integers(1, 4), st.none(), st.none()),  # temporary
    st.just((1, 1, None)),  # sticky
    st.tuples(st.integers(1, 3), st.integers(2, 5), st.none()),  # cyclic
    st.tuples(st.none(), st.integers(1, 3), st.none()),  # permanent schedule
    st.tuples(st.none(), st.none(), render_lifecycles()),
)

details = st.tuples(
    st.sampled_from(KEYS),
    st.lists(st.sampled_from(TAGS), unique=True, max_size=2).map(tuple),
    lifecycles,
)

FOLLOWERS = ("permanent", "sticky")
FIXED = ("temporary", "cyclic")


def snapshot_nodes(ctx: Context) -> dict[str, tuple[tuple[int, int, int], str]]:
    return {n.id: (n.coordinates, n.lifecycle) for n in ctx.select("*")}  # type: ignore[misc]


def lifecycle_kind(ttl: int | None, cad: int | None) -> str:
    if ttl is None:
        return "permanent"
    if cad is None:
        return "temporary"
    return "sticky" if (ttl, cad) == (1, 1) else "cyclic"


def placements(ctx: Context) -> dict[str, tuple[str, int, int, int, str, Any]]:
    """id -> (turn id, depth, position, offset, lifecycle, render stage) from the export."""
    dump = ctx.model_dump()
    out = {}
    for turn in [dump["system"], *dump["turns"]]:
        for slot in turn["slots"]:
            for item in slot["items"]:
                kind = lifecycle_kind(item["ttl"], item["cad"])
                lifecycle = item.get("render_lifecycle", {})
                # a stage move resets born_episode (a one-stage cycle keeps the stage index)
                stage = (
                    lifecycle.get("stage", -1),
                    lifecycle.get("passes", 0),
                    item["born_episode"],
                )
                out[item["id"]] = (
                    turn["id"],
                    turn["depth"],
                    slot["position"],
                    item["offset"],
                    kind,
                    stage,
                )
    return out


def check_turn_moves(
    before: dict[str, tuple[str, int, int, int, str, Any]],
    after: dict[str, tuple[str, int, int, int, str, Any]],
    deepest: int,
) -> None:
    """After turns were added or removed: permanent/sticky items stay in their turn (their
    message), temporary/cyclic items keep their depth (clamped to the deepest turn) and every
    item keeps its position; the system never moves. Items a render lifecycle moved are skipped.
    """
    for item_id, (turn, depth, position, _offset, kind, stage) in before.items():
        if item_id not in after:
            continue
        new_turn, new_depth, new_position, _new_offset, new_kind, new_stage = after[item_id]
        if new_stage != stage or new_kind != kind:
            continue
        assert new_position == position, (item_id, before[item_id], after[item_id])
        if depth == -1:
            assert (new_turn, new_depth) == (turn, -1), "the system never moves"
        elif kind in FOLLOWERS:
            assert new_turn == turn, (
                "a follower left its message",
                before[item_id],
                after[item_id],
            )
        else:
            assert new_depth == min(depth, deepest), (item_id, before[item_id], after[item_id])


def without_counters(dump_json: str) -> dict[str, Any]:
    data = json.loads(dump_json)
    data.pop("counters")
    return data


def expected_insert_offset(offsets: list[int], asked: int) -> int:
    """Core Offset Layout Rule: an empty slot takes offset 0; else clamp to one past the end."""
    if not offsets:
        return 0
    if asked >= 0:
        return min(asked, max(offsets) + 1)
    return max(asked, min(offsets) - 1)


def shifted_after_insert(offset: int, landed: int) -> int:
    if landed >= 0:
        return offset + 1 if offset >= landed else offset
    return offset - 1 if offset <= landed else offset


def shifted_after_delete(offset: int, removed: int, has_post: bool) -> int:
    if removed > 0 or (removed == 0 and has_post):
        return offset - 1 if offset > removed else offset
    return offset + 1 if offset < removed else offset


class ContextMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.ctx = new_context()
        self.ops: list[tuple[Op, bool]] = []  # (operation, succeeded)
        self.counter = 0
        self.snapshot_dumps: list[tuple[str, str]] = []
        self.placed_before: dict[str, tuple[str, int, int, int, str, Any]] = {}

    # -- helpers ---------------------------------------------------------------------------
    def spec(self, drawn: Any) -> Spec:
        key, tags, (ttl, cad, lifecycle) = drawn
        self.counter += 1
        return (f"c{self.counter}", key, tags, ttl, cad, lifecycle)

    def run(self, op: Op) -> Any:
        before = Context.load(self.ctx.model_dump())
        result = apply(self.ctx, op)
        self.ops.append((op, True))
        assert self.ctx.last_changes is not None
        check_changelog(before, self.ctx, self.ctx.last_changes)
        return result

    def depth(self, pick: int) -> int:
        depths = self.ctx.depths()
        return depths[pick % len(depths)]

    def items(self) -> list[Any]:
        return self.ctx.select("*")

    def slot_offsets(self, depth: int, position: int) -> dict[str, int]:
        return {n.id: n.offset for n in self.ctx.select(f"d{depth}, {position}, *")}

    def remember_snapshot(self) -> None:
        latest = self.ctx.history.latest
        assert latest is not None
        snap = self.ctx.history.at_snapshot(latest.id)
        dumped = snap.model_dump_json()
        assert without_counters(dumped) == without_counters(self.ctx.model_dump_json())
        self.snapshot_dumps.append((latest.id, dumped))

    def check_placement(
        self,
        before: dict[str, tuple[tuple[int, int, int], str]],
        new_id: str,
        depth: int,
        position: int,
        asked: int,
    ) -> None:
        slot_before = {i: c[2] for i, (c, _) in before.items() if (c[0], c[1]) == (depth, position)}
        landed = expected_insert_offset(list(slot_before.values()), asked)
        after = snapshot_nodes(self.ctx)
        assert after[new_id][0] == (depth, position, landed)
        for item_id, (coords, _) in before.items():
            if item_id in slot_before:
                want = (depth, position, shifted_after_insert(coords[2], landed))
            else:
                want = coords
            assert after[item_id][0] == want, (item_id, coords, after[item_id])
        assert set(after) == set(before) | {new_id}

    def check_message(
        self,
        before: dict[str, tuple[tuple[int, int, int], str]],
        depth_before: int,
        new_id: str,
        expect_push: bool,
    ) -> None:
        check_turn_moves(self.placed_before, placements(self.ctx), self.ctx.history_depth)
        after = snapshot_nodes(self.ctx)
        assert after[new_id][0] == (0, 0, 0)
        assert set(after) == set(before) | {new_id}
        if not expect_push:
            assert self.ctx.history_depth == depth_before
            for item_id, (coords, _) in before.items():
                assert after[item_id][0] == coords
            return
        # A history turn that held only temporary/cyclic items is left empty when they move to
        # the newer turn at their depth; it is removed (spec §2) and older turns move back up.
        turn_depths = {turn: depth for turn, depth, *_ in self.placed_before.values()}
        still_there = {turn for turn, *_ in placements(self.ctx).values()}
        emptied = {turn for turn, depth in turn_depths.items() if depth >= 0} - still_there
        for item_id, (turn, *_where, kind, _stage) in self.placed_before.items():
            assert turn not in emptied or kind in FIXED, ("removed with a follower", item_id)
        assert self.ctx.history_depth == depth_before + 1 - len(emptied)
        if emptied:
            deepest = self.ctx.history_depth
            for item_id, ((d, p, o), kind) in before.items():
                new = after[item_id][0]
                if d == -1:
                    assert new == (d, p, o), "the system never moves"
                elif kind in FOLLOWERS:
                    newer_removed = sum(1 for t in emptied if turn_depths[t] < d)
                    assert new[:2] == (d + 1 - newer_removed, p), (item_id, (d, p, o), new)
                else:
                    assert new[:2] == (min(d, deepest), p), (item_id, (d, p, o), new)
            return
        fixed_slots: dict[tuple[int, int], int] = {}
        follower_slots: set[tuple[int, int]] = set()
        slot_sizes: dict[tuple[int, int], int] = {}
        for coords, kind in before.values():
            where = (coords[0], coords[1])
            slot_sizes[where] = slot_sizes.get(where, 0) + 1
            if coords[0] >= 0 and kind in FIXED:
                fixed_slots[where] = fixed_slots.get(where, 0) + 1
            elif coords[0] >= 0:
                follower_slots.add(where)
        for item_id, ((d, p, o), kind) in before.items():
            new = after[item_id][0]
            if d == -1:
                assert new == (d, p, o), "the system never moves"
            elif kind in FOLLOWERS:
                assert new[:2] == (d + 1, p), (item_id, (d, p, o), new)
                if (d, p) not in fixed_slots and (d + 1, p) not in fixed_slots:
                    assert new[2] == o, ("ODI changed an offset", item_id, (d, p, o), new)
            else:
                assert kind in FIXED
                assert new[:2] == (d, p), (item_id, (d, p, o), new)
                only_fixed = fixed_slots[(d, p)] == slot_sizes[(d, p)]
                if only_fixed and (d - 1, p) not in follower_slots:
                    # in the new active turn's slot 0 the message then takes the core and
                    # pushes the post side out by one
                    want = o + 1 if (d, p) == (0, 0) and o >= 0 else o
                    assert new[2] == want, ("a lone temporary item moved", item_id, (d, p, o), new)

    # -- operations that succeed ---------------------------------------------------------
    @rule(
        pick=st.integers(0, 50),
        position=st.integers(-2, 2),
        offset=st.integers(-3, 3),
        drawn=details,
    )
    def insert(self, pick: int, position: int, offset: int, drawn: Any) -> None:
        depth = self.depth(pick)
        before = snapshot_nodes(self.ctx)
        self.placed_before = placements(self.ctx)
        depth_before = self.ctx.history_depth
        message_slot_full = bool(self.ctx.select("d0, 0, *"))
        node = self.run(("insert", f"d{depth}, {position}, {offset}", self.spec(drawn)))
        if (depth, position, offset) == (0, 0, 0):
            self.check_message(before, depth_before, node.id, expect_push=message_slot_full)
        else:
            assert self.ctx.history_depth == depth_before
            self.check_placement(before, node.id, depth, position, offset)

    @rule(pick=st.integers(0, 50), position=st.integers(-2, 2), drawn=details)
    def append(self, pick: int, position: int, drawn: Any) -> None:
        depth = self.depth(pick)
        before = snapshot_nodes(self.ctx)
        offsets = list(self.slot_offsets(depth, position).values())
        node = self.run(("update", f"d{depth}, {position}", self.spec(drawn), "append"))
        asked = max(offsets) + 1 if offsets else 0
        self.check_placement(before, node.id, depth, position, asked)

    @rule(assistant=st.booleans())
    def add_message(self, assistant: bool) -> None:
        before = snapshot_nodes(self.ctx)
        self.placed_before = placements(self.ctx)
        depth_before = self.ctx.history_depth
        expect_push = bool(self.ctx.select("d0, 0, *")) or any(
            coords[0] == 0 and kind in FOLLOWERS for coords, kind in before.values()
        )
        self.counter += 1
        role = "assistant" if assistant else "user"
        node = self.run(("add", role, f"m{self.counter}"))
        assert (node.role, node.content) == (role, f"m{self.counter}")
        self.check_message(before, depth_before, node.id, expect_push)

    @rule()
    def advance(self) -> None:
        episode = self.ctx.current_episode + 1
        depth_before = self.ctx.history_depth
        instances_before = {
            n.template_id: (n.id, n.coordinates) for n in self.ctx.select("[template_id!=null]")
        }
        placed_before = placements(self.ctx)
        assert self.run(("advance",)) == episode
        check_turn_moves(placed_before, placements(self.ctx), self.ctx.history_depth)
        assert self.ctx.current_episode == episode
        latest = self.ctx.history.latest
        assert latest is not None and (latest.trigger, latest.episode) == ("episode", episode)
        self.remember_snapshot()
        dump = self.ctx.model_dump()
        live = {
            i["template_id"]: i
            for t in [dump["system"], *dump["turns"]]
            for s in t["slots"]
            for i in s["items"]
            if "template_id" in i
        }
        for template in dump["templates"]:
            due = episode > template["born"] and (episode - template["born"]) % template["cad"] == 0
            if due:
                assert template["id"] in live, f"schedule {template['id']} did not rehydrate"
                fresh = live[template["id"]]
                assert fresh["born_episode"] == episode
                assert template["live_id"] == fresh["id"]
                previous = instances_before.get(template["id"])
                if self.ctx.history_depth != depth_before:
                    continue
                if template["anchor_depth"] is not None:
                    # cyclic: at the schedule's depth (clamped to the history) and position
                    depth = min(template["anchor_depth"], self.ctx.history_depth)
                    assert fresh["coordinates"][:2] == [depth, template["position"]], template
                elif previous is not None:
                    # sticky and permanent schedules: with the message the last instance was on
                    assert fresh["coordinates"][:2] == list(previous[1][:2]), (template, previous)

    @rule(trigger=st.sampled_from(["checkpoint", "tool", "x"]))
    def seal(self, trigger: str) -> None:
        before = self.ctx.model_dump_json()
        sid = self.run(("seal", trigger))
        assert self.ctx.model_dump_json() == before
        latest = self.ctx.history.latest
        assert latest is not None and (latest.id, latest.trigger) == (sid, trigger)
        self.remember_snapshot()

    @precondition(lambda self: self.ctx.item_count() > 0)
    @rule(pick=st.integers(0, 200), drawn=details)
    def replace(self, pick: int, drawn: Any) -> None:
        nodes = self.items()
        target = nodes[pick % len(nodes)]
        before = snapshot_nodes(self.ctx)
        d, p, o = target.coordinates
        spec = self.spec(drawn)
        node = self.run(("update", f"d{d}, {p}, {o}", spec, "replace"))
        assert node.id == target.id
        assert node.content == spec[0]
        after = snapshot_nodes(self.ctx)
        assert {i: c for i, (c, _) in after.items()} == {i: c for i, (c, _) in before.items()}

    @precondition(lambda self: self.ctx.item_count() > 0)
    @rule(pick=st.integers(0, 200))
    def delete_at(self, pick: int) -> None:
        nodes = self.items()
        target = nodes[pick % len(nodes)]
        d, p, o = target.coordinates
        before = snapshot_nodes(self.ctx)
        depth_before = self.ctx.history_depth
        slot = {i: c[2] for i, (c, _) in before.items() if (c[0], c[1]) == (d, p)}
        has_post = any(off > 0 for off in slot.values())
        placed_before = placements(self.ctx)
        assert self.run(("delete", f"d{d}, {p}, {o}")) == [target.id]
        after = snapshot_nodes(self.ctx)
        assert target.id not in after
        assert set(after) == set(before) - {target.id}
        check_turn_moves(placed_before, placements(self.ctx), self.ctx.history_depth)
        if self.ctx.history_depth != depth_before:
            return  # a history turn went away: older turns moved up (checked just above)
        for item_id, (coords, _) in before.items():
            if item_id == target.id:
                continue
            if item_id in slot:
                want = (d, p, shifted_after_delete(coords[2], o, has_post))
            else:
                want = coords
            assert after[item_id][0] == want, (item_id, coords, after[item_id])

    @rule(key=st.sampled_from(["k1", "k2", "k3", "never"]))
    def delete_key(self, key: str) -> None:
        holders = [n.id for n in self.ctx.select(f"#{key}")]
        schedules = [
            t["id"] for t in self.ctx.model_dump()["templates"] if t["prototype"]["key"] == key
        ]
        if not holders and not schedules:
            self.fail_with(("delete_key", key), UnknownKey, "UNKNOWN_KEY")
            return
        placed_before = placements(self.ctx)
        assert self.run(("delete_key", key)) == holders
        check_turn_moves(placed_before, placements(self.ctx), self.ctx.history_depth)
        assert self.ctx.select(f"#{key}") == []
        assert [t for t in self.ctx.model_dump()["templates"] if t["prototype"]["key"] == key] == []

    @rule(tag=st.sampled_from(TAGS))
    def delete_query(self, tag: str) -> None:
        holders = [n.id for n in self.ctx.select(f"+{tag}")]
        if not holders:  # deleting nothing is refused, changing nothing
            self.fail_with(("delete", f"+{tag}"), NotFound, "NOT_FOUND")
            return
        placed_before = placements(self.ctx)
        assert self.run(("delete", f"+{tag}")) == holders
        check_turn_moves(placed_before, placements(self.ctx), self.ctx.history_depth)
        assert self.ctx.select(f"+{tag}") == []

    # -- operations that must fail ---------------------------------------------------------
    def fail_with(self, op: Op, error: type[ContextError], code: str) -> None:
        before = self.ctx.model_dump_json()
        snapshots = len(self.ctx.history)
        try:
            apply(self.ctx, op)
        except error as raised:
            assert raised.code == code, (op, raised)
        except ContextError as raised:
            raise AssertionError(f"{op} raised {raised!r}, expected {error.__name__}") from None
        else:
            raise AssertionError(f"{op} did not raise {error.__name__}")
        assert self.ctx.model_dump_json() == before, f"{op} changed the state"
        assert len(self.ctx.history) == snapshots
        self.ops.append((op, False))

    @rule(
        case=st.integers(0, 13),
        pick=st.integers(0, 200),
        extra=st.integers(1, 3),
        drawn=details,
    )
    def bad_operation(self, case: int, pick: int, extra: int, drawn: Any) -> None:
        spec = self.spec(drawn)
        content, key, tags, _ttl, _cad, _lc = spec
        deepest = self.ctx.history_depth
        nodes = self.items()
        there = nodes[pick % len(nodes)].coordinates if nodes else (0, 0, 0)
        where = "d{}, {}, {}".format(*there)
        plain = (content, key, tags, None, None, None)
        cases: list[tuple[Op, type[ContextError], str]] = [
            (("insert", "d0, 1, ", spec), InvalidSelector, "INVALID_SELECTOR"),
            (("insert", f"d{deepest + extra}, 1, 0", spec), NoSuchDepth, "NO_SUCH_DEPTH"),
            (("insert", f"d-{extra + 1}, 0, 0", spec), InvalidCoordinate, "INVALID_COORDINATE"),
            (
                ("insert", where, (content, key, tags, -extra, None, None)),
                InvalidLifecycle,
                "INVALID_LIFECYCLE",
            ),
            (
                ("insert", where, (content, key, tags, extra, 0, None)),
                InvalidLifecycle,
                "INVALID_LIFECYCLE",
            ),
            (("insert", f"@t-{extra} {where}", spec), ReadOnlySelector, "READ_ONLY"),
            (("update", f"@t-{extra} {where}", spec, "replace"), ReadOnlySelector, "READ_ONLY"),
            (("delete", f"@t-{extra} {where}"), ReadOnlySelector, "READ_ONLY"),
            (("delete_key", "never"), UnknownKey, "UNKNOWN_KEY"),
            (
                ("update", f"d{min(pick % (deepest + 2), deepest + 1) - 1}, 9, 0", spec, "replace"),
                NotFound,
                "NOT_FOUND",
            ),
            (("delete", f"d{deepest}, 9, {extra}"), NotFound, "NOT_FOUND"),
            (("update", where, spec, "append"), InvalidCoordinate, "INVALID_COORDINATE"),
            (("update", where, spec, "merge"), InvalidUpdateMode, "INVALID_UPDATE_MODE"),
            (
                (
                    "insert",
                    "d0, 1, 0",
                    (*plain[:5], ((("d0, 1, 0", None), ("d0, 2, 0", 1)), False)),
                ),
                InvalidLifecycle,
                "INVALID_LIFECYCLE",
            ),
        ]
        op, error, code = cases[case]
        self.fail_with(op, error, code)

    @rule(
        selector=st.sampled_from(
            ["*", "@t-1 *", "@t-2 d0, *, *", "^seq +t1", "[temporary]", "@e1 #k1", ".slot"]
        )
    )
    def read(self, selector: str) -> None:
        before = self.ctx.model_dump_json()
        try:
            self.ctx.select(selector)
        except ContextError as error:
            assert error.code == "UNKNOWN_SNAPSHOT"  # @t-N / @eN that does not exist yet
        if self.ctx.history.latest is not None:
            self.ctx.diff(self.ctx.history.latest.id)
        self.ctx.render_provider_json()
        assert self.ctx.model_dump_json() == before

    # -- invariants ------------------------------------------------------------------------
    @invariant()
    def structure(self) -> None:
        check_structure(self.ctx)

    @invariant()
    def ttl_liveness(self) -> None:
        episode = self.ctx.current_episode
        for node in self.ctx.select("[ttl!=null]"):
            assert node.born_episode <= episode
            assert node.age < node.ttl, (node, node.born_episode, node.ttl, episode)

    @invariant()
    def export_round_trip(self) -> None:
        dumped = self.ctx.model_dump_json()
        assert Context.load(json.loads(dumped)).model_dump_json() == dumped

    @invariant()
    def provider_rendering(self) -> None:
        assert [e["content"] for e in self.ctx.render_provider()] == [
            n.content for n in self.ctx.select("*")
        ]

    # -- at the end ----------------------------------------------------------------------
    def teardown(self) -> None:
        final = self.ctx.model_dump_json()
        summaries = [s.summary() for s in self.ctx.history]
        again = replay(self.ops, skip_failed=False)
        assert again.model_dump_json() == final
        assert [s.summary() for s in again.history] == summaries
        clean = replay(self.ops, skip_failed=True)
        assert clean.model_dump_json() == final, "a failed operation spent an id or a reading"
        for sid, dumped in self.snapshot_dumps:
            assert self.ctx.history.at_snapshot(sid).model_dump_json() == dumped, sid
        self.check_load_midway(final)

    def check_load_midway(self, final: str) -> None:
        done = [op for op, ok in self.ops if ok]
        half = len(done) // 2
        ids, clock = CountingIds(), CountingClock()
        first = Context(ids=ids, clock=clock)
        for op in done[:half]:
            apply(first, op)
        loaded = load_continuing(first.model_dump(), ids, clock)
        for op in done[half:]:
            apply(loaded, op)
        assert loaded.model_dump_json() == final


ContextMachine.TestCase.settings = settings(
    # PACT_PROPERTY_EXAMPLES=2000 for a longer hunt; the default keeps the suite fast
    max_examples=int(os.environ.get("PACT_PROPERTY_EXAMPLES", "300")),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestContextMachine = pytest.mark.slow(ContextMachine.TestCase)
