"""The changelog pane: what the steps of the position shown did, one line per change.

Bound to the screen's ``account`` (:class:`~pact_tui.types.Account`, read from the engine's
changelogs in a worker). Each step is a title line (``snapshot n64 (episode 6): 2 events since
snapshot n61``), then a line per change: its glyph and kind, its coordinates before → after,
its key (or type), the start of its text and the reason's figures; an ODI mass move is one line
(the items it lists, when few, under it). Enter on a change says ``Selected``: the screen puts
the tree's cursor on that item, if the view shown has it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style

from engine.context.changelog import ChangeEntry, format_coords
from engine.visible import visible

from ..text import plain
from ..types import Account
from .rows import RowList

LineKind = Literal["step", "entry", "shift", "quiet", "problem"]

GLYPHS = {  # the diff's glyphs where they mean the same
    "inserted": "+",
    "deleted": "−",
    "replaced": "~",
    "expired": "−",
    "rehydrated": "↻",
    "moved": "↓",
    "stage": "~",
    "turn_removed": "−",
}
STYLES = {"+": "rows--good", "−": "rows--alert", "~": "rows--warn", "↻": "rows--good"}


@dataclass(frozen=True, slots=True)
class ChangeLine:
    """One line of the pane: a step's title, a change, a mass move, or a word about none."""

    key: str
    kind: LineKind
    text: str = ""  # a title, a mass move, "no changes", a problem
    entry: ChangeEntry | None = None
    indent: bool = False  # an item a mass move lists

    @property
    def item_id(self) -> str | None:
        """The item the line is about (None: a title, a mass move, a removed turn)."""
        entry = self.entry
        return entry.id if entry is not None and entry.kind != "turn_removed" else None


def glyph_of(entry: ChangeEntry) -> str:
    if entry.kind == "stage" and entry.ended:
        return "−"
    return GLYPHS.get(entry.kind, "·")


def change_lines(account: Account) -> list[ChangeLine]:
    """The pane's lines for ``account``: per step, its title, then its changes in order."""
    if account.problem is not None:
        return [ChangeLine("problem", "problem", f"cannot read the changelog: {account.problem}")]
    lines: list[ChangeLine] = []
    for number, step in enumerate(account.steps):
        lines.append(ChangeLine(f"{number}", "step", step.title()))
        if not any(step.changelogs):
            lines.append(ChangeLine(f"{number}.-", "quiet", "no changes"))
        for event in step.events:
            log, at = event.changelog, f"{number}.{event.stream_seq}"
            for k, entry in enumerate(log.entries):
                lines.append(ChangeLine(f"{at}.{k}", "entry", entry=entry))
            for k, shift in enumerate(log.shifts):
                lines.append(ChangeLine(f"{at}.s{k}", "shift", shift.line()))
                for j, moved in enumerate(shift.listed):
                    lines.append(ChangeLine(f"{at}.s{k}.{j}", "entry", entry=moved, indent=True))
    return lines


class ChangelogList(RowList[Account, ChangeLine]):
    """The full account of the position shown, following it (live, or ``[``/``]``)."""

    DEFAULT_CSS = """
    ChangelogList {
        height: 30%; min-height: 5; border: round $panel; display: none;
        background: $surface; scrollbar-size-vertical: 1; overflow-x: hidden;
    }
    ChangelogList:focus { border: round $accent; }
    ChangelogList > .rows--cursor { background: $accent 40%; }
    ChangelogList > .rows--cursor-blurred { background: $accent 20%; }
    ChangelogList > .rows--dim { color: $muted; }
    ChangelogList > .rows--warn { color: $warning; }
    ChangelogList > .rows--alert { color: $error; text-style: bold; }
    ChangelogList > .rows--good { color: $success; }
    ChangelogList > .rows--span { text-style: bold; color: $accent; }
    """

    TITLE: ClassVar[str] = "changes"

    def rows_of(self, shown: Account) -> Sequence[ChangeLine]:
        return change_lines(shown)

    def watch_shown(self) -> None:
        super().watch_shown()
        account = self.shown
        where = "live" if account is None or account.at is None else account.at
        self.border_title = plain(f"{self.TITLE} · {where} · Enter: go to the item")

    def render_row(self, row: ChangeLine, width: int) -> list[Segment]:
        s = self.style_of
        if row.kind == "step":
            return [Segment(visible(row.text), s("rows--span"))]
        if row.kind == "shift":
            return [Segment("↓ ", s("rows--warn")), Segment(visible(row.text), s("rows--warn"))]
        if row.kind != "entry" or row.entry is None:
            style = s("rows--alert") if row.kind == "problem" else s("rows--dim")
            return [Segment(visible(row.text), style)]
        entry = row.entry
        glyph = glyph_of(entry)
        sign = s(STYLES[glyph]) if glyph in STYLES else s("rows--dim")
        where = f"{format_coords(entry.before)} → {format_coords(entry.after)}"
        name = f"#{visible(entry.key)}" if entry.key is not None else visible(entry.node_type)
        reasons = entry.reasons()
        parts: list[tuple[str, Style | None]] = [
            ("   " if row.indent else " ", None),
            (f"{glyph} ", sign),
            (f"{entry.kind:<10} ", sign),
            (f"{where:<16} ", None),
            (f"{name} ", s("rows--warn")),
        ]
        if reasons:
            parts.append((f"({visible(reasons)}) ", None))
        parts.append((visible(json.dumps(entry.preview, ensure_ascii=False)), s("rows--dim")))
        out: list[Segment] = []
        room = width
        for text, part_style in parts:  # what does not fit is cut, the last part first
            if room <= 0:
                break
            if cell_len(text) > room:
                text = set_cell_size(text, room - 1) + "…"
            out.append(Segment(text, part_style))
            room -= cell_len(text)
        return out
