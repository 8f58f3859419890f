"""Filter mode's rows: only what a selector matched, under the headers of its turns and slots.

A :class:`FilteredLayout` reads like a :class:`~pact_tui.tree_layout.TreeLayout` (``line_count``,
``row``, ``line_of``, ``line_of_turn``) so the panes draw and walk it the same way. It is built
once per selection, from the matches' coordinates: a turn or a slot is a block of lines whose
heights live in a :class:`LineIndex`, and a row is made only when it is drawn. Folding does not
apply while filtering: every match shows.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .line_index import LineIndex
from .tree_layout import Row

if TYPE_CHECKING:
    from engine.context import ContextView, Node
    from engine.context.nodes import Item, Slot, Turn

    from .types import RowKind

_Slot = tuple["Slot", list[tuple[int, "Item"]]]  # a slot, and its matched items (offset, item)


def _order(depth: int) -> tuple[bool, int]:
    """Where a turn is drawn: the system region first, then the deepest turn down to d0."""
    return (depth != -1, -depth)


class FilteredLayout:
    """The rows of ``nodes`` in ``view``: each matched item (and matched slot or turn), with
    the headers of the turns and slots above it (``headers``), or the matched items alone in
    the order the model reads them (the provider view)."""

    def __init__(self, view: ContextView, nodes: Iterable[Node], *, headers: bool = True) -> None:
        self.headers = headers
        self.collapsed: set[str] = set()  # nothing folds while filtering
        wanted: dict[int, dict[int, list[int]]] = {}
        for node in nodes:
            depth = node.depth
            if depth is None:
                continue
            slots = wanted.get(depth)
            if slots is None:
                slots = wanted[depth] = {}
            position = node.position
            if position is None:
                continue  # a turn: its header alone
            offsets = slots.get(position)
            if offsets is None:
                offsets = slots[position] = []
            if node.offset is not None:
                offsets.append(node.offset)
        self._depths: list[int] = []
        self._turns: list[Turn] = []
        self._slots: list[list[_Slot]] = []
        heights: list[int] = []
        for depth in sorted(wanted, key=_order):
            turn = view.turn_at(depth)
            if turn is None:
                continue
            slots_here: list[_Slot] = []
            for position in sorted(wanted[depth]):
                slot = turn.slots.get(position)
                if slot is None:
                    continue
                items = slot.items
                chosen = [
                    (offset, items[slot.core + offset])
                    for offset in sorted(set(wanted[depth][position]))
                    if 0 <= slot.core + offset < len(items)
                ]
                slots_here.append((slot, chosen))
            if headers:
                height = 1 + sum(1 + len(chosen) for _slot, chosen in slots_here)
            else:
                height = sum(len(chosen) for _slot, chosen in slots_here)
                if not height:
                    continue  # the provider view shows items only
            self._depths.append(depth)
            self._turns.append(turn)
            self._slots.append(slots_here)
            heights.append(height)
        self._group_of = {depth: index for index, depth in enumerate(self._depths)}
        self._lines = LineIndex(heights)

    # -- what a TreeLayout is also asked ----------------------------------------------------------
    def sync(self, view: ContextView) -> None:
        """A filtered layout is made again for every new selection: nothing to catch up."""

    def forget(self) -> None:
        """Nothing is kept between contexts."""

    def reveal(self, depth: int, position: int | None) -> None:
        """Every match is shown already."""

    def toggle(self, row: Row) -> None:
        """Nothing folds while filtering."""

    def set_all(self, folded: bool) -> None:
        """Nothing folds while filtering."""

    # -- reading -----------------------------------------------------------------------------------
    @property
    def line_count(self) -> int:
        return self._lines.total

    @property
    def item_count(self) -> int:
        """How many matched items are shown."""
        return sum(len(chosen) for slots in self._slots for _slot, chosen in slots)

    def row(self, line: int) -> Row:
        index, local = self._lines.find(line)
        depth, turn = self._depths[index], self._turns[index]
        if self.headers:
            if local == 0:
                kind: RowKind = "system" if depth == -1 else "turn"
                return Row(kind, depth, turn)
            local -= 1
        for slot, chosen in self._slots[index]:
            if self.headers:
                if local == 0:
                    return Row("slot", depth, turn, slot)
                local -= 1
            if local < len(chosen):
                offset, item = chosen[local]
                return Row("item", depth, turn, slot, item, offset)
            local -= len(chosen)
        raise IndexError(f"line {line} is past the last line ({self.line_count - 1})")

    def line_of_turn(self, depth: int) -> int | None:
        index = self._group_of.get(depth)
        return None if index is None else self._lines.start(index)

    def line_of(self, depth: int, position: int, offset: int | None = None) -> int | None:
        """The line of a slot header (``offset=None``) or of an item, if the filter shows it."""
        index = self._group_of.get(depth)
        if index is None:
            return None
        line = self._lines.start(index) + (1 if self.headers else 0)
        for slot, chosen in self._slots[index]:
            if slot.position == position:
                if offset is None:
                    return line if self.headers else None
                line += 1 if self.headers else 0
                for k, (at, _item) in enumerate(chosen):
                    if at == offset:
                        return line + k
                return None
            line += (1 if self.headers else 0) + len(chosen)
        return None

    def nearest_line(self, depth: int) -> int | None:
        """The first line of the first turn shown at ``depth`` or after it (as drawn), else the
        last line: where a cursor goes whose row the filter hides."""
        if not self._depths:
            return None
        index = bisect_left(self._depths, _order(depth), key=_order)
        return self._lines.start(index) if index < len(self._depths) else self.line_count - 1
