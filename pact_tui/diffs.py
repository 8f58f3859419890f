"""Diffs of section content for people: unified or side by side, with the words that changed
inside a changed line highlighted.

Both are built on :class:`difflib.SequenceMatcher`: lines are matched first; a replaced block
pairs its lines one to one, and each pair is matched again on words (``WORD``: runs of word
characters, runs of spaces, and single other characters), so ``$1.2M`` → ``$1.1M`` marks the
number, not the line. The result is data (``DiffLine``, ``SideRow``, ``Hunk``), drawn by the
caller.

A long section changed in one place is shown as its ``hunks``: the changes with ``CONTEXT``
unchanged lines around each (``SequenceMatcher.get_grouped_opcodes``, what ``diff -u`` shows),
so what is drawn grows with the change, not with the section. ``hunks`` is cached: the detail
pane asks again at every clock tick for the same texts.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import zip_longest
from typing import Literal

from engine.protocol.merge import LineMatcher

CONTEXT = 3  # unchanged lines kept around a change, as diff -u does
WORD = re.compile(r"\w+|\s+|[^\w\s]")
LineTag = Literal["same", "removed", "added"]
Span = tuple[str, bool]  # a piece of a line, and whether it changed


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a unified diff: its tag, its line number on each side, its text and, for a
    changed line paired with one on the other side, that line (``partner``)."""

    tag: LineTag
    old: int | None  # 1-based, on the base side
    new: int | None  # 1-based, on the proposed side
    text: str
    partner: str | None = None

    @property
    def spans(self) -> tuple[Span, ...]:
        """The line's pieces, each marked changed or not: the words that differ from its
        partner's, the whole line if it has none. Matched when first asked for (a rewrite of
        a long section is drawn a screenful at a time)."""
        if self.tag == "same":
            return ((self.text, False),)
        if self.partner is None:
            return ((self.text, True),)
        if self.tag == "removed":
            return word_spans(self.text, self.partner)[0]
        return word_spans(self.partner, self.text)[1]


@dataclass(frozen=True, slots=True)
class SideRow:
    """One row of a side-by-side diff: the base line on the left, the proposed on the right
    (None: nothing on that side)."""

    left: DiffLine | None
    right: DiffLine | None


def without_separator(content: str) -> str:
    """A section's content without the blank lines it ends with: the blank line that keeps a
    section apart from the next one is the document's, not the section's text. A section read
    from Markdown keeps it; a proposal's content need not hold it, and merging puts it back
    (``engine.protocol.decide.parts_for``). A proposal is diffed against its base without it,
    or every diff would remove a blank line that the merge keeps."""
    return content.rstrip("\n")


def _lines(text: str) -> list[str]:
    return text.splitlines()


@lru_cache(maxsize=1024)  # a few screenfuls of changed lines
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


Block = tuple[list[DiffLine], list[DiffLine]]


def _blocks(base: str, proposed: str) -> list[Block]:
    """The diff as blocks of (base lines, proposed lines): equal blocks have both, the same;
    a changed block pairs its lines and highlights their words."""
    a, b = _lines(base), _lines(proposed)
    matcher = LineMatcher(a, b)
    return _blocks_of(a, b, matcher.get_opcodes())


def _blocks_of(
    a: list[str], b: list[str], opcodes: Sequence[tuple[str, int, int, int, int]]
) -> list[Block]:
    blocks: list[Block] = []
    for op, i1, i2, j1, j2 in opcodes:
        if op == "equal":
            same = [
                DiffLine("same", i + 1, j + 1, a[i])
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
            blocks.append((same, same))
            continue
        removed: list[DiffLine] = []
        added: list[DiffLine] = []
        for i, j in zip_longest(range(i1, i2), range(j1, j2)):
            if i is not None and j is not None:
                removed.append(DiffLine("removed", i + 1, None, a[i], b[j]))
                added.append(DiffLine("added", None, j + 1, b[j], a[i]))
            elif i is not None:
                removed.append(DiffLine("removed", i + 1, None, a[i]))
            elif j is not None:
                added.append(DiffLine("added", None, j + 1, b[j]))
        blocks.append((removed, added))
    return blocks


def _unified(blocks: list[Block]) -> list[DiffLine]:
    out: list[DiffLine] = []
    for removed, added in blocks:
        out.extend(removed)
        if added is not removed:
            out.extend(added)
    return out


def _side_rows(blocks: list[Block]) -> list[SideRow]:
    rows: list[SideRow] = []
    for removed, added in blocks:
        rows.extend(SideRow(left, right) for left, right in zip_longest(removed, added))
    return rows


def unified(base: str, proposed: str) -> list[DiffLine]:
    """Every line of both texts in order: kept, then for each change the removed lines before
    the added ones."""
    return _unified(_blocks(base, proposed))


def side_by_side(base: str, proposed: str) -> list[SideRow]:
    """Rows of (base line, proposed line); a change pairs its lines, the longer side's extra
    lines facing nothing."""
    return _side_rows(_blocks(base, proposed))


@dataclass(frozen=True, slots=True)
class Hunk:
    """One change (or changes close together) with the unchanged lines around it: the base's
    lines ``old_start``… (``old_count`` of them) became the proposed ``new_start``…, 1-based
    as in a unified diff's ``@@ -old_start,old_count +new_start,new_count @@``."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[DiffLine, ...]  # unified order
    rows: tuple[SideRow, ...]  # side by side

    @property
    def header(self) -> str:
        """``@@ -old +new @@`` as ``diff -u`` writes it (a count of 1 is left out)."""
        old = _range(self.old_start, self.old_count)
        return f"@@ -{old} +{_range(self.new_start, self.new_count)} @@"


def _range(start: int, count: int) -> str:
    return str(start) if count == 1 else f"{start},{count}"


@lru_cache(maxsize=16)  # the proposal shown and its conflict's sides: a handful
def hunks(base: str, proposed: str, context: int = CONTEXT) -> tuple[Hunk, ...]:
    """The changes from ``base`` to ``proposed``, each with ``context`` unchanged lines around
    it; hunks closer than twice that are one. Texts of the same lines have none (they may
    still differ in how their lines end)."""
    a, b = _lines(base), _lines(proposed)
    if a == b:
        return ()
    matcher = LineMatcher(a, b)
    out: list[Hunk] = []
    for group in matcher.get_grouped_opcodes(context):
        blocks = _blocks_of(a, b, group)
        (_, i1, _, j1, _), (_, _, i2, _, j2) = group[0], group[-1]
        # An empty range starts at the line before it, as in diff -u.
        out.append(
            Hunk(
                i1 + 1 if i2 > i1 else i1,
                i2 - i1,
                j1 + 1 if j2 > j1 else j1,
                j2 - j1,
                tuple(_unified(blocks)),
                tuple(_side_rows(blocks)),
            )
        )
    return tuple(out)


def changed(lines: list[DiffLine]) -> tuple[int, int]:
    """How many lines were removed and added."""
    return (
        sum(line.tag == "removed" for line in lines),
        sum(line.tag == "added" for line in lines),
    )
