"""A yes-or-no question in a modal, asked before something that writes: play at live."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

from ..keymap import bind
from ..text import plain_block


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True (``y``, or the first button) or False (``n``, Escape, or the
    other). The question is shown as text, never markup: it may name a context."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 70%; max-width: 90; height: auto;
        border: round $warning; background: $surface; padding: 1 2;
    }
    ConfirmScreen #confirm-question { width: 100%; margin-bottom: 1; }
    ConfirmScreen Horizontal { height: auto; }
    ConfirmScreen Button { margin-right: 2; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("yes", "answer(True)", "Yes"),
        bind("no", "answer(False)", "No"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "Cancel") -> None:
        super().__init__()
        self.question = question
        self.yes, self.no = yes, no

    def compose(self) -> Any:
        with Vertical():
            yield Label(plain_block(self.question), id="confirm-question", markup=False)
            with Horizontal():
                yield Button(f"{self.yes} (y)", variant="warning", id="confirm-yes")
                yield Button(f"{self.no} (n)", id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()  # Enter alone does not write

    @on(Button.Pressed)
    def _on_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
