"""Where an item's story is read from, so that it is read rather than replayed.

Every operation's changelog (stored with its event) names the items it placed, replaced,
staged, moved, expired or deleted, and counts its ODI shifts. :class:`StoryIndex` keeps, for
each item id, the events (their global ``seq``) whose changelog names it, and for the whole
context every shift: the event, the episode after it, ``by``, the depth range that moved, the
operation, and whether the shift listed every item it moved. It is fed the changelog of each
event as the projection commits it (:meth:`StoryIndex.note`), and saved with the context's
checkpoint as a string that is decoded only when a story is first asked for
(:meth:`StoryIndex.pack`), so opening a workspace does not pay for it.

:func:`tell` then tells an item's story from the few events that name it (the caller reads
them from the log) and the shifts since its birth:

- born, replaced, staged and listed moves are the changelogs' own entries, with their
  coordinates;
- a move by ODI changes only the depth: an item that follows its message (permanent, sticky)
  moves with every shift over its depth that did not list the items it moved; told as
  ``d0 → d40 · a new message``, moves by the same operation one after another told once;
- neighbours pushed outward in a slot, and a slot closing up, are not listed by the
  changelog (they follow from the placement rules): where the item was found elsewhere in its
  slot than the shifts leave it (at the next event that names it, or now), that is told as
  one move ``within its slot``.

Pure: the caller reads the events; this only indexes and compares.
"""

from __future__ import annotations

import base64
import sys
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import orjson

from .changelog import LIST_LIMIT, OPS
from .errors import ContextError
from .nodes import follows_message
from .timeline import BORN_BY, MOVED_BY, ItemStory, StoryEvent, where
from .tree import Node

__all__ = ["StoryIndex", "tell"]

_FIELDS = 7  # a shift's row: seq, episode, by, low, high, op, listed (1: every moved item named)
_OP_CODES = {op: code for code, op in enumerate(OPS)}
WITHIN_SLOT = "others placed or removed in its slot"


class StoryIndex:
    """The events that named each item, and the context's shifts, in the order of the events.

    Built from the saved form (``packed``, decoded when first read; or what reads it then, kept
    apart from a big context's checkpoint) and the events noted since.
    """

    __slots__ = ("_items", "_packed", "_seqs", "_shifts")

    def __init__(self, packed: str | Callable[[], bytes] | None = None) -> None:
        self._packed: str | bytes | Callable[[], bytes] | None = packed
        # An id named by one event maps to its seq, by several to their seqs in a string
        # ("5 9 -12"): neither is tracked by the cyclic collector (100,000 items add no pause
        # to it), and the saved form decodes to it as it is, with nothing to convert.
        self._items: dict[str, int | str] = {}
        self._shifts = array("q")
        self._seqs: array[int] | None = None  # the shifts' seqs, for bisecting; built lazily

    # -- feeding --------------------------------------------------------------------------
    def note(self, seq: int, changes: Mapping[str, Any] | None) -> None:
        """Index the changelog (its JSON form, as stored) of event ``seq``."""
        if not changes:
            return
        name = self._name
        for entry in changes.get("entries", ()):
            if entry["kind"] != "turn_removed":
                name(entry["id"], seq)
            replaced = entry.get("replaced")
            if replaced is not None:
                name(replaced, seq)
        shifts = changes.get("shifts")
        if not shifts:
            return
        op, episode = _OP_CODES.get(changes["op"], -1), changes["episode"]
        for shift in shifts:
            for entry in shift["listed"]:
                name(entry["id"], -seq)  # moved with its turn: told from the shift, not read
            low, high = shift["depths"]
            listed = 1 if shift["items"] <= LIST_LIMIT else 0
            self._shifts.extend((seq, episode, shift["by"], low, high, op, listed))
        self._seqs = None

    def _name(self, item_id: str, seq: int) -> None:
        items = self._items
        had = items.get(item_id)
        if had is None:
            items[item_id] = seq
        elif isinstance(had, int):
            if had != seq:
                items[item_id] = f"{had} {seq}"
        elif had.rpartition(" ")[2] != str(seq):
            items[item_id] = f"{had} {seq}"

    # -- reading --------------------------------------------------------------------------
    def events(self, item_id: str) -> tuple[int, ...]:
        """The events whose changelog names ``item_id``, oldest first: ``seq`` where an entry
        names it, ``-seq`` where a shift lists it among the items it moved."""
        self._unpack()
        had = self._items.get(item_id)
        if had is None:
            return ()
        return (had,) if isinstance(had, int) else tuple(map(int, had.split()))

    def shifts(self, after: int, until: int | None) -> Iterable[tuple[int, ...]]:
        """The shifts of the events after ``after`` up to ``until`` (all, without), in order:
        ``(seq, episode, by, low, high, op, listed)``."""
        self._unpack()
        if self._seqs is None:
            self._seqs = self._shifts[::_FIELDS]
        seqs, rows = self._seqs, self._shifts
        first = bisect_right(seqs, after) * _FIELDS
        last = (len(seqs) if until is None else bisect_right(seqs, until)) * _FIELDS
        return zip(*(rows[first + field : last : _FIELDS] for field in range(_FIELDS)), strict=True)

    # -- saving ---------------------------------------------------------------------------
    def pack(self) -> str:
        """The saved form (JSON text): what :class:`StoryIndex` is built from again."""
        if self._packed is not None and not self._items and not self._shifts:
            text = self._text()  # nothing noted since it was read: saved as it was
            return text if isinstance(text, str) else text.decode()
        self._unpack()
        shifts = self._shifts
        if sys.byteorder == "big":  # saved little-endian, whichever machine reads it
            shifts = array("q", shifts)
            shifts.byteswap()
        packed = base64.b64encode(shifts.tobytes()).decode()
        return orjson.dumps({"items": self._items, "shifts": packed}).decode()

    def _text(self) -> str | bytes:
        """The saved form, read now if it was kept apart; ``ValueError`` if it cannot be."""
        packed = self._packed
        if not callable(packed):
            return packed or ""
        try:
            text = self._packed = packed()  # read once
        except ContextError as error:
            raise ValueError(f"the saved story index cannot be read: {error}") from None
        return text

    def _unpack(self) -> None:
        """Read the saved form, and put the events noted since after it; ``ValueError`` if
        it cannot be read (the caller indexes the log again)."""
        if self._packed is None:
            return
        text = self._text()
        try:
            data = orjson.loads(text)
            items: dict[str, int | str] = data["items"]
            shifts = array("q", base64.b64decode(data["shifts"], validate=True))
            if not isinstance(items, dict) or len(shifts) % _FIELDS:
                raise ValueError("not an index")
        except (ValueError, TypeError, KeyError) as error:
            raise ValueError(f"the saved story index cannot be read: {error}") from None
        self._packed = None
        for key, value in self._items.items():
            had = items.get(key)
            items[key] = value if had is None else f"{had} {value}"
        if sys.byteorder == "big":
            shifts.byteswap()
        shifts.extend(self._shifts)
        self._items, self._shifts, self._seqs = items, shifts, None


def tell(
    item_id: str,
    node: Node,
    named: Sequence[tuple[int, Mapping[str, Any]]],
    index: StoryIndex,
    *,
    until: int | None = None,
) -> list[StoryEvent] | None:
    """The story of ``item_id``, as ``node`` shows it (the item, in the view asked for), from
    ``named``: the changelogs (JSON form) of the events up to event ``until`` whose entries
    name it (``index.events``' positive seqs, read from the log), oldest first, with their
    seqs. None when the first of them is not its birth (recorded before events carried
    changelogs, or copied by a fork): the caller replays then."""
    item = node.item
    assert item is not None
    birth = _born(item_id, named[0][1]) if named else None
    if birth is None:
        return None
    story = ItemStory(item_id)
    first_seq, first = named[0]
    coords: tuple[int, ...] = birth
    detail = f"{where(coords)} · {BORN_BY.get(first['op'], first['op'])}"
    story.tell(StoryEvent(first["episode"], first_seq, "born", detail))
    follows = follows_message(item.ttl, item.cad) and coords[0] >= 0
    by_seq = dict(named[1:])
    named_seqs = sorted(by_seq)
    listed = {-seq for seq in index.events(item_id) if seq < 0}
    run = _Run(story)
    after_seq = first_seq
    for stop in [*named_seqs, None]:
        # The shifts between two events that name it (the item keeps its slot meanwhile),
        # then that event's own entries: they say where it went.
        last = until if stop is None else stop - 1
        if follows and (until is None or after_seq < until):
            depth = run.walk(index.shifts(after_seq, last), coords, listed)
            coords = (depth, *coords[1:])
        run.end()
        if stop is None:
            break
        if until is not None and stop > until:
            break
        after = _named(story, item_id, stop, by_seq[stop], coords)
        if after is None:
            return story.told(node, until=until)  # gone (not in the view asked for)
        coords, after_seq = after, stop
    here = node.coordinates
    if here != coords:
        last = max((*by_seq, first_seq))
        story.move(node.episode, last, coords, here, WITHIN_SLOT)
    return story.told(node, until=until)


class _Run:
    """ODI moves by one operation, event after event, told as one move (``times`` events);
    the shifts of one event make one move, and none if they cancel out."""

    __slots__ = ("before", "episode", "first", "last", "op", "start", "story", "times", "to")

    def __init__(self, story: ItemStory) -> None:
        self.story = story
        self.times = 0
        self.op = self.episode = self.first = self.last = self.to = self.start = 0
        self.before: tuple[int, ...] = ()

    def walk(
        self, rows: Iterable[tuple[int, ...]], coords: tuple[int, ...], listed: set[int]
    ) -> int:
        """Follow the item (at ``coords``) through the shifts ``rows``: it moves with every
        shift over its depth that did not list the items it moved, or that listed it. Returns
        its depth after them. (The hot loop of an old item's story: 33,000 shifts at 100k
        items, kept to local variables.)"""
        depth = coords[0]
        times, op_now, last, start = self.times, self.op, self.last, self.start
        for seq, episode, by, low, high, op, complete in rows:
            if (complete and seq not in listed) or depth < low or depth > high:
                continue
            if times and seq == last:
                depth += by  # another shift of the same event
                continue
            if times and depth == start:
                times -= 1  # the last event's shifts cancelled out: it did not move the item
            if times and op != op_now:
                self.times, self.to, self.start = times, depth, start
                self.end()
                times = 0
            if not times:
                op_now, self.episode, self.first = op, episode, seq
                self.before = (depth, *coords[1:])
            last, start = seq, depth
            depth += by
            times += 1
        self.times, self.op, self.last, self.start, self.to = times, op_now, last, start, depth
        return depth

    def _close_event(self) -> None:
        """The last event's shifts cancelled out: it did not move the item."""
        if self.times and self.to == self.start:
            self.times -= 1

    def end(self) -> None:
        self._close_event()
        if self.times:
            name = OPS[self.op] if self.op >= 0 else "?"
            self.story.move(
                self.episode,
                self.first,
                self.before,
                (self.to, *self.before[1:]),
                MOVED_BY.get(name, name),
                depth_only=True,
                times=self.times,
            )
        self.times = 0


def _born(item_id: str, changes: Mapping[str, Any]) -> tuple[int, ...] | None:
    for entry in changes.get("entries", ()):
        if entry["id"] == item_id and entry["kind"] in ("inserted", "rehydrated"):
            after = entry["after"]
            return tuple(after) if after is not None else None
    return None


def _named(
    story: ItemStory,
    item_id: str,
    seq: int,
    changes: Mapping[str, Any],
    coords: tuple[int, ...],
) -> tuple[int, ...] | None:
    """Tell what event ``seq`` did to the item (from where it was, ``coords``); returns where
    it is after it, None if it is gone."""
    op, episode = changes["op"], changes["episode"]
    ours = [e for e in changes.get("entries", ()) if e["id"] == item_id]
    for shift in changes.get("shifts", ()):
        ours += [e for e in shift["listed"] if e["id"] == item_id]
    if not ours:
        return coords  # it replaced this one (``replaced``): not in the view asked for
    for entry in ours:
        before = tuple(entry["before"]) if entry["before"] is not None else None
        after = tuple(entry["after"]) if entry["after"] is not None else None
        if before is not None and before != coords:
            story.move(episode, seq, coords, before, WITHIN_SLOT)
        if after is None:
            return None
        kind = entry["kind"]
        if kind == "replaced":
            preview = orjson.dumps(entry["preview"]).decode()
            story.tell(StoryEvent(episode, seq, "replaced", f"{where(after)} · now {preview}"))
        elif kind == "stage":
            first, then = entry["stage"]
            detail = f"stage {first} → {then} of {entry['stages']} · {where(after)}"
            story.tell(StoryEvent(episode, seq, "staged", detail))
        elif after != (before or coords):
            story.move(episode, seq, before or coords, after, MOVED_BY.get(op, op))
        coords = after
    return coords
