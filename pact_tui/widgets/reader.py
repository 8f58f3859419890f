"""A text of any size, read a screenful at a time (the whole content of an item).

Lines are broken at the width a character at a time, as a pager breaks them; tabs are spaces;
every line is :func:`~engine.visible.visible` (its newlines are the line breaks). Only the lines
on screen are drawn (the line API), and nothing is made of the text before it is needed: a line
is found (``str.find``), made visible and measured (how many rows it takes at the width) when
it is first drawn or scrolled to, and the rest is measured a chunk at a time between frames, as
a pager reads on. So a 10 MB text opens like a short one: its first screenful is drawn before
the rest is looked at, and it is never copied whole. Until every line is measured the scroll
height counts each line not yet measured as one row (it grows as long lines are found);
the end (``End``) measures the rest first.
"""

from __future__ import annotations

from array import array
from typing import ClassVar

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from engine.visible import visible

from ..keymap import bind
from ..line_index import LineIndex

TAB_SIZE = 8
MEASURE_CHUNK = 1 << 16  # characters of the text measured at a time, between frames


class ContentReader(ScrollView, can_focus=True):
    """Scrolls through ``text`` (arrows, Page Up/Down, Home/End, the mouse wheel)."""

    # The scroll bar always there: rows are cut at the width inside it, which must not change
    # when the text turns out to need one.
    DEFAULT_CSS = """
    ContentReader { overflow-y: scroll; overflow-x: hidden; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("up", "scroll_up", "Up", show=False),
        bind("down", "scroll_down", "Down", show=False),
        bind("read-on", "page_down", "Page down", show=False),
        bind("top", "scroll_home", "Top", show=False),
        bind("bottom", "scroll_end", "Bottom", show=False),
    ]

    def __init__(self, text: str, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.text = text
        self.line_count = text.count("\n") + 1  # counted in C: nothing is made
        """How many lines the text has."""
        self._starts = array("q", [0])  # where each line found so far starts in ``text``
        self._width = 0  # the width the rows are measured for
        self._rows = LineIndex()  # rows per line, for the lines measured so far at that width
        self._shown: LRUCache[int, str] = LRUCache(1024)  # lines made visible
        self._chopped: LRUCache[int, list[str]] = LRUCache(1024)  # a wide line's rows
        self._reading_on = False  # a chunk is to be measured after the next frame

    # Jumps, not animations: an animated scroll to the end of 80,000 rows takes seconds.
    def action_scroll_home(self) -> None:
        self.scroll_home(animate=False)

    def action_scroll_end(self) -> None:
        self._measure_rows(None)  # the whole text: its end is where it ends
        self.scroll_end(animate=False)

    def action_page_down(self) -> None:
        self.scroll_page_down(animate=False)

    def action_page_up(self) -> None:
        self.scroll_page_up(animate=False)

    @property
    def row_count(self) -> int:
        """The rows the text takes at the width: exact once every line is measured, until then
        a line not measured yet counts as one."""
        return self._rows.total + self.line_count - len(self._rows)

    @property
    def measured(self) -> int:
        """How many lines are measured at the width (all of them: ``line_count``)."""
        return len(self._rows)

    def on_resize(self) -> None:
        self._measure()

    def _measure(self) -> None:
        """At the pane's width: if it changed, the rows are measured again (lazily)."""
        width = max(1, self.scrollable_content_region.width)
        if width == self._width:
            return
        self._width = width
        self._chopped.clear()
        self._rows = LineIndex()
        self._measure_rows(self.size.height + int(self.scroll_offset.y))
        self._read_on()

    def _measure_rows(self, rows: int | None, budget: int | None = None) -> None:
        """Measure lines until they hold more than ``rows`` rows (None: every line), or, with
        ``budget``, until that many more characters of the text are measured."""
        starts, index = self._starts, self._rows
        done = 0
        while len(index) < self.line_count:
            if rows is not None and index.total > rows:
                break
            if budget is not None and done >= budget:
                break
            number = len(index)
            index.append(self._count_rows(self.line(number)))
            done += starts[number + 1] - starts[number]
        self.virtual_size = Size(self._width, self.row_count)

    def _read_on(self) -> None:
        """Measure the rest of the text a chunk at a time, a chunk after each frame."""
        if self._reading_on or len(self._rows) >= self.line_count:
            return
        self._reading_on = True
        self.call_after_refresh(self._read_chunk)

    def _read_chunk(self) -> None:
        self._reading_on = False
        self._measure_rows(None, budget=MEASURE_CHUNK)
        self._read_on()

    def line(self, index: int) -> str:
        """Line ``index`` as it is shown: visible, its tabs spaces (made when first asked)."""
        shown = self._shown.get(index)
        if shown is None:
            starts = self._starts
            while len(starts) <= index + 1:  # found in order (a line ends where the next starts)
                end = self.text.find("\n", starts[-1])
                starts.append(len(self.text) + 1 if end < 0 else end + 1)
            raw = self.text[starts[index] : starts[index + 1] - 1]
            printable = raw.isascii() and raw.isprintable()  # most text: nothing to make
            shown = raw if printable else visible(raw, multiline=True).expandtabs(TAB_SIZE)
            self._shown[index] = shown
        return shown

    def _count_rows(self, line: str) -> int:
        """Rows at the width: exact for single-cell text, else from its cells (a wide
        character that does not fit at the end of a row moves to the next: ``row_text``
        corrects the count when it cuts the line)."""
        if line.isascii():
            return max(1, -(-len(line) // self._width))
        return max(1, -(-cell_len(line) // self._width))

    def _chop(self, index: int) -> list[str]:
        rows = self._chopped.get(index)
        if rows is None:
            rows = chop_cells(self.line(index), self._width) or [""]
            self._chopped[index] = rows
            if len(rows) != self._rows.size(index):
                self._rows.set(index, len(rows))
                self.virtual_size = Size(self._width, self.row_count)
        return rows

    def row_text(self, row: int) -> str:
        """What row ``row`` shows."""
        self._measure_rows(row)
        index, within = self._rows.find(row)
        line, width = self.line(index), self._width
        if line.isascii():
            return line[within * width : (within + 1) * width]
        rows = self._chop(index)
        return rows[within] if within < len(rows) else ""

    def render_line(self, y: int) -> Strip:
        self._measure()  # at the width drawn (a no-op unless it changed)
        row = y + int(self.scroll_offset.y)
        style = self.rich_style
        width = self.scrollable_content_region.width
        self._measure_rows(row)  # the lines up to this row, if scrolled past what is measured
        self._read_on()
        if not 0 <= row < self._rows.total:
            return Strip.blank(width, style)
        return Strip([Segment(self.row_text(row), style)]).crop_extend(0, width, style)
