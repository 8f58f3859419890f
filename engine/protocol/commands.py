"""Commands on a document, as pydantic models; the request-shaped ones match the v0.3 schemas.

Field names are the wire's (camelCase: ``sectionId``, ``newContent``) and also accepted in
snake_case. ``request()`` gives the body a v0.3 server would receive (the fields its schema
names); the rest of a command (the proposal it acts on, an idempotency key, this project's
extensions such as a constraint's reasoning) travels beside it, as a URL or a header would.
Every command accepts ``idempotencyKey``: a retry with the same key and the same request by the
same actor changes nothing and returns the first answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from engine.protocol.errors import InvalidRequest
from engine.protocol.model import (
    ASK_DEFAULT_S,
    ASK_MAX_S,
    ASK_MIN_S,
    LOCK_MAX_S,
    LOCK_MIN_S,
    Compatibility,
    ContextMode,
    DoneStatus,
    Policy,
    Strategy,
    Trust,
)

SectionId = Annotated[str, Field(min_length=1, max_length=256)]
Text = Annotated[str, Field(min_length=1)]
Name = Annotated[str, Field(min_length=1, max_length=200)]


@dataclass(frozen=True, slots=True)
class Actor:
    """Who runs a command: an agent (by its name on the document), a human, or the system."""

    kind: Literal["agent", "human", "system"]
    name: str

    @classmethod
    def agent(cls, name: str) -> Actor:
        return cls("agent", name)

    @classmethod
    def human(cls, name: str) -> Actor:
        return cls("human", name)

    @property
    def is_human(self) -> bool:
        return self.kind == "human"


SYSTEM = Actor("system", "system")


class Command(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )
    op: str
    idempotency_key: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    REQUEST: ClassVar[tuple[str, ...]] = ()  # the fields of its v0.3 request body

    def request(self) -> dict[str, Any]:
        """The v0.3 request body: the schema's fields that are set, under their wire names."""
        body = self.model_dump(by_alias=True, include=set(self.REQUEST), exclude_none=True)
        return body

    def fingerprint(self) -> dict[str, Any]:
        """What a retry must repeat exactly to count as the same request."""
        return self.model_dump(mode="json", exclude={"idempotency_key"}, exclude_none=True)


class Join(Command):
    op: Literal["join"] = "join"
    agent_name: Name
    role: Annotated[str, Field(max_length=100)] | None = None
    token: str | None = None  # an invite token: provisions trust, clearance and context mode
    # The SHA-256 of the API key the HTTP server minted for this registration (``pact-tui
    # serve``): the key is shown once, to the agent; the log keeps only this.
    key_hash: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None
    REQUEST = ("agent_name", "role")

    def fingerprint(self) -> dict[str, Any]:
        """A retried join mints a new key, so the key's hash is no part of the request."""
        return self.model_dump(
            mode="json", exclude={"idempotency_key", "key_hash"}, exclude_none=True
        )


class Leave(Command):
    op: Literal["leave"] = "leave"


class Heartbeat(Command):
    op: Literal["heartbeat"] = "heartbeat"


class Done(Command):
    op: Literal["done"] = "done"
    status: DoneStatus
    summary: str | None = None
    REQUEST = ("status", "summary")


class Intent(Command):
    op: Literal["intent"] = "intent"
    section_id: SectionId
    goal: Text
    category: str | None = None
    REQUEST = ("section_id", "goal", "category")


class Constrain(Command):
    op: Literal["constrain"] = "constrain"
    section_id: SectionId
    boundary: Text
    category: str | None = None
    reasoning: str | None = None  # disclosure level 3: shown in escalation briefings only
    REQUEST = ("section_id", "boundary", "category")


class WithdrawConstraint(Command):
    op: Literal["withdraw-constraint"] = "withdraw-constraint"
    constraint_id: str


class MarkConstraint(Command):
    """A human marks whether a constraint is compatible with the others on its section."""

    op: Literal["mark-constraint"] = "mark-constraint"
    constraint_id: str
    compatibility: Compatibility
    why: str | None = None


class Salience(Command):
    op: Literal["salience"] = "salience"
    section_id: SectionId
    score: Annotated[int, Field(ge=0, le=10, strict=True)]
    REQUEST = ("section_id", "score")


class Propose(Command):
    op: Literal["propose"] = "propose"
    section_id: SectionId
    new_content: Text
    summary: Annotated[str, Field(max_length=500)] | None = None
    base_version: Annotated[int, Field(ge=0, strict=True)] | None = None
    reasoning: Annotated[str, Field(max_length=2000)] | None = None
    window_seconds: Annotated[int, Field(ge=1, le=86_400, strict=True)] | None = None
    REQUEST = ("section_id", "new_content", "summary", "base_version", "reasoning")


class Approve(Command):
    op: Literal["approve"] = "approve"
    proposal_id: str
    why: str | None = None  # a human's reason, kept when the approval overrides the policy


class Reject(Command):
    op: Literal["reject"] = "reject"
    proposal_id: str
    reason: str | None = None


class Object(Command):
    """Object to a proposal (under objection-based merge) or to an intent."""

    op: Literal["object"] = "object"
    proposal_id: str | None = None
    intent_id: str | None = None
    constraint_id: str | None = None  # objecting to a constraint marks it conflicting
    reason: Text


class Withdraw(Command):
    op: Literal["withdraw"] = "withdraw"
    proposal_id: str
    reason: str | None = None


class Revert(Command):
    """Revert a merged proposal: a new proposal restoring what the section held before it,
    which follows the policy; with ``now`` (a human's override, with its ``why``) it merges at
    once."""

    op: Literal["revert"] = "revert"
    proposal_id: str
    summary: Annotated[str, Field(max_length=500)] | None = None
    now: bool = False
    why: str | None = None


class Lock(Command):
    op: Literal["lock"] = "lock"
    section_id: SectionId
    ttl_seconds: Annotated[int, Field(ge=LOCK_MIN_S, le=LOCK_MAX_S, strict=True)] | None = None
    REQUEST = ("ttl_seconds",)


class Unlock(Command):
    op: Literal["unlock"] = "unlock"
    section_id: SectionId
    why: str | None = None  # a human force-unlocking another's lock must say why


class LockDocument(Command):
    """A human locks the whole document: agents' proposals are refused until unlocked."""

    op: Literal["lock-document"] = "lock-document"
    why: Text


class UnlockDocument(Command):
    op: Literal["unlock-document"] = "unlock-document"


class AskHuman(Command):
    op: Literal["ask-human"] = "ask-human"
    question: Text
    section_id: Annotated[str, Field(max_length=256)] | None = None
    context: str | None = None
    timeout_seconds: Annotated[int, Field(ge=ASK_MIN_S, le=ASK_MAX_S, strict=True)] = ASK_DEFAULT_S
    REQUEST = ("question", "section_id", "context", "timeout_seconds")


class Respond(Command):
    op: Literal["respond"] = "respond"
    query_id: str
    response: Text


class DismissQuery(Command):
    op: Literal["dismiss"] = "dismiss"
    query_id: str
    why: str | None = None


class Escalate(Command):
    op: Literal["escalate"] = "escalate"
    section_id: SectionId
    reason: Text


class Resolve(Command):
    """A human's binding decision on a section; with ``proposal_id``, the side it chooses."""

    op: Literal["resolve"] = "resolve"
    section_id: SectionId
    decision: Text
    justification: Text
    override: bool = False
    proposal_id: str | None = None  # a conflict's side (or its merged proposal) to merge
    content: str | None = None  # or the text to put in the section


class AddComment(Command):
    op: Literal["comment"] = "comment"
    section_id: SectionId
    text: Text
    proposal_id: str | None = None


class ResolveComment(Command):
    op: Literal["resolve-comment"] = "resolve-comment"
    comment_id: str


class Invite(Command):
    op: Literal["invite"] = "invite"
    trust: Trust = "Suggester"
    clearance: str | None = None
    organisation: str | None = None
    mode: ContextMode = "Full"
    sections: tuple[SectionId, ...] = ()
    ttl_seconds: Annotated[int, Field(ge=60, le=90 * 86_400, strict=True)] | None = None


class RevokeInvite(Command):
    """A human revokes an invite not used yet: its token no longer joins anyone. ``invite`` is
    the token's hash (what the log keeps), or a unique prefix of it."""

    op: Literal["revoke-invite"] = "revoke-invite"
    invite: Annotated[str, Field(min_length=6, max_length=64, pattern=r"^[0-9a-f]+$")]
    why: Text


class Classify(Command):
    op: Literal["classify"] = "classify"
    section_id: SectionId
    level: Text
    organisation: str | None = None
    # The workspace's framework that holds ``level``, adopted by a document not classified yet.
    framework: str | None = None
    levels: tuple[str, ...] = ()


class Clearance(Command):
    op: Literal["clearance"] = "clearance"
    agent: Text  # an agent's name or id
    level: Text
    framework: str | None = None  # as for Classify
    levels: tuple[str, ...] = ()


class SetTrust(Command):
    op: Literal["trust"] = "trust"
    agent: Text
    level: Trust
    why: str | None = None


class SetDisclosure(Command):
    op: Literal["disclosure"] = "disclosure"
    agent: Text
    level: Annotated[int, Field(ge=1, le=2, strict=True)]


class RemoveAgent(Command):
    op: Literal["remove"] = "remove"
    agent: Text
    why: Text


class ForceMerge(Command):
    op: Literal["force-merge"] = "force-merge"
    proposal_id: str
    why: Text


class Edit(Command):
    """A human edits a section directly (the section's whole content, as a proposal would)."""

    op: Literal["edit"] = "edit"
    section_id: SectionId
    content: Text
    why: Text


class SetPolicy(Command):
    op: Literal["policy"] = "policy"
    policy: Policy | None = None
    window_seconds: Annotated[int, Field(ge=1, le=86_400, strict=True)] | None = None
    strategy: Strategy | None = None
    # The share of its section's lines (%) a proposal may remove and still merge on silence.
    removal_guard: Annotated[int, Field(ge=0, le=100, strict=True)] | None = None
    why: Text


AnyCommand = Annotated[
    Join
    | Leave
    | Heartbeat
    | Done
    | Intent
    | Constrain
    | WithdrawConstraint
    | MarkConstraint
    | Salience
    | Propose
    | Approve
    | Reject
    | Object
    | Withdraw
    | Revert
    | Lock
    | Unlock
    | LockDocument
    | UnlockDocument
    | AskHuman
    | Respond
    | DismissQuery
    | Escalate
    | Resolve
    | AddComment
    | ResolveComment
    | Invite
    | RevokeInvite
    | Classify
    | Clearance
    | SetTrust
    | SetDisclosure
    | RemoveAgent
    | ForceMerge
    | Edit
    | SetPolicy,
    Field(discriminator="op"),
]
_ADAPTER: TypeAdapter[Command] = TypeAdapter(AnyCommand)


def parse_command(data: Command | dict[str, Any]) -> Command:
    """A command from its model or its JSON form; ``InvalidRequest`` names the bad field."""
    if isinstance(data, Command):
        return data
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the command"
        raise InvalidRequest(
            f"{where}: {first['msg']}", field=where, problems=error.error_count()
        ) from None
