"""The time scrubber: every snapshot of the context on one line, and where the view is."""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from engine.visible import visible

from ..types import Shown

# What the timeline draws (the help page's legend).
TIMELINE_LEGEND = [
    ("◷ ├──┼──┤", "the context's snapshots, oldest at the left; the right end is live"),
    ("┼", "a snapshot (an advance or s seals one); a click goes there"),
    ("●", "where the view is: a snapshot, or live at the right end"),
    ("A", "the diff base (d marks it)"),
    ("LIVE · 7 snapshots", "the live context, and how many snapshots it has"),
    ("3/7 · ep 2 · episode", "the snapshot shown: its number, its episode, what sealed it"),
]


class Scrubber(Widget):
    """``├──●───┤ LIVE``: ticks for snapshots, the diff base as ``A``; click to jump."""

    DEFAULT_CSS = """
    Scrubber { height: 1; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"scrubber--marker", "scrubber--base"}

    shown: reactive[Shown | None] = reactive(None)
    """What the screen shows (bound): how many snapshots there are, and which one, if any."""
    base: reactive[int | None] = reactive(None)
    """The diff base's snapshot index (bound), marked on the bar; None: none, or now."""

    class Jump(Message):
        """The user clicked a place on the scrubber (None = live)."""

        def __init__(self, index: int | None) -> None:
            super().__init__()
            self.index = index

    @property
    def count(self) -> int:
        return self.shown.snapshots if self.shown is not None else 0

    @property
    def position(self) -> int | None:
        entry = self.shown.entry if self.shown is not None else None
        return None if entry is None else entry.index

    def _label(self) -> str:
        entry = self.shown.entry if self.shown is not None else None
        if entry is None:
            return f" LIVE · {self.count} snapshot{'s' if self.count != 1 else ''}"
        trigger = visible(entry.trigger, limit=200)
        return f" {entry.index + 1}/{self.count} · ep {entry.episode} · {trigger}"

    def _track_width(self) -> int:
        return max(4, self.size.width - 35)

    def _cell_of(self, index: int, width: int) -> int:
        count = self.count
        return 0 if count <= 1 else round(index * (width - 1) / count)

    def render_line(self, y: int) -> Strip:
        width = self._track_width()
        dim = Style(dim=True)
        accent = self.get_component_rich_style(
            "scrubber--marker", partial=True, default=Style(bold=True)
        )
        base = self.get_component_rich_style(
            "scrubber--base", partial=True, default=Style(italic=True)
        )
        cells = ["─"] * width
        styles = [dim] * width
        count = self.count
        if count >= 2 * width:  # a tick lands in every cell: no need to place each one
            cells = ["┼"] * width
        else:
            for index in range(count):
                cells[self._cell_of(index, width)] = "┼"
        if self.base is not None and count:
            cell = self._cell_of(self.base, width)
            cells[cell], styles[cell] = "A", base
        cell = width - 1 if self.position is None else self._cell_of(self.position, width)
        cells[cell], styles[cell] = "●", accent
        segments = [Segment(" ◷ ├", dim)]
        segments += [Segment(c, s) for c, s in zip(cells, styles, strict=True)]
        segments += [Segment("┤", dim), Segment(self._label(), accent)]
        own = self.rich_style  # the bar's background and colour, under the parts' styles
        return Strip(Segment.apply_style(segments, own)).crop_extend(0, self.size.width, own)

    def on_click(self, event: events.Click) -> None:
        x = event.x - 4
        width = self._track_width()
        if not 0 <= x < width or not self.count:
            return
        if x >= width - 1:
            self.post_message(self.Jump(None))
            return
        count = self.count
        index = min(count - 1, round(x * count / (width - 1)))
        self.post_message(self.Jump(index))
