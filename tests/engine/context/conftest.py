"""Shared helpers for the context engine tests.

Every context here is built with ``SequentialIds`` and ``SteppingClock`` so ids and timestamps
are deterministic and two runs of the same operations give byte-identical exports.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from engine.context import (
    Context,
    ContextError,
    SequentialIds,
    SteppingClock,
)


def new_context() -> Context:
    return Context(ids=SequentialIds(), clock=SteppingClock())


@pytest.fixture
def ctx() -> Context:
    return new_context()


class CountingIds:
    """``SequentialIds`` that remembers how many ids it handed out (to continue after a load)."""

    def __init__(self) -> None:
        self.inner = SequentialIds()
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        return self.inner()


class CountingClock:
    """``SteppingClock`` that remembers how many readings it gave."""

    def __init__(self) -> None:
        self.inner = SteppingClock()
        self.reads = 0

    def now_ns(self) -> int:
        self.reads += 1
        return self.inner.now_ns()


def load_continuing(dumped: dict[str, Any], ids: CountingIds, clock: CountingClock) -> Context:
    """Load ``dumped`` so the copy hands out exactly the ids and times that the context built
    with ``ids`` and ``clock`` hands out next. ``Context.load`` builds (and discards) a fresh
    root and turns before restoring: a probe load measures how many ids and readings that
    takes, and the continuation starts that much earlier."""
    probe_ids, probe_clock = CountingIds(), CountingClock()
    Context.load(dumped, ids=probe_ids, clock=probe_clock)
    return Context.load(
        dumped,
        ids=SequentialIds(start=ids.calls + 1 - probe_ids.calls),
        clock=SteppingClock(start=clock.reads - probe_clock.reads),
    )


def coords(context: Any, item_id: str) -> tuple[int, ...] | None:
    """Where the item with this id sits now, or ``None`` when it is gone."""
    node = context.find(item_id)
    return None if node is None else node.coordinates


def contents(context: Any, selector: str) -> list[Any]:
    return [n.content for n in context.select(selector)]


def layout(context: Any) -> list[tuple[tuple[int, ...], Any]]:
    """Every item as ``(coordinates, content)`` in canonical order."""
    return [(n.coordinates, n.content) for n in context.select("*")]


def slot_layout(context: Any, depth: int, position: int) -> dict[int, Any]:
    """``{offset: content}`` of one slot."""
    return {n.offset: n.content for n in context.select(f"d{depth}, {position}, *")}


@contextmanager
def unchanged(context: Context) -> Iterator[None]:
    """Assert that the block leaves the exported state byte-identical."""
    before = context.model_dump_json()
    snapshots = len(context.history)
    episode = context.current_episode
    yield
    assert context.model_dump_json() == before
    assert len(context.history) == snapshots
    assert context.current_episode == episode


def raises_unchanged(
    context: Context, error: type[ContextError], code: str, call: Any, *names: str
) -> ContextError:
    """Run ``call``; it must raise ``error`` with ``code``, name every string in ``names`` in
    its message, and leave the state byte-identical."""
    before = context.model_dump_json()
    snapshots = len(context.history)
    with pytest.raises(error) as info:
        call()
    assert info.value.code == code
    for name in names:
        assert name in info.value.message, (name, info.value.message)
        assert name in str(info.value)
    assert context.model_dump_json() == before
    assert len(context.history) == snapshots
    return info.value


def check_structure(context: Any) -> None:
    """The shape rules of spec §1-2 that must hold after any operation, checked on the export
    and through the public read side:

    - no history turn is empty (the system and the active turn always exist);
    - every slot is non-empty, its offsets are dense and include the core 0;
    - every exported item's coordinates agree with where it is exported and with indexing;
    - never two live instances of one template; every instance's template exists and a
      template's ``live_id`` names its live instance.
    """
    dump = context.model_dump()
    turns = [dump["system"], *dump["turns"]]
    assert [t["depth"] for t in turns] == [-1, *range(len(turns) - 2, -1, -1)]
    items_by_template: dict[str, list[str]] = defaultdict(list)
    all_items: dict[str, dict[str, Any]] = {}
    for turn in turns:
        assert turn["slots"] or turn["depth"] <= 0, f"empty history turn at d{turn['depth']}"
        positions = [s["position"] for s in turn["slots"]]
        assert positions == sorted(set(positions))
        for slot in turn["slots"]:
            offsets = [i["offset"] for i in slot["items"]]
            assert offsets, f"empty slot {slot['id']} at ({turn['depth']}, {slot['position']})"
            assert 0 in offsets, f"slot ({turn['depth']}, {slot['position']}) has no core"
            assert offsets == list(range(offsets[0], offsets[0] + len(offsets))), offsets
            for item in slot["items"]:
                where = [turn["depth"], slot["position"], item["offset"]]
                assert item["coordinates"] == where
                assert item["parent_id"] == slot["id"]
                assert item["id"] not in all_items
                all_items[item["id"]] = item
                if "template_id" in item:
                    items_by_template[item["template_id"]].append(item["id"])
                node = context[tuple(where)]
                assert node is not None and node.id == item["id"]
    for template_id, ids in items_by_template.items():
        assert len(ids) == 1, f"template {template_id} has live instances {ids}"
    templates = {t["id"]: t for t in dump["templates"]}
    for template_id in items_by_template:
        assert template_id in templates, f"instance of a dropped template {template_id}"
    for template in templates.values():
        live = template["live_id"]
        if live is not None:
            assert live in all_items, f"template {template['id']} names a missing {live}"
            assert all_items[live].get("template_id") == template["id"]
    selected = [n.id for n in context.select("*")]
    exported = [i["id"] for turn in turns for s in turn["slots"] for i in s["items"]]
    assert selected == exported


def empty_history_depths(context: Any) -> list[int]:
    """History depths (>= 1) whose turn holds no item at all."""
    dump = context.model_dump()
    return [t["depth"] for t in dump["turns"] if t["depth"] >= 1 and not t["slots"]]


def check_changelog(before: Any, after: Any, log: Any) -> None:
    """Issue 27, exact 2: a changelog is exact about where things were. ``before`` and
    ``after`` are the states just before and just after the operation (``Context.load`` copies,
    or views), ``log`` its ``Changelog``.

    - every entry's ``before`` is where that item (a ``rehydrated`` entry: the instance it
      replaced; a ``turn_removed``: that turn) was in ``before``, and its ``after`` where the
      item is in ``after`` (``None``: not there);
    - nothing is listed twice (entries and the items shifts list, by id), and a ``moved`` item
      did move;
    - the ids agree with the engine's diff: what it added is what was inserted or rehydrated,
      what it removed is what was deleted, expired, ended its stages or was replaced by a fresh
      instance; every item whose depth changed is an entry, or a shift counted it (and listed it
      when the shift lists), moved by that shift's ``by`` from a depth in its range.
    """
    from engine.context.history import diff_views

    diff = diff_views(before, after)
    depth_before = {turn.id: depth for depth, turn in before.iter_turns()}
    depth_after = {turn.id: depth for depth, turn in after.iter_turns()}
    listed = [entry.id for entry in log.entries]
    listed += [entry.id for shift in log.shifts for entry in shift.listed]
    assert len(listed) == len(set(listed)), f"listed twice: {listed}"
    for entry in log.entries:
        if entry.kind == "turn_removed":
            assert entry.before == (depth_before[entry.id],), entry
            assert entry.after is None and entry.id not in depth_after, entry
            continue
        if entry.kind == "rehydrated":
            was = coords(before, entry.replaced) if entry.replaced is not None else None
            assert entry.before == was, entry
            assert coords(before, entry.id) is None, entry
        elif entry.kind == "inserted":
            assert entry.before is None and coords(before, entry.id) is None, entry
        else:
            assert entry.before == coords(before, entry.id), entry
        assert entry.after == coords(after, entry.id), entry
        if entry.kind == "moved":
            assert entry.before != entry.after, entry
    added = set(log.ids("inserted", "rehydrated"))
    removed = {e.id for e in log.of_kind("deleted", "expired") if e.before is not None}
    removed |= {e.id for e in log.of_kind("stage") if e.ended}
    removed |= {e.replaced for e in log.of_kind("rehydrated") if e.replaced is not None}
    assert set(diff.added) == added
    assert set(diff.removed) == removed
    entry_ids = {entry.id for entry in log.entries}
    deeper = {c.id: c.depth for c in diff.changed if c.depth is not None}
    unaccounted = {item_id for item_id in deeper if item_id not in entry_ids}
    for shift in log.shifts:
        low, high = shift.depths
        moved = {
            item_id
            for item_id in unaccounted
            if (move := deeper[item_id]) is not None
            and move[1] - move[0] == shift.by
            and low <= move[0] <= high
        }
        assert shift.items == len(moved), (shift, moved)
        for entry in shift.listed:
            assert entry.kind == "moved", entry
            assert entry.before == coords(before, entry.id), entry
            assert entry.after == coords(after, entry.id), entry
        if shift.items <= 20:
            assert {entry.id for entry in shift.listed} == moved, shift
        unaccounted -= moved
    assert not unaccounted, f"moved with no entry and in no shift: {sorted(unaccounted)}"
