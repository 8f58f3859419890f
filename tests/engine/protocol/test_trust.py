"""Trust by operation: what each level may do, and that a refusal changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from engine.protocol.commands import Actor
from engine.protocol.decide import HUMAN_ONLY, NEEDS, decide
from engine.protocol.document import Document
from engine.protocol.envelope import CountingIds
from engine.protocol.errors import ProtocolError
from engine.protocol.model import POLICIES, TRUST_LEVELS, trust_rank

from .conftest import START_MS, Sim, body

AGENT_OPS = [op for op in NEEDS if op != "join"]


def world(trust: str) -> tuple[Sim, dict[str, str]]:
    """Agent ``x`` (trust ``trust``) and ``other`` (Collaborator), with something of each kind
    to act on: other's pending proposal and comment, x's own proposal, constraint and lock, and
    a merged proposal to revert."""
    sim = Sim()
    sim.join("other", "x")
    refs = {
        "pending": sim.propose("other", "sec:plan/budget", body("Budget", "Total: 2M.")),
        "mine": sim.propose("x", "sec:plan/scope", body("Scope", "Scope: less.")),
        "merged": sim.propose("other", "sec:plan", body("Plan", "Intro, better.", 1)),
        "comment": sim.agent("other", "comment", sectionId="sec:plan/budget", text="why 2M?")[
            "commentId"
        ],
        "constraint": sim.agent(
            "x", "constrain", sectionId="sec:plan/risks", boundary="no more than 5 risks"
        )["constraintId"],
        "query": "",
        "invite": sim.human("invite", ttlSeconds=600)["tokenHash"],
    }
    sim.human("approve", proposalId=refs["merged"], why="fine")
    assert sim.status(refs["merged"]) == "Merged"
    sim.agent("x", "lock", sectionId="sec:plan/risks", ttlSeconds=60)
    refs["query"] = sim.agent("other", "ask-human", question="ok?")["queryId"]
    if trust != "Collaborator":
        sim.human("trust", agent="x", level=trust, why="test")
    assert sim.a("x").trust == trust
    return sim, refs


def fields(op: str, refs: dict[str, str]) -> dict[str, Any]:
    return {
        "leave": {},
        "heartbeat": {},
        "done": {"status": "aligned", "summary": "ok"},
        "salience": {"sectionId": "sec:plan/budget", "score": 7},
        "intent": {"sectionId": "sec:plan/risks", "goal": "list the risks"},
        "constrain": {"sectionId": "sec:plan/risks", "boundary": "short"},
        "withdraw-constraint": {"constraintId": refs["constraint"]},
        "propose": {"sectionId": "sec:plan/risks", "newContent": body("Risks", "None.")},
        "withdraw": {"proposalId": refs["mine"]},
        "revert": {"proposalId": refs["merged"]},
        "comment": {"sectionId": "sec:plan/budget", "text": "hm"},
        "ask-human": {"question": "may I?"},
        "escalate": {"sectionId": "sec:plan/risks", "reason": "stuck"},
        "approve": {"proposalId": refs["pending"]},
        "reject": {"proposalId": refs["pending"], "reason": "no"},
        "object": {"proposalId": refs["pending"], "reason": "too much"},
        "lock": {"sectionId": "sec:plan/risks", "ttlSeconds": 10},
        "unlock": {"sectionId": "sec:plan/risks"},
        "resolve-comment": {"commentId": refs["comment"]},
        # the custodian's own
        "respond": {"queryId": refs["query"], "response": "yes"},
        "dismiss": {"queryId": refs["query"]},
        "resolve": {"sectionId": "sec:plan/budget", "decision": "d", "justification": "j"},
        "invite": {},
        "revoke-invite": {"invite": refs["invite"], "why": "w"},
        "classify": {"sectionId": "sec:plan/budget", "level": "Public", "levels": ["Public"]},
        "clearance": {"agent": "other", "level": "Public", "levels": ["Public"]},
        "trust": {"agent": "other", "level": "Autonomous", "why": "test"},
        "disclosure": {"agent": "other", "level": 2},
        "remove": {"agent": "other", "why": "w"},
        "force-merge": {"proposalId": refs["pending"], "why": "w"},
        "edit": {"sectionId": "sec:plan/budget", "content": body("Budget", "x"), "why": "w"},
        "policy": {"policy": "auto", "why": "w"},
        "lock-document": {"why": "w"},
        "unlock-document": {},
        "mark-constraint": {"constraintId": refs["constraint"], "compatibility": "compatible"},
    }[op]


def test_the_matrix_covers_every_operation() -> None:
    assert set(AGENT_OPS) == {
        "leave",
        "heartbeat",
        "done",
        "salience",
        "intent",
        "constrain",
        "withdraw-constraint",
        "propose",
        "withdraw",
        "revert",
        "comment",
        "ask-human",
        "escalate",
        "approve",
        "reject",
        "object",
        "lock",
        "unlock",
        "resolve-comment",
    }
    assert trust_rank("Observer") < trust_rank("Suggester") < trust_rank("Collaborator")


@pytest.mark.parametrize("op", AGENT_OPS)
@pytest.mark.parametrize("trust", TRUST_LEVELS)
def test_agent_operation_by_trust(trust: str, op: str) -> None:
    sim, refs = world(trust)
    allowed = trust_rank(trust) >= trust_rank(str(NEEDS[op]))
    if allowed:
        before = sim.doc.sequence
        sim.agent("x", op, **fields(op, refs))
        assert sim.doc.sequence > before
    else:
        error = sim.refused("x", op, "auth.forbidden", **fields(op, refs))
        assert error.metadata["trustLevel"] == trust
        assert error.metadata["needs"] == NEEDS[op]


@pytest.mark.parametrize("op", sorted(HUMAN_ONLY))
@pytest.mark.parametrize("trust", TRUST_LEVELS)
def test_human_only_operations_are_forbidden_to_every_agent(trust: str, op: str) -> None:
    sim, refs = world(trust)
    if op == "unlock-document":
        sim.human("lock-document", why="for the test")
    sim.refused("x", op, "auth.forbidden", **fields(op, refs))


@pytest.mark.parametrize("op", sorted(HUMAN_ONLY))
def test_a_human_may_run_every_custodian_operation(op: str) -> None:
    sim, refs = world("Collaborator")
    if op == "unlock-document":
        sim.human("lock-document", why="for the test")
    if op == "clearance":
        sim.human("classify", sectionId="sec:plan", level="Public", levels=["Public"])
    before = sim.doc.sequence
    sim.human(op, **fields(op, refs))
    assert sim.doc.sequence > before


@pytest.mark.parametrize("trust", TRUST_LEVELS)
def test_join_needs_no_trust_and_happens_once(trust: str) -> None:
    sim = Sim(default_trust=trust)
    sim.join("x")
    assert sim.a("x").trust == trust
    sim.refused("x", "join", "agent.already_joined", agentName="x")
    # Before joining, an agent may do nothing else.
    sim.refused("y", "heartbeat", "agent.not_joined")
    sim.refused("y", "join", "request.invalid", agentName="someone-else")


def test_a_trust_change_is_an_override_with_who_and_why() -> None:
    sim = Sim()
    sim.join("x")
    sim.human("trust", agent="x", level="Observer", why="misbehaved")
    what, override = sim.doc.overrides[-1]
    assert "Observer" in what
    assert (override.by, override.why) == ("carol", "misbehaved")
    sim.refused("x", "propose", "auth.forbidden", sectionId="sec:plan", newContent="# Plan\n")


@pytest.mark.parametrize("policy", POLICIES)
def test_autonomous_proposals_merge_at_once_under_every_policy(policy: str) -> None:
    sim = Sim(policy=policy)
    sim.join("auto", "reviewer", "other")
    sim.human("trust", agent="auto", level="Autonomous", why="test")
    proposal = sim.propose("auto", "sec:plan/budget", body("Budget", "Total: 3M."))
    assert sim.status(proposal) == "Merged"
    assert "Total: 3M." in sim.doc.markdown()
    # a Collaborator's proposal under the same policy does not (except under auto)
    other = sim.propose("other", "sec:plan/risks", body("Risks", "Many."))
    assert (sim.status(other) == "Merged") == (policy == "auto")


def test_a_human_is_not_an_agent_and_the_system_runs_no_commands() -> None:
    sim = Sim()
    sim.refused(Actor.human("carol"), "join", "auth.forbidden", agentName="carol")
    sim.refused(Actor("system", "system"), "heartbeat", "auth.forbidden")


@pytest.mark.parametrize("op", sorted(HUMAN_ONLY))
def test_an_agent_running_a_human_only_op_is_forbidden_whatever_else_is_wrong(op: str) -> None:
    """Authorisation is checked first: it was checked after the document's existence and the
    command's fields, so an agent learnt of those before it learnt it may not do this."""
    agent = Actor.agent("x")
    for doc in (Document(), Sim().doc):  # a document not created yet, and one x never joined
        for command in ({"op": op}, {"op": op, "unknownField": 1}):
            with pytest.raises(ProtocolError) as refused:
                decide(doc, command, agent, START_MS, CountingIds())
            assert refused.value.code == "auth.forbidden", (op, command)
            assert refused.value.fired == []
