"""The section outline: the document's section tree, one line per section, with what a
custodian looks for at a glance: version, lock (holder and a live countdown), classification,
pending proposals, conflict and escalation marks, and the highest salience."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style

from engine.visible import visible

from ..doc_time import duration
from ..types import DocShown
from .rows import RowList


@dataclass(frozen=True, slots=True)
class OutlineRow:
    key: str  # the section's id
    title: str
    level: int
    version: int
    classification: str | None
    lock_holder: str | None  # its kind and name: "agent legal", "human carol"
    lock_until_ms: int | None  # None with a holder: a human's lock, held until unlocked
    pending: int
    conflict: bool
    escalated: bool
    salience: int


def outline_rows(shown: DocShown) -> list[OutlineRow]:
    """The sections the reader sees, as rows (``engine.protocol.views.section_rows``)."""
    from engine.protocol.model import who
    from engine.protocol.views import section_rows

    rows = []
    for found in section_rows(shown.doc, shown.reader, shown.now_ms):
        lock = found["lock"]
        rows.append(
            OutlineRow(
                key=found["sectionId"],
                title=found["title"],
                level=found["level"],
                version=found["version"],
                classification=found["classification"],
                lock_holder=who(lock["holder"], lock["holderKind"]) if lock else None,
                lock_until_ms=lock["expiresAt"] if lock else None,
                pending=found["pending"],
                conflict=found["conflict"],
                escalated=found["escalated"],
                salience=found["maxSalience"],
            )
        )
    return rows


def countdown(until_ms: int, now_ms: int) -> str:
    """The time left until ``until_ms`` (a part of a second counts as one; never negative), as
    every duration is shown (``doc_time.duration``): ``42s``, ``3m05s``, ``23h52m``."""
    return duration((until_ms - now_ms + 999) // 1000)


class SectionOutline(RowList[DocShown, OutlineRow]):
    """One line per section: ``§`` title, then its marks on the right."""

    DEFAULT_CSS = """
    SectionOutline { border: round $panel; border-title-color: $text-muted; }
    SectionOutline:focus { border: round $accent; }
    SectionOutline > .rows--cursor { background: $accent 40%; }
    SectionOutline > .rows--cursor-blurred { background: $accent 20%; }
    SectionOutline > .rows--dim { color: $text-muted; }
    SectionOutline > .rows--warn { color: $warning; }
    SectionOutline > .rows--alert { color: $error; text-style: bold; }
    SectionOutline > .rows--good { color: $success; }
    """
    BORDER_TITLE: ClassVar[str] = "sections"

    def rows_of(self, shown: DocShown) -> Sequence[OutlineRow]:
        return outline_rows(shown)

    def render_row(self, row: OutlineRow, width: int) -> list[Segment]:
        now = self.shown.now_ms if self.shown is not None else 0
        dim, warn, alert = (self.style_of(f"rows--{c}") for c in ("dim", "warn", "alert"))
        indent = "  " * max(0, row.level - 1)
        title = visible(row.title) if row.level else "(before the first heading)"
        marks: list[tuple[str, Style | None]] = [(f" v{row.version}", dim)]
        if row.classification:
            marks.append((f" [{visible(row.classification)}]", warn))
        if row.lock_holder is not None:
            held = "held" if row.lock_until_ms is None else countdown(row.lock_until_ms, now)
            marks.append((f" locked: {visible(row.lock_holder)} {held}", warn))
        if row.pending:
            marks.append((f" {row.pending} pending", None))
        if row.conflict:
            marks.append((" ⚔ conflict", alert))
        if row.escalated:
            marks.append((" ⚑ escalated", alert))
        marks.append((f" S{row.salience}", dim))
        right = sum(cell_len(text) for text, _ in marks)
        left = set_cell_size(f"{indent}{title}", max(1, width - right - 1)).rstrip()
        return [
            Segment(left),
            Segment(" " * max(1, width - cell_len(left) - right)),
            *(Segment(text, style) for text, style in marks),
        ]
