"""A text to edit in a modal: a conflict's three-way result, settled by hand before it is put
in the section."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, TextArea

from ..keymap import bind
from ..text import plain


class EditScreen(ModalScreen[str | None]):
    """Dismisses with the text as edited (ctrl+s) or None (Escape; asked first if the text
    was edited: the edits would be thrown away).

    The text must be free of the characters ``engine.visible`` escapes (the caller checks:
    an editor shows the text as it is, so a control character in it would reach the terminal).
    """

    DEFAULT_CSS = """
    EditScreen { align: center middle; }
    EditScreen > Vertical {
        width: 90%; height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    EditScreen Label { margin: 0 0 1 0; }
    EditScreen TextArea { height: 1fr; }
    EditScreen #edit-hint { color: $text-muted; margin: 1 0 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("save", "save", "Save", tooltip="use the text as it is now"),
        bind("close", "cancel", "Cancel", tooltip="leave it (asked first if edited)"),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> Any:
        with Vertical():
            yield Label(plain(self.title_text), markup=False)
            yield TextArea(self.text, soft_wrap=True, show_line_numbers=True, id="edit-text")
            yield Label("ctrl+s to use this text · Esc to cancel", id="edit-hint", markup=False)

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.cursor_blink = False
        area.focus()

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        from .confirm import ConfirmScreen

        if self.query_one(TextArea).text == self.text:
            self.dismiss(None)
            return

        def answered(throw_away: bool | None) -> None:
            if throw_away:
                self.dismiss(None)

        question = "Throw away your edits? Nothing is done with this text."
        self.app.push_screen(ConfirmScreen(question, yes="Throw away", no="Keep editing"), answered)
