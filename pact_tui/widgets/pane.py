"""A document view's detail pane, bound as every widget is (``docs/screens.md``): it draws what
it is bound to, the document shown and what is under its view's cursor, with the function
that says it; the screen never writes into it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import RenderableType
from textual.reactive import var
from textual.widgets import Static

from ..types import DocShown


class DetailPane(Static):
    """``draw(shown, key)`` for the bound ``shown`` and ``key``; with ``only_in``, drawn only
    while that view is in front (``view``, bound to the screen's), where drawing costs; with
    ``displayed_in``, drawn in every view but in sight only while that one is in front and it
    has something to say (a section's comments, under its Markdown)."""

    shown: var[DocShown | None] = var(None)
    """The document shown (bound to the screen's ``shown``)."""
    key: var[Any] = var(None)
    """What is under the view's cursor (bound to the screen's: a row, a cell, an id)."""
    view: var[str] = var("")
    """The view in front (bound to the screen's ``view``)."""

    def __init__(
        self,
        draw: Callable[[DocShown, Any], RenderableType],
        *,
        id: str,
        only_in: str | None = None,
        displayed_in: str | None = None,
    ) -> None:
        super().__init__(id=id, markup=False)
        self._draw = draw
        self._only_in = only_in
        self._displayed_in = displayed_in
        self._blank = True  # holds nothing drawn

    def watch_shown(self) -> None:
        self._redraw()

    def watch_key(self) -> None:
        self._redraw()

    def watch_view(self) -> None:
        self._redraw()

    def redraw(self) -> None:
        """Draw again: what ``draw`` reads beside the bound ``shown`` and ``key`` changed."""
        self._redraw()

    def _redraw(self) -> None:
        shown = self.shown
        if shown is None:
            if self._displayed_in is not None:
                self.display = False  # nothing to say of no document
            return
        if self._only_in is not None and self.view != self._only_in:
            # Hidden: it holds nothing (what it drew was for a reader or a state that may be
            # gone: viewing as an agent, it must not keep the custodian's), and is drawn
            # again when its view comes to the front.
            if not self._blank:
                self.update("")
                self._blank = True
            return
        drawn = self._draw(shown, self.key)
        self.update(drawn)
        self._blank = False
        if self._displayed_in is not None:
            self.display = self.view == self._displayed_in and bool(drawn)
