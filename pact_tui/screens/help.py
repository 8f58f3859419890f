"""``?``: every key of the current screen and the selector language, on one page."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.keys import format_key
from textual.screen import ModalScreen
from textual.widgets import Static

SELECTORS = [
    ("d0, 1, 0", "one item: depth, position (slot), offset"),
    ("d1-3, 1, *", "ranges and wildcards: slot 1 of the last three finished turns"),
    ("d-1, *, *", "the system region"),
    ("^sys  ^ah  ^seq", "regions: system, active turn (d0), history (d ≥ 1)"),
    ("#prefs  +user  .text", "key, tag (several are ANDed), node type"),
    ("[remaining<=1]", "gone at the next advance (remaining: episodes of life left)"),
    ("[priority>=5]  [ttl=null]", "filters: = != < <= > >= over any field (docs/selectors.md)"),
    ("[permanent] [temporary] [sticky] [cyclic]", "lifecycle flags"),
    ("^seq +user, #prefs", "unions with ','; descendant (space) and child (>) combinators"),
    ("@t-1 …  @e3 …  @snap:<id> …", "read a past snapshot (the view jumps there)"),
]


def bindings_table(groups: list[tuple[str, list[BindingType]]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", justify="right", no_wrap=True)
    table.add_column()
    for title, bindings in groups:
        table.add_row("", Text(title, style="bold underline"))
        for given in bindings:
            binding = given if isinstance(given, Binding) else Binding(*given)
            keys = ", ".join(format_key(key.strip()) for key in binding.key.split(","))
            table.add_row(Text(keys), Text(binding.tooltip or binding.description))
        table.add_row("", "")
    return table


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90%; max-width: 110; height: 90%;
        border: round $accent; background: $surface; padding: 1 2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close"),
    ]

    def __init__(
        self,
        groups: list[tuple[str, list[BindingType]]],
        legend: tuple[str, list[tuple[str, str]]] | None = None,
    ) -> None:
        """``groups`` of keys, then ``legend`` (a title and its rows): the selector language
        unless a screen gives its own."""
        super().__init__()
        self.groups = groups
        self.legend = legend or ("Selectors (press / to type one)", list(SELECTORS))

    def compose(self) -> Any:
        selectors = Table.grid(padding=(0, 2))
        selectors.add_column(style="bold", no_wrap=True)
        selectors.add_column()
        title, rows = self.legend
        for example, meaning in rows:  # Text: never markup, '[ttl<=1]' is a selector
            selectors.add_row(Text(example), Text(meaning))
        with VerticalScroll():
            yield Static(Text("pact-tui keys", style="bold"))
            yield Static(bindings_table(self.groups))
            yield Static(Text(title, style="bold underline"))
            yield Static(selectors)
            yield Static(
                Text(
                    "\nCtrl+P opens the command palette for rarer actions (themes, fold all, "
                    "switch context, screenshots). Esc closes this page.",
                    style="dim",
                )
            )
