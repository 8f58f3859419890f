"""What each line of the tree pane shows: a layout of a context view, kept up to date cheaply.

The pane draws only the lines on screen, so it needs two answers fast at any size: how many lines
the tree has, and what line ``y`` is. Turns are laid out as blocks (a header, then per slot a
header and its items) whose heights live in a :class:`LineIndex`. When the live context changes,
its journal names the turns that were written, and only those blocks are measured again: an
advance at 100,000 items costs what it costs at 1,000.

During a diff the layout also draws ghosts (:meth:`TreeLayout.set_ghosts`): items the other
side of the diff has and the view lacks, each in the turn and slot it was in, after the
neighbour it followed. Only the turns that hold one are laid out differently.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import add

from engine.context import ContextView, SnapshotContext
from engine.context.nodes import Item, Slot, Turn

from .line_index import LineIndex
from .types import Ghost, RowKind

SYSTEM_SEQ = -1


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the tree: a turn (or the system region), a slot, an item, or a ghost (an
    item the other side of a diff has, drawn where it was: ``item`` is None, a ghost is never
    a command's target)."""

    kind: RowKind
    depth: int
    turn: Turn
    slot: Slot | None = None
    item: Item | None = None
    offset: int | None = None
    collapsed: bool = False
    ghost: Ghost | None = None

    @property
    def node_id(self) -> str:
        if self.ghost is not None:
            return self.ghost.id
        if self.item is not None:
            return self.item.id
        if self.slot is not None:
            return self.slot.id
        return self.turn.id


class _Ghosts:
    """The ghosts drawn among a slot's items (or alone, where the slot is gone): ``lines[i]``
    is the line of ghost ``i`` among them, ``anchors[i]`` the index of the item it follows
    (-1: first), both ascending."""

    __slots__ = ("anchors", "ghosts", "lines")

    def __init__(self, placed: list[tuple[int, Ghost]]) -> None:
        placed.sort(key=lambda pair: pair[0])  # stable: ghosts after one item keep their order
        self.ghosts = [ghost for _anchor, ghost in placed]
        self.anchors = [anchor for anchor, _ghost in placed]
        self.lines = [anchor + 1 + i for i, anchor in enumerate(self.anchors)]

    def line_of_item(self, index: int) -> int:
        return index + bisect_left(self.anchors, index)

    def at(self, line: int) -> Ghost | int:
        """The ghost on ``line``, or the index of the item there."""
        k = bisect_left(self.lines, line)
        if k < len(self.lines) and self.lines[k] == line:
            return self.ghosts[k]
        return line - k


def _sections(turn: Turn, ghosts: list[Ghost]) -> list[tuple[Slot | None, _Ghosts | None]]:
    """The turn's slots in order, each with the ghosts drawn among its items, and a section of
    its own for the ghosts of a slot the turn no longer has (where that slot was)."""
    by_position: dict[int, list[tuple[int, Ghost]]] = {}
    for ghost in ghosts:
        slot = turn.slots.get(ghost.position)
        if slot is None:
            anchor = -1
        elif ghost.after is not None:
            ids = [item.id for item in slot.items]
            anchor = ids.index(ghost.after) if ghost.after in ids else -1
        else:
            anchor = -1 if ghost.same_turn else len(slot.items) - 1
        by_position.setdefault(ghost.position, []).append((anchor, ghost))
    positions = sorted(set(turn.slots) | set(by_position))
    return [
        (turn.slots.get(p), _Ghosts(by_position[p]) if p in by_position else None)
        for p in positions
    ]


class _Block:
    """The lines of one turn: its header, then each slot's header and items (with headers), or
    just its items in canonical order (without); ghosts among them."""

    __slots__ = ("collapsed_slots", "folded", "ghosts", "slots", "starts", "turn")

    def __init__(
        self, turn: Turn, collapsed: set[str], headers: bool, ghosts: list[Ghost] | None = None
    ) -> None:
        self.turn = turn
        self.folded = headers and turn.id in collapsed
        sections: list[tuple[Slot | None, _Ghosts | None]]
        if self.folded:
            sections = []
        elif ghosts:
            sections = _sections(turn, ghosts)
        else:
            sections = [(slot, None) for slot in turn.sorted_slots()]
        self.slots: list[Slot | None] = [slot for slot, _ in sections]  # None: ghosts only
        self.ghosts: list[_Ghosts | None] = [placed for _, placed in sections]
        self.starts: list[int] = []
        self.collapsed_slots: set[str] = set()
        header = 1 if headers else 0
        line = header
        for slot, placed in sections:
            self.starts.append(line)
            extra = len(placed.ghosts) if placed is not None else 0
            if slot is None:
                line += extra
            elif headers and slot.id in collapsed:
                self.collapsed_slots.add(slot.id)
                line += 1
            else:
                line += header + len(slot.items) + extra
        self.starts.append(line)  # one past the end: the block's height

    @property
    def height(self) -> int:
        return self.starts[-1]


def _height(
    turn: Turn, collapsed: set[str], headers: bool, ghosts: list[Ghost] | None = None
) -> int:
    """What ``_Block(turn, …).height`` would be, without building the block (opening a
    100,000-item context measures every turn, but draws only a screenful of them)."""
    if ghosts:  # a few turns, during a diff
        return _Block(turn, collapsed, headers, ghosts).height
    # Counts, not slots: a turn restored packed is not decoded to be measured.
    if not headers:
        return turn.item_count()
    if not collapsed:
        return 1 + turn.slot_count() + turn.item_count()
    if turn.id in collapsed:
        return 1
    slots = turn.slots.values()
    return 1 + sum([1 if slot.id in collapsed else 1 + len(slot.items) for slot in slots])


class TreeLayout:
    """The line layout of one context view; ``sync`` it to the view before reading rows.

    With ``headers=False`` the layout is the provider rendering: one line per item, in the
    order the model reads them.
    """

    def __init__(self, *, headers: bool = True) -> None:
        self.headers = headers
        self.collapsed: set[str] = set()  # ids of folded turns and slots
        self._view: ContextView | None = None
        self._token = 0
        self._turns: list[Turn] = []  # the system region, then the turns oldest first
        self._blocks: dict[int, _Block] = {}  # built when one of their lines is read
        self._lines = LineIndex()
        self._last_seq = SYSTEM_SEQ
        self._ghosts: dict[int, list[Ghost]] = {}  # by the seq of the turn they are drawn in

    # -- keeping up with the view ---------------------------------------------------------------
    def sync(self, view: ContextView) -> None:
        """Bring the layout up to date with ``view`` (the same live context, or another view)."""
        live = view.live()
        if view is self._view and live is not None:
            changed = live.turns_changed_since(self._token)
            if changed is not None:
                self._token = live.journal_token
                self._apply_changes(view, changed)
                return
        if _same_snapshot(view, self._view):
            self._view = view
            return  # a past state never changes
        self._rebuild(view)

    def forget(self) -> None:
        """Start over (another context: its ids mean other nodes)."""
        self.collapsed.clear()
        self._view = None
        self._turns, self._blocks, self._lines = [], {}, LineIndex()
        self._ghosts = {}

    def set_ghosts(self, ghosts: Sequence[Ghost]) -> None:
        """Draw these ghosts (none: no diff) among the rows; only the turns that held or now
        hold one are measured again."""
        grouped: dict[int, list[Ghost]] = {}
        for ghost in ghosts:
            grouped.setdefault(ghost.turn_seq, []).append(ghost)
        if grouped == self._ghosts:
            return
        touched = set(grouped) | set(self._ghosts)
        self._ghosts = grouped
        if self._view is None:
            return
        for seq in touched:
            index = self._index_of_seq(seq)
            if index is not None:
                self._remeasure(index, self._turns[index])

    def _measure(self, index: int, turn: Turn) -> int:
        """The height of ``turn``, the layout's entry ``index`` (a subclass may note more of
        it here: every turn laid out, or laid out again, passes through)."""
        return _height(turn, self.collapsed, self.headers, self._ghosts.get(turn.seq))

    def _rebuild(self, view: ContextView) -> None:
        self._view = view
        live = view.live()
        self._token = live.journal_token if live is not None else 0
        system = view.turn_at(-1)
        assert system is not None
        # The view's own sequence, unpacked in C (iter_turns made a pair of each of 150,000).
        self._turns = [system, *view.turns_oldest_first()]
        self._blocks = {}
        self._lines = LineIndex(self._measure_all(self._turns))
        self._last_seq = self._turns[-1].seq if len(self._turns) > 1 else SYSTEM_SEQ

    def _measure_all(self, turns: list[Turn]) -> Iterable[int]:
        """The heights of every turn (the system region's first), for a layout made anew."""
        collapsed, headers, ghosts = self.collapsed, self.headers, self._ghosts
        if not collapsed and not ghosts:  # as _height, for every turn at once (opening)
            assert self._view is not None
            # In C from a restored context's index (150,000 turns), until a turn is written.
            slots, items = self._view.turn_counts()
            system = _height(turns[0], collapsed, headers, None)
            if not headers:
                return chain((system,), items)
            return chain((system,), map(add, map(add, slots, items), repeat(1)))
        return [_height(turn, collapsed, headers, ghosts.get(turn.seq)) for turn in turns]

    def _apply_changes(self, view: ContextView, seqs: set[int]) -> None:
        turns = list(_new_turns(view, self._last_seq))
        for seq in seqs:
            if seq > self._last_seq:
                continue  # a turn appended since: measured below
            index = self._index_of_seq(seq)
            if index is not None:
                # Depth from the view: turns appended since have pushed the others deeper.
                depth = -1 if index == 0 else view.history_depth + 1 - index
                self._remeasure(index, view.turn_at(depth))
        for turn in turns:
            self._turns.append(turn)
            self._lines.append(self._measure(len(self._turns) - 1, turn))
            self._last_seq = turn.seq

    def _remeasure(self, index: int, turn: Turn | None) -> None:
        assert turn is not None
        self._turns[index] = turn
        self._blocks.pop(index, None)
        self._lines.set(index, self._measure(index, turn))

    def _block(self, index: int) -> _Block:
        block = self._blocks.get(index)
        if block is None:
            turn = self._turns[index]
            ghosts = self._ghosts.get(turn.seq)
            block = self._blocks[index] = _Block(turn, self.collapsed, self.headers, ghosts)
        return block

    def _index_of_seq(self, seq: int) -> int | None:
        if seq == SYSTEM_SEQ:
            return 0
        # Turns are kept oldest first and seqs only grow, so entries 1.. are sorted by seq.
        index = bisect_right(self._turns, seq, lo=1, key=lambda turn: turn.seq) - 1
        if index >= 1 and self._turns[index].seq == seq:
            return index
        return None

    def _depth_of(self, index: int) -> int:
        return -1 if index == 0 else len(self._turns) - 1 - index

    # -- folding ----------------------------------------------------------------------------------
    def toggle(self, row: Row) -> None:
        """Fold or unfold the turn or slot of a header row (items do not fold)."""
        if row.kind in ("item", "ghost"):
            return
        node_id = row.node_id
        if node_id in self.collapsed:
            self.collapsed.discard(node_id)
        else:
            self.collapsed.add(node_id)
        index = self._index_of_seq(row.turn.seq)
        if index is not None:
            self._remeasure(index, self._turns[index])

    def reveal(self, depth: int, position: int | None) -> None:
        """Unfold the turn at ``depth`` (and its slot at ``position``) so a node there shows."""
        index = self._index_of_depth(depth)
        if index is None:
            return
        turn = self._turns[index]
        self.collapsed.discard(turn.id)
        slot = turn.slots.get(position) if position is not None else None
        if slot is not None:
            self.collapsed.discard(slot.id)
        self._remeasure(index, turn)

    def set_all(self, folded: bool) -> None:
        """Fold every history turn (keeping the system region and the active turn open), or
        unfold everything."""
        self.collapsed.clear()
        if folded:
            self.collapsed.update(turn.id for turn in self._turns[1:-1])
        if self._view is not None:
            self._rebuild(self._view)

    # -- reading ----------------------------------------------------------------------------------
    def _catch_up(self) -> None:
        """The live context changes in place, and a key or a scroll may ask for a line before
        the screen has redrawn: answer from the tree as it is, never from stale blocks."""
        view = self._view
        if view is None:
            return
        live = view.live()
        if live is not None and live.journal_token != self._token:
            self.sync(view)

    @property
    def line_count(self) -> int:
        self._catch_up()
        return self._lines.total

    def row(self, line: int) -> Row:
        self._catch_up()
        index, local = self._lines.find(line)
        block = self._block(index)
        depth = self._depth_of(index)
        turn = block.turn
        if self.headers and local == 0:
            kind: RowKind = "system" if index == 0 else "turn"
            return Row(kind, depth, turn, collapsed=block.folded)
        k = bisect_right(block.starts, local) - 1
        slot = block.slots[k]
        within = local - block.starts[k]
        if slot is not None and self.headers:
            if within == 0:
                return Row("slot", depth, turn, slot, collapsed=slot.id in block.collapsed_slots)
            within -= 1
        placed = block.ghosts[k]
        if placed is not None:
            found = placed.at(within)
            if isinstance(found, Ghost):
                return Row("ghost", depth, turn, slot, ghost=found)
            within = found
        assert slot is not None
        item = slot.items[within]
        return Row("item", depth, turn, slot, item, within - slot.core)

    def rows(self, start: int, count: int) -> Iterator[Row]:
        for line in range(max(start, 0), min(start + count, self.line_count)):
            yield self.row(line)

    def _index_of_depth(self, depth: int) -> int | None:
        index = 0 if depth == -1 else len(self._turns) - 1 - depth
        return index if 0 <= index < len(self._turns) else None

    def line_of_turn(self, depth: int) -> int | None:
        index = self._index_of_depth(depth)
        return None if index is None else self._lines.start(index)

    def line_of(self, depth: int, position: int, offset: int | None = None) -> int | None:
        """The line of a slot header (``offset=None``) or of an item, if it is laid out."""
        index = self._index_of_depth(depth)
        if index is None:
            return None
        start = self._lines.start(index)
        block = self._block(index)
        for k, slot in enumerate(block.slots):
            if slot is None or slot.position != position:
                continue
            line = start + block.starts[k]
            if offset is None:
                return line if self.headers else None
            if slot.id in block.collapsed_slots:
                return None
            at = slot.core + offset
            if not 0 <= at < len(slot.items):
                return None
            placed = block.ghosts[k]
            within = placed.line_of_item(at) if placed is not None else at
            return line + within + (1 if self.headers else 0)
        return None

    def line_of_ghost(self, item_id: str) -> int | None:
        """The line of the ghost of ``item_id``, if one is drawn (and not folded away)."""
        for seq, ghosts in self._ghosts.items():
            if not any(ghost.id == item_id for ghost in ghosts):
                continue
            index = self._index_of_seq(seq)
            if index is None:
                return None
            start, block = self._lines.start(index), self._block(index)
            for k, placed in enumerate(block.ghosts):
                slot = block.slots[k]
                if placed is None or (slot is not None and slot.id in block.collapsed_slots):
                    continue
                for ghost, line in zip(placed.ghosts, placed.lines, strict=True):
                    if ghost.id == item_id:
                        header = 1 if self.headers and slot is not None else 0
                        return start + block.starts[k] + header + line
        return None


def _same_snapshot(a: ContextView | None, b: ContextView | None) -> bool:
    return (
        isinstance(a, SnapshotContext)
        and isinstance(b, SnapshotContext)
        and a.snapshot is b.snapshot
    )


def _new_turns(view: ContextView, last_seq: int) -> Iterator[Turn]:
    """Turns appended after ``last_seq`` (they are at the young end), oldest first."""
    young: list[Turn] = []
    depth = 0
    while True:
        turn = view.turn_at(depth)
        if turn is None or turn.seq <= last_seq:
            break
        young.append(turn)
        depth += 1
    return reversed(young)
