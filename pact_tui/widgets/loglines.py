"""The master-log screen's lists, each a ``RowList`` bound to the screen's ``LogShown``.

- ``LogList``: the master log, the views and the branches, with their references counted by
  status (``✓`` ok, ``✗`` not).
- ``LogLines``: the lines of one log (``log_name``), made as they are drawn, so a master log of
  millions of lines costs only the screenful in sight: line, role, time, size, the first line,
  and the marks of the references the line holds. ``span`` highlights a byte range's lines.
- ``HitList``: what the search found, newest first, each match marked in its snippet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.reactive import var

from engine.masterlog.catalogue import MARK, Hit
from engine.masterlog.verify import Status
from engine.visible import visible

from ..logsession import LineRow, LogEntry, LogSession
from ..text import plain
from ..types import LogShown
from .rows import LazyRows, RowList

OK, NOT_OK, UNCHECKED = "✓", "✗", "…"
STUB_MARK = "⌀"  # a Phase 0 stub's line: a stale tool output pruned, no byte range

ROW_CSS = """
{cls} {{ border: round $panel; border-title-color: $text-muted; }}
{cls}:focus {{ border: round $accent; }}
{cls} > .rows--cursor {{ background: $accent 40%; }}
{cls} > .rows--cursor-blurred {{ background: $accent 20%; }}
{cls} > .rows--dim {{ color: $muted; }}
{cls} > .rows--warn {{ color: $warning; }}
{cls} > .rows--alert {{ color: $error; text-style: bold; }}
{cls} > .rows--good {{ color: $success; }}
{cls} > .rows--span {{ background: $warning 25%; }}
"""


def size_text(chars: int) -> str:
    """A message's length in characters, in at most five cells: ``812``, ``12.3k``, ``4.1M``."""
    if chars < 1_000:
        return str(chars)
    if chars < 100_000:
        return f"{chars / 1_000:.1f}k"
    if chars < 1_000_000:
        return f"{chars // 1_000}k"
    return f"{chars / 1_000_000:.1f}M"


def short_name(name: str) -> str:
    return name.removesuffix(".jsonl")


class LogList(RowList[LogShown, LogEntry]):
    """One line per log: its name (``*`` the view gptme has current), lines, and references
    by status."""

    DEFAULT_CSS = ROW_CSS.format(cls="LogList")
    BORDER_TITLE: ClassVar[str] = "logs"

    chosen: var[str] = var("")
    """The log whose lines the screen lists (bound to the screen's): the cursor is on it."""

    def rows_of(self, shown: LogShown) -> Sequence[LogEntry]:
        return shown.entries

    def refill(self) -> None:
        super().refill()
        self.watch_chosen()

    def watch_chosen(self) -> None:
        line = self.line_of(self.chosen)
        if line is not None:
            self.cursor_line = line

    def render_row(self, row: LogEntry, width: int) -> list[Segment]:
        dim, good, alert = (self.style_of(f"rows--{c}") for c in ("dim", "good", "alert"))
        marks: list[tuple[str, Style | None]] = [(f" {row.lines:,} lines", dim)]
        for status, count in row.counts:
            ok = status == Status.OK
            marks.append((f" {OK if ok else NOT_OK}{count}", good if ok else alert))
        right = sum(cell_len(text) for text, _ in marks)
        name = ("* " if row.current else "  ") + visible(short_name(row.name))
        left = set_cell_size(name, max(1, width - right - 1)).rstrip()
        return [
            Segment(left),
            Segment(" " * max(1, width - cell_len(left) - right)),
            *(Segment(text, style) for text, style in marks),
        ]


class Lines(LazyRows[LineRow]):
    """The lines of one log, read when asked for (``LogSession.row`` keeps the recent ones)."""

    def __init__(self, session: LogSession, name: str, count: int) -> None:
        self.session, self.name, self.size = session, name, count

    def __len__(self) -> int:
        return self.size

    def make(self, index: int) -> LineRow:
        return self.session.row(self.name, index)


class LogLines(RowList[LogShown, LineRow]):
    """The lines of log ``log_name``: ``  12 assistant 10:04:31  1.2k ✓ first line…``."""

    DEFAULT_CSS = ROW_CSS.format(cls="LogLines")

    log_name: var[str] = var("")
    """The log whose lines are listed (bound to the screen's, or fixed: the master)."""
    span: var[tuple[int, int] | None] = var(None)
    """Lines ``first`` to ``last`` (0-based, inclusive) highlighted: a reference's range."""
    follow: var[bool] = var(False)
    """Keep the last line under the cursor as lines are added (bound to the screen's)."""

    def rows_of(self, shown: LogShown) -> Sequence[LineRow]:
        return (
            Lines(shown.session, self.log_name, shown.lines.get(self.log_name, 0))
            if self.log_name
            else ()
        )

    def line_of(self, key: str) -> int | None:
        line = int(key)
        return line if 0 <= line < len(self.rows) else None

    def watch_log_name(self) -> None:
        self.border_title = plain(short_name(self.log_name))
        self.rows = ()  # another log: the cursor does not keep a line number of the last one
        self.set_reactive(LogLines.cursor_line, 0)
        # and its first row is announced even if it equals the last log's (a row does not name
        # its log, and every gptme log starts with the same system prompt at the same bytes)
        self._announced = None
        self.refill()

    def watch_span(self) -> None:
        self.refresh()

    def refill(self) -> None:
        super().refill()
        self.watch_follow()

    def watch_follow(self) -> None:
        if self.follow:
            self.cursor_line = self.line_count - 1

    def render_row(self, row: LineRow, width: int) -> list[Segment]:
        dim, good, alert, warn = (
            self.style_of(f"rows--{c}") for c in ("dim", "good", "alert", "warn")
        )
        digits = max(3, len(str(len(self.rows))))
        segments = [Segment(f"{row.line + 1:>{digits}} ", dim)]
        if row.role is None:
            segments.append(Segment(f"{'(problem)':<9} ", alert))
        elif row.stub:  # gptme's Phase 0: not a message the model read, a note of one pruned
            segments.append(Segment(f"{'(stub)':<9} ", warn))
        else:
            segments.append(Segment(f"{visible(row.role)[:9]:<9} ", None))
        segments.append(Segment(f"{row.time or '--:--:--':>8} ", dim))
        segments.append(Segment(f"{size_text(row.chars):>5} ", dim))
        shown = self.shown
        if shown is not None:
            for verdict in shown.session.verdicts_on(self.log_name, row.line):
                if verdict.ok:
                    segments.append(Segment(OK, good))
                else:
                    segments.append(Segment(NOT_OK, alert))
            if not shown.verified and row.role is not None and "Master context:" in row.head:
                segments.append(Segment(UNCHECKED, warn))
        segments.append(Segment(" "))
        head = visible(row.head) if row.role is not None else row.head
        if row.stub:
            segments.append(Segment(f"{STUB_MARK} {head}", warn))
        else:
            segments.append(Segment(head, alert if row.role is None else None))
        span = self.span
        if span is not None and span[0] <= row.line <= span[1]:
            # Its background blended with the list's (a partial style would keep it unblended).
            over = Style(bgcolor=self.get_component_rich_style("rows--span").bgcolor)
            segments = [Segment(text, (style or Style()) + over) for text, style, _ in segments]
            segments.append(Segment(" " * width, over))
        return segments


class HitList(RowList[LogShown, Hit]):
    """What the search found: ``views/x:12 assistant …a snippet with the match…``."""

    DEFAULT_CSS = ROW_CSS.format(cls="HitList")
    BORDER_TITLE: ClassVar[str] = "search"

    hits: var[tuple[Hit, ...]] = var(())
    """The search's results, newest first (bound to the screen's)."""

    def watch_hits(self) -> None:
        self.refill()

    def rows_of(self, shown: LogShown) -> Sequence[Hit]:
        return self.hits

    def line_of(self, key: str) -> int | None:
        return next((i for i, hit in enumerate(self.hits) if hit.key == key), None)

    def render_row(self, row: Hit, width: int) -> list[Segment]:
        dim, good = self.style_of("rows--dim"), self.style_of("rows--good")
        segments = [
            Segment(f"{visible(short_name(row.name))}:{row.line + 1} ", dim),
            Segment(f"{visible(row.role or '?')} ", None),
        ]
        marked = False
        for part in _split_marks(row.snippet):
            segments.append(Segment(visible(part), good + Style(bold=True) if marked else None))
            marked = not marked
        return segments


def _split_marks(snippet: str) -> list[str]:
    """The snippet cut at its marks: plain, matched, plain, matched, …"""
    parts: list[str] = []
    rest = snippet
    while True:
        before, found, after = rest.partition(MARK[0])
        parts.append(before)
        if not found:
            return parts
        match, _, rest = after.partition(MARK[1])
        parts.append(match)
