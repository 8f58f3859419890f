"""The leak test: a canary in a Confidential section must reach no reader without clearance,
on any read path, in any event, in any error."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from engine.protocol import views
from engine.protocol.errors import ProtocolError
from engine.protocol.model import Agent

from .conftest import Sim, body

CANARY = "CANARY-7f3a"
LEVELS = ["Public", "Internal", "Confidential"]
SECRET = "sec:plan/secret-canary-7f3a"
DETAIL = SECRET + "/detail"
FAKE = "sec:plan/no-such-section"

DOC = f"""\
# Plan

Intro line.

## Budget

Total: 1M.

## Secret {CANARY}

Hidden {CANARY} figures.

### Detail

Sub detail.

## Risks

Risk text.
"""


def leaks(value: Any) -> bool:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return CANARY.lower() in text.lower()


def dump(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [dump(v) for v in value]
    return value


def world() -> tuple[Sim, dict[str, str]]:
    sim = Sim(DOC, policy="single")
    sim.human("classify", sectionId=SECRET, level="Confidential", levels=LEVELS)
    sim.join("cleared", "public", "peer")
    sim.human("clearance", agent="cleared", level="Confidential")
    sim.human("clearance", agent="peer", level="Confidential")
    sim.human("clearance", agent="public", level="Public")
    refs = {
        "proposal": sim.propose("cleared", SECRET, body(f"Secret {CANARY}", f"More {CANARY}.")),
        "intent": sim.agent("cleared", "intent", sectionId=SECRET, goal=f"hide {CANARY}")[
            "intentId"
        ],
        "constraint": sim.agent(
            "cleared",
            "constrain",
            sectionId=SECRET,
            boundary=f"never {CANARY}",
            category=f"cat {CANARY}",
            reasoning=f"because {CANARY}",
        )["constraintId"],
        "comment": sim.agent("cleared", "comment", sectionId=SECRET, text=f"see {CANARY}")[
            "commentId"
        ],
        "query": sim.agent("cleared", "ask-human", question=f"{CANARY}?", sectionId=SECRET)[
            "queryId"
        ],
    }
    sim.agent("cleared", "lock", sectionId=SECRET, ttlSeconds=60)
    sim.agent("cleared", "salience", sectionId=SECRET, score=9)
    # a merge in the hidden section, adding a subsection
    merged = sim.propose(
        "cleared", DETAIL, body("Detail", f"{CANARY} detail.", 3) + body("More", "x", 4)
    )
    sim.agent("peer", "approve", proposalId=merged)
    refs["merged"] = merged
    sim.agent("cleared", "escalate", sectionId=SECRET, reason=f"{CANARY} needs eyes")
    return sim, refs


def invited(sim: Sim, name: str, mode: str, clearance: str, sections: list[str]) -> None:
    token = sim.human(
        "invite",
        trust="Collaborator",
        clearance=clearance,
        mode=mode,
        sections=sections,
    )["token"]
    sim.agent(name, "join", agentName=name, token=token)


READERS = [
    ("public", None),
    ("scoped", ("SectionScoped", "Public", ["sec:plan/budget"])),
    ("scoped-cleared", ("SectionScoped", "Confidential", ["sec:plan/budget"])),
    ("neighbour", ("Neighbourhood", "Public", ["sec:plan/budget"])),
    ("neighbour-cleared", ("Neighbourhood", "Confidential", ["sec:plan/risks/x"])),
    ("summary", ("SummaryOnly", "Public", [])),
]


def reader_in(
    name: str, spec: tuple[str, str, list[str]] | None
) -> tuple[Sim, dict[str, str], Agent]:
    sim, refs = world()
    if spec is not None:
        mode, clearance, sections = spec
        if name == "neighbour-cleared":
            sim.human(
                "edit",
                sectionId="sec:plan/risks",
                content=body("Risks", "r") + body("X", "x", 3),
                why="w",
            )
        invited(sim, name, mode, clearance, sections)
    return sim, refs, sim.a(name)


@pytest.mark.parametrize(("name", "spec"), READERS)
def test_no_read_path_shows_the_canary(name: str, spec: Any) -> None:
    sim, _, reader = reader_in(name, spec)
    doc = sim.doc
    assert leaks(views.content(doc, None)) and leaks(views.proposals(doc, None).__repr__())
    paths: dict[str, Any] = {
        "content": views.content(doc, reader),
        "section_rows": views.section_rows(doc, reader, sim.now),
        "visible": [s.id + s.title for s in views.visible_sections(doc, reader)],
        "proposals": dump(views.proposals(doc, reader)),
        "open": dump(views.proposals(doc, reader, status="Pending")),
        "merged": dump(views.proposals(doc, reader, status="Merged")),
        "by author": dump(views.proposals(doc, reader, author=sim.a("cleared").id)),
        "intents": views.intents(doc, reader),
        "constraints": views.constraints(doc, reader),
        "briefings": [views.briefing(doc, reader, s) for s in views.visible_sections(doc, reader)],
        "events": [views.redact(doc, reader, e) for e in sim.log],
    }
    for path, shown in paths.items():
        assert not leaks(shown), f"{name}: {path} shows the canary"
    assert SECRET not in {row["sectionId"] for row in paths["section_rows"]}


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


@pytest.mark.parametrize(("name", "spec"), READERS)
@pytest.mark.parametrize("hidden", [SECRET, DETAIL])
def test_a_hidden_section_is_not_found_and_errors_tell_nothing(
    name: str, spec: Any, hidden: str
) -> None:
    sim, _, _ = reader_in(name, spec)
    for (op, fields), (_, fake_fields) in zip(
        section_commands(hidden), section_commands(FAKE), strict=True
    ):
        error = refused(sim, name, op, fields)
        assert error.code == "section.not_found", (op, error.code, error.description)
        # exactly what a section that does not exist would say, but for the id typed
        unknown = refused(sim, name, op, fake_fields)
        assert shown(error).replace(hidden, "ID") == shown(unknown).replace(FAKE, "ID"), op
        assert not leaks(shown(error).replace(hidden, "ID")), op


@pytest.mark.parametrize(("name", "spec"), READERS)
def test_entities_on_a_hidden_section_are_not_found(name: str, spec: Any) -> None:
    sim, refs, _ = reader_in(name, spec)
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
        assert not leaks(shown(error)), op
        assert sim.doc.sequence == before


def test_a_cleared_agent_sees_it_all() -> None:
    sim, _, _ = reader_in("public", None)
    cleared = sim.a("cleared")
    assert leaks(views.content(sim.doc, cleared))
    assert SECRET in {row["sectionId"] for row in views.section_rows(sim.doc, cleared, sim.now)}


def test_organisations_see_only_their_own_sections() -> None:
    sim = Sim(DOC)
    sim.human("classify", sectionId=SECRET, level="Public", organisation="acme", levels=LEVELS)
    for name, org in (("acme-agent", "acme"), ("globex-agent", "globex")):
        token = sim.human(
            "invite", trust="Collaborator", clearance="Confidential", organisation=org
        )["token"]
        sim.agent(name, "join", agentName=name, token=token)
    sim.join("nobody")
    acme = sim.a("acme-agent")
    assert leaks(views.content(sim.doc, acme))
    sim.propose("acme-agent", SECRET, body(f"Secret {CANARY}", f"acme {CANARY}"))
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
