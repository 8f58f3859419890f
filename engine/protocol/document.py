"""One document's projection: the fold of its v0.3 events.

``Document.apply(event)`` is the only thing that changes it, for events just decided and events
replayed alike: a decision (``engine.protocol.decide``) builds each event and applies it at once,
so the next rule it checks sees the state the log will hold. The fold parses no Markdown: an
event that changes the section structure carries the parts it produces, so a replay under
another parser version gives the same document.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

from engine.canonical import canonical_json
from engine.protocol.envelope import payload
from engine.protocol.model import (
    ALIAS_FOR_S,
    DEFAULT_REMOVAL_GUARD,
    DEFAULT_SALIENCE,
    DEFAULT_WINDOW_S,
    ESCALATE_CONFLICT_AFTER_S,
    OPEN_STATUSES,
    Agent,
    Comment,
    ConflictGroup,
    Constraint,
    Intent,
    Invite,
    Lock,
    Override,
    Policy,
    Proposal,
    Query,
    Resolution,
    Section,
    Status,
    Strategy,
    Trust,
    Vote,
)
from engine.protocol.sections import ROOT, sibling_ids

Fold = Callable[["Document", dict[str, Any], dict[str, Any]], None]
_FOLDS: dict[str, Fold] = {}


def folds(*event_types: str) -> Callable[[Fold], Fold]:
    def register(fold: Fold) -> Fold:
        for event_type in event_types:
            _FOLDS[event_type] = fold
        return fold

    return register


def event_types() -> frozenset[str]:
    """Every event type the fold knows."""
    return frozenset(_FOLDS)


class Document:
    """The state of one document as of its last applied event."""

    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.created_ms = 0
        self.sequence = 0  # the sequenceNumber of the next event
        self.last_event_id: str | None = None
        self.policy: Policy = "single"
        self.window_s = DEFAULT_WINDOW_S
        self.strategy: Strategy = "first-wins"
        self.default_trust: Trust = "Collaborator"
        # A proposal removing more than this share (%) of its section's lines waits for a human.
        self.removal_guard = DEFAULT_REMOVAL_GUARD
        self.framework: tuple[str, tuple[str, ...]] | None = None  # name, levels low → high
        self.version = 0  # merges so far (the document's version)
        self.sections: list[Section] = []  # document order, the root first
        self.by_key: dict[int, Section] = {}
        self.by_id: dict[str, Section] = {}
        self.positions: dict[int, int] = {}  # section key → its place in document order
        self.barred: set[int] = set()  # sections classified above the lowest level or owned
        self.aliases: dict[str, tuple[int, int]] = {}  # old id → (section key, until ms)
        self.next_key = 0
        self.locked: Override | None = None  # a human's lock on the whole document
        self.agents: dict[str, Agent] = {}
        self.active: dict[str, str] = {}  # name → id of the joined agents
        # The names humans have acted under on this document (the actorDisplay of every event
        # whose actorKind is Individual) → when first: no agent may join under one (names.py).
        self.humans: dict[str, int] = {}
        self.salience: dict[tuple[str, int], int] = {}
        # The same scores by section: section key → agent id → score (who set one there).
        self.salience_by_section: dict[int, dict[str, int]] = defaultdict(dict)
        # A dict, or after a restore a mapping that builds closed proposals when read
        # (engine.protocol.persist.Restored).
        self.proposals: MutableMapping[str, Proposal] = {}
        self.open_by_section: dict[int, dict[str, None]] = defaultdict(dict)  # insertion order
        self.by_author: dict[str, list[str]] = defaultdict(list)
        self.by_status: dict[str, dict[str, None]] = defaultdict(dict)
        self.conflicts: dict[str, ConflictGroup] = {}
        self.intents: dict[str, Intent] = {}
        self.constraints: dict[str, Constraint] = {}
        # section key → the ids of its intents, and of its constraints, in order
        self.intents_on: dict[int, list[str]] = defaultdict(list)
        self.constraints_on: dict[int, list[str]] = defaultdict(list)
        self.comments: dict[str, Comment] = {}
        self.queries: dict[str, Query] = {}
        self.resolutions: dict[str, Resolution] = {}
        self.invites: dict[str, Invite] = {}
        self.overrides: list[tuple[str, Override]] = []  # (what, who and why), oldest first
        # (actor, key) → (request hash, the entity made, the first answer as canonical JSON)
        self.idempotency: dict[tuple[str, str], tuple[str, str | None, str | None]] = {}
        # What may fall due: (when, kind, what), checked against the state when it comes up.
        self.timers: list[tuple[int, str, str]] = []
        # Due timers a tick took and found nothing to fire for (a settled conflict's escalation,
        # a merge an objection blocks). What they would fire depends on the state alone, which
        # only an event changes, and the next event drops them (``apply``): so they are not
        # looked at again, and nothing shows as due for them. Still the fold's, though: a
        # replay holds them among ``timers`` until that event, so a dump counts them there.
        self.quiet_timers: list[tuple[int, str, str]] = []
        # Not state: the parts a proposal's content was checked to make, and what that check
        # depended on (decide.splice_key), so a merge of an unchanged section need not parse
        # again. Absent after a replay or a restore: the merge then checks afresh.
        self.parts_cache: dict[str, tuple[tuple[int, ...], list[dict[str, Any]]]] = {}

    def remind(self, due_ms: int, kind: str, ref: str) -> None:
        heapq.heappush(self.timers, (due_ms, kind, ref))

    def next_due_ms(self) -> int | None:
        """When the next timer that may fire something falls due (None: none is waiting)."""
        return self.timers[0][0] if self.timers else None

    def all_timers(self) -> list[tuple[int, str, str]]:
        """Every timer the fold holds, sorted: those waiting and the quiet ones."""
        return sorted([*self.timers, *self.quiet_timers])

    # -- the fold ------------------------------------------------------------------------------
    def apply(self, event: Mapping[str, Any]) -> None:
        """Fold one event (its envelope, as decided or as stored)."""
        if event["sequenceNumber"] != self.sequence:
            raise ValueError(
                f"event {event['id']} has sequenceNumber {event['sequenceNumber']},"
                f" the document expects {self.sequence}"
            )
        fold = _FOLDS.get(event["eventType"])
        if fold is None:
            raise ValueError(f"event {event['id']}: unknown event type {event['eventType']!r}")
        # The timers are the fold's: whoever decided this event took every timer due at its
        # time off the heap first (and fired those that still had work), so a replay does the
        # same here, and a live document and its replay hold the same timers.
        at = event["epochMs"]
        while self.timers and self.timers[0][0] <= at:
            heapq.heappop(self.timers)
        if self.quiet_timers:
            # Dropped like the others; one due after this event (a clock set back) waits again.
            for timer in self.quiet_timers:
                if timer[0] > at:
                    heapq.heappush(self.timers, timer)
            self.quiet_timers = []
        data = payload(event)
        fold(self, dict(event), data)
        self.file_retry(event, data)
        if event["actorKind"] == "Individual":
            self.humans.setdefault(event["actorDisplay"], at)
        actor_id = event["actorId"]
        agent = self.agents.get(actor_id) if actor_id else None
        if agent is not None and agent.active:
            agent.last_seen_ms = max(agent.last_seen_ms, event["epochMs"])
        self.sequence += 1
        self.last_event_id = event["id"]

    def intents_of(self, key: int) -> list[Intent]:
        """The intents declared on section ``key``, oldest first."""
        return [self.intents[i] for i in self.intents_on.get(key, ())]

    def constraints_of(self, key: int) -> list[Constraint]:
        """The constraints published on section ``key``, oldest first."""
        return [self.constraints[k] for k in self.constraints_on.get(key, ())]

    def file_retry(self, event: Mapping[str, Any], data: Mapping[str, Any]) -> None:
        """Keep what a retry of the command that emitted ``event`` needs, if it had a key: the
        request's hash, what it made, and its answer (absent from logs older than answers)."""
        key = data.get("idempotencyKey")
        if key is None:
            return
        answer = data.get("answer")
        # Filed under the command's actor: the event's, or (when the command's first event was
        # the system's, see Decider.as_system) the one the payload names.
        owner = data.get("keyOwner", event["actorId"]) or ""
        self.idempotency[(owner, key)] = (
            data["requestHash"],
            data.get("entity"),
            None if answer is None else canonical_json(answer),
        )

    # -- sections ------------------------------------------------------------------------------
    def markdown(self) -> str:
        return "".join(section.content for section in self.sections)

    def section(self, section_id: str, now_ms: int | None = None) -> Section | None:
        """A section by its id, or by an old id still valid as an alias at ``now_ms``."""
        found = self.by_id.get(section_id)
        if found is not None:
            return found
        alias = self.aliases.get(section_id)
        if alias is not None and (now_ms is None or now_ms < alias[1]):
            return self.by_key.get(alias[0])
        return None

    def _add_sections(
        self, rows: list[dict[str, Any]], after: int | None, *, renumber: bool = True
    ) -> None:
        """Insert sections (title, level, content) after the section keyed ``after``."""
        made = []
        for row in rows:
            section = Section(
                key=self.next_key,
                id="",
                title=row["title"],
                level=row["level"],
                parent=None,
                content=row["content"],
            )
            section.history.append(section.content)
            self.next_key += 1
            made.append(section)
        at = len(self.sections) if after is None else self._position(after) + 1
        self.sections[at:at] = made
        if renumber:
            self._renumber()

    def _position(self, key: int) -> int:
        """The section's place in document order."""
        return self.positions[key]

    def _renumber(self) -> dict[str, str]:
        """Give every section its parent from the heading levels, and its id: a section keeps
        the id it has while that id still fits its heading path, and new sections (and those
        renamed or moved under a new parent) take the first free name among their siblings,
        never an id that another section holds or had as an alias still valid
        (``sections.sibling_ids``). Returns old → new ids of the sections whose id changed."""
        stack: list[Section] = []  # the open headings, by level
        children: dict[int | None, list[Section]] = defaultdict(list)  # parent → its children
        self.positions = {}
        for position, section in enumerate(self.sections):
            self.positions[section.key] = position
            if section.level == 0:
                section.parent = None
                continue
            while stack and stack[-1].level >= section.level:
                stack.pop()
            section.parent = stack[-1].key if stack else None
            children[section.parent].append(section)
            stack.append(section)
        renamed: dict[str, str] = {}
        # An id that names another section, as its id or as an alias still valid, is not free.
        reserved = {alias: key for alias, (key, _) in self.aliases.items()}
        reserved.update((section.id, section.key) for section in self.sections if section.id)

        def name(group: list[Section], parent_id: str | None) -> None:
            rows = [(s.key, s.id, s.level, s.title) for s in group]
            for section, new_id in zip(group, sibling_ids(parent_id, rows, reserved), strict=True):
                if section.id and section.id != new_id:
                    renamed[section.id] = new_id
                section.id = new_id

        # A parent comes before its children in document order: its id is settled first.
        name(children.get(None, []), None)
        for section in self.sections:
            if section.level == 0:
                section.id = ROOT
            elif section.key in children:
                name(children[section.key], section.id)
        self.by_key = {section.key: section for section in self.sections}
        self.by_id = {section.id: section for section in self.sections}
        return renamed

    def ancestors(self, section: Section) -> Iterator[Section]:
        parent = section.parent
        while parent is not None:
            found = self.by_key[parent]
            yield found
            parent = found.parent

    def _merge(self, section: Section, data: dict[str, Any], at_ms: int) -> None:
        """Put a merged content (its parts: the section's own, then new subsections) in place."""
        parts = data["parts"]
        first = parts[0]
        retitled = first["title"] != section.title
        section.title, section.content = first["title"], first["content"]
        section.version = data["newVersion"]
        section.history.append(section.content)
        self.version += 1
        if len(parts) > 1:
            self._add_sections(parts[1:], section.key, renumber=False)
        # Ids come from the titles: only a new title or new sections can change any.
        renamed = self._renumber() if retitled or len(parts) > 1 else {}
        for old, new in renamed.items():
            until = at_ms + ALIAS_FOR_S * 1000
            self.aliases[old] = (self.by_id[new].key, until)
            self.remind(until, "alias", old)
        # The section changed under every other open proposal on it: its approvals are void.
        for pid in list(self.open_by_section.get(section.key, ())):
            other = self.proposals[pid]
            if other.id != data.get("proposalId"):
                other.stale = True
                other.dismissed += len(other.approvals)
                other.approvals.clear()

    # -- agents and salience -------------------------------------------------------------------
    def agent_named(self, name: str) -> Agent | None:
        agent_id = self.active.get(name)
        return self.agents[agent_id] if agent_id is not None else None

    def salience_of(self, agent_id: str, key: int) -> int:
        return self.salience.get((agent_id, key), DEFAULT_SALIENCE)

    def active_agents(self) -> list[Agent]:
        """The joined agents, in registration order (``active`` is filled as they join, and a
        rejoining agent registers anew, last)."""
        agents = self.agents
        return [agents[i] for i in self.active.values()]

    # -- proposals -----------------------------------------------------------------------------
    def set_status(self, proposal: Proposal, status: Status, at_ms: int) -> None:
        old = proposal.status
        self.by_status[old].pop(proposal.id, None)
        self.by_status[status][proposal.id] = None
        proposal.status = status
        if status in OPEN_STATUSES:
            self.open_by_section[proposal.section][proposal.id] = None
        else:
            self.open_by_section[proposal.section].pop(proposal.id, None)
            proposal.closed_ms = at_ms

    def open_on(self, key: int) -> list[Proposal]:
        return [self.proposals[pid] for pid in self.open_by_section.get(key, ())]

    def tally(self, proposal: Proposal) -> tuple[set[str], set[str]]:
        """Votes that count: approvals of the fixed quorum (3.), plus its members with salience
        1-3 who auto-consent unless they voted against; and rejections."""
        quorum = set(proposal.quorum)
        against = (set(proposal.rejections) | set(proposal.objections)) & quorum
        approving = set(proposal.approvals) & quorum
        if proposal.policy == "single":
            approving = set(proposal.approvals) - {proposal.author}
        for agent_id in quorum - against:
            if 1 <= self.salience_of(agent_id, proposal.section) <= 3:
                approving.add(agent_id)
        return approving, against

    def blocked(self, proposal: Proposal) -> str | None:
        """Why an objection window's auto-merge may not happen yet, if it may not."""
        section = self.by_key[proposal.section]
        if section.escalated is not None:
            return f"{section.id} is escalated to a human"
        waiting = [a for a in proposal.must_act if a not in proposal.approvals]
        if waiting:
            names = ", ".join(self.agents[a].name for a in waiting)
            return f"blocked: salience-10 reviewer(s) {names} have not acted"
        return None


def _section_of(doc: Document, data: dict[str, Any]) -> Section:
    """The section an event's payload names by its key."""
    return doc.by_key[data["sectionKey"]]


# -- document ----------------------------------------------------------------------------------
@folds("pact.document.snapshot")
def _created(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    if doc.sequence != 0:
        raise ValueError(f"event {event['id']}: a document snapshot after its creation")
    doc.id, doc.name, doc.created_ms = event["entityId"], data["name"], event["epochMs"]
    doc.policy, doc.window_s = data["policy"], data["windowSeconds"]
    doc.strategy, doc.default_trust = data["strategy"], data["defaultTrust"]
    doc._add_sections(data["sections"], None)


@folds("pact.document.policy-changed")
def _policy(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.policy = data.get("policy") or doc.policy
    doc.window_s = data.get("windowSeconds") or doc.window_s
    doc.strategy = data.get("strategy") or doc.strategy
    if data.get("removalGuard") is not None:  # 0 is a guard too
        doc.removal_guard = data["removalGuard"]
    doc.overrides.append(("policy", _override(data, event)))


@folds("pact.document.locked", "pact.document.unlocked")
def _document_lock(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    locking = event["eventType"] == "pact.document.locked"
    doc.locked = _override(data, event) if locking else None
    if locking:
        doc.overrides.append(("document lock", _override(data, event)))


@folds("pact.framework.adopted")
def _framework(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.framework = (data["framework"], tuple(data["levels"]))


def _override(data: dict[str, Any], event: dict[str, Any]) -> Override:
    return Override(
        event["actorDisplay"], event["actorKind"], data.get("why") or "", event["epochMs"]
    )


# -- agents --------------------------------------------------------------------------------------
@folds("pact.agent.joined")
def _joined(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    agent = Agent(
        id=data["agentId"],
        name=data["agentName"],
        role=data.get("role"),
        trust=data["trustLevel"],
        order=len(doc.agents),
        joined_ms=event["epochMs"],
        last_seen_ms=event["epochMs"],
        clearance=data.get("clearance"),
        clearance_rank=data.get("clearanceRank", 0),
        organisation=data.get("organisation"),
        mode=data.get("mode", "Full"),
        scope=tuple(data.get("scope", ())),
        key_hash=data.get("keyHash"),
    )
    doc.agents[agent.id] = agent
    doc.active[agent.name] = agent.id
    invite = data.get("inviteHash")
    if invite is not None:
        doc.invites[invite].used_by = agent.id


@folds("pact.agent.left", "pact.agent.evicted", "pact.agent.removed")
def _gone(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    agent = doc.agents[data["agentId"]]
    agent.active = False
    agent.gone = event["eventType"].rsplit(".", 1)[1]
    doc.active.pop(agent.name, None)
    for section in doc.sections:  # its locks are released
        if section.lock is not None and section.lock.holder == agent.id:
            section.lock = None
    if agent.gone == "removed":
        doc.overrides.append((f"removed {agent.name}", _override(data, event)))


@folds("pact.agent.heartbeat")
def _heartbeat(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    pass  # Document.apply notes the actor as seen


@folds("pact.agent.completed")
def _completed(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.agents[data["agentId"]].completion = (data["status"], data.get("summary"))


@folds("pact.agent.trust-changed")
def _trust(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    agent = doc.agents[data["agentId"]]
    agent.trust = data["trustLevel"]
    doc.overrides.append((f"trust of {agent.name} → {agent.trust}", _override(data, event)))


@folds("pact.agent.clearance-set")
def _clearance(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    agent = doc.agents[data["agentId"]]
    agent.clearance, agent.clearance_rank = data["level"], data["rank"]


@folds("pact.agent.disclosure-set")
def _disclosure(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.agents[data["agentId"]].disclosure = data["level"]


# -- proposals -----------------------------------------------------------------------------------
@folds("pact.proposal.created")
def _proposal_created(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    section = _section_of(doc, data)
    base_version = data["baseVersion"]
    history = section.history
    base = history[base_version - 1] if 1 <= base_version <= len(history) else history[-1]
    proposal = Proposal(
        id=data["proposalId"],
        author=data["agentId"],
        author_name=event["actorDisplay"],
        author_kind=event["actorKind"],
        section=section.key,
        content=data["newContent"],
        summary=data.get("summary"),
        reasoning=data.get("reasoning"),
        base_version=base_version,
        base_content=base,
        created_ms=event["epochMs"],
        policy=data["policy"],
        window_s=data["windowSeconds"],
        quorum=tuple(data.get("quorum", ())),
        reviewers=data.get("reviewers", len(data.get("quorum", ()))),
        must_act=tuple(data.get("mustAct", ())),
        stale=base_version < section.version,
        supersedes=tuple(data.get("supersedes", ())),
        reverts=data.get("reverts"),
        correlation=event["correlationId"] or event["id"],
        removes_most=_removes_most(data.get("removesMost")),
    )
    doc.proposals[proposal.id] = proposal
    doc.by_author[proposal.author].append(proposal.id)
    doc.by_status["Pending"][proposal.id] = None
    doc.open_by_section[section.key][proposal.id] = None
    if proposal.reverts is not None:
        doc.proposals[proposal.reverts].reverted_by = proposal.id


def _removes_most(data: dict[str, Any] | None) -> tuple[int, int, int] | None:
    if data is None:
        return None
    return data["removed"], data["lines"], data["guard"]


@folds("pact.proposal.auto-merge-scheduled")
def _scheduled(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.proposals[data["proposalId"]].merge_at_ms = data["mergeAt"]
    doc.remind(data["mergeAt"], "merge", data["proposalId"])


@folds("pact.proposal.approved")
def _approved(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    proposal = doc.proposals[data["proposalId"]]
    approver = data.get("approverId")
    if approver is not None:
        proposal.approvals[approver] = Vote(approver, event["actorKind"], event["epochMs"])
    if data.get("status"):
        doc.set_status(proposal, data["status"], event["epochMs"])
    if event["actorKind"] == "Individual" and data.get("why"):
        proposal.override = _override(data, event)
        doc.overrides.append((f"approved {proposal.id}", proposal.override))


@folds("pact.proposal.rejected")
def _rejected(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    proposal = doc.proposals[data["proposalId"]]
    by = data.get("rejecterId")
    if by is not None:
        proposal.rejections[by] = Vote(by, event["actorKind"], event["epochMs"], data.get("reason"))
    if data.get("final", True):
        proposal.reason = data.get("reason")
        doc.set_status(proposal, "Rejected", event["epochMs"])
    if event["actorKind"] == "Individual":
        doc.overrides.append((f"rejected {proposal.id}", _override(data, event)))


@folds("pact.proposal.objected")
def _objected(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    proposal = doc.proposals[data["proposalId"]]
    proposal.objections[data["objecterId"]] = Vote(
        data["objecterId"], event["actorKind"], event["epochMs"], data["reason"]
    )
    proposal.reason = data["reason"]
    doc.set_status(proposal, "Objected", event["epochMs"])


@folds("pact.proposal.withdrawn")
def _withdrawn(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    proposal = doc.proposals[data["proposalId"]]
    proposal.reason = data.get("reason")
    doc.set_status(proposal, "Withdrawn", event["epochMs"])


@folds("pact.proposal.merged", "pact.proposal.auto-merged", "pact.section.edited")
def _merged(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    section = _section_of(doc, data)
    doc._merge(section, data, event["epochMs"])
    proposal_id = data.get("proposalId")
    if proposal_id is not None:
        proposal = doc.proposals[proposal_id]
        proposal.merged_version = data["newVersion"]
        proposal.stale = False
        if data.get("why"):
            proposal.override = _override(data, event)
            doc.overrides.append((f"merged {proposal.id}", proposal.override))
        doc.set_status(proposal, "Merged", event["epochMs"])
    elif event["eventType"] == "pact.section.edited":
        doc.overrides.append((f"edited {section.id}", _override(data, event)))


@folds("pact.proposal.conflict")
def _conflict(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    group = doc.conflicts.get(data["conflictId"])
    if group is None:
        group = doc.conflicts[data["conflictId"]] = ConflictGroup(
            id=data["conflictId"],
            section=data["sectionKey"],
            strategy=data["strategy"],
            proposals=[],
            opened_ms=event["epochMs"],
            base=data["base"],
        )
        # Its deadlines are set when it opens: a rival joining later moves neither.
        doc.remind(group.opened_ms + ESCALATE_CONFLICT_AFTER_S * 1000, "escalate", group.id)
        if group.strategy == "vote":
            doc.remind(group.opened_ms + doc.window_s * 1000, "vote", group.id)
    for pid in data["proposalIds"]:
        if pid not in group.proposals:
            group.proposals.append(pid)
        proposal = doc.proposals[pid]
        proposal.conflict = group.id
        if data.get("status"):
            doc.set_status(proposal, data["status"], event["epochMs"])
    if "merged" in data:
        group.merged, group.overlaps = data["merged"], data["overlaps"]


@folds("pact.proposal.conflict-resolved")
def _conflict_resolved(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    group = doc.conflicts[data["conflictId"]]
    group.resolved, group.winner = data["how"], data.get("winner")
    winner = doc.proposals.get(group.winner) if group.winner else None
    if winner is not None and winner.status == "Conflict":
        doc.set_status(winner, "Pending", event["epochMs"])
    if event["actorKind"] == "Individual":
        doc.overrides.append((f"resolved conflict {group.id}", _override(data, event)))


# -- sections ------------------------------------------------------------------------------------
@folds("pact.section.locked")
def _locked(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    section = _section_of(doc, data)
    section.lock = Lock(
        data["agentId"], event["actorDisplay"], event["actorKind"], data.get("expiresAt")
    )
    if section.lock.until_ms is not None:
        doc.remind(section.lock.until_ms, "lock", str(section.key))


@folds("pact.section.unlocked")
def _unlocked(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    section = _section_of(doc, data)
    section.lock = None
    if data.get("why"):
        doc.overrides.append((f"force-unlocked {section.id}", _override(data, event)))


@folds("pact.section.classified")
def _classified(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    section = _section_of(doc, data)
    section.classification, section.rank = data["level"], data["rank"]
    if "organisation" in data:
        section.organisation = data["organisation"]
    if section.rank > 0 or section.organisation is not None:
        doc.barred.add(section.key)
    else:
        doc.barred.discard(section.key)


@folds("pact.section.alias-expired")
def _alias_expired(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.aliases.pop(data["alias"], None)


@folds("pact.escalation.human")
def _escalated(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    key = data.get("sectionKey")
    if key is not None and data.get("flag", True):
        doc.by_key[key].escalated = Override(
            event["actorDisplay"],
            event["actorKind"],
            data.get("reason") or data.get("question") or "",
            event["epochMs"],
        )
    conflict = data.get("conflictId")
    if conflict is not None:
        doc.conflicts[conflict].escalated_ms = event["epochMs"]


# -- ICS -----------------------------------------------------------------------------------------
@folds("pact.intent.declared")
def _intent(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    for old in data.get("supersedes", ()):
        doc.intents[old].status = "Superseded"
    doc.intents[data["intentId"]] = Intent(
        id=data["intentId"],
        author=data["agentId"],
        section=data["sectionKey"],
        goal=data["goal"],
        category=data.get("category"),
        declared_ms=event["epochMs"],
        accept_at_ms=data["acceptAt"],
    )
    doc.intents_on[data["sectionKey"]].append(data["intentId"])
    doc.remind(data["acceptAt"], "intent", data["intentId"])


@folds("pact.intent.accepted")
def _intent_accepted(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.intents[data["intentId"]].status = "Accepted"


@folds("pact.intent.objected")
def _intent_objected(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    intent = doc.intents[data["intentId"]]
    intent.status = "Objected"
    intent.objections[data["objecterId"]] = Vote(
        data["objecterId"], event["actorKind"], event["epochMs"], data["reason"]
    )


@folds("pact.constraint.published")
def _constraint(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.constraints[data["constraintId"]] = Constraint(
        id=data["constraintId"],
        author=data["agentId"],
        section=data["sectionKey"],
        boundary=data["boundary"],
        category=data.get("category"),
        reasoning=data.get("reasoning"),
        published_ms=event["epochMs"],
    )
    doc.constraints_on[data["sectionKey"]].append(data["constraintId"])


@folds("pact.constraint.withdrawn")
def _constraint_withdrawn(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.constraints[data["constraintId"]].withdrawn = True


@folds("pact.constraint.marked")
def _constraint_marked(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.constraints[data["constraintId"]].compatibility = data["compatibility"]


@folds("pact.salience.set")
def _salience(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.salience[(data["agentId"], data["sectionKey"])] = data["score"]
    doc.salience_by_section[data["sectionKey"]][data["agentId"]] = data["score"]


# -- comments, queries, resolutions, invites -----------------------------------------------------
@folds("pact.comment.added")
def _comment(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.comments[data["commentId"]] = Comment(
        id=data["commentId"],
        author=data["agentId"],
        section=data["sectionKey"],
        text=data["text"],
        at_ms=event["epochMs"],
        proposal=data.get("proposalId"),
    )


@folds("pact.comment.resolved")
def _comment_resolved(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.comments[data["commentId"]].resolved_by = event["actorDisplay"]


@folds("pact.human.asked")
def _asked(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.queries[data["queryId"]] = Query(
        id=data["queryId"],
        author=data["agentId"],
        question=data["question"],
        section=data.get("sectionKey"),
        context=data.get("context"),
        asked_ms=event["epochMs"],
        due_ms=data["dueAt"],
    )
    doc.remind(data["dueAt"], "query", data["queryId"])


@folds("pact.human.responded", "pact.human.timed-out", "pact.human.dismissed")
def _answered(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    query = doc.queries[data["queryId"]]
    kind = event["eventType"].rsplit(".", 1)[1]
    query.status = {"responded": "answered", "timed-out": "timed-out"}.get(kind, "dismissed")  # type: ignore[assignment]
    if kind == "responded":
        query.response, query.responder = data["response"], event["actorDisplay"]


@folds("pact.human.resolved")
def _resolved(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    resolution = Resolution(
        id=data["resolutionId"],
        section=data["sectionKey"],
        decision=data["decision"],
        justification=data["justification"],
        override=data["override"],
        by=event["actorDisplay"],
        at_ms=event["epochMs"],
    )
    doc.resolutions[resolution.id] = resolution
    doc.by_key[resolution.section].escalated = None
    if resolution.override:
        doc.overrides.append(
            (
                f"resolved {data['sectionId']}",
                Override(
                    resolution.by,
                    event["actorKind"],
                    resolution.justification,
                    resolution.at_ms,
                ),
            )
        )


@folds("pact.invite.created")
def _invite(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.invites[data["tokenHash"]] = Invite(
        token_hash=data["tokenHash"],
        expires_ms=data["expiresAt"],
        trust=data["trustLevel"],
        clearance=data.get("clearance"),
        organisation=data.get("organisation"),
        mode=data["mode"],
        scope=tuple(data.get("scope", ())),
        created_by=event["actorDisplay"],
    )


@folds("pact.invite.revoked")
def _invite_revoked(doc: Document, event: dict[str, Any], data: dict[str, Any]) -> None:
    doc.invites[data["tokenHash"]].revoked_by = event["actorDisplay"]
