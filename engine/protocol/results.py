"""What a document command did, as values: one type per family of commands.

``decide`` answers each protocol command with one of these (in ``Decision.result``): the
agents' ``join``, ``leave``, ``heartbeat`` and ``done``; the ICS ``intent`` and ``constrain``
families; every proposal command (:class:`ProposalStatus`, ``proposal-response.json``); locks,
questions, escalations, resolutions, comments, invites, a custodian's settings, edits, the
policy; and ``tick`` (:class:`Fired`).

:meth:`to_json` is a result's JSON form, the keys and order it always had: the answer an event
keeps beside its idempotency key (``answer``), and what ``tap … --json`` and the server send
(``Decision.answer``). A retry is answered from the kept form (:func:`from_json`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from engine.canonical import canonical_json


@dataclass(frozen=True, slots=True)
class Joined:
    """``join``: the agent's registration."""

    registration_id: str
    document_id: str
    agent_name: str
    role: str | None
    joined_at: str

    def to_json(self) -> dict[str, Any]:
        return {
            "registrationId": self.registration_id,
            "documentId": self.document_id,
            "agentName": self.agent_name,
            "role": self.role,
            "joinedAt": self.joined_at,
        }


@dataclass(frozen=True, slots=True)
class Left:
    """``leave``: the agent ``agent_id`` is gone."""

    agent_id: str

    def to_json(self) -> dict[str, Any]:
        return {"agentId": self.agent_id, "left": True}


@dataclass(frozen=True, slots=True)
class Alive:
    """``heartbeat``: the agent is evicted at ``evict_at`` unless heard from again."""

    agent_id: str
    evict_at: str

    def to_json(self) -> dict[str, Any]:
        return {"agentId": self.agent_id, "evictAt": self.evict_at}


@dataclass(frozen=True, slots=True)
class Finished:
    """``done``: how the agent finished (aligned, dissenting, partial, abstained)."""

    agent_id: str
    status: str

    def to_json(self) -> dict[str, Any]:
        return {"agentId": self.agent_id, "status": self.status}


@dataclass(frozen=True, slots=True)
class IntentStatus:
    """``intent`` (accepted at ``accept_at`` unless objected to) or an objection to one."""

    intent_id: str
    status: str
    accept_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"intentId": self.intent_id, "status": self.status}
        if self.accept_at is not None:
            out["acceptAt"] = self.accept_at
        return out


@dataclass(frozen=True, slots=True)
class ConstraintStatus:
    """``constrain``, ``mark-constraint`` or an objection to a constraint: its compatibility."""

    constraint_id: str
    compatibility: str

    def to_json(self) -> dict[str, Any]:
        return {"constraintId": self.constraint_id, "compatibility": self.compatibility}


@dataclass(frozen=True, slots=True)
class ConstraintWithdrawn:
    """``withdraw-constraint``."""

    constraint_id: str

    def to_json(self) -> dict[str, Any]:
        return {"constraintId": self.constraint_id, "withdrawn": True}


@dataclass(frozen=True, slots=True)
class SalienceSet:
    """``salience``: the agent's score for a section."""

    agent_id: str
    section_id: str
    score: int

    def to_json(self) -> dict[str, Any]:
        return {"agentId": self.agent_id, "sectionId": self.section_id, "score": self.score}


@dataclass(frozen=True, slots=True)
class ActiveConstraint:
    """A constraint in force on a proposal's section."""

    boundary: str
    category: str

    def to_json(self) -> dict[str, Any]:
        return {"boundary": self.boundary, "category": self.category}


@dataclass(frozen=True, slots=True)
class ProposalStatus:
    """``proposal-response.json``: ``propose``, ``approve``, ``reject``, ``withdraw``,
    ``revert``, ``force-merge`` and an objection to a proposal."""

    proposal_id: str
    document_id: str
    section_id: str
    status: str
    summary: str | None
    created_at: str
    active_constraints: tuple[ActiveConstraint, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "proposalId": self.proposal_id,
            "documentId": self.document_id,
            "sectionId": self.section_id,
            "status": self.status,
            "summary": self.summary,
            "createdAt": self.created_at,
            "activeConstraints": [k.to_json() for k in self.active_constraints],
        }


@dataclass(frozen=True, slots=True)
class Locked:
    """``lock``: the section is the agent's until ``expires_at``."""

    section_id: str
    expires_at: str
    ttl_seconds: int

    def to_json(self) -> dict[str, Any]:
        return {
            "sectionId": self.section_id,
            "expiresAt": self.expires_at,
            "ttlSeconds": self.ttl_seconds,
        }


@dataclass(frozen=True, slots=True)
class Unlocked:
    """``unlock``."""

    section_id: str

    def to_json(self) -> dict[str, Any]:
        return {"sectionId": self.section_id, "unlocked": True}


@dataclass(frozen=True, slots=True)
class DocumentLock:
    """``lock-document`` (``locked``) or ``unlock-document``."""

    locked: bool

    def to_json(self) -> dict[str, Any]:
        return {"locked": self.locked}


@dataclass(frozen=True, slots=True)
class QueryStatus:
    """``ask-human`` (open until ``due_at``), ``respond`` or ``dismiss``."""

    query_id: str
    status: str
    due_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"queryId": self.query_id, "status": self.status}
        if self.due_at is not None:
            out["dueAt"] = self.due_at
        return out


@dataclass(frozen=True, slots=True)
class Escalated:
    """``escalate``."""

    section_id: str

    def to_json(self) -> dict[str, Any]:
        return {"sectionId": self.section_id, "escalated": True}


@dataclass(frozen=True, slots=True)
class Resolved:
    """``resolve``: a human's binding decision on a section."""

    resolution_id: str
    section_id: str

    def to_json(self) -> dict[str, Any]:
        return {"resolutionId": self.resolution_id, "sectionId": self.section_id}


@dataclass(frozen=True, slots=True)
class Commented:
    """``comment``."""

    comment_id: str

    def to_json(self) -> dict[str, Any]:
        return {"commentId": self.comment_id}


@dataclass(frozen=True, slots=True)
class CommentResolved:
    """``resolve-comment``."""

    comment_id: str

    def to_json(self) -> dict[str, Any]:
        return {"commentId": self.comment_id, "resolved": True}


@dataclass(frozen=True, slots=True)
class Invited:
    """``invite``: the token, shown this once (None in a retry's answer: the log keeps only
    its hash)."""

    token: str | None
    token_hash: str
    expires_at: str
    mode: str

    def to_json(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "tokenHash": self.token_hash,
            "expiresAt": self.expires_at,
            "mode": self.mode,
        }


@dataclass(frozen=True, slots=True)
class InviteRevoked:
    """``revoke-invite``."""

    token_hash: str

    def to_json(self) -> dict[str, Any]:
        return {"tokenHash": self.token_hash, "revoked": True}


@dataclass(frozen=True, slots=True)
class Classified:
    """``classify``: the section's level."""

    section_id: str
    level: str

    def to_json(self) -> dict[str, Any]:
        return {"sectionId": self.section_id, "level": self.level}


@dataclass(frozen=True, slots=True)
class ClearanceSet:
    """``clearance``."""

    agent_id: str
    clearance: str

    def to_json(self) -> dict[str, Any]:
        return {"agentId": self.agent_id, "clearance": self.clearance}


@dataclass(frozen=True, slots=True)
class TrustSet:
    """``trust``."""

    agent_id: str
    trust_level: str

    def to_json(self) -> dict[str, Any]:
        return {"agentId": self.agent_id, "trustLevel": self.trust_level}


@dataclass(frozen=True, slots=True)
class DisclosureSet:
    """``disclosure``."""

    agent_id: str
    disclosure: int

    def to_json(self) -> dict[str, Any]:
        return {"agentId": self.agent_id, "disclosure": self.disclosure}


@dataclass(frozen=True, slots=True)
class Removed:
    """``remove``: a custodian removed the agent."""

    agent_id: str

    def to_json(self) -> dict[str, Any]:
        return {"agentId": self.agent_id, "removed": True}


@dataclass(frozen=True, slots=True)
class Edited:
    """``edit``: the section's version now."""

    section_id: str
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"sectionId": self.section_id, "version": self.version}


@dataclass(frozen=True, slots=True)
class PolicyStatus:
    """``policy``: the policy now, and whether the command ``changed`` it (if not, nothing
    was appended)."""

    policy: str
    window_seconds: int
    strategy: str
    removal_guard: int
    changed: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "windowSeconds": self.window_seconds,
            "strategy": self.strategy,
            "removalGuard": self.removal_guard,
            "changed": self.changed,
        }


@dataclass(frozen=True, slots=True)
class Fired:
    """``tick``: how many events the due work fired."""

    fired: int

    def to_json(self) -> dict[str, Any]:
        return {"fired": self.fired}


@dataclass(frozen=True, slots=True)
class Made:
    """A retry's answer where the log keeps no answer (written before answers were kept): the
    id of what the command made, if any."""

    id: str | None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id} if self.id is not None else {}


@dataclass(frozen=True, slots=True)
class Recorded:
    """A retry's answer the log keeps in a shape this version does not make, as it is kept
    (canonical JSON)."""

    answer: str

    def to_json(self) -> dict[str, Any]:
        kept: dict[str, Any] = json.loads(self.answer)
        return kept


DocumentResult: TypeAlias = (
    Joined
    | Left
    | Alive
    | Finished
    | IntentStatus
    | ConstraintStatus
    | ConstraintWithdrawn
    | SalienceSet
    | ProposalStatus
    | Locked
    | Unlocked
    | DocumentLock
    | QueryStatus
    | Escalated
    | Resolved
    | Commented
    | CommentResolved
    | Invited
    | InviteRevoked
    | Classified
    | ClearanceSet
    | TrustSet
    | DisclosureSet
    | Removed
    | Edited
    | PolicyStatus
    | Fired
    | Made
    | Recorded
)


def _proposal(d: Mapping[str, Any]) -> ProposalStatus:
    return ProposalStatus(
        d["proposalId"],
        d["documentId"],
        d["sectionId"],
        d["status"],
        d["summary"],
        d["createdAt"],
        tuple(ActiveConstraint(k["boundary"], k["category"]) for k in d["activeConstraints"]),
    )


# Each shape an answer is kept in (its keys) → its value.
_SHAPES: dict[frozenset[str], Callable[[Mapping[str, Any]], DocumentResult]] = {
    frozenset(shape.split()): read
    for shape, read in (
        (
            "registrationId documentId agentName role joinedAt",
            lambda d: Joined(
                d["registrationId"], d["documentId"], d["agentName"], d["role"], d["joinedAt"]
            ),
        ),
        ("agentId left", lambda d: Left(d["agentId"])),
        ("agentId evictAt", lambda d: Alive(d["agentId"], d["evictAt"])),
        ("agentId status", lambda d: Finished(d["agentId"], d["status"])),
        ("intentId status", lambda d: IntentStatus(d["intentId"], d["status"])),
        (
            "intentId status acceptAt",
            lambda d: IntentStatus(d["intentId"], d["status"], d["acceptAt"]),
        ),
        (
            "constraintId compatibility",
            lambda d: ConstraintStatus(d["constraintId"], d["compatibility"]),
        ),
        ("constraintId withdrawn", lambda d: ConstraintWithdrawn(d["constraintId"])),
        (
            "agentId sectionId score",
            lambda d: SalienceSet(d["agentId"], d["sectionId"], d["score"]),
        ),
        (
            "proposalId documentId sectionId status summary createdAt activeConstraints",
            _proposal,
        ),
        (
            "sectionId expiresAt ttlSeconds",
            lambda d: Locked(d["sectionId"], d["expiresAt"], d["ttlSeconds"]),
        ),
        ("sectionId unlocked", lambda d: Unlocked(d["sectionId"])),
        ("locked", lambda d: DocumentLock(d["locked"])),
        ("queryId status", lambda d: QueryStatus(d["queryId"], d["status"])),
        ("queryId status dueAt", lambda d: QueryStatus(d["queryId"], d["status"], d["dueAt"])),
        ("sectionId escalated", lambda d: Escalated(d["sectionId"])),
        ("resolutionId sectionId", lambda d: Resolved(d["resolutionId"], d["sectionId"])),
        ("commentId", lambda d: Commented(d["commentId"])),
        ("commentId resolved", lambda d: CommentResolved(d["commentId"])),
        (
            "token tokenHash expiresAt mode",
            lambda d: Invited(d["token"], d["tokenHash"], d["expiresAt"], d["mode"]),
        ),
        ("tokenHash revoked", lambda d: InviteRevoked(d["tokenHash"])),
        ("sectionId level", lambda d: Classified(d["sectionId"], d["level"])),
        ("agentId clearance", lambda d: ClearanceSet(d["agentId"], d["clearance"])),
        ("agentId trustLevel", lambda d: TrustSet(d["agentId"], d["trustLevel"])),
        ("agentId disclosure", lambda d: DisclosureSet(d["agentId"], d["disclosure"])),
        ("agentId removed", lambda d: Removed(d["agentId"])),
        ("sectionId version", lambda d: Edited(d["sectionId"], d["version"])),
        (
            "policy windowSeconds strategy removalGuard changed",
            lambda d: PolicyStatus(
                d["policy"], d["windowSeconds"], d["strategy"], d["removalGuard"], d["changed"]
            ),
        ),
        ("fired", lambda d: Fired(d["fired"])),
        ("id", lambda d: Made(d["id"])),
        ("", lambda d: Made(None)),
    )
}


def from_json(kept: Mapping[str, Any]) -> DocumentResult:
    """The value an answer kept in the log (``to_json``'s form) stands for; one in a shape
    this version does not make stays as it is kept (:class:`Recorded`)."""
    read = _SHAPES.get(frozenset(kept))
    if read is not None:
        try:
            value = read(kept)
        except (KeyError, TypeError):
            value = None
        if value is not None and value.to_json() == dict(kept):
            return value
    return Recorded(canonical_json(dict(kept)))
