"""The leak test: a canary in a Confidential section owned by one organisation must reach no
reader that may not read it, on any read path (the briefing and the invited drafter too), in any
event, in any error; and a reader that may read it gets it. Readers: every context mode x
clearance x organisation (``tests/barrier_world.py``)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from engine.protocol import views
from engine.protocol.barriers import reads
from engine.protocol.errors import ProtocolError
from tests.barrier_world import (
    CONTENT_CANARY,
    DETAIL,
    DOC,
    DRAFTER,
    ELSEWHERE,
    LEVELS,
    ORG,
    READERS,
    SECRET,
    TITLE_CANARY,
    Reader,
    World,
    allowed,
    build,
    found,
    leaked,
)

from .conftest import Sim, body

FAKE = "sec:plan/no-such-section"


def leaks(value: Any) -> bool:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return bool(found(text))


def dump(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [dump(v) for v in value]
    return value


def world() -> tuple[Sim, World]:
    sim = Sim(DOC, policy="single", strategy="human-escalate")
    return sim, build(sim, lambda: list(sim.doc.conflicts))


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(dump(value), default=str)


def read_paths(sim: Sim, reader: Any) -> dict[str, Any]:
    """Everything the engine's views give ``reader`` (None: the custodian)."""
    doc = sim.doc
    seen = views.visible_sections(doc, reader)
    drafters = {s.id: views.invited_drafter(doc, s) for s in seen}
    return {
        "content": views.content(doc, reader),
        "section_rows": views.section_rows(doc, reader, sim.now),
        "visible": [s.id + s.title for s in seen],
        "proposals": dump(views.proposals(doc, reader)),
        "open": dump(views.proposals(doc, reader, status="Pending")),
        "conflict": dump(views.proposals(doc, reader, status="Conflict")),
        "merged": dump(views.proposals(doc, reader, status="Merged")),
        "by author": dump(views.proposals(doc, reader, author=sim.a("cleared").id)),
        "by section": [dump(views.proposals(doc, reader, section=s, open_only=True)) for s in seen],
        "intents": views.intents(doc, reader),
        "constraints": views.constraints(doc, reader),
        "briefings": [views.briefing(doc, reader, s) for s in seen],
        # the drafter the reader may be told of: only on a section it may read
        "drafters": {
            i: a.name for i, a in drafters.items() if a and reads(doc, reader, doc.by_id[i])
        },
        "events": [views.redact(doc, reader, e) for e in sim.log],
    }


@pytest.mark.parametrize("spec", READERS, ids=lambda r: r.name)
def test_no_read_path_shows_the_canary(spec: Reader) -> None:
    sim, made = world()
    reader = sim.a(spec.name)
    assert (reader.mode, reader.clearance, reader.organisation) == (
        spec.mode,
        spec.clearance if spec.invited else "Public",
        spec.organisation,
    )
    assert spec.sees == any(s.id == SECRET for s in views.visible_sections(sim.doc, reader))
    paths = read_paths(sim, reader)
    for path, shown in paths.items():
        assert not leaked(spec, text_of(shown), made), f"{spec.name}: {path} shows it"
    # ... and what it may get, it gets (the canaries are really there).
    assert found(text_of(paths)) == allowed(spec)
    assert found(text_of(read_paths(sim, None))) == {"title", "content"}
    if spec.reads:
        [briefing] = [b for b in paths["briefings"] if b["sectionId"] == SECRET]
        assert CONTENT_CANARY in briefing["escalated"]["reason"]
        assert [q["queryId"] for q in briefing["questions"]] == [made.refs["query"]]
        assert len(briefing["conflicts"]) == 1
        assert briefing["drafter"] == DRAFTER


def test_only_an_agent_that_may_read_a_section_is_invited_to_draft_it() -> None:
    """The first agent to register (``public``) may not see the hidden section: ties on
    salience go to registration order among the agents that may read it."""
    sim, _ = world()
    doc = sim.doc
    drafter = views.invited_drafter(doc, sim.s(SECRET))
    assert drafter is not None and drafter.name == DRAFTER
    assert views.briefing(doc, None, sim.s(SECRET))["drafter"] == DRAFTER
    for section in doc.sections:
        invited = views.invited_drafter(doc, section)
        assert invited is None or reads(doc, invited, section), section.id


def test_a_summary_only_agent_gets_nothing_said_about_a_section_it_sees() -> None:
    """It knows the section exists (id, title, version, the escalated mark), its briefing is
    withheld, and every command on it is refused as ``classification.access_denied``."""
    sim, made = world()
    [spec] = [r for r in READERS if r.sees and not r.reads]
    reader = sim.a(spec.name)
    briefing = views.briefing(sim.doc, reader, sim.s(SECRET))
    assert briefing == {
        "sectionId": SECRET,
        "withheld": True,
        "escalated": None,
        "intents": [],
        "constraints": [],
        "questions": [],
        "conflicts": [],
        "comments": [],
        "drafter": None,
    }
    [row] = [r for r in views.section_rows(sim.doc, reader, sim.now) if r["sectionId"] == SECRET]
    assert row["escalated"] and row["title"] == f"Secret {TITLE_CANARY}" and row["pending"] == 0
    for op, fields in section_commands(SECRET):
        if op in ("salience", "unlock"):  # how much it cares; a lock it holds: not reads
            continue
        error = refused(sim, spec.name, op, fields)
        assert error.code == "classification.access_denied", (op, error.code)
        assert not leaked(spec, shown(error), made), op


def section_commands(section_id: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("propose", {"sectionId": section_id, "newContent": body("Secret", "mine")}),
        ("lock", {"sectionId": section_id, "ttlSeconds": 5}),
        ("unlock", {"sectionId": section_id}),
        ("intent", {"sectionId": section_id, "goal": "g"}),
        ("constrain", {"sectionId": section_id, "boundary": "b"}),
        ("salience", {"sectionId": section_id, "score": 3}),
        ("escalate", {"sectionId": section_id, "reason": "r"}),
        ("comment", {"sectionId": section_id, "text": "t"}),
        ("ask-human", {"question": "q", "sectionId": section_id}),
    ]


def refused(sim: Sim, name: str, op: str, fields: dict[str, Any]) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        sim.agent(name, op, **fields)
    return caught.value


def shown(error: ProtocolError) -> str:
    return json.dumps([str(error), error.description, error.wire(), error.metadata], default=str)


UNSEEN = [r for r in READERS if not r.sees]
UNREAD = [r for r in READERS if not r.reads]


@pytest.mark.parametrize("spec", UNSEEN, ids=lambda r: r.name)
@pytest.mark.parametrize("hidden", [SECRET, DETAIL])
def test_a_hidden_section_is_not_found_and_errors_tell_nothing(spec: Reader, hidden: str) -> None:
    sim, made = world()
    name = spec.name
    for (op, fields), (_, fake_fields) in zip(
        section_commands(hidden), section_commands(FAKE), strict=True
    ):
        error = refused(sim, name, op, fields)
        assert error.code == "section.not_found", (op, error.code, error.description)
        # exactly what a section that does not exist would say, but for the id typed
        unknown = refused(sim, name, op, fake_fields)
        assert shown(error).replace(hidden, "ID") == shown(unknown).replace(FAKE, "ID"), op
        assert not leaked(spec, shown(error).replace(hidden, "ID"), made), op


@pytest.mark.parametrize("spec", UNREAD, ids=lambda r: r.name)
def test_entities_on_a_hidden_section_are_not_found(spec: Reader) -> None:
    sim, made = world()
    name, refs = spec.name, made.refs
    commands = [
        ("approve", {"proposalId": refs["proposal"]}, "proposal.not_found"),
        ("reject", {"proposalId": refs["proposal"], "reason": "r"}, "proposal.not_found"),
        ("object", {"proposalId": refs["proposal"], "reason": "r"}, "proposal.not_found"),
        ("withdraw", {"proposalId": refs["proposal"]}, "proposal.not_found"),
        ("revert", {"proposalId": refs["merged"]}, "proposal.not_found"),
        ("object", {"intentId": refs["intent"], "reason": "r"}, "entity.not_found"),
        ("object", {"constraintId": refs["constraint"], "reason": "r"}, "entity.not_found"),
        ("withdraw-constraint", {"constraintId": refs["constraint"]}, "entity.not_found"),
        ("resolve-comment", {"commentId": refs["comment"]}, "entity.not_found"),
    ]
    for op, fields, code in commands:
        before = sim.doc.sequence
        error = refused(sim, name, op, fields)
        assert error.code == code, (op, error.code, error.description)
        # the id it typed comes back; nothing else of the hidden section does
        typed = next(v for v in fields.values() if v in made.hidden_ids)
        assert not leaked(spec, shown(error).replace(typed, "ID"), made), op
        assert sim.doc.sequence == before


def test_a_cleared_agent_sees_it_all() -> None:
    sim, _ = world()
    cleared = sim.a("cleared")
    assert found(views.content(sim.doc, cleared)) == {"title", "content"}
    assert SECRET in {row["sectionId"] for row in views.section_rows(sim.doc, cleared, sim.now)}


def test_organisations_see_only_their_own_sections() -> None:
    sim = Sim(DOC)
    sim.human("classify", sectionId=SECRET, level="Public", organisation=ORG, levels=LEVELS)
    for name, org in (("acme-agent", ORG), ("globex-agent", "globex")):
        token = sim.human(
            "invite", trust="Collaborator", clearance="Confidential", organisation=org
        )["token"]
        sim.agent(name, "join", agentName=name, token=token)
    sim.join("nobody")
    acme = sim.a("acme-agent")
    assert leaks(views.content(sim.doc, acme))
    sim.propose("acme-agent", SECRET, body("Secret x", f"acme {CONTENT_CANARY}"))
    for name in ("globex-agent", "nobody"):
        reader = sim.a(name)
        assert not leaks(views.content(sim.doc, reader))
        assert not leaks(views.section_rows(sim.doc, reader, sim.now))
        assert not leaks([views.redact(sim.doc, reader, e) for e in sim.log])
        error = refused(sim, name, "lock", {"sectionId": SECRET, "ttlSeconds": 5})
        assert error.code == "section.not_found"


def test_invite_tokens_are_stored_only_as_hashes_expire_and_are_single_use() -> None:
    sim = Sim()
    sim.human("classify", sectionId="sec:plan", level="Public", levels=LEVELS)
    first = sim.human("invite", trust="Suggester", clearance="Internal", ttlSeconds=60)["token"]
    second = sim.human("invite", ttlSeconds=60)["token"]
    log = json.dumps(sim.log)
    assert first not in log and second not in log
    assert first.split("_")[-1] not in log
    sim.agent("a", "join", agentName="a", token=first)
    assert (sim.a("a").trust, sim.a("a").clearance) == ("Suggester", "Internal")
    error = sim.refused("b", "join", "auth.unauthorized", agentName="b", token=first)
    assert first not in shown(error)
    sim.refused("b", "join", "auth.unauthorized", agentName="b", token="pact_made_up")
    sim.advance(60)
    sim.refused("c", "join", "auth.unauthorized", agentName="c", token=second)
    assert first not in json.dumps(sim.log) and second not in json.dumps(sim.log)
    # an agent never sees the invite's event payload
    shown_to_a = [views.redact(sim.doc, sim.a("a"), e) for e in sim.log]
    assert all("tokenHash" not in e["payloadJson"] for e in shown_to_a)


def test_redaction_does_not_depend_on_who_read_a_payload_first() -> None:
    """``redact`` keeps what it read of a payload, and the text an agent is shown of it, for
    its next readers (a page of events is redacted for each agent that polls it): a
    constraint's reasoning is never shown to an agent and its category only from disclosure 2,
    a section the reader may not read withholds the payload, and the custodian sees it all,
    whoever read first and however often."""
    sim = Sim(DOC)
    sim.join("a", "b")
    sim.agent("a", "constrain", sectionId=ELSEWHERE, boundary="b", category="c", reasoning="r")
    sim.agent("a", "constrain", sectionId=SECRET, boundary="b2", category="c2", reasoning="r2")
    sim.human("classify", sectionId=SECRET, level="Confidential", levels=LEVELS)
    b = dataclasses.replace(sim.a("b"), disclosure=2)
    public, secret = (e for e in sim.log if e["eventType"] == "pact.constraint.published")
    for _ in range(2):  # the second round from what was kept
        for reader in (sim.a("a"), b, None):
            shown = json.loads(views.redact(sim.doc, reader, public)["payloadJson"])
            assert ("reasoning" in shown) == (reader is None)
            assert ("category" in shown) == (reader is not sim.a("a"))
            assert shown["boundary"] == "b"
            hidden = views.redact(sim.doc, reader, secret)
            if reader is None:
                assert hidden == secret
            else:
                assert json.loads(hidden["payloadJson"]) == {"withheld": True}
                assert hidden["sectionId"] is None
