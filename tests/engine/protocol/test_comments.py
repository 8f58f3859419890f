"""Comments on the read paths: whom a comment addresses (``mentions``), the comments of a
section or a proposal through the barriers, in the escalation briefing; and the clearance
reader a redacted export reads through."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.protocol import views
from engine.protocol.errors import InvalidRequest
from engine.protocol.mentions import addressed_to_human, addressees

from .conftest import Sim


@pytest.mark.parametrize(
    ("text", "to"),
    [
        ("@human please look", ("human",)),
        ("ask @human:carol.", ("human:carol",)),
        ("@Human:bob, then @human:bob and @HUMAN!", ("human:bob", "human")),
        ("(@human:ann) or @human?", ("human:ann", "human")),
        ("mail me@human.example", ()),  # an address, not a mention
        ("@humans and @human-resources", ()),  # another word
        ("@carol", ()),  # a bare name addresses nobody: it could be an agent's
        ("no mention", ()),
    ],
)
def test_a_comment_is_addressed_to_the_humans_it_mentions(text: str, to: tuple[str, ...]) -> None:
    assert addressees(text) == to
    assert addressed_to_human(text) == bool(to)


@given(st.text())
def test_any_text_gives_addressees_and_never_an_error(text: str) -> None:
    to = addressees(text)
    assert all(a == "human" or (a.startswith("human:") and len(a) > 6) for a in to)
    assert len(set(to)) == len(to)
    assert addressed_to_human(text) == bool(to)


def test_comments_of_a_section_and_a_proposal_through_the_barriers() -> None:
    sim = Sim()
    sim.join("author", "cleared", "outsider")
    budget, risks = sim.s("sec:plan/budget"), sim.s("sec:plan/risks")
    pid = sim.propose("author", "sec:plan/budget", "## Budget\n\nTotal: 2M.\n")
    on_section = sim.agent("author", "comment", sectionId=budget.id, text="@human: 2M?")
    on_proposal = sim.agent(
        "cleared", "comment", sectionId=budget.id, text="checked", proposalId=pid
    )
    sim.agent("author", "comment", sectionId=risks.id, text="elsewhere")
    sim.human("comment", sectionId=budget.id, text="by the custodian")
    sim.agent("cleared", "resolve-comment", commentId=on_proposal["commentId"])
    doc = sim.doc

    ids = [k.id for k in views.comments(doc, None, section=budget)]
    assert ids[:2] == [on_section["commentId"], on_proposal["commentId"]] and len(ids) == 3
    assert [k.id for k in views.comments(doc, None, proposal=pid)] == [on_proposal["commentId"]]
    assert len(views.comments(doc, None, section=budget, open_only=True)) == 2
    human_row = views.comment_row(doc, views.comments(doc, None, section=budget)[-1])
    assert (human_row["author"], human_row["authorKind"]) == ("carol", "Individual")
    row = views.comment_row(doc, doc.comments[on_section["commentId"]])
    assert (row["author"], row["authorKind"], row["to"]) == ("author", "AiAgent", ["human"])
    assert views.comment_row(doc, doc.comments[on_proposal["commentId"]])["resolvedBy"] == "cleared"

    # Classified above the outsider's clearance: its comments are not the outsider's to read.
    sim.human(
        "classify", sectionId=budget.id, level="Secret", framework="F", levels=["Open", "Secret"]
    )
    sim.human("clearance", agent="cleared", level="Secret")
    outsider, cleared = sim.doc.agent_named("outsider"), sim.doc.agent_named("cleared")
    assert views.comments(sim.doc, outsider, section=budget) == []
    assert views.comments(sim.doc, outsider, proposal=pid) == []
    assert [k.text for k in views.comments(sim.doc, outsider)] == ["elsewhere"]
    assert len(views.comments(sim.doc, cleared, section=budget)) == 3


def test_the_briefing_carries_the_open_comments_of_its_section() -> None:
    sim = Sim()
    sim.join("a", "b")
    budget = sim.s("sec:plan/budget")
    kept = sim.agent("a", "comment", sectionId=budget.id, text="@human:carol look")
    done = sim.agent("a", "comment", sectionId=budget.id, text="old")
    sim.agent("b", "resolve-comment", commentId=done["commentId"])
    sim.agent("a", "comment", sectionId="sec:plan/risks", text="another section")
    found = views.briefing(sim.doc, sim.a("b"), budget)
    assert [(k["commentId"], k["to"]) for k in found["comments"]] == [
        (kept["commentId"], ["human:carol"])
    ]
    # A reader that may not read the section gets none (withheld).
    sim.human(
        "classify", sectionId=budget.id, level="Secret", framework="F", levels=["Open", "Secret"]
    )
    assert views.briefing(sim.doc, sim.a("b"), sim.s(budget.id))["comments"] == []


def test_a_clearance_reader_sees_what_an_agent_of_that_clearance_sees() -> None:
    sim = Sim()
    with pytest.raises(InvalidRequest, match="no classification framework"):
        views.cleared_reader(sim.doc, "Open")
    sim.join("low", "high")
    levels = ["Open", "Secret", "Top"]
    sim.human("classify", sectionId="sec:plan/budget", level="Secret", framework="F", levels=levels)
    sim.human("classify", sectionId="sec:plan/risks", level="Top", framework="F")
    sim.human("clearance", agent="high", level="Secret")
    doc = sim.doc
    for level, agent in (("Open", "low"), ("secret", "high")):
        reader = views.cleared_reader(doc, level)
        assert views.content(doc, reader) == views.content(doc, sim.a(agent))
    assert "Total: 1M." in views.content(doc, views.cleared_reader(doc, "SECRET"))
    assert "Risk text." not in views.content(doc, views.cleared_reader(doc, "Secret"))
    assert "Risk text." in views.content(doc, views.cleared_reader(doc, "Top"))
    with pytest.raises(InvalidRequest, match="'Topmost' is not a level") as refused:
        views.cleared_reader(doc, "Topmost")
    assert refused.value.metadata["levels"] == levels
