"""The guard on destructive merges: a proposal that removes more of its section's lines than
the document's ``removalGuard`` allows (default 50 %) waits for a human instead of merging on
silence or on the agents' votes; a human's approval or force-merge still merges it."""

from __future__ import annotations

from engine.protocol.merge import removed_lines
from engine.protocol.model import DEFAULT_REMOVAL_GUARD
from engine.protocol.persist import dump_document, restore_document

from .conftest import Sim, body

SCOPE = "sec:plan/scope"  # "## Scope" and three lines: four lines that are not blank
KEEPS_ONE = body("Scope", "Scope line one.")  # removes 2 of 4: half, not more
KEEPS_NONE = "## Scope\n\n"  # removes 3 of 4


def test_removed_lines_counts_what_is_gone_not_what_changed() -> None:
    base = "## A\n\none\n\ntwo\n\nthree\n"
    assert removed_lines(base, base) == (0, 4)
    assert removed_lines(base, "## A\n\nONE\n\nTWO\n\nTHREE\n") == (0, 4)  # changed, not removed
    assert removed_lines(base, "## A\n\none\n") == (2, 4)
    assert removed_lines(base, "## A\n") == (3, 4)
    assert removed_lines(base, "## A\n\n\n\n\n") == (3, 4)  # blank lines are no content
    assert removed_lines("", "## A\n") == (0, 0)


def test_a_proposal_removing_most_of_its_section_waits_for_a_human_past_its_window() -> None:
    sim = Sim(policy="objection-based")
    sim.join("a", "b")
    p = sim.propose("a", SCOPE, KEEPS_NONE)
    assert sim.doc.proposals[p].removes_most == (3, 4, DEFAULT_REMOVAL_GUARD)
    sim.advance(3600)
    sim.tick()
    assert sim.status(p) == "Pending"  # silence does not merge it
    assert "Scope line one." in sim.doc.markdown()
    sim.human("approve", proposalId=p, why="the section is obsolete")
    assert sim.status(p) == "Merged"
    assert "Scope line one." not in sim.doc.markdown()
    assert sim.replayed().proposals[p].removes_most == (3, 4, DEFAULT_REMOVAL_GUARD)


def test_removing_half_merges_on_silence_as_before() -> None:
    sim = Sim(policy="objection-based")
    sim.join("a", "b")
    p = sim.propose("a", SCOPE, KEEPS_ONE)
    assert sim.doc.proposals[p].removes_most is None
    sim.advance(61)
    sim.tick()
    assert sim.status(p) == "Merged"


def test_agents_votes_do_not_merge_it_and_auto_does_not_either() -> None:
    sim = Sim(policy="single")
    sim.join("a", "b")
    p = sim.propose("a", SCOPE, KEEPS_NONE)
    sim.agent("b", "approve", proposalId=p)
    assert sim.status(p) == "Pending"
    sim.human("force-merge", proposalId=p, why="agreed with the team")
    assert sim.status(p) == "Merged"
    auto = Sim(policy="auto")
    auto.join("a")
    q = auto.propose("a", SCOPE, KEEPS_NONE)
    assert auto.status(q) == "Pending"


def test_an_agents_rejection_still_rejects_it() -> None:
    sim = Sim(policy="single")
    sim.join("a", "b")
    p = sim.propose("a", SCOPE, KEEPS_NONE)
    sim.agent("b", "reject", proposalId=p, reason="keep it")
    assert sim.status(p) == "Rejected"


def test_the_guard_is_a_document_setting_changed_like_the_policy() -> None:
    sim = Sim(policy="objection-based")
    sim.join("a", "b")
    result = sim.human("policy", removalGuard=80, why="only near-total removals wait")
    assert result["removalGuard"] == 80 and result["changed"] is True
    assert sim.doc.removal_guard == 80
    p = sim.propose("a", SCOPE, KEEPS_NONE)  # 75 % is within 80 %
    assert sim.doc.proposals[p].removes_most is None
    again = sim.human("policy", removalGuard=80, why="again")
    assert again["changed"] is False
    sim.human("policy", removalGuard=0, why="any removal waits")
    q = sim.propose("b", "sec:plan/risks", "## Risks\n\n")
    assert sim.doc.proposals[q].removes_most == (1, 2, 0)
    sim.refused(sim.human_actor(), "policy", "request.invalid", removalGuard=101, why="x")
    assert sim.replayed().removal_guard == 0
    restored = restore_document(dump_document(sim.doc))
    assert restored.removal_guard == 0
    assert restored.proposals[q].removes_most == (1, 2, 0)


def test_a_policy_change_without_the_guard_is_written_as_before() -> None:
    sim = Sim(policy="single")
    sim.human("policy", policy="majority", why="more eyes")
    changed = sim.events("pact.document.policy-changed")[-1]
    assert "removalGuard" not in changed
    assert sim.doc.removal_guard == DEFAULT_REMOVAL_GUARD
