"""The time scrubber: every snapshot of the context on one line, and where the view is."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from engine.workspace import SnapshotEntry


class Scrubber(Widget):
    """``├──●───┤ LIVE``: ticks for snapshots; click to jump. ``position`` None = live."""

    DEFAULT_CSS = """
    Scrubber { height: 1; }
    """

    class Jump(Message):
        """The user clicked a place on the scrubber (None = live)."""

        def __init__(self, index: int | None) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.snapshots: list[SnapshotEntry] = []
        self.position: int | None = None
        self.base: int | None = None  # the diff base, marked on the bar

    def show(self, snapshots: list[SnapshotEntry], position: int | None, base: int | None) -> None:
        self.snapshots, self.position, self.base = snapshots, position, base
        self.refresh()

    def _label(self) -> str:
        count = len(self.snapshots)
        if self.position is None:
            return f" LIVE · {count} snapshot{'s' if count != 1 else ''}"
        entry = self.snapshots[self.position]
        return f" {self.position + 1}/{count} · ep {entry.episode} · {entry.trigger}"

    def _track_width(self) -> int:
        return max(4, self.size.width - 35)

    def _cell_of(self, index: int, width: int) -> int:
        count = len(self.snapshots)
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
        count = len(self.snapshots)
        if count:
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

    COMPONENT_CLASSES = {"scrubber--marker", "scrubber--base"}

    def on_click(self, event: events.Click) -> None:
        x = event.x - 4
        width = self._track_width()
        if not 0 <= x < width or not self.snapshots:
            return
        if x >= width - 1:
            self.post_message(self.Jump(None))
            return
        count = len(self.snapshots)
        index = min(count - 1, round(x * count / (width - 1)))
        self.post_message(self.Jump(index))
