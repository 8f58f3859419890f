"""The rules: a command against a document's state → events, or a ``ProtocolError``.

``decide(doc, command, actor, now_ms, ids)`` first fires what is due at ``now_ms`` (``tick``), then
checks the command and emits its events. Each event is applied to ``doc`` as it is emitted, so
later rules see what the log will hold; a refusal is raised before the command's first event, so
a refused command changes nothing (what ``tick`` fired stays: it was due whatever the command).
The caller appends the returned events in one transaction, or, if that fails, rebuilds ``doc``
from the log.

Numbers of the rules refer to ../shared/spec/collaboration.md ("where version 0.3 is weak").
"""

from __future__ import annotations

import hashlib
import heapq
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from engine.canonical import canonical_json
from engine.protocol import commands as c
from engine.protocol import results as r
from engine.protocol.barriers import named_section, reads
from engine.protocol.document import Document
from engine.protocol.envelope import Ids, envelope, payload
from engine.protocol.errors import (
    AgentNotFound,
    AlreadyJoined,
    DocumentLocked,
    Forbidden,
    IdempotencyMismatch,
    InvalidContent,
    InvalidRequest,
    InvalidStatus,
    NotFound,
    NotJoined,
    ProposalConflict,
    ProposalNotFound,
    ProtocolError,
    SectionLocked,
    SelfApproval,
    Unauthorized,
)
from engine.protocol.merge import merge_three, removed_lines
from engine.protocol.model import (
    DEFAULT_SALIENCE,
    EVICT_AFTER_S,
    INVITE_DEFAULT_S,
    LOCK_DEFAULT_S,
    OPEN_STATUSES,
    TRUST_LEVELS,
    ActorKind,
    Agent,
    ConflictGroup,
    Proposal,
    Section,
    Trust,
    invite_open,
    invite_state,
    trust_rank,
)
from engine.protocol.names import reserved
from engine.protocol.sections import parse_sections, replace_section, section_content

VOTERS = frozenset({"Collaborator", "Autonomous"})
# The lowest trust level each agent operation needs; "human" ones no agent may run.
NEEDS: dict[str, Trust | str] = {
    "join": "Observer",
    "leave": "Observer",
    "heartbeat": "Observer",
    "done": "Observer",
    "salience": "Observer",
    "intent": "Suggester",
    "constrain": "Suggester",
    "withdraw-constraint": "Suggester",
    "propose": "Suggester",
    "withdraw": "Suggester",
    "revert": "Suggester",
    "comment": "Suggester",
    "ask-human": "Suggester",
    "escalate": "Suggester",
    "approve": "Collaborator",
    "reject": "Collaborator",
    "object": "Collaborator",
    "lock": "Collaborator",
    "unlock": "Collaborator",
    "resolve-comment": "Collaborator",
}
HUMAN_ONLY = frozenset(
    {
        "respond",
        "dismiss",
        "resolve",
        "invite",
        "revoke-invite",
        "classify",
        "clearance",
        "trust",
        "disclosure",
        "remove",
        "force-merge",
        "edit",
        "policy",
        "lock-document",
        "unlock-document",
        "mark-constraint",
    }
)


# Parts of an answer shown once and kept nowhere: a retry answers null in their place.
SHOWN_ONCE = frozenset({"token"})


SettleStep = Literal["merge", "auto-merge", "schedule", "reject", "wait"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a proposal would become when made: whether it merges at once, and in words."""

    at_once: bool
    says: str


@dataclass(slots=True)
class Decision:
    events: list[dict[str, Any]]
    result: r.DocumentResult
    retried: bool = False  # an idempotent retry: nothing new, the first answer again
    kept: bool = False  # the result is read back from the answer its idempotency record keeps

    def answer(self) -> dict[str, Any]:
        """The result as the wire carries it (``tap … --json``, the server): its JSON form, in
        the order of the record's canonical JSON (keys sorted) when read back from one."""
        out = self.result.to_json()
        return dict(sorted(out.items())) if self.kept else out


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def authorise(op: object, actor: c.Actor) -> None:
    """Refuse (``auth.forbidden``) what ``actor`` may not do whatever the document holds and
    whatever the command says: an agent running a human-only op, the system running any, a human
    joining. Checked before anything else, so no other refusal tells an agent more than that it
    may not do this. An op that is not one (not a string) is left to the command's parsing."""
    if actor.kind == "system":
        raise Forbidden("the system runs no commands, only due work")
    if not isinstance(op, str):
        return
    if actor.kind == "agent" and op in HUMAN_ONLY:
        raise Forbidden(f"only a human may {op}", operation=op)
    if actor.kind == "human" and op == "join":
        raise Forbidden("a human needs no join: humans act on any document")


def decide(
    doc: Document, command: c.Command | dict[str, Any], actor: c.Actor, now_ms: int, ids: Ids
) -> Decision:
    """Fire what is due, then decide ``command`` for ``actor``; see the module's docstring."""
    authorise(command.op if isinstance(command, c.Command) else command.get("op"), actor)
    command = c.parse_command(command)
    fired = tick(doc, now_ms, ids)
    decider = Decider(doc, actor, now_ms, ids)
    try:
        decision = decider.run(command)
    except ProtocolError as refused:
        refused.fired = fired.events  # due whatever the command: the caller appends them
        raise
    decision.events[:0] = fired.events
    return decision


def tick(doc: Document, now_ms: int, ids: Ids) -> Decision:
    """Fire everything due at ``now_ms``, as the system. Idempotent: what fired is no longer due."""
    decider = Decider(doc, c.SYSTEM, now_ms, ids)
    popped = decider.fire_due()
    if not decider.events:
        # Nothing fired, so nothing reaches the log. The timers taken stay the fold's (a replay
        # holds them until the next event drops them, see ``Document.apply``), but they fire
        # nothing until an event changes the state, so they are set aside: the next tick does
        # not take them again, and ``next_due_ms`` does not show them as due.
        doc.quiet_timers.extend(popped)
    return Decision(decider.events, r.Fired(len(decider.events)))


class NoIds:
    """The ids of a decision that makes nothing: ``check`` and ``foretell`` emit no event."""

    def uuid(self) -> str:
        raise AssertionError("a check emits nothing")

    def token(self) -> str:
        raise AssertionError("a check emits nothing")


def check(doc: Document, actor: c.Actor, now_ms: int, op: str, **fields: Any) -> None:
    """Refuse, as ``decide`` would, ``op`` by ``actor`` on what ``fields`` name (the snake_case
    fields of its command that say what it acts on: ``proposal_id``, ``agent``, ``section_id``
    …), before anyone types the rest of it (a why, a reason, a justification): "can this actor
    do this now", asked before a custodian is asked anything. The rules are the ones the
    command's ``do_`` method runs (its ``may_`` method); nothing is changed and nothing due is
    fired, so what the next write fires first may still change the answer.

    Ops with a check: approve, reject, force-merge, revert, resolve, trust, clearance, remove."""
    decider = Decider(doc, actor, now_ms, NoIds())
    decider.admit(op)
    may: Callable[..., object] | None = getattr(decider, "may_" + op.replace("-", "_"), None)
    if may is None:
        raise InvalidRequest(f"no check for {op!r}", operation=op)
    may(**fields)


def revert_outcome(doc: Document, actor: c.Actor, now_ms: int, proposal_id: str) -> Outcome:
    """What a revert of ``proposal_id`` by ``actor`` would become, as the policy says (not
    ``now``): refused as ``do_revert`` refuses it, else foretold (``Decider.foretell``)."""
    decider = Decider(doc, actor, now_ms, NoIds())
    decider.admit("revert")
    _target, section, _text = decider.may_revert(proposal_id)
    return decider.foretell(section)


class Decider:
    """One command's decision: checks, then events, each applied to the document at once."""

    def __init__(self, doc: Document, actor: c.Actor, now_ms: int, ids: Ids) -> None:
        self.doc = doc
        self.actor = actor
        self.now = now_ms
        self.ids = ids
        self.events: list[dict[str, Any]] = []
        self.agent: Agent | None = None  # the acting agent, once known
        self.joining: str | None = None  # the id a joining agent is given: its join's actor
        self.idempotency: dict[str, Any] | None = None  # added to the first event's payload
        self.keyed: dict[str, Any] | None = None  # the event that carries it, once emitted
        self.correlation: str | None = None

    # -- who acts ------------------------------------------------------------------------------
    @property
    def actor_id(self) -> str | None:
        if self.agent is not None:
            return self.agent.id
        if self.joining is not None:
            return self.joining
        if self.actor.kind == "human":
            return f"human:{self.actor.name}"
        return None

    @property
    def actor_kind(self) -> ActorKind:
        kinds: dict[str, ActorKind] = {
            "agent": "AiAgent",
            "human": "Individual",
            "system": "System",
        }
        return kinds[self.actor.kind]

    @contextmanager
    def as_system(self, correlation: str | None = None) -> Iterator[None]:
        """Emit as the system: what a conflict strategy does on its own (detecting the
        conflict, rejecting sides, merging both, resolving, escalating) is the system's, whoever
        set it off, as when the tick fires it. The command's event that set it off stays its
        actor's, and ``correlation`` (or the command's) ties the system's events to it. A human's
        own resolution is not this: it stays the human's, recorded with its why.

        A command whose first event is the system's still files its idempotency key under its
        actor (``keyOwner`` in that event's payload)."""
        if self.idempotency is not None and "keyOwner" not in self.idempotency:
            self.idempotency["keyOwner"] = self.actor_id
        saved = self.actor, self.agent, self.joining, self.correlation
        self.actor, self.agent, self.joining = c.SYSTEM, None, None
        self.correlation = correlation or self.correlation
        try:
            yield
        finally:
            self.actor, self.agent, self.joining, self.correlation = saved

    def run(self, command: c.Command) -> Decision:
        doc, actor = self.doc, self.actor
        authorise(command.op, actor)
        if not doc.id:
            raise InvalidRequest("the document does not exist yet", code="document.not_found")
        if actor.kind == "agent":
            self.agent = doc.agent_named(actor.name)
            if self.agent is None and command.op != "join":
                # What it did before it left (or was evicted), retried, is still a retry.
                self.agent = self._former(actor.name)
                retry = self._retried(command) if self.agent is not None else None
                if retry is not None:
                    return retry
                raise NotJoined(
                    f"agent {actor.name!r} has not joined document {doc.name!r}",
                    agent=actor.name,
                )
            if self.agent is not None:
                self._gate(command.op)
        retry = self._retried(command)
        if retry is not None:
            return retry
        handler: Callable[[Any], r.DocumentResult] = getattr(
            self, "do_" + command.op.replace("-", "_")
        )
        result = handler(command)
        self._file_answer(result)
        return Decision(self.events, result)

    def _gate(self, op: str) -> None:
        """The acting agent's trust reaches what ``op`` needs (``NEEDS``)."""
        assert self.agent is not None
        need = NEEDS[op]
        if trust_rank(self.agent.trust) < trust_rank(need):
            raise Forbidden(
                f"{op} needs trust {need} or higher; {self.actor.name!r} is {self.agent.trust}",
                operation=op,
                trustLevel=self.agent.trust,
                needs=need,
            )

    def admit(self, op: str) -> None:
        """What ``run`` checks of who acts before the command itself, for ``check``: the op is
        theirs to run, the document exists, an agent has joined and its trust reaches the op."""
        authorise(op, self.actor)
        if not self.doc.id:
            raise InvalidRequest("the document does not exist yet", code="document.not_found")
        if self.actor.kind == "agent":
            self.agent = self.doc.agent_named(self.actor.name)
            if self.agent is None:
                raise NotJoined(
                    f"agent {self.actor.name!r} has not joined document {self.doc.name!r}",
                    agent=self.actor.name,
                )
            self._gate(op)

    def _former(self, name: str) -> Agent | None:
        """The agent last registered under ``name``, now gone."""
        return next((a for a in reversed(self.doc.agents.values()) if a.name == name), None)

    def _retried(self, command: c.Command) -> Decision | None:
        key = command.idempotency_key
        if key is None:
            return None
        request_hash = hashlib.sha256(canonical_json(command.fingerprint()).encode()).hexdigest()
        records = self.doc.idempotency
        if command.op == "join":
            # A join is filed under the registration it made: look under each one of this name
            # (a retry after leaving is still a retry of that join, not a new one).
            name = self.actor.name
            made = [a.id for a in reversed(self.doc.agents.values()) if a.name == name]
            known = next((records[i, key] for i in made if (i, key) in records), None)
        else:
            known = records.get((self.actor_id or "", key))
        if known is None:
            self.idempotency = {"idempotencyKey": key, "requestHash": request_hash}
            return None
        if known[0] != request_hash:
            raise IdempotencyMismatch(
                f"idempotency key {key!r} was used for another request", idempotencyKey=key
            )
        answer = known[2]
        if answer is None:  # filed by a log older than kept answers
            return Decision([], self.result_for(command.op, known[1]), retried=True)
        return Decision([], r.from_json(json.loads(answer)), retried=True, kept=True)

    def _file_answer(self, result: r.DocumentResult) -> None:
        """Keep the answer beside the idempotency key, for a retry to give it again as it was
        (a proposal's status, a lock's expiry and a policy move on; the first answer does not).

        The answer is known only once every event is decided, and the key travels on the first
        event, so the answer is added to that event's payload here, before anything is stored.
        Since it was applied, nothing has read that payload but the idempotency record, which
        is filed again from it. A secret shown once (an invite's token) is not kept: the log
        holds only its hash, so a retry answers ``null`` in its place."""
        event, self.keyed = self.keyed, None
        if event is None:
            return
        data = payload(event)
        data["answer"] = {k: None if k in SHOWN_ONCE else v for k, v in result.to_json().items()}
        event["payloadJson"] = canonical_json(data)
        self.doc.file_retry(event, data)

    def result_for(self, op: str, entity: str | None) -> r.DocumentResult:
        """What a command answers, from the entity it made: for joins and proposals, and for
        a retry of a command whose record has no answer (from a log older than answers)."""
        doc = self.doc
        if entity is not None and entity in doc.proposals:
            return proposal_status(doc, doc.proposals[entity])
        if op == "join" and entity is not None:
            agent = doc.agents[entity]
            return r.Joined(agent.id, doc.id, agent.name, agent.role, iso(agent.joined_ms))
        return r.Made(entity)

    # -- emitting ------------------------------------------------------------------------------
    def emit(
        self,
        event_type: str,
        data: dict[str, Any],
        section: Section | None = None,
        *,
        entity: str | None = None,
        correlation: str | None = None,
    ) -> dict[str, Any]:
        doc = self.doc
        keyed = self.idempotency is not None
        if self.idempotency is not None:
            data = {**data, **self.idempotency, "entity": entity}
            self.idempotency = None
        if section is not None:
            data.setdefault("sectionKey", section.key)
        event = envelope(
            event_id=self.ids.uuid(),
            epoch_ms=self.now,
            actor_id=self.actor_id,
            actor_display=self.actor.name if self.agent is None else self.agent.name,
            actor_kind=self.actor_kind,
            event_type=event_type,
            document_id=doc.id,
            sequence=doc.sequence,
            section_id=section.id if section is not None else None,
            data=data,
            correlation_id=correlation or self.correlation,
        )
        doc.apply(event)
        self.events.append(event)
        if keyed:
            self.keyed = event
        return event

    # -- lookups that respect the barriers -----------------------------------------------------
    def section(self, section_id: str, *, read: bool = True) -> Section:
        return named_section(self.doc, self.agent, section_id, self.now, read=read)

    def proposal(self, proposal_id: str) -> Proposal:
        proposal = self.doc.proposals.get(proposal_id)
        if proposal is None or not reads(self.doc, self.agent, self.doc.by_key[proposal.section]):
            raise ProposalNotFound(f"no proposal {proposal_id!r}", proposalId=proposal_id)
        return proposal

    def other_agent(self, name_or_id: str) -> Agent:
        doc = self.doc
        agent = doc.agent_named(name_or_id) or doc.agents.get(name_or_id)
        if agent is None:
            raise AgentNotFound(f"no agent {name_or_id!r} on document {doc.name!r}")
        return agent

    def need_why(self, why: str | None, what: str, field: str = "why") -> str:
        """A human override's reason: every one records who and why, so none may be blank."""
        if not why or not why.strip():
            raise InvalidRequest(
                f"{what} overrides the agents: say why ({field!r} is required)", field=field
            )
        return why

    # -- agents --------------------------------------------------------------------------------
    def do_join(self, command: c.Join) -> r.DocumentResult:
        doc = self.doc
        if command.agent_name != self.actor.name:
            raise InvalidRequest(
                f"agentName {command.agent_name!r} is not the acting agent {self.actor.name!r}"
            )
        if self.agent is not None:
            raise AlreadyJoined(
                f"agent {command.agent_name!r} has already joined document {doc.name!r}",
                agentId=self.agent.id,
            )
        why = reserved(command.agent_name, doc.humans)
        if why is not None:
            raise InvalidRequest(
                f"agentName {command.agent_name!r} is reserved: {why}",
                field="agentName",
                reason=why,
            )
        data: dict[str, Any] = {
            "agentName": command.agent_name,
            "role": command.role,
            "trustLevel": doc.default_trust,
        }
        if command.token is not None:
            hashed = token_hash(command.token)
            invite = doc.invites.get(hashed)
            if invite is None or not invite_open(invite, self.now):
                why = "unknown" if invite is None else invite_state(invite, self.now)
                raise Unauthorized(f"the invite token is {why}", reason=why)
            data.update(
                trustLevel=invite.trust,
                clearance=invite.clearance,
                clearanceRank=self._rank(invite.clearance),
                organisation=invite.organisation,
                mode=invite.mode,
                scope=list(invite.scope),
                inviteHash=hashed,
            )
        if command.key_hash is not None:
            data["keyHash"] = command.key_hash
        agent_id = self.ids.uuid()
        data["agentId"] = agent_id
        # The join is the new agent's own act: its id is the event's actor, and the key of an
        # idempotent retry (which looks the key up under the joined agent's id).
        self.joining = agent_id
        self.emit("pact.agent.joined", data, entity=agent_id)
        return self.result_for("join", agent_id)

    def do_leave(self, command: c.Leave) -> r.DocumentResult:
        agent = self._me()
        self.emit("pact.agent.left", {"agentId": agent.id, "agentName": agent.name})
        self.agent = agent  # gone now, but still the actor of its own event
        return r.Left(agent.id)

    def do_heartbeat(self, command: c.Heartbeat) -> r.DocumentResult:
        agent = self._me()
        self.emit("pact.agent.heartbeat", {"agentId": agent.id})
        return r.Alive(agent.id, iso(self.now + EVICT_AFTER_S * 1000))

    def do_done(self, command: c.Done) -> r.DocumentResult:
        agent = self._me()
        data = {"agentId": agent.id, "status": command.status, "summary": command.summary}
        self.emit("pact.agent.completed", data)
        return r.Finished(agent.id, command.status)

    def _me(self) -> Agent:
        if self.agent is None:
            raise Forbidden("only an agent can do this")
        return self.agent

    # -- ICS -----------------------------------------------------------------------------------
    def do_intent(self, command: c.Intent) -> r.DocumentResult:
        agent, section = self._me(), self.section(command.section_id)
        older = [
            i.id
            for i in self.doc.intents_of(section.key)
            if i.author == agent.id and i.status != "Superseded"
        ]
        intent_id = self.ids.uuid()
        accept_at = self.now + self.doc.window_s * 1000
        data = {
            "intentId": intent_id,
            "agentId": agent.id,
            "sectionId": section.id,
            "goal": command.goal,
            "category": command.category,
            "acceptAt": accept_at,
            "supersedes": older,
        }
        self.emit("pact.intent.declared", data, section, entity=intent_id)
        return r.IntentStatus(intent_id, "Proposed", iso(accept_at))

    def do_constrain(self, command: c.Constrain) -> r.DocumentResult:
        agent, section = self._me(), self.section(command.section_id)
        constraint_id = self.ids.uuid()
        data = {
            "constraintId": constraint_id,
            "agentId": agent.id,
            "sectionId": section.id,
            "boundary": command.boundary,
            "category": command.category,
            "reasoning": command.reasoning,
        }
        self.emit("pact.constraint.published", data, section, entity=constraint_id)
        return r.ConstraintStatus(constraint_id, "unknown")

    def do_withdraw_constraint(self, command: c.WithdrawConstraint) -> r.DocumentResult:
        constraint = self.doc.constraints.get(command.constraint_id)
        if constraint is None or constraint.withdrawn or not self._reads_key(constraint.section):
            raise NotFound(f"no published constraint {command.constraint_id!r}")
        if constraint.author != self.actor_id:
            raise Forbidden("only its author may withdraw a constraint")
        section = self.doc.by_key[constraint.section]
        self.emit("pact.constraint.withdrawn", {"constraintId": constraint.id}, section)
        return r.ConstraintWithdrawn(constraint.id)

    def do_mark_constraint(self, command: c.MarkConstraint) -> r.DocumentResult:
        constraint = self.doc.constraints.get(command.constraint_id)
        if constraint is None:
            raise NotFound(f"no constraint {command.constraint_id!r}")
        if constraint.withdrawn:
            raise InvalidStatus(
                f"constraint {constraint.id} is withdrawn: there is nothing to mark",
                status="withdrawn",
            )
        section = self.doc.by_key[constraint.section]
        data = {
            "constraintId": constraint.id,
            "compatibility": command.compatibility,
            "why": command.why,
        }
        self.emit("pact.constraint.marked", data, section)
        return r.ConstraintStatus(constraint.id, command.compatibility)

    def do_salience(self, command: c.Salience) -> r.DocumentResult:
        agent, section = self._me(), self.section(command.section_id, read=False)
        data = {"agentId": agent.id, "sectionId": section.id, "score": command.score}
        self.emit("pact.salience.set", data, section)
        return r.SalienceSet(agent.id, section.id, command.score)

    def _reads_key(self, key: int) -> bool:
        return reads(self.doc, self.agent, self.doc.by_key[key])

    # -- proposals -----------------------------------------------------------------------------
    def do_propose(self, command: c.Propose) -> r.DocumentResult:
        section = self.section(command.section_id)
        self._may_change(section)
        base = section.version if command.base_version is None else command.base_version
        if base > section.version or base < 1:
            raise InvalidRequest(
                f"baseVersion {base} is not a version of section {section.id!r}"
                f" (its versions are 1 to {section.version})",
                sectionId=section.id,
                currentVersion=section.version,
            )
        parts = parts_for(self.doc, section, command.new_content)  # refuses a broken structure
        proposal = self.create_proposal(
            section,
            command.new_content,
            base,
            summary=command.summary,
            reasoning=command.reasoning,
            window_s=command.window_seconds,
            parts=parts,
        )
        return proposal_status(self.doc, proposal)

    def _may_change(self, section: Section) -> None:
        doc = self.doc
        if self.actor.is_human:
            return
        if doc.locked is not None:
            raise DocumentLocked(
                f"document {doc.name!r} is locked by {doc.locked.by}: {doc.locked.why}"
            )
        lock = section.lock
        if lock is not None and lock.holder != self.actor_id and not self._expired(lock.until_ms):
            metadata: dict[str, Any] = {"lockedBy": lock.holder_name, "sectionId": section.id}
            if lock.until_ms is not None:
                metadata["retryAfter"] = -(-(lock.until_ms - self.now) // 1000)
            raise SectionLocked(
                f"section {section.id!r} is locked by {lock.holder_name}", **metadata
            )

    def _expired(self, until_ms: int | None) -> bool:
        return until_ms is not None and until_ms <= self.now

    def create_proposal(
        self,
        section: Section,
        content: str,
        base_version: int,
        *,
        summary: str | None = None,
        reasoning: str | None = None,
        window_s: int | None = None,
        supersedes: tuple[str, ...] = (),
        reverts: str | None = None,
        parts: list[dict[str, Any]] | None = None,
        settle: bool = True,
    ) -> Proposal:
        """A new proposal on ``section``; unless ``settle`` is False (a human's override merges
        it next), the conflict strategy or the policy then decides what becomes of it."""
        doc = self.doc
        proposal_id = self.ids.uuid()
        if parts is not None:
            doc.parts_cache[proposal_id] = (splice_key(doc, section), parts)
        quorum = [a.id for a in self.eligible(section) if a.id != self.actor_id]
        must_act = [a for a in quorum if doc.salience_of(a, section.key) == 10]
        data: dict[str, Any] = {
            "proposalId": proposal_id,
            "agentId": self.actor_id or "system",
            "sectionId": section.id,
            "summary": summary,
            "newContent": content,
            "reasoning": reasoning,
            "baseVersion": base_version,
            "policy": doc.policy,
            "windowSeconds": window_s or doc.window_s,
            # The fixed quorum (3.) is kept where a count of it decides; elsewhere its size.
            "quorum": quorum if doc.policy in ("majority", "unanimous") else [],
            "reviewers": len(quorum),
            "mustAct": must_act,
            "supersedes": list(supersedes),
            "reverts": reverts,
        }
        base = section.history[base_version - 1]
        removed, lines = removed_lines(base, content)
        if removed * 100 > doc.removal_guard * lines:
            # It removes most of its section: it waits for a human (``settle_step``), whatever
            # the guard becomes later, as its policy and window stay those it was made under.
            data["removesMost"] = {"removed": removed, "lines": lines, "guard": doc.removal_guard}
        created = self.emit("pact.proposal.created", data, section, entity=proposal_id)
        self.correlation = created["id"]
        proposal = doc.proposals[proposal_id]
        if not settle:
            return proposal
        rivals = [p for p in doc.open_on(section.key) if p.id != proposal_id]
        if rivals or proposal.stale:
            self.conflict(proposal, rivals)
        else:
            self.settle(proposal)
        return proposal

    def eligible(self, section: Section) -> list[Agent]:
        """Agents whose vote counts on ``section`` now (3.): joined, Collaborator or higher,
        salience above 0, and able to read the section."""
        doc = self.doc
        salience, key = doc.salience, section.key
        return [
            agent
            for agent in doc.active_agents()
            if agent.trust in VOTERS
            and salience.get((agent.id, key), DEFAULT_SALIENCE) > 0
            and reads(doc, agent, section)
        ]

    # -- conflicts -----------------------------------------------------------------------------
    def conflict(self, proposal: Proposal, rivals: list[Proposal]) -> None:
        """Two open proposals on a section, or a stale base: the document's strategy decides
        (as the system: see ``as_system``)."""
        with self.as_system():
            self._conflict(proposal, rivals)

    def _conflict(self, proposal: Proposal, rivals: list[Proposal]) -> None:
        doc = self.doc
        section = doc.by_key[proposal.section]
        strategy = doc.strategy
        group_id = next((p.conflict for p in rivals if p.conflict), None)
        group = doc.conflicts.get(group_id) if group_id else None
        if group is not None and group.resolved is not None:
            group = None
        base_version = min([proposal.base_version, *(p.base_version for p in rivals)])
        base = section.history[base_version - 1]
        if strategy == "first-wins":
            first = rivals[0] if rivals else None
            reason = (
                f"conflict (first-wins): proposal {first.id} on this section came first"
                if first is not None
                else f"conflict (first-wins): based on version {proposal.base_version} of"
                f" {section.id}, which is now at version {section.version}; revise it"
            )
            ids = [first.id, proposal.id] if first is not None else [proposal.id]
            conflict_id = self.ids.uuid()
            self.emit(
                "pact.proposal.conflict",
                self._group_data(conflict_id, section, ids, base, None),
                section,
            )
            self.emit(
                "pact.proposal.rejected",
                {"proposalId": proposal.id, "reason": reason, "final": True},
                section,
            )
            winner = first.id if first is not None else None
            self._resolve_group(conflict_id, "first-wins", winner, section)
            return
        if strategy == "merge-both":
            self._merge_both(proposal, rivals, section, base, group)
            return
        # vote, human-escalate: every side waits in Conflict for votes or a human.
        conflict_id = group.id if group is not None else self.ids.uuid()
        ids = [p.id for p in rivals if p.status != "Conflict"] + [proposal.id]
        data = self._group_data(conflict_id, section, ids, base, "Conflict")
        self.emit("pact.proposal.conflict", data, section)
        if strategy == "human-escalate":
            self._escalate_conflict(doc.conflicts[conflict_id])

    def _group_data(
        self, conflict_id: str, section: Section, ids: list[str], base: str, status: str | None
    ) -> dict[str, Any]:
        return {
            "conflictId": conflict_id,
            "proposalIds": ids,
            "sectionId": section.id,
            "strategy": self.doc.strategy,
            "base": base,
            "status": status,
        }

    def _merge_both(
        self,
        proposal: Proposal,
        rivals: list[Proposal],
        section: Section,
        base: str,
        group: ConflictGroup | None,
    ) -> None:
        """5.: a three-way line merge of every side against the common base; a clean one
        becomes a new proposal that supersedes them, overlaps go to a human. Run as the system
        (``conflict``), so the merged proposal is the system's, with no author to exclude from
        its quorum, like the rest of what the strategy does."""
        sides = [*rivals, proposal]
        merged = section.content if not rivals else sides[0].content
        overlaps = 0
        others = sides[1:] if rivals else sides
        for side in others:
            result = merge_three(
                base, merged, side.content, ours_name="merged so far", theirs_name=side.id
            )
            merged, overlaps = result.text, overlaps + len(result.overlaps)
        conflict_id = group.id if group is not None else self.ids.uuid()
        ids = [p.id for p in sides if p.status != "Conflict"]
        data = self._group_data(conflict_id, section, ids, base, "Conflict")
        data.update(merged=merged, overlaps=overlaps)
        if overlaps == 0:
            try:
                parts_for(self.doc, section, merged)
            except InvalidContent:
                overlaps = data["overlaps"] = 1  # clean lines, broken structure: a human
        self.emit("pact.proposal.conflict", data, section)
        group = self.doc.conflicts[conflict_id]
        if overlaps:
            self._escalate_conflict(group)
            return
        for side in sides:
            self.emit(
                "pact.proposal.rejected",
                {"proposalId": side.id, "reason": "merged with the other side (merge-both)"},
                section,
            )
        merged_proposal = self.create_proposal(
            section,
            merged,
            section.version,
            summary="merge of " + ", ".join(p.id for p in sides),
            supersedes=tuple(p.id for p in sides),
        )
        self._resolve_group(conflict_id, "merged", merged_proposal.id, section)

    def _resolve_group(
        self, conflict_id: str, how: str, winner: str | None, section: Section, why: str = ""
    ) -> None:
        data = {"conflictId": conflict_id, "how": how, "winner": winner, "why": why or None}
        self.emit("pact.proposal.conflict-resolved", data, section)
        group = self.doc.conflicts[conflict_id]
        for pid in group.proposals:
            other = self.doc.proposals[pid]
            if pid != winner and other.status in OPEN_STATUSES:
                self.emit(
                    "pact.proposal.rejected",
                    {"proposalId": pid, "reason": f"conflict resolved ({how}): {winner} won"},
                    section,
                )
        won = self.doc.proposals.get(winner) if winner else None
        # A strategy's winner follows its policy; a human's choice is merged by the human's
        # own command (approve, force-merge, resolve), so settling it here would merge it twice.
        if won is not None and won.status == "Pending" and how != "human":
            self.settle(won)

    def _escalate_conflict(self, group: ConflictGroup) -> None:
        if group.escalated_ms is not None:
            return
        section = self.doc.by_key[group.section]
        data = {
            "conflictId": group.id,
            "sectionId": section.id,
            "reason": f"conflict on {section.id} ({group.strategy}) needs a human",
            "flag": False,
            "kind": "conflict",
        }
        self.emit("pact.escalation.human", data, section)

    # -- policies ------------------------------------------------------------------------------
    def settle(self, proposal: Proposal) -> None:
        """Merge, reject or schedule a pending proposal as its policy now says."""
        if proposal.status not in ("Pending", "Approved"):
            return
        step, said = self.settle_step(proposal)
        if step == "merge":
            self.merge(proposal)
        elif step == "auto-merge":
            self.merge(proposal, event_type="pact.proposal.auto-merged")
        elif step == "schedule":
            merge_at = self.now + proposal.window_s * 1000
            data = {"proposalId": proposal.id, "mergeAt": merge_at}
            self.emit("pact.proposal.auto-merge-scheduled", data, self.doc.by_key[proposal.section])
        elif step == "reject":
            self.reject(proposal, said)

    def settle_step(self, proposal: Proposal) -> tuple[SettleStep, str]:
        """What its policy does with ``proposal`` now, and why, in words: ``merge`` it,
        ``auto-merge`` it (its objection window ended), ``schedule`` its window, ``reject`` it
        (the words are the reason recorded), or ``wait``. Decides; emits nothing (``settle``
        does what it says, ``foretell`` says it before a proposal exists). One that removes
        most of its section (``removes_most``, the removal guard) is never merged nor given a
        window here: only a human's approval, force-merge or resolution merges it; its policy
        may still reject it."""
        step, said = self._policy_step(proposal)
        if proposal.removes_most is not None and step in ("merge", "auto-merge", "schedule"):
            removed, lines, guard = proposal.removes_most
            return "wait", (
                f"waits for a human: it removes {removed} of its section's {lines} lines"
                f" (more than the removal guard's {guard} %)"
            )
        return step, said

    def _policy_step(self, proposal: Proposal) -> tuple[SettleStep, str]:
        doc = self.doc
        section = doc.by_key[proposal.section]
        author = doc.agents.get(proposal.author)
        if proposal.policy == "auto":
            return "merge", "the policy is auto"
        if author is not None and author.trust == "Autonomous":
            return "merge", f"its author {author.name} is Autonomous"
        approving, against = self.doc.tally(proposal)
        need = len(proposal.quorum)
        if proposal.policy == "objection-based":
            if proposal.merge_at_ms is None:
                if not proposal.reviewers:  # nobody cares about this section: merge at once
                    return "merge", f"no agent reviews {section.id} (objection-based)"
                return "schedule", (
                    f"waits {proposal.window_s} s for objections from"
                    f" {proposal.reviewers} reviewing agent(s) (objection-based)"
                )
            blocked = self.doc.blocked(proposal)
            if self.now >= proposal.merge_at_ms and not blocked:
                return "auto-merge", "its objection window ended"
            return "wait", blocked or "its objection window is open"
        if proposal.policy == "single":
            if approving:
                return "merge", "an eligible agent approved it (single)"
            return "wait", "waits for one eligible agent's approval (single)"
        if proposal.policy == "majority":
            if need and 2 * len(approving) > need:
                return "merge", f"a majority of its {need} voters approve it"
            if need and 2 * len(against) >= need:
                return "reject", "a majority can no longer be reached"
        elif proposal.policy == "unanimous":
            if need and len(approving) == need:
                return "merge", f"all {need} of its voters approve it"
            if against:
                return "reject", "unanimous: a voter rejected it"
        else:
            return "wait", "waits for a human (human-only)"
        if not need:
            return "wait", f"waits for a human: no agent may vote on it ({proposal.policy})"
        return "wait", (
            f"waits for {len(approving)}/{need // 2 + 1 if proposal.policy == 'majority' else need}"
            f" approvals of {need} voters ({proposal.policy})"
        )

    def foretell(self, section: Section) -> Outcome:
        """What a new proposal on ``section`` by the actor (based on its current version) would
        become when made, by the rules ``create_proposal`` applies: another open proposal there
        sets off the conflict strategy; else the policy's first step (``settle_step``); a merge
        on a section escalated to a human is paused."""
        doc = self.doc
        rivals = doc.open_on(section.key)
        if rivals:
            first = rivals[0].id
            said = {
                "first-wins": f"is rejected at once: proposal {first} on {section.id} came first",
                "vote": f"waits in a conflict with {len(rivals)} open proposal(s) for votes",
                "human-escalate": f"goes to you as a conflict with {len(rivals)} open proposal(s)",
                "merge-both": f"is merged three-way with {len(rivals)} open proposal(s); an"
                " overlap goes to you",
            }[doc.strategy]
            return Outcome(False, f"{said} ({doc.strategy})")
        quorum = [a.id for a in self.eligible(section) if a.id != self.actor_id]
        proposal = Proposal(
            id="",
            author=self.actor_id or "system",
            author_name=self.actor.name,
            author_kind=self.actor_kind,
            section=section.key,
            content=section.content,
            summary=None,
            reasoning=None,
            base_version=section.version,
            base_content=section.content,
            created_ms=self.now,
            policy=doc.policy,
            window_s=doc.window_s,
            quorum=tuple(quorum) if doc.policy in ("majority", "unanimous") else (),
            reviewers=len(quorum),
            must_act=tuple(a for a in quorum if doc.salience_of(a, section.key) == 10),
        )
        step, said = self.settle_step(proposal)
        if step in ("merge", "auto-merge"):
            if section.escalated is not None:
                return Outcome(False, f"waits: {section.id} is escalated to a human ({said})")
            return Outcome(True, f"merges at once: {said}")
        if step == "reject":
            return Outcome(False, f"is rejected at once: {said}")
        return Outcome(False, said)

    def merge(
        self, proposal: Proposal, *, event_type: str = "pact.proposal.merged", why: str = ""
    ) -> None:
        doc = self.doc
        section = doc.by_key[proposal.section]
        if section.escalated is not None and not why:
            if proposal.status != "Approved":
                paused = {"proposalId": proposal.id, "approverId": None, "status": "Approved"}
                self.emit("pact.proposal.approved", paused, section)
            return  # paused until a human resolves the escalation
        content = proposal.content
        if proposal.stale or proposal.base_version < section.version:
            result = merge_three(proposal.base_content, section.content, content)
            if not result.clean:
                self.conflict_on_merge(proposal, section)
                return
            content = result.text
        cached = doc.parts_cache.pop(proposal.id, None)
        if cached is not None and cached[0] == splice_key(doc, section) and not proposal.stale:
            parts = cached[1]  # checked at creation, where it still sits
        else:
            try:
                parts = parts_for(doc, section, content)
            except InvalidContent:
                self.conflict_on_merge(proposal, section)
                return
        data: dict[str, Any] = {
            "proposalId": proposal.id,
            "sectionId": section.id,
            "newVersion": section.version + 1,
            "parts": parts,
            "addedKeys": added_keys(doc, parts),
        }
        if event_type == "pact.proposal.auto-merged":
            data["mergeAt"] = proposal.merge_at_ms
        if why:
            data["why"] = why
        self.emit(event_type, data, section, correlation=proposal.correlation)

    def conflict_on_merge(self, proposal: Proposal, section: Section) -> None:
        """A stale proposal whose changes overlap what merged since: to the custodian (as
        the system, like a conflict found at creation)."""
        conflict_id = self.ids.uuid()
        base = proposal.base_content
        data = self._group_data(conflict_id, section, [proposal.id], base, "Conflict")
        result = merge_three(base, section.content, proposal.content)
        data.update(
            merged=result.text, overlaps=max(1, len(result.overlaps)), strategy="merge-both"
        )
        with self.as_system(proposal.correlation):
            self.emit("pact.proposal.conflict", data, section)
            self._escalate_conflict(self.doc.conflicts[conflict_id])

    def reject(self, proposal: Proposal, reason: str) -> None:
        section = self.doc.by_key[proposal.section]
        data = {"proposalId": proposal.id, "reason": reason, "final": True}
        self.emit("pact.proposal.rejected", data, section, correlation=proposal.correlation)

    # -- votes ---------------------------------------------------------------------------------
    def _open(self, proposal: Proposal, *allowed: str) -> Section:
        statuses = allowed or ("Pending", "Approved", "Conflict")
        if proposal.status not in statuses:
            raise InvalidStatus(
                f"proposal {proposal.id} is {proposal.status}", status=proposal.status
            )
        return self.doc.by_key[proposal.section]

    # -- what a command needs of the state, before its first event: its ``do_`` runs it, and
    # so does ``check`` (a command asked about before the human has typed its why) -----------
    def may_approve(self, proposal_id: str) -> tuple[Proposal, Section]:
        proposal = self.proposal(proposal_id)
        section = self._open(proposal)
        if self.actor.is_human:
            return proposal, section
        agent = self._me()
        if proposal.author == agent.id:
            raise SelfApproval(
                "an author's approval of its own proposal does not count (2.)",
                proposalId=proposal.id,
            )
        if proposal.policy == "human-only":
            raise Forbidden("under human-only, only a human can approve", policy="human-only")
        self._may_vote(proposal, section, agent)
        return proposal, section

    def may_reject(self, proposal_id: str) -> tuple[Proposal, Section]:
        proposal = self.proposal(proposal_id)
        section = self._open(proposal)
        if self.actor.is_human:
            return proposal, section
        agent = self._me()
        if proposal.author == agent.id:
            raise SelfApproval("withdraw your own proposal instead of rejecting it")
        if proposal.policy == "human-only":
            raise Forbidden("under human-only, only a human can reject", policy="human-only")
        self._may_vote(proposal, section, agent)
        return proposal, section

    def may_force_merge(self, proposal_id: str) -> tuple[Proposal, Section]:
        proposal = self.proposal(proposal_id)
        return proposal, self._open(proposal, "Pending", "Approved", "Conflict", "Objected")

    def may_revert(self, proposal_id: str, now: bool = False) -> tuple[Proposal, Section, str]:
        """The merged proposal, its section, and the text that reverts it (4.: what the section
        held before the merge, with the later changes kept; overlapping ones are refused)."""
        if now and not self.actor.is_human:
            raise Forbidden("only a human may revert now: it overrides the policy")
        target = self.proposal(proposal_id)
        if target.status != "Merged" or target.merged_version is None:
            raise InvalidStatus(f"proposal {target.id} is {target.status}, not Merged")
        if target.reverted_by is not None:
            other = self.doc.proposals[target.reverted_by]
            if other.status in OPEN_STATUSES or other.status == "Merged":
                raise InvalidStatus(f"proposal {target.id} is already reverted by {other.id}")
        section = self.doc.by_key[target.section]
        self.section(section.id)
        self._may_change(section)
        after = section.history[target.merged_version - 1]
        before = section.history[target.merged_version - 2]
        result = merge_three(after, section.content, before)
        if not result.clean:
            raise ProposalConflict(
                f"later changes to {section.id} overlap what proposal {target.id} changed:"
                " propose the text by hand",
                proposalId=target.id,
            )
        return target, section, result.text

    def may_resolve(
        self, section_id: str, proposal_id: str | None = None, content: str | None = None
    ) -> tuple[Section, Proposal | None]:
        section = self.section(section_id)
        if proposal_id and content:
            raise InvalidRequest("choose a proposal or give the content, not both")
        chosen = self.proposal(proposal_id) if proposal_id else None
        if chosen is not None:
            self._open(chosen, "Pending", "Approved", "Conflict", "Objected")
            if chosen.section != section.key:
                raise InvalidRequest(f"proposal {chosen.id} is not on {section.id}")
        if content is not None:
            parts_for(self.doc, section, content)
        return section, chosen

    def may_trust(self, agent: str, level: str | None = None) -> Agent:
        found = self.other_agent(agent)
        if level is not None and level not in TRUST_LEVELS:
            raise InvalidRequest(f"no trust level {level!r}")
        return found

    def may_clearance(self, agent: str) -> Agent:
        return self.other_agent(agent)

    def may_remove(self, agent: str) -> Agent:
        found = self.other_agent(agent)
        if not found.active:
            raise NotJoined(f"agent {found.name!r} is not on the document")
        return found

    def do_approve(self, command: c.Approve) -> r.DocumentResult:
        proposal, section = self.may_approve(command.proposal_id)
        if self.actor.is_human:
            why = self.need_why(command.why, "a human's approval (it merges at once)")
            data = {"proposalId": proposal.id, "approverId": self.actor_id, "why": why}
            self.emit("pact.proposal.approved", data, section, correlation=proposal.correlation)
            if proposal.conflict and proposal.status == "Conflict":
                self._resolve_group(proposal.conflict, "human", proposal.id, section, why)
            self.merge(proposal, why=why)
            return proposal_status(self.doc, proposal)
        agent = self._me()
        data = {"proposalId": proposal.id, "approverId": agent.id}
        self.emit("pact.proposal.approved", data, section, correlation=proposal.correlation)
        if proposal.status == "Conflict":
            self._vote_decided(proposal)
        else:
            self.settle(proposal)
        return proposal_status(self.doc, proposal)

    def _may_vote(self, proposal: Proposal, section: Section, agent: Agent) -> None:
        salience = self.doc.salience_of(agent.id, section.key)
        if salience == 0:
            raise Forbidden(
                f"salience 0 on {section.id}: excluded from its votes", sectionId=section.id
            )
        if proposal.policy in ("majority", "unanimous") and agent.id not in proposal.quorum:
            raise Forbidden(
                "not in this proposal's quorum, fixed when it was created (3.)",
                proposalId=proposal.id,
            )
        if agent.id in proposal.approvals or agent.id in proposal.rejections:
            raise InvalidStatus(f"{agent.name} has already voted on proposal {proposal.id}")

    def _vote_decided(self, proposal: Proposal) -> None:
        """Under ``vote``, a side every eligible voter approved wins at once."""
        group = self.doc.conflicts[proposal.conflict or ""]
        section = self.doc.by_key[group.section]
        voters = {a.id for a in self.eligible(section)} - {
            self.doc.proposals[p].author for p in group.proposals
        }
        if group.strategy == "vote" and voters and voters <= set(proposal.approvals):
            with self.as_system(proposal.correlation):
                self._resolve_group(group.id, "vote", proposal.id, section)

    def do_reject(self, command: c.Reject) -> r.DocumentResult:
        proposal, section = self.may_reject(command.proposal_id)
        if self.actor.is_human:
            reason = self.need_why(command.reason, "a human's rejection", field="reason")
            data = {
                "proposalId": proposal.id,
                "rejecterId": self.actor_id,
                "reason": reason,
                "why": reason,
                "final": True,
            }
            self.emit("pact.proposal.rejected", data, section, correlation=proposal.correlation)
            return proposal_status(self.doc, proposal)
        agent = self._me()
        final = proposal.policy == "single"
        data = {
            "proposalId": proposal.id,
            "rejecterId": agent.id,
            "reason": command.reason,
            "final": final,
        }
        self.emit("pact.proposal.rejected", data, section, correlation=proposal.correlation)
        if not final:
            self.settle(proposal)
        return proposal_status(self.doc, proposal)

    def do_object(self, command: c.Object) -> r.DocumentResult:
        chosen = [x for x in (command.proposal_id, command.intent_id, command.constraint_id) if x]
        if len(chosen) != 1:
            raise InvalidRequest("object to exactly one of a proposal, an intent or a constraint")
        agent = self._me()
        if command.intent_id is not None:
            intent = self.doc.intents.get(command.intent_id)
            if intent is None or not self._reads_key(intent.section):
                raise NotFound(f"no intent {command.intent_id!r}")
            if intent.status != "Proposed":
                raise InvalidStatus(f"intent {intent.id} is {intent.status}")
            data = {"intentId": intent.id, "objecterId": agent.id, "reason": command.reason}
            self.emit("pact.intent.objected", data, self.doc.by_key[intent.section])
            return r.IntentStatus(intent.id, "Objected")
        if command.constraint_id is not None:
            constraint = self.doc.constraints.get(command.constraint_id)
            if constraint is None or not self._reads_key(constraint.section):
                raise NotFound(f"no constraint {command.constraint_id!r}")
            data = {
                "constraintId": constraint.id,
                "compatibility": "conflicting",
                "why": command.reason,
            }
            self.emit("pact.constraint.marked", data, self.doc.by_key[constraint.section])
            return r.ConstraintStatus(constraint.id, "conflicting")
        proposal = self.proposal(command.proposal_id or "")
        section = self._open(proposal)
        if proposal.author == agent.id:
            raise SelfApproval("withdraw your own proposal instead of objecting to it")
        if self.doc.salience_of(agent.id, section.key) == 0:
            raise Forbidden(f"salience 0 on {section.id}: outside its objection window")
        data = {"proposalId": proposal.id, "objecterId": agent.id, "reason": command.reason}
        self.emit("pact.proposal.objected", data, section, correlation=proposal.correlation)
        return proposal_status(self.doc, proposal)

    def do_withdraw(self, command: c.Withdraw) -> r.DocumentResult:
        proposal = self.proposal(command.proposal_id)
        section = self._open(proposal, "Pending", "Approved", "Conflict", "Objected")
        if proposal.author != self.actor_id:
            raise Forbidden("only its author may withdraw a proposal", proposalId=proposal.id)
        data = {"proposalId": proposal.id, "reason": command.reason}
        self.emit("pact.proposal.withdrawn", data, section, correlation=proposal.correlation)
        return proposal_status(self.doc, proposal)

    def do_revert(self, command: c.Revert) -> r.DocumentResult:
        """4.: a new proposal restoring what the section held before the merge, with the
        section's later changes kept (a three-way merge; overlapping ones are refused).
        With ``now``, a human's override: the revert merges at once, past the policy, its why
        recorded as every override's is; no conflict strategy runs (the other open proposals
        there go stale, as under a force-merge)."""
        target, section, text = self.may_revert(command.proposal_id, command.now)
        why = self.need_why(command.why, "a revert now (it merges at once)") if command.now else ""
        proposal = self.create_proposal(
            section,
            text,
            section.version,
            summary=command.summary or f"revert {target.id}",
            reverts=target.id,
            settle=not command.now,
        )
        if command.now:
            self.merge(proposal, why=why)
        return proposal_status(self.doc, proposal)

    # -- locks ---------------------------------------------------------------------------------
    def do_lock(self, command: c.Lock) -> r.DocumentResult:
        section = self.section(command.section_id)
        self._may_change(section)
        ttl = command.ttl_seconds or LOCK_DEFAULT_S
        until = self.now + ttl * 1000
        data = {"sectionId": section.id, "agentId": self.actor_id, "expiresAt": until}
        self.emit("pact.section.locked", data, section)
        return r.Locked(section.id, iso(until), ttl)

    def do_unlock(self, command: c.Unlock) -> r.DocumentResult:
        section = self.section(command.section_id, read=False)
        lock = section.lock
        if lock is None:
            raise InvalidRequest(f"section {section.id!r} is not locked", code="section.not_locked")
        data: dict[str, Any] = {"sectionId": section.id, "reason": "unlocked"}
        if lock.holder != self.actor_id:
            if not self.actor.is_human:
                raise SectionLocked(
                    f"section {section.id!r} is locked by {lock.holder_name}, not by you",
                    lockedBy=lock.holder_name,
                )
            data.update(reason="force-unlocked", why=self.need_why(command.why, "a force-unlock"))
        self.emit("pact.section.unlocked", data, section)
        return r.Unlocked(section.id)

    def do_lock_document(self, command: c.LockDocument) -> r.DocumentResult:
        self.emit("pact.document.locked", {"why": command.why})
        return r.DocumentLock(True)

    def do_unlock_document(self, command: c.UnlockDocument) -> r.DocumentResult:
        if self.doc.locked is None:
            raise InvalidRequest("the document is not locked")
        self.emit("pact.document.unlocked", {})
        return r.DocumentLock(False)

    # -- escalation ----------------------------------------------------------------------------
    def do_ask_human(self, command: c.AskHuman) -> r.DocumentResult:
        agent = self._me()
        section = self.section(command.section_id) if command.section_id else None
        query_id = self.ids.uuid()
        due = self.now + command.timeout_seconds * 1000
        data = {
            "queryId": query_id,
            "agentId": agent.id,
            "question": command.question,
            "sectionId": section.id if section else None,
            "context": command.context,
            "timeoutSeconds": command.timeout_seconds,
            "dueAt": due,
        }
        self.emit("pact.human.asked", data, section, entity=query_id)
        return r.QueryStatus(query_id, "open", iso(due))

    def _query(self, query_id: str) -> Any:
        query = self.doc.queries.get(query_id)
        if query is None:
            raise NotFound(f"no question {query_id!r}")
        if query.status != "open":
            raise InvalidRequest(f"question {query_id} is {query.status}", code="query.closed")
        return query

    def do_respond(self, command: c.Respond) -> r.DocumentResult:
        query = self._query(command.query_id)
        section = self.doc.by_key[query.section] if query.section is not None else None
        data = {"queryId": query.id, "response": command.response}
        self.emit("pact.human.responded", data, section)
        return r.QueryStatus(query.id, "answered")

    def do_dismiss(self, command: c.DismissQuery) -> r.DocumentResult:
        query = self._query(command.query_id)
        section = self.doc.by_key[query.section] if query.section is not None else None
        self.emit("pact.human.dismissed", {"queryId": query.id, "why": command.why}, section)
        return r.QueryStatus(query.id, "dismissed")

    def do_escalate(self, command: c.Escalate) -> r.DocumentResult:
        section = self.section(command.section_id)
        data = {
            "agentId": self.actor_id,
            "sectionId": section.id,
            "reason": command.reason,
            "flag": True,
            "kind": "flag",
        }
        self.emit("pact.escalation.human", data, section)
        return r.Escalated(section.id)

    def do_resolve(self, command: c.Resolve) -> r.DocumentResult:
        """A binding human decision on a section: optionally merges a chosen proposal or a
        text; with ``override``, every other open proposal there is rejected; auto-merge
        resumes."""
        doc = self.doc
        section, chosen = self.may_resolve(command.section_id, command.proposal_id, command.content)
        resolution_id = self.ids.uuid()
        data = {
            "resolutionId": resolution_id,
            "sectionId": section.id,
            "decision": command.decision,
            "justification": command.justification,
            "override": command.override,
            "proposalId": command.proposal_id,
        }
        self.emit("pact.human.resolved", data, section, entity=resolution_id)
        why = command.justification
        if chosen is not None:
            if chosen.conflict and doc.conflicts[chosen.conflict].resolved is None:
                self._resolve_group(chosen.conflict, "human", chosen.id, section, why)
            if chosen.status in OPEN_STATUSES or chosen.status == "Objected":
                self.merge(chosen, why=why)
        elif command.content is not None:
            self._edit(section, command.content, why)
        for group in list(doc.conflicts.values()):
            if group.section == section.key and group.resolved is None and command.override:
                self._resolve_group(group.id, "human", None, section, why)
        for proposal in doc.open_on(section.key):
            if command.override:
                self.reject(proposal, f"overridden by the human resolution {resolution_id}")
            elif proposal.status == "Approved":
                self.merge(proposal)
            else:
                self.settle(proposal)
        return r.Resolved(resolution_id, section.id)

    # -- comments ------------------------------------------------------------------------------
    def do_comment(self, command: c.AddComment) -> r.DocumentResult:
        section = self.section(command.section_id)
        if command.proposal_id is not None:
            proposal = self.proposal(command.proposal_id)
            if proposal.section != section.key:
                raise InvalidRequest(f"proposal {proposal.id} is not on {section.id}")
        comment_id = self.ids.uuid()
        data = {
            "commentId": comment_id,
            "agentId": self.actor_id,
            "sectionId": section.id,
            "text": command.text,
            "proposalId": command.proposal_id,
        }
        self.emit("pact.comment.added", data, section, entity=comment_id)
        return r.Commented(comment_id)

    def do_resolve_comment(self, command: c.ResolveComment) -> r.DocumentResult:
        comment = self.doc.comments.get(command.comment_id)
        if comment is None or not self._reads_key(comment.section):
            raise NotFound(f"no comment {command.comment_id!r}")
        if comment.resolved_by is not None:
            raise InvalidRequest(f"comment {comment.id} is already resolved")
        section = self.doc.by_key[comment.section]
        self.emit("pact.comment.resolved", {"commentId": comment.id}, section)
        return r.CommentResolved(comment.id)

    # -- the custodian's powers ----------------------------------------------------------------
    def do_invite(self, command: c.Invite) -> r.DocumentResult:
        token = self.ids.token()
        scope = [self.section(s, read=False).key for s in command.sections]
        if command.mode in ("SectionScoped", "Neighbourhood") and not scope:
            raise InvalidRequest(f"a {command.mode} invite names the sections it opens")
        ttl = command.ttl_seconds or INVITE_DEFAULT_S
        expires = self.now + ttl * 1000
        data: dict[str, Any] = {
            "tokenHash": token_hash(token),
            "expiresAt": expires,
            "trustLevel": command.trust,
            "clearance": command.clearance,
            "organisation": command.organisation,
            "mode": command.mode,
            "scope": scope,
        }
        if command.clearance is not None:
            self._rank(command.clearance)
        self.emit("pact.invite.created", data)
        # The token is shown once, here; the log keeps only its hash.
        return r.Invited(token, data["tokenHash"], iso(expires), command.mode)

    def do_revoke_invite(self, command: c.RevokeInvite) -> r.DocumentResult:
        found = [i for h, i in self.doc.invites.items() if h.startswith(command.invite)]
        if not found:
            raise NotFound(f"no invite {command.invite!r}", field="invite")
        if len(found) > 1:
            raise InvalidRequest(
                f"invite {command.invite!r} is the start of {len(found)} invites: give more of it",
                field="invite",
                matches=len(found),
            )
        invite = found[0]
        if not invite_open(invite, self.now):
            raise InvalidRequest(
                f"invite {invite.token_hash[:12]} is {invite_state(invite, self.now)}: only an"
                " open invite can be revoked",
                field="invite",
            )
        self.emit("pact.invite.revoked", {"tokenHash": invite.token_hash, "why": command.why})
        return r.InviteRevoked(invite.token_hash)

    def _rank(self, level: str | None, adopting: dict[str, Any] | None = None) -> int:
        """``level``'s place in the document's framework, or in the one a command is about to
        adopt (checked before it is adopted: a refused command adopts nothing)."""
        if level is None:
            return 0
        framework = self.doc.framework
        if adopting is not None:
            framework = (adopting["framework"], tuple(adopting["levels"]))
        if framework is None:
            raise InvalidRequest(
                "the document has no classification framework yet: classify a section first"
            )
        name, levels = framework
        if level not in levels:
            raise InvalidRequest(
                f"{level!r} is not a level of framework {name!r} ({', '.join(levels)})",
                levels=list(levels),
            )
        return levels.index(level)

    def do_classify(self, command: c.Classify) -> r.DocumentResult:
        section = self.section(command.section_id)
        adopted = None
        if self.doc.framework is None:
            if not command.levels:
                raise InvalidRequest("no classification framework: create one first")
            adopted = {"framework": command.framework, "levels": list(command.levels)}
        rank = self._rank(command.level, adopted)
        if adopted is not None:
            self.emit("pact.framework.adopted", adopted)
        data: dict[str, Any] = {
            "sectionId": section.id,
            "level": command.level,
            "rank": rank,
            "framework": self.doc.framework[0] if self.doc.framework else None,
        }
        if command.organisation is not None:
            data["organisation"] = command.organisation
        self.emit("pact.section.classified", data, section)
        return r.Classified(section.id, command.level)

    def do_clearance(self, command: c.Clearance) -> r.DocumentResult:
        agent = self.may_clearance(command.agent)
        adopted = None
        if self.doc.framework is None and command.levels:
            adopted = {"framework": command.framework, "levels": list(command.levels)}
        levels: tuple[str, ...] = tuple(command.levels) if adopted is not None else ()
        if adopted is None and self.doc.framework is not None:
            levels = self.doc.framework[1]
        # A level in any case is the framework's level: "internal" clears for "Internal".
        level = next((x for x in levels if x.lower() == command.level.lower()), command.level)
        rank = self._rank(level, adopted)
        if adopted is not None:
            self.emit("pact.framework.adopted", adopted)
        data = {"agentId": agent.id, "level": level, "rank": rank}
        self.emit("pact.agent.clearance-set", data)
        return r.ClearanceSet(agent.id, level)

    def do_trust(self, command: c.SetTrust) -> r.DocumentResult:
        agent = self.may_trust(command.agent, command.level)
        why = self.need_why(command.why, "a change of trust")
        data = {"agentId": agent.id, "trustLevel": command.level, "why": why}
        self.emit("pact.agent.trust-changed", data)
        return r.TrustSet(agent.id, command.level)

    def do_disclosure(self, command: c.SetDisclosure) -> r.DocumentResult:
        agent = self.other_agent(command.agent)
        self.emit("pact.agent.disclosure-set", {"agentId": agent.id, "level": command.level})
        return r.DisclosureSet(agent.id, command.level)

    def do_remove(self, command: c.RemoveAgent) -> r.DocumentResult:
        agent = self.may_remove(command.agent)
        data = {"agentId": agent.id, "agentName": agent.name, "why": command.why}
        self.emit("pact.agent.removed", data)
        return r.Removed(agent.id)

    def do_force_merge(self, command: c.ForceMerge) -> r.DocumentResult:
        proposal, section = self.may_force_merge(command.proposal_id)
        if proposal.conflict and self.doc.conflicts[proposal.conflict].resolved is None:
            self._resolve_group(proposal.conflict, "human", proposal.id, section, command.why)
        self.merge(proposal, why=command.why)
        return proposal_status(self.doc, proposal)

    def do_edit(self, command: c.Edit) -> r.DocumentResult:
        section = self.section(command.section_id)
        self._edit(section, command.content, command.why)
        return r.Edited(self.doc.by_key[section.key].id, section.version)

    def _edit(self, section: Section, content: str, why: str) -> None:
        parts = parts_for(self.doc, section, content)
        data = {
            "sectionId": section.id,
            "newVersion": section.version + 1,
            "parts": parts,
            "addedKeys": added_keys(self.doc, parts),
            "why": why,
        }
        self.emit("pact.section.edited", data, section)

    def do_policy(self, command: c.SetPolicy) -> r.DocumentResult:
        doc = self.doc
        now = {
            "policy": doc.policy,
            "windowSeconds": doc.window_s,
            "strategy": doc.strategy,
            "removalGuard": doc.removal_guard,
        }
        given = {
            "policy": command.policy,
            "windowSeconds": command.window_seconds,
            "strategy": command.strategy,
            "removalGuard": command.removal_guard,
        }
        # A policy as it already is (or no field given) changes nothing: nothing is appended,
        # and the answer says so.
        changed = any(value is not None and value != now[key] for key, value in given.items())
        if changed:
            data = {**given, "why": command.why}
            if command.removal_guard is None:  # as a policy change was written before the guard
                del data["removalGuard"]
            self.emit("pact.document.policy-changed", data)
        return r.PolicyStatus(doc.policy, doc.window_s, doc.strategy, doc.removal_guard, changed)

    # -- due work ------------------------------------------------------------------------------
    def fire_due(self) -> list[tuple[int, str, str]]:
        """Everything due at ``now``: evictions, lock and alias expiries, intents accepted,
        questions timed out, objection windows ended, votes counted, conflicts escalated.
        Returns the timers taken off the heap."""
        doc, now = self.doc, self.now
        # Every timer due is taken off before any event is emitted, then fired in order: the
        # first event drops whatever is due at its time from the heap (``Document.apply``).
        popped = []
        while doc.timers and doc.timers[0][0] <= now:
            popped.append(heapq.heappop(doc.timers))
        for agent in doc.active_agents():
            if agent.last_seen_ms + EVICT_AFTER_S * 1000 <= now:
                data = {
                    "agentId": agent.id,
                    "agentName": agent.name,
                    "lastSeen": agent.last_seen_ms,
                }
                self.emit("pact.agent.evicted", data)
        for due, kind, ref in popped:
            self._fire(due, kind, ref)
        return popped

    def _fire(self, due: int, kind: str, ref: str) -> None:
        doc = self.doc
        if kind == "lock":
            section = doc.by_key.get(int(ref))
            if section and section.lock is not None and section.lock.until_ms == due:
                self.emit("pact.section.unlocked", {"reason": "expired"}, section)
        elif kind == "alias":
            alias = doc.aliases.get(ref)
            if alias is not None and alias[1] == due:
                data = {"alias": ref, "sectionKey": alias[0]}
                self.emit("pact.section.alias-expired", data)
        elif kind == "intent":
            intent = doc.intents.get(ref)
            if intent is not None and intent.status == "Proposed":
                section = doc.by_key[intent.section]
                self.emit("pact.intent.accepted", {"intentId": intent.id}, section)
        elif kind == "query":
            query = doc.queries.get(ref)
            if query is not None and query.status == "open":
                section = doc.by_key[query.section] if query.section is not None else None
                self.emit("pact.human.timed-out", {"queryId": query.id}, section)
        elif kind == "merge":
            proposal = doc.proposals.get(ref)
            if proposal is not None and proposal.status == "Pending":
                self.settle(proposal)
        elif kind == "vote":
            group = doc.conflicts.get(ref)
            if group is not None and group.resolved is None:
                self._count_votes(group)
        elif kind == "escalate":
            group = doc.conflicts.get(ref)
            if group is not None and group.resolved is None:
                self._escalate_conflict(group)

    def _count_votes(self, group: ConflictGroup) -> None:
        """``vote``: at the window's end the side with most approvals wins; ties → earliest."""
        doc = self.doc
        sides = [doc.proposals[p] for p in group.proposals]
        sides = [p for p in sides if p.status == "Conflict"]
        if not sides:
            return
        best = max(sides, key=lambda p: (len(p.approvals), -p.created_ms, -sides.index(p)))
        self._resolve_group(group.id, "vote", best.id, doc.by_key[group.section])


def parts_for(doc: Document, section: Section, content: str) -> list[dict[str, Any]]:
    """The parts ``content`` makes of ``section`` (its own text, then new subsections), checked
    where it sits, between the section before it (a setext heading would join the paragraph
    that section ends with) and the one after it (whose heading must survive the splice).
    ``InvalidContent`` names what breaks the structure."""
    position = doc._position(section.key)
    before = _bearing_before(doc, position)
    following = doc.sections[position + 1].content if position + 1 < len(doc.sections) else ""
    window = (before.content if before else "") + section.content + following
    if following and not content.endswith("\n\n"):
        # Sections stay apart by a blank line, as Markdown is written.
        content = content.rstrip("\n") + "\n\n"
    parsed = parse_sections(window)
    # The window's sections: its root (the text before the first heading, maybe empty), the
    # section before (if it bears on this one and has a heading), this one, the one after.
    at = 0 if section.level == 0 else 1 if before is None or before.level == 0 else 2
    target = parsed[at]
    try:
        replaced = replace_section(window, target.id, content)
    except InvalidContent as error:  # it names the section as the window's parse does
        metadata = {**error.metadata, "section_id": section.id}
        description = error.description.replace(target.id, section.id)
        raise InvalidContent(description, **metadata) from None
    parts = []
    for parsed_section in replaced.sections[at : len(replaced.sections) - (1 if following else 0)]:
        # Its lines as Markdown counts them ("\n" only; str.splitlines also splits at "\f",
        # "\u2028", ..., which then cut a section's text short or moved it to the next one).
        text = section_content(replaced.markdown, parsed_section)
        parts.append(
            {"title": parsed_section.title, "level": parsed_section.level, "content": text}
        )
    return parts


def _bearing_before(doc: Document, position: int) -> Section | None:
    """The section before the one at ``position``, if it bears on how content spliced there
    parses: only one that does not end with a blank line, whose last paragraph a setext
    heading would join. After a blank line nothing of it reaches the spliced content, which
    starts with its own heading line (or is the root, which has nothing before it)."""
    if position == 0:
        return None
    before = doc.sections[position - 1]
    return None if before.content.endswith("\n\n") else before


def splice_key(doc: Document, section: Section) -> tuple[int, ...]:
    """What a check of content spliced into ``section`` depended on: the section before it
    (key and version) if it bears on it, its own version, and the section after it. The same
    key: the same parts."""
    position = doc._position(section.key)
    before = _bearing_before(doc, position)
    following = doc.sections[position + 1] if position + 1 < len(doc.sections) else None
    return (
        before.key if before else -1,
        before.version if before else 0,
        section.version,
        following.key if following else -1,
        following.version if following else 0,
    )


def added_keys(doc: Document, parts: list[dict[str, Any]]) -> list[int]:
    """The keys the fold will give the new subsections of a merge (for the barriers)."""
    return [doc.next_key + i for i in range(len(parts) - 1)]


def proposal_status(doc: Document, proposal: Proposal) -> r.ProposalStatus:
    """What a proposal command answers: ``proposal-response.json``'s value."""
    section = doc.by_key[proposal.section]
    active = tuple(
        r.ActiveConstraint(k.boundary, k.category or "")
        for k in doc.constraints_of(section.key)
        if not k.withdrawn
    )
    return r.ProposalStatus(
        proposal.id,
        doc.id,
        section.id,
        proposal.status,
        proposal.summary,
        iso(proposal.created_ms),
        active,
    )


def proposal_response(doc: Document, proposal: Proposal) -> dict[str, Any]:
    """``proposal-response.json``, as the proposal reads send it."""
    return proposal_status(doc, proposal).to_json()
