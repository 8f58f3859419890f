"""The selector bar (``/``): type a selector, see matches as you type, and errors with a caret."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.binding import BindingsMap, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widgets import Input, Static

from engine.visible import WITHOUT_ANY, visible

from ..keymap import bind
from ..types import Selection

if TYPE_CHECKING:
    from textual.widget import Widget


class SelectorBar(Vertical):
    """An input and, under it, either a match count or the error with a caret."""

    DEFAULT_CSS = """
    SelectorBar { height: auto; display: none; }
    SelectorBar.-open { display: block; }
    SelectorBar > Input, SelectorBar > Input:focus { border: none; height: 1; padding: 0 1; }
    SelectorBar > #selector-feedback { height: auto; padding: 0 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [bind("close", "close", "Close", show=False)]

    selection: var[Selection] = var(Selection)
    """What the selector found (bound to the screen's): the feedback under the input."""
    matching: var[str] = var("")
    """A selector whose matches are still being found (bound to the screen's); "" when none:
    the matches shown are then stale, and the feedback says so."""

    _back_to: Widget | None = None  # where the focus goes when the bar closes

    class Changed(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Closed(Message):
        def __init__(self, keep: bool) -> None:
            super().__init__()
            self.keep = keep  # Enter keeps the matches highlighted; Escape clears them

    def compose(self) -> Any:
        yield SelectorInput(
            placeholder="selector: d1-3, 1, *   #key   +tag   .text   [remaining<=1]   @t-1 …",
            id="selector-input",
            restrict=WITHOUT_ANY,  # a paste holding control characters is refused
        )
        yield Static("", id="selector-feedback", markup=False)

    @property
    def input(self) -> Input:
        return self.query_one(Input)

    def open(self, text: str = "", *, back_to: Widget | None = None) -> None:
        """Show the bar with ``text``; closing it gives the focus to ``back_to``."""
        self._back_to = back_to
        self.add_class("-open")
        self.input.value = text
        self.input.cursor_blink = False
        self.input.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(event.value))

    def action_close(self) -> None:
        self.close(keep=False)

    def close(self, *, keep: bool) -> None:
        """Hide the bar, the focus back where it was (at once: see ``SelectorInput``), and
        say whether its selector is kept (Enter) or cleared (Escape)."""
        self.remove_class("-open")
        if self._back_to is not None:
            self.screen.set_focus(self._back_to)  # now: the next key must not reach the input
        self.post_message(self.Closed(keep=keep))

    def watch_selection(self) -> None:
        self._show_feedback()

    def watch_matching(self) -> None:
        self._show_feedback()

    def _show_feedback(self) -> None:
        shown = feedback(self.selection, self.matching)
        self.query_one("#selector-feedback", Static).update(shown)


_EDITING = BindingsMap(Input.BINDINGS).key_to_bindings


class SelectorInput(Input):
    """The bar's input, taking keys strictly in the order they were typed.

    Textual runs an input's bindings (backspace, the arrows, Enter) when the key has bubbled
    up to the app, and its letters at once: typed in one go, `s` `backspace` `t` came out as
    "…s", and a key typed right after Enter went on to the input, which had not yet handed
    the focus back (an Enter and an `F` ended up in the selector's text). Here every key is
    handled as it comes: editing keys run their action at once, Enter and Escape close the
    bar and give the focus back in the same handler, and a key the app had already sent here
    before that goes on to what has the focus now.
    """

    async def _on_key(self, event: events.Key) -> None:
        if self.screen.focused is not self:  # sent here before Enter or Escape moved the focus
            event.stop()
            event.prevent_default()
            focused = self.screen.focused
            target = focused if focused is not None else self.screen
            # Forwarded, as the app forwards a key it reads: handled there, then bubbling up
            # to the bindings (a key posted anew would come back to the app as a new one).
            target._forward_event(events.Key(event.key, event.character))
            return
        bar = self.parent
        if event.key in ("enter", "escape") and isinstance(bar, SelectorBar):
            event.stop()
            event.prevent_default()
            bar.close(keep=event.key == "enter")
            return
        editing = _EDITING.get(event.key)
        if editing:
            event.stop()
            event.prevent_default()
            await self.run_action(editing[0].action)
            return
        await super()._on_key(event)


def feedback(selection: Selection, matching: str = "") -> Content:
    """A caret under the offending character (the input has one cell of padding), the match
    count, or nothing when no selector is typed; while ``matching`` is being matched, that it
    is, and that the matches shown are those of the selector before."""
    if matching:
        before = ""
        if selection.text and selection.text != matching:
            before = f" · the {len(selection.matches):,} shown are for '{visible(selection.text)}'"
        elif selection.text:
            before = f" · the {len(selection.matches):,} shown are of an older state"
        return Content.styled(f"matching '{visible(matching, limit=200)}'…{before}", "dim")
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
