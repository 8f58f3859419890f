"""What every scrolling list of the app shares: a line cursor, its keys, a click to move or
choose, and a scrollable extent of one line per row. Drawn with the Line API by the subclass
(``render_line``): the context panes (``LinePane``) and the document views (``RowList``).

A pane that is not displayed takes no key (``check_action``), even while it still holds the
focus: a screen that hides a pane moves the focus in the same handler (``Screen.set_focus``),
and this makes sure that a key typed ahead never acts on what the user no longer sees.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from textual import events
from textual.binding import BindingType
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.widget import Widget

from ..keymap import bind


class CursorPane(ScrollView, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("up", "cursor(-1)", "Up", show=False),
        bind("down", "cursor(1)", "Down", show=False),
        bind("page-up", "page(-1)", "Page up", show=False),
        bind("page-down", "page(1)", "Page down", show=False),
        bind("top", "first", "Top", show=False),
        bind("bottom", "last", "Bottom", show=False),
    ]

    cursor_line: reactive[int] = reactive(0, repaint=False)
    """The line the cursor is on, kept in range by ``validate_cursor_line``."""

    @property
    def line_count(self) -> int:
        """How many lines the pane has."""
        raise NotImplementedError  # each pane counts its own

    def announce(self) -> None:
        """Say which row the cursor is on now (the pane's own Highlighted message)."""

    def select_cursor(self) -> None:
        """What Enter, or a click on the cursor's line, does (the pane's own Selected)."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Every key of a pane that is not displayed is inactive (its binding passes the key on,
        and the footer leaves it out). Textual blurs a hidden widget only when its ``Hide``
        event comes, after the next refresh: a key typed ahead of that would otherwise reach
        the pane that was just hidden."""
        return displayed(self)

    # -- the cursor -------------------------------------------------------------------------
    def validate_cursor_line(self, line: int) -> int:
        return max(0, min(line, self.line_count - 1))

    def watch_cursor_line(self, old: int, new: int) -> None:
        self.refresh_lines(old)
        self.refresh_lines(new)
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, immediate=True)
        self.announce()

    def action_cursor(self, step: int) -> None:
        self.cursor_line += step

    def action_page(self, direction: int) -> None:
        self.cursor_line += direction * max(1, self.scrollable_content_region.height)

    def action_first(self) -> None:
        self.cursor_line = 0

    def action_last(self) -> None:
        self.cursor_line = self.line_count - 1

    def action_select_cursor(self) -> None:
        self.select_cursor()

    async def _on_click(self, event: events.Click) -> None:
        at = event.get_content_offset(self)  # under the border: None on the border itself
        if at is None:
            return
        line = at.y + int(self.scroll_offset.y)
        if 0 <= line < self.line_count:
            if line == self.cursor_line:
                self.select_cursor()
            else:
                self.cursor_line = line

    # -- drawing ------------------------------------------------------------------------------
    def style_of(self, component: str) -> Style:
        return self.get_component_rich_style(component, partial=True)

    def on_resize(self) -> None:
        self.fit_virtual_size()
        # The list keeps its place: the cursor's line stays in sight, at whatever height.
        self.call_after_refresh(self._keep_cursor_in_sight)

    def _keep_cursor_in_sight(self) -> None:
        if self.line_count:
            self.scroll_to_region(
                Region(0, self.cursor_line, 1, 1), animate=False, immediate=True, force=True
            )

    def fit_virtual_size(self) -> None:
        """The scrollable extent: one line per row, at the pane's width."""
        size = Size(self.size.width, self.line_count)
        if size != self.virtual_size:
            self.virtual_size = size
            # The scrollbars now, not at the next layout, so that scrolling to a line the
            # change added works at once (as OptionList does).
            self._scroll_update(size)


def displayed(widget: Widget) -> bool:
    """Whether ``widget`` and every container around it are displayed (``display`` is not
    ``none``): what a hidden view of a ``ContentSwitcher``, or a pane toggled off, is not."""
    return all(node.display for node in widget.ancestors_with_self if isinstance(node, Widget))
