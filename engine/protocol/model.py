"""The things a document's projection holds: agents, sections, proposals, ICS, queries, locks.

Plain mutable records, changed only by the fold (``Document.apply``). Times are integer
milliseconds since the epoch (the events' ``epochMs``); durations are seconds, as the protocol
states them. Sections are held by a ``key`` that never changes, so a proposal, a lock or a
salience follows its section through renames; ``id`` is the section's current ``sec:`` id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Trust = Literal["Observer", "Suggester", "Collaborator", "Autonomous"]
TRUST_LEVELS: tuple[Trust, ...] = ("Observer", "Suggester", "Collaborator", "Autonomous")
Policy = Literal["auto", "single", "majority", "unanimous", "human-only", "objection-based"]
POLICIES: tuple[Policy, ...] = (
    "auto",
    "single",
    "majority",
    "unanimous",
    "human-only",
    "objection-based",
)
Strategy = Literal["first-wins", "vote", "human-escalate", "merge-both"]
STRATEGIES: tuple[Strategy, ...] = ("first-wins", "vote", "human-escalate", "merge-both")
Status = Literal["Pending", "Approved", "Rejected", "Merged", "Withdrawn", "Conflict", "Objected"]
STATUSES: tuple[Status, ...] = (
    "Pending",
    "Approved",
    "Rejected",
    "Merged",
    "Withdrawn",
    "Conflict",
    "Objected",
)
OPEN_STATUSES: frozenset[str] = frozenset({"Pending", "Approved", "Conflict"})
IntentStatus = Literal["Proposed", "Accepted", "Objected", "Superseded"]
DoneStatus = Literal["aligned", "dissenting", "partial", "abstained"]
ContextMode = Literal["Full", "SectionScoped", "Neighbourhood", "SummaryOnly"]
CONTEXT_MODES: tuple[ContextMode, ...] = ("Full", "SectionScoped", "Neighbourhood", "SummaryOnly")
ActorKind = Literal["Individual", "AiAgent", "GovernanceGroup", "System"]  # the event's actorKind
# How every log and view names an actor's kind.
KIND_WORDS: dict[str, str] = {
    "Individual": "human",
    "AiAgent": "agent",
    "GovernanceGroup": "group",
    "System": "system",
}
Compatibility = Literal["compatible", "conflicting", "unknown"]
COMPATIBILITIES: tuple[Compatibility, ...] = ("compatible", "conflicting", "unknown")

# The numbers of the protocol (../shared/spec/collaboration.md), in seconds.
DEFAULT_WINDOW_S = 60  # objection window
LOCK_MIN_S, LOCK_MAX_S, LOCK_DEFAULT_S = 1, 60, 30
EVICT_AFTER_S = 300  # an agent silent this long is evicted
ALIAS_FOR_S = 300  # a renamed section's old id stays valid this long
ESCALATE_CONFLICT_AFTER_S = 600  # an unresolved conflict goes to the custodian
ASK_MIN_S, ASK_MAX_S, ASK_DEFAULT_S = 10, 3600, 60
INVITE_DEFAULT_S = 7 * 24 * 3600
DEFAULT_SALIENCE = 5  # an agent that set none on a section reviews it within the window
# A proposal removing more than this share (in %) of its section's lines waits for a human
# instead of merging on silence (the document's ``removalGuard``; 100: never).
DEFAULT_REMOVAL_GUARD = 50
HUMAN_DISCLOSURE = 4


def trust_rank(trust: str) -> int:
    return (*TRUST_LEVELS,).index(trust)


def kind_word(actor_kind: str) -> str:
    """An event's ``actorKind`` as the views name it: human, agent, group or system."""
    return KIND_WORDS.get(actor_kind, "unknown")


def who(name: str, actor_kind: str) -> str:
    """An actor as every log and view names it: its kind (from the event, never guessed from
    the name), then its name: ``agent legal``, ``human carol``; the system is ``system``."""
    word = kind_word(actor_kind)
    return word if actor_kind == "System" and name == "system" else f"{word} {name}"


@dataclass(slots=True)
class Override:
    """A human decision that overrode the protocol, or a section's flag: who and why."""

    by: str
    kind: ActorKind  # by's: the event's actorKind (a flag may be an agent's or the system's)
    why: str
    at_ms: int


@dataclass(slots=True)
class Lock:
    holder: str  # an agent id, or "human:<name>"
    holder_name: str
    holder_kind: ActorKind  # the locking event's actorKind
    until_ms: int | None  # None: a human's lock, held until unlocked


@dataclass(slots=True)
class Section:
    key: int
    id: str
    title: str
    level: int
    parent: int | None  # the parent section's key
    content: str  # its own Markdown: heading line and body up to the next heading
    version: int = 1
    classification: str | None = None  # a level of the document's framework
    rank: int = 0  # that level's place in the framework (0 = the lowest, or unclassified)
    organisation: str | None = None  # None: every organisation's agents may see it
    lock: Lock | None = None
    escalated: Override | None = None  # flagged for human review: auto-merge paused here
    history: list[str] = field(default_factory=list)  # its content at versions 1.. (index+1)


@dataclass(slots=True)
class Agent:
    id: str
    name: str
    role: str | None
    trust: Trust
    order: int  # registration order: breaks salience ties
    joined_ms: int
    last_seen_ms: int
    active: bool = True
    gone: str | None = None  # "left", "evicted" or "removed"
    clearance: str | None = None  # a framework level; None: only unclassified sections
    clearance_rank: int = 0
    organisation: str | None = None
    mode: ContextMode = "Full"
    scope: tuple[int, ...] = ()  # section keys for SectionScoped / Neighbourhood
    disclosure: int = 1  # what it sees of others' constraints: 1 boundary, 2 + category
    completion: tuple[DoneStatus, str | None] | None = None
    key_hash: str | None = None  # the SHA-256 of its API key, if it joined over HTTP


@dataclass(slots=True)
class Vote:
    by: str
    kind: ActorKind  # the voting event's actorKind
    at_ms: int
    reason: str | None = None


@dataclass(slots=True)
class Proposal:
    id: str
    author: str  # an agent id, "human:<name>" or "system"
    author_name: str
    author_kind: ActorKind  # the creating event's actorKind
    section: int  # the section's key
    content: str
    summary: str | None
    reasoning: str | None
    base_version: int
    base_content: str
    created_ms: int
    policy: Policy
    window_s: int
    status: Status = "Pending"
    quorum: tuple[str, ...] = ()  # the agents eligible to vote, fixed at creation (3.)
    reviewers: int = 0  # how many agents were eligible to review it at creation
    approvals: dict[str, Vote] = field(default_factory=dict)
    rejections: dict[str, Vote] = field(default_factory=dict)
    objections: dict[str, Vote] = field(default_factory=dict)
    dismissed: int = 0  # approvals dismissed because the section changed under it
    stale: bool = False
    conflict: str | None = None  # its conflict group
    merge_at_ms: int | None = None  # objection-based: when the window ends
    must_act: tuple[str, ...] = ()  # salience-10 agents whose explicit vote blocks auto-merge
    supersedes: tuple[str, ...] = ()
    reverts: str | None = None
    reverted_by: str | None = None
    merged_version: int | None = None  # the section's version it produced
    closed_ms: int | None = None
    reason: str | None = None  # why it was rejected, objected or withdrawn
    override: Override | None = None
    correlation: str = ""
    # (lines removed, of the section's lines, the guard then in %) when it removes more of its
    # section than the document's guard allowed when it was made: only a human merges it.
    removes_most: tuple[int, int, int] | None = None


@dataclass(slots=True)
class ConflictGroup:
    id: str
    section: int
    strategy: Strategy
    proposals: list[str]
    opened_ms: int
    base: str  # the common base content
    merged: str | None = None  # merge-both: the three-way result
    overlaps: int = 0  # merge-both: overlapping hunks (0 = clean)
    escalated_ms: int | None = None
    resolved: str | None = None  # how: "first-wins", "vote", "merged", "human"
    winner: str | None = None


@dataclass(slots=True)
class Intent:
    id: str
    author: str
    section: int
    goal: str
    category: str | None
    declared_ms: int
    accept_at_ms: int
    status: IntentStatus = "Proposed"
    objections: dict[str, Vote] = field(default_factory=dict)


@dataclass(slots=True)
class Constraint:
    id: str
    author: str
    section: int
    boundary: str
    category: str | None
    reasoning: str | None
    published_ms: int
    withdrawn: bool = False
    # Compatibility with the others on its section is never decided by a rule: "unknown" until
    # an agent objects ("conflicting") or a human marks it; a plugged-in checker may say more.
    compatibility: str = "unknown"


@dataclass(slots=True)
class Comment:
    id: str
    author: str
    section: int
    text: str
    at_ms: int
    proposal: str | None = None
    resolved_by: str | None = None


@dataclass(slots=True)
class Query:
    id: str
    author: str
    question: str
    section: int | None
    context: str | None
    asked_ms: int
    due_ms: int
    status: Literal["open", "answered", "timed-out", "dismissed"] = "open"
    response: str | None = None
    responder: str | None = None


@dataclass(slots=True)
class Resolution:
    id: str
    section: int
    decision: str
    justification: str
    override: bool
    by: str
    at_ms: int


@dataclass(slots=True)
class Invite:
    token_hash: str  # sha256 of the token: the token itself is never stored
    expires_ms: int
    trust: Trust
    clearance: str | None
    organisation: str | None
    mode: ContextMode
    scope: tuple[int, ...]
    created_by: str
    used_by: str | None = None
    revoked_by: str | None = None  # the human who revoked it, before anyone used it


def invite_state(invite: Invite, now_ms: int) -> str:
    """``open``, ``already used``, ``revoked`` or ``expired``: what its token can do now."""
    if invite.used_by is not None:
        return "already used"
    if invite.revoked_by is not None:
        return "revoked"
    if invite.expires_ms <= now_ms:
        return "expired"
    return "open"


def invite_open(invite: Invite, now_ms: int) -> bool:
    return invite_state(invite, now_ms) == "open"
