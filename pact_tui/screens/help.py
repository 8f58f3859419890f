"""``?``: every key of the current screen, then what its marks mean (the selector language,
and the legend of the glyphs it draws), on one page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.keys import format_key
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keymap import ACTIONS, bind, keys_of, shown_keys

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
    ("@t-1 …  @e3 …  @snap:<id> …", "read a past snapshot (Enter goes there)"),
]
SELECTOR_SECTION = ("Selectors (press / to type one)", SELECTORS)

Legend = tuple[str, list[tuple[str, str]]]
"""A section of the page under the keys: its title, and (what is drawn or typed, its meaning)."""


def bindings_table(
    groups: list[tuple[str, list[BindingType]]], keymap: Mapping[str, str] | None = None
) -> Table:
    """Each group's keys (those in force: ``keymap`` over the defaults) and what they do."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", justify="right", no_wrap=True)
    table.add_column()
    for title, bindings in groups:
        table.add_row("", Text(title, style="bold underline"))
        for given in bindings:
            binding = given if isinstance(given, Binding) else Binding(*given)
            if binding.id is not None and binding.id in ACTIONS:
                keys = shown_keys(keys_of(binding.id, keymap or {}))
            else:
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
    HelpScreen .legend { margin-bottom: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("close-help", "dismiss", "Close"),
    ]

    def __init__(
        self,
        groups: list[tuple[str, list[BindingType]]],
        *legends: Legend,
        keymap: Mapping[str, str] | None = None,
    ) -> None:
        """``groups`` of keys (shown as ``keymap`` binds them), then ``legends`` (each a title
        and its rows): the selector language unless a screen gives its own."""
        super().__init__()
        self.groups = groups
        self.keymap = dict(keymap or {})
        self.legends = legends or (SELECTOR_SECTION,)

    def compose(self) -> Any:
        with VerticalScroll():
            yield Static(Text("pact-tui keys", style="bold"), markup=False)
            yield Static(bindings_table(self.groups, self.keymap), markup=False)
            # One width for the first column of every section, so that they read as one list
            # (an example longer than a glyph's, as the selectors' are, widens its own only).
            widest = max(
                (len(ex) for _, rows in self.legends for ex, _ in rows if len(ex) <= 30), default=0
            )
            for title, rows in self.legends:
                table = Table.grid(padding=(0, 2))
                table.add_column(style="bold", no_wrap=True, min_width=widest)
                table.add_column()
                for example, meaning in rows:  # Text: never markup, '[ttl<=1]' is a selector
                    table.add_row(Text(example), Text(meaning))
                yield Static(
                    Text(title, style="bold underline"), classes="legend-title", markup=False
                )
                yield Static(table, classes="legend", markup=False)
            yield Static(
                Text(
                    "\nCtrl+P opens the command palette for rarer actions (themes, fold all, "
                    "switch context, screenshots). Esc closes this page.",
                    style="dim",
                ),
                markup=False,
            )
