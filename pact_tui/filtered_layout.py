"""Filter mode's rows: only what a selector matched, under the headers of its turns and slots.

A :class:`FilteredLayout` reads like a :class:`~pact_tui.tree_layout.TreeLayout` (``line_count``,
``row``, ``line_of``, ``line_of_turn``) so the panes draw and walk it the same way. It is made
once per selection, in one pass over the matches (which come in canonical order, the order the
tree draws): a line is an entry in three flat lists (its slot, its item, its offset), so that
16,000 matches cost 50,000 list entries, not 50,000 objects for the collector to walk, and a row
is made only when it is drawn. Folding does not apply while filtering: every match shows.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from engine.context.query import canonical_key

from .tree_layout import Row

if TYPE_CHECKING:
    from engine.context import ContextView, Node
    from engine.context.nodes import Item, Slot, Turn


def _order(depth: int) -> tuple[bool, int]:
    """Where a turn is drawn: the system region first, then the deepest turn down to d0."""
    return (depth != -1, -depth)


class _OutOfOrder(Exception):
    """The matches did not come in canonical order: lay them out sorted."""


class FilteredLayout:
    """The rows of ``nodes`` in ``view``: each matched item (and matched slot or turn), with
    the headers of the turns and slots above it (``headers``), or the matched items alone in
    the order the model reads them (the provider view)."""

    def __init__(self, view: ContextView, nodes: Sequence[Node], *, headers: bool = True) -> None:
        self.headers = headers
        self.collapsed: set[str] = set()  # nothing folds while filtering
        try:
            self._lay_out(view, nodes)
        except _OutOfOrder:
            self._lay_out(view, sorted(nodes, key=canonical_key))

    def _lay_out(self, view: ContextView, nodes: Iterable[Node]) -> None:
        headers = self.headers
        # One entry per line: the slot (None on a turn's header), the item (None on a header),
        # the item's offset; and per turn shown, its depth, the turn and its first line.
        slots: list[Slot | None] = []
        items: list[Item | None] = []
        offsets: list[int] = []
        depths: list[int] = []
        turns: list[Turn] = []
        starts: list[int] = []
        depth_now: int | None = None
        turn: Turn | None = None
        slot: Slot | None = None
        last_offset = 0
        for node in nodes:
            depth = node.depth
            if depth is None:
                continue
            if depth != depth_now:
                # Drawn first: the system region (-1), then the deepest turn up to d0.
                if depth_now is not None and (depth == -1 or -1 != depth_now < depth):
                    raise _OutOfOrder
                depth_now, slot = depth, None
                turn = view.turn_at(depth)
                if turn is None:
                    continue
                depths.append(depth)
                turns.append(turn)
                starts.append(len(slots))
                if headers:
                    slots.append(None)
                    items.append(None)
                    offsets.append(0)
            if turn is None:
                continue  # a depth the view does not have
            position = node.position
            if position is None:
                continue  # a turn: its header alone
            if slot is None or position != slot.position:
                if slot is not None and position < slot.position:
                    raise _OutOfOrder
                found = turn.slots.get(position)
                if found is None:
                    continue
                slot, last_offset = found, -(1 << 62)
                if headers:
                    slots.append(slot)
                    items.append(None)
                    offsets.append(0)
            assert slot is not None
            offset = node.offset
            if offset is None or offset == last_offset:
                continue  # a slot: its header alone (or the same item twice)
            if offset < last_offset:
                raise _OutOfOrder
            item = node.item  # the node was made from this view (RowFilter.shown says so)
            if item is not None:
                slots.append(slot)
                items.append(item)
                offsets.append(offset)
                last_offset = offset
        if not headers:  # the provider view: turns without a matched item have no line
            ends = [*starts[1:], len(slots)]
            kept = [k for k in range(len(starts)) if ends[k] > starts[k]]
            depths = [depths[k] for k in kept]
            turns = [turns[k] for k in kept]
            starts = [starts[k] for k in kept]
        self._slots, self._items, self._offsets = slots, items, offsets
        self._depths, self._turns, self._starts = depths, turns, starts
        self._group_of = {depth: k for k, depth in enumerate(depths)}

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
        return len(self._slots)

    @property
    def item_count(self) -> int:
        """How many matched items are shown."""
        return len(self._items) - self._items.count(None)

    def row(self, line: int) -> Row:
        if not 0 <= line < len(self._slots):
            raise IndexError(f"line {line} is past the last line ({self.line_count - 1})")
        group = bisect_right(self._starts, line) - 1
        depth, turn = self._depths[group], self._turns[group]
        slot, item = self._slots[line], self._items[line]
        if slot is None:
            return Row("system" if depth == -1 else "turn", depth, turn)
        if item is None:
            return Row("slot", depth, turn, slot)
        return Row("item", depth, turn, slot, item, self._offsets[line])

    def _lines_of(self, depth: int) -> range | None:
        group = self._group_of.get(depth)
        if group is None:
            return None
        end = self._starts[group + 1] if group + 1 < len(self._starts) else len(self._slots)
        return range(self._starts[group], end)

    def line_of_turn(self, depth: int) -> int | None:
        lines = self._lines_of(depth)
        return None if lines is None else lines.start

    def line_of(self, depth: int, position: int, offset: int | None = None) -> int | None:
        """The line of a slot header (``offset=None``) or of an item, if the filter shows it."""
        lines = self._lines_of(depth)
        if lines is None or (offset is None and not self.headers):
            return None
        for line in lines:  # a turn's matches: few enough to walk
            slot = self._slots[line]
            if slot is None or slot.position != position:
                continue
            is_item = self._items[line] is not None
            if offset is None and not is_item:
                return line
            if offset is not None and is_item and self._offsets[line] == offset:
                return line
        return None

    def nearest_line(self, depth: int) -> int | None:
        """The first line of the first turn shown at ``depth`` or after it (as drawn), else of
        the last turn shown: where a cursor goes whose row the filter hides."""
        if not self._depths:
            return None
        index = bisect_left(self._depths, _order(depth), key=_order)
        return self._starts[min(index, len(self._depths) - 1)]
