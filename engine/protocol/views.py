"""Every read path, through the information barriers (``engine.protocol.barriers``).

Each function takes the reader: an ``Agent``, or None for a human custodian (who sees all, at
disclosure level 4). What a reader may not see is left out, never shown blanked: a hidden
section's id is the slug of its title, so even its id would leak it.

Context modes, for an agent invited with one:
- ``Full``: every section its clearance and organisation allow, with content.
- ``SectionScoped``: only the invited sections and their subsections.
- ``Neighbourhood``: those, plus the parent, the siblings and the children of each.
- ``SummaryOnly``: the section tree (``section_rows``: ids, titles, levels, versions,
  classifications, organisations, locks, the escalated mark, the top salience) and, as content,
  the headings alone. Nothing said in or about a section: no content, proposals (``pending``
  and ``conflict`` count only what the reader may read), intents, constraints, comments,
  questions, escalation reasons, conflicts or invited drafter.

A reader may also be a clearance alone (``cleared_reader``): what an agent of that clearance,
of no organisation, in ``Full`` mode would see; a redacted export for sharing is the content
through its eyes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from typing import Any

from engine.protocol.barriers import reads, sees
from engine.protocol.document import Document
from engine.protocol.errors import InvalidRequest
from engine.protocol.mentions import addressees
from engine.protocol.model import (
    DEFAULT_SALIENCE,
    HUMAN_DISCLOSURE,
    Agent,
    Comment,
    Constraint,
    Proposal,
    Section,
    invite_state,
)
from engine.protocol.names import HUMAN_PREFIX

Reader = Agent | None


def content(doc: Document, reader: Reader) -> str:
    """The Markdown the reader may read (SummaryOnly: the headings only, as ATX headings)."""
    if reader is not None and reader.mode == "SummaryOnly":
        return "".join(
            f"{'#' * s.level} {s.title}\n" for s in doc.sections if s.level and sees(doc, reader, s)
        )
    return "".join(s.content for s in doc.sections if reads(doc, reader, s))


def cleared_reader(doc: Document, level: str) -> Agent:
    """A reader with clearance ``level`` and nothing else: no organisation (so no
    organisation's sections), ``Full`` mode, disclosure 1. Not an agent of the document; the
    barriers treat it as they treat one. ``level`` is a level of the document's framework,
    in any case when only one level is spelt so; else ``request.invalid`` naming the levels."""
    if doc.framework is None:
        raise InvalidRequest(
            f"clearance {level!r}: document {doc.name!r} has no classification framework"
            " (nothing is classified: every section is open to any clearance)",
            level=level,
        )
    name, levels = doc.framework
    matches = [lv for lv in levels if lv == level] or [
        lv for lv in levels if lv.casefold() == level.casefold()
    ]
    if len(matches) != 1:
        raise InvalidRequest(
            f"clearance {level!r} is not a level of framework {name!r} ({', '.join(levels)})",
            level=level,
            levels=list(levels),
        )
    return Agent(
        id=f"clearance:{matches[0]}",
        name=f"clearance {matches[0]}",
        role=None,
        trust="Observer",
        order=-1,
        joined_ms=0,
        last_seen_ms=0,
        active=False,
        clearance=matches[0],
        clearance_rank=levels.index(matches[0]),
    )


def visible_sections(doc: Document, reader: Reader) -> list[Section]:
    return [s for s in doc.sections if sees(doc, reader, s)]


def invite_rows(doc: Document, now_ms: int) -> list[dict[str, Any]]:
    """The document's invites in the order they were made, as a custodian lists them: never
    the token (the document does not have it), its hash's first 12 digits as the invite's id."""
    rows = []
    for invite in doc.invites.values():
        rows.append(
            {
                "invite": invite.token_hash[:12],
                "tokenHash": invite.token_hash,
                "state": invite_state(invite, now_ms),
                "trustLevel": invite.trust,
                "clearance": invite.clearance,
                "organisation": invite.organisation,
                "mode": invite.mode,
                "scope": [doc.by_key[k].id for k in invite.scope if k in doc.by_key],
                "expiresAt": invite.expires_ms,
                "createdBy": invite.created_by,
                "usedBy": doc.agents[invite.used_by].name
                if invite.used_by in doc.agents
                else invite.used_by,
                "revokedBy": invite.revoked_by,
            }
        )
    return rows


def section_rows(doc: Document, reader: Reader, now_ms: int) -> list[dict[str, Any]]:
    """The section tree as the reader sees it, with the marks a custodian needs."""
    rows = []
    for section in visible_sections(doc, reader):
        lock = section.lock
        if lock is not None and lock.until_ms is not None and lock.until_ms <= now_ms:
            lock = None
        open_here = doc.open_on(section.key) if reads(doc, reader, section) else []
        parent = doc.by_key[section.parent].id if section.parent is not None else None
        rows.append(
            {
                "sectionId": section.id,
                "title": section.title,
                "level": section.level,
                "parentId": parent,
                "version": section.version,
                "classification": section.classification,
                "organisation": section.organisation,
                "lock": None
                if lock is None
                else {
                    "holder": lock.holder_name,
                    "holderKind": lock.holder_kind,
                    "expiresAt": lock.until_ms,
                },
                "pending": len(open_here),
                "conflict": any(p.status == "Conflict" for p in open_here),
                "escalated": section.escalated is not None,
                "maxSalience": max_salience(doc, section),
            }
        )
    return rows


def max_salience(doc: Document, section: Section) -> int:
    """The highest salience on ``section`` among the joined agents, an agent that set none
    counting as ``DEFAULT_SALIENCE``; 0 with nobody joined. Only the agents that set one on
    the section are looked at (``Document.salience_by_section``), not every agent for every
    section of the tree. Like the votes, it counts every joined agent, whatever it may see."""
    if not doc.active:
        return 0
    agents = doc.agents
    scores = doc.salience_by_section.get(section.key, {})
    joined = [score for agent, score in scores.items() if agents[agent].active]
    highest = max(joined, default=0)
    if len(joined) < len(doc.active):  # someone joined set none here: the default counts
        highest = max(highest, DEFAULT_SALIENCE)
    return highest


def invited_drafter(doc: Document, section: Section) -> Agent | None:
    """Once the intents on a section align (none proposed or objected, at least one
    accepted), the agent with the highest salience among those that may read the section is
    invited to draft; ties go to registration order."""
    live = [i for i in doc.intents_of(section.key) if i.status != "Superseded"]
    if not live or any(i.status in ("Proposed", "Objected") for i in live):
        return None
    agents = [a for a in doc.active_agents() if reads(doc, a, section)]
    if not agents:
        return None
    return max(agents, key=lambda a: (doc.salience_of(a.id, section.key), -a.order))


def proposals(
    doc: Document,
    reader: Reader,
    *,
    status: str | None = None,
    section: Section | None = None,
    author: str | None = None,
    open_only: bool = False,
) -> list[Proposal]:
    """Proposals the reader may see, oldest first, by the index that fits the filter."""
    candidates: Iterable[str]
    if section is not None and (open_only or status in ("Pending", "Approved", "Conflict")):
        candidates = doc.open_by_section.get(section.key, {})
    elif author is not None:
        candidates = doc.by_author.get(author, [])
    elif status is not None:
        candidates = doc.by_status.get(status, {})
    else:
        candidates = doc.proposals
    found = []
    for pid in candidates:
        p = doc.proposals[pid]
        if status is not None and p.status != status:
            continue
        if section is not None and p.section != section.key:
            continue
        if author is not None and p.author != author:
            continue
        if reads(doc, reader, doc.by_key[p.section]):
            found.append(p)
    return found


def constraint_row(doc: Document, constraint: Constraint, level: int) -> dict[str, Any]:
    """A constraint at disclosure ``level``: 1 boundary, 2 + category, 3 + reasoning, 4 all."""
    row: dict[str, Any] = {
        "constraintId": constraint.id,
        "sectionId": doc.by_key[constraint.section].id,
        "boundary": constraint.boundary,
        "compatibility": constraint.compatibility,
    }
    if level >= 2:
        row["category"] = constraint.category
    if level >= 3:
        row["reasoning"] = constraint.reasoning
    if level >= HUMAN_DISCLOSURE:
        author = doc.agents.get(constraint.author)
        row["author"] = author.name if author else constraint.author
    return row


def constraints(
    doc: Document, reader: Reader, section: Section | None = None, *, briefing: bool = False
) -> list[dict[str, Any]]:
    level = HUMAN_DISCLOSURE if reader is None else reader.disclosure
    if briefing and reader is not None:
        level = max(level, 3)
    chosen = doc.constraints.values() if section is None else doc.constraints_of(section.key)
    return [
        constraint_row(doc, k, level if k.author != (reader.id if reader else None) else 4)
        for k in chosen
        if not k.withdrawn and reads(doc, reader, doc.by_key[k.section])
    ]


def intents(doc: Document, reader: Reader, section: Section | None = None) -> list[dict[str, Any]]:
    rows = []
    chosen = doc.intents.values() if section is None else doc.intents_of(section.key)
    for intent in chosen:
        if not reads(doc, reader, doc.by_key[intent.section]):
            continue
        author = doc.agents.get(intent.author)
        rows.append(
            {
                "intentId": intent.id,
                "sectionId": doc.by_key[intent.section].id,
                "agent": author.name if author else intent.author,
                "goal": intent.goal,
                "category": intent.category,
                "status": intent.status,
            }
        )
    return rows


def comments(
    doc: Document,
    reader: Reader,
    *,
    section: Section | None = None,
    proposal: str | None = None,
    open_only: bool = False,
) -> list[Comment]:
    """The comments the reader may read, oldest first: on ``section`` (its own, a proposal's
    on it included), on ``proposal``, or all; ``open_only``: not resolved."""
    found = []
    for comment in doc.comments.values():
        if section is not None and comment.section != section.key:
            continue
        if proposal is not None and comment.proposal != proposal:
            continue
        if open_only and comment.resolved_by is not None:
            continue
        if reads(doc, reader, doc.by_key[comment.section]):
            found.append(comment)
    return found


def comment_author(doc: Document, comment: Comment) -> tuple[str, str]:
    """Who wrote ``comment``, as (name, actorKind): a human's comment is filed under its actor
    id, ``human:<name>``; an agent's under its registration."""
    if comment.author.startswith(HUMAN_PREFIX):
        return comment.author.removeprefix(HUMAN_PREFIX), "Individual"
    agent = doc.agents.get(comment.author)
    return (agent.name if agent is not None else comment.author), "AiAgent"


def comment_row(doc: Document, comment: Comment) -> dict[str, Any]:
    """A comment as the read paths give it: who wrote it, whom it addresses
    (``engine.protocol.mentions``), and whether it is resolved."""
    name, kind = comment_author(doc, comment)
    return {
        "commentId": comment.id,
        "sectionId": doc.by_key[comment.section].id,
        "proposalId": comment.proposal,
        "author": name,
        "authorKind": kind,
        "text": comment.text,
        "at": comment.at_ms,
        "to": list(addressees(comment.text)),
        "resolvedBy": comment.resolved_by,
    }


def briefing(doc: Document, reader: Reader, section: Section) -> dict[str, Any]:
    """What bears on an escalated section: its intents and constraints (and its ancestors'),
    the open questions, conflicts and comments; constraints at level 3 for an agent, 4 for a
    human.
    A reader that may not read the section gets its id and nothing else (``withheld``)."""
    if not reads(doc, reader, section):
        return {
            "sectionId": section.id,
            "withheld": True,
            "escalated": None,
            "intents": [],
            "constraints": [],
            "questions": [],
            "conflicts": [],
            "comments": [],
            "drafter": None,
        }
    chain = [section, *doc.ancestors(section)]
    readable = [s for s in chain if reads(doc, reader, s)]
    return {
        "sectionId": section.id,
        "escalated": None
        if section.escalated is None
        else {
            "by": section.escalated.by,
            "byKind": section.escalated.kind,
            "reason": section.escalated.why,
        },
        "intents": [row for s in readable for row in intents(doc, reader, s)],
        "constraints": [
            row for s in readable for row in constraints(doc, reader, s, briefing=True)
        ],
        "questions": [
            {"queryId": q.id, "question": q.question, "status": q.status}
            for q in doc.queries.values()
            if q.section == section.key
        ],
        "conflicts": [
            {"conflictId": g.id, "proposals": list(g.proposals), "overlaps": g.overlaps}
            for g in doc.conflicts.values()
            if g.section == section.key and g.resolved is None
        ],
        "comments": [
            comment_row(doc, k) for k in comments(doc, reader, section=section, open_only=True)
        ],
        "drafter": (lambda a: a.name if a else None)(invited_drafter(doc, section)),
    }


# Keys of a payload an agent never sees: a constraint's reasoning (disclosure 3), invite
# material, and the answer a command gave its actor (kept for retries; a proposal's answer
# lists the section's constraints with their categories, disclosure 2). Category is disclosure 2.
_NEVER = ("reasoning", "tokenHash", "keyHash", "answer")


def redact(doc: Document, reader: Reader, event: Mapping[str, Any]) -> dict[str, Any]:
    """An event as ``reader`` may see it: an event that bears on a section it may not read
    keeps its envelope but loses its payload (``{"withheld": true}``) and its section id."""
    shown = dict(event)
    if reader is None:
        return shown
    kind = event["eventType"]
    text = event["payloadJson"]
    if kind == "pact.document.snapshot" or len(text) > _KEPT_MAX:
        return _redacted(doc, reader, shown)
    if kind in _INVITES or any(not _readable(doc, reader, key) for key in _bears_on(text)):
        return _withheld(shown)
    shown["payloadJson"] = _shown_text(text, _hides_category(reader, kind))
    return shown


_INVITES = ("pact.invite.created", "pact.invite.revoked")  # never shown to agents
# A page of events is redacted for each agent that polls it: what is read of a payload up to
# this long, and the text an agent is shown of it, are kept for the next readers.
_KEPT_MAX = 8192


def _redacted(doc: Document, reader: Agent, shown: dict[str, Any]) -> dict[str, Any]:
    data = json.loads(shown["payloadJson"])
    keys = [data["sectionKey"]] if "sectionKey" in data else []
    keys += data.get("addedKeys", [])
    kind = shown["eventType"]
    if kind == "pact.document.snapshot":
        rows = [row for key, row in enumerate(data["sections"]) if _readable(doc, reader, key)]
        data = {**data, "sections": rows}
    elif kind in _INVITES:
        keys.append(-1)
    if any(not _readable(doc, reader, key) for key in keys):
        return _withheld(shown)
    shown["payloadJson"] = _agents_text(data, _hides_category(reader, kind))
    return shown


@functools.lru_cache(maxsize=2048)
def _bears_on(payload_json: str) -> tuple[Any, ...]:
    """The section keys a payload bears on."""
    data = json.loads(payload_json)
    keys = [data["sectionKey"]] if "sectionKey" in data else []
    return (*keys, *data.get("addedKeys", []))


@functools.lru_cache(maxsize=2048)
def _shown_text(payload_json: str, hide_category: bool) -> str:
    return _agents_text(json.loads(payload_json), hide_category)


def _agents_text(data: dict[str, Any], hide_category: bool) -> str:
    for key in _NEVER:
        data.pop(key, None)
    if hide_category:
        data.pop("category", None)
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def _hides_category(reader: Agent, kind: str) -> bool:
    return reader.disclosure < 2 and kind.startswith("pact.constraint.")


def _withheld(shown: dict[str, Any]) -> dict[str, Any]:
    shown["payloadJson"] = json.dumps({"withheld": True})
    shown["sectionId"] = None
    return shown


def _readable(doc: Document, reader: Agent, key: int) -> bool:
    section = doc.by_key.get(key)
    return section is not None and reads(doc, reader, section)
