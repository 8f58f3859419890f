"""Conflicts, detected at create, and each strategy that settles them."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Sim

SCOPE = "sec:plan/scope"
ORIGINAL = "## Scope\n\nScope line one.\nScope line two.\nScope line three.\n\n"
FIRST = ORIGINAL.replace("line one", "line ONE")
LAST = ORIGINAL.replace("line three", "line THREE")
MIDDLE = ORIGINAL.replace("line one", "line 1")  # overlaps FIRST


def two_sides(sim: Sim, a: str = FIRST, b: str = LAST) -> tuple[str, str]:
    sim.join("a", "b", "c", "d")
    p = sim.propose("a", SCOPE, a)
    q = sim.propose("b", SCOPE, b)
    return p, q


def group_of(sim: Sim, proposal_id: str):  # type: ignore[no-untyped-def]
    conflict = sim.doc.proposals[proposal_id].conflict
    assert conflict is not None
    return sim.doc.conflicts[conflict]


def test_first_wins_rejects_the_later_one() -> None:
    sim = Sim(strategy="first-wins")
    p, q = two_sides(sim)
    assert (sim.status(p), sim.status(q)) == ("Pending", "Rejected")
    assert p in (sim.doc.proposals[q].reason or "")
    group = group_of(sim, q)
    assert (group.resolved, group.winner) == ("first-wins", p)
    sim.agent("c", "approve", proposalId=p)
    assert sim.status(p) == "Merged"


def test_a_stale_base_version_is_a_conflict_at_create() -> None:
    sim = Sim(strategy="first-wins")
    sim.join("a", "b")
    sim.human("edit", sectionId=SCOPE, content=FIRST, why="typo")
    assert sim.s(SCOPE).version == 2
    stale = sim.propose("a", SCOPE, LAST, baseVersion=1)
    assert sim.status(stale) == "Rejected"
    assert "version 1" in (sim.doc.proposals[stale].reason or "")
    fresh = sim.propose("a", SCOPE, LAST, baseVersion=2)
    assert sim.status(fresh) == "Pending"
    sim.refused("a", "propose", "request.invalid", sectionId=SCOPE, newContent=LAST, baseVersion=3)


def test_a_stale_base_under_vote_waits_for_votes() -> None:
    sim = Sim(strategy="vote")
    sim.join("a", "b")
    sim.human("edit", sectionId=SCOPE, content=FIRST, why="typo")
    stale = sim.propose("a", SCOPE, LAST, baseVersion=1)
    assert sim.status(stale) == "Conflict"


def test_vote_most_approvals_at_the_window_end_wins() -> None:
    sim = Sim(strategy="vote", window_s=60)
    p, q = two_sides(sim)
    assert (sim.status(p), sim.status(q)) == ("Conflict", "Conflict")
    opened = group_of(sim, p).opened_ms
    sim.agent("c", "approve", proposalId=q)
    sim.at(opened + 59_999)
    sim.tick()
    assert group_of(sim, p).resolved is None
    sim.at(opened + 60_000)
    sim.tick()
    group = group_of(sim, p)
    assert (group.resolved, group.winner) == ("vote", q)
    assert sim.status(p) == "Rejected"
    assert sim.status(q) == "Merged"  # c's approval is the single policy's one
    assert "Scope line THREE." in sim.doc.markdown()


def test_vote_a_tie_goes_to_the_earliest() -> None:
    sim = Sim(strategy="vote", window_s=60)
    p, q = two_sides(sim)
    sim.agent("c", "approve", proposalId=q)
    sim.agent("d", "approve", proposalId=p)
    sim.advance(60)
    sim.tick()
    assert group_of(sim, p).winner == p
    assert sim.status(q) == "Rejected"


def test_vote_every_eligible_voter_approving_one_side_resolves_at_once() -> None:
    sim = Sim(strategy="vote", window_s=600)
    p, q = two_sides(sim)
    sim.agent("c", "approve", proposalId=q)
    assert group_of(sim, q).resolved is None
    sim.agent("d", "approve", proposalId=q)  # c and d: every eligible voter but the authors
    assert (group_of(sim, q).resolved, group_of(sim, q).winner) == ("vote", q)
    assert sim.status(q) == "Merged"
    assert sim.status(p) == "Rejected"


def test_human_escalate_holds_both_and_a_human_resolves_with_a_proposal() -> None:
    sim = Sim(strategy="human-escalate")
    p, q = two_sides(sim)
    assert (sim.status(p), sim.status(q)) == ("Conflict", "Conflict")
    assert len(sim.events("pact.escalation.human")) == 1
    assert group_of(sim, p).escalated_ms is not None
    sim.advance(3600)
    sim.tick()
    assert (sim.status(p), sim.status(q)) == ("Conflict", "Conflict")
    sim.human(
        "resolve", sectionId=SCOPE, decision="take b's", justification="clearer", proposalId=q
    )
    assert (sim.status(p), sim.status(q)) == ("Rejected", "Merged")
    assert (group_of(sim, q).resolved, group_of(sim, q).winner) == ("human", q)
    assert "Scope line THREE." in sim.doc.markdown()


def test_human_escalate_a_human_resolves_by_force_merge() -> None:
    sim = Sim(strategy="human-escalate")
    p, q = two_sides(sim)
    sim.human("force-merge", proposalId=p, why="a's is right")
    assert (sim.status(p), sim.status(q)) == ("Merged", "Rejected")
    assert any(o.why == "a's is right" for _, o in sim.doc.overrides)


def test_merge_both_clean_becomes_a_system_proposal_superseding_both() -> None:
    sim = Sim(strategy="merge-both")
    p, q = two_sides(sim)
    assert (sim.status(p), sim.status(q)) == ("Rejected", "Rejected")
    group = group_of(sim, p)
    assert (group.resolved, group.overlaps) == ("merged", 0)
    merged = sim.doc.proposals[group.winner or ""]
    assert merged.author == "system"
    assert set(merged.supersedes) == {p, q}
    assert "Scope line ONE." in merged.content and "Scope line THREE." in merged.content
    sim.agent("c", "approve", proposalId=merged.id)
    assert merged.status == "Merged"
    assert "Scope line ONE.\nScope line two.\nScope line THREE." in sim.doc.markdown()


def test_merge_both_overlapping_is_escalated_with_markers() -> None:
    sim = Sim(strategy="merge-both")
    p, q = two_sides(sim, FIRST, MIDDLE)
    group = group_of(sim, p)
    assert group.overlaps > 0
    assert group.resolved is None
    assert group.escalated_ms is not None
    assert group.merged is not None and "<<<<<<<" in group.merged and ">>>>>>>" in group.merged
    assert "line ONE" in group.merged and "line 1" in group.merged
    assert (sim.status(p), sim.status(q)) == ("Conflict", "Conflict")
    sim.human("resolve", sectionId=SCOPE, decision="a", justification="j", proposalId=p)
    assert (sim.status(p), sim.status(q)) == ("Merged", "Rejected")


def test_an_unresolved_conflict_escalates_after_600_s_exactly_once() -> None:
    sim = Sim(strategy="vote", window_s=3600)  # the vote ends after the escalation
    p, _ = two_sides(sim)
    opened = group_of(sim, p).opened_ms

    def escalations() -> int:
        return len(sim.events("pact.escalation.human"))

    def keep_alive() -> None:
        for name in ("a", "b", "c", "d"):
            sim.agent(name, "heartbeat")

    sim.at(opened + 250_000)
    keep_alive()
    sim.at(opened + 500_000)
    keep_alive()
    sim.at(opened + 599_999)
    sim.tick()
    assert escalations() == 0
    keep_alive()
    sim.at(opened + 600_000)
    sim.tick()
    assert escalations() == 1
    assert group_of(sim, p).escalated_ms == opened + 600_000
    sim.at(opened + 800_000)
    keep_alive()
    sim.tick()
    assert escalations() == 1


def test_a_conflict_escalated_at_once_is_not_escalated_again() -> None:
    sim = Sim(strategy="human-escalate")
    two_sides(sim)
    sim.advance(601)
    sim.tick()
    assert len(sim.events("pact.escalation.human")) == 1


def test_approvals_go_stale_when_a_human_edits_the_section() -> None:
    sim = Sim(policy="majority")
    sim.join("a", "b", "c", "d")
    p = sim.propose("a", SCOPE, FIRST)
    sim.agent("b", "approve", proposalId=p)
    assert len(sim.doc.proposals[p].approvals) == 1
    sim.human("edit", sectionId=SCOPE, content=LAST, why="fix the last line")
    proposal = sim.doc.proposals[p]
    assert proposal.approvals == {}
    assert (proposal.dismissed, proposal.stale) == (1, True)
    sim.agent("b", "approve", proposalId=p)  # b may approve again, afresh
    sim.agent("c", "approve", proposalId=p)
    assert proposal.status == "Merged"
    # the edit is kept: a three-way merge against the proposal's base
    assert "Scope line ONE.\nScope line two.\nScope line THREE." in sim.doc.markdown()


def test_a_stale_proposal_whose_change_overlaps_is_escalated_when_it_would_merge() -> None:
    sim = Sim(policy="single")
    sim.join("a", "b")
    p = sim.propose("a", SCOPE, FIRST)
    sim.human("edit", sectionId=SCOPE, content=MIDDLE, why="w")
    sim.agent("b", "approve", proposalId=p)
    assert sim.status(p) == "Conflict"
    assert "Scope line 1." in sim.doc.markdown()
    assert len(sim.events("pact.escalation.human")) == 1


@pytest.mark.parametrize("strategy", ["vote", "human-escalate"])
@pytest.mark.parametrize("how", ["approve", "force-merge"])
@pytest.mark.parametrize("policy", ["single", "majority", "objection-based"])
def test_a_human_choosing_a_side_merges_it_once(strategy: str, how: str, policy: str) -> None:
    """Under single, a human's approval of a conflict side merged it twice (the resolution
    settled the winner, which the human's approval had carried, and the approval merged it
    again): two merged events, the section's version up by two. A side agents had approved,
    force-merged, did the same."""
    sim = Sim(strategy=strategy, policy=policy)
    p, q = two_sides(sim, FIRST, MIDDLE)
    if how == "force-merge" and strategy == "vote":
        sim.agent("c", "approve", proposalId=q)  # a vote, not yet every voter's
    assert sim.status(q) == "Conflict"
    m = sim.mark()
    sim.human(how, proposalId=q, why="this one")
    assert sim.types(m).count("pact.proposal.merged") == 1
    assert (sim.status(p), sim.status(q)) == ("Rejected", "Merged")
    assert sim.s(SCOPE).version == 2
    assert sim.doc.markdown().count("Scope line 1.") == 1


def fired_by_the_strategy(sim: Sim, since: int, kind: str) -> list[dict[str, Any]]:
    """The events after ``since``: the first is the command's own (by ``kind``); every one
    after it was fired by the strategy, so it is the system's, correlated with the first."""
    own, *fired = sim.log[since:]
    assert own["actorKind"] == kind, own
    assert fired
    # Correlated with the command's event (or what it correlates with), or with an event
    # fired before it in the same chain (a merged proposal's own settling).
    chain = {own["id"], own["correlationId"]} - {None}
    for event in fired:
        assert (event["actorKind"], event["actorId"]) == ("System", None), event
        assert event["correlationId"] in chain, event
        chain.add(event["id"])
    return fired


@pytest.mark.parametrize("human", [False, True])
@pytest.mark.parametrize(
    ("strategy", "second", "expected"),
    [
        ("first-wins", LAST, ["conflict", "rejected", "conflict-resolved"]),
        ("merge-both", LAST, ["conflict", "rejected", "rejected", "created", "conflict-resolved"]),
        ("merge-both", MIDDLE, ["conflict", "escalation.human"]),
        ("human-escalate", LAST, ["conflict", "escalation.human"]),
        ("vote", LAST, ["conflict"]),
    ],
    ids=["first-wins", "merge-both", "merge-both-overlapping", "human-escalate", "vote"],
)
def test_what_a_strategy_does_is_the_systems(
    strategy: str, second: str, expected: list[str], human: bool
) -> None:
    """merge-both made its merged proposal as the system but rejected the sides and resolved
    the conflict as the agent whose proposal set it off; first-wins rejected the proposer's own
    proposal in its name. When a human's proposal set a strategy off, its rejections were even
    recorded as the human's overrides, with no why."""
    sim = Sim(strategy=strategy)
    sim.join("a", "b", "c")
    sim.propose("a", SCOPE, FIRST)
    m = sim.mark()
    if human:
        sim.human("propose", sectionId=SCOPE, newContent=second)
    else:
        sim.propose("b", SCOPE, second)
    fired = fired_by_the_strategy(sim, m, "Individual" if human else "AiAgent")
    named = [e["eventType"].removeprefix("pact.").removeprefix("proposal.") for e in fired]
    assert named == expected
    assert sim.doc.overrides == []


def test_a_vote_an_approval_decides_is_the_systems() -> None:
    sim = Sim(strategy="vote")
    p, q = two_sides(sim)
    sim.agent("c", "approve", proposalId=q)
    m = sim.mark()
    sim.agent("d", "approve", proposalId=q)  # every eligible voter: q wins at once
    fired = fired_by_the_strategy(sim, m, "AiAgent")
    assert [e["eventType"] for e in fired] == [
        "pact.proposal.conflict-resolved",
        "pact.proposal.rejected",
        "pact.proposal.merged",
    ]
    assert (sim.status(p), sim.status(q)) == ("Rejected", "Merged")
    # The same vote counted at the window's end is the system's too (the tick's).
    sim = Sim(strategy="vote")
    p, q = two_sides(sim)
    sim.advance(61)
    assert {e["actorKind"] for e in sim.tick()} == {"System"}


def test_a_humans_resolution_stays_the_humans() -> None:
    sim = Sim(strategy="human-escalate")
    p, q = two_sides(sim)
    m = sim.mark()
    sim.human("approve", proposalId=q, why="the better one")
    assert {e["actorKind"] for e in sim.log[m:]} == {"Individual"}
    assert (sim.status(p), sim.status(q)) == ("Rejected", "Merged")
    whats = [(what.split()[0], o.why) for what, o in sim.doc.overrides]
    assert ("resolved", "the better one") in whats


def test_a_keyed_command_whose_first_event_is_the_systems_is_still_retried() -> None:
    """A force-merge of a stale proposal that overlaps the section's new text goes to the
    custodian as a conflict: its first event is the system's, and the key is the human's."""
    sim = Sim()
    sim.join("a")
    p = sim.propose("a", SCOPE, FIRST)
    sim.human("edit", sectionId=SCOPE, content=MIDDLE, why="mine")
    fields = {"proposalId": p, "why": "now", "idempotencyKey": "k"}
    m = sim.mark()
    first = sim.decide(sim.human_actor(), "force-merge", **fields)
    assert [e["eventType"] for e in sim.log[m:]] == [
        "pact.proposal.conflict",
        "pact.escalation.human",
    ]
    assert {(e["actorKind"], e["correlationId"]) for e in sim.log[m:]} == {
        ("System", sim.doc.proposals[p].correlation)
    }
    assert sim.status(p) == "Conflict"
    again = sim.decide(sim.human_actor(), "force-merge", **fields)
    assert again.retried and again.events == [] and again.answer() == first.answer()
    assert sim.replayed().idempotency == sim.doc.idempotency
