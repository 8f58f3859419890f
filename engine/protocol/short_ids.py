"""Ids as people type them: a whole id, or a unique start or end of one.

A proposal's id is a UUID, and nobody types 36 characters. The queue shows the end of each id
(counted ids, as tests and the demo make them, share their start: ``00000000-0000-…``), git
shows the start of a hash; either, typed, names the one id it is the start or the end of.
``expand`` turns what was typed into that id, or refuses: an id nothing starts or ends with is
not found (the caller's ``ProtocolError``), one that several do is ``request.ambiguous_id``,
naming them. It looks only at the ids it is given: the caller passes those the actor may see,
so a refusal never names an id behind a barrier.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from engine.protocol.barriers import reads
from engine.protocol.document import Document
from engine.protocol.errors import AmbiguousId, InvalidRequest, ProposalNotFound, ProtocolError
from engine.protocol.model import Agent

NAMED = 5  # candidates an ambiguous id's refusal names (the rest are counted)


def expand(
    given: str,
    ids: Iterable[str],
    what: str,
    not_found: Callable[[str], ProtocolError],
) -> str:
    """The one id of ``ids`` that is ``given``, or that ``given`` starts or ends; refused with
    ``not_found(description)`` if none is, ``AmbiguousId`` naming them if several are, and
    ``InvalidRequest`` if ``given`` is blank (it would match every id)."""
    typed = given.strip()
    if not typed:
        raise InvalidRequest(f"name the {what}: an empty id matches every one", field="id")
    matches = [i for i in ids if i == typed or i.startswith(typed) or i.endswith(typed)]
    if typed in matches:
        return typed
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise not_found(f"no {what} id is, starts or ends with {typed!r}")
    named = ", ".join(matches[:NAMED])
    more = f" and {len(matches) - NAMED:,} more" if len(matches) > NAMED else ""
    raise AmbiguousId(
        f"{typed!r} names {len(matches):,} {what}s: {named}{more}; type more of the id",
        given=typed,
        candidates=matches[:NAMED],
        count=len(matches),
    )


def proposal_id(doc: Document, given: str, reader: Agent | None) -> str:
    """The proposal ``given`` names (its id, or a unique start or end of it) among those
    ``reader`` may read (None: a human, who reads everything); ``proposal.not_found`` if none,
    ``request.ambiguous_id`` if several."""
    proposals = doc.proposals

    def readable(pid: str) -> bool:
        return reads(doc, reader, doc.by_key[proposals[pid].section])

    if given in proposals and readable(given):
        return given  # a whole id: no scan of a large document's proposals
    typed = given.strip()
    # The keys are walked (a restored document builds no proposal for that), and only those
    # that match are read: the barrier is checked on a handful, not on every proposal.
    matching = (
        pid
        for pid in proposals
        if typed and (pid.startswith(typed) or pid.endswith(typed)) and readable(pid)
    )

    def not_found(description: str) -> ProtocolError:
        return ProposalNotFound(description, proposalId=given)

    return expand(given, matching, "proposal", not_found)
