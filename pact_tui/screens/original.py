"""A reference item read whole (``o`` on it): what the model was shown beside the original the
reference recovers from the gptme master log, and the verifier's verdict above them.

Both texts are drawn by ``ContentReader`` (a screenful at a time, every line made visible);
the title and the verdict are plain text."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keymap import bind
from ..text import plain
from ..widgets.footer import FittedFooter
from ..widgets.reader import ContentReader


class OriginalScreen(ModalScreen[None]):
    """``title`` and ``verdict`` (plain) above ``shown`` and ``original`` side by side; the
    original pane is titled ``source`` (where the recovery read it)."""

    DEFAULT_CSS = """
    OriginalScreen { background: $background; }
    OriginalScreen > #original-title { height: 1; background: $panel; text-style: bold; }
    OriginalScreen > #original-verdict { height: auto; max-height: 4; padding: 0 1; }
    OriginalScreen > #original-verdict.-bad { color: $error; }
    OriginalScreen > Horizontal { height: 1fr; }
    OriginalScreen ContentReader {
        width: 1fr; height: 1fr; border: round $accent; background: $surface; padding: 0 1;
        scrollbar-size-vertical: 1; overflow-x: hidden;
    }
    OriginalScreen ContentReader:focus { border: round $secondary; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("close-reader", "dismiss", "Close", tooltip="back to the inspector"),
        bind("next-pane", "app.focus_next", "Other side", tooltip="the other text"),
    ]

    def __init__(
        self, title: str, verdict: str, ok: bool, shown: str, original: str, source: str
    ) -> None:
        super().__init__()
        self.title_text = title
        self.verdict = verdict
        self.ok = ok
        self.shown_text = shown
        self.original_text = original
        self.source = source

    def compose(self) -> Any:
        yield Static(plain(self.title_text), id="original-title", markup=False)
        said = Static(plain(self.verdict), id="original-verdict", markup=False)
        said.set_class(not self.ok, "-bad")
        yield said
        with Horizontal():
            yield ContentReader(self.shown_text, id="shown")
            yield ContentReader(self.original_text, id="original")
        yield FittedFooter(compact=True)

    def on_mount(self) -> None:
        shown = self.query_one("#shown", ContentReader)
        original = self.query_one("#original", ContentReader)
        shown.border_title = Content("what the model was shown")
        original.border_title = plain(f"the original · {self.source}")
        for reader in (shown, original):
            reader.border_subtitle = Content(f"{reader.line_count:,} lines")
        self.set_focus(original)
