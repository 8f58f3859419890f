"""An item's whole content, over the inspector (``o``, or Enter on an item): the detail pane
shows its start; this reads all of it, however long."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import BindingType
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keymap import bind
from ..text import plain
from ..widgets.footer import FittedFooter
from ..widgets.reader import ContentReader


class ReaderScreen(ModalScreen[None]):
    """``title`` (it names the item: shown plain) above ``text``, whole."""

    DEFAULT_CSS = """
    ReaderScreen { background: $background; }
    ReaderScreen > #reader-title { height: 1; background: $panel; text-style: bold; }
    ReaderScreen > ContentReader {
        height: 1fr; border: round $accent; background: $surface; padding: 0 1;
        scrollbar-size-vertical: 1; overflow-x: hidden;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("close-reader", "dismiss", "Close", tooltip="back to the inspector"),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> Any:
        yield Static(plain(self.title_text), id="reader-title", markup=False)
        yield ContentReader(self.text)
        yield FittedFooter(compact=True)

    def on_mount(self) -> None:
        reader = self.query_one(ContentReader)
        reader.border_subtitle = Content(f"{reader.line_count:,} lines")
        reader.focus()
