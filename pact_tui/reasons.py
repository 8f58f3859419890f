"""Why the items of a diff changed, read from the changelogs of the steps between its two sides.

A diff says what differs; the engine's changelog (``engine.context.changelog``) says what each
operation did and why. :class:`Reasons` puts them together, item by item: the row of a ghost
says ``expired (ttl 3, age 3)`` rather than ``gone``, an added row ``rehydrated (replaced
n57)``, a changed one ``stage 1→2``, and the turns that moved whole were moved by ODI.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.context.changelog import ChangeEntry, Changelog, Shift
from engine.visible import visible

if TYPE_CHECKING:
    from .types import Mark


def _words(steps: int) -> str:
    size = abs(steps)
    amount = {1: "one", 2: "two", 3: "three"}.get(size, str(size))
    return f"{amount} {'deeper' if steps > 0 else 'shallower'}"


@dataclass(frozen=True, slots=True)
class Reasons:
    """The last change the changelogs record for each item (an instance a rehydration replaced
    is found by its own id too), and the ODI mass moves, of ``events`` operations."""

    by_id: Mapping[str, ChangeEntry] = field(default_factory=dict)
    shifts: tuple[Shift, ...] = ()
    events: int = 0
    sides: tuple[str | None, str | None] = (None, None)  # the diff's (older, newer) snapshots

    @classmethod
    def of(
        cls, changelogs: Iterable[Changelog], sides: tuple[str | None, str | None] = (None, None)
    ) -> Reasons:
        """From the changelogs of the operations between the two sides, oldest first."""
        by_id: dict[str, ChangeEntry] = {}
        shifts: list[Shift] = []
        events = 0
        for log in changelogs:
            events += 1
            shifts.extend(log.shifts)
            for entry in log.entries:
                by_id[entry.id] = entry
                if entry.kind == "rehydrated" and entry.replaced is not None:
                    by_id[entry.replaced] = entry  # the old instance: why it went
        return cls(by_id, tuple(shifts), events, sides)

    @property
    def odi(self) -> bool:
        """Did ODI move turns between the two sides?"""
        return any(shift.items or shift.turns for shift in self.shifts)

    def reason_of(self, item_id: str, mark: Mark | None) -> str:
        """Why the item shows as ``mark`` in the diff, in a few words ("" if the changelogs do
        not say): ``expired (ttl 3, age 3)``, ``rehydrated (replaced n57)``,
        ``replaced by a fresh instance (n62)``, ``stage 1→2``, ``moved by ODI``."""
        entry = self.by_id.get(item_id)
        if entry is None:
            return "moved by ODI" if mark == "moved" and self.odi else ""
        kind = entry.kind
        if kind == "expired":
            return f"expired (ttl {entry.ttl}, age {entry.age})"
        if kind == "rehydrated":
            if entry.id != item_id:  # the instance it replaced
                return f"replaced by a fresh instance ({visible(entry.id)})"
            if entry.replaced is None:
                return "rehydrated"  # the last instance had expired
            return f"rehydrated (replaced {visible(entry.replaced)})"
        if kind == "stage" and entry.stage is not None:
            first, then = entry.stage
            if then is None:
                return "removed at the end of its lifecycle"
            return f"stage {first}→{then}" + (" (cycled)" if entry.cycled else "")
        if kind == "moved":
            return "moved by ODI" if self.odi else "moved"
        if kind == "turn_removed":
            return "its turn was removed"
        if mark == "moved" and self.odi:  # inserted, then only moved with its turn
            return "moved by ODI"
        return kind  # inserted, deleted, replaced

    def moved_summary(self, depth_moves: Mapping[int, int]) -> str:
        """``moved by ODI: 99,990 items one deeper`` (``moved:`` when no ODI move is
        recorded: a turn removed before them pulled them shallower, say)."""
        said = []
        for steps, count in sorted(depth_moves.items()):
            items = "1 item" if count == 1 else f"{count:,} items"
            said.append(f"{items} {_words(steps)}")
        return ("moved by ODI: " if self.odi else "moved: ") + ", ".join(said)
