"""A picker in a modal: a list of things to act on (agents, levels, a conflict's sides,
proposals), narrowed by what is typed, as the command palette narrows its commands."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import events, on
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from engine.visible import WITHOUT_ANY

from ..keymap import bind
from ..text import plain, plain_block

SHOWN = 200  # options listed at once: typing narrows the rest


@dataclass(frozen=True, slots=True)
class Pick:
    label: str  # what it is, as text (never markup)
    value: str  # what the screen is dismissed with
    words: str = ""  # more text that typing finds it by (an id, a name), not shown


class PickScreen(ModalScreen[str | None]):
    """Dismisses with the value of the option picked (Enter on it, or Enter in the field: the
    first option left), or None (Escape). Typed words narrow the options: each word is in the
    option's label or words (any case). The title is shown as plain text."""

    DEFAULT_CSS = """
    PickScreen { align: center middle; }
    PickScreen > Vertical {
        width: 80%; max-width: 110; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 1 2;
    }
    PickScreen #pick-title { margin-bottom: 1; }
    PickScreen OptionList { height: auto; max-height: 14; }
    PickScreen #pick-count { color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [bind("close", "cancel", "Cancel")]

    def __init__(self, title: str, picks: list[Pick], placeholder: str = "type to narrow") -> None:
        super().__init__()
        self.title_text = title
        self.picks = picks
        self.placeholder = placeholder
        self.left: list[Pick] = list(picks)

    def compose(self) -> Any:
        with Vertical():
            yield Label(plain_block(self.title_text), id="pick-title", markup=False)
            yield Input(
                placeholder=self.placeholder, id="pick-input", restrict=WITHOUT_ANY, compact=True
            )
            yield OptionList(id="picks")
            yield Label("", id="pick-count", markup=False)

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = False
        field.focus()
        self._narrow("")

    def _narrow(self, typed: str) -> None:
        words = typed.lower().split()
        self.left = [
            p for p in self.picks if all(w in f"{p.label} {p.words}".lower() for w in words)
        ]
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(
            [Option(plain(p.label), id=str(i)) for i, p in enumerate(self.left[:SHOWN])]
        )
        if self.left:
            options.highlighted = 0
        more = f" (the first {SHOWN} shown: type to narrow)" if len(self.left) > SHOWN else ""
        self.query_one("#pick-count", Label).update(
            plain(f"{len(self.left):,} of {len(self.picks):,}{more} · Enter picks · Esc cancels")
        )

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        self._narrow(event.value)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.query_one(OptionList)
        at = options.highlighted
        if at is not None and 0 <= at < len(self.left):
            self.dismiss(self.left[at].value)

    def on_key(self, event: events.Key) -> None:
        """Up and down move among the options while the field keeps the focus."""
        if event.key in ("up", "down") and self.query_one(Input).has_focus:
            event.stop()
            options = self.query_one(OptionList)
            if event.key == "down":
                options.action_cursor_down()
            else:
                options.action_cursor_up()

    @on(OptionList.OptionSelected)
    def _on_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.dismiss(self.left[int(event.option.id)].value)

    def action_cancel(self) -> None:
        self.dismiss(None)
