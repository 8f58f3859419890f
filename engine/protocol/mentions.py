"""Whom a comment is addressed to: the humans its text mentions.

v0.3 gives a comment a section, a text and an optional proposal, and nobody to address it
to; ``ask-human`` is its verb for a question that waits for an answer. A comment reaches the
custodian's inbox when its text *mentions* a human, as a review tool's ``@name`` does:

- ``@human`` addresses whoever is the custodian (any human);
- ``@human:NAME`` addresses the human ``NAME``, spelt as a human's actor id is
  (``human:<name>``).

``@human`` is matched in any case (``@Human``, ``@HUMAN``), not inside a word or an address
(``me@human.example`` mentions nobody), and a name ends at white space or at a comma,
semicolon, bracket or quote; a full stop, colon, exclamation or question mark closing the
name (``@human:carol.``) is the sentence's, not the name's. A bare ``@carol`` addresses
nobody: an agent may be named ``carol`` too, and the mention must not depend on who has acted
by the time it is read. Who is addressed is read from the text alone, so every view of a
comment (a replay, a checkpoint, another process) agrees, and nothing is stored for it.
"""

from __future__ import annotations

import re

from engine.protocol.names import HUMAN_PREFIX

ANY_HUMAN = "human"  # what ``@human`` addresses
_MENTION = re.compile(r"(?<![\w@.])@human(?![\w-])(?::([^\s,;()\[\]{}<>\"'`]+))?", re.IGNORECASE)
_SENTENCE_END = ".:!?"


def addressees(text: str) -> tuple[str, ...]:
    """The humans ``text`` mentions, in the order first mentioned, each once: ``"human"``
    for ``@human``, ``"human:NAME"`` for ``@human:NAME``. Empty: addressed to nobody."""
    found: dict[str, None] = {}
    for match in _MENTION.finditer(text):
        name = (match.group(1) or "").rstrip(_SENTENCE_END)
        found[f"{HUMAN_PREFIX}{name}" if name else ANY_HUMAN] = None
    return tuple(found)


def addressed_to_human(text: str) -> bool:
    """Whether ``text`` mentions a human: the comment waits in the custodian's inbox."""
    return _MENTION.search(text) is not None
