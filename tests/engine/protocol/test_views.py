"""Read paths: the section rows' highest salience, from the document's per-section index."""

from __future__ import annotations

from engine.protocol import views
from engine.protocol.document import Document
from engine.protocol.model import DEFAULT_SALIENCE, Section
from engine.protocol.persist import dump_document, restore_document

from .conftest import Sim


def highest_by_definition(doc: Document, section: Section) -> int:
    """The highest salience among the joined agents on ``section`` (5 for one that set none)."""
    return max((doc.salience_of(a.id, section.key) for a in doc.active_agents()), default=0)


def check(doc: Document) -> None:
    by_section: dict[int, dict[str, int]] = {}
    for (agent, key), score in doc.salience.items():
        by_section.setdefault(key, {})[agent] = score
    assert doc.salience_by_section == by_section
    for section in doc.sections:
        assert views.max_salience(doc, section) == highest_by_definition(doc, section)
    rows = views.section_rows(doc, None, 0)
    assert [r["maxSalience"] for r in rows] == [highest_by_definition(doc, s) for s in doc.sections]


def test_max_salience_is_the_highest_among_the_joined_agents() -> None:
    """max_salience asked every joined agent about every section (sections x agents); the
    document now keeps salience by section, and only who set one on it is looked at."""
    sim = Sim()
    assert [views.max_salience(sim.doc, s) for s in sim.doc.sections] == [0] * 5  # nobody
    sim.join("a", "b", "c", "d")
    check(sim.doc)
    assert views.max_salience(sim.doc, sim.s("sec:plan")) == DEFAULT_SALIENCE
    for name in ("a", "b", "c", "d"):  # every agent below the default on the budget
        sim.agent(name, "salience", sectionId="sec:plan/budget", score=2)
    sim.agent("a", "salience", sectionId="sec:plan/scope", score=9)
    sim.agent("b", "salience", sectionId="sec:plan/scope", score=0)
    sim.agent("c", "salience", sectionId="sec:plan/risks", score=10)
    check(sim.doc)
    assert views.max_salience(sim.doc, sim.s("sec:plan/budget")) == 2
    sim.agent("c", "leave")  # its 10 no longer counts
    sim.agent("a", "salience", sectionId="sec:plan/scope", score=1)  # lowered
    check(sim.doc)
    assert views.max_salience(sim.doc, sim.s("sec:plan/risks")) == DEFAULT_SALIENCE
    assert views.max_salience(sim.doc, sim.s("sec:plan/scope")) == DEFAULT_SALIENCE
    sim.advance(301)
    sim.agent("c", "join", agentName="c")  # a new c; the others, silent, are evicted
    assert sorted(sim.doc.active) == ["c"]
    check(sim.doc)
    assert views.max_salience(sim.doc, sim.s("sec:plan/risks")) == DEFAULT_SALIENCE
    # The index is rebuilt by a replay and by a checkpoint's restore alike.
    check(sim.replayed())
    restored = restore_document(dump_document(sim.doc))
    check(restored)
    assert restored.salience_by_section == sim.doc.salience_by_section
