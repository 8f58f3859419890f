"""Every timer on a simulated clock, at its boundary: just before nothing, at it once, then
nothing again."""

from __future__ import annotations

import pytest

from engine.protocol.persist import dump_document

from .conftest import Sim, body

RISKS = "sec:plan/risks"


def fired(sim: Sim, at_ms: int) -> list[str]:
    sim.at(at_ms)
    return [e["eventType"] for e in sim.tick()]


@pytest.mark.parametrize("ttl", [1, 30, 60])
def test_a_lock_expires_after_its_ttl(ttl: int) -> None:
    sim = Sim()
    sim.join("a", "b")
    sim.agent("a", "lock", sectionId=RISKS, ttlSeconds=ttl)
    until = sim.now + ttl * 1000
    assert sim.s(RISKS).lock is not None
    sim.refused("b", "propose", "section.locked", sectionId=RISKS, newContent=body("Risks", "x"))
    assert fired(sim, until - 1) == []
    assert sim.s(RISKS).lock is not None
    assert fired(sim, until) == ["pact.section.unlocked"]
    assert sim.s(RISKS).lock is None
    assert fired(sim, until + 1) == []
    sim.propose("b", RISKS, body("Risks", "x"))


def test_a_locked_section_is_open_to_its_holder_and_refuses_others_with_retry_after() -> None:
    sim = Sim()
    sim.join("a", "b")
    sim.agent("a", "lock", sectionId=RISKS, ttlSeconds=10)
    sim.advance(2.5)
    error = sim.refused(
        "b", "propose", "section.locked", sectionId=RISKS, newContent=body("Risks", "b")
    )
    assert error.metadata["retryAfter"] == 8
    sim.refused("b", "unlock", "section.locked", sectionId=RISKS)
    sim.propose("a", RISKS, body("Risks", "a"))
    sim.agent("a", "unlock", sectionId=RISKS)
    assert sim.s(RISKS).lock is None


@pytest.mark.parametrize("ttl", [0, 61, -1])
def test_a_lock_ttl_outside_one_to_sixty_is_refused(ttl: int) -> None:
    sim = Sim()
    sim.join("a")
    sim.refused("a", "lock", "request.invalid", sectionId=RISKS, ttlSeconds=ttl)


def test_a_human_force_unlock_needs_a_reason_and_is_recorded() -> None:
    sim = Sim()
    sim.join("a")
    sim.agent("a", "lock", sectionId=RISKS, ttlSeconds=60)
    sim.refused(sim.human_actor(), "unlock", "request.invalid", sectionId=RISKS)
    sim.human("unlock", sectionId=RISKS, why="stuck")
    assert sim.s(RISKS).lock is None
    assert ("force-unlocked " + RISKS, "stuck") in [(w, o.why) for w, o in sim.doc.overrides]


def test_an_agent_silent_for_300_s_is_evicted_once() -> None:
    sim = Sim()
    sim.join("a")
    joined = sim.now
    assert fired(sim, joined + 299_999) == []
    assert fired(sim, joined + 300_000) == ["pact.agent.evicted"]
    assert "a" not in sim.doc.active
    assert fired(sim, joined + 300_001) == []
    sim.refused("a", "heartbeat", "agent.not_joined")


def test_any_operation_counts_as_a_heartbeat() -> None:
    sim = Sim()
    sim.join("a")
    sim.advance(200)
    sim.agent("a", "comment", sectionId=RISKS, text="still here")
    seen = sim.now
    assert fired(sim, seen + 299_999) == []
    assert fired(sim, seen + 300_000) == ["pact.agent.evicted"]


def test_a_heartbeat_resets_the_silence() -> None:
    sim = Sim()
    sim.join("a")
    sim.advance(299.999)
    sim.agent("a", "heartbeat")
    assert fired(sim, sim.now + 299_999) == []
    assert "a" in sim.doc.active


def test_eviction_releases_the_agents_locks() -> None:
    sim = Sim()
    sim.join("a", "b")
    sim.agent("a", "lock", sectionId=RISKS, ttlSeconds=60)
    locked_at = sim.now
    sim.advance(250)
    sim.agent("b", "heartbeat")
    # Nothing ticked since the lock: the eviction comes first and takes the lock with it.
    assert fired(sim, locked_at + 300_000) == ["pact.agent.evicted"]
    assert sim.s(RISKS).lock is None
    sim.propose("b", RISKS, body("Risks", "mine now"))


def test_a_renamed_section_keeps_its_old_id_for_300_s() -> None:
    sim = Sim(policy="auto")
    sim.join("a")
    sim.propose("a", "sec:plan/scope", body("Reach", "Scope line one."))
    renamed = sim.now
    assert sim.s("sec:plan/reach").title == "Reach"
    sim.at(renamed + 299_999)
    sim.agent("a", "comment", sectionId="sec:plan/scope", text="via the alias")
    assert sim.doc.comments[list(sim.doc.comments)[-1]].section == sim.s("sec:plan/reach").key
    assert fired(sim, renamed + 300_000) == ["pact.section.alias-expired"]
    sim.refused("a", "comment", "section.not_found", sectionId="sec:plan/scope", text="late")
    assert fired(sim, renamed + 300_001) == []


@pytest.mark.parametrize("timeout", [10, 600, 3600])
def test_ask_human_times_out(timeout: int) -> None:
    sim = Sim()
    sim.join("a")
    query = sim.agent("a", "ask-human", question="budget?", timeoutSeconds=timeout)["queryId"]
    asked = sim.now
    sim.at(asked + timeout * 1000 - 1)
    sim.tick()
    assert sim.doc.queries[query].status == "open"
    sim.at(asked + timeout * 1000)
    sim.tick()
    assert sim.doc.queries[query].status == "timed-out"
    sim.advance(1)
    sim.tick()
    assert len(sim.events("pact.human.timed-out")) == 1
    sim.refused(sim.human_actor(), "respond", "query.closed", queryId=query, response="too late")


def test_ask_human_default_timeout_is_60_s() -> None:
    sim = Sim()
    sim.join("a")
    query = sim.agent("a", "ask-human", question="budget?")["queryId"]
    assert sim.doc.queries[query].due_ms == sim.now + 60_000


@pytest.mark.parametrize("timeout", [9, 3601])
def test_ask_human_timeout_outside_10_to_3600_is_refused(timeout: int) -> None:
    sim = Sim()
    sim.join("a")
    sim.refused("a", "ask-human", "request.invalid", question="q", timeoutSeconds=timeout)


def test_an_intent_is_accepted_after_the_window() -> None:
    sim = Sim(window_s=60)
    sim.join("a", "b")
    intent = sim.agent("a", "intent", sectionId=RISKS, goal="list risks")["intentId"]
    declared = sim.now
    assert fired(sim, declared + 59_999) == []
    assert fired(sim, declared + 60_000) == ["pact.intent.accepted"]
    assert sim.doc.intents[intent].status == "Accepted"
    assert fired(sim, declared + 60_001) == []


def test_an_objected_intent_is_not_accepted() -> None:
    sim = Sim(window_s=60)
    sim.join("a", "b")
    intent = sim.agent("a", "intent", sectionId=RISKS, goal="list risks")["intentId"]
    sim.advance(30)
    sim.agent("b", "object", intentId=intent, reason="not yet")
    sim.advance(30)
    assert sim.tick() == []
    assert sim.doc.intents[intent].status == "Objected"
    sim.refused("b", "object", "proposal.invalid_status", intentId=intent, reason="again")


def test_a_newer_intent_of_the_same_author_on_the_same_section_supersedes() -> None:
    sim = Sim(window_s=60)
    sim.join("a", "b")
    first = sim.agent("a", "intent", sectionId=RISKS, goal="list risks")["intentId"]
    other = sim.agent("b", "intent", sectionId=RISKS, goal="rank risks")["intentId"]
    elsewhere = sim.agent("a", "intent", sectionId="sec:plan", goal="intro")["intentId"]
    sim.advance(10)
    second = sim.agent("a", "intent", sectionId=RISKS, goal="list five risks")["intentId"]
    intents = sim.doc.intents
    assert intents[first].status == "Superseded"
    assert (intents[other].status, intents[elsewhere].status) == ("Proposed", "Proposed")
    sim.advance(50)
    sim.tick()
    assert intents[first].status == "Superseded"  # its window ended, it stays superseded
    assert (intents[other].status, intents[elsewhere].status) == ("Accepted", "Accepted")
    assert intents[second].status == "Proposed"
    sim.advance(10)
    sim.tick()
    assert intents[second].status == "Accepted"


# -- timers that fire nothing (issue 24) --------------------------------------------------------
def due_now(sim: Sim) -> list[tuple[int, str, str]]:
    """The timers the document says are due: what the next tick would take and look at."""
    return [timer for timer in sim.doc.timers if timer[0] <= sim.now]


def test_a_settled_conflicts_escalation_fires_nothing_and_is_not_due_again() -> None:
    """A first-wins conflict is settled at once, but its escalation timer (600 s on) stays.
    Due, it fired nothing, and the tick put it back: every later tick took it again, and the
    custodian's screen, seeing something due, ran a tick every second for ever (on 100k
    proposals, ~99k such timers). Set aside, it is still the fold's: the dump, and so a
    checkpoint, is what a replay of the log holds."""
    sim = Sim()
    sim.join("a", "b")
    sim.propose("a", RISKS, body("Risks", "a's"))
    sim.propose("b", RISKS, body("Risks", "b's"))  # first-wins: rejected at once
    (group,) = sim.doc.conflicts.values()
    assert group.resolved == "first-wins"
    opened = group.opened_ms
    assert fired(sim, opened + 300_000) == ["pact.agent.evicted"] * 2  # nobody left to evict
    assert fired(sim, opened + 600_000) == []  # the escalation is due, and has nothing to do
    assert due_now(sim) == []
    next_due = sim.doc.next_due_ms()
    assert next_due is None or next_due > sim.now
    assert dump_document(sim.doc) == dump_document(sim.replayed())
    assert fired(sim, opened + 900_000) == []
    # The next event drops it, live as in a replay.
    sim.join("c")
    assert sim.doc.quiet_timers == []
    assert dump_document(sim.doc) == dump_document(sim.replayed())


def test_a_blocked_merge_is_looked_at_again_after_the_next_event_only() -> None:
    """An objection window that ends while a salience-10 reviewer has not acted fires nothing;
    it is not taken again by every tick, and the reviewer's approval (an event) merges it."""
    sim = Sim(policy="objection-based", window_s=60)
    sim.join("a", "b")
    sim.agent("b", "salience", sectionId=RISKS, score=10)
    proposal = sim.propose("a", RISKS, body("Risks", "a's"))
    assert sim.doc.blocked(sim.doc.proposals[proposal])
    sim.advance(61)
    assert sim.tick() == []
    assert due_now(sim) == [] and sim.status(proposal) == "Pending"
    assert dump_document(sim.doc) == dump_document(sim.replayed())
    sim.agent("b", "approve", proposalId=proposal)
    assert sim.status(proposal) == "Merged"
    assert dump_document(sim.doc) == dump_document(sim.replayed())


def test_a_quiet_timer_due_after_an_earlier_dated_event_waits_again() -> None:
    """A clock set back: an event dated before a timer set aside does not drop it, as a
    replay's fold would not; it waits again, and fires when due."""
    sim = Sim(window_s=60)
    sim.join("a", "b")
    intent = sim.agent("a", "intent", sectionId=RISKS, goal="list risks")["intentId"]
    sim.agent("b", "object", intentId=intent, reason="not yet")
    declared = sim.now
    sim.at(declared + 60_000)
    assert sim.tick() == []  # objected: its acceptance fires nothing
    assert sim.doc.quiet_timers
    sim.now = declared + 1_000  # the clock set back
    sim.agent("b", "heartbeat")
    assert sim.doc.quiet_timers == [] and sim.doc.timers
    assert dump_document(sim.doc) == dump_document(sim.replayed())
