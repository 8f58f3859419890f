"""A one-line question in a modal: the text of a message, the name of a seal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from engine.visible import WITHOUT_ANY

from ..keymap import bind
from ..text import plain, plain_block


class PromptScreen(ModalScreen[str | None]):
    """Dismisses with the text typed (Enter) or None (Escape). Empty text is not accepted."""

    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical {
        width: 70%; max-width: 100; height: auto;
        border: round $accent; background: $surface; padding: 1 2;
    }
    PromptScreen Label { margin-bottom: 1; }
    PromptScreen #prompt-question { width: 100%; }
    PromptScreen #prompt-hint { color: $text-muted; margin: 1 0 0 0; }
    PromptScreen #prompt-problem { color: $error; margin: 1 0 0 0; display: none; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [bind("close", "cancel", "Cancel")]

    def __init__(
        self,
        question: str,
        value: str = "",
        placeholder: str = "",
        check: Callable[[str], str | None] | None = None,
    ) -> None:
        """``check`` says what is wrong with a text (None: nothing): the prompt stays open and
        shows it, until the text is right or Esc closes the prompt. The question and the
        problem are shown as plain text: they may quote a name or what was typed."""
        super().__init__()
        self.question = question
        self.value = value
        self.placeholder = placeholder
        self.check = check

    def compose(self) -> Any:
        with Vertical():
            yield Label(plain_block(self.question), id="prompt-question", markup=False)
            yield Input(
                value=self.value,
                placeholder=self.placeholder,
                id="prompt-input",
                restrict=WITHOUT_ANY,  # a paste holding control characters is refused
            )
            yield Label("", id="prompt-problem", markup=False)
            yield Label("Enter to confirm · Esc to cancel", id="prompt-hint", markup=False)

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = False
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            return
        problem = self.check(event.value) if self.check is not None else None
        if problem is None:
            self.dismiss(event.value)
        else:
            self.query_one("#prompt-problem", Label).update(plain(problem, limit=500))
            self.query_one("#prompt-problem", Label).display = True

    def action_cancel(self) -> None:
        self.dismiss(None)
