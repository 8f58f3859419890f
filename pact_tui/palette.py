"""The command palette's entries, each drawn as plain text.

Textual's own providers read an entry's title and help as content markup, and several of the
app's entries name what a workspace or a conversation calls things ("Switch to context …",
"View as agent …", "Show …jsonl"): a name holding ``[/]`` broke the palette, and one holding
``[@click=…]`` planted an action in it. These providers take the same entries
(``App.get_system_commands``, the theme list) and draw each as a ``Content`` made with
:func:`pact_tui.text.plain`, its help on a second line, so no entry is ever markup.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content
from textual.keys import format_key
from textual.screen import Screen

from .text import plain


def entry(title: str, help_text: str = "", matcher: Matcher | None = None) -> Content:
    """An entry's title (what ``matcher`` found in it highlighted) and its help, dimmed."""
    shown = plain(title)
    if matcher is not None and shown.plain == title:  # offsets hold only on the same text
        _score, offsets = matcher.fuzzy_search.match(matcher.query, title)
        for offset in offsets:
            if not title[offset].isspace():
                shown = shown.stylize(matcher.match_style, offset, offset + 1)
    if help_text:
        shown = Content.assemble(shown, "\n", plain(help_text, "dim"))
    return shown


def key_of(screen: Screen[Any], callback: Callable[..., Any]) -> str | None:
    """The key in force (the user's keymap applied) that does what ``callback`` does on
    ``screen``, when it is one of the screen's or the app's actions (``action_<name>``)."""
    name = getattr(callback, "__name__", "")
    if not name.startswith("action_"):
        return None
    action = name.removeprefix("action_")
    for key, active in screen.active_bindings.items():
        if active.node in (screen, screen.app) and active.binding.action == action:
            return format_key(key)
    return None


class PlainCommands(Provider):
    """The app's commands (Textual's and the screen's, ``get_system_commands``), each with
    the key that does the same, where there is one."""

    def _help(self, help_text: str, callback: Callable[..., Any]) -> str:
        key = key_of(self.screen, callback)
        return f"{help_text} · key {key}" if key is not None else help_text

    async def discover(self) -> Hits:
        commands = sorted(self.app.get_system_commands(self.screen), key=lambda c: c.title)
        for title, help_text, callback, discover in commands:
            if discover:
                shown = entry(title, self._help(help_text, callback))
                yield DiscoveryHit(shown, callback, text=title)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback, *_ in self.app.get_system_commands(self.screen):
            if (score := matcher.match(title)) > 0:
                shown = entry(title, self._help(help_text, callback), matcher)
                yield Hit(score, shown, callback, text=title)


class PlainThemes(Provider):
    """The theme list: picking one shows it (``choose`` says what else picking does)."""

    def choose(self, name: str) -> None:
        self.app.theme = name

    @property
    def commands(self) -> list[tuple[str, Callable[[], None]]]:
        return [(name, partial(self.choose, name)) for name in sorted(self.app.available_themes)]

    async def discover(self) -> Hits:
        for name, callback in self.commands:
            yield DiscoveryHit(entry(name), callback, text=name)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback in self.commands:
            if (score := matcher.match(name)) > 0:
                yield Hit(score, entry(name, matcher=matcher), callback, text=name)
