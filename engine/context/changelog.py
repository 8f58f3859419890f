"""What one context operation did, with reasons: the episode changelog.

Every public operation of :class:`~engine.context.context.Context` returns its account as a
:class:`Changelog` (``context.last_changes``); the workspace stores its JSON form in the event's
result, so it replays and can be read back for any past step.

- :class:`ChangeEntry`: one item (or turn) that was inserted, deleted, replaced, expired,
  rehydrated, moved, changed render stage, or one turn removed; with coordinates before and after
  (``None``: it was not there / it is gone) and the reason's figures.
- :class:`Shift`: an ODI mass move (a new turn pushes every turn one deeper; a removed turn
  pulls the deeper ones one shallower), summarised by counts, with the moved items listed only
  when there are few (``LIST_LIMIT``).
- :class:`Changelog`: the op, the episode after it, the entries and the shifts, in the order
  they happened. Coordinates are those of the state just before (``before``) and at the end of
  that one operation (``after``).

Several changelogs (a step made of several events, ``ctx changes --between``) are read as a
sequence: :func:`summary_of` and :func:`lines_of` take one, and :meth:`Changelog.combined` folds
one into a single changelog (ops joined by ``+``; each entry keeps its own event's coordinates).

Not listed, because they follow from the placement rules: neighbours pushed outward in a slot by
an insert, a slot closing up after a removal, and offsets that change when items which keep
their coordinates (temporary, cyclic) are seated among others during ODI. Schedules that end
because the turn they followed was removed are not listed either.

Pure values: no I/O, nothing of the tree is imported. They are immutable named tuples rather
than frozen dataclasses because the engine builds several on every operation and a named tuple
is built four times faster (a changelog must stay cheap next to an operation at 100,000
items). Compare them with each other, not with plain tuples, and use ``_replace`` to derive one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Literal, NamedTuple, get_args

from engine.visible import visible

from .errors import InvalidChangelog

__all__ = [
    "KINDS",
    "LIST_LIMIT",
    "ChangeEntry",
    "Changelog",
    "Coords",
    "InvalidChangelog",
    "Kind",
    "Shift",
    "format_coords",
    "lines_of",
    "preview",
    "summary_of",
]

Coords = tuple[int, ...]
"""``(depth, position, offset)`` of an item; ``(depth,)`` of a turn."""

Kind = Literal[
    "inserted",
    "deleted",
    "replaced",
    "expired",
    "rehydrated",
    "moved",
    "stage",
    "turn_removed",
]
KINDS: tuple[Kind, ...] = get_args(Kind)
OPS = ("insert", "update", "delete", "message", "advance", "seal")

LIST_LIMIT = 20
"""A shift lists the items it moved only when it moved at most this many."""
PREVIEW_CHARS = 60
SUMMARY_NAMES = 3
"""The summary names the items of one kind up to this many, and counts them past it."""

ELLIPSIS = "…"
TO = "\u2013"  # an en dash, between the ends of a depth range


def preview(head: str) -> str:
    """The first line of ``head`` (an item's text head, ``PREVIEW_CHARS + 1`` characters or
    more), cut to ``PREVIEW_CHARS`` with an ellipsis when anything was left out."""
    line, newline, _rest = head.partition("\n")
    if len(line) > PREVIEW_CHARS:
        return line[: PREVIEW_CHARS - 1] + ELLIPSIS
    if newline:
        return line + ELLIPSIS
    return line


def format_coords(coords: Coords | None) -> str:
    """``(3,1,0)`` for an item, ``d3`` for a turn, ``—`` for none."""
    if coords is None:
        return "—"
    if len(coords) == 1:
        return f"d{coords[0]}"
    return "(" + ",".join(str(c) for c in coords) + ")"


_WORDS = {1: "one", 2: "two", 3: "three"}


def by_words(by: int) -> str:
    """``+1`` → ``one deeper``, ``-2`` → ``two shallower``."""
    size = abs(by)
    amount = _WORDS.get(size, str(size))
    return f"{amount} {'deeper' if by > 0 else 'shallower'}"


# =========================================================================================
# the values
# =========================================================================================
class ChangeEntry(NamedTuple):
    """One change to one item (or, for ``turn_removed``, one turn).

    ``id``: the item (for ``rehydrated`` the new instance, for ``turn_removed`` the turn).
    ``before``/``after``: coordinates before the operation and at its end; ``None`` where it
    was not there or is gone. Reasons, set by kind:

    - ``expired``: ``age`` (episodes lived) and ``ttl``.
    - ``rehydrated``: ``template`` (the schedule's id) and ``replaced`` (the instance it
      replaced, ``None`` if that one had already expired); ``before`` is the replaced one's place.
    - ``stage`` (render lifecycle): ``stage`` = ``(k, k+1)`` 1-based, or ``(k, None)`` when the
      lifecycle ended and the item is gone (``after`` is ``None``); ``stages`` how many there
      are; ``cycled`` when it went from the last stage back to the first; ``age``/``ttl`` of the
      stage it left.
    - ``deleted`` with ``before`` ``None``: a schedule with no live instance ended
      (``template`` its id).
    """

    kind: Kind
    id: str
    key: str | None
    node_type: str
    preview: str
    before: Coords | None
    after: Coords | None
    age: int | None = None
    ttl: int | None = None
    template: str | None = None
    replaced: str | None = None
    stage: tuple[int, int | None] | None = None
    stages: int | None = None
    cycled: bool = False

    @property
    def ended(self) -> bool:
        """A render lifecycle that ended here (the item is gone)."""
        return self.kind == "stage" and self.stage is not None and self.stage[1] is None

    def name(self) -> str:
        """``#key`` if it has one, else its node type and coordinates (``text (2,1,0)``)."""
        if self.key is not None:
            return f"#{visible(self.key)}"
        where = self.after if self.after is not None else self.before
        if self.kind == "turn_removed":
            return f"turn {format_coords(where)}"
        return f"{visible(self.node_type)} {format_coords(where)}".rstrip(" —")

    def reasons(self) -> str:
        """The reason's figures as words: ``age 3, ttl 3``, ``stage 1→2 of 3``, …"""
        if self.kind == "expired":
            return f"age {self.age}, ttl {self.ttl}"
        if self.kind == "rehydrated":
            replaced = visible(self.replaced) if self.replaced else "nothing (it had expired)"
            return f"template {visible(self.template or '?')}, replaced {replaced}"
        if self.kind == "stage" and self.stage is not None:
            first, then = self.stage
            of = f" of {self.stages}" if self.stages is not None else ""
            if then is None:
                return f"stage {first}{of} ended"
            return f"stage {first}→{then}{of}" + (", cycled" if self.cycled else "")
        if self.kind == "deleted" and self.before is None and self.template is not None:
            return f"schedule {visible(self.template)} ended"
        return ""

    def line(self) -> str:
        """One line: kind, coordinates before → after, key, preview and reasons."""
        key = f"#{visible(self.key)}" if self.key is not None else visible(self.node_type)
        text = visible(json.dumps(self.preview, ensure_ascii=False))
        where = f"{format_coords(self.before)} → {format_coords(self.after)}"
        parts = [f"{self.kind:<12}", f"{where:<20}", key, text]
        reasons = self.reasons()
        if reasons:
            parts.append(f"({reasons})")
        return "  ".join(parts)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "id": self.id,
            "key": self.key,
            "node_type": self.node_type,
            "preview": self.preview,
            "before": list(self.before) if self.before is not None else None,
            "after": list(self.after) if self.after is not None else None,
        }
        for name in ("age", "ttl", "template", "replaced", "stages"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.stage is not None:
            out["stage"] = list(self.stage)
        if self.cycled:
            out["cycled"] = True
        return out

    @classmethod
    def from_json(cls, data: Any, where: str = "entry") -> ChangeEntry:
        read = _Reader(data, where)
        kind = read.field("kind", str)
        if kind not in KINDS:
            raise read.bad("kind", f"is {kind!r}, not one of {', '.join(KINDS)}")
        stage = read.optional("stage", list)
        if stage is not None:
            if (
                len(stage) != 2
                or not _is_int(stage[0])
                or not (stage[1] is None or _is_int(stage[1]))
            ):
                raise read.bad("stage", "must be [from, to] (to may be null)")
            stage = (stage[0], stage[1])
        entry = cls(
            kind=kind,
            id=read.field("id", str),
            key=read.optional("key", str),
            node_type=read.field("node_type", str),
            preview=read.field("preview", str),
            before=read.coords("before"),
            after=read.coords("after"),
            age=read.optional("age", int),
            ttl=read.optional("ttl", int),
            template=read.optional("template", str),
            replaced=read.optional("replaced", str),
            stage=stage,
            stages=read.optional("stages", int),
            cycled=read.optional("cycled", bool) or False,
        )
        read.no_others(
            "kind id key node_type preview before after age ttl template replaced stage "
            "stages cycled"
        )
        return entry


class Shift(NamedTuple):
    """An ODI mass move: ``items`` items in ``turns`` turns moved ``by`` depths (+1: one deeper,
    a new turn; -1: one shallower, a turn removed; -k past k removed turns). ``depths``: the
    depth range of the turns that moved, as it was before. ``listed``: the moved items, kind
    ``moved`` with before/after, when ``items <= LIST_LIMIT``; empty otherwise. The items that
    keep their coordinates (system, temporary, cyclic) do not move and are not counted."""

    by: int
    turns: int
    items: int
    depths: tuple[int, int]
    listed: tuple[ChangeEntry, ...] = ()

    def line(self) -> str:
        """``ODI: 9,999 items in 3,333 turns moved one deeper (d0-d3332 → d1-d3333)`` (the
        ranges with an en dash)."""
        low, high = self.depths
        if low == high:
            where = f"d{low} → d{low + self.by}"
        else:
            where = f"d{low}{TO}d{high} → d{low + self.by}{TO}d{high + self.by}"
        turns = "1 turn" if self.turns == 1 else f"{self.turns:,} turns"
        items = "1 item" if self.items == 1 else f"{self.items:,} items"
        return f"ODI: {items} in {turns} moved {by_words(self.by)} ({where})"

    def to_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "turns": self.turns,
            "items": self.items,
            "depths": list(self.depths),
            "listed": [entry.to_json() for entry in self.listed],
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "shift") -> Shift:
        read = _Reader(data, where)
        depths = read.field("depths", list)
        if len(depths) != 2 or not all(_is_int(d) for d in depths):
            raise read.bad("depths", "must be [first, last]")
        listed = read.field("listed", list)
        shift = cls(
            by=read.field("by", int),
            turns=read.field("turns", int),
            items=read.field("items", int),
            depths=(depths[0], depths[1]),
            listed=tuple(
                ChangeEntry.from_json(entry, f"{where}.listed[{i}]")
                for i, entry in enumerate(listed)
            ),
        )
        read.no_others("by turns items depths listed")
        return shift


class Changelog(NamedTuple):
    """What one operation did. ``op``: insert, update, delete, message, advance or seal (joined
    by ``+`` for a :meth:`combined` one); ``episode``: the episode after it."""

    op: str
    episode: int
    entries: tuple[ChangeEntry, ...] = ()
    shifts: tuple[Shift, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.entries or self.shifts)

    def of_kind(self, *kinds: Kind) -> tuple[ChangeEntry, ...]:
        return tuple(entry for entry in self.entries if entry.kind in kinds)

    def ids(self, *kinds: Kind) -> tuple[str, ...]:
        return tuple(entry.id for entry in self.of_kind(*kinds))

    @property
    def moved_items(self) -> int:
        """How many item moves the shifts made (an item moved twice counts twice)."""
        return sum(shift.items for shift in self.shifts)

    def summary(self) -> str:
        """One line: ``expired #deadline (ttl 3) · rehydrated #current_mode · ODI: 10 items one
        deeper · #alert stage 1→2``."""
        return summary_of([self])

    def lines(self) -> list[str]:
        """One line per change (see :meth:`ChangeEntry.line`), one per shift and its listed
        items (indented)."""
        return lines_of([self])

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "episode": self.episode,
            "entries": [entry.to_json() for entry in self.entries],
            "shifts": [shift.to_json() for shift in self.shifts],
        }

    @classmethod
    def from_json(cls, data: Any) -> Changelog:
        """Read :meth:`to_json`'s form back; ``InvalidChangelog`` names the field on bad data."""
        read = _Reader(data, "changelog")
        entries = read.field("entries", list)
        shifts = read.field("shifts", list)
        log = cls(
            op=read.field("op", str),
            episode=read.field("episode", int),
            entries=tuple(
                ChangeEntry.from_json(entry, f"entries[{i}]") for i, entry in enumerate(entries)
            ),
            shifts=tuple(Shift.from_json(shift, f"shifts[{i}]") for i, shift in enumerate(shifts)),
        )
        read.no_others("op episode entries shifts")
        return log

    @classmethod
    def combined(cls, logs: Iterable[Changelog]) -> Changelog:
        """One changelog for several operations in order: ops joined by ``+``, the last
        episode, entries and shifts one after the other (each keeps its own operation's
        coordinates). Refuses an empty sequence (``ValueError``): there is no episode to give."""
        logs = list(logs)
        if not logs:
            raise ValueError("combined() needs at least one changelog")
        if len(logs) == 1:
            return logs[0]
        return cls(
            op="+".join(log.op for log in logs),
            episode=logs[-1].episode,
            entries=tuple(entry for log in logs for entry in log.entries),
            shifts=tuple(shift for log in logs for shift in log.shifts),
        )


# =========================================================================================
# rendering several
# =========================================================================================
_SUMMARY_ORDER: tuple[Kind, ...] = (
    "inserted",
    "replaced",
    "deleted",
    "expired",
    "rehydrated",
    "moved",
    "stage",
    "turn_removed",
)


def _named(entry: ChangeEntry) -> str:
    if entry.kind == "expired":
        return f"{entry.name()} (ttl {entry.ttl})"
    if entry.kind == "stage" and entry.stage is not None:
        first, then = entry.stage
        if then is None:
            return f"{entry.name()} stage {first} ended"
        return f"{entry.name()} stage {first}→{then}" + (" (cycled)" if entry.cycled else "")
    if entry.kind == "turn_removed":
        return f"{entry.name()} removed"
    return entry.name()


_COUNTED = {
    "inserted": "inserted {n} items",
    "replaced": "replaced {n} items",
    "deleted": "deleted {n} items",
    "expired": "expired {n} items",
    "rehydrated": "rehydrated {n} items",
    "moved": "moved {n} items",
    "stage": "{n} items changed stage",
    "turn_removed": "{n} turns removed",
}
_VERB = {"inserted", "replaced", "deleted", "expired", "rehydrated", "moved"}


def summary_of(logs: Sequence[Changelog]) -> str:
    """One line for the changes of ``logs``, ``·``-separated, by kind: up to ``SUMMARY_NAMES``
    items of a kind are named (``#key``, else node type and coordinates), more are counted
    ("expired 40 items"); shifts are summed by direction ("ODI: 10 items one deeper"; several
    in one direction: "ODI: 30 item moves one deeper (3 mass moves)", an item counted in
    each it was in).
    ``no changes`` when there are none."""
    by_kind: dict[str, list[ChangeEntry]] = {}
    for log in logs:
        for entry in log.entries:
            by_kind.setdefault(entry.kind, []).append(entry)
    moves: dict[int, int] = {}
    shifts: dict[int, int] = {}
    for log in logs:
        for shift in log.shifts:
            if shift.items:
                moves[shift.by] = moves.get(shift.by, 0) + shift.items
                shifts[shift.by] = shifts.get(shift.by, 0) + 1
    parts: list[str] = []
    for kind in _SUMMARY_ORDER:
        if kind == "moved" and moves:
            ways = []
            for by in sorted(moves, reverse=True):
                if shifts[by] > 1:  # several mass moves: an item may be counted in each
                    ways.append(
                        f"{moves[by]:,} item moves {by_words(by)} ({shifts[by]} mass moves)"
                    )
                    continue
                items = "1 item" if moves[by] == 1 else f"{moves[by]:,} items"
                ways.append(f"{items} {by_words(by)}")
            parts.append("ODI: " + ", ".join(ways))
        entries = by_kind.get(kind, [])
        if not entries:
            continue
        if len(entries) > SUMMARY_NAMES:
            parts.append(_COUNTED[kind].format(n=f"{len(entries):,}"))
        elif kind in _VERB:
            parts.append(f"{kind} " + ", ".join(_named(entry) for entry in entries))
        else:
            parts.extend(_named(entry) for entry in entries)
    return " · ".join(parts) if parts else "no changes"


def lines_of(logs: Sequence[Changelog]) -> list[str]:
    """Every change of ``logs`` as text, one line each; a shift is one summary line with its
    listed items indented under it."""
    lines: list[str] = []
    for log in logs:
        for entry in log.entries:
            lines.append(entry.line())
        for shift in log.shifts:
            lines.append(shift.line())
            lines.extend("  " + entry.line() for entry in shift.listed)
    return lines


# =========================================================================================
# reading JSON
# =========================================================================================
def _is_int(value: Any) -> bool:
    return type(value) is int


class _Reader:
    """Reads the fields of one JSON object, raising ``InvalidChangelog`` naming the field."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise InvalidChangelog(
                f"{where} must be a JSON object, not {type(data).__name__}", field=where
            )
        self.data = data
        self.where = where

    def bad(self, name: str, problem: str) -> InvalidChangelog:
        field = f"{self.where}.{name}" if self.where != "changelog" else name
        return InvalidChangelog(f"changelog field {field} {problem}", field=field)

    def _check(self, name: str, value: Any, kind: type) -> Any:
        ok = _is_int(value) if kind is int else isinstance(value, kind)
        if not ok:
            raise self.bad(name, f"must be {kind.__name__}, not {type(value).__name__}")
        return value

    def field(self, name: str, kind: type) -> Any:
        if name not in self.data:
            raise self.bad(name, "is missing")
        return self._check(name, self.data[name], kind)

    def optional(self, name: str, kind: type) -> Any:
        value = self.data.get(name)
        return None if value is None else self._check(name, value, kind)

    def coords(self, name: str) -> Coords | None:
        if name not in self.data:
            raise self.bad(name, "is missing")
        value = self.data[name]
        if value is None:
            return None
        if (
            not isinstance(value, list)
            or len(value) not in (1, 3)
            or not all(_is_int(c) for c in value)
        ):
            raise self.bad(name, "must be null, [depth] or [depth, position, offset]")
        return tuple(value)

    def no_others(self, names: str) -> None:
        others = sorted(set(self.data) - set(names.split()))
        if others:
            raise self.bad(others[0], "is not a changelog field")
