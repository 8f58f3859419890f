"""Escalation, questions to a human, resolutions, briefings, reverts, comments, completion and
idempotent retries."""

from __future__ import annotations

import pytest

from engine.protocol import views
from engine.protocol.commands import Actor

from .conftest import Sim, body

BUDGET = "sec:plan/budget"
SCOPE = "sec:plan/scope"


def test_escalate_pauses_auto_merge_until_a_human_resolves() -> None:
    sim = Sim(policy="objection-based")
    sim.join("a", "b")
    p = sim.propose("a", BUDGET, body("Budget", "Total: 2M."))
    sim.agent("b", "escalate", sectionId=BUDGET, reason="the cap is disputed")
    assert sim.s(BUDGET).escalated is not None
    sim.advance(120)
    sim.agent("a", "heartbeat")
    sim.tick()
    assert sim.status(p) == "Pending"
    assert "Total: 1M." in sim.doc.markdown()
    sim.human("resolve", sectionId=BUDGET, decision="go ahead", justification="checked")
    assert sim.s(BUDGET).escalated is None
    assert sim.status(p) == "Merged"


def test_escalate_holds_an_approved_proposal_until_resolved() -> None:
    sim = Sim(policy="single")
    sim.join("a", "b", "c")
    sim.agent("c", "escalate", sectionId=BUDGET, reason="wait")
    p = sim.propose("a", BUDGET, body("Budget", "Total: 2M."))
    sim.agent("b", "approve", proposalId=p)
    assert sim.status(p) == "Approved"
    assert views.section_rows(sim.doc, None, sim.now)[2]["escalated"] is True
    sim.human("resolve", sectionId=BUDGET, decision="fine", justification="ok")
    assert sim.status(p) == "Merged"


def test_ask_human_and_respond() -> None:
    sim = Sim()
    sim.join("a")
    query = sim.agent("a", "ask-human", question="2M?", sectionId=BUDGET, context="cap")["queryId"]
    sim.human("respond", queryId=query, response="yes")
    answered = sim.doc.queries[query]
    assert (answered.status, answered.response, answered.responder) == ("answered", "yes", "carol")
    sim.refused(sim.human_actor(), "respond", "query.closed", queryId=query, response="again")
    sim.advance(61)
    assert sim.tick() == []


def test_resolve_with_override_rejects_the_others_and_is_recorded() -> None:
    sim = Sim(policy="single", strategy="human-escalate")
    sim.join("a", "b", "c")
    p = sim.propose("a", BUDGET, body("Budget", "Total: 2M."))
    q = sim.propose("b", BUDGET, body("Budget", "Total: 3M."))
    sim.human(
        "resolve",
        sectionId=BUDGET,
        decision="neither: 1.5M",
        justification="board decision",
        override=True,
        content=body("Budget", "Total: 1.5M."),
    )
    assert (sim.status(p), sim.status(q)) == ("Rejected", "Rejected")
    assert "Total: 1.5M." in sim.doc.markdown()
    assert (f"resolved {BUDGET}", "carol", "board decision") in [
        (w, o.by, o.why) for w, o in sim.doc.overrides
    ]
    resolution = next(iter(sim.doc.resolutions.values()))
    assert resolution.override and resolution.justification == "board decision"


def test_briefing_discloses_constraints_by_level() -> None:
    sim = Sim()
    sim.join("author", "reader")
    sim.agent(
        "author",
        "constrain",
        sectionId=BUDGET,
        boundary="must not exceed $2M",
        category="finance",
        reasoning="the grant caps it",
    )
    reader = sim.a("reader")
    normal = views.constraints(sim.doc, reader)
    assert normal[0]["boundary"] == "must not exceed $2M"
    assert "category" not in normal[0] and "reasoning" not in normal[0]
    assert "author" not in normal[0]
    sim.human("disclosure", agent="reader", level=2)
    assert views.constraints(sim.doc, reader)[0]["category"] == "finance"
    assert "reasoning" not in views.constraints(sim.doc, reader)[0]
    brief = views.briefing(sim.doc, reader, sim.s(BUDGET))["constraints"][0]
    assert brief["reasoning"] == "the grant caps it" and "author" not in brief
    human = views.briefing(sim.doc, None, sim.s(BUDGET))["constraints"][0]
    assert (human["reasoning"], human["author"]) == ("the grant caps it", "author")
    # the events an agent polls never carry the reasoning
    polled = [views.redact(sim.doc, reader, e)["payloadJson"] for e in sim.log]
    assert not any("the grant caps it" in text for text in polled)


def test_revert_restores_the_previous_text() -> None:
    sim = Sim(policy="single")
    sim.join("a", "b")
    p = sim.propose(
        "a", SCOPE, "## Scope\n\nScope line ONE.\nScope line two.\nScope line three.\n\n"
    )
    sim.agent("b", "approve", proposalId=p)
    q = sim.propose("a", SCOPE, "## Scope\n\nScope line ONE.\nScope line two.\nScope line 3.\n\n")
    sim.agent("b", "approve", proposalId=q)
    revert = sim.agent("b", "revert", proposalId=p)["proposalId"]
    assert sim.doc.proposals[revert].reverts == p
    sim.agent("a", "approve", proposalId=revert)
    # p's change is undone, q's later one kept
    assert "Scope line one.\nScope line two.\nScope line 3." in sim.doc.markdown()
    sim.refused("b", "revert", "proposal.invalid_status", proposalId=p)


def test_revert_is_refused_when_later_changes_overlap() -> None:
    sim = Sim(policy="auto")
    sim.join("a")
    p = sim.propose(
        "a", SCOPE, "## Scope\n\nScope line ONE.\nScope line two.\nScope line three.\n\n"
    )
    sim.propose("a", SCOPE, "## Scope\n\nScope line 1.\nScope line two.\nScope line three.\n\n")
    sim.refused("a", "revert", "proposal.conflict", proposalId=p)
    sim.human("policy", policy="single", why="slow down")
    pending = sim.propose("a", "sec:plan/risks", body("Risks", "x"))
    sim.refused("a", "revert", "proposal.invalid_status", proposalId=pending)


def test_comments_are_added_and_resolved() -> None:
    sim = Sim()
    sim.join("a", "b")
    sim.join("s", trust="Suggester")
    p = sim.propose("a", BUDGET, body("Budget", "Total: 2M."))
    comment = sim.agent("s", "comment", sectionId=BUDGET, text="why?", proposalId=p)["commentId"]
    assert sim.doc.comments[comment].proposal == p
    sim.refused("s", "resolve-comment", "auth.forbidden", commentId=comment)
    sim.agent("b", "resolve-comment", commentId=comment)
    assert sim.doc.comments[comment].resolved_by == "b"
    sim.refused("b", "resolve-comment", "request.invalid", commentId=comment)
    sim.refused("b", "resolve-comment", "entity.not_found", commentId="nope")
    sim.refused(
        "b", "comment", "request.invalid", sectionId="sec:plan/risks", text="t", proposalId=p
    )


@pytest.mark.parametrize("status", ["aligned", "dissenting", "partial", "abstained"])
def test_done_records_each_status(status: str) -> None:
    sim = Sim()
    sim.join("a")
    sim.agent("a", "done", status=status, summary="over")
    assert sim.a("a").completion == (status, "over")


def test_done_refuses_another_status() -> None:
    sim = Sim()
    sim.join("a")
    sim.refused("a", "done", "request.invalid", status="finished")


def test_an_idempotent_retry_returns_the_first_answer_and_appends_nothing() -> None:
    sim = Sim()
    sim.join("a")
    fields = {"sectionId": BUDGET, "newContent": body("Budget", "2M"), "idempotencyKey": "k1"}
    first = sim.decide(Actor.agent("a"), "propose", **fields)
    assert not first.retried
    before = sim.doc.sequence
    again = sim.decide(Actor.agent("a"), "propose", **fields)
    assert again.retried and again.events == [] and again.answer() == first.answer()
    assert sim.doc.sequence == before
    assert len(sim.doc.proposals) == 1
    other = {**fields, "newContent": body("Budget", "3M")}
    sim.refused("a", "propose", "request.idempotency_mismatch", **other)


def test_idempotency_keys_are_per_actor_and_survive_a_replay() -> None:
    sim = Sim()
    sim.join("a", "b")
    fields = {"sectionId": "sec:plan/risks", "text": "hi", "idempotencyKey": "same"}
    sim.agent("a", "comment", **fields)
    sim.agent("b", "comment", **fields)  # another actor's key
    assert len(sim.doc.comments) == 2
    replayed = sim.replayed()
    assert replayed.idempotency == sim.doc.idempotency


def test_an_idempotent_join_retry() -> None:
    sim = Sim()
    first = sim.agent("a", "join", agentName="a", idempotencyKey="j")
    before = sim.doc.sequence
    again = sim.agent("a", "join", agentName="a", idempotencyKey="j")
    assert again == first and sim.doc.sequence == before
    joined = next(e for e in sim.log if e["eventType"] == "pact.agent.joined")
    assert joined["actorId"] == first["registrationId"]
    sim.refused(
        "a", "join", "request.idempotency_mismatch", agentName="a", role="r", idempotencyKey="j"
    )


def test_a_withdrawn_constraint_cannot_be_marked() -> None:
    """Marking a withdrawn constraint's compatibility recorded a judgement about nothing."""
    sim = Sim()
    sim.join("author")
    k = sim.agent("author", "constrain", sectionId=BUDGET, boundary="under $2M")["constraintId"]
    sim.human("mark-constraint", constraintId=k, compatibility="compatible")
    sim.agent("author", "withdraw-constraint", constraintId=k)
    error = sim.refused(
        sim.human_actor(),
        "mark-constraint",
        "proposal.invalid_status",
        constraintId=k,
        compatibility="conflicting",
    )
    assert k in error.description and "withdrawn" in error.description
    assert sim.doc.constraints[k].compatibility == "compatible"
