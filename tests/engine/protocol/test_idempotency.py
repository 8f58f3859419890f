"""Idempotent retries of every write: the same key and request answer what the first call
answered, and append nothing."""

from __future__ import annotations

import json
from typing import Any, get_args

from engine.protocol import commands as c
from engine.protocol import views
from engine.protocol.commands import Actor
from engine.protocol.decide import Decision
from engine.protocol.persist import dump_document, restore_document

from .conftest import Sim, body

BUDGET, SCOPE, RISKS = "sec:plan/budget", "sec:plan/scope", "sec:plan/risks"


def every_op() -> set[str]:
    """The op of every command the engine takes."""
    union = get_args(get_args(c.AnyCommand)[0])
    return {model.model_fields["op"].default for model in union}


class Retries:
    """Runs each command with its own idempotency key, retries it a second later, and keeps
    the first answers to retry them all again at the end."""

    def __init__(self, sim: Sim) -> None:
        self.sim = sim
        self.first: list[tuple[Actor, str, dict[str, Any], Decision]] = []

    def run(self, actor: Actor, op: str, **fields: Any) -> dict[str, Any]:
        fields["idempotencyKey"] = f"key-{len(self.first)}"
        first = self.sim.decide(actor, op, **fields)
        assert not first.retried and first.events, op
        self.first.append((actor, op, fields, first))
        self.sim.advance(1)
        self.check(actor, op, fields, first)
        return first.answer()

    def agent(self, name: str, op: str, **fields: Any) -> dict[str, Any]:
        return self.run(Actor.agent(name), op, **fields)

    def human(self, op: str, **fields: Any) -> dict[str, Any]:
        return self.run(self.sim.human_actor(), op, **fields)

    def check(self, actor: Actor, op: str, fields: dict[str, Any], first: Decision) -> None:
        sim = self.sim
        sim.tick()  # due work is appended whatever the command: compare after it
        before = dump_document(sim.doc)
        again = sim.decide(actor, op, **fields)
        assert again.retried and again.events == [], op
        expected = first.answer()
        if op == "invite":  # the token is shown once: the log keeps only its hash
            assert isinstance(first.answer()["token"], str)
            expected = {**first.answer(), "token": None}
        assert again.answer() == expected, op
        assert dump_document(sim.doc) == before, op


def test_a_retry_of_any_write_answers_what_the_first_call_answered() -> None:
    sim = Sim()
    r = Retries(sim)
    r.agent("a", "join", agentName="a", role="writer")
    r.agent("b", "join", agentName="b")
    r.agent("c", "join", agentName="c")
    r.agent("a", "heartbeat")
    r.agent("c", "done", status="aligned", summary="nothing more")
    r.agent("a", "intent", sectionId=BUDGET, goal="raise the cap")
    k = r.agent("a", "constrain", sectionId=BUDGET, boundary="at most 2M", reasoning="cash")
    r.human("mark-constraint", constraintId=k["constraintId"], compatibility="compatible")
    r.agent("b", "object", constraintId=k["constraintId"], reason="too low")
    r.agent("a", "withdraw-constraint", constraintId=k["constraintId"])
    r.agent("a", "salience", sectionId=SCOPE, score=7)
    merged = r.agent("a", "propose", sectionId=BUDGET, newContent=body("Budget", "2M"))
    r.agent("b", "approve", proposalId=merged["proposalId"])
    rejected = r.agent("b", "propose", sectionId=SCOPE, newContent=body("Scope", "Less."))
    r.agent("a", "reject", proposalId=rejected["proposalId"], reason="too little")
    objected = r.agent("a", "propose", sectionId=RISKS, newContent=body("Risks", "None."))
    r.agent("b", "object", proposalId=objected["proposalId"], reason="there are some")
    r.agent("a", "withdraw", proposalId=objected["proposalId"], reason="fair")
    reverting = r.agent("b", "revert", proposalId=merged["proposalId"])
    r.agent("a", "lock", sectionId=RISKS, ttlSeconds=20)
    r.agent("a", "unlock", sectionId=RISKS)
    r.human("lock-document", why="a pause")
    r.human("unlock-document")
    asked = r.agent("a", "ask-human", question="Which year?", sectionId=RISKS)
    r.human("respond", queryId=asked["queryId"], response="2025")
    asked = r.agent("a", "ask-human", question="And the month?")
    r.human("dismiss", queryId=asked["queryId"], why="not needed")
    r.agent("a", "escalate", sectionId=RISKS, reason="unclear")
    r.human("resolve", sectionId=RISKS, decision="keep it", justification="as agreed")
    note = r.agent("a", "comment", sectionId=RISKS, text="see the appendix")
    r.agent("b", "resolve-comment", commentId=note["commentId"])
    r.human("invite", trust="Suggester")
    spare = r.human("invite", trust="Observer")
    r.human("revoke-invite", invite=spare["tokenHash"], why="not needed")
    r.human("classify", sectionId=RISKS, level="Public", levels=["Public", "Internal"])
    r.human("clearance", agent="a", level="Internal")
    r.human("trust", agent="b", level="Collaborator", why="as before")
    r.human("disclosure", agent="a", level=2)
    r.human("force-merge", proposalId=reverting["proposalId"], why="the revert is right")
    r.human("edit", sectionId=SCOPE, content=body("Scope", "Edited."), why="a typo")
    later = r.agent("a", "propose", sectionId=SCOPE, newContent=body("Scope", "Later."))
    r.human("reject", proposalId=later["proposalId"], reason="not now")
    later = r.agent("a", "propose", sectionId=SCOPE, newContent=body("Scope", "Later."))
    r.human("approve", proposalId=later["proposalId"], why="fine by me")
    r.human("policy", policy="majority", why="more voices")
    r.human("remove", agent="c", why="finished")
    r.agent("b", "leave")
    assert {op for _, op, _, _ in r.first} == every_op()

    # The document has moved on since (proposals merged or rejected, locks gone, agents
    # left): a retry still answers what the first call did, and appends nothing.
    for actor, op, fields, first in r.first:
        r.check(actor, op, fields, first)

    # The answers are in the log, and in a checkpoint.
    again = Retries(sim)
    again.sim.doc = sim.replayed()
    for actor, op, fields, first in r.first:
        again.check(actor, op, fields, first)
    again.sim.doc = restore_document(dump_document(sim.doc))
    for actor, op, fields, first in r.first:
        again.check(actor, op, fields, first)


def test_the_kept_answer_is_shown_to_no_agent() -> None:
    """A proposal's answer lists the section's constraints with their categories (disclosure
    2): kept in the log for retries, it must not reach agents that poll the events."""
    sim = Sim()
    sim.join("a", "b")
    sim.agent("a", "constrain", sectionId=BUDGET, boundary="at most 2M", category="cost")
    fields = {"sectionId": BUDGET, "newContent": body("Budget", "2M"), "idempotencyKey": "p"}
    first = sim.decide(Actor.agent("a"), "propose", **fields)
    assert first.answer()["activeConstraints"] == [{"boundary": "at most 2M", "category": "cost"}]
    [created] = [e for e in first.events if e["eventType"] == "pact.proposal.created"]
    assert json.loads(created["payloadJson"])["answer"] == first.answer()
    for reader in (sim.a("a"), sim.a("b")):
        shown = json.loads(views.redact(sim.doc, reader, created)["payloadJson"])
        assert "answer" not in shown and shown["proposalId"] == first.answer()["proposalId"]
    assert json.loads(views.redact(sim.doc, None, created)["payloadJson"])["answer"]
