"""Text from data, as a widget draws it: never markup, never a raw control character.

Textual reads a ``str`` given to most of what draws text (a ``Static``, a border title, a
tooltip, a palette entry, a notification) as content markup: an agent named ``x[/]`` is a
``MarkupError`` on every draw, and one named ``[@click=app.quit]q[/]`` a live action. And a
character such as ESC, written to the terminal as it is, acts on it (``ESC ]52;…`` writes the
clipboard). So what a workspace, a document, a conversation or a file says reaches a widget as
a ``Content`` built here from :func:`engine.visible.visible` strings (or a ``rich.text.Text``
built from them, which is as plain): markup is never parsed from data, and no control
character is drawn raw.

The places a string would still be read as markup are made safe where they are built, once:
``PactApp.notify`` makes every notification plain, ``PlainCommands`` every palette entry,
``SectionMarkdown`` a section's Markdown; ``tests/tui/test_no_markup_from_data.py`` keeps the
rest of the app's code to these functions.
"""

from __future__ import annotations

from textual.content import Content
from textual.style import Style

from engine.visible import visible


def plain(text: str, style: str | Style = "", *, limit: int | None = None) -> Content:
    """One line of ``text`` (a name, a title, a status): every control character, newline
    and tab included, written as its escape; at most ``limit`` characters, then ``…``."""
    shown = visible(text, limit=limit)
    return Content.styled(shown, style) if style else Content(shown)


def plain_block(text: str, style: str | Style = "", *, limit: int | None = None) -> Content:
    """A whole ``text`` of several lines (a message, a briefing): its newlines and tabs kept,
    every other control character written as its escape."""
    shown = visible(text, multiline=True, limit=limit)
    return Content.styled(shown, style) if style else Content(shown)
