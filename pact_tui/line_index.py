"""Prefix sums over line counts that change one entry at a time (a Fenwick tree).

The tree pane lays out thousands of turns, each a few lines tall. Scrolling asks "which turn
holds line y?" and "where does turn i start?"; an advance changes the height of a handful of
turns. Both are O(log n) here, where a plain list of prefix sums would cost O(n) per change.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from itertools import accumulate


class LineIndex:
    __slots__ = ("_sizes", "_tree")

    def __init__(self, sizes: Iterable[int] = ()) -> None:
        # Arrays, not lists: the collector does not track them (a list of 33,000 ints is
        # walked entry by entry by every full collection).
        self._sizes = array("q", sizes)
        # Linear-time construction: node i holds the sum of the sizes in (i - lowbit(i), i],
        # that is the prefix sums' difference at i and at i & (i - 1).
        prefix = [0, *accumulate(self._sizes)]
        self._tree = array("q", [prefix[i] - prefix[i & (i - 1)] for i in range(len(prefix))])

    def __len__(self) -> int:
        return len(self._sizes)

    @property
    def total(self) -> int:
        return self.start(len(self._sizes))

    def start(self, index: int) -> int:
        """The first line of entry ``index`` (the sum of the sizes before it)."""
        total, i, tree = 0, index, self._tree
        while i > 0:
            total += tree[i]
            i &= i - 1
        return total

    def size(self, index: int) -> int:
        return self._sizes[index]

    def set(self, index: int, size: int) -> None:
        delta = size - self._sizes[index]
        if delta == 0:
            return
        self._sizes[index] = size
        i, tree = index + 1, self._tree
        while i < len(tree):
            tree[i] += delta
            i += i & -i

    def append(self, size: int) -> None:
        index = len(self._sizes) + 1  # 1-based position of the new node
        # The new node covers (index - lowbit, index]: its own size plus the entries before it.
        covered = self.start(index - 1) - self.start(index - (index & -index))
        self._sizes.append(size)
        self._tree.append(covered + size)

    def find(self, line: int) -> tuple[int, int]:
        """``(entry, line within it)`` for ``0 <= line < total``."""
        tree = self._tree
        position, remaining = 0, line
        step = 1 << (len(tree) - 1).bit_length()
        while step:
            nxt = position + step
            if nxt < len(tree) and tree[nxt] <= remaining:
                position = nxt
                remaining -= tree[nxt]
            step >>= 1
        if position >= len(self._sizes):
            raise IndexError(f"line {line} is past the last line ({self.total - 1})")
        return position, remaining
