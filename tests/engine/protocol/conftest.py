"""A document on a simulated clock, and a helper to run protocol commands against it.

``Sim`` folds a ``pact.document.snapshot`` made by ``engine.documents.creation_event`` and runs
commands through ``decide`` at ``sim.now`` (integer ms, advanced by hand). Every event decided,
including due work fired before a refusal, is kept in ``sim.log``, as a store would append it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from engine.documents import creation_event
from engine.protocol.commands import Actor
from engine.protocol.decide import Decision, decide, tick
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds, payload
from engine.protocol.errors import ProtocolError
from engine.protocol.model import Agent, Section

START_MS = 1_700_000_000_000

PLAN = """\
# Plan

Intro line.

## Budget

Total: 1M.

## Scope

Scope line one.
Scope line two.
Scope line three.

## Risks

Risk text.
"""


class Sim:
    def __init__(
        self,
        markdown: str = PLAN,
        *,
        policy: str = "single",
        window_s: int = 60,
        strategy: str = "first-wins",
        default_trust: str = "Collaborator",
        human: str = "carol",
    ) -> None:
        self.ids = CountingIds()
        self.now = START_MS
        self.human_name = human
        self.doc = Document()
        event = creation_event(
            name="plan",
            markdown=markdown,
            document_id=self.ids.uuid(),
            event_id=self.ids.uuid(),
            epoch_ms=self.now,
            human=human,
            policy=policy,
            window_s=window_s,
            strategy=strategy,
            default_trust=default_trust,
        )
        self.doc.apply(event)
        self.log: list[dict[str, Any]] = [event]

    # -- the clock -------------------------------------------------------------------------------
    def advance(self, seconds: float) -> None:
        self.now += round(seconds * 1000)

    def at(self, ms: int) -> None:
        assert ms >= self.now, "the simulated clock only goes forward"
        self.now = ms

    def tick(self) -> list[dict[str, Any]]:
        fired = tick(self.doc, self.now, self.ids).events
        self.log.extend(fired)
        return fired

    # -- commands --------------------------------------------------------------------------------
    def decide(self, actor: Actor, op: str, **fields: Any) -> Decision:
        try:
            decision = decide(self.doc, {"op": op, **fields}, actor, self.now, self.ids)
        except ProtocolError as refused:
            self.log.extend(refused.fired)
            raise
        self.log.extend(decision.events)
        return decision

    def agent(self, name: str, op: str, **fields: Any) -> dict[str, Any]:
        return self.decide(Actor.agent(name), op, **fields).result

    def human_actor(self) -> Actor:
        return Actor.human(self.human_name)

    def human(self, op: str, **fields: Any) -> dict[str, Any]:
        return self.decide(Actor.human(self.human_name), op, **fields).result

    def refused(self, actor: Actor | str, op: str, code: str, **fields: Any) -> ProtocolError:
        """Run a command that must be refused with ``code`` and change nothing."""
        if isinstance(actor, str):
            actor = Actor.agent(actor)
        self.tick()  # due work is appended whatever the command: compare after it
        before = self.snapshot()
        with pytest.raises(ProtocolError) as caught:
            self.decide(actor, op, **fields)
        error = caught.value
        assert error.code == code, f"{op}: {error.code} ({error.description}), wanted {code}"
        assert error.fired == []
        assert self.snapshot() == before, f"refused {op} changed the document"
        return error

    def snapshot(self) -> tuple[Any, ...]:
        doc = self.doc
        return (
            doc.sequence,
            doc.markdown(),
            {
                p.id: (p.status, sorted(p.approvals), sorted(p.objections))
                for p in doc.proposals.values()
            },
            {s.id: (s.version, s.lock is not None, s.escalated is not None) for s in doc.sections},
            sorted(doc.active),
        )

    def join(self, *names: str, trust: str | None = None) -> list[str]:
        ids = []
        for name in names:
            ids.append(self.agent(name, "join", agentName=name)["registrationId"])
            if trust is not None:
                self.human("trust", agent=name, level=trust)
        return ids

    def propose(self, name: str, section_id: str, text: str, **fields: Any) -> str:
        """An agent's proposal; returns its id."""
        result = self.agent(name, "propose", sectionId=section_id, newContent=text, **fields)
        return str(result["proposalId"])

    # -- looking ---------------------------------------------------------------------------------
    def a(self, name: str) -> Agent:
        found = self.doc.agent_named(name)
        assert found is not None, name
        return found

    def s(self, section_id: str) -> Section:
        found = self.doc.section(section_id, self.now)
        assert found is not None, section_id
        return found

    def status(self, proposal_id: str) -> str:
        return self.doc.proposals[proposal_id].status

    def types(self, since: int = 0) -> list[str]:
        return [e["eventType"] for e in self.log[since:]]

    def events(self, event_type: str) -> list[dict[str, Any]]:
        return [payload(e) for e in self.log if e["eventType"] == event_type]

    def replayed(self) -> Document:
        """The document folded again from the log: the fold must agree with the decisions."""
        doc = Document()
        for event in self.log:
            doc.apply(json.loads(json.dumps(event)))
        return doc

    def mark(self) -> int:
        return len(self.log)


def body(title: str, text: str, level: int = 2) -> str:
    """A section's whole new content: its heading line and a body."""
    return f"{'#' * level} {title}\n\n{text}\n\n"


@pytest.fixture
def sim() -> Iterator[Sim]:
    made = Sim()
    yield made
    # Whatever a test did, replaying its log gives the same document.
    again = made.replayed()
    assert again.markdown() == made.doc.markdown()
    assert again.sequence == made.doc.sequence
    assert {p.id: p.status for p in again.proposals.values()} == {
        p.id: p.status for p in made.doc.proposals.values()
    }
