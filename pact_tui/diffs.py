"""Diffs of section content for people: unified or side by side, with the words that changed
inside a changed line highlighted.

Both are built on :class:`difflib.SequenceMatcher`: lines are matched first; a replaced block
pairs its lines one to one, and each pair is matched again on words (``WORD``: runs of word
characters, runs of spaces, and single other characters), so ``$1.2M`` → ``$1.1M`` marks the
number, not the line. The result is data (``DiffLine``, ``SideRow``), drawn by the caller.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from itertools import zip_longest
from typing import Literal

WORD = re.compile(r"\w+|\s+|[^\w\s]")
LineTag = Literal["same", "removed", "added"]
Span = tuple[str, bool]  # a piece of a line, and whether it changed


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a unified diff: its tag, its line number on each side, and its pieces."""

    tag: LineTag
    old: int | None  # 1-based, on the base side
    new: int | None  # 1-based, on the proposed side
    spans: tuple[Span, ...]

    @property
    def text(self) -> str:
        return "".join(text for text, _ in self.spans)


@dataclass(frozen=True, slots=True)
class SideRow:
    """One row of a side-by-side diff: the base line on the left, the proposed on the right
    (None: nothing on that side)."""

    left: DiffLine | None
    right: DiffLine | None


def _lines(text: str) -> list[str]:
    return text.splitlines()


def word_spans(old: str, new: str) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    """The pieces of ``old`` and of ``new``, each marked changed or not, word by word."""
    a, b = WORD.findall(old), WORD.findall(new)
    left: list[Span] = []
    right: list[Span] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        changed = op != "equal"
        if i2 > i1:
            left.append(("".join(a[i1:i2]), changed))
        if j2 > j1:
            right.append(("".join(b[j1:j2]), changed))
    return tuple(left), tuple(right)


def _blocks(base: str, proposed: str) -> list[tuple[list[DiffLine], list[DiffLine]]]:
    """The diff as blocks of (base lines, proposed lines): equal blocks have both, the same;
    a changed block pairs its lines and highlights their words."""
    a, b = _lines(base), _lines(proposed)
    blocks: list[tuple[list[DiffLine], list[DiffLine]]] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            same = [
                DiffLine("same", i + 1, j + 1, ((a[i], False),))
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
            blocks.append((same, same))
            continue
        removed: list[DiffLine] = []
        added: list[DiffLine] = []
        for i, j in zip_longest(range(i1, i2), range(j1, j2)):
            if i is not None and j is not None:
                left, right = word_spans(a[i], b[j])
                removed.append(DiffLine("removed", i + 1, None, left))
                added.append(DiffLine("added", None, j + 1, right))
            elif i is not None:
                removed.append(DiffLine("removed", i + 1, None, ((a[i], True),)))
            elif j is not None:
                added.append(DiffLine("added", None, j + 1, ((b[j], True),)))
        blocks.append((removed, added))
    return blocks


def unified(base: str, proposed: str) -> list[DiffLine]:
    """Every line of both texts in order: kept, then for each change the removed lines before
    the added ones."""
    out: list[DiffLine] = []
    for removed, added in _blocks(base, proposed):
        if removed is added:
            out.extend(removed)
        else:
            out.extend(removed)
            out.extend(added)
    return out


def side_by_side(base: str, proposed: str) -> list[SideRow]:
    """Rows of (base line, proposed line); a change pairs its lines, the longer side's extra
    lines facing nothing."""
    rows: list[SideRow] = []
    for removed, added in _blocks(base, proposed):
        rows.extend(SideRow(left, right) for left, right in zip_longest(removed, added))
    return rows


def changed(lines: list[DiffLine]) -> tuple[int, int]:
    """How many lines were removed and added."""
    return (
        sum(line.tag == "removed" for line in lines),
        sum(line.tag == "added" for line in lines),
    )
