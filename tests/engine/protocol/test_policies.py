"""The six approval policies and their numbers, on a simulated clock."""

from __future__ import annotations

import pytest

from engine.protocol.model import DEFAULT_WINDOW_S

from .conftest import Sim, body

BUDGET = "sec:plan/budget"
NEW = body("Budget", "Total: 2M.")
SCOPE = "sec:plan/scope"


def blocked(sim: Sim, proposal_id: str) -> str | None:
    return sim.doc.blocked(sim.doc.proposals[proposal_id])


def test_auto_merges_at_once() -> None:
    sim = Sim(policy="auto")
    sim.join("a", "b")
    p = sim.propose("a", BUDGET, NEW)
    assert sim.status(p) == "Merged"
    assert "Total: 2M." in sim.doc.markdown()


def test_single_one_collaborator_approval_merges() -> None:
    sim = Sim(policy="single")
    sim.join("a", "b", "c")
    p = sim.propose("a", BUDGET, NEW)
    assert sim.status(p) == "Pending"
    # single keeps the size of its reviewers, not the list (only a count of it decides)
    assert sim.doc.proposals[p].reviewers == 2
    sim.refused("a", "approve", "proposal.self_approval", proposalId=p)
    sim.agent("b", "approve", proposalId=p)
    assert sim.status(p) == "Merged"


def test_single_a_suggester_cannot_approve_and_a_rejection_is_final() -> None:
    sim = Sim(policy="single")
    sim.join("a", "b")
    sim.join("s", trust="Suggester")
    p = sim.propose("a", BUDGET, NEW)
    sim.refused("s", "approve", "auth.forbidden", proposalId=p)
    sim.agent("b", "reject", proposalId=p, reason="too much")
    assert sim.status(p) == "Rejected"
    assert sim.doc.proposals[p].reason == "too much"


def test_majority_counts_more_than_half_of_the_fixed_quorum() -> None:
    sim = Sim(policy="majority")
    sim.join("a", "b", "c", "d")
    p = sim.propose("a", BUDGET, NEW)
    assert len(sim.doc.proposals[p].quorum) == 3  # b, c, d: not the author
    sim.agent("b", "approve", proposalId=p)
    assert sim.status(p) == "Pending"  # 1 of 3
    sim.agent("c", "approve", proposalId=p)
    assert sim.status(p) == "Merged"  # 2 of 3 > 50 %


def test_majority_rejects_when_it_can_no_longer_be_reached() -> None:
    sim = Sim(policy="majority")
    sim.join("a", "b", "c", "d", "e")
    p = sim.propose("a", BUDGET, NEW)  # quorum 4: 3 approvals needed
    sim.agent("b", "reject", proposalId=p, reason="no")
    assert sim.status(p) == "Pending"
    sim.agent("c", "reject", proposalId=p, reason="no")
    assert sim.status(p) == "Rejected"  # 2 against of 4: at most 2 for, not > 50 %


def test_a_later_agent_does_not_change_the_quorum() -> None:
    sim = Sim(policy="majority")
    sim.join("a", "b", "c")
    p = sim.propose("a", BUDGET, NEW)  # quorum b, c
    sim.join("late1", "late2", "late3")
    sim.refused("late1", "approve", "auth.forbidden", proposalId=p)
    sim.agent("b", "approve", proposalId=p)
    assert sim.status(p) == "Pending"  # 1 of 2 is not > 50 %
    sim.agent("c", "approve", proposalId=p)
    assert sim.status(p) == "Merged"


def test_an_evicted_agent_does_not_shrink_the_quorum() -> None:
    sim = Sim(policy="unanimous")
    sim.join("a", "b", "c")
    p = sim.propose("a", BUDGET, NEW)  # quorum b, c
    sim.advance(200)
    sim.agent("a", "heartbeat")
    sim.agent("b", "heartbeat")
    sim.advance(100)
    sim.tick()
    assert "c" not in sim.doc.active and sim.doc.agents[sim.doc.proposals[p].quorum[1]].gone
    sim.agent("b", "approve", proposalId=p)
    assert sim.status(p) == "Pending"  # c's consent is still needed: only a human can merge
    sim.human("approve", proposalId=p, why="c left")
    assert sim.status(p) == "Merged"


def test_unanimous_needs_every_member_and_one_rejection_ends_it() -> None:
    sim = Sim(policy="unanimous")
    sim.join("a", "b", "c")
    p = sim.propose("a", BUDGET, NEW)
    sim.agent("b", "approve", proposalId=p)
    assert sim.status(p) == "Pending"
    sim.agent("c", "approve", proposalId=p)
    assert sim.status(p) == "Merged"
    q = sim.propose("a", "sec:plan/risks", body("Risks", "None."))
    sim.agent("b", "reject", proposalId=q, reason="there are risks")
    assert sim.status(q) == "Rejected"


def test_human_only_agents_cannot_vote_a_human_merges() -> None:
    sim = Sim(policy="human-only")
    sim.join("a", "b")
    p = sim.propose("a", BUDGET, NEW)
    sim.refused("b", "approve", "auth.forbidden", proposalId=p)
    sim.refused("b", "reject", "auth.forbidden", proposalId=p, reason="no")
    sim.advance(3600)
    sim.tick()
    assert sim.status(p) == "Pending"
    sim.human("approve", proposalId=p, why="reviewed")
    assert sim.status(p) == "Merged"


@pytest.mark.parametrize("policy", ["single", "majority", "unanimous", "objection-based"])
def test_salience_zero_is_out_of_votes_and_windows(policy: str) -> None:
    sim = Sim(policy=policy)
    sim.join("a", "b", "c")
    sim.agent("c", "salience", sectionId=BUDGET, score=0)
    p = sim.propose("a", BUDGET, NEW)
    assert sim.a("c").id not in sim.doc.proposals[p].quorum
    sim.refused("c", "approve", "auth.forbidden", proposalId=p)
    sim.refused("c", "object", "auth.forbidden", proposalId=p, reason="no")
    if policy == "objection-based":
        sim.advance(DEFAULT_WINDOW_S)
        sim.tick()
    else:
        sim.agent("b", "approve", proposalId=p)
    assert sim.status(p) == "Merged"  # b alone decided


@pytest.mark.parametrize("policy", ["majority", "unanimous"])
def test_salience_one_to_three_auto_consents(policy: str) -> None:
    sim = Sim(policy=policy)
    sim.join("a", "b", "c", "d")
    sim.agent("b", "salience", sectionId=BUDGET, score=1)
    sim.agent("c", "salience", sectionId=BUDGET, score=3)
    p = sim.propose("a", BUDGET, NEW)
    if policy == "majority":
        assert sim.status(p) == "Merged"  # b and c consent: 2 of 3
        return
    assert sim.status(p) == "Pending"  # d has not approved
    sim.agent("d", "approve", proposalId=p)
    assert sim.status(p) == "Merged"


def test_a_low_salience_voter_may_still_reject() -> None:
    sim = Sim(policy="unanimous")
    sim.join("a", "b", "c")
    sim.agent("b", "salience", sectionId=BUDGET, score=2)
    p = sim.propose("a", BUDGET, NEW)
    sim.agent("b", "reject", proposalId=p, reason="actually no")
    assert sim.status(p) == "Rejected"


def test_objection_window_default_sixty_seconds() -> None:
    sim = Sim(policy="objection-based")
    sim.join("a", "b")
    p = sim.propose("a", BUDGET, NEW)
    created = sim.now
    assert sim.doc.proposals[p].merge_at_ms == created + 60_000
    sim.at(created + 59_999)
    assert sim.tick() == []
    assert sim.status(p) == "Pending"
    sim.at(created + 60_000)
    fired = sim.tick()
    assert [e["eventType"] for e in fired] == ["pact.proposal.auto-merged"]
    assert sim.status(p) == "Merged"
    assert sim.tick() == []


def test_objection_window_per_proposal_and_per_document() -> None:
    sim = Sim(policy="objection-based", window_s=30)
    sim.join("a", "b")
    p = sim.propose("a", BUDGET, NEW, windowSeconds=5)
    q = sim.propose("a", "sec:plan/risks", body("Risks", "Few."))
    sim.advance(4.999)
    sim.tick()
    assert sim.status(p) == "Pending"
    sim.advance(0.001)
    sim.tick()
    assert sim.status(p) == "Merged"
    assert sim.status(q) == "Pending"
    sim.at(sim.doc.proposals[q].created_ms + 30_000)
    sim.tick()
    assert sim.status(q) == "Merged"


def test_objection_window_merges_at_once_when_nobody_has_salience() -> None:
    sim = Sim(policy="objection-based")
    sim.join("a", "b", "c")
    sim.agent("b", "salience", sectionId=BUDGET, score=0)
    sim.agent("c", "salience", sectionId=BUDGET, score=0)
    p = sim.propose("a", BUDGET, NEW)
    assert sim.status(p) == "Merged"
    assert "pact.proposal.auto-merge-scheduled" not in sim.types()


def test_an_objection_moves_the_proposal_to_objected_with_its_reason() -> None:
    sim = Sim(policy="objection-based")
    sim.join("a", "b")
    p = sim.propose("a", BUDGET, NEW)
    sim.advance(30)
    sim.agent("b", "object", proposalId=p, reason="exceeds the cap")
    assert sim.status(p) == "Objected"
    assert sim.doc.proposals[p].reason == "exceeds the cap"
    sim.advance(60)
    assert sim.tick() == []
    assert sim.status(p) == "Objected"
    assert "Total: 1M." in sim.doc.markdown()
    # the author revises with a new proposal
    q = sim.propose("a", BUDGET, body("Budget", "Total: 1.5M."))
    assert sim.status(q) == "Pending"


def test_salience_ten_must_act_before_auto_merge() -> None:
    sim = Sim(policy="objection-based")
    sim.join("a", "b", "owner")
    sim.agent("owner", "salience", sectionId=BUDGET, score=10)
    p = sim.propose("a", BUDGET, NEW)
    assert sim.doc.proposals[p].must_act == (sim.a("owner").id,)
    sim.advance(60)
    sim.tick()
    assert sim.status(p) == "Pending"
    reason = blocked(sim, p)
    assert reason is not None and "owner" in reason
    for _ in range(10):  # however long it takes
        sim.advance(200)
        for name in ("a", "b", "owner"):
            sim.agent(name, "heartbeat")
    assert sim.status(p) == "Pending"
    sim.agent("owner", "approve", proposalId=p)
    assert blocked(sim, p) is None
    assert sim.status(p) == "Merged"


def test_salience_ten_approving_inside_the_window_waits_for_its_end() -> None:
    sim = Sim(policy="objection-based")
    sim.join("a", "owner")
    sim.agent("owner", "salience", sectionId=BUDGET, score=10)
    p = sim.propose("a", BUDGET, NEW)
    sim.advance(10)
    sim.agent("owner", "approve", proposalId=p)
    assert sim.status(p) == "Pending"
    sim.advance(50)
    sim.tick()
    assert sim.status(p) == "Merged"


def test_salience_ten_objecting_ends_it() -> None:
    sim = Sim(policy="objection-based")
    sim.join("a", "owner")
    sim.agent("owner", "salience", sectionId=BUDGET, score=10)
    p = sim.propose("a", BUDGET, NEW)
    sim.advance(61)
    sim.agent("owner", "object", proposalId=p, reason="no")
    assert sim.status(p) == "Objected"


@pytest.mark.parametrize(
    "policy", ["auto", "single", "majority", "unanimous", "human-only", "objection-based"]
)
def test_a_human_approval_overrides_any_policy_and_is_recorded(policy: str) -> None:
    sim = Sim(policy=policy)
    sim.join("a", "b", "c")
    sim.agent("b", "salience", sectionId=BUDGET, score=10)
    p = sim.propose("a", BUDGET, NEW)
    if policy == "auto":
        assert sim.status(p) == "Merged"
        return
    sim.human("approve", proposalId=p, why="urgent")
    assert sim.status(p) == "Merged"
    assert sim.doc.proposals[p].override is not None
    whats = [(what, o.by, o.why) for what, o in sim.doc.overrides]
    assert (f"approved {p}", "carol", "urgent") in whats


@pytest.mark.parametrize("policy", ["single", "majority", "unanimous", "objection-based"])
def test_a_human_rejection_overrides_any_policy_and_is_recorded(policy: str) -> None:
    sim = Sim(policy=policy)
    sim.join("a", "b", "c")
    p = sim.propose("a", BUDGET, NEW)
    sim.agent("b", "approve", proposalId=p) if policy == "unanimous" else None
    sim.human("reject", proposalId=p, reason="off-strategy")
    assert sim.status(p) == "Rejected"
    whats = [(what, o.by, o.why) for what, o in sim.doc.overrides]
    assert (f"rejected {p}", "carol", "off-strategy") in whats
    sim.advance(120)
    assert sim.tick() == []
    assert sim.status(p) == "Rejected"


def test_a_human_rejection_must_say_why() -> None:
    """A human's rejection without a reason recorded an override with an empty why; every
    human override records who and why, so the reason is required (an agent's is not)."""
    sim = Sim(policy="single")
    sim.join("a", "b")
    p = sim.propose("a", BUDGET, NEW)
    human = sim.human_actor()
    for missing in ({}, {"reason": ""}, {"reason": "  \n"}):
        error = sim.refused(human, "reject", "request.invalid", proposalId=p, **missing)
        assert error.metadata["field"] == "reason"
        assert "reason" in error.description
    assert sim.status(p) == "Pending"
    assert sim.doc.overrides == []
    sim.human("reject", proposalId=p, reason="off-strategy")
    assert [(what, o.why) for what, o in sim.doc.overrides] == [(f"rejected {p}", "off-strategy")]
    q = sim.propose("a", SCOPE, body("Scope", "Less."))
    sim.agent("b", "reject", proposalId=q)  # an agent's vote needs no reason
    assert sim.status(q) == "Rejected"


def test_a_human_approval_and_a_change_of_trust_must_say_why() -> None:
    """A human's approval merges at once and a change of trust overrides the agents' standing:
    both recorded an override with an empty or placeholder why; now the why is required."""
    sim = Sim(policy="single")
    sim.join("a", "b")
    p = sim.propose("a", BUDGET, NEW)
    human = sim.human_actor()
    for missing in ({}, {"why": ""}, {"why": " \t"}):
        error = sim.refused(human, "approve", "request.invalid", proposalId=p, **missing)
        assert error.metadata["field"] == "why"
        error = sim.refused(
            human, "trust", "request.invalid", agent="b", level="Suggester", **missing
        )
        assert "trust" in error.description
    assert sim.status(p) == "Pending"
    assert sim.doc.overrides == []
    sim.human("approve", proposalId=p, why="read it twice")
    sim.human("trust", agent="b", level="Suggester", why="too eager")
    whats = [o.why for _, o in sim.doc.overrides]
    assert "read it twice" in whats
    assert sim.a("b").trust == "Suggester"


def test_votes_on_a_closed_proposal_are_refused() -> None:
    sim = Sim(policy="single")
    sim.join("a", "b", "c")
    p = sim.propose("a", BUDGET, NEW)
    sim.agent("b", "approve", proposalId=p)
    sim.refused("c", "approve", "proposal.invalid_status", proposalId=p)
    sim.refused("c", "object", "proposal.invalid_status", proposalId=p, reason="late")
    sim.refused("c", "approve", "proposal.not_found", proposalId="nope")
