"""A short list of choices in a modal, each with a key: what to copy, what to export."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import events, on
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from ..keymap import bind
from ..text import plain


@dataclass(frozen=True, slots=True)
class Choice:
    key: str  # one character: pressing it chooses
    label: str  # what it does, as text (never markup)
    value: str  # what the screen is dismissed with


class ChooseScreen(ModalScreen[str | None]):
    """Dismisses with the value of the choice picked (its key, or Enter on it), or None
    (Escape)."""

    DEFAULT_CSS = """
    ChooseScreen { align: center middle; }
    ChooseScreen > Vertical {
        width: 70%; max-width: 90; height: auto;
        border: round $accent; background: $surface; padding: 1 2;
    }
    ChooseScreen Label { margin-bottom: 1; }
    ChooseScreen OptionList { height: auto; max-height: 12; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [bind("close", "cancel", "Cancel")]

    def __init__(self, title: str, choices: list[Choice]) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices

    def compose(self) -> Any:
        with Vertical():
            yield Label(plain(self.title_text), markup=False)
            yield OptionList(
                *[
                    Option(plain(f"{choice.key}  ", "bold") + plain(choice.label), id=choice.value)
                    for choice in self.choices
                ],
                id="choices",
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_key(self, event: events.Key) -> None:
        for choice in self.choices:
            if event.character == choice.key:
                event.stop()
                self.dismiss(choice.value)
                return

    @on(OptionList.OptionSelected)
    def _on_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
