"""Three-way line merge (merge-both) and unified diffs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.protocol.merge import MergeResult, Overlap, merge_three, unified_diff

BASE = "# Budget\nTotal: 2M.\nRent: 1M.\nStaff: 1M.\nNotes: none.\n"


def test_edits_to_different_lines_merge_cleanly() -> None:
    ours = BASE.replace("Total: 2M.", "Total: 2.5M.")
    theirs = BASE.replace("Notes: none.", "Notes: see appendix.")
    result = merge_three(BASE, ours, theirs)
    assert result == MergeResult(
        "# Budget\nTotal: 2.5M.\nRent: 1M.\nStaff: 1M.\nNotes: see appendix.\n", []
    )
    assert result.clean


def test_an_insertion_and_a_deletion_elsewhere_merge_cleanly() -> None:
    ours = BASE.replace("Rent: 1M.\n", "Rent: 1M.\nTravel: 0.1M.\n")
    theirs = BASE.replace("Notes: none.\n", "")
    result = merge_three(BASE, ours, theirs)
    assert result.text == "# Budget\nTotal: 2M.\nRent: 1M.\nTravel: 0.1M.\nStaff: 1M.\n"
    assert result.clean


def test_the_same_edit_on_both_sides_is_clean_and_taken_once() -> None:
    edited = BASE.replace("Staff: 1M.", "Staff: 1.2M.")
    result = merge_three(BASE, edited, edited)
    assert (result.text, result.clean) == (edited, True)


def test_overlapping_edits_are_reported_with_all_three_sides_and_marked() -> None:
    ours = BASE.replace("Rent: 1M.", "Rent: 0.8M.")
    theirs = BASE.replace("Rent: 1M.", "Rent: 1.1M.")
    result = merge_three(BASE, ours, theirs, ours_name="proposal A", theirs_name="proposal B")
    assert not result.clean
    assert result.overlaps == [
        Overlap(base="Rent: 1M.\n", ours="Rent: 0.8M.\n", theirs="Rent: 1.1M.\n", line=2)
    ]
    assert result.text == (
        "# Budget\n"
        "Total: 2M.\n"
        "<<<<<<< proposal A\n"
        "Rent: 0.8M.\n"
        "||||||| base\n"
        "Rent: 1M.\n"
        "=======\n"
        "Rent: 1.1M.\n"
        ">>>>>>> proposal B\n"
        "Staff: 1M.\n"
        "Notes: none.\n"
    )


def test_each_overlap_line_points_at_its_marker() -> None:
    base = "a\nb\nc\nd\ne\nf\ng\n"
    ours = "a\nB1\nc\nd\ne\nF1\ng\n"
    theirs = "a\nB2\nc\nd\ne\nF2\ng\n"
    result = merge_three(base, ours, theirs)
    lines = result.text.split("\n")
    # a, then the 7 lines of the first hunk, then c, d, e
    assert [overlap.line for overlap in result.overlaps] == [1, 11]
    assert all(lines[overlap.line] == "<<<<<<< ours" for overlap in result.overlaps)
    assert [(o.ours, o.theirs) for o in result.overlaps] == [("B1\n", "B2\n"), ("F1\n", "F2\n")]


def test_different_insertions_at_one_place_overlap_with_an_empty_base() -> None:
    result = merge_three("a\nz\n", "a\nours\nz\n", "a\ntheirs\nz\n")
    assert result.overlaps == [Overlap(base="", ours="ours\n", theirs="theirs\n", line=1)]
    assert "||||||| base\n=======\n" in result.text


def test_markers_stay_on_their_own_lines_when_a_side_ends_without_a_line_break() -> None:
    result = merge_three("a\nb", "a\nX", "a\nY")
    assert result.overlaps == [Overlap(base="b", ours="X", theirs="Y", line=1)]
    assert result.text == "a\n<<<<<<< ours\nX\n||||||| base\nb\n=======\nY\n>>>>>>> theirs\n"


def test_a_marker_name_is_kept_to_one_line() -> None:
    result = merge_three("a\n", "b\n", "c\n", ours_name="evil\n=======", theirs_name="t")
    assert result.text.split("\n")[0] == "<<<<<<< evil ======="
    assert result.text.count("\n=======\n") == 1


def test_unified_diff() -> None:
    diff = unified_diff("a\nb\nc\n", "a\nB\nc\n", old_name="sec:x@3", new_name="proposal")
    assert diff == "--- sec:x@3\n+++ proposal\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    assert unified_diff("same\n", "same\n") == ""


def test_unified_diff_marks_a_missing_final_line_break() -> None:
    assert unified_diff("a\n", "a") == (
        "--- before\n+++ after\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n"
    )


LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "# H\n", "\n"]), max_size=8).map("".join)


@settings(max_examples=200, deadline=None)
@given(LINES, LINES)
def test_a_change_on_one_side_only_is_taken_as_it_is(base: str, edited: str) -> None:
    assert merge_three(base, edited, base) == MergeResult(edited, [])
    assert merge_three(base, base, edited) == MergeResult(edited, [])
    assert merge_three(base, edited, edited) == MergeResult(edited, [])


@settings(max_examples=200, deadline=None)
@given(LINES, LINES, LINES)
def test_every_overlap_sits_at_a_marker(base: str, ours: str, theirs: str) -> None:
    result = merge_three(base, ours, theirs)
    lines = result.text.split("\n")
    assert [lines[o.line] for o in result.overlaps] == ["<<<<<<< ours"] * len(result.overlaps)
    assert result.text.count(">>>>>>> theirs\n") == len(result.overlaps)
    assert result.clean == (not result.overlaps)
