"""Bugs the property tests (``test_properties.py``) found in the engine, one plain test each."""

from __future__ import annotations

from engine.protocol.commands import Actor
from engine.protocol.decide import tick
from engine.protocol.envelope import CountingIds
from engine.protocol.errors import ProtocolError
from engine.protocol.persist import dump_document
from engine.protocol.sections import parse_sections

from .conftest import Session, replay

HUMAN = Actor.human("carol")
LEVELS = ["Public", "Internal"]


def refused_and_unchanged(s: Session, command: dict[str, object], actor: Actor) -> ProtocolError:
    before = dump_document(s.doc)
    outcome = s.run(command, actor)
    assert isinstance(outcome, ProtocolError)
    assert outcome.fired == []
    assert dump_document(s.doc) == before
    assert dump_document(replay(s.log)) == before
    return outcome


def test_classifying_with_a_level_outside_the_new_framework_adopts_nothing() -> None:
    """It adopted the framework, then refused the level: the document had changed under an
    event that was never returned (a gap in the sequence numbers, a replay without it)."""
    s = Session.start()
    command = {"op": "classify", "sectionId": "sec:plan", "level": "Secret", "levels": LEVELS}
    refused = refused_and_unchanged(s, command, HUMAN)
    assert refused.code == "request.invalid"
    assert s.doc.framework is None
    s.ok({**command, "level": "Internal"}, HUMAN)
    assert s.doc.framework == (None, ("Public", "Internal"))


def test_a_clearance_outside_the_new_framework_adopts_nothing() -> None:
    s = Session.start()
    s.join("a1")
    command = {"op": "clearance", "agent": "a1", "level": "Secret", "levels": LEVELS}
    refused_and_unchanged(s, command, HUMAN)
    assert s.doc.framework is None
    s.ok({**command, "level": "Public"}, HUMAN)
    assert s.doc.agents[s.doc.active["a1"]].clearance == "Public"


def test_a_retried_join_is_a_retry() -> None:
    """The join event had no actorId, so its idempotency record was filed under "" (every
    agent's joins alike) while a retry, by then from a joined agent, looked under the agent's
    id: the retry was refused as agent.already_joined."""
    s = Session.start()
    join = {"op": "join", "agentName": "a1", "role": "editor", "idempotencyKey": "j"}
    first = s.ok(join, Actor.agent("a1"))
    assert first.events[0]["actorId"] == first.answer()["registrationId"]
    before = dump_document(s.doc)
    again = s.ok(join, Actor.agent("a1"), after_s=1)
    assert again.retried and again.events == [] and again.answer() == first.answer()
    assert dump_document(s.doc) == before
    other = s.ok({**join, "agentName": "a2"}, Actor.agent("a2"))  # the same key, another agent
    assert not other.retried and other.answer()["agentName"] == "a2"


def test_a_title_like_a_numbered_duplicate_gets_an_id_of_its_own() -> None:
    """# Risk, # Risk, # Risk 2: the document numbered the second Risk risk-2 and gave
    Risk 2 risk-2 as well (two sections, one id), where parse_sections skips to risk-2-2."""
    markdown = "# Risk\n\n# Risk\n\n# Risk 2\n\n## Risk\n\n## Risk\n"
    s = Session.start(markdown)
    ids = [section.id for section in s.doc.sections]
    assert ids == [s.id for s in parse_sections(markdown)]
    assert ids == [
        "sec:_root",
        "sec:risk",
        "sec:risk-2",
        "sec:risk-2-2",
        "sec:risk-2-2/risk",
        "sec:risk-2-2/risk-2",
    ]
    assert len(s.doc.by_id) == len(ids)
    # A merge that renames keeps them apart too: the renamed one takes the first free name,
    # the others keep theirs (ids are identities, see test_section_ids.py).
    first = s.doc.by_id["sec:risk"].key
    s.ok({"op": "edit", "sectionId": "sec:risk", "content": "# Risk 2\n", "why": "x"}, HUMAN)
    assert [section.id for section in s.doc.sections] == [ids[0], "sec:risk-2-3", *ids[2:]]
    assert s.doc.by_id["sec:risk-2-3"].key == first
    assert s.doc.section("sec:risk").key == first  # type: ignore[union-attr]  # the alias


def test_a_retried_leave_is_a_retry() -> None:
    """The agent had left, so the retry was refused as agent.not_joined before its key was
    looked at."""
    s = Session.start()
    s.join("a1")
    leave = {"op": "leave", "idempotencyKey": "bye"}
    s.ok(leave, Actor.agent("a1"))
    before = dump_document(s.doc)
    again = s.ok(leave, Actor.agent("a1"), after_s=2)
    assert again.retried and again.events == []
    assert dump_document(s.doc) == before
    other = s.run({"op": "heartbeat", "idempotencyKey": "other"}, Actor.agent("a1"))
    assert isinstance(other, ProtocolError) and other.code == "agent.not_joined"


def test_a_setext_heading_cannot_join_the_paragraph_ending_the_section_before() -> None:
    """Content was checked against its own section and the next one only: a setext heading
    right after a paragraph line of the section before became one two-line heading with it
    (the section #hash A-2, its id sec:hash-a-2, where the document said sec:a-2)."""
    s = Session.start("Intro\n# Plan\n\n## Risk\n")  # the root ends with a paragraph line
    edit = {"op": "edit", "sectionId": "sec:plan", "content": "Plan\n====\n", "why": "x"}
    refused = refused_and_unchanged(s, edit, HUMAN)
    assert refused.code == "content.invalid"
    assert refused.metadata["section_id"] == "sec:plan"
    s.join("a1")
    proposal = {"op": "propose", "sectionId": "sec:plan", "newContent": "Plan\n====\n"}
    assert refused_and_unchanged(s, proposal, Actor.agent("a1")).code == "content.invalid"
    s.ok({**edit, "content": "# Plan\n\nFine.\n"}, HUMAN)  # an ATX heading may follow it
    assert [x.id for x in parse_sections(s.doc.markdown())] == [x.id for x in s.doc.sections]


def test_a_form_feed_or_a_line_separator_in_content_is_not_a_line_break() -> None:
    """A merge cut its content into the sections' parts with str.splitlines, which breaks
    lines at "\\f", "\\u2028" and others Markdown does not: a section's text was cut short
    there, the rest pushed into the next section, and the last line of the content lost."""
    s = Session.start("# Plan\n\ntext\n\n## Risk\n\nrisk\n")
    content = "# Plan\n\na\u2028b\x0cc\x0bd\x85e\n\n## Sub\n\nx\n"
    s.ok({"op": "edit", "sectionId": "sec:plan", "content": content, "why": "x"}, HUMAN)
    # (a blank line keeps the content apart from the next section, as Markdown is written)
    assert s.doc.markdown() == content + "\n## Risk\n\nrisk\n"
    assert [x.content for x in s.doc.sections[1:3]] == [content[:-10], "## Sub\n\nx\n\n"]
    assert [x.id for x in parse_sections(s.doc.markdown())] == [x.id for x in s.doc.sections]
    root = {"op": "edit", "sectionId": "sec:_root", "content": "a\x0cb\n", "why": "x"}
    s.ok(root, HUMAN)
    assert s.doc.sections[0].content == "a\x0cb\n\n"  # (its text, then the blank line)


def test_a_rival_joining_a_conflict_moves_none_of_its_deadlines() -> None:
    """Every conflict event on a group set its vote and escalation timers again, from the
    window of the moment: a rival joining after the window shrank had the votes counted at
    once, and one joining after 600 s left an escalation timer already past due in the live
    document, which a replay (ticked to the same time) did not have."""
    s = Session.start(policy="single", strategy="vote", window_s=60)
    s.join("a1", "a2", "a3")
    plan = {"op": "propose", "sectionId": "sec:plan", "newContent": "# Plan\n\nMine.\n"}
    for name in ("a1", "a2"):
        s.ok(plan, Actor.agent(name))
    (group,) = s.doc.conflicts.values()
    s.ok({"op": "policy", "windowSeconds": 5, "why": "hurry"}, HUMAN, after_s=1)
    s.ok(plan, Actor.agent("a3"), after_s=1)  # joins the group
    assert len(group.proposals) == 3
    s.ok({"op": "heartbeat"}, Actor.agent("a1"), after_s=10)
    assert group.resolved is None  # counted when the window it opened with ends, not before
    s.ok({"op": "heartbeat"}, Actor.agent("a1"), after_s=50)
    assert group.resolved == "vote"

    s = Session.start(policy="single", strategy="human-escalate")
    s.join("a1", "a2")
    for name in ("a1", "a2"):
        s.ok(plan, Actor.agent(name))
    s.ok({"op": "join", "agentName": "a3"}, Actor.agent("a3"), after_s=700)
    s.ok(plan, Actor.agent("a3"))  # joins the open group, 700 s on
    assert [t for t in s.doc.timers if t[0] <= s.now] == []
    replayed = replay(s.log)
    assert tick(replayed, s.now, CountingIds(99)).events == []
    assert dump_document(replayed) == dump_document(s.doc)


def test_a_live_document_and_its_replay_hold_the_same_timers() -> None:
    """The decider took due timers off the heap and the fold never did: a replayed document
    kept every timer that had fired (a checkpoint of it grew by one per intent, and ``verify
    --deep`` found a live checkpoint to differ from the replay in its timers)."""
    s = Session.start(policy="objection-based", window_s=10)
    s.join("a1", "a2")
    a1, a2 = Actor.agent("a1"), Actor.agent("a2")
    s.ok({"op": "intent", "sectionId": "sec:plan", "goal": "shorter"}, a1)
    propose = {"op": "propose", "sectionId": "sec:plan/risk", "newContent": "## Risk\n\nx\n"}
    proposed = s.ok(propose, a2)
    s.ok({"op": "withdraw", "proposalId": proposed.answer()["proposalId"], "reason": "no"}, a2)
    assert len(s.doc.timers) == 2  # the intent's acceptance, the withdrawn proposal's merge
    # The window ends: the intent is accepted (an event), the merge timer fires nothing.
    s.ok({"op": "heartbeat"}, a1, after_s=11)
    assert s.doc.timers == []
    assert dump_document(replay(s.log)) == dump_document(s.doc)


def test_a_tick_that_fires_nothing_leaves_the_timers_as_the_log_has_them() -> None:
    s = Session.start(policy="objection-based", window_s=10)
    s.join("a1", "a2")
    a1 = Actor.agent("a1")
    propose = {"op": "propose", "sectionId": "sec:plan/risk", "newContent": "## Risk\n\nx\n"}
    proposed = s.ok(propose, a1)
    s.ok({"op": "withdraw", "proposalId": proposed.answer()["proposalId"], "reason": "no"}, a1)
    s.now += 11_000
    assert tick(s.doc, s.now, s.ids).events == []  # its merge timer is due, and does nothing
    assert dump_document(replay(s.log)) == dump_document(s.doc)
    refused_and_unchanged(s, {"op": "withdraw", "proposalId": "nope", "reason": "x"}, a1)
    assert dump_document(replay(s.log)) == dump_document(s.doc)


def test_a_merge_next_door_leaves_a_checked_proposal_checked(monkeypatch) -> None:
    """The check of a proposal's content keys on the section before it too, since a setext
    heading can join that section's last paragraph: merging the section before invalidated
    every cached check, and a tick of 10,000 due merges on adjacent sections parsed each again
    (0.4 s became 3.5 s). The section before bears on it only when it does not end with a blank
    line."""
    import engine.protocol.decide as decide_module

    s = Session.start("# Plan\n\ntext\n\n## Risk\n\nrisk\n\n## Budget\n\nmoney\n")
    s.join("a1", "a2")
    a1, a2 = Actor.agent("a1"), Actor.agent("a2")
    risk = s.ok({"op": "propose", "sectionId": "sec:plan/risk", "newContent": "## Risk\n\nR\n"}, a1)
    budget = {"op": "propose", "sectionId": "sec:plan/budget", "newContent": "## Budget\n\nB\n"}
    second = s.ok(budget, a1)
    s.ok({"op": "approve", "proposalId": risk.answer()["proposalId"]}, a2)  # risk merges
    parsed: list[str] = []
    real = decide_module.parse_sections
    monkeypatch.setattr(decide_module, "parse_sections", lambda md: parsed.append(md) or real(md))
    s.ok({"op": "approve", "proposalId": second.answer()["proposalId"]}, a2)
    assert parsed == []  # merged with the parts checked when it was proposed
    assert s.doc.markdown().endswith("## Risk\n\nR\n\n## Budget\n\nB\n")
    assert dump_document(replay(s.log)) == dump_document(s.doc)


def test_a_section_before_without_a_blank_line_is_checked_again() -> None:
    """Text the section before ends with, with no blank line after it: a setext heading in
    the content spliced next would join it. The check sees it (and a change to it counts)."""
    s = Session.start("# Plan\n\ntext\n## Risk\n\nrisk\n")
    s.join("a1")
    refused = s.run(
        {"op": "propose", "sectionId": "sec:plan/risk", "newContent": "Risk\n----\n\nx\n"},
        Actor.agent("a1"),
    )
    # Spliced after "text" with no blank line, "Risk" would be part of that paragraph's
    # heading: the content cannot be placed there as written.
    assert isinstance(refused, ProtocolError)
    assert refused.code == "content.invalid" and "setext heading" in refused.description
    # After a blank line the same content is a heading of its own.
    s = Session.start("# Plan\n\ntext\n\n## Risk\n\nrisk\n")
    s.join("a1")
    fine = {"op": "propose", "sectionId": "sec:plan/risk", "newContent": "Risk\n----\n\nx\n"}
    s.ok(fine, Actor.agent("a1"))
