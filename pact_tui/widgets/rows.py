"""A scrolling list of rows drawn with the Line API, for the document and master-log screens.

``RowList`` is fed the screen's ``DocShown`` or ``LogShown`` (bound) and turns it into rows
with ``rows_of``; only the lines in sight are drawn (``render_row``). The cursor sticks to its
row's ``key`` when the rows change (a proposal stays under the cursor as the queue grows), and
the list says which row is under it (``Highlighted``) and which one Enter or a click chose
(``Selected``).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar, overload

from rich.segment import Segment
from rich.style import Style
from textual.binding import BindingType
from textual.message import Message
from textual.reactive import var
from textual.strip import Strip

from ..keymap import bind
from .cursor import CursorPane


class Keyed(Protocol):
    @property
    def key(self) -> str: ...


RowT = TypeVar("RowT", bound=Keyed)
ShownT = TypeVar("ShownT")


class LazyRows(Sequence[RowT]):
    """Rows made when they are read (a list reads only the lines in sight): a subclass says
    how many there are (``__len__``) and makes one (``make``)."""

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def make(self, index: int) -> RowT: ...

    @overload
    def __getitem__(self, index: int) -> RowT: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[RowT]: ...
    def __getitem__(self, index: int | slice) -> RowT | Sequence[RowT]:
        size = len(self)
        if isinstance(index, slice):
            return [self.make(i) for i in range(*index.indices(size))]
        if not -size <= index < size:
            raise IndexError(index)
        return self.make(index % size)

    def __iter__(self) -> Iterator[RowT]:
        return (self.make(i) for i in range(len(self)))


class RowList(CursorPane, Generic[ShownT, RowT]):
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "rows--cursor",
        "rows--cursor-blurred",
        "rows--dim",
        "rows--warn",
        "rows--alert",
        "rows--good",
        "rows--span",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("select", "select_cursor", "Select", show=False),
    ]

    shown: var[ShownT | None] = var(None)
    """What the screen shows (bound to the screen's): a document's ``DocShown``, a
    conversation's ``LogShown``."""

    class Highlighted(Message):
        """The row under the cursor is now ``row`` (None when the list is empty)."""

        def __init__(self, rows: RowList[Any, Any], row: Any) -> None:
            super().__init__()
            self.rows = rows
            self.row = row  # one of the list's rows, or None

        @property
        def control(self) -> RowList[Any, Any]:
            return self.rows

    class Selected(Message):
        """Enter, or a click on the cursor's line, chose ``row``."""

        def __init__(self, rows: RowList[Any, Any], row: Any) -> None:
            super().__init__()
            self.rows = rows
            self.row = row  # one of the list's rows

        @property
        def control(self) -> RowList[Any, Any]:
            return self.rows

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.rows: Sequence[RowT] = ()
        self._announced: RowT | None = None
        self._base_style: Style | None = None
        self.held: RowT | None = None
        """The row the user put the cursor on, as it was then: the rows re-sort and change
        under a still cursor (a proposal arrives, one merges), so an action on "the row
        highlighted" acts on this one, and can say what changed since."""
        self._held_of: str | None = None  # the name of what ``held`` is of (a document's)
        self._behind = False  # ``shown`` changed while the list was hidden: not made again yet
        self._made_of: tuple[Any, Any] = (None, None)  # the document and reader rows are of

    def notify_style_update(self) -> None:
        self._base_style = None
        super().notify_style_update()

    # -- what is shown ----------------------------------------------------------------------
    def rows_of(self, shown: ShownT) -> Sequence[RowT]:
        raise NotImplementedError  # each list makes its own rows

    def render_row(self, row: RowT, width: int) -> list[Segment]:
        raise NotImplementedError  # and draws them

    def watch_shown(self) -> None:
        # A list hidden behind the one shown (the document screen shows one view at a time)
        # makes its rows when it is shown, not on every change of the document: at 200,000
        # events the hidden views' rows were most of a change's cost.
        # Another document or reader is made at once: a hidden list never holds what the
        # reader now viewed as may not read.
        self._behind = not self.display and self._made_of == self._of(self.shown)
        if not self._behind:
            self.show_now()

    @staticmethod
    def _of(shown: Any) -> tuple[Any, Any]:
        return getattr(shown, "name", None), getattr(shown, "reader", None)

    def show_now(self) -> None:
        """Make the rows from ``shown`` (a list that draws more than its rows adds it here)."""
        self.refill()

    def catch_up(self) -> None:
        """Make the rows, if ``shown`` changed while the list was hidden."""
        if self._behind:
            self._behind = False
            self.show_now()

    def on_show(self) -> None:
        self.catch_up()

    def watch_cursor_line(self, old: int, new: int) -> None:
        super().watch_cursor_line(old, new)
        self.held = self.current_row  # the user moved the cursor: this one is highlighted

    def refill(self) -> None:
        """Make the rows again (the document, or what the list filters by, changed), keeping
        the cursor on the row it was on."""
        self._behind, self._made_of = False, self._of(self.shown)
        keep = self.current_row.key if self.current_row is not None else None
        self.rows = () if self.shown is None else self.rows_of(self.shown)
        self.fit_virtual_size()
        line = self.cursor_line
        if keep is not None:
            found = self.line_of(keep)
            line = found if found is not None else line
        self.set_reactive(RowList.cursor_line, self.validate_cursor_line(line))
        of = getattr(self.shown, "name", None)
        if self.held is None or of != self._held_of:  # first filled, or another document's
            self.held, self._held_of = self.current_row, of
        self.refresh()
        self.announce()

    def line_of(self, key: str) -> int | None:
        """The line of the row with ``key``, if there is one (a list whose rows are made as they
        are drawn finds it without making them all)."""
        return next((i for i, r in enumerate(self.rows) if r.key == key), None)

    @property
    def current_row(self) -> RowT | None:
        rows = self.rows
        return rows[self.cursor_line] if 0 <= self.cursor_line < len(rows) else None

    @property
    def line_count(self) -> int:
        return len(self.rows)

    def announce(self) -> None:
        row = self.current_row
        if row != self._announced or row is None:
            self._announced = row
            self.post_message(self.Highlighted(self, row))

    def select_cursor(self) -> None:
        row = self.current_row
        if row is not None:
            self.post_message(self.Selected(self, row))

    # -- drawing ------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        line = y + int(self.scroll_offset.y)
        width = self.size.width
        if self._base_style is None:
            self._base_style = self.rich_style
        base = self._base_style
        if not 0 <= line < len(self.rows):
            return Strip.blank(width, base)
        over = Style()
        if line == self.cursor_line:
            cursor = "rows--cursor" if self.has_focus else "rows--cursor-blurred"
            over = Style(bgcolor=self.get_component_rich_style(cursor).bgcolor)
        segments = [
            Segment(text, base + style + over if style is not None else base + over)
            for text, style, _ in self.render_row(self.rows[line], width)
        ]
        return Strip(segments).crop_extend(0, width, base + over).simplify()
