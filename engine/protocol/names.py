"""Agent names: which ones an agent may not join under, and when two names look alike.

An agent's name is a label it chooses, shown beside everything it does. The local command line
and app trust whoever can write the workspace file (``--agent`` and ``--human`` are labels, not
proofs; the HTTP server is the boundary), so these rules do not stop anyone lying about who runs
a process. They stop an agent from *looking like* the system or a human in the log and on the
custodian's screen: an agent may not join as ``system``, as anything starting ``human:`` (the
form of a human's actor id), or under a name a human has acted under on the document
(``Document.humans``). Every view also names the actor's kind, read from the event.

Two names are compared as ``comparable`` makes them (NFKC, casefolded, without white space and
without characters that show nothing), and then as Unicode's confusables data says they look
(``confusables``: ``system`` spelt with Cyrillic letters looks like ``system``, ``rn`` like
``m``, ``0`` like ``o``). A refusal over a look-alike is a refusal to show two actors the
custodian cannot tell apart; a rare false alarm costs the agent another name.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

SYSTEM_NAME = "system"
HUMAN_PREFIX = "human:"  # a human's actor id is human:<name>
# How many characters of a name may spell a look-alike of ``human:``: the confusables data
# maps one character to at most a few (``m`` to ``rn``).
_PREFIX_SPAN = 4 * len(HUMAN_PREFIX)
_INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp"})  # controls, format characters, separators


def comparable(name: str) -> str:
    """``name`` as names are compared: NFKC, casefolded and NFKC again (casefolding can leave
    text that is not NFKC), without white space anywhere (``" Sys tem "`` is ``system``), and
    without the characters that show nothing: controls and format characters (zero-width
    spaces and joiners, bidi controls)."""
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return "".join(
        char for char in text if not char.isspace() and unicodedata.category(char) not in _INVISIBLE
    )


def looks_like(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` (both ``comparable``) would look the same on a screen."""
    if a == b:
        return True
    if not a or not b:
        return False
    # Unicode's confusables (UTS #39) as the package ships them; imported here, on a join,
    # not with the engine (its table takes some 30 ms to load).
    from confusables import is_confusable

    return bool(is_confusable(a, b))


def reserved(name: str, humans: Iterable[str] = ()) -> str | None:
    """Why an agent may not join as ``name``, or None if it may. ``humans``: the names humans
    have acted under on the document."""
    key = comparable(name)
    if not key:
        return "it shows nothing once white space and invisible characters are left out"
    if looks_like(key, SYSTEM_NAME):
        return f"it is, or looks like, {SYSTEM_NAME!r}, the name of the protocol's own events"
    spans = range(1, min(len(key), _PREFIX_SPAN) + 1)
    if any(looks_like(key[:n], HUMAN_PREFIX) for n in spans):
        return f"it starts with, or looks like it starts with, {HUMAN_PREFIX!r}, a human's id"
    for human in humans:
        if looks_like(key, comparable(human)):
            return f"it is, or looks like, {human!r}, a name a human has acted under here"
    return None
