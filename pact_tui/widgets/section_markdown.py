"""A section's Markdown, drawn for the custodian who reviews it: every character as the agent
wrote it, nothing hidden and nothing live.

A section's text is whatever an agent's merged proposal said. Textual's ``Markdown`` widget
would draw its control characters raw (an OSC 52 ended by ST wrote the terminal's clipboard),
make its links clickable actions that open a browser, and turn a numeric entity such as
``&#x202e;`` into the bidirectional override it names. So the source is made visible first
(``engine.visible.visible``, its lines kept), and the parser leaves out the rules that would
act or hide: links, images, autolinks and linkified URLs, reference definitions (a line that
renders as nothing), raw HTML (a comment renders as nothing) and entities. What they would
have made is shown as the text that was written: ``[text](https://…)`` with its address.
Headings, emphasis, lists, quotes, code and tables render as before, and so do Markdown's
backslash escapes (``\\*`` is ``*``), also where a backslash in the text meets the escape that
``visible`` wrote for a control character next to it.

A section can be any size (an agent's proposal of 10 MB merges like any other), and the widget
makes a widget per block: the first ``SHOWN_CHARS`` characters are rendered, cut at a line's
end, under a first line that says so; the document screen reads a section whole with the line
API (Enter on the outline, ``ReaderScreen``).
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from textual.await_complete import AwaitComplete
from textual.widgets import Markdown

from engine.visible import visible

SHOWN_CHARS = 20_000

LEFT_OUT = [
    "link",
    "image",
    "autolink",
    "linkify",
    "reference",
    "html_block",
    "html_inline",
    "entity",
]


def inert_parser() -> MarkdownIt:
    """CommonMark with GitHub's tables and strikethrough, without what acts or hides."""
    return MarkdownIt("gfm-like", {"html": False, "linkify": False}).disable(LEFT_OUT)


class SectionMarkdown(Markdown):
    """``Markdown`` whose source is made visible and whose parser is :func:`inert_parser`."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, parser_factory=inert_parser, open_links=False)

    def update(self, markdown: str) -> AwaitComplete:
        return super().update(visible(shown_part(markdown), multiline=True))


def shown_part(markdown: str) -> str:
    """``markdown``, or a first paragraph saying that it is cut and how, then its first
    ``SHOWN_CHARS`` characters (to the end of a line where there is one)."""
    if len(markdown) <= SHOWN_CHARS:
        return markdown
    cut = markdown.rfind("\n", 0, SHOWN_CHARS) + 1 or SHOWN_CHARS
    said = f"*The first {cut:,} of {len(markdown):,} characters: Enter reads the whole section.*"
    return f"{said}\n\n{markdown[:cut]}"
