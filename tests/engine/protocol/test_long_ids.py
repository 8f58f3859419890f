"""Section ids stay within the 256 characters v0.3 allows a ``sectionId`` (``event.json`` and
every request schema), however long the headings: each section stays addressable."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.protocol.commands import Actor, parse_command
from engine.protocol.sections import MAX_ID, parse_sections

from .conftest import Session, Validate, replay

LONG = " ".join(f"word{i}" for i in range(60))  # a slug of 400 characters
HUMAN = Actor.human("carol")

# Headings at every level, each too long for an id on its own; siblings whose slugs agree for
# hundreds of characters; exact duplicates; a heading that skips levels.
DEEP = f"""Intro.

# {LONG}

## {LONG} a

### {LONG}

#### {LONG}

##### {LONG}

###### {LONG}

###### {LONG}

###### {LONG} tail

## {LONG} b

#### {LONG} skipped a level

## Line Items
"""


def test_every_section_of_a_document_with_very_long_headings_is_addressable(
    schema: Validate,
) -> None:
    """A heading gave an id as long as its slug path: past 256 characters, no command could
    name the section (the field is capped at 256, as v0.3's schemas cap it)."""
    s = Session.start(DEEP)
    sections = s.doc.sections
    ids = [section.id for section in sections]
    assert ids == [section.id for section in parse_sections(DEEP)]
    assert len(set(ids)) == len(ids)
    assert max(map(len, ids)) <= MAX_ID
    assert [section.level for section in sections] == [0, 1, 2, 3, 4, 5, 6, 6, 6, 2, 4, 2]
    assert ids[-1] == f"{ids[1]}/line-items"  # an ordinary heading keeps its spec id
    s.join("a1")
    a1 = Actor.agent("a1")
    for section in sections:
        for body in (
            {"op": "salience", "sectionId": section.id, "score": 7},
            {"op": "intent", "sectionId": section.id, "goal": "keep it short"},
            {"op": "constrain", "sectionId": section.id, "boundary": "no more words"},
            {"op": "ask-human", "question": "ok?", "sectionId": section.id},
        ):
            schema(
                f"{body['op'].replace('constrain', 'constraint')}-request",
                parse_command(body).request(),
            )
            s.ok(body, a1)
        s.ok({"op": "lock", "sectionId": section.id, "ttlSeconds": 5}, a1)
        s.ok({"op": "unlock", "sectionId": section.id}, a1)
    deepest = sections[8]
    heading = "#" * deepest.level + " " + deepest.title
    proposal = {"op": "propose", "sectionId": deepest.id, "newContent": f"{heading}\n\nNew.\n"}
    schema("proposal-request", parse_command(proposal).request())
    s.ok(proposal, a1)
    for event in s.log:
        schema("event", event)
    assert [x.id for x in replay(s.log).sections] == ids


def test_a_merge_that_lengthens_a_title_keeps_every_id_addressable(schema: Validate) -> None:
    s = Session.start("# Plan\n\n## Risk\n\n### Detail\n")
    edit = {"op": "edit", "sectionId": "sec:plan", "content": f"# Plan {LONG}\n", "why": "x"}
    s.ok(edit, HUMAN)
    ids = [section.id for section in s.doc.sections]
    assert max(map(len, ids)) <= MAX_ID
    assert ids == [section.id for section in parse_sections(s.doc.markdown())]
    deepest = s.doc.sections[-1]
    content = f"### Detail\n\nMore.\n\n#### {LONG}\n"
    s.ok({"op": "edit", "sectionId": deepest.id, "content": content, "why": "y"}, HUMAN)
    assert max(len(section.id) for section in s.doc.sections) <= MAX_ID
    for section in s.doc.sections:
        s.ok({"op": "escalate", "sectionId": section.id, "reason": "look"}, HUMAN)
    for event in s.log:
        schema("event", event)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    headings=st.lists(
        st.tuples(st.integers(1, 6), st.sampled_from(["", " x", " y", " " + LONG[:150]])),
        min_size=1,
        max_size=40,
    )
)
def test_ids_stay_short_and_unique_whatever_the_headings(
    headings: list[tuple[int, str]],
) -> None:
    markdown = "".join(f"{'#' * level} {LONG}{extra}\n\n" for level, extra in headings)
    ids = [section.id for section in parse_sections(markdown)]
    assert len(set(ids)) == len(ids)
    assert max(map(len, ids)) <= MAX_ID


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("# Budget\n\n## Line Items\n", ["sec:_root", "sec:budget", "sec:budget/line-items"]),
        ("# A\n\n# A\n\n# A-2\n", ["sec:_root", "sec:a", "sec:a-2", "sec:a-2-2"]),
    ],
)
def test_ordinary_ids_are_the_spec_ids(markdown: str, expected: list[str]) -> None:
    assert [section.id for section in parse_sections(markdown)] == expected
