"""The diff of two views of one context, turn by turn: what ``Context.diff``,
``Workspace.diff``, ``pact-tui ctx diff`` and the inspector's diff answer.

``engine.context.history.diff_views`` compares every item of both states (it is kept as the
oracle the property tests compare this diff with). At 100,000 items,
with every turn pushed one deeper by ODI, that is 100,000 ``ItemChange`` objects and the best
part of a second at every step. Turns are copy-on-write: a turn the newer state shares with the
older one (the same object) holds the same items in the same places, and only its depth can
differ. So this diff looks inside only the turns that were written between the two states, and
says of the others how far they moved (``runs``). It answers what ``diff_views`` answers
(``to_diff`` lists it all, for the tests and anything that wants every change), row by row.

Two states that share nothing (a snapshot rebuilt from an archive against the live context)
have every turn "written": ``TreeDiff.written_items`` says how much comparing them costs, so the
screen can do it in a thread instead.

An item that only moved with its turn is ``moved`` rather than ``changed`` (``mark_of``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress, count, islice
from operator import attrgetter, is_not
from typing import Literal, NamedTuple

from .history import DIFFED_FIELDS
from .nodes import Item, Slot, Turn
from .tree import SYSTEM_SEQ, Diff, ItemChange
from .view import ContextView

Move = tuple[int, int]  # (before, after)
ChangeMark = Literal["added", "removed", "changed", "moved"]
Located = tuple[Item, int, int, int]  # (item, depth, position, offset)
Locations = dict[str, Located]


class Placed(NamedTuple):
    """An item where one of the two states has it (a tuple: made for every item of a written
    turn, and a frozen dataclass takes three times as long to make)."""

    item: Item
    depth: int
    slot: Slot
    slot_index: int  # in the slot's items
    turn_seq: int

    @property
    def offset(self) -> int:
        return self.slot_index - self.slot.core

    @property
    def located(self) -> Located:
        return self.item, self.depth, self.slot.position, self.offset


class ItemDelta(NamedTuple):
    """An item both states have, changed: how (the engine's ``ItemChange``), and both
    records, to say what the values were."""

    change: ItemChange
    before: Item
    after: Item
    was: Placed
    now: Placed


def turn_by_seq(view: ContextView, seq: int) -> Turn | None:
    """The view's turn ``seq`` (-1: the system region), if it has it (turns are kept in
    ascending seq order)."""
    if seq == SYSTEM_SEQ:
        return view.turn_at(-1)
    turns = view.turns_oldest_first()
    index = bisect_left(turns, seq, key=_seq)
    return turns[index] if index < len(turns) and turns[index].seq == seq else None


def _placed(depth: int, turn: Turn) -> Iterator[Placed]:
    for position in sorted(turn.slots):
        slot = turn.slots[position]
        for index, item in enumerate(slot.items):
            yield Placed(item, depth, slot, index, turn.seq)


def _move(before: int, after: int) -> Move | None:
    return None if before == after else (before, after)


@dataclass(frozen=True, slots=True)
class Run:
    """Turns both states share (the same objects), one after another: the newer state's
    ``start``… (``length`` of them, seqs ``first_seq``…``last_seq``), each ``steps`` deeper
    than it was (negative: shallower)."""

    start: int  # in the newer state's turns, oldest first
    length: int
    first_seq: int
    last_seq: int
    steps: int


def _first_difference(older: Sequence[Turn], newer: Sequence[Turn], i: int, j: int) -> int:
    """How many turns from ``older[i]`` and ``newer[j]`` on are the same objects (compared
    in C: a walk over 30,000 shared turns is a few milliseconds)."""
    if older[i] is not newer[j]:  # not shared: without the walk, whose start skips i turns
        return 0
    same = map(is_not, islice(older, i, None), islice(newer, j, None))
    found = next(compress(count(), same), None)
    return min(len(older) - i, len(newer) - j) if found is None else found


@dataclass(eq=False)
class TreeDiff:
    """From ``older`` to ``newer``: the items added and removed (with where they are), those
    changed in the turns written between them, and the runs of turns both share (``runs``),
    whose items moved with them if their depth changed."""

    older: ContextView
    newer: ContextView
    added: dict[str, Placed] = field(default_factory=dict)  # the newer state's order
    removed: dict[str, Placed] = field(default_factory=dict)  # the older state's order
    changed: dict[str, ItemDelta] = field(default_factory=dict)  # the newer state's order
    runs: list[Run] = field(default_factory=list)  # ascending
    written_items: int = 0  # the items of the turns written between the states (both sides)
    _written: list[tuple[tuple[int, Turn] | None, tuple[int, Turn] | None]] = field(
        default_factory=list, repr=False
    )

    @classmethod
    def between(cls, older: ContextView, newer: ContextView) -> TreeDiff:
        """The whole diff, now."""
        return cls.planned(older, newer).finished()

    @classmethod
    def planned(cls, older: ContextView, newer: ContextView) -> TreeDiff:
        """The turns of both states matched (by seq: both are in ascending seq order), the
        shared runs found, the written turns noted (``written_items`` says what comparing
        them will cost): ``finished`` compares them. The states must not change until then
        (a live view: hold it first, or finish at once)."""
        diff = cls(older, newer)
        old, new = older.turns_oldest_first(), newer.turns_oldest_first()
        old_top, new_top = len(old) - 1, len(new) - 1  # depth = top - index
        system = older.turn_at(-1), newer.turn_at(-1)
        if system[0] is not system[1]:
            assert system[0] is not None and system[1] is not None
            diff._note((-1, system[0]), (-1, system[1]))
        i = j = 0
        while i < len(old) and j < len(new):
            length = _first_difference(old, new, i, j)
            if length:
                steps = (new_top - j) - (old_top - i)
                diff.runs.append(Run(j, length, new[j].seq, new[j + length - 1].seq, steps))
                i, j = i + length, j + length
                continue
            a, b = old[i], new[j]
            if a.seq == b.seq:  # the same turn, written
                diff._note((old_top - i, a), (new_top - j, b))
                i, j = i + 1, j + 1
            elif a.seq < b.seq:  # gone from the newer state
                diff._note((old_top - i, a), None)
                i += 1
            else:  # not in the older one
                diff._note(None, (new_top - j, b))
                j += 1
        for index in range(i, len(old)):
            diff._note((old_top - index, old[index]), None)
        for index in range(j, len(new)):
            diff._note(None, (new_top - index, new[index]))
        return diff

    def _note(self, before: tuple[int, Turn] | None, after: tuple[int, Turn] | None) -> None:
        self._written.append((before, after))
        for side in (before, after):
            if side is not None:
                self.written_items += side[1].item_count()

    def finished(self) -> TreeDiff:
        """Compare the items of the written turns one by one."""
        old_items: dict[str, Placed] = {}
        new_items: dict[str, Placed] = {}
        for before, after in self._written:
            if before is not None:
                old_items.update((p.item.id, p) for p in _placed(*before))
            if after is not None:
                new_items.update((p.item.id, p) for p in _placed(*after))
        self._written = []
        # An item of a shared turn is in that turn on both sides (ids are unique in a state):
        # what moved between turns, or came or went, is in written turns on both sides.
        for item_id, placed in new_items.items():
            previous = old_items.get(item_id)
            if previous is None:
                self.added[item_id] = placed
                continue
            old, new = previous.item, placed.item
            if (
                (old is new or _diffed(old) == _diffed(new))  # compared in C
                and previous.depth == placed.depth
                and previous.slot_index == placed.slot_index
                and previous.slot.position == placed.slot.position
                and previous.slot.core == placed.slot.core
            ):
                continue  # the same, in the same place: most items, when nothing is shared
            delta = _delta(previous, placed)
            if delta is not None:
                self.changed[item_id] = delta
        self.removed = {i: p for i, p in old_items.items() if i not in new_items}
        return self

    # -- answers, row by row --------------------------------------------------------------------
    def shift_of(self, turn_seq: int) -> Move | None:
        """The depths before and after of a turn both states share, if it moved."""
        runs = self.runs
        k = bisect_right(runs, turn_seq, key=lambda run: run.first_seq) - 1
        if k < 0 or turn_seq > runs[k].last_seq or runs[k].steps == 0:
            return None
        run = runs[k]
        turns = self.newer.turns_oldest_first()
        index = bisect_left(turns, turn_seq, run.start, run.start + run.length, key=_seq)
        after = len(turns) - 1 - index
        return after - run.steps, after

    def change_of(self, item_id: str, turn_seq: int | None = None) -> ItemChange | None:
        """How an item both states have changed (None: it did not, or is not in both); the seq
        of the turn it is in, for an item that moved with its turn."""
        delta = self.changed.get(item_id)
        if delta is not None:
            return delta.change
        shift = self.shift_of(turn_seq) if turn_seq is not None else None
        return ItemChange(item_id, depth=shift) if shift is not None else None

    def mark_of(self, item_id: str, turn_seq: int) -> ChangeMark | None:
        """``added``, ``removed`` (from the older state), ``changed``, ``moved`` (only its
        depth, with its turn), or None."""
        if item_id in self.added:
            return "added"
        if item_id in self.removed:
            return "removed"
        delta = self.changed.get(item_id)
        if delta is not None:
            return "moved" if _depth_only(delta.change) else "changed"
        return "moved" if self.shift_of(turn_seq) is not None else None

    @cached_property
    def depth_moves(self) -> dict[int, int]:
        """How many items only moved, by how many turns (negative: shallower): ``{1: 99990}``
        is 99,990 items one deeper. Counted when first asked for (it reads every moved
        turn)."""
        out: dict[int, int] = {}
        turns = self.newer.turns_oldest_first()
        for run in self.runs:
            if run.steps:
                moved = islice(turns, run.start, run.start + run.length)
                out[run.steps] = out.get(run.steps, 0) + sum(map(_item_count, moved))
        for delta in self.changed.values():
            move = delta.change.depth
            if _depth_only(delta.change) and move is not None:
                out[move[1] - move[0]] = out.get(move[1] - move[0], 0) + 1
        return out

    @property
    def moved(self) -> int:
        """Items that only moved deeper or shallower, with their turn."""
        return sum(self.depth_moves.values())

    @property
    def counts(self) -> tuple[int, int, int]:
        """``(added, removed, changed)`` as ``Diff.counts`` says them (there, an item that
        only moved is changed)."""
        only = sum(1 for delta in self.changed.values() if _depth_only(delta.change))
        return len(self.added), len(self.removed), len(self.changed) - only + self.moved

    @property
    def tally(self) -> tuple[int, int, int, int]:
        """``(added, removed, changed, moved)``: ``changed`` leaves out the items that only
        moved with their turn, which ``moved`` counts."""
        added, removed, changed = self.counts
        moved = self.moved
        return added, removed, changed - moved, moved

    def to_diff(self) -> Diff:
        """Every change listed, as ``diff_views`` lists them (in the same order)."""
        return self.to_located()[0]

    def to_located(self) -> tuple[Diff, Locations, Locations]:
        """``to_diff``, and where each item it names is in the older state and in the newer
        (``history.located_diff`` says where every item is; this, only those it names)."""
        before: Locations = {i: placed.located for i, placed in self.removed.items()}
        after: Locations = {i: placed.located for i, placed in self.added.items()}
        changed: list[ItemChange] = []
        for change, was, now in self.located_changes():
            changed.append(change)
            before[change.id] = was
            after[change.id] = now
        return Diff(tuple(self.added), tuple(self.removed), tuple(changed)), before, after

    def located_changes(
        self, leave_out: Collection[int] = ()
    ) -> Iterator[tuple[ItemChange, Located, Located]]:
        """The changes ``to_diff`` lists, in its order, each with where the item was and is;
        without the items that only moved with their turn by one of ``leave_out`` steps
        (``depth_moves`` counts them): a mass move is skipped turn run by turn run, not made
        into an ``ItemChange`` per item (100,000 of them at 100,000 items)."""
        written = {delta.now.turn_seq for delta in self.changed.values()}
        system = self.newer.turn_at(-1)
        if system is not None and system.seq in written:
            yield from self._written_changes(system, leave_out)
        turns = self.newer.turns_oldest_first()
        top = len(turns) - 1
        runs = iter(self.runs)  # ascending, as the turns are walked (``iter_turns``' order)
        run = next(runs, None)
        index = 0
        while index <= top:
            while run is not None and run.start + run.length <= index:
                run = next(runs, None)
            if run is None or index < run.start:
                turn = turns[index]
                if turn.seq in written:
                    yield from self._written_changes(turn, leave_out)
                index += 1
                continue
            if run.steps and run.steps not in leave_out:  # shared and moved: every item
                for at in range(index, run.start + run.length):
                    depth = top - at
                    shift = (depth - run.steps, depth)
                    for placed in _placed(depth, turns[at]):
                        was = (placed.item, shift[0], placed.slot.position, placed.offset)
                        yield ItemChange(placed.item.id, depth=shift), was, placed.located
            index = run.start + run.length  # shared and unmoved (or left out): nothing listed

    def _written_changes(
        self, turn: Turn, leave_out: Collection[int]
    ) -> Iterator[tuple[ItemChange, Located, Located]]:
        """The changed items of a turn written between the states, in order."""
        for position in sorted(turn.slots):
            for item in turn.slots[position].items:
                delta = self.changed.get(item.id)
                if delta is None:
                    continue
                change, depth = delta.change, delta.change.depth
                if leave_out and _depth_only(change) and depth and depth[1] - depth[0] in leave_out:
                    continue
                yield change, delta.was.located, delta.now.located


def _seq(turn: Turn) -> int:
    return turn.seq


def _item_count(turn: Turn) -> int:
    return turn.item_count()


_diffed = attrgetter(*DIFFED_FIELDS)  # an item's compared fields, as one tuple


def _delta(before: Placed, after: Placed) -> ItemDelta | None:
    old, new = before.item, after.item
    fields: tuple[str, ...] = ()
    if old is not new and _diffed(old) != _diffed(new):
        fields = tuple(name for name in DIFFED_FIELDS if getattr(old, name) != getattr(new, name))
    depth = _move(before.depth, after.depth)
    position = _move(before.slot.position, after.slot.position)
    offset = _move(before.offset, after.offset)
    if not fields and depth is None and position is None and offset is None:
        return None  # the common case when nothing is shared: decided before building anything
    change = ItemChange(new.id, fields, depth=depth, position=position, offset=offset)
    return ItemDelta(change, old, new, before, after)


def _depth_only(change: ItemChange) -> bool:
    return not change.fields and change.position is None and change.offset is None
