"""What a filter word means, the same in every view of the app (the queue, the heatmap, the
events) and in the audit (``engine.protocol.audit.EventFilter``).

``section:WORD`` keeps a section when WORD is its id (``sec:risk/mitigation``, or without the
``sec:`` prefix, ``risk/mitigation``) or the id of a section it is under (``sec:risk`` keeps
``sec:risk/mitigation``), or a whole word of its title (``mitigation``), in any case. It never
matches by a bare prefix: ``section:sec:risk`` keeps neither ``sec:risk-2`` nor ``sec:riskier``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.protocol.document import Document
    from engine.protocol.model import Agent

SECTION_PREFIX = "sec:"
WORD = re.compile(r"\w+")


@lru_cache(maxsize=4096)
def title_words(title: str) -> frozenset[str]:
    """The words of a section's title, lower-cased."""
    return frozenset(WORD.findall(title.lower()))


def section_matches(word: str, section_id: str, title: str | None) -> bool:
    """Whether the filter word ``word`` (a ``section:`` value) names the section with
    ``section_id`` and ``title`` (None: a title the reader may not see, or none)."""
    wanted = word.lower()
    ident = section_id.lower()
    for path in (ident, ident.removeprefix(SECTION_PREFIX)):
        if path == wanted or path.startswith(wanted + "/"):
            return True
    return title is not None and wanted in title_words(title)


def any_section_matches(words: Iterable[str], section_id: str, title: str | None) -> bool:
    """Whether any of ``words`` names the section (``section_matches``)."""
    return any(section_matches(word, section_id, title) for word in words)


def section_titles(doc: Document, reader: Agent | None) -> dict[str, str]:
    """Each section's title, by id, where ``reader`` (None: the custodian) may read it: what a
    filter of events (which name a section by id) matches title words against."""
    from engine.protocol.barriers import reads

    return {s.id: s.title for s in doc.sections if reads(doc, reader, s)}
