"""Sections of a Markdown document: ids, line ranges, checked and re-verified replacement."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine.protocol.errors import InvalidContent, SectionNotFound
from engine.protocol.sections import (
    ROOT,
    Section,
    check_content,
    content_at,
    parse_sections,
    replace_section,
    section_content,
    slug,
)

# The example tree of the PACT v0.3 description ("Section Addressing").
SPEC_TREE = """\
# Introduction
## Background
## Goals
# Budget
## Line Items
### Personnel
"""


def ids(markdown: str) -> list[str]:
    return [section.id for section in parse_sections(markdown)]


def section(markdown: str, section_id: str) -> Section:
    return next(s for s in parse_sections(markdown) if s.id == section_id)


# -- ids and slugs -------------------------------------------------------------------------------


def test_the_spec_example_tree() -> None:
    sections = parse_sections(SPEC_TREE)
    assert [(s.id, s.parent, s.level) for s in sections] == [
        (ROOT, None, 0),
        ("sec:introduction", None, 1),
        ("sec:introduction/background", "sec:introduction", 2),
        ("sec:introduction/goals", "sec:introduction", 2),
        ("sec:budget", None, 1),
        ("sec:budget/line-items", "sec:budget", 2),
        ("sec:budget/line-items/personnel", "sec:budget/line-items", 3),
    ]


def test_six_levels_nest_into_one_path() -> None:
    doc = "# A\n## B\n### C\n#### D\n##### E\n###### F\n"
    assert ids(doc)[-1] == "sec:a/b/c/d/e/f"
    assert [s.level for s in parse_sections(doc)] == [0, 1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Line Items", "line-items"),
        ("snake_case title", "snake-case-title"),
        ("  Hello,   World!  ", "hello-world"),
        ("2024 Q1: Budget (draft)", "2024-q1-budget-draft"),
        ("C++ & C#", "c-c"),
        ("---x---", "x"),
        ("Café Ünïcode", "caf-ncode"),
        ("a\tb", "a-b"),  # any whitespace counts as a space (a decision of this project)
        ("The `x` *y*", "the-x-y"),
        ("Привет", "section"),  # nothing left: "section"
        ("?!", "section"),
        ("", "section"),
    ],
)
def test_slug(title: str, expected: str) -> None:
    assert slug(title) == expected


@given(st.text(max_size=40))
def test_a_slug_is_always_a_clean_id_part(title: str) -> None:
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug(title))


def test_sibling_duplicates_are_numbered_in_order() -> None:
    assert ids("# A\n# a\n# A!\n") == [ROOT, "sec:a", "sec:a-2", "sec:a-3"]


def test_duplicates_count_per_parent() -> None:
    doc = "# X\n## Notes\n## Notes\n# Y\n## Notes\n"
    assert ids(doc)[1:] == ["sec:x", "sec:x/notes", "sec:x/notes-2", "sec:y", "sec:y/notes"]


def test_a_numbered_suffix_taken_by_a_sibling_is_skipped() -> None:
    assert ids("# A\n# A-2\n# A\n") == [ROOT, "sec:a", "sec:a-2", "sec:a-3"]


def test_empty_slugs_are_sections_too() -> None:
    assert ids("# ???\n#\n## Привет\n") == [
        ROOT,
        "sec:section",
        "sec:section-2",
        "sec:section-2/section",
    ]


def test_title_is_the_inline_source_as_written() -> None:
    (_, heading) = parse_sections("##   The `x` *y*   ##\n")
    assert (heading.title, heading.id, heading.level) == ("The `x` *y*", "sec:the-x-y", 2)


def test_headings_in_code_html_quotes_and_lists_are_not_sections() -> None:
    doc = (
        "# A\n"
        "```\n# fenced\n```\n"
        "~~~md\n## tilde fenced\n~~~\n"
        "\n    # indented code\n\n"
        "<div>\n# in html\n</div>\n\n"
        "> # quoted\n\n"
        "- # listed\n\n"
        "## B\n"
    )
    sections = parse_sections(doc)
    assert [s.id for s in sections] == [ROOT, "sec:a", "sec:a/b"]
    assert sections[1].end == sections[2].start == doc.split("\n").index("## B")


def test_setext_headings() -> None:
    doc = "Title\n=====\ntext\n\nSub Part\n--------\nmore\n"
    _, title, sub = parse_sections(doc)
    assert (title.id, title.level, title.start, title.end) == ("sec:title", 1, 0, 4)
    assert (sub.id, sub.level, sub.parent, sub.start, sub.end) == (
        "sec:title/sub-part",
        2,
        "sec:title",
        4,
        7,
    )
    assert section_content(doc, sub) == "Sub Part\n--------\nmore\n"


def test_a_two_line_setext_title_slugs_its_line_break_as_a_space() -> None:
    (_, heading) = parse_sections("Long\ntitle\n====\n")
    assert (heading.title, heading.id) == ("Long\ntitle", "sec:long-title")


def test_root_holds_the_text_before_the_first_heading() -> None:
    doc = "intro\n\n# A\nbody\n"
    root, a = parse_sections(doc)
    assert (root.id, root.title, root.level, root.parent, root.start, root.end) == (
        ROOT,
        "",
        0,
        None,
        0,
        2,
    )
    assert section_content(doc, root) == "intro\n\n"
    assert section_content(doc, a) == "# A\nbody\n"


def test_root_is_empty_when_the_document_starts_with_a_heading() -> None:
    root, _ = parse_sections("# A\n")
    assert (root.start, root.end) == (0, 0)
    assert content_at("# A\n", ROOT) == ""
    assert parse_sections("") == [Section(ROOT, "", 0, None, 0, 0)]


def test_skipped_levels_nest_under_the_nearest_lower_level() -> None:
    doc = "# A\n### C\n## B\n#### D\n# E\n"
    assert [(s.id, s.parent) for s in parse_sections(doc)[1:]] == [
        ("sec:a", None),
        ("sec:a/c", "sec:a"),
        ("sec:a/b", "sec:a"),
        ("sec:a/b/d", "sec:a/b"),
        ("sec:e", None),
    ]


def test_own_content_stops_at_the_next_heading_of_any_level() -> None:
    doc = "# A\nalpha\n## B\nbeta"  # no final line break
    assert content_at(doc, "sec:a") == "# A\nalpha\n"
    assert content_at(doc, "sec:a/b") == "## B\nbeta\n"


def test_crlf_and_lone_cr_are_line_breaks() -> None:
    lf = "intro\n# A\ntext\n## B\n"
    assert parse_sections(lf.replace("\n", "\r\n")) == parse_sections(lf)
    assert parse_sections(lf.replace("\n", "\r")) == parse_sections(lf)
    assert content_at(lf.replace("\n", "\r\n"), "sec:a") == "# A\ntext\n"
    result = replace_section(lf.replace("\n", "\r\n"), "sec:a", "# A\r\nnew\r\n")
    assert result.markdown == "intro\n# A\nnew\n## B\n"


def test_other_unicode_line_separators_are_not_line_breaks() -> None:
    doc = "# A\u2028still the heading\n# B\n"
    _, a, b = parse_sections(doc)
    assert (a.start, a.end, b.start) == (0, 1, 1)


def test_an_unknown_section_is_not_found() -> None:
    with pytest.raises(SectionNotFound) as caught:
        content_at(SPEC_TREE, "sec:nowhere")
    assert caught.value.code == "section.not_found"
    with pytest.raises(SectionNotFound):
        replace_section(SPEC_TREE, "sec:budget/nowhere", "### X\n")


# -- checking proposed content -------------------------------------------------------------------

H1 = Section("sec:a", "A", 1, None, 3, 5)
H2 = Section("sec:a/b", "B", 2, "sec:a", 5, 7)
H6 = Section("sec:a/b/c/d/e/f", "F", 6, "sec:a/b/c/d/e", 9, 10)
ROOT_SECTION = Section(ROOT, "", 0, None, 0, 3)


@pytest.mark.parametrize(
    ("target", "content", "line", "words"),
    [
        (H1, "text first\n# A\n", 1, "not a heading"),
        (H1, "\n\n## A\n", 3, "level-2 heading"),
        (H2, "# B\n", 1, "level-1 heading"),
        (H1, "Setext two\n----------\n", 1, "level-2 heading"),
        (H1, "# A\ntext\n# Next\n", 3, "level-1 heading ('Next')"),
        (H2, "## B\n### deeper is fine\n# Up\n", 3, "level-1 heading ('Up')"),
        (H2, "## B\ntext\nSame\n----\n", 2, "level-2 heading"),  # a two-line setext heading
        (H6, "###### F\n###### G\n", 2, "level 6 is the deepest"),
        (ROOT_SECTION, "intro\n\n## Heading\n", 3, "cannot hold a heading"),
        (ROOT_SECTION, "intro\n---\n", 1, "cannot hold a heading"),  # a setext heading
    ],
)
def test_refused_content_names_the_line(
    target: Section, content: str, line: int, words: str
) -> None:
    with pytest.raises(InvalidContent) as caught:
        check_content(target, content)
    error = caught.value
    assert error.code == "content.invalid"
    assert f"line {line} of the proposed content" in error.description
    assert words in error.description
    assert error.metadata == {"section_id": target.id, "line": line}


@pytest.mark.parametrize("target", [H1, ROOT_SECTION])
@pytest.mark.parametrize("content", ["", "\n", "  \n\t\n", "\r\n"])
def test_empty_content_is_refused(target: Section, content: str) -> None:
    with pytest.raises(InvalidContent) as caught:
        check_content(target, content)
    assert caught.value.code == "content.invalid"
    assert f"content for {target.id} is empty" in caught.value.description


@pytest.mark.parametrize(
    ("target", "content"),
    [
        (H1, "# A"),
        (H1, "\n\n# Renamed\ntext\n## New child\n### Grandchild\n"),
        (H1, "A\n===\n"),
        (H1, "# A\n```\n# not a heading\n```\n> # quoted\n"),
        (ROOT_SECTION, "intro with `# code`\n\n```\n# fenced\n```\n"),
        (ROOT_SECTION, "> # a quoted heading is no section\n"),
    ],
)
def test_accepted_content(target: Section, content: str) -> None:
    check_content(target, content)  # no refusal


# -- replacing a section -------------------------------------------------------------------------

DOC = """\
Preamble.

# Budget
Total: 2M.

## Line Items
- rent
### Personnel
Two people.
# Risks
None yet.
"""


def test_replacing_keeps_the_subsections_after_it() -> None:
    result = replace_section(DOC, "sec:budget", "# Budget\nTotal: 3M.\n\n")
    assert result.markdown == DOC.replace("Total: 2M.", "Total: 3M.")
    assert (result.renamed, result.added, result.removed) == ({}, [], [])
    assert result.sections == parse_sections(result.markdown)
    assert content_at(result.markdown, "sec:budget/line-items") == "## Line Items\n- rent\n"


def test_a_new_title_renames_the_section_and_its_descendants() -> None:
    result = replace_section(DOC, "sec:budget", "# Finance\nTotal: 2M.\n\n")
    assert result.renamed == {
        "sec:budget": "sec:finance",
        "sec:budget/line-items": "sec:finance/line-items",
        "sec:budget/line-items/personnel": "sec:finance/line-items/personnel",
    }
    assert ids(result.markdown) == [
        ROOT,
        "sec:finance",
        "sec:finance/line-items",
        "sec:finance/line-items/personnel",
        "sec:risks",
    ]
    assert content_at(result.markdown, "sec:finance/line-items/personnel") == (
        "### Personnel\nTwo people.\n"
    )


def test_a_new_title_can_renumber_a_later_duplicate() -> None:
    doc = "# A\none\n# B\ntwo\n# A\nthree\n"
    result = replace_section(doc, "sec:a", "# C\none\n")
    assert result.renamed == {"sec:a": "sec:c", "sec:a-2": "sec:a"}
    assert content_at(result.markdown, "sec:a") == "# A\nthree\n"


def test_deeper_headings_add_subsections() -> None:
    result = replace_section(DOC, "sec:budget", "# Budget\nTotal: 2M.\n## Summary\nShort.\n\n")
    assert result.added == ["sec:budget/summary"]
    assert result.renamed == {}
    assert content_at(result.markdown, "sec:budget") == "# Budget\nTotal: 2M.\n"
    assert content_at(result.markdown, "sec:budget/summary") == "## Summary\nShort.\n\n"
    assert content_at(result.markdown, "sec:budget/line-items") == "## Line Items\n- rent\n"


def test_an_added_subsection_takes_the_id_a_later_sibling_had() -> None:
    result = replace_section(DOC, "sec:budget", "# Budget\n## Line Items\nnew\n")
    assert result.added == ["sec:budget/line-items"]
    assert result.renamed == {
        "sec:budget/line-items": "sec:budget/line-items-2",
        "sec:budget/line-items/personnel": "sec:budget/line-items-2/personnel",
    }


def test_an_added_subsection_can_become_the_parent_of_a_deeper_one() -> None:
    result = replace_section("# A\n### C\n", "sec:a", "# A\n## B\n")
    assert result.added == ["sec:a/b"]
    assert result.renamed == {"sec:a/c": "sec:a/b/c"}


def test_a_setext_heading_after_the_content_is_not_swallowed() -> None:
    doc = "# A\nalpha\n\nB\n===\nbeta\n"
    result = replace_section(doc, "sec:a", "# A\nnew text")
    # without the blank line, "new text" and "B" would be one two-line heading
    assert result.markdown == "# A\nnew text\n\nB\n===\nbeta\n"
    assert ids(result.markdown) == [ROOT, "sec:a", "sec:b"]
    assert content_at(result.markdown, "sec:b") == "B\n===\nbeta\n"


def test_a_list_before_a_setext_heading_gets_a_blank_line() -> None:
    doc = "# A\nalpha\n\nB\n---\n"
    result = replace_section(doc, "sec:a", "# A\n- item")
    assert result.markdown == "# A\n- item\n\nB\n---\n"


def test_an_html_block_before_a_heading_gets_a_blank_line() -> None:
    result = replace_section("# A\n# B\n", "sec:a", "# A\n<div>\nx\n</div>")
    assert result.markdown == "# A\n<div>\nx\n</div>\n\n# B\n"
    assert ids(result.markdown) == [ROOT, "sec:a", "sec:b"]


def test_no_blank_line_is_added_where_none_is_needed() -> None:
    result = replace_section("# A\n# B\n", "sec:a", "# A\ntext")
    assert result.markdown == "# A\ntext\n# B\n"


def test_an_unclosed_fence_that_would_swallow_sections_is_refused() -> None:
    proposal = "### Personnel\nSee:\n```python\nrun()\n"
    # Spliced in as it is, the fence would run to the end and take "# Risks" with it.
    naive = DOC.replace("### Personnel\nTwo people.\n", proposal)
    assert "sec:risks" not in ids(naive)
    with pytest.raises(InvalidContent) as caught:
        replace_section(DOC, "sec:budget/line-items/personnel", proposal)
    error = caught.value
    assert error.code == "content.invalid"
    assert "line 3 of the proposed content opens a code fence that is never closed" in (
        error.description
    )
    assert error.metadata == {"section_id": "sec:budget/line-items/personnel", "line": 3}


def test_the_line_of_a_refusal_counts_dropped_leading_blank_lines() -> None:
    with pytest.raises(InvalidContent) as caught:
        replace_section("# A\n# B\n", "sec:a", "\n\n# A\n<!-- open comment\n")
    assert caught.value.metadata["line"] == 4
    assert "line 4 of the proposed content opens an HTML block" in caught.value.description


def test_an_unclosed_fence_in_the_last_section_swallows_nothing_and_is_kept() -> None:
    result = replace_section("# A\n# B\n", "sec:b", "# B\n```\ncode")
    assert result.markdown == "# A\n# B\n```\ncode\n"
    assert ids(result.markdown) == [ROOT, "sec:a", "sec:b"]


def test_a_setext_heading_right_after_text_is_refused() -> None:
    doc = "intro\n# A\nold\n"  # an ATX heading may follow a paragraph line; a setext one may not
    with pytest.raises(InvalidContent) as caught:
        replace_section(doc, "sec:a", "A\n===\nnew\n")
    error = caught.value
    assert "line 1 of the proposed content" in error.description
    assert "write it as an ATX heading (# A)" in error.description
    assert error.metadata["line"] == 1


def test_an_indented_heading_inside_the_list_before_it_is_refused() -> None:
    with pytest.raises(InvalidContent) as caught:
        replace_section("- item\n# A\n", "sec:a", "\n  # A\ntext\n")
    assert caught.value.metadata["line"] == 2
    assert "part of the block before it" in caught.value.description


def test_leading_blank_lines_are_dropped_and_a_last_line_break_added() -> None:
    result = replace_section("intro\n\n# A\nold\n# B\n", "sec:a", "\n \n# A\nnew")
    assert result.markdown == "intro\n\n# A\nnew\n# B\n"


def test_the_document_gains_a_final_line_break() -> None:
    assert replace_section("# A\nold", "sec:a", "# A\nnew").markdown == "# A\nnew\n"


def test_replacing_root() -> None:
    result = replace_section("old intro\n# A\n", ROOT, "new intro\n\nsecond paragraph")
    assert result.markdown == "new intro\n\nsecond paragraph\n# A\n"
    assert (result.renamed, result.added) == ({}, [])


def test_filling_an_empty_root_before_a_setext_heading() -> None:
    result = replace_section("A\n===\n", ROOT, "intro")
    assert result.markdown == "intro\n\nA\n===\n"
    assert content_at(result.markdown, ROOT) == "intro\n\n"


def test_root_content_with_a_heading_is_refused_by_replace_too() -> None:
    with pytest.raises(InvalidContent) as caught:
        replace_section(DOC, ROOT, "intro\n# Sneaky\n")
    assert caught.value.metadata == {"section_id": ROOT, "line": 2}


# -- properties ----------------------------------------------------------------------------------

WORDS = st.sampled_from(["alpha", "beta", "Gamma", "delta", "x", "Line", "Items", "two words"])
TITLES = st.sampled_from(
    ["Intro", "Budget", "budget", "Line Items", "Line_Items", "Notes 1", "Ünï", "??", "A-2", "A"]
)


@st.composite
def paragraphs(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.lists(WORDS, min_size=1, max_size=4), min_size=1, max_size=2))
    return "".join(" ".join(words) + "\n" for words in lines)


@st.composite
def fences(draw: st.DrawFn) -> str:
    inside = draw(st.lists(st.sampled_from(["# not a heading", "## nor this", "Foo", "==="])))
    return "```\n" + "".join(line + "\n" for line in inside) + "```\n"


def atx(level: int, title: str) -> str:
    return "#" * level + " " + title + "\n"


def setext(level: int, title: str) -> str:
    return title + "\n" + ("=" if level == 1 else "-") * 3 + "\n"


@st.composite
def headings(draw: st.DrawFn, levels: list[int]) -> str:
    level = draw(st.sampled_from(levels))
    title = draw(TITLES)
    if level <= 2 and draw(st.booleans()):
        return "\n" + setext(level, title)  # after a blank line: a heading, not a paragraph's end
    return atx(level, title)


@st.composite
def documents(draw: st.DrawFn) -> str:
    # Setext lines right after a paragraph or a list: whatever the parser makes of them.
    raw = st.sampled_from(["Title\n===\n", "---\n", "Sub\n---\n"])
    bodies = st.lists(
        st.one_of(paragraphs(), fences(), st.just("\n"), st.just("- item\n"), raw), max_size=3
    )
    preamble = "".join(draw(bodies))
    parts = draw(st.lists(st.tuples(headings([1, 2, 3, 4]), bodies), max_size=8))
    return preamble + "".join(heading + "".join(body) for heading, body in parts)


@dataclass(frozen=True)
class Proposal:
    text: str
    own: str  # the normalised content up to the first deeper heading
    whole: str  # the normalised content
    deeper: int  # how many deeper headings it holds


@st.composite
def proposals(draw: st.DrawFn, target: Section) -> Proposal:
    bodies = st.lists(st.one_of(paragraphs(), fences(), st.just("\n")), max_size=3)
    if target.id == ROOT:
        own = "".join(draw(bodies))
        own = own if own.strip() else own + "text\n"
        parts = []
    else:
        own = draw(headings([target.level])).lstrip("\n") + "".join(draw(bodies))
        deeper = list(range(target.level + 1, 7))
        count = draw(st.integers(0, 2)) if deeper else 0
        chunks = [own]  # each subsection's own content, the blank before a setext heading included
        for _ in range(count):
            heading = draw(headings(deeper))
            if heading.startswith("\n"):
                chunks[-1] += "\n"
            chunks.append(heading.lstrip("\n") + "".join(draw(bodies)))
        own, parts = chunks[0], chunks[1:]
    whole = own + "".join(parts)
    lead = "" if target.id == ROOT else draw(st.sampled_from(["", "\n", "\n\n"]))
    text = lead + whole
    if not text.endswith("\n\n") and draw(st.booleans()):
        text = text.removesuffix("\n")  # the final line break is added back
    return Proposal(text, own, whole, len(parts))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
@pytest.mark.slow
def test_replacing_a_section_changes_only_that_section(data: st.DataObject) -> None:
    doc = data.draw(documents())
    old = parse_sections(doc)
    target = data.draw(st.sampled_from(old))
    at = old.index(target)
    proposal = data.draw(proposals(target))
    try:
        result = replace_section(doc, target.id, proposal.text)
    except InvalidContent:
        # The one refusal a well-formed proposal can meet: a setext heading right after a line
        # of text (the last line of the section before), which it would join.
        before = doc.replace("\r", "").split("\n")[target.start - 1] if target.start else ""
        assert proposal.own.split("\n")[1][:1] in ("=", "-")
        assert before.strip() != ""
        event("refused: a setext heading after a line of text")
        return
    new = result.sections
    assert parse_sections(result.markdown) == new
    assert len(result.added) == proposal.deeper
    assert result.removed == []
    for index, before in enumerate(old):
        if index == at:
            continue
        after = new[index if index < at else index + proposal.deeper]
        assert (after.title, after.level) == (before.title, before.level)
        assert section_content(result.markdown, after) == section_content(doc, before)
    replaced = new[at]
    assert replaced.start == target.start
    assert replaced.level == target.level
    whole = "".join(section_content(result.markdown, s) for s in new[at : at + proposal.deeper + 1])
    assert whole in (proposal.whole, proposal.whole + "\n")
    event("a blank line was added" if whole != proposal.whole else "spliced as proposed")
    event("ids renamed" if result.renamed else "no id renamed")
    own = section_content(result.markdown, replaced)
    assert own == proposal.own or (proposal.deeper == 0 and own == proposal.own + "\n")
    assert set(result.renamed) <= {s.id for s in old}
    assert set(result.renamed.values()) <= {s.id for s in new}


@settings(max_examples=200, deadline=None)
@given(documents(), st.data())
def test_putting_a_section_back_as_it_is_changes_nothing(doc: str, data: st.DataObject) -> None:
    # a blank root (only blank lines before the first heading) cannot be proposed: blank content
    sections = [s for s in parse_sections(doc) if section_content(doc, s).strip()]
    if not sections:
        return
    target = data.draw(st.sampled_from(sections))
    result = replace_section(doc, target.id, section_content(doc, target))
    assert result.markdown == doc
    assert (result.renamed, result.added, result.removed) == ({}, [], [])


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_parses_into_contiguous_sections_with_unique_ids(text: str) -> None:
    sections = parse_sections(text)
    assert sections[0].id == ROOT and sections[0].start == 0
    for first, second in itertools.pairwise(sections):
        assert first.end == second.start
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    line_count = len(normalised.removesuffix("\n").split("\n")) if normalised else 0
    assert sections[-1].end == line_count
    assert len({s.id for s in sections}) == len(sections)


# Text made of the characters Markdown's block structure turns on.
MARKDOWNISH = st.text(alphabet=st.sampled_from(list("#=-`~>*<!/ \t\n\rab1")), max_size=120)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=120), MARKDOWNISH), MARKDOWNISH, st.data())
def test_any_proposal_gives_a_replacement_or_a_typed_refusal(
    text: str, tail: str, data: st.DataObject
) -> None:
    old = parse_sections(text)
    target = data.draw(st.sampled_from(old))
    content = (
        "#" * target.level + " T\n" + tail if target.level and data.draw(st.booleans()) else tail
    )
    try:
        result = replace_section(text, target.id, content)
    except InvalidContent as error:
        assert error.code == "content.invalid" and error.description
        return
    assert parse_sections(result.markdown) == result.sections
    at, added = old.index(target), len(result.added)
    for index, before in enumerate(old):
        if index != at:
            after = result.sections[index if index < at else index + added]
            assert section_content(result.markdown, after) == section_content(text, before)
