"""Text from outside, made safe to show: the one function every display path uses.

Anything that can append to a workspace chooses its keys, tags, content, seal triggers and
actors; files and arguments carry paths and selectors. Written to a terminal as they are, some
characters act on the terminal instead of being shown (``ESC [2J`` clears the screen,
``ESC ]0;…BEL`` sets the window title, ``ESC ]52;…`` writes the clipboard) and others make a
line say something it does not. :func:`visible` writes each such character as its escape, so
the operator sees that it is there and the terminal never receives it.

What is made visible, and why:

- **C0 controls** U+0000-U+001F (ESC, BEL, BS, CR, …): they drive the terminal.
- **DEL** U+007F and the **C1 controls** U+0080-U+009F: a terminal may read U+009B as CSI, the
  start of a control sequence, and U+0085 as a new line.
- **Bidirectional controls**: the embeddings and overrides U+202A-U+202E, the isolates
  U+2066-U+2069 and the marks U+200E, U+200F, U+061C. They reorder what follows on the line,
  so text reads otherwise than it is (the "Trojan Source" trick).
- **Line and paragraph separators** U+2028, U+2029: some programs break lines there.
- **Tag characters** U+E0000-U+E007F: invisible, yet a model reads them (hidden instructions in
  a context are written with them).
- **Lone surrogates** U+D800-U+DFFF: not characters at all; no encoding can write one, and
  printing one would fail.

Each is written as its JSON escape: ``\\n``, ``\\t``, ``\\r``, ``\\b``, ``\\f``, else
``\\u001b`` (past U+FFFF as a surrogate pair, ``\\udb40\\udc41``). One notation everywhere,
which a reader can paste into JSON or Python to get the character back, and which keeps JSON
text JSON: a JSON document (``--json``, ``ctx print --mode provider``) made visible is the same
document, every value as it was.

Newlines and tabs, per display: a single line (a tree row, a title, a status line, an error
message, a field of a table) shows them escaped, so that a key cannot start a line of its own
or forge another row. ``multiline=True`` keeps ``\\n`` and ``\\t`` as they are, for a display
of the whole content (the detail pane, the content reader), where lines are the content's own;
what draws that text breaks lines at ``\\n`` and expands tabs to spaces.

The app's text inputs refuse them (``WITHOUT_ANY``): what is typed is the operator's own, but
a paste can carry them.

Left as they are: everything else, including zero-width joiners and variation selectors (emoji
and several scripts need them) and private-use characters (icon fonts).

This module imports nothing else of the package: the engine (``ctx print``'s tree) and the
app both use it.
"""

from __future__ import annotations

import json
import re

_OTHERS = (
    "\x7f-\x9f"  # DEL, C1
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional controls
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff"  # lone surrogates
    "\U000e0000-\U000e007f"  # tag characters
)
_SINGLE_LINE = re.compile(f"[\x00-\x1f{_OTHERS}]")
WITHOUT_ANY = f"[^\x00-\x1f{_OTHERS}]*"
"""A regular expression for text that holds none of them: a text input's ``restrict`` (Textual
refuses a paste that would put one in, which the input would otherwise draw raw)."""
_MULTILINE = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHERS}]")  # C0 but tab and newline

# The escapes of the commonest ones, written once.
_ESCAPES = {chr(c): json.dumps(chr(c))[1:-1] for c in (*range(0x20), *range(0x7F, 0xA0))}


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    escape = _ESCAPES.get(character)
    if escape is None:
        # ensure_ascii writes any character past ASCII as \uXXXX, a surrogate pair past U+FFFF.
        escape = json.dumps(character)[1:-1]
    return escape


def visible(text: str, *, multiline: bool = False, limit: int | None = None) -> str:
    """``text`` with every character that could act on a terminal or mislead its reader written
    as its escape (see the module's docstring for which, and how).

    ``multiline``: keep newlines and tabs (a display of the whole content); else they are
    escaped too. ``limit``: show at most that many characters of ``text``, then ``…``, so that a
    display of one line never works through a 10 MB string.
    """
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    pattern = _MULTILINE if multiline else _SINGLE_LINE
    return pattern.sub(_escape, text)


def is_visible(text: str, *, multiline: bool = False) -> bool:
    """Whether ``visible(text, multiline=multiline)`` is ``text`` as it is: one search, for a
    writer that checks a page of text at once and escapes only when it must."""
    if text.isascii():  # known without a look: then str's own test is twice the search's speed
        # Printable ASCII is ASCII but the C0 controls and DEL: in ASCII, what the search finds.
        if multiline:
            text = text.replace("\n", "").replace("\t", "")
        return text.isprintable()
    return (_MULTILINE if multiline else _SINGLE_LINE).search(text) is None
