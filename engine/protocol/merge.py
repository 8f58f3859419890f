"""Three-way line merge (the ``merge-both`` strategy) and unified diffs of section content.

The merge is :class:`merge3.Merge3` over lines (a line ends at ``"\\n"`` and keeps it): changes on
one side only are taken, changes both sides made alike are taken once, and where the two sides
changed the same base lines differently the hunk is an :class:`Overlap`, written into the merged
text between git-style markers with the base in the middle (diff3 style) so a custodian sees all
three::

    <<<<<<< ours
    our lines
    ||||||| base
    the base lines
    =======
    their lines
    >>>>>>> theirs

A hunk whose last line has no ``"\\n"`` (the end of a text) gets one inside the markers, so each
marker stays on a line of its own. The diff is :func:`difflib.unified_diff`.

Two texts' lines are matched by :class:`LineMatcher` (``difflib.SequenceMatcher`` with the
common first and last lines set aside, as ``git diff`` does): the custodian's diffs
(``pact_tui.diffs``) and :func:`removed_lines`, which says how much of a section a proposal
removes (the guard on destructive merges, ``docs/protocol.md``), match alike.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

import merge3

Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]


@dataclass(frozen=True, slots=True)
class Overlap:
    """A hunk both sides changed differently."""

    base: str
    """The base lines of the hunk."""
    ours: str
    """What side A (ours) made of them."""
    theirs: str
    """What side B (theirs) made of them."""
    line: int
    """0-based line of the merged text where the hunk's ``<<<<<<<`` marker sits."""


@dataclass(frozen=True, slots=True)
class MergeResult:
    """A merged text and the hunks that overlapped in it."""

    text: str
    """The merged text, overlapping hunks written between markers."""
    overlaps: list[Overlap]
    """The overlapping hunks in text order; empty when the merge is clean."""

    @property
    def clean(self) -> bool:
        """Whether both sides' changes merged without an overlap."""
        return not self.overlaps


def merge_three(
    base: str,
    ours: str,
    theirs: str,
    *,
    ours_name: str = "ours",
    theirs_name: str = "theirs",
) -> MergeResult:
    """Merge the changes ``base -> ours`` and ``base -> theirs``, line by line."""
    base_lines, our_lines, their_lines = _lines(base), _lines(ours), _lines(theirs)
    merged: list[str] = []
    overlaps: list[Overlap] = []
    regions = merge3.Merge3(base_lines, our_lines, their_lines).merge_regions()
    for region in regions:
        if region[0] == "conflict":
            _, base_start, base_end, our_start, our_end, their_start, their_end = region
            hunk_base = base_lines[base_start:base_end]
            hunk_ours = our_lines[our_start:our_end]
            hunk_theirs = their_lines[their_start:their_end]
            overlaps.append(
                Overlap("".join(hunk_base), "".join(hunk_ours), "".join(hunk_theirs), len(merged))
            )
            merged.append(f"<<<<<<< {_one_line(ours_name)}\n")
            merged.extend(_terminated(hunk_ours))
            merged.append("||||||| base\n")
            merged.extend(_terminated(hunk_base))
            merged.append("=======\n")
            merged.extend(_terminated(hunk_theirs))
            merged.append(f">>>>>>> {_one_line(theirs_name)}\n")
        else:
            kind, start, end = region
            source = (
                base_lines if kind == "unchanged" else their_lines if kind == "b" else our_lines
            )
            merged.extend(source[start:end])
    return MergeResult("".join(merged), overlaps)


def unified_diff(old: str, new: str, *, old_name: str = "before", new_name: str = "after") -> str:
    """The unified diff from ``old`` to ``new`` (``""`` when they are equal). A last line without
    ``"\\n"`` is marked ``\\ No newline at end of file``, as ``diff`` and git do."""
    out = []
    for line in difflib.unified_diff(_lines(old), _lines(new), fromfile=old_name, tofile=new_name):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


class LineMatcher(difflib.SequenceMatcher[str]):
    """A ``SequenceMatcher`` of lines that sets the texts' common first and last lines aside
    before matching the rest, as ``git diff`` does: one line changed in a long section is
    found at once, however many times its neighbours repeat (blank lines, list markers that
    ``autojunk`` would otherwise treat as noise and so miss)."""

    def __init__(self, a: list[str], b: list[str]) -> None:
        shorter = min(len(a), len(b))
        head = 0
        while head < shorter and a[head] == b[head]:
            head += 1
        tail = 0
        while tail < shorter - head and a[-1 - tail] == b[-1 - tail]:
            tail += 1
        self.head, self.tail, self.sizes = head, tail, (len(a), len(b))
        super().__init__(None, a[head : len(a) - tail], b[head : len(b) - tail])

    def get_opcodes(self) -> list[Opcode]:
        head, tail, (size_a, size_b) = self.head, self.tail, self.sizes
        codes: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
        codes.extend(
            (op, i1 + head, i2 + head, j1 + head, j2 + head)
            for op, i1, i2, j1, j2 in super().get_opcodes()
        )
        if tail:
            codes.append(("equal", size_a - tail, size_a, size_b - tail, size_b))
        return codes


def removed_lines(base: str, proposed: str) -> tuple[int, int]:
    """How many of ``base``'s lines ``proposed`` removes, and how many it has: its non-blank
    lines (blank lines only space Markdown out), matched with ``proposed``'s by
    :class:`LineMatcher`. In each block that changed, the base lines beyond the number of
    proposed lines there are removed: a line replaced by another is changed, not removed."""
    a = [line for line in base.split("\n") if line.strip()]
    b = [line for line in proposed.split("\n") if line.strip()]
    removed = sum(
        max(0, (i2 - i1) - (j2 - j1))
        for op, i1, i2, j1, j2 in LineMatcher(a, b).get_opcodes()
        if op != "equal"
    )
    return removed, len(a)


def _lines(text: str) -> list[str]:
    """Lines ending at ``"\\n"`` and keeping it (str.splitlines would also split at ``"\\r"``,
    ``"\\x0b"``, ``"\\u2028"`` and others, which Markdown does not treat as line ends)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _terminated(lines: list[str]) -> list[str]:
    if lines and not lines[-1].endswith("\n"):
        return [*lines[:-1], lines[-1] + "\n"]
    return lines


def _one_line(name: str) -> str:
    return " ".join(name.split())
