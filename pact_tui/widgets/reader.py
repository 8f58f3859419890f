"""A text of any size, read a screenful at a time (the whole content of an item).

Lines are broken at the width a character at a time, as a pager breaks them; tabs are spaces;
every line is :func:`~engine.visible.visible` (its newlines are the line breaks). Only the lines
on screen are drawn (the line API), so a 10 MB text scrolls like a short one: opening it costs
one pass to measure its lines, and a line is cut into rows when it is first drawn.
"""

from __future__ import annotations

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
        self.lines = visible(text, multiline=True).expandtabs(TAB_SIZE).split("\n")
        self._width = 0  # the width the rows are measured for
        self._rows = LineIndex()  # rows per line at that width
        self._chopped: LRUCache[int, list[str]] = LRUCache(1024)  # a wide line's rows

    # Jumps, not animations: an animated scroll to the end of 80,000 rows takes seconds.
    def action_scroll_home(self) -> None:
        self.scroll_home(animate=False)

    def action_scroll_end(self) -> None:
        self.scroll_end(animate=False)

    def action_page_down(self) -> None:
        self.scroll_page_down(animate=False)

    def action_page_up(self) -> None:
        self.scroll_page_up(animate=False)

    @property
    def row_count(self) -> int:
        return self._rows.total

    def on_resize(self) -> None:
        self._measure()

    def _measure(self) -> None:
        """How many rows each line takes at the pane's width, and so how far it scrolls."""
        width = max(1, self.scrollable_content_region.width)
        if width == self._width:
            return
        self._width = width
        self._chopped.clear()
        self._rows = LineIndex([self._count_rows(line) for line in self.lines])
        self.virtual_size = Size(width, self._rows.total)

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
            rows = chop_cells(self.lines[index], self._width) or [""]
            self._chopped[index] = rows
            if len(rows) != self._rows.size(index):
                self._rows.set(index, len(rows))
                self.virtual_size = Size(self._width, self._rows.total)
        return rows

    def row_text(self, row: int) -> str:
        """What row ``row`` shows."""
        index, within = self._rows.find(row)
        line, width = self.lines[index], self._width
        if line.isascii():
            return line[within * width : (within + 1) * width]
        rows = self._chop(index)
        return rows[within] if within < len(rows) else ""

    def render_line(self, y: int) -> Strip:
        self._measure()  # at the width drawn (a no-op unless it changed)
        row = y + int(self.scroll_offset.y)
        style = self.rich_style
        width = self.scrollable_content_region.width
        if not 0 <= row < self._rows.total:
            return Strip.blank(width, style)
        return Strip([Segment(self.row_text(row), style)]).crop_extend(0, width, style)
