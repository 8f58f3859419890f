"""Identities are claims: an agent may not join under a name that is, or looks like, the
system's, a human's id (``human:…``) or a name a human has acted under on the document; and the
kind of every actor (agent, human, system) is the event's, kept by the fold where a record
names who did something."""

from __future__ import annotations

import json

import pytest

from engine.protocol.commands import Actor
from engine.protocol.document import Document
from engine.protocol.envelope import envelope
from engine.protocol.model import who
from engine.protocol.names import comparable, reserved
from engine.protocol.persist import dump_document, restore_document

from .conftest import Sim, body

# The Sim's document is created by the human "carol".
RESERVED = [
    "system",
    "System",
    "SYSTEM",
    " system ",
    "sys tem",
    "sys\u200btem",  # a zero-width space inside
    "\u202esystem",  # a bidi override before it
    "\uff53\uff59\uff53\uff54\uff45\uff4d",  # fullwidth
    "\u0455\u0443\u0455t\u0435m",  # Cyrillic dze, u, dze and ie: looks like "system"
    "systern",  # rn looks like m
    "human:boss",
    "HUMAN:boss",
    " Human: boss",
    "human:",
    "hum\u0430n:boss",  # a Cyrillic a
    "human\uff1aboss",  # a fullwidth colon
    "carol",  # the human who created the document
    "Carol",
    " carol\u200d",
    "c\u0430rol",  # a Cyrillic a
    " ",
    "\u200b",
]
FREE = ["legal", "human", "humane", "humanist", "systems-bot", "caroline", "Erin"]


@pytest.mark.parametrize("name", RESERVED, ids=[json.dumps(n) for n in RESERVED])
def test_a_reserved_name_is_refused_at_join_and_nothing_is_appended(name: str) -> None:
    sim = Sim()
    before = len(sim.log)
    error = sim.refused(Actor.agent(name), "join", "request.invalid", agentName=name)
    assert error.metadata["field"] == "agentName"
    assert error.metadata["reason"] in error.description
    assert "reserved" in error.description
    assert len(sim.log) == before and sim.doc.agents == {}


@pytest.mark.parametrize("name", FREE)
def test_other_names_join(name: str) -> None:
    sim = Sim()
    sim.join(name)
    assert sim.a(name).name == name


def test_a_name_a_human_has_acted_under_is_reserved_from_then_on() -> None:
    sim = Sim()
    sim.join("legal", "finance")
    proposal = sim.propose("legal", "sec:plan/budget", body("Budget", "Total: 2M."))
    sim.agent("legal", "leave")
    sim.join("dave")  # free: no human has acted as dave
    sim.agent("dave", "leave")
    sim.decide(Actor.human("dave"), "reject", proposalId=proposal, reason="too much")
    assert list(sim.doc.humans) == ["carol", "dave"]
    for name in ("dave", "DAVE", "d\u0430ve"):
        error = sim.refused(Actor.agent(name), "join", "request.invalid", agentName=name)
        assert "'dave', a name a human has acted under here" in error.description
    # A name no human acted under is still free, an agent's old one too.
    sim.join("legal")


def test_a_human_acting_under_an_active_agents_name_is_labelled_not_refused() -> None:
    """Refusing would let an agent lock the custodian out of acting under their own name by
    joining first; the kind in every view tells the two apart instead."""
    sim = Sim()
    sim.join("legal", "finance")
    proposal = sim.propose("finance", "sec:plan/budget", body("Budget", "Total: 2M."))
    sim.decide(Actor.human("legal"), "approve", proposalId=proposal, why="fine by me")
    sim.agent("legal", "heartbeat")  # the agent goes on under its name
    approved, heartbeat = sim.log[-3], sim.log[-1]
    assert approved["eventType"] == "pact.proposal.approved"
    assert (approved["actorDisplay"], approved["actorKind"]) == ("legal", "Individual")
    assert (heartbeat["actorDisplay"], heartbeat["actorKind"]) == ("legal", "AiAgent")
    assert approved["actorId"] == "human:legal" != heartbeat["actorId"]
    vote = sim.doc.proposals[proposal].approvals["human:legal"]
    assert vote.kind == "Individual"
    # Once it leaves, it cannot come back under a name a human has acted under.
    sim.agent("legal", "leave")
    sim.refused("legal", "join", "request.invalid", agentName="legal")


def test_the_names_humans_acted_under_are_per_document() -> None:
    one, other = Sim(human="carol"), Sim(human="erin")
    one.join("erin")  # erin acted on the other document only
    other.refused("erin", "join", "request.invalid", agentName="erin")
    assert "carol" not in other.doc.humans and "erin" not in one.doc.humans


def test_the_reserved_names_survive_replay_and_a_checkpoint_round_trip() -> None:
    sim = Sim()
    sim.join("legal")
    proposal = sim.propose("legal", "sec:plan/budget", body("Budget", "Total: 2M."))
    sim.decide(Actor.human("dave"), "approve", proposalId=proposal, why="ok")
    replayed = sim.replayed()
    restored = restore_document(json.loads(json.dumps(dump_document(sim.doc))))
    for doc in (replayed, restored):
        assert doc.humans == sim.doc.humans == {"carol": sim.log[0]["epochMs"], "dave": sim.now}
        assert dump_document(doc) == dump_document(sim.doc)
        twin = Sim()
        twin.doc, twin.now, twin.ids = doc, sim.now, sim.ids
        twin.refused("dave", "join", "request.invalid", agentName="dave")


def test_the_fold_keeps_the_kind_the_event_gives_not_one_the_name_suggests() -> None:
    """A log written before names were reserved may hold an agent called "system" or
    "human:boss": it is shown as the agent it is."""
    sim = Sim()
    doc = sim.doc
    for n, name in enumerate(("system", "human:boss")):
        agent_id = f"00000000-0000-0000-0000-00000000010{n}"
        doc.apply(
            envelope(
                event_id=f"00000000-0000-0000-0000-00000000020{n}",
                epoch_ms=sim.now,
                actor_id=agent_id,
                actor_display=name,
                actor_kind="AiAgent",
                event_type="pact.agent.joined",
                document_id=doc.id,
                sequence=doc.sequence,
                section_id=None,
                data={"agentId": agent_id, "agentName": name, "trustLevel": "Collaborator"},
            )
        )
    sim.agent("system", "lock", sectionId="sec:plan/budget", ttlSeconds=30)
    proposal = sim.propose("human:boss", "sec:plan/scope", body("Scope", "Less."))
    lock = sim.s("sec:plan/budget").lock
    assert lock is not None and who(lock.holder_name, lock.holder_kind) == "agent system"
    made = doc.proposals[proposal]
    assert who(made.author_name, made.author_kind) == "agent human:boss"
    assert "human:boss" not in doc.humans and "system" not in doc.humans


def test_who_names_the_kind_then_the_name() -> None:
    assert who("legal", "AiAgent") == "agent legal"
    assert who("carol", "Individual") == "human carol"
    assert who("system", "System") == "system"
    assert who("board", "GovernanceGroup") == "group board"


def test_comparable_folds_case_width_spaces_and_invisible_characters() -> None:
    assert comparable(" S\u200by\uff53 TEM\u202e ") == "system"
    assert comparable("Stra\u00dfe") == comparable("STRASSE")
    assert reserved("legal", ["carol"]) is None


def test_an_empty_document_has_no_humans() -> None:
    assert Document().humans == {}
