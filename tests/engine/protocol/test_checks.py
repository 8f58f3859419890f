"""What the app asks the engine before it asks the custodian anything: whether a command can
apply now (``check``, the rules ``decide`` runs), what a revert would become (``revert_outcome``),
a human's "revert now" override, and ids typed short (``short_ids``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from engine.protocol.commands import Actor
from engine.protocol.decide import check, decide, revert_outcome
from engine.protocol.errors import ProtocolError
from engine.protocol.model import POLICIES
from engine.protocol.short_ids import expand, proposal_id

from .conftest import Sim, body

BUDGET = "sec:plan/budget"
SCOPE = "sec:plan/scope"
RISKS = "sec:plan/risks"
WHY = {
    "approve": {"why": "checked"},
    "reject": {"reason": "wrong"},
    "force-merge": {"why": "urgent"},
    "revert": {"summary": "undo"},
    "resolve": {"decision": "d", "justification": "j"},
    "trust": {"level": "Suggester", "why": "w"},
    "clearance": {"level": "Internal"},
    "remove": {"why": "w"},
}
WIRE = {"proposal_id": "proposalId", "section_id": "sectionId", "agent": "agent"}


def busy_document() -> Sim:
    """Proposals in every status (a conflict too), agents joined and gone, a framework."""
    sim = Sim(policy="single", strategy="human-escalate")
    sim.join("a", "b", "c")
    sim.join("s", trust="Suggester")
    merged = sim.propose("a", SCOPE, body("Scope", "Scope line ONE.\nScope line two."))
    sim.agent("b", "approve", proposalId=merged)
    rejected = sim.propose("a", BUDGET, body("Budget", "Total: 3M."))
    sim.agent("b", "reject", proposalId=rejected, reason="no")
    sim.propose("a", BUDGET, body("Budget", "Total: 2M."))  # pending
    sim.propose("a", RISKS, body("Risks", "One."))
    sim.propose("b", RISKS, body("Risks", "Two."))  # a conflict, escalated
    withdrawn = sim.propose("c", "sec:plan", body("Plan", "Intro.", 1))
    sim.agent("c", "withdraw", proposalId=withdrawn)
    sim.human(
        "classify", sectionId=BUDGET, level="Internal", framework="F", levels=["Public", "Internal"]
    )
    sim.agent("c", "leave")
    return sim


def refusal(run: Any, *args: Any, **fields: Any) -> str | None:
    try:
        run(*args, **fields)
    except ProtocolError as error:
        return error.code
    return None


def targets(sim: Sim) -> list[tuple[str, dict[str, Any]]]:
    """Every op the check knows, on everything in the document it could name (and on a name
    of nothing)."""
    doc = sim.doc
    found: list[tuple[str, dict[str, Any]]] = []
    for pid in [*doc.proposals, "nope"]:
        for op in ("approve", "reject", "force-merge", "revert"):
            found.append((op, {"proposal_id": pid}))
        proposal = doc.proposals.get(pid)
        if proposal is not None:
            section = doc.by_key[proposal.section].id
            found.append(("resolve", {"section_id": section, "proposal_id": pid}))
    for section in [*(s.id for s in doc.sections), "sec:nothing"]:
        found.append(("resolve", {"section_id": section}))
    for agent in [*(a.name for a in doc.agents.values()), *doc.agents, "nobody"]:
        for op in ("trust", "clearance", "remove"):
            found.append((op, {"agent": agent}))
    return found


@pytest.mark.parametrize("who", ["human", "a", "s"])
def test_the_check_refuses_what_decide_refuses_and_changes_nothing(who: str) -> None:
    """For every op, on every proposal, section and agent, and for a human, a Collaborator and
    a Suggester: the check refuses with the code ``decide`` refuses the whole command with (a
    why given), and lets through what ``decide`` does. It appends, changes and fires nothing."""
    sim = busy_document()
    actor = sim.human_actor() if who == "human" else Actor.agent(who)
    before = sim.snapshot()
    compared = 0
    for op, fields in targets(sim):
        checked = refusal(check, sim.doc, actor, sim.now, op, **fields)
        command = {"op": op, **{WIRE[k]: v for k, v in fields.items()}, **WHY[op]}
        scratch = copy.deepcopy(sim.doc)
        decided = refusal(decide, scratch, command, actor, sim.now, sim.ids)
        assert checked == decided, (who, op, fields)
        compared += 1
    assert compared > 60
    assert sim.snapshot() == before


def test_the_check_fires_nothing_due() -> None:
    sim = Sim(policy="objection-based")
    sim.join("a", "b")
    p = sim.propose("a", BUDGET, body("Budget", "Total: 2M."))
    sim.advance(120)  # its window ended: due
    timers = list(sim.doc.timers)
    check(sim.doc, sim.human_actor(), sim.now, "approve", proposal_id=p)
    assert sim.status(p) == "Pending" and sim.doc.timers == timers


def test_the_check_refuses_an_approval_of_a_rejected_proposal_by_its_rule() -> None:
    sim = busy_document()
    rejected = next(p for p in sim.doc.proposals.values() if p.status == "Rejected")
    with pytest.raises(ProtocolError) as caught:
        check(sim.doc, sim.human_actor(), sim.now, "approve", proposal_id=rejected.id)
    assert caught.value.code == "proposal.invalid_status"
    assert f"proposal {rejected.id} is Rejected" in caught.value.description
    with pytest.raises(ProtocolError, match="no check for 'propose'"):
        check(sim.doc, sim.human_actor(), sim.now, "propose", section_id=BUDGET)


# -- what a revert becomes ----------------------------------------------------------------------
def merged_scope(sim: Sim) -> str:
    p = sim.propose("a", SCOPE, body("Scope", "Scope line ONE."))
    if sim.status(p) != "Merged":
        sim.human("force-merge", proposalId=p, why="set up")
    return p


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("reviewers", [0, 1, 2])
def test_the_outcome_foretold_is_what_the_revert_does(policy: str, reviewers: int) -> None:
    """For every policy, with no agent reviewing the section, one, or two (one with salience
    3, which auto-consents): what ``revert_outcome`` says is what the revert then does."""
    sim = Sim(policy=policy)
    sim.join("a")
    for name, score in (("r1", 7), ("r2", 3))[:reviewers]:
        sim.join(name)
        sim.agent(name, "salience", sectionId=SCOPE, score=score)
    p = merged_scope(sim)
    outcome = revert_outcome(sim.doc, sim.human_actor(), sim.now, p)
    revert = sim.human("revert", proposalId=p)["proposalId"]
    assert outcome.at_once == (sim.status(revert) == "Merged"), (outcome, sim.status(revert))
    assert outcome.says


def test_the_outcome_says_why_it_waits_or_merges() -> None:
    sim = Sim(policy="objection-based", window_s=90)
    sim.join("a", "b")
    p = merged_scope(sim)
    outcome = revert_outcome(sim.doc, sim.human_actor(), sim.now, p)
    assert not outcome.at_once
    assert outcome.says == "waits 90 s for objections from 2 reviewing agent(s) (objection-based)"
    for name in ("a", "b"):
        sim.agent(name, "salience", sectionId=SCOPE, score=0)
    outcome = revert_outcome(sim.doc, sim.human_actor(), sim.now, p)
    assert outcome.at_once
    assert outcome.says == f"merges at once: no agent reviews {SCOPE} (objection-based)"
    sim.agent("a", "escalate", sectionId=SCOPE, reason="look")
    outcome = revert_outcome(sim.doc, sim.human_actor(), sim.now, p)
    assert not outcome.at_once and "is escalated to a human" in outcome.says
    sim.human("resolve", sectionId=SCOPE, decision="ok", justification="ok")
    sim.agent("a", "salience", sectionId=SCOPE, score=7)  # a reviews it again: b's waits
    rival = sim.propose("b", SCOPE, body("Scope", "Scope line ONE.\nAnd more."))
    assert sim.status(rival) == "Pending"
    outcome = revert_outcome(sim.doc, sim.human_actor(), sim.now, p)
    assert outcome == revert_outcome(sim.doc, sim.human_actor(), sim.now, p)
    assert not outcome.at_once and outcome.says.endswith("came first (first-wins)")


def test_a_revert_that_cannot_be_made_is_refused_when_foretold() -> None:
    sim = Sim(policy="single")
    sim.join("a", "b")
    pending = sim.propose("a", BUDGET, body("Budget", "Total: 2M."))
    with pytest.raises(ProtocolError) as caught:
        revert_outcome(sim.doc, sim.human_actor(), sim.now, pending)
    assert caught.value.code == "proposal.invalid_status"


# -- revert now: a human's override --------------------------------------------------------------
def test_revert_now_merges_at_once_and_records_who_and_why() -> None:
    sim = Sim(policy="objection-based")
    sim.join("a", "b")
    p = merged_scope(sim)
    rival = sim.propose("b", BUDGET, body("Budget", "Total: 2M."))
    sim.agent("a", "escalate", sectionId=SCOPE, reason="look")  # an override passes a flag too
    sim.refused(sim.human_actor(), "revert", "request.invalid", proposalId=p, now=True)
    sim.refused(sim.human_actor(), "revert", "request.invalid", proposalId=p, now=True, why=" ")
    sim.refused("a", "revert", "auth.forbidden", proposalId=p, now=True, why="mine")
    mark = sim.mark()
    revert = sim.human("revert", proposalId=p, now=True, why="it broke the build")["proposalId"]
    assert sim.status(revert) == "Merged" and sim.status(rival) == "Pending"
    assert sim.types(mark) == ["pact.proposal.created", "pact.proposal.merged"]
    assert "Scope line one." in sim.s(SCOPE).content
    override = sim.doc.proposals[revert].override
    assert override is not None
    assert (override.by, override.kind, override.why) == (
        "carol",
        "Individual",
        "it broke the build",
    )
    assert (f"merged {revert}", override) in sim.doc.overrides


def test_revert_now_leaves_an_open_proposal_on_the_section_stale_not_in_conflict() -> None:
    sim = Sim(policy="single", strategy="first-wins")
    sim.join("a", "b")
    p = merged_scope(sim)
    rival = sim.propose("b", SCOPE, body("Scope", "Scope line ONE.\nScope two."))
    revert = sim.human("revert", proposalId=p, now=True, why="back")["proposalId"]
    assert sim.status(revert) == "Merged"
    assert sim.status(rival) == "Pending" and sim.doc.proposals[rival].stale
    assert not sim.doc.proposals[revert].conflict


# -- ids typed short ------------------------------------------------------------------------------
def test_a_unique_start_or_end_names_its_id() -> None:
    ids = ["3f2a-0001", "3f2b-0002", "9c00-0003"]

    def missing(description: str) -> ProtocolError:
        return ProtocolError(description, code="thing.not_found")

    assert expand("9c", ids, "thing", missing) == "9c00-0003"
    assert expand("0002", ids, "thing", missing) == "3f2b-0002"
    assert expand(" 3f2a-0001 ", ids, "thing", missing) == "3f2a-0001"
    with pytest.raises(ProtocolError) as caught:
        expand("3f2", ids, "thing", missing)
    error = caught.value
    assert error.code == "request.ambiguous_id"
    assert error.description == "'3f2' names 2 things: 3f2a-0001, 3f2b-0002; type more of the id"
    assert error.metadata["candidates"] == ["3f2a-0001", "3f2b-0002"]
    with pytest.raises(ProtocolError) as caught:
        expand("zz", ids, "thing", missing)
    assert caught.value.code == "thing.not_found"
    assert "no thing id is, starts or ends with 'zz'" in caught.value.description
    with pytest.raises(ProtocolError) as caught:
        expand("  ", ids, "thing", missing)
    assert caught.value.code == "request.invalid"
    many = [f"{i:04d}-x" for i in range(12)]
    with pytest.raises(ProtocolError, match=r"names 12 things: .* and 7 more; type more"):
        expand("x", many, "thing", missing)


def test_a_short_proposal_id_is_looked_up_among_what_the_reader_may_read() -> None:
    sim = busy_document()
    doc = sim.doc
    ids = list(doc.proposals)
    last = ids[-1]
    assert proposal_id(doc, last[-4:], None) == last
    assert proposal_id(doc, last, None) == last
    with pytest.raises(ProtocolError) as caught:
        proposal_id(doc, "00000000", None)  # counted ids share their start
    assert caught.value.code == "request.ambiguous_id"
    with pytest.raises(ProtocolError) as caught:
        proposal_id(doc, "ffff", None)
    assert caught.value.code == "proposal.not_found"
    # An agent cleared for nothing cannot read the classified budget: its proposals are not
    # candidates, and no refusal names them.
    hidden = [p.id for p in doc.proposals.values() if doc.by_key[p.section].id == BUDGET]
    reader = sim.a("a")
    assert hidden and reader.clearance is None
    with pytest.raises(ProtocolError) as caught:
        proposal_id(doc, hidden[0][-6:], reader)
    assert caught.value.code == "proposal.not_found"
    with pytest.raises(ProtocolError) as caught:
        proposal_id(doc, "0000", reader)
    assert not set(hidden) & set(caught.value.metadata["candidates"])
    assert all(h not in caught.value.description for h in hidden)


def test_a_clearance_level_in_any_case_is_the_frameworks_level() -> None:
    sim = busy_document()  # framework F: Public, Internal
    assert sim.human("clearance", agent="a", level="iNTERNAL")["clearance"] == "Internal"
    assert sim.a("a").clearance == "Internal" and sim.a("a").clearance_rank == 1
    sim.refused(sim.human_actor(), "clearance", "request.invalid", agent="a", level="Secret")
