"""The selector bar (``/``): type a selector, see matches as you type, and errors with a caret."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widgets import Input, Static

from engine.visible import WITHOUT_ANY, visible

from ..types import Selection


class SelectorBar(Vertical):
    """An input and, under it, either a match count or the error with a caret."""

    DEFAULT_CSS = """
    SelectorBar { height: auto; display: none; }
    SelectorBar.-open { display: block; }
    SelectorBar > Input, SelectorBar > Input:focus { border: none; height: 1; padding: 0 1; }
    SelectorBar > #selector-feedback { height: auto; padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close", show=False)]

    selection: var[Selection] = var(Selection)
    """What the selector found (bound to the screen's): the feedback under the input."""

    class Changed(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Closed(Message):
        def __init__(self, keep: bool) -> None:
            super().__init__()
            self.keep = keep  # Enter keeps the matches highlighted; Escape clears them

    def compose(self) -> Any:
        yield Input(
            placeholder="selector: d1-3, 1, *   #key   +tag   .text   [remaining<=1]   @t-1 …",
            id="selector-input",
            restrict=WITHOUT_ANY,  # a paste holding control characters is refused
        )
        yield Static("", id="selector-feedback", markup=False)

    @property
    def input(self) -> Input:
        return self.query_one(Input)

    def open(self, text: str = "") -> None:
        self.add_class("-open")
        self.input.value = text
        self.input.cursor_blink = False
        self.input.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.remove_class("-open")
        self.post_message(self.Closed(keep=True))

    def action_close(self) -> None:
        self.remove_class("-open")
        self.post_message(self.Closed(keep=False))

    def watch_selection(self, selection: Selection) -> None:
        self.query_one("#selector-feedback", Static).update(feedback(selection))


def feedback(selection: Selection) -> Content:
    """A caret under the offending character (the input has one cell of padding), the match
    count, or nothing when no selector is typed."""
    problem = selection.problem
    if problem is not None:
        return Content.assemble(
            (" " * problem.position + "^", "bold $error"),
            (f"  {visible(problem.reason, limit=500)}", "$error"),
        )
    if not selection.text:
        return Content("")
    if selection.note:
        return Content.styled(f"{visible(selection.note, limit=500)}  ·  Esc clears", "dim")
    count = len(selection.matches)
    style = "dim" if count else "$warning"
    noun = "match" if count == 1 else "matches"
    return Content.styled(f"{count} {noun}  ·  Enter keeps them, n/N walk them, Esc clears", style)
