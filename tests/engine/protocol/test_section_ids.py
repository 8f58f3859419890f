"""A section id is an identity (issue 24, bug 9; ../shared/spec/collaboration.md, "Documents").

A section keeps its id through every merge, edit and revert while its heading path stays the
same; a new sibling whose slug is taken gets the first free suffix, wherever it lands; an id
still valid as an alias of a renamed (or moved) section is not free either. Live, replayed and
restored documents give the same ids.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine.protocol.commands import Actor
from engine.protocol.decide import Decision
from engine.protocol.document import Document
from engine.protocol.errors import ProtocolError
from engine.protocol.persist import dump_document, restore_document
from engine.protocol.sections import (
    ROOT,
    fits,
    parse_sections,
    section_content,
    sibling_ids,
    slug,
)
from pact_tui.demo import MEMO

from .conftest import Session, replay

HUMAN = Actor.human("carol")
LEGAL, FINANCE = Actor.agent("legal"), Actor.agent("finance")
# The demo's revision of Risk (pact_tui.demo.memo_step): the heading, a line, and a
# ``## Mitigation`` it means to keep, which makes a second Mitigation before the first.
RISK_REVISION = "# Risk\n\nRevised in round 3 by legal.\n\n## Mitigation\n\nKept.\n"


def ids(doc: Document) -> list[str]:
    return [section.id for section in doc.sections]


def test_the_demos_risk_revision_leaves_the_first_mitigation_its_id() -> None:
    """demo --live: a merged Risk revision added a second ``## Mitigation``; the new one took
    sec:risk/mitigation and the original became sec:risk/mitigation-2, so the lock, the
    salience and the open proposal aimed at the original pointed at the new text."""
    s = Session.start(MEMO)
    s.join("legal", "finance")
    original = s.doc.by_id["sec:risk/mitigation"]
    s.ok({"op": "lock", "sectionId": "sec:risk/mitigation", "ttlSeconds": 60}, FINANCE)
    s.ok({"op": "salience", "sectionId": "sec:risk/mitigation", "score": 9}, FINANCE)
    hedge = {"op": "propose", "sectionId": "sec:risk/mitigation"}
    pending = s.ok({**hedge, "newContent": "## Mitigation\n\nHedge half.\n"}, FINANCE)
    revision = s.ok({"op": "propose", "sectionId": "sec:risk", "newContent": RISK_REVISION}, LEGAL)
    merged = s.ok({"op": "approve", "proposalId": revision.answer()["proposalId"]}, FINANCE)
    assert merged.answer()["status"] == "Merged"

    assert ids(s.doc) == [
        ROOT,
        "sec:summary",
        "sec:risk",
        "sec:risk/mitigation-2",  # the new one, first in document order
        "sec:risk/mitigation",  # the original keeps its id
        "sec:budget",
        "sec:budget/line-items",
        "sec:financials",
    ]
    assert s.doc.by_id["sec:risk/mitigation"] is original
    assert original.content == "## Mitigation\n\nNone yet.\n\n"
    assert s.doc.by_id["sec:risk/mitigation-2"].content == "## Mitigation\n\nKept.\n\n"
    assert s.doc.aliases == {}  # nothing was renamed
    # What was aimed at the original still is, by its id.
    assert original.lock is not None and original.lock.holder == s.doc.active["finance"]
    assert s.doc.salience_of(s.doc.active["finance"], original.key) == 9
    approved = s.ok({"op": "approve", "proposalId": pending.answer()["proposalId"]}, LEGAL)
    assert approved.answer()["sectionId"] == "sec:risk/mitigation"
    assert original.content == "## Mitigation\n\nHedge half.\n\n"
    # A third Mitigation takes the next free suffix; the two before keep theirs.
    again = s.ok({"op": "propose", "sectionId": "sec:risk", "newContent": RISK_REVISION}, LEGAL)
    s.ok({"op": "approve", "proposalId": again.answer()["proposalId"]}, FINANCE)
    assert ids(s.doc)[3:6] == [
        "sec:risk/mitigation-3",
        "sec:risk/mitigation-2",
        "sec:risk/mitigation",
    ]
    assert s.doc.by_id["sec:risk/mitigation"] is original
    # Replayed and restored: the same ids.
    assert ids(replay(s.log)) == ids(s.doc)
    assert dump_document(replay(s.log)) == dump_document(s.doc)
    assert ids(restore_document(dump_document(s.doc))) == ids(s.doc)


def test_a_renamed_section_takes_the_first_free_name_and_its_old_id_stays_its_alias() -> None:
    s = Session.start("# P\n\n## A\n\n## A\n\n### Sub\n")
    first, second = s.doc.by_id["sec:p/a"], s.doc.by_id["sec:p/a-2"]
    s.ok({"op": "edit", "sectionId": "sec:p/a", "content": "## B\n", "why": "rename"}, HUMAN)
    assert ids(s.doc) == [ROOT, "sec:p", "sec:p/b", "sec:p/a-2", "sec:p/a-2/sub"]
    assert s.doc.by_id["sec:p/a-2"] is second  # not moved up to the freed sec:p/a
    # A new A may not take sec:p/a while it is the renamed section's alias.
    s.ok({"op": "edit", "sectionId": "sec:p", "content": "# P\n\n## A\n", "why": "x"}, HUMAN)
    assert ids(s.doc) == [ROOT, "sec:p", "sec:p/a-3", "sec:p/b", "sec:p/a-2", "sec:p/a-2/sub"]
    assert s.doc.section("sec:p/a") is first
    # Renamed back, it takes its old id again (its own alias); its new name stays its alias.
    s.ok({"op": "edit", "sectionId": "sec:p/b", "content": "## A\n", "why": "back"}, HUMAN)
    assert ids(s.doc) == [ROOT, "sec:p", "sec:p/a-3", "sec:p/a", "sec:p/a-2", "sec:p/a-2/sub"]
    assert s.doc.by_id["sec:p/a"] is first and s.doc.section("sec:p/b") is first
    assert ids(replay(s.log)) == ids(s.doc)


def test_a_heading_moved_under_a_new_parent_keeps_its_old_id_from_new_sections() -> None:
    """``# A`` / ``### C``: content ``# A``, ``### C``, ``## B`` makes a new C under A and puts
    the old C under B. The old C's id changes (its path did) and stays its alias: the new C
    may not take sec:a/c, which would make the old id lead to the new text."""
    s = Session.start("# A\n\n### C\n\nold\n")
    old_c = s.doc.by_id["sec:a/c"]
    content = "# A\n\n### C\n\nnew\n\n## B\n"
    s.ok({"op": "edit", "sectionId": "sec:a", "content": content, "why": "x"}, HUMAN)
    assert ids(s.doc) == [ROOT, "sec:a", "sec:a/c-2", "sec:a/b", "sec:a/b/c"]
    assert s.doc.by_id["sec:a/b/c"] is old_c
    assert s.doc.section("sec:a/c") is old_c


def test_fits_and_sibling_ids() -> None:
    assert fits("sec:a", None, 1, "A") and fits("sec:a-7", None, 1, "A")
    assert fits("sec:x/a-2", "sec:x", 2, "A 2")  # the slug a-2, bare
    assert not fits("sec:a-07", None, 1, "A") and not fits("sec:a-1", None, 1, "A")
    assert not fits("sec:a", None, 1, "B") and not fits("sec:x/a", "sec:y", 2, "A")
    assert not fits("sec:x/a", None, 1, "A")
    long = "word " * 80  # cut to fit: numbered after the cut
    (first, second) = (s.id for s in parse_sections(f"# {long}\n# {long}\n")[1:])
    assert fits(first, None, 1, long) and fits(second, None, 1, long)
    rows = [(0, "", 1, "A"), (1, "sec:a", 1, "A"), (2, "", 1, "A"), (3, "sec:b", 1, "A")]
    assert sibling_ids(None, rows) == ["sec:a-2", "sec:a", "sec:a-3", "sec:a-4"]
    assert sibling_ids(None, rows, {"sec:a-2": 9}) == ["sec:a-3", "sec:a", "sec:a-4", "sec:a-5"]
    assert sibling_ids(None, rows, {"sec:a-2": 3}) == ["sec:a-3", "sec:a", "sec:a-4", "sec:a-2"]


# -- the property --------------------------------------------------------------------------------
# Titles that collide: duplicates, a title like a duplicate's number, one with no slug.
TITLES = ("Mitigation", "Mitigation 2", "Risk", "A", "a", "A-2", "???")
START = "intro\n\n# Risk\n\n## Mitigation\n\nNone.\n\n# A\n\n## A\n\n### Mitigation\n"


def heading(level: int, title: str) -> str:
    return f"{'#' * level} {title}\n\nbody\n"


@st.composite
def merge(draw: st.DrawFn, doc: Document) -> dict[str, Any]:
    """A structural change to one section: new subsections (duplicates likely), a new title,
    a revert of an earlier merge, or the section's own text put back as it was."""
    sections = [s for s in doc.sections if s.level > 0]
    section = draw(st.sampled_from(sections))
    kind = draw(st.sampled_from(["add", "rename", "revert", "same"]))
    title = section.title
    subsections = ""
    if kind == "rename":
        title = draw(st.sampled_from(TITLES))
    if kind == "add" and section.level < 6:
        levels = st.integers(section.level + 1, min(section.level + 2, 6))
        new = draw(st.lists(st.tuples(levels, st.sampled_from(TITLES)), min_size=1, max_size=3))
        subsections = "\n" + "".join(heading(level, t) for level, t in new)
    if kind == "revert":
        merged = [p for p in doc.proposals.values() if p.status == "Merged"]
        if merged:
            return {"op": "revert", "proposalId": draw(st.sampled_from(merged)).id}
    body = section.content.split("\n", 1)[1] if "\n" in section.content else ""
    content = f"{'#' * section.level} {title}\n{body.rstrip()}\n{subsections}"
    return {"op": "propose", "sectionId": section.id, "newContent": content}


def check(doc: Document, seen: dict[str, int], paths: dict[int, tuple[str, ...]]) -> None:
    """Ids unique and of their heading path; a section's id changed only where its path did
    (its parent, its parent's id or its title's slug); every id ever given still names its
    section, as its id or as an alias (the clock does not move, so no alias expires)."""
    assert len(doc.by_id) == len(doc.sections) == len(set(ids(doc)))
    assert doc.sections[0].id == ROOT
    now: dict[int, tuple[str, ...]] = {}
    for section in doc.sections[1:]:
        parent = doc.by_key[section.parent].id if section.parent is not None else ""
        assert fits(section.id, parent or None, section.level, section.title), section.id
        path = (parent, str(section.parent), slug(section.title))
        was = paths.get(section.key)
        if was is not None and was[1:] == path:
            assert section.id == was[0], f"{was[0]} became {section.id}, its path unchanged"
        now[section.key] = (section.id, *path)
    paths.clear()
    paths.update(now)
    for section_id, key in seen.items():
        found = doc.section(section_id)
        assert found is not None and found.key == key, section_id
    for section in doc.sections:
        seen.setdefault(section.id, section.key)
    markdown = doc.markdown()  # the structure stays what the Markdown says
    parsed = parse_sections(markdown)
    assert [(s.title, s.level) for s in parsed] == [(s.title, s.level) for s in doc.sections]
    assert [section_content(markdown, s) for s in parsed] == [s.content for s in doc.sections]


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_no_surviving_section_ever_changes_its_id(data: st.DataObject) -> None:
    s = Session.start(START)
    s.join("legal", "finance")
    seen: dict[str, int] = {}
    paths: dict[int, tuple[str, ...]] = {}
    check(s.doc, seen, paths)
    for _ in range(data.draw(st.integers(1, 12), label="merges")):
        command = data.draw(merge(s.doc), label="merge")
        made = s.run(command, LEGAL)
        event(f"{command['op']}: {made.code if isinstance(made, ProtocolError) else 'made'}")
        if isinstance(made, ProtocolError):
            continue  # e.g. a revert whose later changes overlap
        assert isinstance(made, Decision)
        # A human force-merges it at once, so the clock never moves.
        why = {"why": "test"}
        s.ok({"op": "force-merge", "proposalId": made.answer()["proposalId"], **why}, HUMAN)
        check(s.doc, seen, paths)
    assert dump_document(replay(s.log)) == dump_document(s.doc)
    restored = restore_document(dump_document(s.doc))
    assert ids(restored) == ids(s.doc) and restored.aliases == s.doc.aliases
